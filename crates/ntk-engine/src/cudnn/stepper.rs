//! The cuDNN engine as a run's [`Stepper`]: [`CudnnStepper`], over [`super::CudnnResNet`].
//!
//! Its checkpoints are the host engine's files (the momentum buffers in the host engine's
//! order, [`StateForm::Host`](crate::StateForm::Host)), so a run moves between a CPU and a
//! GPU machine with `--resume`.

use std::cell::RefCell;

use burn::module::Module;
use ntk_model::Net;
use ntk_numerics::backend::Fp32Precision;

use super::CudnnResNet;
use crate::engine::Engine;
use crate::loss::Loss;
use crate::sgd::Sgd;
use crate::stepper::{Batch, Labelled, SavedOptim, Snapshot, StepResult, Stepper, wrong_form};

/// The cuDNN engine, the Burn model of record (autodiff device, training mode) written
/// from its parameters at every [`Stepper::sync`], and the first device error (reported
/// by [`Stepper::failure`]).
pub struct CudnnStepper {
    engine: RefCell<CudnnResNet>,
    model: Net,
    method: &'static str,
    failed: RefCell<Option<super::Error>>,
}

impl CudnnStepper {
    /// Starts the cuDNN engine for `model` (a CIFAR ResNet in f32; autodiff device, training
    /// mode) with `sgd` on `loss`, planned for batches of `batch`, its f32 products rounded as
    /// `fp32` says.
    pub fn start(
        (sgd, loss): (&Sgd, Loss),
        model: Net,
        batch: usize,
        fp32: Fp32Precision,
    ) -> super::Result<Self> {
        let Net::ResNet(r) = &model else {
            unreachable!("checked: a ResNet")
        };
        let engine = CudnnResNet::new(r, (*sgd, loss), batch, 0, fp32)?;
        let mode = match engine.bn_mode() {
            super::BnMode::Spatial => "",
            super::BnMode::Persistent => ", BatchNorm persistent",
        };
        let math = match fp32 {
            Fp32Precision::Ieee => "",
            Fp32Precision::Tf32 => ", TF32",
        };
        let name = format!("cuDNN on {}{mode}{math}", engine.device_name());
        let method = Box::leak(name.into_boxed_str());
        Ok(Self {
            engine: RefCell::new(engine),
            model,
            method,
            failed: RefCell::new(None),
        })
    }

    fn fail(&self, e: super::Error) {
        self.failed.borrow_mut().get_or_insert(e);
    }
}

impl Stepper for CudnnStepper {
    fn engine(&self) -> Engine {
        Engine::Cudnn
    }

    fn method(&self) -> &'static str {
        self.method
    }

    fn on_gpu(&self) -> bool {
        true
    }

    fn step(&mut self, batch: Batch, lr: f64) -> Option<StepResult> {
        match self.engine.get_mut().step(&batch.x, &batch.labels, lr) {
            Ok(s) => s.loss_sum.is_finite().then_some(s),
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    fn sync(&mut self) {
        let Net::ResNet(r) = &mut self.model else {
            unreachable!("a ResNet engine writes into its ResNet")
        };
        if let Err(e) = self.engine.get_mut().write_into(r) {
            self.fail(e);
        }
    }

    fn evaluate(&self, set: Labelled<'_>, _batch: usize) -> Option<(f64, f64)> {
        let (mut loss, mut hits) = (0.0f64, 0usize);
        let mut engine = self.engine.borrow_mut();
        let kind = engine.loss();
        let r = engine.eval_logits(set.x, set.n, |logits, rows| {
            let (l, c) = crate::host::labelled_loss(logits, &set.labels[rows], kind);
            loss += l;
            hits += c;
        });
        match r {
            Ok(()) => Some((loss / set.n as f64, hits as f64 / set.n as f64)),
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    fn valid(&self) -> Net {
        self.model.valid()
    }

    fn snapshot(&self) -> Snapshot {
        let velocity = self.engine.borrow().velocity().unwrap_or_else(|e| {
            self.fail(e);
            Vec::new()
        });
        Snapshot {
            model: self.model.clone(),
            optim: SavedOptim::Host(velocity),
        }
    }

    fn fresh_state(&self) -> SavedOptim {
        SavedOptim::Host(Vec::new())
    }

    fn load_state(&mut self, state: SavedOptim) -> crate::Result<()> {
        match state {
            SavedOptim::Host(v) => {
                self.engine
                    .get_mut()
                    .set_velocity(&v)
                    .map_err(|e| crate::Error::NoCudnnEngine {
                        reason: e.to_string(),
                    })
            }
            other => Err(wrong_form(Engine::Cudnn, &other)),
        }
    }

    fn failure(&mut self) -> Option<crate::Error> {
        self.failed
            .get_mut()
            .take()
            .map(|e| crate::Error::NoCudnnEngine {
                reason: format!("the device failed: {e}"),
            })
    }
}
