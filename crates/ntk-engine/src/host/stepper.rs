//! The host engine as a run's [`Stepper`]: [`HostStepper`], the steps on host GEMMs
//! ([`HostEngine`]), the Burn model of record updated from its weights at every
//! [`Stepper::sync`].

use burn::module::Module;
use ntk_model::Net;

use super::HostEngine;
use crate::engine::Engine;
use crate::stepper::{Batch, Labelled, SavedOptim, Snapshot, StepResult, Stepper, wrong_form};

/// The host engine and the Burn model of record (autodiff device, training mode).
pub struct HostStepper {
    engine: HostEngine,
    model: Net,
}

impl HostStepper {
    /// Steps `model` (the model of record) with `engine`, a copy of its parameters.
    pub fn new(engine: HostEngine, model: Net) -> Self {
        Self { engine, model }
    }
}

impl Stepper for HostStepper {
    fn engine(&self) -> Engine {
        Engine::Host
    }

    fn method(&self) -> &'static str {
        "host GEMM"
    }

    fn step(&mut self, batch: Batch, lr: f64) -> Option<StepResult> {
        let r = self.engine.step(&batch.x, batch.d, &batch.labels, lr);
        r.loss_sum.is_finite().then_some(r)
    }

    fn sync(&mut self) {
        self.engine.write_into(&mut self.model);
    }

    fn evaluate(&self, set: Labelled<'_>, batch: usize) -> Option<(f64, f64)> {
        self.engine.evaluate(set, batch)
    }

    fn valid(&self) -> Net {
        self.model.valid()
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            model: self.model.clone(),
            optim: SavedOptim::Host(self.engine.velocity()),
        }
    }

    fn fresh_state(&self) -> SavedOptim {
        SavedOptim::Host(Vec::new())
    }

    fn load_state(&mut self, state: SavedOptim) -> crate::Result<()> {
        match state {
            SavedOptim::Host(v) => self.engine.set_velocity(&v),
            other => Err(wrong_form(Engine::Host, &other)),
        }
    }
}
