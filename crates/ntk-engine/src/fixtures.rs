//! Small fixtures that the engine's tests and its callers' tests share (ntk-train's
//! checkpoint round trip): two tiny networks, a fixed batch, a network's parameters
//! flattened, and two steppers held to the same steps bit for bit. Not part of the API.

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::Tensor;
use ntk_model::{
    ActivationKind, MlpConfig, Net, NetSpec, Normalization, ResNetConfig, ResNetVariant,
};

use crate::{Batch, StepResult, Stepper};

/// Inputs of the fixtures' networks and batches.
pub const D: usize = 16;
/// Their classes.
pub const K: usize = 3;

/// An MLP of `D` inputs, two hidden layers of 8, `K` outputs.
pub fn mlp(activation: ActivationKind, normalization: Normalization) -> NetSpec {
    NetSpec::Mlp(MlpConfig {
        output_dim: K,
        seed: 5,
        normalization,
        ..MlpConfig::new(D, 8, 2, activation)
    })
}

/// A ResNet-8 on 1 x 4 x 4 images (`D` inputs), two channels wide.
pub fn resnet() -> NetSpec {
    NetSpec::ResNet(
        ResNetConfig::new(8, ResNetVariant::BatchNorm)
            .with_base_width(2)
            .with_image_size(4)
            .with_in_channels(1)
            .with_num_classes(K),
    )
}

/// A batch of 5 rows of fixed pseudo-random values, different for each `step`.
pub fn batch(step: usize) -> Batch {
    let b = 5;
    let x = (0..b * D)
        .map(|i| ((i * 37 + step * 101) % 113) as f64 / 56.5 - 1.0)
        .collect();
    let labels = (0..b).map(|i| (i * 7 + step) % K).collect();
    Batch { x, d: D, labels }
}

/// Every parameter of `model`, flattened.
pub fn params(model: &Net) -> Vec<f64> {
    struct Collect<'a>(&'a mut Vec<f64>);
    impl ModuleVisitor for Collect<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0.extend(param.val().try_into_vec_as::<f64>().unwrap());
        }
    }
    let mut out = Vec::new();
    model.visit(&mut Collect(&mut out));
    out
}

/// Steps `a` and `b` on the batches of steps 2 and 3 and asserts that their losses, hits and
/// parameters agree bit for bit (`what` names the case in a failure).
pub fn assert_same_steps(a: &mut dyn Stepper, b: &mut dyn Stepper, what: &str) {
    for i in 2..4 {
        let (ra, rb) = (a.step(batch(i), 0.05), b.step(batch(i), 0.05));
        let bits = |r: Option<StepResult>| r.map(|r| (r.loss_sum.to_bits(), r.correct));
        assert_eq!(bits(ra), bits(rb), "{what} step {i}");
    }
    a.sync();
    b.sync();
    assert_eq!(params(&a.valid()), params(&b.valid()), "{what}");
}
