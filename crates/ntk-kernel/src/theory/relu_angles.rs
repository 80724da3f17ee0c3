//! The infinite-width NTK of a ReLU network formed from each pair's angle: the recursion
//! takes every layer's angle from a cosine, which near 1 holds few of its digits
//! (`arccos(1 - e) ~ sqrt(2 e)`), at nearly parallel inputs and at depth (where every pair's
//! embedding angle becomes small), and a ReLU network's kernel moves linearly with the angle
//! (`1 - cos phi ~ L theta / (2 pi)`, Thm 4.5): its kappa lost up to 3e-3 at rows 1e-5 degrees
//! apart, and 0.7% between the same rows scaled by 1e-150 and 1e150 (forty-seventh hostile
//! round, D2).

use std::f64::consts::PI;

use ntk_data::inputs::Inputs;
use ntk_model::Activation;
use ntk_numerics::kernel::Kernel;

use super::on_inputs::{input_angle, norm, pairs, pow2_scaled};
use super::relu::{next_angle, one_minus_cos};

/// Pairs of rows less than this many radians apart take their angle from the rows
/// ([`input_angle`]); beyond it the arccos of their unit rows' cosine, which holds the angle
/// to about an ulp over `sin theta` (1e-14 of the angle at the limit).
pub const NEAR_PARALLEL: f64 = 0.1;

/// The slope `k` of a positively homogeneous activation's angle recursion, or `None` for
/// another: with `s(z) = a z + b |z|` (`a = (1 + alpha) / 2`, `b = (1 - alpha) / 2`; ReLU
/// `alpha = 0`) and the paper convention's `c = 1 / E[s(Z)^2] = 2 / (1 + alpha^2)`, unit
/// inputs at angle `theta` give `1 - cos theta' = (1 - cos theta) - k (sin theta - theta cos
/// theta)` and `Sigma_dot = 1 - k theta`, `k = 2 c b^2 / pi = (1 - alpha)^2 / ((1 + alpha^2)
/// pi)` (from `E[u v] = cos theta`, `E|u||v| = (2 / pi)(sin theta + (pi / 2 - theta) cos
/// theta)`, `E[sign u sign v] = 1 - 2 theta / pi`); ReLU's `k = 1 / pi` (Eq. 7-9).
/// Forty-eighth hostile round, D1: leaky ReLU's kernel kept the cosines' error.
pub fn slope(act: &Activation) -> Option<f64> {
    match act {
        Activation::Relu(_) => Some(1.0 / PI),
        Activation::LeakyRelu(l) => {
            let a = l.alpha;
            Some((1.0 - a) * (1.0 - a) / ((1.0 + a * a) * PI))
        }
        _ => None,
    }
}

/// `1 - cos phi_L` of a depth-`depth` network of slope `k` ([`slope`]) at input angle
/// `theta_in` (ReLU: Thm 4.4), in O(L): `D_L / (L + 1)`, where `D_l = (l + 1) - Theta_l` of
/// unit inputs, `D_0 = 1 - cos theta_0` and `D_l = D_{l-1} + (1 - cos theta_l) + Theta_{l-1}
/// k theta_{l-1}` (from `Theta_l = Theta_{l-1} (1 - k theta_{l-1}) + cos theta_l`): a sum of
/// terms >= 0 for `k theta <= 1`, so it keeps its digits at small angles, as
/// [`super::relu_grad_angle`] (O(L^2)) does.
pub fn one_minus_cos_phi(theta_in: f64, depth: usize, k: f64) -> f64 {
    let mut theta = theta_in;
    let mut deficit = one_minus_cos(theta);
    for l in 1..=depth {
        let previous = l as f64 - deficit;
        let next = next_angle(theta, k);
        deficit += one_minus_cos(next) + previous * k * theta;
        theta = next;
    }
    deficit / (depth as f64 + 1.0)
}

/// `cos phi_L` of every pair `i < j` of the row-major `n x d` rows `x` (row-major order of the
/// upper triangle), from the pair's angle: the rows' own ([`input_angle`]) within
/// [`NEAR_PARALLEL`], else the arccos of the unit rows' cosine; then the angle recursion
/// ([`one_minus_cos_phi`] of slope `k`), which keeps its digits where the embedding angles become
/// small (every pair's, with depth: ReLU's `theta_l ~ 3 pi / l`). NaN for a pair with a row of zeros
/// or of values that are not finite. On all cores from a million pairs.
fn cos_phi_of_pairs(
    x: &[f64],
    units: &[f64],
    (n, d): (usize, usize),
    depth: usize,
    k: f64,
) -> Vec<f64> {
    let unit = |i: usize| &units[i * d..(i + 1) * d];
    let row = |i: usize| &x[i * d..(i + 1) * d];
    let cos_limit = NEAR_PARALLEL.cos();
    let pairs: Vec<(usize, usize)> = pairs(n).collect();
    let threads = if pairs.len() < 1_000_000 {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |p| p.get())
    };
    super::ntk::par_map(&pairs, threads, |&(i, j)| {
        let c: f64 = unit(i).iter().zip(unit(j)).map(|(a, b)| a * b).sum();
        let theta = if c > cos_limit {
            input_angle(row(i), row(j))
        } else {
            c.clamp(-1.0, 1.0).acos()
        };
        if theta.is_finite() && unit(i).iter().any(|v| *v != 0.0) {
            1.0 - one_minus_cos_phi(theta, depth, k)
        } else {
            f64::NAN
        }
    })
}

/// Re-forms every off-diagonal entry of the infinite-width NTK `k` of a network of the
/// positively homogeneous activation `act` (ReLU, leaky ReLU: [`slope`]; others are left as
/// they are) on the row-major `n x d` inputs `x` from the pair's angle: the kernel is
/// positively homogeneous (any convention, any input norms), so `K_ij = sqrt(K_ii) sqrt(K_jj)
/// cos phi_L(theta_ij)` ([`cos_phi_of_pairs`]). The recursion takes each layer's angle from a
/// cosine, which near 1 holds few of its digits. A pair with a row of zeros keeps the
/// recursion's entry.
pub fn reform_from_angles(
    k: &mut Kernel,
    x: &[f64],
    (n, d): (usize, usize),
    depth: usize,
    act: &Activation,
) {
    let Some(slope) = slope(act) else {
        return;
    };
    let (units, _) = unit_rows(x, n, d);
    let cos_phi = cos_phi_of_pairs(x, &units, (n, d), depth, slope);
    for ((i, j), c) in pairs(n).zip(cos_phi) {
        let scale = k.get(i, i).sqrt() * k.get(j, j).sqrt();
        if c.is_finite() && scale.is_finite() {
            k.data[i * n + j] = scale * c;
            k.data[j * n + i] = scale * c;
        }
    }
}

/// The paper-convention NTK of a depth-`depth` network of `act` on `inputs` over the largest
/// squared input norm (kappa is free of a global factor): for ReLU and leaky ReLU
/// ([`slope`]) `(L + 1) r_i r_j cos phi_L(theta_ij)` (`r_i = ||x_i|| / max_k ||x_k||`,
/// [`cos_phi_of_pairs`]), so that inputs of norm 1e-150 or 1e150 lose no digits to a Gram
/// matrix's range. Another activation, or inputs with a row of zeros or of values that are
/// not finite, take the recursion on the rows as given ([`super::infinite_width_ntk`]).
pub fn ntk_over_max_norm(inputs: &Inputs, act: &Activation, depth: usize) -> Kernel {
    let (n, d, x) = (inputs.n, inputs.d, &inputs.x);
    let (units, norms) = unit_rows(x, n, d);
    let Some(slope) = slope(act).filter(|_| norms.iter().all(|v| *v > 0.0 && v.is_finite())) else {
        return super::infinite_width_ntk(x, n, d, act, depth);
    };
    let top = norms.iter().copied().fold(0.0, f64::max);
    let r: Vec<f64> = norms.iter().map(|v| v / top).collect();
    let top_entry = depth as f64 + 1.0;
    let mut k = Kernel::zeros(n);
    for (i, ri) in r.iter().enumerate() {
        k.data[i * n + i] = top_entry * ri * ri;
    }
    let cos_phi = cos_phi_of_pairs(x, &units, (n, d), depth, slope);
    for ((i, j), c) in pairs(n).zip(cos_phi) {
        let v = top_entry * r[i] * r[j] * c;
        k.data[i * n + j] = v;
        k.data[j * n + i] = v;
    }
    k
}

/// The rows of the row-major `n x d` inputs `x` scaled to unit norm, and their norms, each
/// through a power of two first (no square under- or overflows): a row of zeros stays zeros,
/// of norm 0; a row with a value that is not finite has norm NaN (and a unit row of zeros or
/// NaN).
pub fn unit_rows(x: &[f64], n: usize, d: usize) -> (Vec<f64>, Vec<f64>) {
    let mut units = Vec::with_capacity(n * d);
    let mut norms = Vec::with_capacity(n);
    for i in 0..n {
        let v = &x[i * d..(i + 1) * d];
        match pow2_scaled(v) {
            Some((s, e)) => {
                let unit_norm = s.iter().map(|a| a * a).sum::<f64>().sqrt();
                units.extend(s.iter().map(|a| a / unit_norm));
                norms.push(libm::scalbn(unit_norm, e));
            }
            None => {
                units.extend(std::iter::repeat_n(0.0, d));
                norms.push(norm(v));
            }
        }
    }
    (units, norms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::{infinite_width_ntk, relu, relu_grad_angle};
    use ntk_numerics::spectrum;

    fn inputs(x: &[f64], n: usize, d: usize) -> Inputs {
        Inputs {
            x: x.to_vec(),
            n,
            d,
            labels: vec![0; n],
            description: "test".into(),
        }
    }

    fn kappa(k: &Kernel) -> f64 {
        spectrum::spectrum(k, f64::EPSILON).unwrap().kappa
    }

    /// The O(L) deficit equals Thm 4.4's O(L^2) sum ([`relu_grad_angle`]) to rounding.
    #[test]
    fn the_deficit_is_thm_4_4() {
        for t in [1e-12, 1e-7, 1e-3, 0.1, 1.0, 2.0, 3.1] {
            for depth in [0, 1, 5, 50, 1000] {
                let got = relu::angle_from_one_minus_cos(one_minus_cos_phi(t, depth, 1.0 / PI));
                let want = relu_grad_angle(t, depth);
                assert!(
                    (got - want).abs() <= 1e-13 * want,
                    "{t} {depth}: {got} vs {want}"
                );
            }
        }
    }

    /// Two rows `theta` apart: the 2 x 2 kernel `(L + 1) [[1, c], [c, 1]]` has kappa
    /// `(1 + c) / (1 - c) = cot^2(phi / 2)`, formed here from Thm 4.4's angle without the
    /// matrix; the kernel's kappa agrees to 1e-7 at 1e-5 and 1e-3 degrees, depths 7 and
    /// 10,000 (the recursion on the cosine was 2.8e-3 and 2e-4 off), and the same rows
    /// scaled by 1e-150 and 1e150 give the same kappa (they were 0.7% apart).
    #[test]
    fn nearly_parallel_rows_keep_kappa() {
        for deg in [1e-5f64, 1e-3] {
            let t = deg.to_radians();
            let x = [1.0, 0.0, 0.0, t.cos(), t.sin(), 0.0];
            let theta = input_angle(&x[0..3], &x[3..6]);
            for depth in [7, 10_000] {
                let phi = relu_grad_angle(theta, depth);
                let want = (1.0 / (0.5 * phi).tan()).powi(2);
                let relu_act = Activation::Relu(ntk_model::activation::Relu);
                let got = kappa(&ntk_over_max_norm(&inputs(&x, 2, 3), &relu_act, depth));
                assert!(
                    (got / want - 1.0).abs() < 1e-7,
                    "{deg} deg, depth {depth}: {got} vs {want}"
                );
                // `probe.method = "theory"`'s route: the recursion's kernel, re-formed.
                let mut k = infinite_width_ntk(&x, 2, 3, &relu_act, depth);
                reform_from_angles(&mut k, &x, (2, 3), depth, &relu_act);
                let run = kappa(&k);
                assert!((run / want - 1.0).abs() < 1e-7, "run: {run} vs {want}");
                for s in [1e-150, 1e150] {
                    let scaled: Vec<f64> = x.iter().map(|v| v * s).collect();
                    let k = kappa(&ntk_over_max_norm(&inputs(&scaled, 2, 3), &relu_act, depth));
                    assert!((k / got - 1.0).abs() < 1e-9, "{s}: {k} vs {got}");
                }
            }
        }
    }

    /// Rows of unequal norms, some pairs within [`NEAR_PARALLEL`] (3 and 0.5 degrees): the
    /// kernel over the largest squared norm equals the recursion on the rows as given to
    /// 1e-12 (at depths where the cosines still hold the angles), and `reform_from_angles` on
    /// the recursion's kernel moves no entry beyond that: for ReLU and for leaky ReLU at
    /// alpha 0.01, 0.3 and -0.5, whose slope `k` ([`slope`]) is derived here and checked
    /// against the recursion's own dual kernel (forty-eighth hostile round, D1); leaky ReLU at
    /// alpha 0 is ReLU to rounding.
    #[test]
    fn where_the_cosines_hold_the_recursion_stands() {
        let (n, d) = (5, 3);
        let x = [
            1.0, 0.2, -0.3, //
            2.0, 0.5, -0.55, // about 3 degrees from the first, twice its norm
            -0.4, 1.1, 0.7, //
            -0.41, 1.1, 0.71, // about 0.5 degrees from the third
            0.3, -0.2, 1.5,
        ];
        let leaky = |alpha: f64| Activation::LeakyRelu(ntk_model::activation::LeakyRelu { alpha });
        let acts = [
            Activation::Relu(ntk_model::activation::Relu),
            leaky(0.01),
            leaky(0.3),
            leaky(-0.5),
        ];
        for act in &acts {
            for depth in [1, 4, 20] {
                let want = infinite_width_ntk(&x, n, d, act, depth);
                let top = (0..n).map(|i| want.get(i, i)).fold(0.0, f64::max) / (depth as f64 + 1.0);
                let got = ntk_over_max_norm(&inputs(&x, n, d), act, depth);
                let mut refined = want.clone();
                reform_from_angles(&mut refined, &x, (n, d), depth, act);
                for i in 0..n {
                    for j in 0..n {
                        let w = want.get(i, j);
                        let scale = want.get(i, i).max(want.get(j, j));
                        let at = format!("{act} depth {depth} ({i}, {j})");
                        assert!((got.get(i, j) * top - w).abs() <= 1e-12 * scale, "{at}");
                        assert!((refined.get(i, j) - w).abs() <= 1e-12 * scale, "{at}");
                    }
                }
            }
        }
        let relu = ntk_over_max_norm(&inputs(&x, n, d), &acts[0], 10);
        let alpha0 = ntk_over_max_norm(&inputs(&x, n, d), &leaky(0.0), 10);
        assert!(relu.relative_error(&alpha0) < 1e-14);
    }
}
