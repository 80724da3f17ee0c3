//! The training step of a dense MLP (no normalization layers) on the host: the forward and
//! the backward of the host MLP engine ([`super`], on host GEMMs: the system
//! OpenBLAS by default) from the mean cross-entropy's cotangent, and Burn's SGD update rule.
//!
//! Why: a dense step is nothing but GEMMs, and Burn's CPU matmul runs at ~30 GFLOP/s on this
//! machine class against ~190 for OpenBLAS (`experiments/bench/README.md`), which made
//! training 4x slower than PyTorch eager. Burn's autodiff stays the reference: the tests
//! check this engine's losses and updated weights against `loss.backward()` and Burn's
//! `Sgd` step for step. The Burn [`Net`] remains the run's state of record: the engine's
//! weights are written back into it before every evaluation, NTK probe and checkpoint.
//!
//! With `a_0 = x` (a batch of `B` rows), hidden layers `l = 0..L-1` and the output layer `L`:
//! - forward (Liu & Hui Eq. 3, [`super`]): `z_l = beta_l a_l W_l + b_l`,
//!   `a_{l+1} = gamma_l phi(z_l)`, logits `f = beta_out a_L W_L + b_L`;
//! - loss `(1/B) sum_i (logsumexp f_i - f_{i, y_i})`, so `dL/df = (softmax f - onehot y) / B`,
//!   the cotangent of the engine's backward: `dW_l = beta_l a_l^T dz_l`, `db_l = 1^T dz_l`,
//!   `dz_{l-1} = (beta_l dz_l W_l^T) .* gamma phi'(z_{l-1})`;
//! - update (Burn's `Sgd`, PyTorch semantics, dampening 0): `g += wd w`;
//!   `v = g` on the first step, `v = mu v + g` after; `g = g + mu v` (Nesterov) or `v`;
//!   `w -= lr g`, for weights and biases alike.

use faer::Mat;
use ntk_model::{Mlp, Net};
use ntk_numerics::linalg::{Real, axpy, contiguous_mut};

use super::{Cotangent, Grads, Params, Pool, Trace, replace_param};
use crate::loss::Loss;
use crate::sgd::{Rule, Sgd};
use crate::stepper::StepResult;

/// A dense MLP's parameters and SGD state on the host, in `T`.
#[derive(Clone)]
pub struct HostMlp<T: Real> {
    params: Params<T>,
    /// Momentum buffers, created by the first step.
    vw: Vec<Mat<T>>,
    vb: Vec<Option<Vec<T>>>,
    momentum: f64,
    nesterov: bool,
    weight_decay: f64,
    loss: Loss,
    ws: Option<Workspace<T>>,
}

impl<T: Real> HostMlp<T> {
    /// Copies the parameters of `mlp` (an MLP without normalization layers: `NetSpec::on_host_engine`).
    pub fn new(mlp: &Mlp, optim: &Sgd, loss: Loss) -> Self {
        Self {
            params: Params::read(mlp),
            vw: Vec::new(),
            vb: Vec::new(),
            momentum: optim.momentum,
            nesterov: optim.nesterov,
            weight_decay: optim.weight_decay,
            loss,
            ws: None,
        }
    }

    /// Whether the momentum buffers take the gradient inside the GEMM (momentum without
    /// Nesterov); the workspace then holds no separate gradients.
    fn fused(&self) -> bool {
        self.momentum > 0.0 && !self.nesterov
    }

    /// One SGD step on the batch (`x: [B, d]`, labels `y`) at learning rate `lr`; returns
    /// the loss and hits of the forward before the update. A non-finite loss leaves the
    /// parameters untouched.
    pub fn step(&mut self, x: &[f64], d: usize, y: &[usize], lr: f64) -> StepResult {
        let batch = y.len();
        let mut ws = match self.ws.take() {
            Some(ws) if ws.x.ncols() == batch => ws,
            _ => Workspace::new(&self.params, batch, !self.fused()),
        };
        let Workspace {
            x: x_mat,
            trace,
            logits,
            signals,
            gw,
            gb,
        } = &mut ws;
        // x^T, [d, B] column-major: a contiguous copy of the row-major batch (the GEMMs
        // take it transposed).
        assert_eq!(x_mat.nrows(), d, "workspace input is [d, B]");
        for i in 0..batch {
            let row = &x[i * d..(i + 1) * d];
            x_mat
                .col_as_slice_mut(i)
                .iter_mut()
                .zip(row)
                .for_each(|(v, r)| *v = T::of(*r));
        }
        let x_rows = x_mat.transpose();
        self.params.forward(x_rows, trace);
        self.params.output_into(x_rows, trace, logits);
        // dL/df (cross-entropy: (softmax f - onehot y) / B), in place of the logits.
        let (loss_sum, correct) = self.loss.host(&mut *logits, y);
        if !loss_sum.is_finite() {
            self.ws = Some(ws);
            return StepResult { loss_sum, correct };
        }
        // The momentum buffers take the gradient inside the GEMM when Nesterov is off:
        // v = mu v + g (v = g on the first step) with BLAS's `beta`, see `Self::update`.
        let fused = self.fused();
        let first = self.vw.is_empty();
        if first && self.momentum > 0.0 {
            (self.vw, self.vb) = zeros_like(&self.params);
        }
        let mu = T::of(if first { 0.0 } else { self.momentum });
        let grads = if fused {
            Grads {
                w: &mut self.vw,
                b: &mut self.vb,
                keep: mu,
            }
        } else {
            Grads {
                w: gw,
                b: gb,
                keep: T::of(0.0),
            }
        };
        let cot = Cotangent::Rows(logits.as_ref());
        self.params
            .backprop(x_rows, trace, cot, signals, Some(grads));
        if fused {
            self.update_fused(lr);
        } else {
            self.update(gw, gb, lr, first);
        }
        self.ws = Some(ws);
        StepResult { loss_sum, correct }
    }

    /// `w -= lr (v + wd w)` after [`Self::step`] put `mu v + g` in `v`; with weight decay
    /// `v` also takes `wd w` first, as Burn's rule (`g' = g + wd w`, `v = mu v + g'`).
    fn update_fused(&mut self, lr: f64) {
        let (lr, wd, decay) = (T::of(lr), T::of(self.weight_decay), self.weight_decay > 0.0);
        let apply = |w: &mut [T], v: &mut [T]| {
            for (w, v) in w.iter_mut().zip(v.iter_mut()) {
                if decay {
                    *v = *w * wd + *v;
                }
                *w -= *v * lr;
            }
        };
        for (layer, v) in self.params.layers_mut().zip(self.vw.iter_mut()) {
            let (w, _) = layer.parts_mut();
            // Whole matrices through BLAS's axpy, which OpenBLAS threads (the update is
            // memory-bound: one pass over w and v).
            if let (Some(ws), Some(vs)) = (contiguous_mut(w), contiguous_mut(v)) {
                if decay {
                    axpy(wd, ws, vs);
                }
                axpy(-lr, vs, ws);
                continue;
            }
            for j in 0..w.ncols() {
                apply(w.col_as_slice_mut(j), v.col_as_slice_mut(j));
            }
        }
        for (layer, v) in self.params.layers_mut().zip(self.vb.iter_mut()) {
            if let ((_, Some(b)), Some(v)) = (layer.parts_mut(), v) {
                apply(b, v);
            }
        }
    }

    /// The general rule (no momentum, or Nesterov) on gradients `gw`, `gb`.
    fn update(&mut self, gw: &mut [Mat<T>], gb: &mut [Option<Vec<T>>], lr: f64, first: bool) {
        let rule = Rule::new(self.momentum, self.nesterov, self.weight_decay, lr, first);
        for (l, g) in gw.iter_mut().enumerate() {
            for j in 0..g.ncols() {
                let v = if rule.momentum {
                    Some(self.vw[l].col_as_slice_mut(j))
                } else {
                    None
                };
                let w = self.params.layer_mut(l).parts_mut().0;
                rule.apply(w.col_as_slice_mut(j), g.col_as_slice_mut(j), v);
            }
        }
        for (l, g) in gb.iter_mut().enumerate() {
            if let ((_, Some(b)), Some(g)) = (self.params.layer_mut(l).parts_mut(), g.as_mut()) {
                let v = if rule.momentum {
                    self.vb[l].as_deref_mut()
                } else {
                    None
                };
                rule.apply(b, g, v);
            }
        }
    }

    /// Writes the parameters into `model` (the MLP they were copied from), keeping each
    /// parameter's id.
    pub fn write_into(&self, model: &mut Net) {
        let Net::Mlp(mlp) = model else {
            unreachable!("the host engine trains MLPs only")
        };
        for (layer, host) in mlp.layers.iter_mut().zip(self.params.layers()) {
            let w = host.w();
            let (rows, cols) = (w.nrows(), w.ncols());
            let data: Vec<T> = (0..rows * cols).map(|k| w[(k / cols, k % cols)]).collect();
            layer.weight = replace_param(layer.weight.clone(), data, vec![rows, cols]);
            if let (Some(b), Some(bias)) = (host.b(), layer.bias.take()) {
                layer.bias = Some(replace_param(bias, b.to_vec(), vec![b.len()]));
            }
        }
    }

    /// The momentum buffers, flattened in a fixed order (weights row-major, then biases,
    /// layer by layer), as f64; empty before the first step or without momentum.
    pub fn velocity(&self) -> Vec<f64> {
        let mut out = Vec::new();
        for (l, vw) in self.vw.iter().enumerate() {
            let (rows, cols) = (vw.nrows(), vw.ncols());
            out.extend((0..rows * cols).map(|k| vw[(k / cols, k % cols)].f64()));
            if let Some(vb) = &self.vb[l] {
                out.extend(vb.iter().map(|v| v.f64()));
            }
        }
        out
    }

    /// Restores momentum buffers written by [`Self::velocity`].
    pub fn set_velocity(&mut self, flat: &[f64]) -> crate::Result<()> {
        if flat.is_empty() {
            self.vw.clear();
            self.vb.clear();
            return Ok(());
        }
        let want: usize = self
            .params
            .layers()
            .map(|l| l.fan_in() * l.fan_out() + l.b().map_or(0, <[T]>::len))
            .sum();
        if flat.len() != want {
            return Err(crate::Error::MomentumSize {
                have: flat.len(),
                want,
            });
        }
        let mut at = 0;
        self.vw.clear();
        self.vb.clear();
        for layer in self.params.layers() {
            let (rows, cols) = (layer.fan_in(), layer.fan_out());
            self.vw.push(Mat::from_fn(rows, cols, |i, j| {
                T::of(flat[at + i * cols + j])
            }));
            at += rows * cols;
            self.vb.push(layer.b().map(|b| {
                let v = flat[at..at + b.len()].iter().map(|&v| T::of(v)).collect();
                at += b.len();
                v
            }));
        }
        Ok(())
    }
}

/// Per-step buffers for a batch size: the input (transposed, `[d, B]`), the forward's
/// trace, the logits (then `dL/df`), the hidden layers' signals and the gradients.
#[derive(Clone)]
struct Workspace<T: Real> {
    x: Mat<T>,
    trace: Trace<T>,
    logits: Mat<T>,
    signals: Vec<Mat<T>>,
    gw: Vec<Mat<T>>,
    gb: Vec<Option<Vec<T>>>,
}

impl<T: Real> Workspace<T> {
    /// `grads`: whether to hold gradient buffers (not when they go into the momentum).
    fn new(params: &Params<T>, batch: usize, grads: bool) -> Self {
        let (gw, gb) = if grads {
            zeros_like(params)
        } else {
            (Vec::new(), Vec::new())
        };
        Self {
            x: Mat::zeros(params.layer(0).fan_in(), batch),
            trace: Trace::new(params, batch, &mut Pool::default()),
            logits: Mat::zeros(batch, params.output().fan_out()),
            signals: (params.hidden().iter())
                .map(|l| Mat::zeros(batch, l.fan_out()))
                .collect(),
            gw,
            gb,
        }
    }
}

/// Zero matrices and vectors shaped as the weights and biases of `params`.
fn zeros_like<T: Real>(params: &Params<T>) -> (Vec<Mat<T>>, Vec<Option<Vec<T>>>) {
    let gw = params
        .layers()
        .map(|l| Mat::zeros(l.fan_in(), l.fan_out()))
        .collect();
    let gb = params
        .layers()
        .map(|l| l.b().map(|b| vec![T::of(0.0); b.len()]))
        .collect();
    (gw, gb)
}
