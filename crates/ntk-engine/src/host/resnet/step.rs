//! The training step of a CIFAR ResNet on the host: the training-mode forward and the
//! backward of [`super`] (im2col convolutions on OpenBLAS, BatchNorm with
//! batch statistics, NormReLU, Fixup's scalars) from the mean cross-entropy's cotangent, and
//! Burn's SGD rule on all parameters at once (they live in one vector).
//!
//! The work is split over the cores by chunks of images, with the BLAS single-threaded inside
//! each chunk ([`ntk_numerics::linalg::single_threaded`]); the chunks depend on the shapes only,
//! so a step is bit-for-bit reproducible and a resumed run continues exactly.
//!
//! BatchNorm's running statistics are updated only by a step whose loss is finite (Burn
//! updates them in the forward, before the loss is known); a diverged step leaves the whole
//! network as it was.

use ntk_model::{Net, ResNet};
use ntk_numerics::linalg::{Real, single_threaded};

use super::HostResNet;
use crate::host::labelled_loss;
use crate::loss::{Loss, Rows};
use crate::sgd::{Rule, Sgd};
use crate::stepper::StepResult;

/// A ResNet's parameters, gradient and momentum on the host, in `T`.
#[derive(Clone)]
pub struct HostResNetSgd<T: Real> {
    net: HostResNet<T>,
    grad: Vec<T>,
    /// Momentum buffers (`theta`'s layout), created by the first step.
    velocity: Vec<T>,
    optim: Sgd,
    loss: Loss,
    /// Fixup's scalars in `theta` when they train at their own rate
    /// (`optim.scalar_lr_scale`), else empty.
    scalars: Vec<usize>,
}

impl<T: Real> HostResNetSgd<T> {
    pub fn new(net: &ResNet, optim: &Sgd, loss: Loss) -> Self {
        let net = HostResNet::read(net);
        let scalars = if optim.scalar_lr_scale == 1.0 {
            Vec::new()
        } else {
            net.fixup_scalars()
        };
        Self {
            grad: vec![T::of(0.0); net.num_params()],
            net,
            velocity: Vec::new(),
            optim: *optim,
            loss,
            scalars,
        }
    }

    /// One SGD step on the batch (`x: [B, d]` flat CHW rows, labels `y`) at learning rate
    /// `lr`; returns the loss and hits of the forward before the update. A non-finite loss
    /// leaves the network untouched.
    pub fn step(&mut self, x: &[f64], d: usize, y: &[usize], lr: f64) -> StepResult {
        let batch = y.len();
        assert_eq!(x.len(), batch * d, "the batch holds B rows of d values");
        single_threaded(|| {
            let mut logits = self.net.forward(x, batch).to_vec();
            let k = logits.len() / batch.max(1);
            let (loss_sum, correct) = self.loss.host(
                Rows {
                    values: &mut logits,
                    k,
                },
                y,
            );
            if !loss_sum.is_finite() {
                return StepResult { loss_sum, correct };
            }
            self.net.commit_running();
            self.net.backward(&logits, &mut self.grad);
            let momentum = self.optim.momentum > 0.0;
            let first = self.velocity.is_empty();
            if first && momentum {
                self.velocity = vec![T::of(0.0); self.grad.len()];
            }
            let o = &self.optim;
            let rule = Rule::new(o.momentum, o.nesterov, o.weight_decay, lr, first);
            let v = momentum.then_some(self.velocity.as_mut_slice());
            if self.scalars.is_empty() {
                rule.apply(&mut self.net.theta, &mut self.grad, v);
            } else {
                let lr_s = lr * o.scalar_lr_scale;
                let scalar = Rule::new(o.momentum, o.nesterov, o.weight_decay, lr_s, first);
                let (w, g) = (&mut self.net.theta, &mut self.grad);
                rule.apply_groups(&scalar, &self.scalars, w, g, v);
            }
            StepResult { loss_sum, correct }
        })
    }

    /// The mean loss and the accuracy of the network in evaluation mode (BatchNorm
    /// with its running statistics) on `n` rows `x` with labels `y`, `batch` rows at a time.
    pub fn evaluate(&self, x: &[f64], n: usize, y: &[u8], batch: usize) -> (f64, f64) {
        let (mut loss, mut hits) = (0.0, 0usize);
        single_threaded(|| {
            self.net.eval_logits(x, n, batch, |logits, rows| {
                let (l, c) = labelled_loss(logits, &y[rows], self.loss);
                loss += l;
                hits += c;
            })
        });
        (loss / n as f64, hits as f64 / n as f64)
    }

    /// The network: its parameters and running statistics as the steps left them.
    pub fn network(&self) -> &HostResNet<T> {
        &self.net
    }

    /// Writes the parameters and running statistics into `model` (the ResNet they were read
    /// from).
    pub fn write_into(&self, model: &mut Net) {
        let Net::ResNet(r) = model else {
            unreachable!("a ResNet engine writes into its ResNet")
        };
        self.net.write_into(r);
    }

    /// The momentum buffers in `theta`'s layout, as f64; empty before the first step or
    /// without momentum.
    pub fn velocity(&self) -> Vec<f64> {
        self.velocity.iter().map(|v| v.f64()).collect()
    }

    /// Restores momentum buffers written by [`Self::velocity`].
    pub fn set_velocity(&mut self, flat: &[f64]) -> crate::Result<()> {
        if !flat.is_empty() && flat.len() != self.net.num_params() {
            return Err(crate::Error::MomentumSize {
                have: flat.len(),
                want: self.net.num_params(),
            });
        }
        self.velocity = flat.iter().map(|&v| T::of(v)).collect();
        Ok(())
    }
}
