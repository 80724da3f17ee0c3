//! The one interface the epoch loop of a training run needs from an engine: [`Stepper`].
//! Three engines implement it:
//! - [`crate::burn::BurnStepper`]: Burn's autodiff (`loss.backward()`) and `ModuleOptimizer`
//!   (any network, any backend);
//! - [`crate::host::stepper::HostStepper`]: the host engines of [`crate::host`] on host GEMMs
//!   (CIFAR ResNets, and MLPs without normalization layers);
//! - `crate::cudnn::stepper::CudnnStepper` (feature `cudnn`): the cuDNN engine (CIFAR
//!   ResNets in f32 on an NVIDIA GPU).
//!
//! [`fn@crate::choose`] picks one for a run. Each keeps a Burn [`Net`] (autodiff device,
//! training mode) as the run's state of record: evaluation, the NTK tracking and checkpoints
//! read it.

use burn::optim::ModuleOptimizer;
use ntk_model::Net;

use crate::engine::{Engine, StateForm};

/// A mini-batch: `x` row-major `[B, d]` (augmented when the run augments), its labels.
pub struct Batch {
    pub x: Vec<f64>,
    pub d: usize,
    pub labels: Vec<usize>,
}

/// What one step saw: the summed loss over the batch and the correct predictions of the
/// forward before the update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepResult {
    pub loss_sum: f64,
    pub correct: usize,
}

/// A labelled data set as an engine evaluates it: `n` rows of `x` (row-major `[n, d]`) and
/// their labels.
#[derive(Clone, Copy)]
pub struct Labelled<'a> {
    pub x: &'a [f64],
    pub n: usize,
    pub labels: &'a [u8],
}

/// What the epoch loop needs from an engine.
pub trait Stepper {
    /// Which engine computes the steps.
    fn engine(&self) -> Engine;

    /// Whose optimizer state its checkpoints hold (`Pointer::engine` in a checkpoint):
    /// [`Engine::state_form`].
    fn state_form(&self) -> StateForm {
        self.engine().state_form()
    }

    /// What computes the steps, for the log and the provenance: `Burn autodiff`, `host GEMM`
    /// or `cuDNN on <GPU>`.
    fn method(&self) -> &'static str;

    /// Whether the steps run on a GPU (the provenance then names it: [`Stepper::method`]).
    fn on_gpu(&self) -> bool {
        false
    }

    /// One SGD step on `batch` at learning rate `lr`: the summed loss and the correct
    /// predictions of the forward before the update. `None` when the loss is not finite
    /// (the run diverged): then no update is made.
    fn step(&mut self, batch: Batch, lr: f64) -> Option<StepResult>;

    /// Brings the model of record up to date with the steps (the host engine writes its
    /// weights back); called at the end of every finite epoch, before evaluation, NTK
    /// tracking and checkpoints.
    fn sync(&mut self) {}

    /// The model of record in evaluation mode on the plain device (for evaluation and the
    /// NTK); up to date after [`Stepper::sync`].
    fn valid(&self) -> Net;

    /// The mean loss and accuracy on `set` in evaluation mode computed by the engine itself,
    /// or `None` where the model of record ([`Stepper::valid`]) is to be evaluated.
    fn evaluate(&self, _set: Labelled<'_>, _batch: usize) -> Option<(f64, f64)> {
        None
    }

    /// A copy of what a checkpoint holds: the model of record and the optimizer's state.
    fn snapshot(&self) -> Snapshot;

    /// The optimizer state before any step, in this engine's [`Stepper::state_form`]: what a
    /// checkpoint's state is read into on a resume (Burn's optimizer with the run's SGD
    /// settings, or no momentum buffers yet), so the reader needs no settings of its own.
    fn fresh_state(&self) -> SavedOptim;

    /// Loads the optimizer state a checkpoint of this engine's [`Stepper::state_form`] held:
    /// Burn's optimizer record, or the host engine's momentum buffers.
    fn load_state(&mut self, state: SavedOptim) -> crate::Result<()>;

    /// The first error of a device behind the engine since the last call (a step, a sync or
    /// an evaluation that failed on the GPU), which the epoch loop reports instead of
    /// counting a failed step as a divergence. `None` for the host engines.
    fn failure(&mut self) -> Option<crate::Error> {
        None
    }
}

/// A stepper's state at the end of an epoch, as a checkpoint holds it.
#[derive(Clone)]
pub struct Snapshot {
    /// The model of record (autodiff device, training mode).
    pub model: Net,
    pub optim: SavedOptim,
}

/// The optimizer state of a [`Snapshot`], in its [`StateForm`].
#[derive(Clone)]
pub enum SavedOptim {
    /// Burn's optimizer ([`StateForm::Burn`]).
    Burn(ModuleOptimizer),
    /// The host engine's momentum buffers, flattened ([`crate::host::HostEngine::velocity`];
    /// [`StateForm::Host`]), empty before the first step or without momentum.
    Host(Vec<f64>),
}

impl SavedOptim {
    /// The form it has.
    pub fn form(&self) -> StateForm {
        match self {
            Self::Burn(_) => StateForm::Burn,
            Self::Host(_) => StateForm::Host,
        }
    }
}

/// The state's form differs from the engine's: an error naming both.
pub(crate) fn wrong_form(engine: Engine, got: &SavedOptim) -> crate::Error {
    crate::Error::StateForm {
        engine,
        want: engine.state_form(),
        got: got.form(),
    }
}
