//! Sizes of the networks for memory estimates (`ntk_core::budget`): parameter and
//! activation counts, known from the config before anything is built.

/// Parameters of an MLP: the weights (and biases) of its layers `[d, m, ..., m, k]`.
pub fn mlp_params(m: &crate::MlpConfig) -> f64 {
    let sizes = m.layer_sizes();
    sizes
        .windows(2)
        .map(|w| w[0] as f64 * w[1] as f64 + if m.bias { w[1] as f64 } else { 0.0 })
        .sum()
}

/// Parameters of a CIFAR ResNet, roughly: its 3x3 convolutions (two per block) and the
/// classifier.
pub fn resnet_params(r: &crate::ResNetConfig) -> f64 {
    let blocks = r.blocks_per_stage() as f64;
    let stem = 9.0 * r.in_channels as f64 * r.base_width as f64;
    let stages: f64 = (0..3)
        .map(|s| 2.0 * blocks * 9.0 * (r.stage_width(s) as f64).powi(2))
        .sum();
    stem + stages + r.feature_width() as f64 * r.num_classes as f64
}

/// Activation values a CIFAR ResNet keeps per sample for its backward pass, roughly: four
/// tensors (input, convolution, normalization, activation) per convolution, each of the
/// stage's channels times its resolution.
pub fn resnet_activations(r: &crate::ResNetConfig) -> f64 {
    let blocks = r.blocks_per_stage() as f64;
    let pixels = (r.image_size as f64).powi(2);
    (0..3)
        .map(|s| 4.0 * 2.0 * blocks * r.stage_width(s) as f64 * pixels / 4f64.powi(s as i32))
        .sum()
}
