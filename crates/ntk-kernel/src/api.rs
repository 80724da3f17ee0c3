//! The library in a few calls: the empirical NTK of any Burn module ([`empirical_ntk`],
//! per-sample autodiff), the fast path for the MLPs of `ntk-model` ([`mlp_ntk`]), and what
//! the papers read off a kernel ([`Conditioning`]: `lambda_min`, `lambda_max`,
//! `kappa = lambda_max / lambda_min`, the numerical rank and the smallest model-gradient
//! angle `phi_ij = arccos(K_ij / sqrt(K_ii K_jj))`, Liu & Hui Sec. 4).
//!
//! The kernel is `K_ij = sum_o <df_o(x_i)/dtheta, df_o(x_j)/dtheta>` over the outputs `o`
//! that [`OutputMode`] selects (`Sum`: all of them, the papers' scalar-output NTK for one
//! output; `Single(o)`; `Full`: the `nk x nk` kernel).

// The README's Rust example runs as a doc test of this module.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;

// So do the book's (docs/book/src/library.md, "As a library").
#[cfg(doctest)]
#[doc = include_str!("../../../docs/book/src/library.md")]
struct BookLibraryExamples;

use burn::module::Module;
use burn::tensor::Tensor;
use ntk_model::Mlp;
use ntk_numerics::backend::{Compute, Precision};
use ntk_numerics::kernel::{Kernel, OutputMode};
use ntk_numerics::spectrum;
use serde::Serialize;

use crate::angles;
use crate::compute;
use crate::host::HostCache;

/// The empirical NTK of `model` on the batch `x` (`[n, ...]`, any rank), where `forward`
/// maps a batch to its `[n, outputs]` outputs: one backward pass per sample and output
/// through Burn's autodiff, on `x`'s device, in `precision`. The model and the batch are
/// cast to `precision` first (a module built in f32, Burn's default, is widened exactly),
/// so an f32 network's kernel can be formed in f64 where f32 rounding would make it look
/// singular: its smallest resolvable eigenvalue is about `n eps lambda_max`, with `eps`
/// 1.2e-7 in f32 and 2.2e-16 in f64. Modules with training flags (BatchNorm) are taken in
/// evaluation mode, so that samples do not interact.
///
/// ```
/// use burn::module::Module;
/// use burn::nn::{Linear, LinearConfig};
/// use burn::tensor::{Tensor, TensorData, activation::relu};
/// use ntk_numerics::backend::{self, Precision};
/// use ntk_numerics::kernel::OutputMode;
/// use ntk_kernel::api::{Conditioning, empirical_ntk};
///
/// #[derive(Module, Debug)]
/// struct TwoLayer {
///     hidden: Linear,
///     out: Linear,
/// }
///
/// // Burn's layers are built in f32 (the default float type); the kernel is formed in f64.
/// let compute = backend::select(Some("flex"), Precision::F32)?;
/// let device = &compute.device;
/// let net = TwoLayer {
///     hidden: LinearConfig::new(3, 16).init(device),
///     out: LinearConfig::new(16, 1).init(device),
/// };
/// let x = Tensor::<2>::from_data(
///     TensorData::new(vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.6, 0.8, 0.0], [3, 3]),
///     (device, compute.dtype()),
/// );
/// let forward = |m: &TwoLayer, x: Tensor<2>| m.out.forward(relu(m.hidden.forward(x)));
/// let k = empirical_ntk(&net, forward, x, OutputMode::Sum, Precision::F64);
/// assert_eq!(k.size, 3);
/// let c = Conditioning::of(&k, Precision::F64)?;
/// assert!(c.lambda_min > 0.0 && c.kappa.unwrap() >= 1.0);
/// assert!(c.min_grad_angle_deg.unwrap() > 0.0);
/// # Ok::<(), ntk_kernel::Error>(())
/// ```
pub fn empirical_ntk<M: Module, const D: usize>(
    model: &M,
    forward: impl Fn(&M, Tensor<D>) -> Tensor<2>,
    x: Tensor<D>,
    mode: OutputMode,
    precision: Precision,
) -> Kernel {
    let ad = x.device().autodiff();
    let model = compute::with_precision(model, precision);
    let model = compute::eval_mode(model.fork(&ad).train());
    let x = x.cast(precision.dtype()).to_device(&ad);
    crate::jacobian::ntk_by_autodiff(&model, forward, &x, mode)
}

/// The NTK of an `ntk-model` MLP on the rows of `x` (`n x d`, row-major f64) by the
/// structured path: one forward, the backward signals of each layer, and Gram products
/// (no per-sample gradients), on the host engine for CPU backends and with Burn tensors
/// on GPUs; exact to rounding against [`empirical_ntk`] (the tests check it). Networks it
/// does not cover (normalization layers) go through autodiff.
///
/// ```
/// use ntk_numerics::backend::{self, Precision};
/// use ntk_numerics::kernel::OutputMode;
/// use ntk_model::{ActivationKind, Mlp, MlpConfig};
/// use ntk_kernel::api::{Conditioning, mlp_ntk};
///
/// let compute = backend::select(Some("flex"), Precision::F64)?;
/// // Liu & Hui's network: width 512, depth 4, ReLU, NTK parameterization (Eq. 1).
/// let cfg = MlpConfig::new(5, 512, 4, ActivationKind::Relu);
/// let mlp = Mlp::new(&cfg, &compute.device, compute.dtype())?;
/// let x = ntk_data::gaussian(100, 5, 0).x.iter().map(|&v| f64::from(v)).collect::<Vec<_>>();
/// let k = mlp_ntk(&mlp, &x, 100, &compute, OutputMode::Sum)?;
/// let c = Conditioning::of(&k, compute.precision)?;
/// println!("kappa = {:.3e}, min gradient angle = {:.2} deg", c.kappa.unwrap(), c.min_grad_angle_deg.unwrap());
/// # Ok::<(), ntk_kernel::Error>(())
/// ```
pub fn mlp_ntk(
    mlp: &Mlp,
    x: &[f64],
    n: usize,
    compute: &Compute,
    mode: OutputMode,
) -> crate::Result<Kernel> {
    let d = x.len().checked_div(n).unwrap_or(0);
    if n == 0 || d == 0 || d * n != x.len() {
        return Err(crate::Error::Ragged { len: x.len(), n });
    }
    let inputs = ntk_data::Inputs {
        x: x.to_vec(),
        n,
        d,
        labels: vec![0; n],
        description: String::new(),
        source_rows: None,
    };
    let mut cache = HostCache::default();
    let method = crate::compute::Method::Auto;
    Ok(compute::compute_kernel_cached(mlp, &inputs, compute, method, mode, &mut cache)?.kernel)
}

/// What the papers read off a kernel: its extreme eigenvalues (f64, the host eigensolver),
/// `kappa = lambda_max / lambda_min` (`None` when the kernel is numerically singular:
/// `lambda_min <= n eps lambda_max`, with its rank), the one [`spectrum::Summary`], read
/// through this type (`c.kappa`, `c.rank`); and the smallest pairwise angle where the
/// kernel's precision resolves it ([`angles::Resolution`]). Serialized flat: `lambda_min`,
/// `lambda_max`, `kappa`, `rank`, `singular`, `min_grad_angle_deg`, `min_grad_angle_pair`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Conditioning {
    #[serde(flatten)]
    pub spectrum: spectrum::Summary,
    /// `min_{i<j} arccos(K_ij / sqrt(K_ii K_jj))` in degrees, and its pair; `None` where
    /// the kernel's precision does not resolve it (`min_grad_angle_unresolved` says why).
    pub min_grad_angle_deg: Option<f64>,
    pub min_grad_angle_pair: Option<[usize; 2]>,
    /// The pair of the smallest angle and why its angle is not resolved, where it is not:
    /// nearer 0 degrees than the kernel's correlation resolves (hundred-and-thirty-seventh
    /// hostile round, D2: an f32 tracked kernel's angle read 0.0, then 6.7 times its value).
    #[serde(skip)]
    pub min_grad_angle_unresolved: Option<([usize; 2], angles::Unresolved)>,
}

impl std::ops::Deref for Conditioning {
    type Target = spectrum::Summary;
    fn deref(&self) -> &spectrum::Summary {
        &self.spectrum
    }
}

impl Conditioning {
    /// The conditioning of `k`, formed in `precision` (whose unit roundoff sets the
    /// singularity threshold and, one ulp of the correlation, the angle's resolution).
    pub fn of(k: &Kernel, precision: Precision) -> crate::Result<Self> {
        Self::of_network(
            k,
            angles::Resolution::new(precision, 1),
            OutputMode::Sum,
            None,
        )
    }

    /// [`Conditioning::of`] a kernel formed with output mode `mode`: with
    /// `OutputMode::Full` its rows are each sample's outputs, not samples, so the gradient
    /// angle between samples is not defined there and is `None`, as the probe reports it
    /// (twenty-third hostile round, N8: ntk-train's `ntk.csv` took the minimum over pairs of
    /// one sample's outputs).
    pub fn of_mode(k: &Kernel, precision: Precision, mode: OutputMode) -> crate::Result<Self> {
        Self::of_network(k, angles::Resolution::new(precision, 1), mode, None)
    }

    /// [`Conditioning::of_mode`] of a network's kernel whose angles are held to
    /// `resolution` (its precision and the layers the network's rounding passes through),
    /// with its inputs `rows` (row-major `n x d`), where two equal inputs are at 0 exactly.
    pub fn of_network(
        k: &Kernel,
        resolution: angles::Resolution,
        mode: OutputMode,
        rows: Option<(&[f64], usize)>,
    ) -> crate::Result<Self> {
        let spectrum = spectrum::spectrum(k, resolution.precision.epsilon())?.summary();
        let angle = match (mode, rows) {
            (OutputMode::Full, _) => None,
            (_, Some((x, d))) => angles::min_angle_of_rows(k, x, d),
            (_, None) => angles::min_angle(k),
        };
        let (angle, unresolved) = match angle.map(|a| resolution.min_angle(a, rows)) {
            Some(Ok(a)) => (Some(a), None),
            Some(Err((a, why))) => (None, Some(([a.i, a.j], why))),
            None => (None, None),
        };
        Ok(Self {
            spectrum,
            min_grad_angle_deg: angle.map(|a| a.deg),
            min_grad_angle_pair: angle.map(|a| [a.i, a.j]),
            min_grad_angle_unresolved: unresolved,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ntk_model::{ActivationKind, MlpConfig};

    /// Twenty-third hostile round, N8: the gradient angle is between samples; a kernel of
    /// each sample's outputs (`OutputMode::Full`) reports none, as the probe does.
    #[test]
    fn a_kernel_of_outputs_has_no_sample_angle() {
        let k = Kernel {
            size: 3,
            data: vec![2.0, 1.0, 0.5, 1.0, 2.0, 0.2, 0.5, 0.2, 3.0],
        };
        let sum = Conditioning::of_mode(&k, Precision::F64, OutputMode::Sum).unwrap();
        assert_eq!(sum, Conditioning::of(&k, Precision::F64).unwrap());
        assert!(sum.min_grad_angle_deg.is_some());
        let full = Conditioning::of_mode(&k, Precision::F64, OutputMode::Full).unwrap();
        assert_eq!(
            (full.min_grad_angle_deg, full.min_grad_angle_pair),
            (None, None)
        );
        assert_eq!(full.spectrum, sum.spectrum);
    }

    /// The fast path and the autodiff path of the facade agree to rounding.
    #[test]
    fn the_mlp_fast_path_matches_autodiff() {
        let compute = ntk_numerics::backend::select(Some("flex"), Precision::F64).unwrap();
        let cfg = MlpConfig::new(4, 32, 3, ActivationKind::Tanh).with_output_dim(2);
        let mlp = Mlp::new(&cfg, &compute.device, compute.dtype()).unwrap();
        let x: Vec<f64> = (0..24).map(|i| ((i * 7 % 11) as f64 - 5.0) / 5.0).collect();
        let fast = mlp_ntk(&mlp, &x, 6, &compute, OutputMode::Sum).unwrap();
        let t = Tensor::<2>::from_data(
            burn::tensor::TensorData::new(x, [6, 4]),
            (&compute.device, compute.dtype()),
        );
        let slow = empirical_ntk(
            &mlp,
            |m: &Mlp, x| m.forward(x),
            t,
            OutputMode::Sum,
            Precision::F64,
        );
        assert!(
            fast.relative_error(&slow) < 1e-12,
            "{}",
            fast.relative_error(&slow)
        );
    }

    /// `empirical_ntk`'s precision: an f32 module's kernel formed in f64 is the kernel of the
    /// module widened to f64 (to rounding, against the structured path), and the f32 kernel
    /// differs from it by f32 rounding only.
    #[test]
    fn precision_is_a_parameter_of_the_autodiff_kernel() {
        let f32_compute = ntk_numerics::backend::select(Some("flex"), Precision::F32).unwrap();
        let f64_compute = ntk_numerics::backend::select(Some("flex"), Precision::F64).unwrap();
        let cfg = MlpConfig::new(4, 32, 3, ActivationKind::Tanh);
        let mlp = Mlp::new(&cfg, &f32_compute.device, f32_compute.dtype()).unwrap();
        let x: Vec<f64> = (0..24).map(|i| ((i * 5 % 13) as f64 - 6.0) / 6.0).collect();
        let t = Tensor::<2>::from_data(
            burn::tensor::TensorData::new(x.iter().map(|&v| v as f32).collect(), [6, 4]),
            (&f32_compute.device, f32_compute.dtype()),
        );
        let forward = |m: &Mlp, x| m.forward(x);
        let k32 = empirical_ntk(&mlp, forward, t.clone(), OutputMode::Sum, Precision::F32);
        let k64 = empirical_ntk(&mlp, forward, t, OutputMode::Sum, Precision::F64);
        let wide = compute::with_precision(&mlp, Precision::F64);
        // The inputs went through f32 in `t`; the structured path reads the same values.
        let x32: Vec<f64> = x.iter().map(|&v| f64::from(v as f32)).collect();
        let fast = mlp_ntk(&wide, &x32, 6, &f64_compute, OutputMode::Sum).unwrap();
        assert!(
            k64.relative_error(&fast) < 1e-12,
            "{}",
            k64.relative_error(&fast)
        );
        let e = k32.relative_error(&k64);
        assert!(e > 0.0 && e < 1e-5, "f32 against f64: {e}");
    }
}
