//! The structured NTK of a dense network, never forming the Jacobian.
//!
//! For `z_l = beta_l a_{l-1} W_l + b_l`, `a_l = gamma_l s(z_l)`, `f = beta_out a_L W_out`,
//! the gradient of `f_o` with respect to `W_l` is `beta_l a_{l-1} (x) delta_l^o`, with
//! `delta_l^o = df_o / dz_l`, so (Jacot et al.; Liu & Hui Sec. 4)
//!
//! `K_ij = sum_o [ sum_{l=1..L} (beta_l^2 <a_{l-1,i}, a_{l-1,j}> + [bias])
//!                               * <delta^o_{l,i}, delta^o_{l,j}>
//!                 + beta_out^2 <a_{L,i}, a_{L,j}> + [bias] ]`,
//!
//! i.e. `K = sum_l (beta_l^2 A_{l-1} A_{l-1}^T) .* (D_l D_l^T) + beta_out^2 A_L A_L^T`.
//! The signals come from one batched forward and one hand-written batched backward
//! (samples do not interact): `D_L^o = (beta_out W_out[:, o])^T .* gamma_L s'(Z_L)`,
//! `D_{l-1}^o = beta_l (D_l^o W_l^T) .* gamma_{l-1} s'(Z_{l-1})`.
//! The Gram products run on the compute device in row blocks over the upper staircase
//! (columns from the block's first row on), using the kernel's symmetry.

use burn::tensor::{Device, Tensor};
use ntk_model::{Mlp, Normalization};

use ntk_numerics::kernel::{Kernel, OutputMode};

/// Per-layer factors of the structured NTK for one output selection.
pub struct Factors {
    /// `a_0 .. a_L`, each `[n, fan_in]`.
    pub inputs: Vec<Tensor<2>>,
    /// `deltas[o][l]`, `D_{l+1}^o`, each `[n, width]`, for the selected outputs.
    pub deltas: Vec<Vec<Tensor<2>>>,
    pub beta: Vec<f64>,
    pub beta_out: f64,
    pub bias: bool,
}

/// Why the structured path does not apply.
pub fn unsupported_reason(mlp: &Mlp) -> Option<String> {
    unsupported_reason_of(mlp.config())
}

/// [`unsupported_reason`] of an MLP configured as `cfg` (before it is built).
pub fn unsupported_reason_of(cfg: &ntk_model::MlpConfig) -> Option<String> {
    // The value as the config file spells it (`model.normalization = "layer_norm"`), and
    // the reason each layer has: BatchNorm couples the samples of a batch (the NTK is
    // taken in evaluation mode), LayerNorm normalizes each sample over its features, which
    // the structured factors (one matrix product per layer) do not hold (thirteenth
    // hostile round: both read "normalization LayerNorm couples samples").
    let why = match cfg.normalization {
        Normalization::None => return None,
        Normalization::BatchNorm => {
            "BatchNorm couples the samples of a batch; use the autodiff path (the NTK is \
             then taken in evaluation mode, with the running statistics)"
        }
        Normalization::LayerNorm => {
            "LayerNorm normalizes each sample over its features, which the structured \
             factors do not model; use the autodiff path"
        }
    };
    Some(format!(
        "model.normalization = \"{}\": {why}",
        ntk_names::name(&cfg.normalization)
    ))
}

/// One batched forward and the hand-written backward for the outputs `outputs`.
pub fn factors(mlp: &Mlp, x: Tensor<2>, outputs: &[usize]) -> Factors {
    let trace = mlp.forward_trace(x);
    let depth = mlp.depth();
    let scales = mlp.scales();
    let act = mlp.activation();
    // s'(z_l) gamma_l, shared by every output.
    let slopes: Vec<Tensor<2>> = trace
        .preacts
        .iter()
        .zip(&scales.gamma)
        .map(|(z, g)| act.derivative_tensor(z.clone()).mul_scalar(*g))
        .collect();
    let w_out = mlp.layers[depth].weight.val();
    let deltas = outputs
        .iter()
        .map(|&o| {
            let mut ds: Vec<Tensor<2>> = Vec::with_capacity(depth);
            if depth > 0 {
                // df_o/da_L = beta_out W_out[:, o]^T, the same row for every sample
                // (broadcast over the rows of s'(Z_L)).
                let w_col = w_out
                    .clone()
                    .narrow(1, o, 1)
                    .transpose()
                    .mul_scalar(scales.beta_out);
                let mut d = slopes[depth - 1].clone() * w_col;
                ds.push(d.clone());
                for l in (0..depth - 1).rev() {
                    d = d
                        .matmul(mlp.layers[l + 1].weight.val().transpose())
                        .mul_scalar(scales.beta[l + 1])
                        * slopes[l].clone();
                    ds.push(d.clone());
                }
                ds.reverse();
            }
            ds
        })
        .collect();
    Factors {
        inputs: trace.inputs,
        deltas,
        beta: scales.beta.clone(),
        beta_out: scales.beta_out,
        bias: mlp.config().bias,
    }
}

/// Row-block size: a `block x n` slab of each product stays near 64 MiB in f64.
pub fn block_rows(n: usize) -> usize {
    let target = (8 << 20) / n.max(1);
    target.clamp(64, 1024).min(n.max(1))
}

/// `K` for the selected outputs, summed over them (`Sum`, `Single`) or kept apart (`Full`).
pub fn ntk(mlp: &Mlp, x: Tensor<2>, mode: OutputMode) -> Kernel {
    let k = mlp.config().output_dim;
    match mode {
        OutputMode::Sum | OutputMode::Single(_) => {
            let (f, terms, copies) = summed_factors(mlp, x, mode);
            assemble(&f, &terms, copies)
        }
        OutputMode::Full => full(&factors(mlp, x, &(0..k).collect::<Vec<_>>()), k),
    }
}

/// The `n x n` kernel (`Sum` or `Single`) as one tensor on the compute device, for work that
/// stays there ([`crate::extreme`]); `Full` is refused (its `(n k) x (n k)` kernel is
/// assembled on the host by [`ntk`]). A layer whose factor is far from unit scale has its
/// term scaled back entry by entry on the host ([`far_term`]): the kernel is then assembled
/// there and copied to the device.
pub fn ntk_tensor(mlp: &Mlp, x: Tensor<2>, mode: OutputMode) -> crate::Result<Tensor<2>> {
    if mode == OutputMode::Full {
        return Err(crate::Error::Invalid(
            "the device-resident kernel covers output = sum or an index",
        ));
    }
    let n = x.dims()[0];
    let (f, terms, copies) = summed_factors(mlp, x, mode);
    if terms.iter().any(Term::far) {
        let top = &f.inputs[f.inputs.len() - 1];
        let (device, dtype) = (top.device(), top.dtype());
        let k = assemble(&f, &terms, copies);
        return Ok(Tensor::from_data(
            burn::tensor::TensorData::new(k.data, [n, n]),
            (&device, dtype),
        ));
    }
    Ok(block_sum(&f, &terms, copies, 0, n, n))
}

/// A factor (a layer's inputs or its backward signals, `[n, width]`) with each row at its own
/// power of two where it is far from unit scale (the host route's rule,
/// [`crate::host::far_exponent`]): row `i` times `2^-e_i`, so that the Gram of two far factors
/// keeps a term whose product is in range (hundred-and-twenty-second hostile round, D1: with
/// `probe.output = "full"` this route lost round 120's D4 term, K 6.3e9 times too small).
struct Rows {
    m: Tensor<2>,
    e: Vec<i32>,
}

impl Rows {
    fn of(m: &Tensor<2>) -> Self {
        let [n, cols] = m.dims();
        if n == 0 || cols == 0 {
            return Self {
                m: m.clone(),
                e: vec![0; n],
            };
        }
        let f32 = m.dtype() != burn::tensor::DType::F64;
        let largest: Vec<f64> = m
            .clone()
            .abs()
            .max_dim(1)
            .try_into_vec_as()
            .expect("reading a factor's largest entries");
        let e: Vec<i32> = largest
            .iter()
            .map(|v| crate::host::far_exponent(*v, f32))
            .collect();
        if e.iter().all(|e| *e == 0) {
            return Self { m: m.clone(), e };
        }
        let (device, dtype) = (m.device(), m.dtype());
        let column = |part: &dyn Fn(i32) -> i32| {
            let v: Vec<f64> = e.iter().map(|e| libm::scalbn(1.0, part(*e))).collect();
            Tensor::<2>::from_data(burn::tensor::TensorData::new(v, [n, 1]), (&device, dtype))
        };
        // In two halves: the power of a subnormal row, 2^1074, is no f64 (2^149 no f32).
        let m = m.clone() * column(&|e| -(e / 2)) * column(&|e| -(e - e / 2));
        Self { m, e }
    }

    fn far(&self) -> bool {
        self.e.iter().any(|e| *e != 0)
    }
}

/// A hidden layer's term `(beta^2 A A^T + b) .* (D D^T)`: its inputs `a`, its signals `d`
/// (those of the outputs summed, side by side), each at its rows' powers of two.
struct Term {
    a: Rows,
    d: Rows,
    beta: f64,
}

impl Term {
    fn far(&self) -> bool {
        self.a.far() || self.d.far()
    }
}

/// The factors of `Sum` or `Single` and each hidden layer's term: summing over outputs is one
/// Gram of the outputs' signals side by side, counted `copies` times in the output-layer
/// term.
fn summed_factors(mlp: &Mlp, x: Tensor<2>, mode: OutputMode) -> (Factors, Vec<Term>, f64) {
    let outputs = mode.outputs(mlp.config().output_dim);
    let f = factors(mlp, x, &outputs);
    let terms: Vec<Term> = (0..mlp.depth())
        .map(|l| Term {
            a: Rows::of(&f.inputs[l]),
            d: Rows::of(&Tensor::cat(
                f.deltas.iter().map(|d| d[l].clone()).collect(),
                1,
            )),
            beta: f.beta[l],
        })
        .collect();
    (f, terms, outputs.len() as f64)
}

/// Rows `start..start + rows`, columns `start..start + cols` of the Gram of two factors, as
/// formed on the device.
fn gram(
    left: &Tensor<2>,
    right: &Tensor<2>,
    (start, rows, cols): (usize, usize, usize),
) -> Tensor<2> {
    left.clone()
        .narrow(0, start, rows)
        .matmul(right.clone().narrow(0, start, cols).transpose())
}

/// Rows `start..start + rows`, columns `start..start + cols` of
/// `K = sum_l (beta_l^2 A A^T + b) .* (D D^T) + copies (beta_out^2 A_L A_L^T + b)`, on the
/// device, less the far layers' terms ([`far_term`], added on the host by [`assemble`]).
fn block_sum(
    f: &Factors,
    terms: &[Term],
    copies: f64,
    start: usize,
    rows: usize,
    cols: usize,
) -> Tensor<2> {
    let bias = if f.bias { 1.0 } else { 0.0 };
    let at = (start, rows, cols);
    let top = &f.inputs[f.inputs.len() - 1];
    let mut acc = gram(top, top, at).mul_scalar(copies * f.beta_out * f.beta_out);
    if bias != 0.0 {
        acc = acc.add_scalar(copies * bias);
    }
    for t in terms.iter().filter(|t| !t.far()) {
        let g = gram(&t.a.m, &t.a.m, at).mul_scalar(t.beta * t.beta);
        let g = if bias != 0.0 { g.add_scalar(bias) } else { g };
        acc = acc + g * gram(&t.d.m, &t.d.m, at);
    }
    acc
}

/// A far layer's term on rows `start..start + rows` and columns `start..start + cols`,
/// `beta^2 (A A'^T)_ij (D D'^T)_ij + b (D D'^T)_ij` (`A`, `D` the left factors, `A'`, `D'` the
/// right ones: the same but where a full kernel's outputs differ), row-major: each Gram formed
/// on the device from the factors at their rows' powers of two and scaled back entry by entry
/// on the host, in f64, as the host route does (`ntk_kernel::host`).
fn far_term(
    beta: f64,
    bias: f64,
    (a, a2): (&Rows, &Rows),
    (d, d2): (&Rows, &Rows),
    (start, rows, cols): (usize, usize, usize),
) -> Vec<f64> {
    let at = (start, rows, cols);
    let read = |t: Tensor<2>| -> Vec<f64> { t.try_into_vec_as().expect("reading a Gram block") };
    let (g, h) = (read(gram(&a.m, &a2.m, at)), read(gram(&d.m, &d2.m, at)));
    let mut out = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let i = start + r;
        for c in 0..cols {
            let j = start + c;
            let (gv, hv) = (g[r * cols + c], h[r * cols + c]);
            let sd = d.e[i] + d2.e[j];
            let weights = libm::scalbn(gv * hv * beta * beta, a.e[i] + a2.e[j] + sd);
            out.push(weights + libm::scalbn(bias * hv, sd));
        }
    }
    out
}

/// A sum's value in the precision of the tensor `like` (an f32 route's entries round to f32,
/// as the device's sums do).
fn in_precision_of(like: &Tensor<2>) -> fn(f64) -> f64 {
    if like.dtype() == burn::tensor::DType::F64 {
        |v| v
    } else {
        |v| f64::from(v as f32)
    }
}

/// [`block_sum`] in row blocks over the upper staircase, plus the far layers' terms
/// ([`far_term`]), mirrored into a host kernel.
fn assemble(f: &Factors, terms: &[Term], copies: f64) -> Kernel {
    let n = f.inputs[0].dims()[0];
    let round = in_precision_of(&f.inputs[0]);
    let bias = if f.bias { 1.0 } else { 0.0 };
    let mut kernel = Kernel::zeros(n);
    let block = block_rows(n);
    for start in (0..n).step_by(block) {
        let rows = block.min(n - start);
        let cols = n - start;
        let mut values: Vec<f64> = block_sum(f, terms, copies, start, rows, cols)
            .try_into_vec_as()
            .expect("reading the kernel block");
        for t in terms.iter().filter(|t| t.far()) {
            let far = far_term(
                t.beta,
                bias,
                (&t.a, &t.a),
                (&t.d, &t.d),
                (start, rows, cols),
            );
            for (v, w) in values.iter_mut().zip(far) {
                *v = round(*v + w);
            }
        }
        for r in 0..rows {
            let i = start + r;
            for c in 0..cols {
                let j = start + c;
                let v = values[r * cols + c];
                kernel.data[i * n + j] = v;
                kernel.data[j * n + i] = v;
            }
        }
    }
    kernel
}

/// The `(n k) x (n k)` kernel: blocks `(o, o')` are `sum_l (beta^2 G + b) .* (D^o D^o'^T)`,
/// plus the output-layer term on the diagonal blocks; a layer whose inputs or any output's
/// signals are far from unit scale by [`far_term`].
fn full(f: &Factors, k: usize) -> Kernel {
    let n = f.inputs[0].dims()[0];
    let depth = f.inputs.len() - 1;
    let bias = if f.bias { 1.0 } else { 0.0 };
    let round = in_precision_of(&f.inputs[0]);
    let whole = (0, n, n);
    let inputs: Vec<Rows> = f.inputs[..depth].iter().map(Rows::of).collect();
    let signals: Vec<Vec<Rows>> = f
        .deltas
        .iter()
        .map(|d| d.iter().map(Rows::of).collect())
        .collect();
    let far: Vec<bool> = (0..depth)
        .map(|l| inputs[l].far() || signals.iter().any(|s| s[l].far()))
        .collect();
    let g: Vec<Tensor<2>> = (0..depth)
        .map(|l| {
            let g = gram(&f.inputs[l], &f.inputs[l], whole).mul_scalar(f.beta[l] * f.beta[l]);
            if bias != 0.0 { g.add_scalar(bias) } else { g }
        })
        .collect();
    let top = &f.inputs[depth];
    let out_term = gram(top, top, whole)
        .mul_scalar(f.beta_out * f.beta_out)
        .add_scalar(bias);
    let size = n * k;
    let mut kernel = Kernel::zeros(size);
    for o in 0..k {
        for p in 0..k {
            let mut block = if o == p {
                out_term.clone()
            } else {
                out_term.zeros_like()
            };
            for l in (0..depth).filter(|&l| !far[l]) {
                block = block + g[l].clone() * gram(&f.deltas[o][l], &f.deltas[p][l], whole);
            }
            let mut values: Vec<f64> = block.try_into_vec_as().expect("reading the kernel block");
            for l in (0..depth).filter(|&l| far[l]) {
                let a = &inputs[l];
                let (d, d2) = (&signals[o][l], &signals[p][l]);
                let term = far_term(f.beta[l], bias, (a, a), (d, d2), whole);
                for (v, w) in values.iter_mut().zip(term) {
                    *v = round(*v + w);
                }
            }
            for i in 0..n {
                for j in 0..n {
                    kernel.data[(i * k + o) * size + j * k + p] = values[i * n + j];
                }
            }
        }
    }
    kernel
}

/// The device a model lives on (its first weight's).
pub fn model_device(mlp: &Mlp) -> Device {
    mlp.layers[0].weight.val().device()
}
