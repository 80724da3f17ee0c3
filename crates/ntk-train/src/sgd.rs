//! Burn's SGD as a run uses it: the optimizer a config asks for ([`optimizer`]), one step with
//! Fixup's scalars in their own group ([`sgd_step`]), and what a step reads off its tensors
//! ([`scalar`]). The host engines' SGD rule is `crate::host`'s.

use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::Tensor;
use ntk_model::Net;

use crate::config::OptimConfig;
use crate::model::Model;

/// The value of a one-element tensor.
pub(crate) fn scalar(t: Tensor<1>) -> f64 {
    t.try_into_vec_as::<f64>().expect("a scalar")[0]
}

/// Burn's SGD with the config's momentum, Nesterov and weight decay (PyTorch semantics,
/// dampening 0).
pub fn optimizer(o: &OptimConfig) -> ModuleOptimizer {
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
    o: &OptimConfig,
    lr: f64,
    model: Model,
    mut grads: GradientsParams,
) -> Model {
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
