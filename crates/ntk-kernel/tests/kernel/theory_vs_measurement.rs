//! Finite networks against the infinite-width theory.

use crate::common::*;
use ntk_kernel::angles;
use ntk_kernel::{structured, theory};
use ntk_model::{ActivationKind, MlpConfig};
use ntk_numerics::backend::Precision;
use ntk_numerics::kernel::{Kernel, OutputMode};
use ntk_numerics::spectrum::spectrum;

/// Two unit inputs at angle theta in R^d.
fn pair(theta_deg: f64, d: usize) -> Vec<f64> {
    let t = theta_deg.to_radians();
    let mut x = vec![0.0; 2 * d];
    x[0] = 1.0;
    x[d] = t.cos();
    x[d + 1] = t.sin();
    x
}

/// Thm 4.4 at width 4096. The measured angle over independent seeds has a mean that
/// differs from the theory by O(L / m) (finite-width bias) and a spread that shrinks like
/// 1/sqrt(m); the tolerance is 4 standard errors of the mean over the seeds plus the bias
/// allowance L/m radians.
#[test]
fn gradient_angle_at_width_4096_matches_thm_4_4() {
    let (d, m, seeds) = (4, 4096, 6);
    for (theta, depth) in [(60.0, 1), (60.0, 3), (5.0, 2)] {
        let x = pair(theta, d);
        let c = compute(Precision::F64);
        let phis: Vec<f64> = (0..seeds)
            .map(|s| {
                let cfg = MlpConfig::new(d, m, depth, ActivationKind::Relu).with_seed(100 + s);
                let k = structured::ntk(&mlp(&cfg, &c), tensor(&x, 2, d, &c), OutputMode::Sum);
                angles::angle_deg(&k, 0, 1)
            })
            .collect();
        let mean = phis.iter().sum::<f64>() / seeds as f64;
        let var = phis.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / (seeds as f64 - 1.0);
        let sem = (var / seeds as f64).sqrt();
        let expected = theory::relu_grad_angle(theta.to_radians(), depth).to_degrees();
        let tol = 4.0 * sem + (depth as f64 / m as f64).to_degrees();
        assert!(
            (mean - expected).abs() < tol,
            "theta {theta} L {depth}: measured {mean:.4} +- {sem:.4}, theory {expected:.4}"
        );
        // And the spread itself is of the 1/sqrt(m) size (not a silently broken kernel).
        assert!(var.sqrt() < 2.0, "spread {}", var.sqrt());
    }
}

/// The linear network's NTK is (L+1) G at infinite width. With n <= d, G is invertible and
/// Weyl's inequality bounds the eigenvalues of K/(L+1) within e = ||K/(L+1) - G||_F of
/// G's, so kappa(K) lies in [(l_max - e)/(l_min + e), (l_max + e)/(l_min - e)]; e itself
/// shrinks like sqrt(L/m).
#[test]
fn linear_network_kernel_is_proportional_to_the_gram_matrix() {
    // Four inputs in R^8 with a well-conditioned Gram matrix diag(s^2) + J / 4 (kappa ~ 7),
    // so the Weyl interval stays meaningful at this width.
    let (n, d, m, depth) = (4, 8, 4096, 2);
    let mut x = vec![0.0; n * d];
    for i in 0..n {
        x[i * d + i] = 1.0 + 0.5 * i as f64;
        x[i * d + d - 1] = 0.5;
    }
    let c = compute(Precision::F64);
    let cfg = MlpConfig::new(d, m, depth, ActivationKind::Linear).with_seed(2);
    let k = structured::ntk(&mlp(&cfg, &c), tensor(&x, n, d, &c), OutputMode::Sum);
    let g = Kernel::gram(&x, n, d);
    let scaled: Vec<f64> = k.data.iter().map(|v| v / (depth as f64 + 1.0)).collect();
    let e = scaled
        .iter()
        .zip(&g.data)
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f64>()
        .sqrt();
    let gnorm = g.data.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(
        e / gnorm < 6.0 * ((depth as f64 + 1.0) / m as f64).sqrt(),
        "e/||G|| = {}",
        e / gnorm
    );
    let sg = spectrum(&g, f64::EPSILON).unwrap();
    let sk = spectrum(&k, f64::EPSILON).unwrap();
    let lo = (sg.lambda_max - e) / (sg.lambda_min + e);
    let hi = (sg.lambda_max + e) / (sg.lambda_min - e);
    assert!(
        sk.kappa >= lo && sk.kappa <= hi,
        "kappa {} not in [{lo}, {hi}]",
        sk.kappa
    );
    assert!(!sk.singular && sk.rank == n);
}

#[test]
fn linear_network_on_more_points_than_dimensions_is_singular() {
    let (n, d, m, depth) = (40, 5, 256, 3);
    let x = gaussian_inputs(n, d, 6);
    for p in [Precision::F64, Precision::F32] {
        let c = compute(p);
        let cfg = MlpConfig::new(d, m, depth, ActivationKind::Linear).with_seed(4);
        let k = structured::ntk(&mlp(&cfg, &c), tensor(&x, n, d, &c), OutputMode::Sum);
        let s = spectrum(&k, p.epsilon()).unwrap();
        assert!(
            s.singular,
            "{p}: lambda_min {} tolerance {}",
            s.lambda_min, s.tolerance
        );
        assert!(s.kappa.is_infinite());
        assert_eq!(s.rank, d, "{p}: rank");
        // ReLU separates the same points: full rank, finite kappa.
        let relu = MlpConfig::new(d, m, depth, ActivationKind::Relu).with_seed(4);
        let k = structured::ntk(&mlp(&relu, &c), tensor(&x, n, d, &c), OutputMode::Sum);
        let s = spectrum(&k, p.epsilon()).unwrap();
        assert!(
            !s.singular && s.kappa.is_finite() && s.rank == n,
            "{p}: relu {s:?}"
        );
    }
    // The input Gram matrix (depth 0) is flagged the same way.
    let s = spectrum(&Kernel::gram(&x, n, d), f64::EPSILON).unwrap();
    assert!(s.singular && s.rank == d);
}
