//! The linear network's empirical NTK through its inputs (`phi(z) = z`, Liu & Hui Eq. (3)):
//! the same kernel as the general structured path, in `O(n^2 d)` instead of `O(L n^2 m)`.
//!
//! With the identity, every layer input is an affine image of the data,
//! `a_l = B Q_l` with `B = [X, 1]` (`n x (d+1)`) and
//!
//! > `Q_0 = [I_d; 0]`, `Q_{l+1} = gamma_l (beta_l Q_l W_l + e_{d+1} b_l^T)`,
//!
//! so the input Grams are `G_l = a_l a_l^T = B Q_l Q_l^T B^T`. And the slopes are constant
//! (`s'(z) gamma_l = gamma_l`), so the backpropagated signal `D_l` has one row for every
//! sample, `delta_l`:
//!
//! > `delta_{L-1} = gamma_{L-1} beta_out W_out[:, o]`,
//! > `delta_l = gamma_l beta_{l+1} W_{l+1} delta_{l+1}`,
//!
//! and the signal Gram is the constant `h_l 1 1^T`, `h_l = sum_o |delta_l^o|^2`. The
//! structured kernel `K = c (beta_out^2 G_L + b) + sum_l (beta_l^2 G_l + b) h_l` (see
//! [`crate::structured`]; `c` outputs, `b` = 1 with biases) is therefore
//!
//! > `K = B M B^T + s 1 1^T`, `M = c beta_out^2 Q_L Q_L^T + sum_l beta_l^2 h_l Q_l Q_l^T`,
//! > `s = b (c + sum_l h_l)`,
//!
//! an exact identity (rank at most `d + 2`): no `n x m` activations and no `n x n` Grams
//! per layer. Tested against the autodiff reference like the general path.

use faer::Mat;
use ntk_engine::host::mlp::Params;
use ntk_model::{Activation, Mlp};

use ntk_numerics::kernel::Kernel;
use ntk_numerics::linalg::{Real, gemm, gemm_acc};

/// Whether `mlp` is a linear network for which this form is the cheaper one: the identity
/// activation and every hidden layer wider than `d + 1`. The form's `n^2 (d + 1)` products
/// run in plain loops and the layered kernel's `L n^2 m` in BLAS, so for inputs as wide as
/// the layers (MNIST's 784 against width 512) the layered kernel is the faster.
pub(super) fn applies(mlp: &Mlp) -> bool {
    let sizes = mlp.config().layer_sizes();
    let depth = mlp.depth();
    matches!(mlp.activation(), Activation::Linear(_))
        && sizes[1..=depth].iter().all(|&m| m > sizes[0] + 1)
}

/// The structured NTK of the linear network `mlp` on the `n x d` rows of `x`, summed over
/// `outputs` (module doc), with `mlp`'s parameters `params` read in f64. Everything of size
/// `n` is computed in `T`; the signal norms `h_l` (one number per layer, from `m x m`
/// products) in f64.
pub(super) fn ntk<T: Real>(
    mlp: &Mlp,
    params: &Params<f64>,
    x: &[f64],
    n: usize,
    outputs: &[usize],
) -> Kernel {
    let cfg = mlp.config();
    let scales = mlp.scales();
    let depth = cfg.depth;
    let sizes = cfg.layer_sizes();
    let d = sizes[0];
    let bias = if cfg.bias { 1.0 } else { 0.0 };
    let copies = outputs.len() as f64;

    // Q_0 .. Q_L, each (d+1) x m_l.
    let mut qs: Vec<Mat<T>> = vec![Mat::from_fn(d + 1, d, |i, j| {
        T::of(f64::from(u8::from(i == j)))
    })];
    for l in 0..depth {
        let layer = &params.hidden()[l];
        let w = Mat::<T>::from_fn(sizes[l], sizes[l + 1], |i, j| T::of(layer.w()[(i, j)]));
        let mut q = Mat::<T>::zeros(d + 1, sizes[l + 1]);
        gemm(
            q.as_mut(),
            qs[l].as_ref(),
            w.as_ref(),
            T::of(scales.beta[l]),
        );
        if let Some(b) = layer.b() {
            for (j, bj) in b.iter().enumerate() {
                q[(d, j)] += T::of(*bj);
            }
        }
        let g = T::of(scales.gamma[l]);
        for j in 0..q.ncols() {
            q.col_as_slice_mut(j).iter_mut().for_each(|v| *v *= g);
        }
        qs.push(q);
    }

    // h_l = sum_o |delta_l^o|^2, l = 0..L-1.
    let mut h = vec![0.0f64; depth];
    let w_out = params.output().w();
    for &o in outputs.iter().filter(|_| depth > 0) {
        let mut delta: Vec<f64> = (0..sizes[depth])
            .map(|j| scales.gamma[depth - 1] * scales.beta_out * w_out[(j, o)])
            .collect();
        for l in (0..depth).rev() {
            h[l] += delta.iter().map(|v| v * v).sum::<f64>();
            if l > 0 {
                let (w, cols) = (params.hidden()[l].w(), sizes[l + 1]);
                let c = scales.gamma[l - 1] * scales.beta[l];
                delta = (0..sizes[l])
                    .map(|i| c * (0..cols).map(|j| w[(i, j)] * delta[j]).sum::<f64>())
                    .collect();
            }
        }
    }

    // M = c beta_out^2 Q_L Q_L^T + sum_l beta_l^2 h_l Q_l Q_l^T.
    let mut m = Mat::<T>::zeros(d + 1, d + 1);
    let weights = (0..=depth).map(|l| {
        if l == depth {
            copies * scales.beta_out * scales.beta_out
        } else {
            scales.beta[l] * scales.beta[l] * h[l]
        }
    });
    for (q, c) in qs.iter().zip(weights) {
        gemm_acc(m.as_mut(), q.as_ref(), q.transpose(), T::of(c), T::of(1.0));
    }
    let s = bias * (copies + h.iter().sum::<f64>());

    // K_ij = (B M)_i . B_j + s: column j of the lower triangle is d + 1 axpys of B M's
    // columns, with no n x n intermediate.
    let b = Mat::<T>::from_fn(n, d + 1, |i, j| {
        T::of(if j < d { x[i * d + j] } else { 1.0 })
    });
    let mut bm = Mat::<T>::zeros(n, d + 1);
    gemm(bm.as_mut(), b.as_ref(), m.as_ref(), T::of(1.0));
    let s = T::of(s);
    let bm: Vec<&[T]> = (0..=d).map(|a| bm.col_as_slice(a)).collect();
    let b: Vec<T> = (0..n * (d + 1))
        .map(|r| b[(r / (d + 1), r % (d + 1))])
        .collect();
    super::symmetric_kernel(n, |j, rows, col| {
        col.fill(s);
        for (column, w) in bm.iter().zip(&b[j * (d + 1)..][..=d]) {
            let src = &column[rows.clone()];
            col.iter_mut().zip(src).for_each(|(c, x)| *c += *x * *w);
        }
    })
}

#[cfg(test)]
mod tests {
    use burn::tensor::{DType, Device};
    use ntk_model::{ActivationKind, MlpConfig, NtkConvention};

    use super::*;

    /// The closed form against the layer-by-layer kernel of the same network, at a width
    /// where the layers' sums are long (64 terms): both are sums of positive-and-negative
    /// products of unit-scale values, so they agree to a few hundred eps of the largest
    /// entry (bounds 1e-12 in f64, 1e-4 in f32).
    #[test]
    fn the_closed_form_is_the_layered_kernel() {
        let (n, d, m) = (24, 5, 64);
        let x: Vec<f64> = (0..n * d)
            .map(|i| ((i * 7919 % 211) as f64 / 105.5 - 1.0) * 1.3)
            .collect();
        for depth in [0, 1, 3] {
            for (bias, outputs, convention) in [
                (false, vec![0], NtkConvention::Paper),
                (true, vec![0, 2], NtkConvention::Official),
                (true, vec![1], NtkConvention::UnitVariance),
            ] {
                let cfg = MlpConfig::new(d, m, depth, ActivationKind::Linear)
                    .with_output_dim(3)
                    .with_bias(bias)
                    .with_convention(convention)
                    .with_seed(depth as u64 + 3);
                let mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
                assert!(applies(&mlp));
                let params = Params::<f64>::read(&mlp);
                let what = format!("depth {depth} bias {bias} outputs {outputs:?} {convention:?}");
                let a = ntk::<f64>(&mlp, &params, &x, n, &outputs);
                let b = super::super::layered::<f64>(
                    &mlp,
                    &super::super::shared(&mlp),
                    &x,
                    n,
                    &outputs,
                    (&mut None, super::super::Reuse::OneKernel),
                );
                let err = a.relative_error(&b);
                assert!(err < 1e-12, "f64 {what}: {err:e}");
                let a = ntk::<f32>(&mlp, &params, &x, n, &outputs);
                let err = a.relative_error(&b);
                assert!(err < 1e-4, "f32 {what}: {err:e}");
            }
        }
        // Narrow layers (m <= d + 1): the layered kernel is the cheaper one.
        let cfg = MlpConfig::new(d, d + 1, 2, ActivationKind::Linear);
        assert!(!applies(
            &Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap()
        ));
    }
}
