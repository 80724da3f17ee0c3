//! Which statistics BatchNorm normalizes with when the NTK is taken.
//!
//! A BatchNorm network has two NTKs at a point `theta`:
//! - [`BnStatistics::Running`] (the default): evaluation mode, each layer normalized with its
//!   running mean and variance. Samples do not interact and `K_ij = <df(x_i)/dtheta,
//!   df(x_j)/dtheta>` is the usual per-sample kernel. At initialization the running
//!   statistics are (0, 1): BatchNorm is then the identity (up to its eps).
//! - [`BnStatistics::Batch`]: training mode, each layer normalized with the probe batch's
//!   own statistics, as during an SGD step on that batch. The network is then a map of the
//!   whole batch, `X -> f(X)`, and `K_ij = <d f(X)_i/dtheta, d f(X)_j/dtheta>`: its rows
//!   carry the coupling through the statistics, and the kernel depends on which samples are
//!   in the batch. Computed by Burn's autodiff, one backward of the batch per row
//!   ([`crate::jacobian::Coupling::Batch`]), on a detached copy of the network so that the
//!   training-mode forward passes never touch the network's running statistics.

use burn::module::{Flag, Module, ModuleMapper, ModuleVisitor, Param};
use burn::tensor::{DType, Device, Tensor, TensorData};
use ntk_data::inputs::Inputs;
use ntk_model::Net;
use ntk_numerics::backend::Compute;
use ntk_numerics::kernel::OutputMode;
use serde::{Deserialize, Serialize};

use crate::compute::{KernelResult, Method, Route, to_tensor};
use crate::jacobian::{Coupling, ntk_by_autodiff_with};
use crate::{Error, Result};

/// The statistics a BatchNorm layer normalizes with in the NTK (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BnStatistics {
    /// Running statistics (evaluation mode): the per-sample NTK.
    #[default]
    Running,
    /// The probe batch's own statistics (training mode): the NTK of the batch map.
    Batch,
}

impl std::fmt::Display for BnStatistics {
    /// The word configs and summaries use (the serde name).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&ntk_names::spelled(self))
    }
}

/// Every float tensor of a module (parameters and running statistics) in visiting order,
/// with the device and dtype of the first.
#[derive(Default)]
struct Collect {
    values: Vec<TensorData>,
    at: Option<(Device, DType)>,
}

impl ModuleVisitor for Collect {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let t = param.val();
        self.at.get_or_insert_with(|| (t.device(), t.dtype()));
        self.values.push(t.into_data());
    }
}

/// Puts the collected tensors into a fresh module of the same structure, in order.
struct Put(std::vec::IntoIter<TensorData>);

impl ModuleMapper for Put {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let data = self
            .0
            .next()
            .expect("the copy has the original's structure");
        param.map(|old| Tensor::from_data(data, (&old.device(), old.dtype())))
    }
}

/// Switches every module-owned training flag on (BatchNorm then uses the batch's
/// statistics on an autodiff device).
struct TrainFlags;

impl ModuleMapper for TrainFlags {
    fn map_flag(&mut self, _flag: Param<Flag>) -> Param<Flag> {
        Param::from_bool(true)
    }
}

/// A copy of `net` that shares nothing with it: built anew from its config, its parameters
/// and running statistics copied in. (A clone shares the running statistics: Burn keeps them
/// behind one lock for every clone, so a training-mode forward of a clone would update the
/// original's.)
pub fn detached_copy(net: &Net) -> Result<Net> {
    let mut collect = Collect::default();
    net.visit(&mut collect);
    let Some((device, dtype)) = collect.at else {
        return Ok(net.clone());
    };
    let fresh = net.rebuilt(&device, dtype)?;
    Ok(fresh.map(&mut Put(collect.values.into_iter())))
}

/// The NTK of `net` on `inputs` with its BatchNorm layers on the batch's own statistics
/// ([`BnStatistics::Batch`]): Burn's autodiff on a detached copy in training mode.
pub fn batch_statistics_kernel(
    net: &Net,
    inputs: &Inputs,
    compute: &Compute,
    method: Method,
    mode: OutputMode,
) -> Result<KernelResult> {
    if !net.has_batch_norm() {
        return Err(Error::Config {
            key: "batch_norm_statistics",
            value: "batch".into(),
            reason: "the network has no BatchNorm layers".into(),
        });
    }
    if !matches!(method, Method::Auto | Method::Autodiff) {
        return Err(Error::Config {
            key: "probe.method",
            value: method.to_string(),
            reason: "BatchNorm on the batch's statistics couples the samples: its NTK is \
                     autodiff's (method = \"auto\" or \"autodiff\")"
                .into(),
        });
    }
    let ad = compute.device.clone().autodiff();
    let model = detached_copy(net)?.fork(&ad).train().map(&mut TrainFlags);
    let x = to_tensor(inputs, compute).to_device(&ad);
    let kernel = ntk_by_autodiff_with(&model, |m: &Net, x| m.forward(x), &x, mode, Coupling::Batch);
    Ok(KernelResult {
        kernel,
        method: Method::Autodiff,
        route: Route::Autodiff,
    })
}

/// [`crate::compute::compute_kernel_net_cached`] with BatchNorm on the statistics `stats`
/// chooses: the running ones (evaluation mode, every route), or the batch's own
/// ([`batch_statistics_kernel`]; no cache).
pub fn compute_kernel_net_stats(
    net: &Net,
    inputs: &Inputs,
    compute: &Compute,
    (method, mode): (Method, OutputMode),
    stats: BnStatistics,
    cache: &mut crate::host::HostCache,
) -> Result<KernelResult> {
    match stats {
        BnStatistics::Running => {
            crate::compute::compute_kernel_net_cached(net, inputs, compute, method, mode, cache)
        }
        BnStatistics::Batch => batch_statistics_kernel(net, inputs, compute, method, mode),
    }
}
