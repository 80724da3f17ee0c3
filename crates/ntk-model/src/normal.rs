//! The standard normal distribution and expectations under it.
//!
//! `E[f(Z)]`, `Z ~ N(0, 1)`, is computed by composite Gauss-Legendre quadrature of
//! `f(z) phi(z)` on `[-Z_MAX, Z_MAX]`, split at the kinks of `f` so that every panel
//! integrates a smooth function (the kink of ReLU or NormReLU would otherwise cost
//! Gauss-Hermite its spectral accuracy). The tail mass beyond `Z_MAX = 12` is below
//! `1e-32`, far under f64 resolution.

use std::f64::consts::{FRAC_1_SQRT_2, PI};
use std::sync::OnceLock;

/// `phi(z) = exp(-z^2/2) / sqrt(2 pi)`, the standard normal density.
pub fn pdf(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * PI).sqrt()
}

/// `Phi(z) = (1 + erf(z / sqrt 2)) / 2`, the standard normal distribution function.
pub fn cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z * FRAC_1_SQRT_2)
}

/// Half-width of the integration window.
pub const Z_MAX: f64 = 12.0;
/// Largest panel width; with 24 nodes a panel integrates `exp(-z^2/2)` times a polynomial
/// or an analytic function to machine precision.
const PANEL: f64 = 0.5;
const ORDER: usize = 24;

/// Gauss-Legendre nodes and weights on `[-1, 1]` (Newton on the Legendre recurrence).
pub fn gauss_legendre(order: usize) -> (Vec<f64>, Vec<f64>) {
    let mut nodes = vec![0.0; order];
    let mut weights = vec![0.0; order];
    let n = order as f64;
    for i in 0..order.div_ceil(2) {
        // Tricomi's initial guess for the i-th root.
        let mut x = (PI * (i as f64 + 0.75) / (n + 0.5)).cos();
        let mut dp = 0.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=order {
                let k = k as f64;
                let p2 = ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k;
                p0 = p1;
                p1 = p2;
            }
            // p1 = P_n(x), p0 = P_{n-1}(x); P_n'(x) = n (x P_n - P_{n-1}) / (x^2 - 1).
            dp = n * (x * p1 - p0) / (x * x - 1.0);
            let dx = p1 / dp;
            x -= dx;
            if dx.abs() < 1e-16 {
                break;
            }
        }
        let w = 2.0 / ((1.0 - x * x) * dp * dp);
        nodes[i] = -x;
        nodes[order - 1 - i] = x;
        weights[i] = w;
        weights[order - 1 - i] = w;
    }
    (nodes, weights)
}

fn rule() -> &'static (Vec<f64>, Vec<f64>) {
    static RULE: OnceLock<(Vec<f64>, Vec<f64>)> = OnceLock::new();
    RULE.get_or_init(|| gauss_legendre(ORDER))
}

/// `int_a^b g(z) dz` by composite Gauss-Legendre with panels no wider than `PANEL`.
pub fn integrate(g: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    if b <= a {
        return 0.0;
    }
    let (nodes, weights) = rule();
    let panels = ((b - a) / PANEL).ceil().max(1.0) as usize;
    let h = (b - a) / panels as f64;
    let mut total = 0.0;
    for p in 0..panels {
        let mid = a + (p as f64 + 0.5) * h;
        let half = 0.5 * h;
        let s: f64 = nodes
            .iter()
            .zip(weights)
            .map(|(x, w)| w * g(mid + half * x))
            .sum();
        total += half * s;
    }
    total
}

/// `E[f(Z)]` for `Z ~ N(0,1)` where `f` is smooth except at the points in `kinks`.
pub fn expect(f: impl Fn(f64) -> f64, kinks: &[f64]) -> f64 {
    let mut cuts: Vec<f64> = kinks.iter().copied().filter(|k| k.abs() < Z_MAX).collect();
    cuts.sort_by(f64::total_cmp);
    let mut edges = vec![-Z_MAX];
    edges.extend(cuts);
    edges.push(Z_MAX);
    edges
        .windows(2)
        .map(|w| integrate(|z| f(z) * pdf(z), w[0], w[1]))
        .sum()
}

/// Probabilists' Gauss-Hermite rule (weight `exp(-z^2/2)/sqrt(2 pi)`), by Golub-Welsch-free
/// Newton iteration on the Hermite recurrence. An independent route to `E[f(Z)]` for smooth
/// `f`, used to cross-check [`expect`] and by the bivariate kernels of the theory module.
pub fn gauss_hermite(order: usize) -> (Vec<f64>, Vec<f64>) {
    // Physicists' nodes x_i with weights w_i for exp(-x^2); then z = sqrt(2) x and
    // weights w_i / sqrt(pi).
    let n = order;
    let mut x = vec![0.0; n];
    let mut w = vec![0.0; n];
    let nf = n as f64;
    let pim4 = PI.powf(-0.25);
    let mut z = 0.0f64;
    for i in 0..n.div_ceil(2) {
        z = match i {
            0 => (2.0 * nf + 1.0).sqrt() - 1.85575 * (2.0 * nf + 1.0).powf(-1.0 / 6.0),
            1 => z - 1.14 * nf.powf(0.426) / z,
            2 => 1.86 * z - 0.86 * x[0],
            3 => 1.91 * z - 0.91 * x[1],
            _ => 2.0 * z - x[i - 2],
        };
        let mut pp = 0.0;
        for _ in 0..200 {
            let (mut p1, mut p2) = (pim4, 0.0);
            for j in 0..n {
                let p3 = p2;
                p2 = p1;
                let jf = j as f64;
                p1 = z * (2.0 / (jf + 1.0)).sqrt() * p2 - (jf / (jf + 1.0)).sqrt() * p3;
            }
            pp = (2.0 * nf).sqrt() * p2;
            let z1 = z;
            z = z1 - p1 / pp;
            if (z - z1).abs() < 1e-15 {
                break;
            }
        }
        x[i] = z;
        x[n - 1 - i] = -z;
        w[i] = 2.0 / (pp * pp);
        w[n - 1 - i] = w[i];
    }
    let nodes = x.iter().map(|v| v * std::f64::consts::SQRT_2).collect();
    let weights = w.iter().map(|v| v / PI.sqrt()).collect();
    (nodes, weights)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_of_the_normal() {
        assert!((expect(|_| 1.0, &[]) - 1.0).abs() < 1e-14);
        assert!(expect(|z| z, &[]).abs() < 1e-14);
        assert!((expect(|z| z * z, &[]) - 1.0).abs() < 1e-13);
        assert!((expect(|z| z.powi(4), &[]) - 3.0).abs() < 1e-12);
        // E[max(Z,0)] = 1/sqrt(2 pi): the kink handled by the split.
        let relu_mean = expect(|z| z.max(0.0), &[0.0]);
        assert!((relu_mean - 1.0 / (2.0 * PI).sqrt()).abs() < 1e-14);
    }

    #[test]
    fn cdf_matches_tabulated_values() {
        assert!((cdf(0.0) - 0.5).abs() < 1e-16);
        assert!((cdf(1.0) - 0.841_344_746_068_542_9).abs() < 1e-15);
        assert!((cdf(-1.959_963_984_540_054) - 0.025).abs() < 1e-15);
    }

    #[test]
    fn hermite_rule_integrates_polynomials_exactly() {
        let (z, w) = gauss_hermite(40);
        let m = |p: i32| z.iter().zip(&w).map(|(z, w)| w * z.powi(p)).sum::<f64>();
        assert!((m(0) - 1.0).abs() < 1e-13);
        assert!((m(2) - 1.0).abs() < 1e-12);
        assert!((m(6) - 15.0).abs() < 1e-10);
        assert!(m(3).abs() < 1e-12);
    }
}
