//! The representations probe (Agarwal et al., Fig. 1): the mean cosine of every layer's
//! representations, checked against independent routes.
//!
//! - `mean_cosines` (one SYRK, then the norms) against the pairwise loop written out, with a
//!   zero row among the rows (its pairs count as cosine 0).
//! - A wide ReLU MLP at initialization (paper convention, no biases, width 4096) against the
//!   infinite-width theory: the cosine of a pair at layer `l` tends to `cos theta_l`, where
//!   `theta_l = g(theta_{l-1})` is Liu & Hui's embedding-angle recursion (Eq. 7-9,
//!   `ntk_kernel::theory::relu::relu_embedding_angles`). At width `m` a pair's cosine
//!   fluctuates by `O(1 / sqrt(m))` = 0.016; the mean over 28 pairs is allowed 0.02.
//! - A ResNet's layers are the stem, each block and the pooled features, in order.

use crate::common::cpu;
use ntk_data::inputs::Inputs;
use ntk_kernel::theory::relu::relu_embedding_angles;
use ntk_model::{ActivationKind, MlpConfig, Net, ResNet, ResNetConfig, ResNetVariant};
use ntk_train::track::{mean_cosines, representations};

fn gaussian_rows(n: usize, d: usize, seed: u64) -> Vec<f64> {
    ntk_model::init::gaussian(seed, 0, n, d, 1.0)
}

fn inputs(x: Vec<f64>, n: usize, d: usize) -> Inputs {
    Inputs {
        x,
        n,
        d,
        labels: vec![0; n],
        description: String::new(),
        source_rows: None,
    }
}

#[test]
fn mean_cosines_equals_the_pairwise_loop() {
    let _serial = crate::common::serial();
    let (n, d) = (9, 13);
    let mut h = gaussian_rows(n, d, 4);
    h[3 * d..4 * d].iter_mut().for_each(|v| *v = 0.0);
    let row = |i: usize| &h[i * d..(i + 1) * d];
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let (mut sum, mut abs, mut pairs) = (0.0, 0.0, 0.0);
    for i in 0..n {
        for j in i + 1..n {
            let norms = dot(row(i), row(i)).sqrt() * dot(row(j), row(j)).sqrt();
            let c = if norms > 0.0 {
                dot(row(i), row(j)) / norms
            } else {
                0.0
            };
            sum += c;
            abs += c.abs();
            pairs += 1.0;
        }
    }
    let (mean, mean_abs) = mean_cosines(&h, n);
    assert!((mean - sum / pairs).abs() < 1e-14, "{mean} {}", sum / pairs);
    assert!((mean_abs - abs / pairs).abs() < 1e-14);
    assert_eq!(mean_cosines(&h[..d], 1), (0.0, 0.0));
}

#[test]
fn wide_relu_layers_follow_the_embedding_angle_recursion() {
    let _serial = crate::common::serial();
    let (n, d, depth, width) = (8, 20, 4, 4096);
    let c = cpu();
    let x = gaussian_rows(n, d, 7);
    let cfg = MlpConfig::new(d, width, depth, ActivationKind::Relu);
    let net = Net::Mlp(ntk_model::Mlp::new(&cfg, &c.device, c.dtype()).unwrap());
    let rows = representations(&net, &inputs(x.clone(), n, d), &c, 0);
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["input", "hidden 1", "hidden 2", "hidden 3", "hidden 4"]
    );
    // The theory's mean over the same pairs.
    let row = |i: usize| &x[i * d..(i + 1) * d];
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
    let mut theory = vec![0.0; depth + 1];
    for i in 0..n {
        for j in i + 1..n {
            let cos = dot(row(i), row(j)) / (dot(row(i), row(i)) * dot(row(j), row(j))).sqrt();
            for (l, t) in relu_embedding_angles(cos.clamp(-1.0, 1.0).acos(), depth)
                .into_iter()
                .enumerate()
            {
                theory[l] += t.cos() / (n * (n - 1) / 2) as f64;
            }
        }
    }
    for (r, want) in rows.iter().zip(&theory) {
        println!(
            "{}: mean cosine {:.4} theory {want:.4}",
            r.name, r.mean_cosine
        );
        let tol = if r.layer == 0 { 1e-12 } else { 0.02 };
        assert!(
            (r.mean_cosine - want).abs() < tol,
            "{}: {} against {want}",
            r.name,
            r.mean_cosine
        );
    }
    // ReLU pulls random directions together layer by layer (theta_l falls with l).
    assert!(rows.windows(2).all(|w| w[1].mean_cosine > w[0].mean_cosine));
}

#[test]
fn a_resnets_layers_are_the_stem_each_block_and_the_pooled_features() {
    let _serial = crate::common::serial();
    let c = cpu();
    for variant in [ResNetVariant::BatchNorm, ResNetVariant::Fixup] {
        let cfg = ResNetConfig::example(8, variant)
            .with_base_width(2)
            .with_image_size(8)
            .with_in_channels(1)
            .with_num_classes(3);
        let net = Net::ResNet(ResNet::new(&cfg, &c.device, c.dtype()).unwrap());
        let n = 5;
        let rows = representations(&net, &inputs(gaussian_rows(n, 64, 2), n, 64), &c, 3);
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["input", "stem", "block 1", "block 2", "block 3", "pooled"],
            "{variant}"
        );
        assert!(rows.iter().all(|r| r.epoch == 3 && r.n == n));
        assert!(
            rows.iter()
                .all(|r| r.mean_abs_cosine >= r.mean_cosine.abs() - 1e-15
                    && r.mean_abs_cosine <= 1.0 + 1e-12)
        );
    }
}
