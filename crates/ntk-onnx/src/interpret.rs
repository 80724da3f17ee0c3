//! Runs a [`Program`] with Burn tensor ops, so that autodiff sees every operation: the
//! parameters come in as the module's tensors, constants are made in the run's device and
//! float type, and each node's result is kept by its output's name.

use std::collections::HashMap;

use burn::module::Param;
use burn::tensor::activation;
use burn::tensor::module::{avg_pool2d, conv2d, max_pool2d};
use burn::tensor::ops::{AvgPoolOptions, ConvOptions, MaxPoolOptions};
use burn::tensor::{DType, Device, Tensor, TensorData};
use onnx_ir::Node;
use onnx_ir::node::batch_norm::BatchNormConfig;
use onnx_ir::node::gelu::GeluApproximate;
use onnx_ir::node::padding::{AutoPad, PaddingConfig2d};
use onnx_ir::node::reshape::ReshapeInput;

use crate::error::{OnnxError, Result};
use crate::graph::{HostTensor, Operand, Program, Step};
use crate::value::{Binary, Value, binary, map_value};

/// The graph's output for the batch `x` (`[n, values per sample]`, reshaped to the graph
/// input's shape), as `[n, outputs]`.
pub fn run(program: &Program, params: &[Param<Tensor<1>>], x: Tensor<2>) -> Result<Tensor<2>> {
    let [n, d] = x.dims();
    let expected: usize = program.sample_dims.iter().product();
    if d != expected {
        return Err(OnnxError::InputShape {
            path: program.path.clone(),
            input: program.input.clone(),
            shape: program.sample_dims.clone(),
            expected,
            got: d,
            data: "the batch".into(),
        });
    }
    let (device, dtype) = (x.device(), x.dtype());
    let mut dims = vec![n];
    dims.extend(&program.sample_dims);
    let input = Value::R2(x)
        .reshape(&dims)
        .ok_or_else(|| interface(program, format!("cannot shape the input as {dims:?}")))?;
    let mut env: HashMap<&str, Value> = HashMap::new();
    env.insert(program.input.as_str(), input);
    for step in &program.steps {
        let ctx = Ctx {
            program,
            step,
            params,
            device: &device,
            dtype,
        };
        let inputs = step
            .inputs
            .iter()
            .map(|o| ctx.operand(o, &env))
            .collect::<Result<Vec<_>>>()?;
        let out = ctx.apply(inputs)?;
        let name = step
            .node
            .outputs()
            .first()
            .map(|o| o.name.as_str())
            .unwrap_or_default();
        env.insert(name, out);
    }
    let out = env.remove(program.output.as_str()).ok_or_else(|| {
        interface(
            program,
            format!("no node computes the output '{}'", program.output),
        )
    })?;
    let total = out.numel();
    if n == 0 || !total.is_multiple_of(n) {
        return Err(interface(
            program,
            format!(
                "the output has shape {:?}, not one row per sample",
                out.dims()
            ),
        ));
    }
    Value::from_flat(out.flat(), &[n, total / n])
        .and_then(Value::into_r2)
        .ok_or_else(|| interface(program, "the output is not a matrix".into()))
}

fn interface(program: &Program, reason: String) -> OnnxError {
    OnnxError::Interface {
        path: program.path.clone(),
        reason,
    }
}

/// One node's run: where it is and what the run's tensors are made in.
struct Ctx<'a> {
    program: &'a Program,
    step: &'a Step,
    params: &'a [Param<Tensor<1>>],
    device: &'a Device,
    dtype: DType,
}

impl Ctx<'_> {
    fn err(&self, reason: impl Into<String>) -> OnnxError {
        OnnxError::Node {
            path: self.program.path.clone(),
            node: self.step.name.clone(),
            op: format!("{:?}", self.step.node.node_type()),
            reason: reason.into(),
        }
    }

    fn constant(&self, t: &HostTensor) -> Result<Value> {
        let flat = Tensor::<1>::from_data(
            TensorData::new(t.values.clone(), [t.values.len()]),
            (self.device, self.dtype),
        );
        Value::from_flat(flat, &t.dims).ok_or_else(|| {
            self.err(format!(
                "a constant of shape {:?} has too high a rank",
                t.dims
            ))
        })
    }

    fn operand(&self, o: &Operand, env: &HashMap<&str, Value>) -> Result<Option<Value>> {
        match o {
            Operand::Value(name) => env.get(name.as_str()).cloned().map(Some).ok_or_else(|| {
                self.err(format!("its input '{name}' is computed by no earlier node"))
            }),
            Operand::Param { index, dims } => {
                let p = self.params.get(*index).ok_or_else(|| {
                    self.err(format!("parameter {index} is missing from the module"))
                })?;
                let v = p.val();
                let v = if v.dtype() == self.dtype {
                    v
                } else {
                    v.cast(self.dtype)
                };
                Value::from_flat(v, dims).map(Some).ok_or_else(|| {
                    self.err(format!("parameter {index} does not hold shape {dims:?}"))
                })
            }
            Operand::Const(t) => self.constant(t).map(Some),
            Operand::Absent => Ok(None),
        }
    }

    /// Input `i`, which must be present.
    fn take(&self, inputs: &mut [Option<Value>], i: usize) -> Result<Value> {
        inputs
            .get_mut(i)
            .and_then(Option::take)
            .ok_or_else(|| self.err(format!("input {i} is missing")))
    }

    fn r2(&self, v: Value, what: &str) -> Result<Tensor<2>> {
        let dims = v.dims();
        v.into_r2()
            .ok_or_else(|| self.err(format!("{what} must be a matrix; it has shape {dims:?}")))
    }

    fn r4(&self, v: Value, what: &str) -> Result<Tensor<4>> {
        let dims = v.dims();
        v.into_r4().ok_or_else(|| {
            self.err(format!(
                "{what} must have rank 4 (N, C, H, W); it has shape {dims:?}"
            ))
        })
    }

    fn binary(&self, op: Binary, a: Value, b: Value) -> Result<Value> {
        let (da, db) = (a.dims(), b.dims());
        binary(op, a, b)
            .ok_or_else(|| self.err(format!("shapes {da:?} and {db:?} do not broadcast")))
    }

    /// `a b` for a batch of rows `a` (`[.., k]`, leading dimensions flattened) and a
    /// matrix `b` (`[k, m]`).
    fn matmul(&self, a: Value, b: Tensor<2>) -> Result<Value> {
        let dims = a.dims();
        let [k, m] = b.dims();
        let last = dims.last().copied().unwrap_or(0);
        if last != k {
            return Err(self.err(format!(
                "a {dims:?} times a [{k}, {m}] matrix: the inner dimensions differ"
            )));
        }
        let rows = a.numel() / k.max(1);
        let a2 = a
            .reshape(&[rows, k])
            .and_then(Value::into_r2)
            .ok_or_else(|| self.err("cannot flatten the input to rows"))?;
        let mut out = dims;
        if let Some(l) = out.last_mut() {
            *l = m;
        }
        Value::R2(a2.matmul(b))
            .reshape(&out)
            .ok_or_else(|| self.err("cannot shape the product"))
    }

    fn apply(&self, mut inputs: Vec<Option<Value>>) -> Result<Value> {
        let ins = &mut inputs;
        Ok(match &self.step.node {
            Node::Identity(_) | Node::Dropout(_) => self.take(ins, 0)?,
            Node::Relu(_) => map_value!(self.take(ins, 0)?, t => activation::relu(t)),
            Node::Tanh(_) => map_value!(self.take(ins, 0)?, t => t.tanh()),
            Node::Sigmoid(_) => map_value!(self.take(ins, 0)?, t => activation::sigmoid(t)),
            Node::Erf(_) => map_value!(self.take(ins, 0)?, t => t.erf()),
            Node::Gelu(n) => match n.config.approximate {
                GeluApproximate::Exact => map_value!(self.take(ins, 0)?, t => activation::gelu(t)),
                GeluApproximate::Tanh => {
                    map_value!(self.take(ins, 0)?, t => activation::gelu_approximate(t))
                }
            },
            Node::LeakyRelu(n) => {
                let a = n.config.alpha;
                map_value!(self.take(ins, 0)?, t => activation::leaky_relu(t, a))
            }
            Node::Elu(n) => {
                let a = n.config.alpha;
                map_value!(self.take(ins, 0)?, t => activation::elu(t, a))
            }
            Node::Selu(n) => {
                let (a, g) = (n.config.alpha, n.config.gamma);
                map_value!(self.take(ins, 0)?, t => activation::elu(t, a).mul_scalar(g))
            }
            Node::Add(_) => self.binary(Binary::Add, self.take(ins, 0)?, self.take(ins, 1)?)?,
            Node::Sub(_) => self.binary(Binary::Sub, self.take(ins, 0)?, self.take(ins, 1)?)?,
            Node::Mul(_) => self.binary(Binary::Mul, self.take(ins, 0)?, self.take(ins, 1)?)?,
            Node::Div(_) => self.binary(Binary::Div, self.take(ins, 0)?, self.take(ins, 1)?)?,
            Node::Linear(n) => {
                let x = self.take(ins, 0)?;
                let w = self.r2(self.take(ins, 1)?, "the weight")?;
                let w = if n.config.transpose_weight {
                    w.transpose()
                } else {
                    w
                };
                let y = self.matmul(x, w)?;
                match ins.get_mut(2).and_then(Option::take) {
                    Some(b) => self.binary(Binary::Add, y, b)?,
                    None => y,
                }
            }
            Node::MatMul(_) => {
                let a = self.take(ins, 0)?;
                let b = self.r2(self.take(ins, 1)?, "MatMul's second input")?;
                self.matmul(a, b)?
            }
            Node::Gemm(n) => {
                let c = &n.config;
                let a = self.r2(self.take(ins, 0)?, "Gemm's A")?;
                let b = self.r2(self.take(ins, 1)?, "Gemm's B")?;
                let a = if c.trans_a != 0 { a.transpose() } else { a };
                let b = if c.trans_b != 0 { b.transpose() } else { b };
                let y = self.matmul(Value::R2(a), b)?;
                let y = if c.alpha == 1.0 {
                    y
                } else {
                    map_value!(y, t => t.mul_scalar(f64::from(c.alpha)))
                };
                match ins.get_mut(2).and_then(Option::take) {
                    Some(bias) if c.beta != 0.0 => {
                        let bias = if c.beta == 1.0 {
                            bias
                        } else {
                            map_value!(bias, t => t.mul_scalar(f64::from(c.beta)))
                        };
                        self.binary(Binary::Add, y, bias)?
                    }
                    _ => y,
                }
            }
            Node::Conv2d(n) => {
                let c = &n.config;
                self.no_auto_pad(&c.auto_pad)?;
                let x = self.r4(self.take(ins, 0)?, "the input")?;
                let w = self.r4(self.take(ins, 1)?, "the weight")?;
                let b = ins.get_mut(2).and_then(Option::take).map(Value::flat);
                let (xd, wd) = (x.dims(), w.dims());
                if c.groups == 0
                    || xd[1] != wd[1] * c.groups
                    || c.stride.contains(&0)
                    || c.dilation.contains(&0)
                {
                    return Err(self.err(format!(
                        "input {xd:?}, weight {wd:?}, groups {}, stride {:?}, dilation {:?} do not fit",
                        c.groups, c.stride, c.dilation
                    )));
                }
                let options = ConvOptions::new_with_padding(
                    c.stride,
                    pad_pairs(&c.padding),
                    c.dilation,
                    c.groups,
                );
                Value::R4(conv2d(x, w, b, options))
            }
            Node::BatchNormalization(n) => {
                let eps = match &n.config {
                    BatchNormConfig::Static(c) => c.epsilon,
                    BatchNormConfig::Runtime(c) => c.epsilon,
                };
                let x = self.take(ins, 0)?;
                let rank = x.dims().len();
                let channels = x.dims().get(1).copied().unwrap_or(0);
                let mut shape = vec![1; rank.saturating_sub(1)];
                if let Some(s) = shape.first_mut() {
                    *s = channels;
                }
                let mut per_channel = |i: usize, what: &str| -> Result<Value> {
                    let v = self.take(ins, i)?;
                    v.reshape(&shape).ok_or_else(|| {
                        self.err(format!("its {what} does not have {channels} entries"))
                    })
                };
                let scale = per_channel(1, "scale")?;
                let bias = per_channel(2, "bias")?;
                let mean = per_channel(3, "mean")?;
                let var = per_channel(4, "variance")?;
                let inv_std = map_value!(var, t => t.add_scalar(eps).sqrt().recip());
                let y = self.binary(Binary::Sub, x, mean)?;
                let y = self.binary(Binary::Mul, y, inv_std)?;
                let y = self.binary(Binary::Mul, y, scale)?;
                self.binary(Binary::Add, y, bias)?
            }
            Node::Flatten(n) => {
                let x = self.take(ins, 0)?;
                let dims = x.dims();
                let axis = n.config.axis.min(dims.len());
                let outer: usize = dims[..axis].iter().product();
                let inner: usize = dims[axis..].iter().product();
                x.reshape(&[outer, inner])
                    .ok_or_else(|| self.err("cannot flatten"))?
            }
            Node::Reshape(n) => {
                let x = self.take(ins, 0)?;
                let ReshapeInput::Static(shape) = &n.config.shape else {
                    return Err(self.err(
                        "the target shape is computed at run time; only a constant shape is supported",
                    ));
                };
                let dims = self.reshape_dims(&x.dims(), shape)?;
                x.reshape(&dims).ok_or_else(|| {
                    self.err(format!("cannot reshape to {dims:?} (rank above 4?)"))
                })?
            }
            Node::GlobalAveragePool(_) => {
                let x = self.r4(self.take(ins, 0)?, "the input")?;
                Value::R4(x.mean_dim(3).mean_dim(2))
            }
            Node::MaxPool2d(n) => {
                let c = &n.config;
                self.no_auto_pad(&c.auto_pad)?;
                let x = self.r4(self.take(ins, 0)?, "the input")?;
                let options = MaxPoolOptions::new(c.kernel_size)
                    .with_stride(c.strides)
                    .with_padding_pairs(pad_pairs(&c.padding))
                    .with_dilation(c.dilation)
                    .with_ceil_mode(c.ceil_mode);
                Value::R4(max_pool2d(x, options))
            }
            Node::AveragePool2d(n) => {
                let c = &n.config;
                self.no_auto_pad(&c.auto_pad)?;
                if c.dilation != [1, 1] {
                    return Err(self.err("a dilated average pool is not supported"));
                }
                let x = self.r4(self.take(ins, 0)?, "the input")?;
                let options = AvgPoolOptions::new(c.kernel_size)
                    .with_stride(c.strides)
                    .with_padding_pairs(pad_pairs(&c.padding))
                    .with_count_include_pad(c.count_include_pad)
                    .with_ceil_mode(c.ceil_mode);
                Value::R4(avg_pool2d(x, options))
            }
            other => {
                return Err(self.err(format!(
                    "onnx-ir made it a {:?} node, which is not run here",
                    other.node_type()
                )));
            }
        })
    }

    fn no_auto_pad(&self, auto_pad: &AutoPad) -> Result<()> {
        match auto_pad {
            AutoPad::NotSet | AutoPad::Valid => Ok(()),
            other => Err(self.err(format!(
                "auto_pad {other:?} is not supported; export with explicit pads"
            ))),
        }
    }

    /// ONNX Reshape's target: `0` copies the input's dimension, `-1` takes the rest.
    fn reshape_dims(&self, input: &[usize], shape: &[i64]) -> Result<Vec<usize>> {
        let total: usize = input.iter().product();
        let mut dims = Vec::with_capacity(shape.len());
        let mut infer = None;
        for (i, &s) in shape.iter().enumerate() {
            match s {
                0 => dims.push(input.get(i).copied().ok_or_else(|| {
                    self.err(format!("shape {shape:?}: no input dimension {i} to copy"))
                })?),
                -1 if infer.is_none() => {
                    infer = Some(i);
                    dims.push(1);
                }
                s if s > 0 => dims.push(s as usize),
                _ => return Err(self.err(format!("shape {shape:?} is not a valid target"))),
            }
        }
        let known: usize = dims.iter().product();
        if let Some(i) = infer {
            if known == 0 || !total.is_multiple_of(known) {
                return Err(self.err(format!("cannot reshape {input:?} to {shape:?}")));
            }
            dims[i] = total / known;
        }
        if dims.iter().product::<usize>() != total {
            return Err(self.err(format!(
                "cannot reshape {input:?} ({total} values) to {shape:?}; a shape that fixes \
                 the batch size needs an export with a dynamic batch axis"
            )));
        }
        Ok(dims)
    }
}

/// onnx-ir's (top, left, bottom, right) as Burn's (begin, end) per spatial dimension.
fn pad_pairs(p: &PaddingConfig2d) -> [(usize, usize); 2] {
    match *p {
        PaddingConfig2d::Valid => [(0, 0); 2],
        PaddingConfig2d::Explicit(top, left, bottom, right) => [(top, bottom), (left, right)],
    }
}
