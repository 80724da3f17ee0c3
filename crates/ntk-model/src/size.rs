//! Sizes of the networks for memory estimates (`ntk_runs::budget`): parameter and
//! activation counts, known from the config before anything is built.

/// Parameters of an MLP: the weights (and biases) of its layers `[d, m, ..., m, k]`, in
/// closed form (no per-layer list: an estimate must not allocate for a depth that
/// validation will reject): the first layer `d m`, `L - 1` layers `m m`, the readout `m k`
/// (for `L = 0`, `d k`), plus `L m + k` biases.
pub fn mlp_params(m: &crate::MlpConfig) -> f64 {
    let (d, w, k, depth) = (
        m.input_dim as f64,
        m.width as f64,
        m.output_dim as f64,
        m.depth as f64,
    );
    let weights = if m.depth == 0 {
        d * k
    } else {
        d * w + (depth - 1.0) * w * w + w * k
    };
    let biases = if m.bias { depth * w + k } else { 0.0 };
    weights + biases
}

/// Parameters of a CIFAR ResNet, within its normalization's per-channel scales: the stem's
/// 3x3 convolution, two per block (a stage's first takes the previous stage's width), and
/// the classifier's weights and biases. (Counting every block at its own width squared, as
/// this did before the fifty-fifth hostile round, put ResNet-8's 74k parameters at 97k.)
pub fn resnet_params(r: &crate::ResNetConfig) -> f64 {
    let blocks = r.blocks_per_stage() as f64;
    let stem = 9.0 * r.in_channels as f64 * r.base_width as f64;
    let stages: f64 = (0..3)
        .map(|s| {
            let w = r.stage_width(s) as f64;
            let entering = r.stage_width(s.saturating_sub(1)) as f64;
            if blocks == 0.0 {
                0.0
            } else {
                9.0 * entering * w + 9.0 * w * w + (blocks - 1.0) * 2.0 * 9.0 * w * w
            }
        })
        .sum();
    stem + stages + (r.feature_width() as f64 + 1.0) * r.num_classes as f64
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed form against the sum over the layer list, and a depth whose list could
    /// not be allocated (found by fuzzing `ntk-probe` configs).
    #[test]
    fn mlp_params_is_the_sum_over_layers() {
        for (depth, bias) in [(0, true), (1, false), (1, true), (4, true), (7, false)] {
            let mut m = crate::MlpConfig::new(6, 5, depth, crate::ActivationKind::Relu);
            m.bias = bias;
            m.output_dim = 3;
            let sum: f64 = m
                .layer_sizes()
                .windows(2)
                .map(|w| (w[0] * w[1] + if bias { w[1] } else { 0 }) as f64)
                .sum();
            assert_eq!(mlp_params(&m), sum, "depth {depth}, bias {bias}");
        }
        let mut m = crate::MlpConfig::new(784, 512, 1, crate::ActivationKind::Relu);
        m.depth = 88_888_888_810;
        assert!(mlp_params(&m).is_finite());
    }
}
