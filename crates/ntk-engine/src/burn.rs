//! Burn's engine: autodiff (`loss.backward()`), the run's loss and Burn's SGD
//! (`ModuleOptimizer::step`), for any network on any backend: [`BurnStepper`].

use burn::module::Module;
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::tensor::{DType, Device, Tensor, TensorData};
use ntk_model::Net;

use crate::engine::Engine;
use crate::loss::Loss;
use crate::sgd::{Sgd, optimizer, scalar, sgd_step};
use crate::stepper::{Batch, SavedOptim, Snapshot, StepResult, Stepper, wrong_form};

/// Burn's autodiff, the run's loss and SGD: `loss.backward()`, then `ModuleOptimizer::step`.
pub struct BurnStepper {
    /// The model of record (autodiff device, training mode); taken only inside a step.
    model: Option<Net>,
    optim: ModuleOptimizer,
    /// The SGD settings (`scalar_lr_scale` splits a step, [`crate::sgd::sgd_step`]).
    sgd: Sgd,
    loss: Loss,
    /// The autodiff device and the run's float type, for the batch tensors.
    device: Device,
    dtype: DType,
}

impl BurnStepper {
    /// Trains `model` (on the autodiff device `device`, training mode) with SGD as `sgd`
    /// says ([`crate::sgd::optimizer`]).
    pub fn new(model: Net, (sgd, loss): (&Sgd, Loss), device: Device, dtype: DType) -> Self {
        Self {
            model: Some(model),
            optim: optimizer(sgd),
            sgd: *sgd,
            loss,
            device,
            dtype,
        }
    }

    fn model(&self) -> &Net {
        self.model
            .as_ref()
            .expect("the model is back after every step")
    }

    /// The batch's inputs `[B, d]` as a tensor on the autodiff device.
    fn inputs(&self, batch: &Batch) -> Tensor<2> {
        let b = batch.labels.len();
        Tensor::from_data(
            TensorData::new(batch.x.clone(), [b, batch.d]),
            (&self.device, self.dtype),
        )
    }
}

impl Stepper for BurnStepper {
    fn engine(&self) -> Engine {
        Engine::Burn
    }

    fn method(&self) -> &'static str {
        "Burn autodiff"
    }

    fn step(&mut self, batch: Batch, lr: f64) -> Option<StepResult> {
        let b = batch.labels.len();
        let logits = self.model().forward(self.inputs(&batch));
        let (loss, hits) = self.loss.burn(logits, &batch.labels);
        let l = scalar(loss.clone());
        if !l.is_finite() {
            return None;
        }
        let model = self
            .model
            .take()
            .expect("the model is back after every step");
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        self.model = Some(sgd_step(&mut self.optim, &self.sgd, lr, model, grads));
        Some(StepResult {
            loss_sum: l * b as f64,
            correct: hits,
        })
    }

    fn valid(&self) -> Net {
        self.model().valid()
    }

    fn snapshot(&self) -> Snapshot {
        // BatchNorm's running statistics: the training forward stages each update per thread
        // (`RunningState::update`), and a visitor (the checkpoint's record) reads the value
        // from before the last one. `valid()` merges the staged updates into the shared state.
        let _ = self.model().valid();
        Snapshot {
            model: self.model().clone(),
            optim: SavedOptim::Burn(self.optim.clone()),
        }
    }

    fn fresh_state(&self) -> SavedOptim {
        SavedOptim::Burn(optimizer(&self.sgd))
    }

    fn load_state(&mut self, state: SavedOptim) -> crate::Result<()> {
        match state {
            SavedOptim::Burn(optim) => {
                self.optim = optim;
                Ok(())
            }
            other => Err(wrong_form(Engine::Burn, &other)),
        }
    }
}
