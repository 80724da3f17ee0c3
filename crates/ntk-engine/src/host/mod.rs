//! The host engines: a network's forward and backward passes on host GEMMs (the system
//! OpenBLAS by default), checked against Burn's autodiff by the tests, for
//! - dense MLPs without normalization layers ([`mlp`]: the passes of Liu & Hui's Eq. 3, under
//!   the probe's structured NTK, and [`mlp::step`], the SGD step);
//! - the CIFAR ResNets in all three variants ([`resnet`]: the passes, the per-sample
//!   Jacobian of the probe, and [`resnet::step`], the SGD step).
//!
//! A step takes the cotangent of the batch's mean loss (`Loss::host`): for the
//! cross-entropy `dL/df = (softmax f - onehot y) / B` ([`crate::loss::softmax_cross_entropy`]),
//! for the square loss `(f - t) / B` (`crate::loss`); and updates with Burn's `Sgd` rule
//! ([`crate::sgd::Rule`]). [`HostEngine`] is either network in either precision, and
//! [`stepper::HostStepper`] the [`crate::Stepper`] over it: the Burn network stays the run's
//! state of record, written back before every evaluation, NTK probe and checkpoint.

pub mod mlp;
pub mod resnet;
pub mod stepper;

use ntk_model::Net;
use ntk_numerics::backend::Precision;
use ntk_numerics::linalg::Real;

pub use mlp::step::HostMlp;
pub use resnet::step::HostResNetSgd;

use crate::loss::{Loss, Rows};
use crate::sgd::Sgd;
use crate::stepper::StepResult;

/// The summed `loss` and the correct predictions of row-major `logits` (one row per label)
/// against a data set's `labels`, as [`Loss::host`] counts them: the evaluation of an
/// engine's logits, chunk by chunk.
pub(crate) fn labelled_loss<T: Real>(logits: &[T], labels: &[u8], loss: Loss) -> (f64, usize) {
    let labels: Vec<usize> = labels.iter().map(|&l| usize::from(l)).collect();
    let mut values = logits.to_vec();
    let k = values.len() / labels.len().max(1);
    loss.host(
        Rows {
            values: &mut values,
            k,
        },
        &labels,
    )
}

/// A host engine in the run's precision.
#[derive(Clone)]
pub enum HostEngine {
    Mlp32(HostMlp<f32>),
    Mlp64(HostMlp<f64>),
    ResNet32(Box<HostResNetSgd<f32>>),
    ResNet64(Box<HostResNetSgd<f64>>),
}

/// `$e` applied to the engine inside, whatever its kind and precision.
macro_rules! each {
    ($self:expr, $h:ident => $e:expr) => {
        match $self {
            HostEngine::Mlp32($h) => $e,
            HostEngine::Mlp64($h) => $e,
            HostEngine::ResNet32($h) => $e,
            HostEngine::ResNet64($h) => $e,
        }
    };
}

impl HostEngine {
    /// The engine for `model` in `precision`, or `None` when no host engine computes it
    /// ([`ntk_model::NetSpec::on_host_engine`]: an MLP with normalization layers).
    pub fn for_model(
        model: &Net,
        (optim, loss): (&Sgd, Loss),
        precision: Precision,
    ) -> Option<Self> {
        if !model.spec().on_host_engine() {
            return None;
        }
        Self::of(model, (optim, loss), precision)
    }

    /// [`HostEngine::for_model`] where the caller has asked `on_host_engine` of the model's
    /// spec already ([`crate::choose`]); `None` for an ONNX network.
    pub(crate) fn of(
        model: &Net,
        (optim, loss): (&Sgd, Loss),
        precision: Precision,
    ) -> Option<Self> {
        Some(match (model, precision) {
            (Net::Mlp(m), Precision::F32) => Self::Mlp32(HostMlp::new(m, optim, loss)),
            (Net::Mlp(m), Precision::F64) => Self::Mlp64(HostMlp::new(m, optim, loss)),
            (Net::ResNet(r), Precision::F32) => {
                Self::ResNet32(Box::new(HostResNetSgd::new(r, optim, loss)))
            }
            (Net::ResNet(r), Precision::F64) => {
                Self::ResNet64(Box::new(HostResNetSgd::new(r, optim, loss)))
            }
            // Burn's autodiff trains it (`on_host_engine` is false).
            (Net::Onnx(_), _) => return None,
        })
    }

    /// One step on rows `x` (row-major `[B, d]` f64 values, as the data set holds them).
    pub fn step(&mut self, x: &[f64], d: usize, y: &[usize], lr: f64) -> StepResult {
        each!(self, h => h.step(x, d, y, lr))
    }

    pub fn write_into(&self, model: &mut Net) {
        each!(self, h => h.write_into(model))
    }

    /// The mean loss and accuracy on `set` in evaluation mode, where the engine has its own
    /// evaluation (the ResNets: Burn's forward on the CPU costs as much as the training);
    /// `None` for the MLPs (Burn's evaluation of the model of record is fast there).
    pub fn evaluate(&self, set: crate::Labelled<'_>, batch: usize) -> Option<(f64, f64)> {
        match self {
            Self::ResNet32(h) => Some(h.evaluate(set.x, set.n, set.labels, batch)),
            Self::ResNet64(h) => Some(h.evaluate(set.x, set.n, set.labels, batch)),
            Self::Mlp32(_) | Self::Mlp64(_) => None,
        }
    }

    /// The momentum buffers, flattened (empty before the first step or without momentum).
    pub fn velocity(&self) -> Vec<f64> {
        each!(self, h => h.velocity())
    }

    pub fn set_velocity(&mut self, flat: &[f64]) -> crate::Result<()> {
        each!(self, h => h.set_velocity(flat))
    }
}
