//! The NTK of any network of `ntk-model`, one entry point ([`compute_kernel_net`]) for the
//! probe's commands and the trainer's tracking: an MLP by the structured kernel (on the
//! host engine for CPU backends, as Burn tensors otherwise), by per-sample autodiff, or by
//! the infinite-width theory; a ResNet from its per-sample gradients (the host engine, or
//! Burn's autodiff). The kernel is `K_ij = sum_o <df_o(x_i)/dtheta, df_o(x_j)/dtheta>` over
//! the outputs `o` that [`OutputMode`] selects.

use burn::module::{Flag, Module, ModuleMapper, Param};
use burn::tensor::{DType, Tensor, TensorData};
use ntk_data::inputs::Inputs;
use ntk_model::{Mlp, Net, ResNet};
use ntk_numerics::backend::{Compute, Precision};
use ntk_numerics::kernel::{Kernel, OutputMode};
use ntk_onnx::OnnxModel;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::host;
use crate::jacobian;
use crate::structured;

/// How the kernel is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Structured for plain dense networks, autodiff otherwise.
    #[default]
    Auto,
    Structured,
    Autodiff,
    /// The infinite-width NTK of the same inputs (Jacot et al.'s recursion with the
    /// activation's dual kernel, `crate::theory`), written through the same files as a
    /// measurement so the two compare file to file. Every NTK convention (its recursion
    /// from the network's own forward scales, `crate::theory::scaling`), one output, no
    /// biases, no normalization; neither the seed nor the width enters. The `official`
    /// convention with an activation that is not positively homogeneous is refused at
    /// depth >= 2: its second layer's variance grows like `m / d`, and it has no
    /// infinite-width limit ([`crate::theory::NotCovered::NoLimit`]).
    Theory,
}

/// Where a kernel is computed, as summaries record it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// The host engine: GEMMs on the CPU (OpenBLAS or faer).
    Host,
    /// Burn tensors on the compute device (the structured kernel).
    Device,
    /// Per-sample gradients through Burn's autodiff.
    Autodiff,
    /// The infinite-width recursion.
    Theory,
}

impl Route {
    /// The precision a kernel of this route forms its products in, for gradients in
    /// `precision`: the autodiff route's Gram is f64 (the gradients widened), the
    /// theory's is f64; the host and device GEMMs are in `precision`.
    pub fn products(self, precision: Precision) -> Precision {
        match self {
            Self::Autodiff | Self::Theory => Precision::F64,
            Self::Host | Self::Device => precision,
        }
    }
}

impl std::fmt::Display for Route {
    /// The word configs and summaries use (the serde name).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&ntk_names::spelled(self))
    }
}

impl std::fmt::Display for Method {
    /// The word configs and summaries use (the serde name).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&ntk_names::spelled(self))
    }
}

/// The kernel and how it was computed.
pub struct KernelResult {
    pub kernel: Kernel,
    pub method: Method,
    /// Where the kernel was computed.
    pub route: Route,
}

/// The inputs as an `n x d` tensor on the compute device, in its precision.
pub fn to_tensor(inputs: &Inputs, compute: &Compute) -> Tensor<2> {
    Tensor::from_data(
        TensorData::new(inputs.x.clone(), [inputs.n, inputs.d]),
        (&compute.device, compute.dtype()),
    )
}

/// The network's outputs `f(x)` on `inputs` (`n x k`, row-major), in evaluation mode (the
/// mode the kernel is taken in; BatchNorm on its running statistics), in `compute`'s
/// precision, widened to f64.
pub fn outputs(net: &Net, inputs: &Inputs, compute: &Compute) -> Vec<f64> {
    let y = eval_mode(net.clone()).forward(to_tensor(inputs, compute));
    y.into_data()
        .convert::<f64>()
        .try_to_vec::<f64>()
        .expect("a float tensor reads back as f64")
}

/// Refuses a `method` that cannot take the NTK of an MLP configured as `cfg`: the
/// structured kernel of a normalized network (its samples are coupled), the theory of a
/// network the infinite-width recursion does not describe (a parameterization other than
/// ntk, biases, normalization, more than one output). The config check and the run both
/// call it, so that a dry run refuses what the run would, in the same words. An input
/// dimension not yet known (a data set read later) is not refused here.
pub fn check_method(cfg: &ntk_model::MlpConfig, method: Method) -> crate::Result<()> {
    let refuse = |reason: String| Error::Config {
        key: "probe.method",
        value: method.to_string(),
        reason,
    };
    match method {
        Method::Structured => match structured::unsupported_reason_of(cfg) {
            Some(reason) => Err(refuse(reason)),
            None => Ok(()),
        },
        Method::Theory => match crate::theory::Scaling::of(cfg) {
            Err(crate::theory::NotCovered::UnknownInputDim) | Ok(_) if cfg.output_dim != 1 => Err(
                refuse("the infinite-width kernel is written for one output".into()),
            ),
            Err(crate::theory::NotCovered::UnknownInputDim) | Ok(_) => Ok(()),
            Err(reason) => Err(refuse(reason.to_string())),
        },
        Method::Auto | Method::Autodiff => Ok(()),
    }
}

/// The NTK of `mlp` on `inputs` by the chosen method.
pub fn compute_kernel(
    mlp: &Mlp,
    inputs: &Inputs,
    compute: &Compute,
    method: Method,
    mode: OutputMode,
) -> crate::Result<KernelResult> {
    compute_kernel_cached(
        mlp,
        inputs,
        compute,
        method,
        mode,
        &mut host::HostCache::default(),
    )
}

/// [`compute_kernel`] with the host engine reusing `cache` across the networks of a depth
/// sweep (see [`host::Forward`]).
pub fn compute_kernel_cached(
    mlp: &Mlp,
    inputs: &Inputs,
    compute: &Compute,
    method: Method,
    mode: OutputMode,
    cache: &mut host::HostCache,
) -> crate::Result<KernelResult> {
    check_method(mlp.config(), method)?;
    let method = match (method, structured::unsupported_reason(mlp)) {
        (Method::Auto, None) => Method::Structured,
        (Method::Auto, Some(_)) => Method::Autodiff,
        (m, _) => m,
    };
    let outputs = mode.outputs(mlp.config().output_dim);
    let (kernel, engine) = match method {
        Method::Theory => {
            let cfg = mlp.config();
            let scaling = crate::theory::Scaling::of(cfg).map_err(|reason| Error::Config {
                key: "probe.method",
                value: "theory".into(),
                reason: reason.to_string(),
            })?;
            let dual = crate::theory::DualEvaluator::new(mlp.activation());
            let reporter = ntk_system::progress::Reporter::beside_results();
            let bar = theory_bar(&reporter, &dual, inputs.n, cfg.depth);
            let mut k = crate::theory::infinite_width_kernels_scaled(
                &inputs.x,
                inputs.n,
                inputs.d,
                &dual,
                &scaling,
                &|done| bar.inc(done),
            )
            .ntk;
            // ReLU's and leaky ReLU's entries from each pair's angle, not a cosine's
            // (forty-seventh hostile round, D2; forty-eighth, D1).
            crate::theory::relu_angles::reform_from_angles(
                &mut k,
                &inputs.x,
                (inputs.n, inputs.d),
                cfg.depth,
                mlp.activation(),
            );
            bar.finish_and_clear();
            (k, Route::Theory)
        }
        Method::Structured if compute.on_host() && mode != OutputMode::Full => {
            let k = match compute.precision {
                Precision::F32 => host::ntk_with(
                    mlp,
                    &inputs.x,
                    inputs.n,
                    &outputs,
                    &mut cache.f32,
                    cache.reuse,
                ),
                Precision::F64 => host::ntk_with(
                    mlp,
                    &inputs.x,
                    inputs.n,
                    &outputs,
                    &mut cache.f64,
                    cache.reuse,
                ),
            };
            (k, Route::Host)
        }
        Method::Structured => (
            structured::ntk(mlp, to_tensor(inputs, compute), mode),
            Route::Device,
        ),
        _ => (
            autodiff_kernel(mlp, inputs, compute, mode, |m: &Mlp, x| m.forward(x)),
            Route::Autodiff,
        ),
    };
    Ok(KernelResult {
        kernel,
        method,
        route: engine,
    })
}

/// Switches every module-owned training flag off (BatchNorm then uses its running
/// statistics) and leaves the parameters' gradient tracking as it is.
struct EvalFlags;

impl ModuleMapper for EvalFlags {
    fn map_flag(&mut self, _flag: Param<Flag>) -> Param<Flag> {
        Param::from_bool(false)
    }
}

/// `model` in evaluation mode with its parameters still tracked on an autodiff device.
pub fn eval_mode<M: Module>(model: M) -> M {
    model.map(&mut EvalFlags)
}

/// The NTK through per-sample autodiff gradients (any module), in evaluation mode: with
/// BatchNorm on its running statistics samples do not interact, so each per-sample
/// gradient is well defined.
fn autodiff_kernel<M: Module>(
    model: &M,
    inputs: &Inputs,
    compute: &Compute,
    mode: OutputMode,
    forward: impl Fn(&M, Tensor<2>) -> Tensor<2>,
) -> Kernel {
    let ad = compute.device.clone().autodiff();
    let model = eval_mode(model.clone().fork(&ad).train());
    let x = to_tensor(inputs, compute).to_device(&ad);
    jacobian::ntk_by_autodiff(&model, forward, &x, mode)
}

/// Casts every float parameter and running statistic of a module to `dtype`.
/// Casts every float tensor to its dtype and gives each training flag back the value it had
/// in the module cast (`flags`, in visiting order).
struct CastFloats(DType, std::vec::IntoIter<bool>);

impl ModuleMapper for CastFloats {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let dtype = self.0;
        param.map(|t| t.cast(dtype))
    }

    fn map_flag(&mut self, flag: Param<Flag>) -> Param<Flag> {
        match self.1.next() {
            Some(enabled) => flag.with_value(enabled),
            None => flag,
        }
    }
}

/// The training flags of a module, in visiting order.
#[derive(Default)]
struct Flags(Vec<bool>);

impl burn::module::ModuleVisitor for Flags {
    fn visit_flag(&mut self, flag: &Param<Flag>) {
        self.0.push(flag.val().is_enabled());
    }
}

/// `module` (a `Net` or any Burn module) with its float parameters and running statistics
/// in `precision`: the kernel of the same network computed in another precision (widening
/// f32 to f64 keeps every value exactly). `module` itself is left as it is: a clone shares
/// BatchNorm's running statistics with it (Burn keeps them behind one lock for every
/// clone), and casting a clone's cast the original's too, so that the next f32 pass of the
/// original BatchNorm network panicked on an f64 statistic (twelfth hostile round: an f32
/// probe of a BatchNorm MLP, `ntk-train`'s `[ntk]` then `[representations]`). `valid()`
/// gives the copy statistics of its own; the flags it disables are given back their values.
pub fn with_precision<M: Module>(module: &M, precision: Precision) -> M {
    let mut flags = Flags::default();
    module.visit(&mut flags);
    module
        .valid()
        .map(&mut CastFloats(precision.dtype(), flags.0.into_iter()))
}

/// The NTK of any network the trainer holds: an MLP by [`compute_kernel`], a ResNet from its
/// per-sample gradients in evaluation mode (the host engine, [`host::resnet`], on CPU
/// backends with `method = "auto"`; Burn's autodiff otherwise), an ONNX graph by Burn's
/// autodiff.
pub fn compute_kernel_net(
    net: &Net,
    inputs: &Inputs,
    compute: &Compute,
    method: Method,
    mode: OutputMode,
) -> crate::Result<KernelResult> {
    compute_kernel_net_cached(
        net,
        inputs,
        compute,
        method,
        mode,
        &mut host::HostCache::default(),
    )
}

/// [`compute_kernel_net`] with a [`host::HostCache`] for depth sweeps.
pub fn compute_kernel_net_cached(
    net: &Net,
    inputs: &Inputs,
    compute: &Compute,
    method: Method,
    mode: OutputMode,
    cache: &mut host::HostCache,
) -> crate::Result<KernelResult> {
    match net {
        Net::Mlp(m) => compute_kernel_cached(m, inputs, compute, method, mode, cache),
        // Per-sample gradients either way: on the host engine (the CPU backends' default),
        // or through Burn's autodiff (`method = "autodiff"`, and the GPU backends).
        Net::ResNet(r) => match method {
            Method::Auto if compute.on_host() => {
                let (x, n) = (&inputs.x, inputs.n);
                let kernel = match compute.precision {
                    Precision::F32 => host::resnet::ntk::<f32>(r, x, n, mode),
                    Precision::F64 => host::resnet::ntk::<f64>(r, x, n, mode),
                };
                Ok(KernelResult {
                    kernel,
                    method: Method::Autodiff,
                    route: Route::Host,
                })
            }
            Method::Auto | Method::Autodiff => Ok(KernelResult {
                kernel: autodiff_kernel(r, inputs, compute, mode, |m: &ResNet, x| m.forward(x)),
                method: Method::Autodiff,
                route: Route::Autodiff,
            }),
            _ => Err(resnet_method(method)),
        },
        // An ONNX graph's NTK is per-sample autodiff on the run's device, as `ntk-probe
        // onnx` takes it (`crate::api::empirical_ntk`).
        Net::Onnx(o) => match method {
            Method::Auto | Method::Autodiff => Ok(KernelResult {
                kernel: autodiff_kernel(o, inputs, compute, mode, |m: &OnnxModel, x| m.forward(x)),
                method: Method::Autodiff,
                route: Route::Autodiff,
            }),
            _ => Err(Error::Config {
                key: "probe.method",
                value: serde_json::to_string(&method).unwrap_or_default(),
                reason: "an ONNX network's NTK is taken through the autodiff path (method = \
                         \"autodiff\" or \"auto\")"
                    .into(),
            }),
        },
    }
}

/// The error for a `probe.method` that a ResNet does not have (its NTK is autodiff's).
pub fn resnet_method(method: Method) -> Error {
    Error::Config {
        key: "probe.method",
        value: serde_json::to_string(&method).unwrap_or_default(),
        reason: "a ResNet's NTK is taken through the autodiff path (method = \"autodiff\" or \
                 \"auto\")"
            .into(),
    }
}

/// The progress of the infinite-width recursion over `n` inputs to depth `depth`
/// ([`crate::theory::infinite_width_kernels_scaled`], whose `progress` increments it). Where
/// `dual` integrates by quadrature (1-10 ms an evaluation: seconds to hours), a timed bar:
/// on a terminal a bar, without one a line of its count, elapsed time and ETA every 30 s
/// once 30 s have passed, whatever the count (sixty-fourth hostile round, N1: nothing was
/// said; sixty-sixth, D1: a cut at 5,000 evaluations left a 40 s kernel unsaid). A closed
/// form's (about 100 ns an evaluation) is drawn on a terminal from [`DRAWN_CLOSED_FORM`]
/// evaluations, and a recursion of fewer than [`DRAWN_QUADRATURE`] (one input's, which a
/// run checks before its kernel) not at all (sixty-sixth, N2: such bars flashed by under
/// the kernel's name).
pub fn theory_bar(
    reporter: &ntk_system::progress::Reporter,
    dual: &crate::theory::DualEvaluator,
    n: usize,
    depth: usize,
) -> ntk_system::progress::ProgressBar {
    let total = crate::theory::recursion_evaluations(n, depth);
    let prefix = "theory kernel (pair x layer evaluations)".to_string();
    match dual.is_closed_form() {
        false if total >= DRAWN_QUADRATURE => reporter.timed_bar(total, prefix),
        true if total >= DRAWN_CLOSED_FORM => reporter.bar(total, prefix),
        _ => ntk_system::progress::ProgressBar::hidden(),
    }
}

/// The evaluations by quadrature from which [`theory_bar`] shows a bar.
pub const DRAWN_QUADRATURE: u64 = 100;

/// The evaluations in closed form from which [`theory_bar`] draws a bar on a terminal.
pub const DRAWN_CLOSED_FORM: u64 = 10_000_000;

#[cfg(test)]
mod tests {
    use super::*;
    use ntk_model::{ActivationKind, MlpConfig, Normalization, Parameterization};

    /// Every prerequisite of the theory and the structured kernel is refused from the config
    /// alone (what the probe's config check calls), naming `probe.method`; an input
    /// dimension not yet known is not refused.
    #[test]
    fn the_methods_prerequisites_are_checked_on_the_config() {
        let plain = MlpConfig::new(3, 8, 2, ActivationKind::Relu);
        let refused = [
            (Method::Theory, plain.clone().with_bias(true), "biases"),
            (
                Method::Theory,
                plain
                    .clone()
                    .with_parameterization(Parameterization::Standard),
                "ntk parameterization",
            ),
            (
                Method::Theory,
                plain.clone().with_normalization(Normalization::LayerNorm),
                "normalization",
            ),
            (
                Method::Theory,
                plain.clone().with_output_dim(2),
                "one output",
            ),
            (
                Method::Structured,
                plain.clone().with_normalization(Normalization::BatchNorm),
                "model.normalization = \"batch_norm\": BatchNorm couples the samples",
            ),
            // Thirteenth hostile round: LayerNorm was said to couple samples, and both
            // values were spelled as Rust's Debug ("LayerNorm", "BatchNorm").
            (
                Method::Structured,
                plain.clone().with_normalization(Normalization::LayerNorm),
                "model.normalization = \"layer_norm\": LayerNorm normalizes each sample over \
                 its features",
            ),
        ];
        for (method, cfg, words) in refused {
            let e = check_method(&cfg, method).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("probe.method = {method}")) && e.contains(words),
                "{e}"
            );
        }
        for method in [
            Method::Auto,
            Method::Autodiff,
            Method::Structured,
            Method::Theory,
        ] {
            check_method(&plain, method).unwrap();
        }
        let unknown_dim = MlpConfig::new(0, 8, 2, ActivationKind::Relu);
        check_method(&unknown_dim, Method::Theory).unwrap();
    }
}
