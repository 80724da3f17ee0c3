//! SGD as every engine runs it: the settings ([`Sgd`], from a run's `[optim]`), the Burn
//! engine's optimizer ([`optimizer`], [`SgdOptimizer`]) and one step of it with Fixup's
//! scalars in their own group ([`sgd_step`]), what a step reads off its tensors
//! ([`scalar`]), and the same rule on the host engines' flat parameter slices ([`Rule`]);
//! the cuDNN engine applies it in its own kernels.

use burn::optim::{
    GradientsParams, LearningRate, ModuleOptimizer, Optimizer, RecordState, StateSink, StateSource,
    join_path,
};
use burn::tensor::{Device, Tensor};
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

/// The Burn engine's optimizer: [`SgdOptimizer`] with the config's momentum, Nesterov and
/// weight decay, in Burn's module optimizer (parameter groups, checkpoints).
pub fn optimizer(o: &Sgd) -> ModuleOptimizer {
    ModuleOptimizer::from(SgdOptimizer {
        momentum: o.momentum,
        nesterov: o.nesterov,
        weight_decay: o.weight_decay,
    })
}

/// SGD with momentum (Nesterov or not) and weight decay, PyTorch's semantics with dampening
/// 0, the rule of [`Rule`] on Burn's tensors: `g += wd w`; `v = g` on a parameter's first
/// step, `v = mu v + g` after; `g = g + mu v` (Nesterov) or `v`; `w -= lr g`.
///
/// Burn's own `Sgd` keeps the momentum and the decay penalty as f32 (`Momentum::momentum`,
/// `WeightDecayConfig::penalty`), so an f64 run stepped with `mu = 0.9` rounded to f32 and
/// drifted from the host engine and from PyTorch by about 3e-8 relative (twenty-eighth
/// hostile round, D1). Here the coefficients are the config's f64 values, converted to the
/// tensor's precision where they are applied; an f32 run computes what Burn's did, bit for
/// bit. The state is recorded under Burn's names (`momentum.velocity`), so checkpoints of
/// either read back into the other.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgdOptimizer {
    pub momentum: f64,
    pub nesterov: bool,
    pub weight_decay: f64,
}

/// A parameter's state under [`SgdOptimizer`]: its velocity, once momentum has stepped it.
#[derive(Clone)]
pub struct SgdState<const D: usize> {
    pub velocity: Option<Tensor<D>>,
}

/// Burn's record names (`{param}.momentum.velocity`, as its `SgdState` and `MomentumState`
/// write them).
const MOMENTUM: &str = "momentum";
const VELOCITY: &str = "velocity";

impl<const D: usize> RecordState for SgdState<D> {
    fn state_flatten(&self, prefix: &str, out: &mut StateSink) {
        if let Some(v) = &self.velocity {
            out.push_tensor(
                &join_path(prefix, MOMENTUM),
                VELOCITY,
                v.clone().into_data(),
            );
        }
    }

    fn state_unflatten(prefix: &str, src: &mut StateSource, device: &Device) -> Option<Self> {
        let at = join_path(prefix, MOMENTUM);
        let velocity = if src.has_under(&at) {
            // In the dtype it was recorded in, whatever the device's default float.
            let data = src.take_tensor(&at, VELOCITY)?;
            let dtype = data.dtype();
            Some(Tensor::from_data(data, (device, dtype)))
        } else {
            None
        };
        Some(Self { velocity })
    }
}

impl Optimizer for SgdOptimizer {
    type State<const D: usize> = SgdState<D>;

    fn step<const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<D>,
        mut grad: Tensor<D>,
        state: Option<Self::State<D>>,
    ) -> (Tensor<D>, Option<Self::State<D>>) {
        if self.weight_decay > 0.0 {
            grad = tensor.clone().mul_scalar(self.weight_decay).add(grad);
        }
        let mut velocity = None;
        if self.momentum > 0.0 {
            let v = match state.and_then(|s| s.velocity) {
                Some(v) => grad.clone().add(v.mul_scalar(self.momentum)),
                None => grad.clone(),
            };
            grad = if self.nesterov {
                v.clone().mul_scalar(self.momentum).add(grad)
            } else {
                v.clone()
            };
            velocity = Some(v);
        }
        let delta = grad.mul_scalar(lr);
        (tensor - delta, Some(SgdState { velocity }))
    }

    fn to_device<const D: usize>(state: Self::State<D>, device: &Device) -> Self::State<D> {
        SgdState {
            velocity: state.velocity.map(|v| v.to_device(device)),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use burn::optim::momentum::{MomentumConfig, MomentumState};
    use burn::optim::{SgdConfig, decay::WeightDecayConfig};
    use burn::tensor::TensorData;
    use ntk_numerics::backend::{self, Precision};

    const W: [f64; 4] = [0.3, -1.7, 2.25, 0.01];

    fn grad(step: usize) -> [f64; 4] {
        [0.5, -0.25, 1.0 / 3.0, 0.7].map(|g| g * (1.0 + 0.37 * step as f64))
    }

    /// Three steps of `opt` on `W` with [`grad`]'s gradients, on a tensor of `precision`.
    fn steps<O: Optimizer>(opt: &O, precision: Precision, nesterov_lr: f64) -> Vec<f64> {
        let compute = backend::select(Some("flex"), precision).unwrap();
        let dev = &compute.device;
        let t = |v: &[f64]| {
            Tensor::<1>::from_data(TensorData::new(v.to_vec(), [4]), (dev, compute.dtype()))
        };
        let mut w = t(&W);
        let mut state = None;
        for s in 0..3 {
            let g = t(&grad(s));
            (w, state) = opt.step(nesterov_lr, w, g, state);
        }
        w.try_into_vec_as::<f64>().unwrap()
    }

    /// The rule written out on f64 scalars, operation for operation.
    fn by_hand(mu: f64, nesterov: bool, wd: f64, lr: f64) -> Vec<f64> {
        (0..4)
            .map(|i| {
                let (mut w, mut v) = (W[i], None::<f64>);
                for s in 0..3 {
                    let mut g = w * wd + grad(s)[i];
                    let vel = v.map_or(g, |v| g + v * mu);
                    g = if nesterov { vel * mu + g } else { vel };
                    v = Some(vel);
                    w -= g * lr;
                }
                w
            })
            .collect()
    }

    /// In f64 the coefficients are the config's, not rounded to f32 as Burn's `Sgd` keeps them
    /// (twenty-eighth hostile round, D1): 0.9 and 0.01 are not f32 numbers.
    #[test]
    fn f64_steps_use_the_configs_coefficients() {
        for nesterov in [false, true] {
            let opt = SgdOptimizer {
                momentum: 0.9,
                nesterov,
                weight_decay: 0.01,
            };
            let got = steps(&opt, Precision::F64, 0.05);
            let want = by_hand(0.9, nesterov, 0.01, 0.05);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-15 * w.abs(), "{got:?} vs {want:?}");
            }
            let rounded = by_hand(0.9f32 as f64, nesterov, 0.01f32 as f64, 0.05);
            assert!(got.iter().zip(&rounded).any(|(g, r)| (g - r).abs() > 1e-12));
        }
    }

    /// In f32 a step is Burn's `Sgd` bit for bit (the coefficients rounded to f32 where they
    /// are applied, as Burn rounds them when it is built).
    #[test]
    fn f32_steps_are_burns_bit_for_bit() {
        for nesterov in [false, true] {
            let ours = SgdOptimizer {
                momentum: 0.9,
                nesterov,
                weight_decay: 0.01,
            };
            let burns = SgdConfig::new()
                .with_momentum(Some(
                    MomentumConfig::new()
                        .with_momentum(0.9)
                        .with_dampening(0.0)
                        .with_nesterov(nesterov),
                ))
                .with_weight_decay(Some(WeightDecayConfig::new(0.01)))
                .build();
            let (a, b) = (
                steps(&ours, Precision::F32, 0.05),
                steps(&burns, Precision::F32, 0.05),
            );
            assert_eq!(a, b);
        }
    }

    /// The state is written under Burn's names and read back from Burn's: checkpoints of the
    /// Burn engine made before this optimizer resume with it, and the other way round.
    #[test]
    fn the_state_records_as_burns_sgd_state() {
        let compute = backend::select(Some("flex"), Precision::F64).unwrap();
        let dev = &compute.device;
        let v = Tensor::<1>::from_data(TensorData::new(W.to_vec(), [4]), (dev, compute.dtype()));
        let names = |sink: StateSink| -> Vec<(String, Vec<f64>)> {
            sink.tensors
                .into_iter()
                .map(|(n, d)| (n, d.try_to_vec::<f64>().unwrap()))
                .collect()
        };
        let mut burns = StateSink::default();
        burn::optim::SgdState::new(Some(MomentumState::new(v.clone())))
            .state_flatten("7", &mut burns);
        let mut ours = StateSink::default();
        SgdState {
            velocity: Some(v.clone()),
        }
        .state_flatten("7", &mut ours);
        let (burns, ours) = (names(burns), names(ours));
        assert_eq!(ours, burns);
        assert_eq!(ours[0].0, "7.momentum.velocity");

        let mut src = StateSource::default();
        src.insert_tensor(ours[0].0.clone(), TensorData::new(ours[0].1.clone(), [4]));
        let back = SgdState::<1>::state_unflatten("7", &mut src, dev).unwrap();
        let back = back.velocity.unwrap();
        assert_eq!(back.dtype(), compute.dtype());
        assert_eq!(back.try_into_vec_as::<f64>().unwrap(), W);
        // No momentum yet: nothing recorded, nothing read.
        let mut empty = StateSink::default();
        SgdState::<1> { velocity: None }.state_flatten("7", &mut empty);
        assert!(empty.tensors.is_empty());
        let none = SgdState::<1>::state_unflatten("7", &mut StateSource::default(), dev);
        assert!(none.unwrap().velocity.is_none());
    }
}
