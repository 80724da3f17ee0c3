//! ReLU²'s infinite-width kernels as a unit-variance recursion times each input's scale, so
//! that an input's norm is carried exactly through any depth.
//!
//! `s(z) = max(z, 0)^2` is positively homogeneous of degree 2: with `q_l(x) = Sigma_l(x, x)`
//! and `a_l = 3 k_l / 2` (1 for the paper's `c = 2/3`), its dual kernels give
//! `q_l = a_l q_{l-1}^2`, so `q_l(x) = K_l r_x^(2^l)` with `r_x = q_0(x) = s0 |x|^2` and
//! `K_l = a_l K_{l-1}^2`. Every term of `Theta_L = sum_l Sigma_l prod_{m > l} Sigma_dot_m`
//! then carries the same factor (`Sigma_dot_m` is of degree 1 in the variances), and
//!
//! `Theta_L(x, y) = K_L (r_x r_y)^(2^(L-1)) Theta^_L(rho_xy)`,
//! `Sigma_L(x, y) = K_L (r_x r_y)^(2^(L-1)) Sigma^_L(rho_xy)`,
//!
//! where `^` is the paper's recursion (`a_l = 1`) on unit variances at the inputs'
//! correlation `rho_xy`, whose variance stays exactly 1. The norm map `r -> r^2` doubles a
//! relative error each layer: the recursion on `r` itself turned the f64 rounding of
//! `|(cos 120, sin 120, 0)|^2 = 1 - 1.1e-16` into a kernel 41 times too small at depth 60 and
//! an exact 0 from depth 63 (hundred-and-twelfth hostile round, D3). Here the scale is
//! `exp(2^(L-1) (ln r_x + ln r_y) + ln K_L)`, `ln r` formed from `|x|^2` in double-double
//! arithmetic (`ln r` to a relative `u` however near 1 `r` is): wherever the kernel is in
//! f64's range its exponent is at most about 745 in size, and the kernel is within about
//! `745 u` (2e-13) of the exact kernel of the inputs as given.

use ntk_model::Activation;

use super::dual::DualEvaluator;
use super::scaling::Scaling;

/// Whether the kernels of `dual` under `scaling` factor so: ReLU² in closed form, at depth
/// at least 1 (depth 0's kernel is the scaled Gram matrix itself).
pub(crate) fn applies(dual: &DualEvaluator, scaling: &Scaling) -> bool {
    matches!(dual.activation(), Activation::ReluSquared(_))
        && dual.is_closed_form()
        && scaling.depth() >= 1
}

/// `ln(s0 |x|^2)` of the row `x`, to a relative `u` of the result also where `s0 |x|^2` is
/// within rounding of 1: `|x|^2` in double-double (each square's rounding error by a fused
/// multiply-add, the sum's by two-sum), times `s0`, or divided by `d` where `s0` is `1/d`
/// for a whole `d` (the conventions' `s0`; `1/d` itself is rounded). `-inf` for a row of
/// zeros; NaN for a row whose squares leave f64's range (not factored).
pub(crate) fn log_variance(x: &[f64], s0: f64) -> f64 {
    let (mut hi, mut lo) = (0.0f64, 0.0f64);
    for &v in x {
        let p = v * v;
        let pe = v.mul_add(v, -p);
        let s = hi + p;
        let bp = s - hi;
        let se = (hi - (s - bp)) + (p - bp);
        hi = s;
        lo += se + pe;
    }
    let (hi, lo) = (hi + lo, lo - ((hi + lo) - hi));
    if hi == 0.0 {
        return f64::NEG_INFINITY;
    }
    if !hi.is_finite() || hi < f64::MIN_POSITIVE / f64::EPSILON {
        return f64::NAN;
    }
    let divisor = (1.0 / s0).round();
    let (r, re) = if divisor >= 2.0 && 1.0 / divisor == s0 {
        let q = hi / divisor;
        let rem = (-q).mul_add(divisor, hi) + lo;
        (q, rem / divisor)
    } else {
        let p = s0 * hi;
        (p, s0.mul_add(hi, -p) + s0 * lo)
    };
    r.ln() + (re / r).ln_1p()
}

/// `v exp(s)`, with no overflow or underflow of `exp(s)` alone where the product is in
/// range: `exp(s) = 2^n exp(f)`, `|f| <= ln 2 / 2`. `v` itself where `s` is 0.
fn times_exp(v: f64, s: f64) -> f64 {
    if s == 0.0 || v == 0.0 {
        return v;
    }
    // Past about 1500 no `v` in f64's range keeps the product in it (`|ln v| <= 745`); there
    // `n ln 2` would also lose `s`'s digits (at `|s|` past 2^53 `f` was anything, and an
    // overflowing kernel read 0: hundred-and-thirteenth hostile round, D1 and D2).
    if s.is_nan() {
        return f64::NAN;
    }
    if s.abs() > 1500.0 {
        return if s > 0.0 { v * f64::INFINITY } else { 0.0 * v };
    }
    let n = (s / std::f64::consts::LN_2).round();
    // ln 2 in two parts, so that `s - n ln 2` is exact to well below `u |s|`.
    const LN2_HI: f64 = 0.693_147_180_369_123_8;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    let f = (s - n * LN2_HI) - n * LN2_LO;
    let n = n.clamp(-3000.0, 3000.0) as i32;
    libm::scalbn(v * f.exp(), n)
}

/// The scales of the factored kernels: `(ln r_i)` of each row and `ln K_L`, or `None` where
/// a row is not finite or its squares leave f64's range (the recursion on the rows as given
/// then says so).
pub(crate) struct Factors {
    log_r: Vec<f64>,
    log_k: Vec<f64>,
}

impl Factors {
    /// The factors of the row-major `n x d` inputs `x` under `scaling`.
    pub(crate) fn of(x: &[f64], d: usize, dual: &DualEvaluator, scaling: &Scaling) -> Option<Self> {
        let log_r: Vec<f64> = x
            .chunks(d.max(1))
            .map(|row| log_variance(row, scaling.input))
            .collect();
        if log_r.iter().any(|v| v.is_nan()) {
            return None;
        }
        // ln K_l = 2 ln K_(l-1) + ln a_l for l = 0..=L (`a_l = k_l / c`, exactly 1 where
        // `k_l` is the paper's `c`, as in the paper and unit-variance conventions).
        let mut log_k = vec![0.0];
        for &k in &scaling.layers {
            let last = log_k[log_k.len() - 1];
            log_k.push(2.0 * last + (k / dual.c()).ln());
        }
        Some(Self { log_r, log_k })
    }

    /// The unit-variance recursion's starting variance of row `i`: 1, or 0 for a row of
    /// zeros (its kernels are 0).
    pub(crate) fn unit(&self, i: usize) -> f64 {
        if self.log_r[i] == f64::NEG_INFINITY {
            0.0
        } else {
            1.0
        }
    }

    /// `v`, an entry `(i, j)` of a layer-`l` kernel of the unit-variance recursion, as the
    /// inputs' own: times `K_l (r_i r_j)^(2^(l-1))`.
    pub(crate) fn scaled(&self, v: f64, l: usize, i: usize, j: usize) -> f64 {
        let sum = self.log_r[i] + self.log_r[j];
        let power = if sum == 0.0 {
            0.0
        } else {
            libm::scalbn(sum, l as i32 - 1)
        };
        times_exp(v, power + self.log_k[l])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ln(|x|^2)` of the f64 row `(cos 120, sin 120, 0)`, whose f64 sum of squares rounds
    /// to 1 and its log to 0, against mpmath's of the f64 values taken exactly (80 digits:
    /// `|x|^2 - 1 = -1.16654714938686583750e-16`).
    #[test]
    fn the_log_variance_of_a_row_one_ulp_off_unit_norm() {
        let t = 120f64.to_radians();
        let row = [t.cos(), t.sin(), 0.0];
        #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
        let exact = -1.1665471493868659055426956018964640e-16;
        let got = log_variance(&row, 1.0);
        assert!((got / exact - 1.0).abs() < 1e-14, "{got:e} vs {exact:e}");
        assert_eq!(log_variance(&[1.0, 0.0], 1.0), 0.0);
        assert_eq!(log_variance(&[1.0, 1.0, 1.0], 1.0 / 3.0), 0.0);
        assert_eq!(
            log_variance(&[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], 1.0 / 7.0),
            0.0
        );
        assert_eq!(log_variance(&[0.0, 0.0], 1.0), f64::NEG_INFINITY);
        assert!(log_variance(&[1e200, 0.0], 1.0).is_nan());
    }

    /// `times_exp` keeps `v exp(s)` in range where `exp(s)` alone is not, and is exact at 0.
    #[test]
    fn times_exp_keeps_the_product_in_range() {
        assert_eq!(times_exp(1.25e8, 0.0), 1.25e8);
        let got = times_exp(1e300, -1400.0);
        let want = (300.0 * std::f64::consts::LN_10 - 1400.0).exp();
        assert!((got / want - 1.0).abs() < 1e-13, "{got:e} vs {want:e}");
        let got = times_exp(1e-300, 1400.0);
        let want = (-300.0 * std::f64::consts::LN_10 + 1400.0).exp();
        assert!((got / want - 1.0).abs() < 1e-13, "{got:e} vs {want:e}");
        assert_eq!(times_exp(2.0, f64::NEG_INFINITY), 0.0);
        assert_eq!(times_exp(2.0, -1e6), 0.0);
        assert_eq!(times_exp(2.0, 1e6), f64::INFINITY);
        // Far past the range, where `n ln 2` no longer holds `s`'s digits (2^113 ulps of ln r
        // at depth 114): the overflow or underflow as it is, never the other.
        for s in [1.33e19, 6.7e18, 1e300, 1501.0] {
            assert_eq!(times_exp(2.0, s), f64::INFINITY, "{s:e}");
            assert_eq!(times_exp(1e-300, s), f64::INFINITY, "{s:e}");
            assert_eq!(times_exp(2.0, -s), 0.0, "{s:e}");
            assert_eq!(times_exp(1e300, -s), 0.0, "{s:e}");
        }
    }

    /// The hundred-and-twelfth hostile round, D3: the kernel of `(1, 0, 0)`, `(cos 120,
    /// sin 120, 0)` (its square norm `1 - 1.17e-16` in f64) and `(0, 0, 1)`, against mpmath's
    /// recursion on the f64 values taken exactly (80 digits; `/tmp/s55/cfx.py` of the
    /// session's notes): the recursion on the rows as given lost the second row's kernel
    /// (3.2e-48 at depth 60, 0 from 63 on); factored, every entry within 1e-12 (the unit rows'
    /// `Theta_60 = 4 (4/3)^60 - 3` too), and at depth 63 the second row's
    /// 1.6e-459 an exact 0 that the callers refuse as an underflow.
    #[test]
    #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
    fn a_row_one_rounding_off_unit_norm_keeps_its_kernel() {
        use crate::theory::{DualEvaluator, Scaling, infinite_width_kernels_scaled};
        use ntk_model::ActivationKind;
        let t = 120f64.to_radians();
        let x = [1.0, 0.0, 0.0, t.cos(), t.sin(), 0.0, 0.0, 0.0, 1.0];
        let act = Activation::new(ActivationKind::ReluSquared, None);
        let dual = DualEvaluator::new(&act);
        for (depth, diag1, k01, unit) in [
            (
                1,
                2.3333333333333328,
                -0.043830744551600899,
                2.3333333333333333,
            ),
            (
                40,
                397695.31604127243,
                1.3044091716046784,
                397746.3289927738,
            ),
            (
                50,
                6193779.4155818797,
                1.2216041386857758,
                7063120.853036068,
            ),
            (
                60,
                4.8808967362452392e-51,
                8.1378380044354681e-30,
                125425019.56297563,
            ),
        ] {
            let scaling = Scaling::paper(&act, depth);
            let k = infinite_width_kernels_scaled(&x, 3, 3, &dual, &scaling, &|_| {}).ntk;
            let near = |got: f64, want: f64| (got / want - 1.0).abs() < 1e-12;
            assert!(near(k.get(1, 1), diag1), "{depth}: {:e}", k.get(1, 1));
            assert!(near(k.get(0, 1), k01), "{depth}: {:e}", k.get(0, 1));
            assert!(near(k.get(0, 0), unit), "{depth}: {:e}", k.get(0, 0));
            assert_eq!(k.get(0, 0), k.get(2, 2), "{depth}");
        }
        let scaling = Scaling::paper(&act, 63);
        let k = infinite_width_kernels_scaled(&x, 3, 3, &dual, &scaling, &|_| {}).ntk;
        assert_eq!(k.get(1, 1), 0.0);
        assert!((k.get(0, 0) / 297303754.18631261 - 1.0).abs() < 1e-12);
        // One rounding above and below unit norm, far past where the kernel leaves f64's
        // range (layer 61) or underflows (62): infinite and 0, at every depth (the scale's
        // exponent passes 2^63 from depth 114: hundred-and-thirteenth hostile round, D1, D2).
        for depth in [61, 113, 114, 115, 200] {
            let scaling = Scaling::paper(&act, depth);
            let up = [1.0 + f64::EPSILON, 0.0, 0.0];
            let k = infinite_width_kernels_scaled(&up, 1, 3, &dual, &scaling, &|_| {}).ntk;
            assert_eq!(k.get(0, 0), f64::INFINITY, "{depth}");
            let down = [1.0 - f64::EPSILON / 2.0, 0.0, 0.0];
            let k = infinite_width_kernels_scaled(&down, 1, 3, &dual, &scaling, &|_| {}).ntk;
            assert_eq!(
                k.get(0, 0),
                if depth == 61 { k.get(0, 0) } else { 0.0 },
                "{depth}"
            );
        }
        // Where it leaves the range, as the kernel is formed: one rounding above unit norm at
        // layer 61 (paper); under the unit-variance convention `(1, 1, 1 + 2^-52)`, whose
        // `s0 |x|^2` rounds to 1 in f64, at layer 63 (6.7e304 at 62 by mpmath: the
        // hundred-and-fourteenth hostile round, D3, where "its last layer" was said).
        let up = [1.0 + f64::EPSILON, 0.0, 0.0];
        let at = crate::theory::layer_leaving_range_of(&dual, &Scaling::paper(&act, 100), &up, 3);
        assert_eq!(at, Some(61));
        let uv = Scaling::convention(ntk_model::NtkConvention::UnitVariance, &act, 3, 8, 100);
        let row = [1.0, 1.0, 1.0 + f64::EPSILON];
        assert_eq!(
            crate::theory::layer_leaving_range_of(&dual, &uv, &row, 3),
            Some(63)
        );
        let k = infinite_width_kernels_scaled(
            &row,
            1,
            3,
            &dual,
            &Scaling::convention(ntk_model::NtkConvention::UnitVariance, &act, 3, 8, 62),
            &|_| {},
        )
        .ntk;
        assert!(
            (k.get(0, 0) / 6.7e304 - 1.0).abs() < 0.01,
            "{:e}",
            k.get(0, 0)
        );
        // The unit-variance convention's `s0 = 1/3` on `(1, 1, 1)`: a layer-0 variance of
        // exactly 1, the unit row's kernel at every depth.
        let ones = [1.0, 1.0, 1.0];
        let scaling = Scaling::convention(ntk_model::NtkConvention::UnitVariance, &act, 3, 8, 60);
        let k = infinite_width_kernels_scaled(&ones, 1, 3, &dual, &scaling, &|_| {}).ntk;
        assert!((k.get(0, 0) / 125425019.56297563 - 1.0).abs() < 1e-12);
    }
}
