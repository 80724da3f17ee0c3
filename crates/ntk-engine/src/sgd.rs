//! SGD as every engine runs it: the settings ([`Sgd`], from a run's `[optim]`), Burn's
//! optimizer ([`optimizer`]) and one step of it with Fixup's scalars in their own group
//! ([`sgd_step`]), what a step reads off its tensors ([`scalar`]), and the same rule on the
//! host engines' flat parameter slices ([`Rule`]); the cuDNN engine applies it in its own
//! kernels.

use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::Tensor;
use ntk_model::Net;

use ntk_numerics::linalg::Real;

/// The optimizer of a run: Burn's `Sgd` (PyTorch semantics, dampening 0) with momentum
/// (Nesterov or not), weight decay, and Fixup's scalars at `scalar_lr_scale` times the rate.
/// The learning rate is given at each step (the schedule's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sgd {
    pub momentum: f64,
    pub nesterov: bool,
    pub weight_decay: f64,
    pub scalar_lr_scale: f64,
}

impl Sgd {
    /// SGD with `momentum` and `weight_decay`, one rate for every parameter.
    pub fn new(momentum: f64, weight_decay: f64) -> Self {
        Self {
            momentum,
            nesterov: false,
            weight_decay,
            scalar_lr_scale: 1.0,
        }
    }
}

/// The value of a one-element tensor.
pub fn scalar(t: Tensor<1>) -> f64 {
    t.try_into_vec_as::<f64>().expect("a scalar")[0]
}

/// Burn's SGD with the config's momentum, Nesterov and weight decay (PyTorch semantics,
/// dampening 0).
pub fn optimizer(o: &Sgd) -> ModuleOptimizer {
    let mut sgd = SgdConfig::new();
    if o.momentum > 0.0 {
        sgd = sgd.with_momentum(Some(
            MomentumConfig::new()
                .with_momentum(o.momentum)
                .with_dampening(0.0)
                .with_nesterov(o.nesterov),
        ));
    }
    if o.weight_decay > 0.0 {
        sgd = sgd.with_weight_decay(Some(WeightDecayConfig::new(o.weight_decay as f32)));
    }
    sgd.init()
}

/// One step of Burn's optimizer on `model` with the gradients `grads` at learning rate `lr`,
/// Fixup's scalars ([`ntk_model::ResNet::fixup_scalars`]) at `lr * o.scalar_lr_scale`: two
/// steps of the same optimizer on the two disjoint groups (a parameter without a gradient
/// is left alone, its momentum kept), as PyTorch's parameter groups do.
pub fn sgd_step(
    optim: &mut ModuleOptimizer,
    o: &Sgd,
    lr: f64,
    model: Net,
    mut grads: GradientsParams,
) -> Net {
    let scalars: Vec<_> = match (&model, o.scalar_lr_scale != 1.0) {
        (Net::ResNet(r), true) => r.fixup_scalars().iter().map(|p| p.id).collect(),
        _ => Vec::new(),
    };
    if scalars.is_empty() {
        return optim.step(lr, model, grads);
    }
    let mut group = GradientsParams::new();
    for id in scalars {
        if let Some(g) = grads.remove::<1>(id) {
            group.register(id, g);
        }
    }
    let model = optim.step(lr * o.scalar_lr_scale, model, group);
    optim.step(lr, model, grads)
}

/// Burn's SGD rule (PyTorch semantics, dampening 0) on one contiguous slice of parameters:
/// `g += wd w`; `v = g` on the first step, `v = mu v + g` after; `g = g + mu v` (Nesterov)
/// or `v`; `w -= lr g`.
pub struct Rule<T> {
    lr: T,
    mu: T,
    wd: T,
    decay: bool,
    /// Whether the rule keeps momentum buffers (`mu > 0`).
    pub(crate) momentum: bool,
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
