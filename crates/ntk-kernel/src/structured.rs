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
            let (f, deltas, copies) = summed_factors(mlp, x, mode);
            assemble(&f, &deltas, copies)
        }
        OutputMode::Full => full(&factors(mlp, x, &(0..k).collect::<Vec<_>>()), k),
    }
}

/// The `n x n` kernel (`Sum` or `Single`) as one tensor on the compute device, for work that
/// stays there ([`crate::extreme`]); `Full` is refused (its `(n k) x (n k)` kernel is
/// assembled on the host by [`ntk`]).
pub fn ntk_tensor(mlp: &Mlp, x: Tensor<2>, mode: OutputMode) -> crate::Result<Tensor<2>> {
    if mode == OutputMode::Full {
        return Err(crate::Error::Invalid(
            "the device-resident kernel covers output = sum or an index",
        ));
    }
    let n = x.dims()[0];
    let (f, deltas, copies) = summed_factors(mlp, x, mode);
    Ok(block_sum(&f, &deltas, copies, 0, n, n))
}

/// The factors of `Sum` or `Single`: summing over outputs is one Gram of the outputs'
/// signals side by side, counted `copies` times in the output-layer term.
fn summed_factors(mlp: &Mlp, x: Tensor<2>, mode: OutputMode) -> (Factors, Vec<Tensor<2>>, f64) {
    let outputs = mode.outputs(mlp.config().output_dim);
    let f = factors(mlp, x, &outputs);
    let deltas: Vec<Tensor<2>> = (0..mlp.depth())
        .map(|l| Tensor::cat(f.deltas.iter().map(|d| d[l].clone()).collect(), 1))
        .collect();
    (f, deltas, outputs.len() as f64)
}

/// Rows `start..start + rows`, columns `start..start + cols` of
/// `K = sum_l (beta_l^2 A A^T + b) .* (D D^T) + copies (beta_out^2 A_L A_L^T + b)`.
fn block_sum(
    f: &Factors,
    deltas: &[Tensor<2>],
    copies: f64,
    start: usize,
    rows: usize,
    cols: usize,
) -> Tensor<2> {
    let depth = deltas.len();
    let bias = if f.bias { 1.0 } else { 0.0 };
    let gram = |m: &Tensor<2>| {
        m.clone()
            .narrow(0, start, rows)
            .matmul(m.clone().narrow(0, start, cols).transpose())
    };
    let mut acc = gram(&f.inputs[depth]).mul_scalar(copies * f.beta_out * f.beta_out);
    if bias != 0.0 {
        acc = acc.add_scalar(copies * bias);
    }
    for ((a, d), beta) in f.inputs.iter().zip(deltas).zip(&f.beta) {
        let g = gram(a).mul_scalar(beta * beta);
        let g = if bias != 0.0 { g.add_scalar(bias) } else { g };
        acc = acc + g * gram(d);
    }
    acc
}

/// [`block_sum`] in row blocks over the upper staircase, mirrored into a host kernel.
fn assemble(f: &Factors, deltas: &[Tensor<2>], copies: f64) -> Kernel {
    let n = f.inputs[0].dims()[0];
    let mut kernel = Kernel::zeros(n);
    let block = block_rows(n);
    for start in (0..n).step_by(block) {
        let rows = block.min(n - start);
        let cols = n - start;
        let values: Vec<f64> = block_sum(f, deltas, copies, start, rows, cols)
            .try_into_vec_as()
            .expect("reading the kernel block");
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
/// plus the output-layer term on the diagonal blocks.
fn full(f: &Factors, k: usize) -> Kernel {
    let n = f.inputs[0].dims()[0];
    let depth = f.inputs.len() - 1;
    let bias = if f.bias { 1.0 } else { 0.0 };
    let gram = |a: &Tensor<2>, b: &Tensor<2>| a.clone().matmul(b.clone().transpose());
    let g: Vec<Tensor<2>> = (0..depth)
        .map(|l| {
            let g = gram(&f.inputs[l], &f.inputs[l]).mul_scalar(f.beta[l] * f.beta[l]);
            if bias != 0.0 { g.add_scalar(bias) } else { g }
        })
        .collect();
    let out_term = gram(&f.inputs[depth], &f.inputs[depth])
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
            for ((gl, d_o), d_p) in g.iter().zip(&f.deltas[o]).zip(&f.deltas[p]) {
                block = block + gl.clone() * gram(d_o, d_p);
            }
            let values: Vec<f64> = block.try_into_vec_as().expect("reading the kernel block");
            for i in 0..n {
                for j in 0..n {
                    kernel.data[(i * k + o) * size + j * k + p] = values[i * n + j];
                }
            }
        }
    }
    kernel
}

/// The embedding Gram matrices `A_l A_l^T` (l = 0..L) on the host, for the angles.
pub fn embedding_grams(mlp: &Mlp, x: Tensor<2>) -> Vec<Kernel> {
    let trace = mlp.forward_trace(x);
    trace
        .inputs
        .iter()
        .map(|a| {
            let n = a.dims()[0];
            let g = a.clone().matmul(a.clone().transpose());
            Kernel {
                size: n,
                data: g.try_into_vec_as().expect("reading a Gram matrix"),
            }
        })
        .collect()
}

/// The device a model lives on (its first weight's).
pub fn model_device(mlp: &Mlp) -> Device {
    mlp.layers[0].weight.val().device()
}
