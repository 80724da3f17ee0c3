//! The CPU training engines: a network's SGD step on host GEMMs (the system OpenBLAS by
//! default), checked against Burn's autodiff step for step by the tests, for
//! - dense MLPs without normalization layers ([`mlp`]);
//! - the CIFAR ResNets in all three variants ([`resnet`], on
//!   [`ntk_model::resnet::host`]).
//!
//! Both take the cotangent of the batch's mean loss ([`Loss::host`]): for the cross-entropy
//! `dL/df = (softmax f - onehot y) / B` ([`crate::loss::softmax_cross_entropy`]), for the square loss
//! `(f - t) / B` (`crate::loss`); and update with Burn's `Sgd` rule ([`Rule`]); the Burn
//! [`Model`] stays the run's state of record, written back before every evaluation, NTK probe
//! and checkpoint.

pub mod mlp;
pub mod resnet;

use ntk_model::Net;
use ntk_numerics::backend::Precision;
use ntk_numerics::linalg::Real;

pub use mlp::HostMlp;
pub use resnet::HostResNetSgd;

use crate::config::OptimConfig;
use crate::loss::{Loss, Rows};
use crate::model::Model;

/// What one step saw: the summed loss over the batch and the correct predictions.
#[derive(Clone, Copy, Debug)]
pub struct StepResult {
    pub loss_sum: f64,
    pub correct: usize,
}

/// Burn's SGD rule (PyTorch semantics, dampening 0) on one contiguous slice of parameters:
/// `g += wd w`; `v = g` on the first step, `v = mu v + g` after; `g = g + mu v` (Nesterov)
/// or `v`; `w -= lr g`.
pub(crate) struct Rule<T> {
    lr: T,
    mu: T,
    wd: T,
    decay: bool,
    momentum: bool,
    nesterov: bool,
    first: bool,
}

impl<T: Real> Rule<T> {
    /// The rule with momentum `mu` (Nesterov or not) and weight decay `wd` at learning rate
    /// `lr`; `first`: the momentum buffers are new.
    pub fn new(mu: f64, nesterov: bool, wd: f64, lr: f64, first: bool) -> Self {
        Self {
            lr: T::of(lr),
            mu: T::of(mu),
            wd: T::of(wd),
            decay: wd > 0.0,
            momentum: mu > 0.0,
            nesterov,
            first,
        }
    }

    /// [`Self::apply`] with `scalar` instead on the parameters at `at` (ascending): two
    /// parameter groups at their own rates, every parameter updated by the same rule of its
    /// own values as a single group would update it.
    pub fn apply_groups(
        &self,
        scalar: &Self,
        at: &[usize],
        w: &mut [T],
        g: &mut [T],
        mut v: Option<&mut [T]>,
    ) {
        let mut from = 0;
        for &i in at {
            let vr = v.as_deref_mut().map(|v| &mut v[from..i]);
            self.apply(&mut w[from..i], &mut g[from..i], vr);
            let vs = v.as_deref_mut().map(|v| &mut v[i..=i]);
            scalar.apply(&mut w[i..=i], &mut g[i..=i], vs);
            from = i + 1;
        }
        let v = v.map(|v| &mut v[from..]);
        self.apply(&mut w[from..], &mut g[from..], v);
    }

    pub fn apply(&self, w: &mut [T], g: &mut [T], v: Option<&mut [T]>) {
        if self.decay {
            w.iter()
                .zip(g.iter_mut())
                .for_each(|(w, g)| *g = *w * self.wd + *g);
        }
        if let Some(v) = v {
            for (g, v) in g.iter_mut().zip(v.iter_mut()) {
                *v = if self.first { *g } else { *g + *v * self.mu };
                *g = if self.nesterov { *v * self.mu + *g } else { *v };
            }
        }
        w.iter_mut()
            .zip(g.iter())
            .for_each(|(w, g)| *w -= *g * self.lr);
    }
}

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
pub enum Engine {
    Mlp32(HostMlp<f32>),
    Mlp64(HostMlp<f64>),
    ResNet32(Box<HostResNetSgd<f32>>),
    ResNet64(Box<HostResNetSgd<f64>>),
}

/// `$e` applied to the engine inside, whatever its kind and precision.
macro_rules! each {
    ($self:expr, $h:ident => $e:expr) => {
        match $self {
            Engine::Mlp32($h) => $e,
            Engine::Mlp64($h) => $e,
            Engine::ResNet32($h) => $e,
            Engine::ResNet64($h) => $e,
        }
    };
}

impl Engine {
    /// The engine for `model` in `precision`, or `None` when no host engine computes it
    /// ([`ntk_model::NetSpec::on_host_engine`]: an MLP with normalization layers).
    pub fn for_model(
        model: &Model,
        (optim, loss): (&OptimConfig, Loss),
        precision: Precision,
    ) -> Option<Self> {
        if !model.spec().on_host_engine() {
            return None;
        }
        Some(match (model, precision) {
            (Net::Mlp(m), Precision::F32) => Self::Mlp32(HostMlp::new(m, optim, loss)),
            (Net::Mlp(m), Precision::F64) => Self::Mlp64(HostMlp::new(m, optim, loss)),
            (Net::ResNet(r), Precision::F32) => {
                Self::ResNet32(Box::new(HostResNetSgd::new(r, optim, loss)))
            }
            (Net::ResNet(r), Precision::F64) => {
                Self::ResNet64(Box::new(HostResNetSgd::new(r, optim, loss)))
            }
        })
    }

    /// One step on rows `x` (row-major `[B, d]` f64 values, as the data set holds them).
    pub fn step(&mut self, x: &[f64], d: usize, y: &[usize], lr: f64) -> StepResult {
        each!(self, h => h.step(x, d, y, lr))
    }

    pub fn write_into(&self, model: &mut Model) {
        each!(self, h => h.write_into(model))
    }

    /// The mean loss and accuracy on `set` in evaluation mode, where the engine has its own
    /// evaluation (the ResNets: Burn's forward on the CPU costs as much as the training);
    /// `None` for the MLPs (Burn's evaluation of the model of record is fast there).
    pub fn evaluate(&self, set: &ntk_data::Inputs, batch: usize) -> Option<(f64, f64)> {
        match self {
            Self::ResNet32(h) => Some(h.evaluate(&set.x, set.n, &set.labels, batch)),
            Self::ResNet64(h) => Some(h.evaluate(&set.x, set.n, &set.labels, batch)),
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
