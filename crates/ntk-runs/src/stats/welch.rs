//! Welch's two-sample t-test of two means (unequal variances) and the confidence interval
//! of their difference.

use super::summary::mean_std;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Welch's test of `mean_a - mean_b`:
/// `t = (mean_a - mean_b) / sqrt(s_a^2/n_a + s_b^2/n_b)`, with the Welch-Satterthwaite
/// degrees of freedom `(s_a^2/n_a + s_b^2/n_b)^2 / ((s_a^2/n_a)^2/(n_a-1) + (s_b^2/n_b)^2/(n_b-1))`,
/// the two-sided p-value `P(|T_df| >= |t|)` and the `1 - ALPHA` confidence interval
/// `difference -+ t_{df, 1 - ALPHA/2} standard_error`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    /// `mean_a - mean_b`.
    pub difference: f64,
    /// The standard error of the difference.
    pub standard_error: f64,
    pub t: f64,
    pub df: f64,
    /// Two-sided.
    pub p: f64,
    /// The confidence interval of the difference at `1 - ALPHA` (95%).
    pub ci_low: f64,
    pub ci_high: f64,
}

/// [`Welch`] for two samples of at least two values each, not both constant; `None`
/// otherwise: one value has no spread, and two constant samples have no spread to test a
/// difference against (their standard error is 0; [`super::permutation`] tests them).
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let diff = Difference::of(a, b)?;
    let (difference, standard_error, df) = (diff.difference(), diff.standard_error(), diff.df);
    let t = diff.t(0.0);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = (2.0 * dist.sf(t.abs())).min(1.0);
    let q = dist.inverse_cdf(1.0 - super::ALPHA / 2.0);
    Some(Welch {
        difference,
        standard_error,
        t,
        df,
        p,
        ci_low: difference - q * standard_error,
        ci_high: difference + q * standard_error,
    })
}

/// The difference of two samples' means and Welch's standard error of it (see [`Welch`]),
/// formed on both samples scaled by one power of two `2^-e` (exact), their largest magnitude
/// into `[1, 2)`: t and the Welch-Satterthwaite degrees of freedom are free of the scale, and
/// the squares of the spread neither underflow (the thirty-fifth hostile round's N3: samples
/// near 1e-300 read as constant) nor overflow (near 1e154). t is taken at that scale (the
/// thirty-sixth's D2: from the difference and error scaled back into subnormal numbers,
/// p was 0.076 for 0.088); the difference and its error are reported scaled back. Shared by
/// [`welch`] and [`super::tost`].
pub(super) struct Difference {
    /// `(mean_a - mean_b) 2^-e`.
    scaled: f64,
    /// The standard error times `2^-e`.
    error: f64,
    /// The Welch-Satterthwaite degrees of freedom.
    pub df: f64,
    /// The samples were scaled by `2^-e` (exactly, [`libm::scalbn`]).
    e: i32,
}

impl Difference {
    /// For two samples of at least two values each, not both constant, whose difference
    /// and its standard error are finite; `None` otherwise.
    pub(super) fn of(a: &[f64], b: &[f64]) -> Option<Self> {
        if a.len() < 2 || b.len() < 2 {
            return None;
        }
        let m = a.iter().chain(b).fold(0.0_f64, |m, v| m.max(v.abs()));
        let e = if m > 0.0 && m.is_finite() {
            libm::ilogb(m)
        } else {
            0
        };
        // Less one reference value, the pooled mean at that scale (no overflow: every value
        // is within 2 of 0): exact for values within a factor of two of it (Sterbenz), so
        // that samples differing in their last bits keep their difference, which the means
        // rounded to floats lost (seventy-first hostile round, N2: t -0.583 for -0.389).
        let total = a.len() + b.len();
        let reference = a.iter().chain(b).map(|v| libm::scalbn(*v, -e)).sum::<f64>() / total as f64;
        // Each value less the reference, with the rounding error of that subtraction
        // (Knuth's two-sum, exact), which the means add back: a value that absorbed the
        // reference lost it where the others kept it (eighty-fifth hostile round, D9:
        // [1e17, -1e17] against [1, 2] gave a difference of -0.75 for -1.5). Where every
        // subtraction is exact (Sterbenz) the error is 0 and nothing changes.
        let less = |x: &[f64]| -> (Vec<f64>, f64) {
            let mut lost = 0.0;
            let s = x
                .iter()
                .map(|v| {
                    let v = libm::scalbn(*v, -e);
                    let s = v - reference;
                    let back = s - v;
                    lost += (v - (s - back)) + (-reference - back);
                    s
                })
                .collect();
            (s, lost / x.len() as f64)
        };
        // Each sample's spread from its values less its own first value (exact for values
        // within a factor of two of it, Sterbenz), not less the pooled reference, whose
        // rounding a spread far below it would take (hundred-and-twenty-fourth hostile round,
        // N2: [0, 1e-10] against [1, 1 + 1e-10] lost 4e-8 of t).
        let spread = |x: &[f64]| {
            let first = libm::scalbn(x[0], -e);
            let shifted: Vec<f64> = x.iter().map(|v| libm::scalbn(*v, -e) - first).collect();
            mean_std(&shifted).1
        };
        let (sa, sb) = (spread(a), spread(b));
        let ((a, lost_a), (b, lost_b)) = (less(a), less(b));
        let (a, b) = (&a[..], &b[..]);
        let (ma, mb) = (mean_std(a).0 + lost_a, mean_std(b).0 + lost_b);
        let (va, vb) = (sa * sa / a.len() as f64, sb * sb / b.len() as f64);
        let df =
            (va + vb).powi(2) / (va * va / (a.len() - 1) as f64 + vb * vb / (b.len() - 1) as f64);
        let d = Self {
            scaled: ma - mb,
            error: (va + vb).sqrt(),
            df,
            e,
        };
        let finite = d.difference().is_finite() && d.standard_error().is_finite();
        (d.error > 0.0 && finite).then_some(d)
    }

    /// `mean_a - mean_b`.
    pub(super) fn difference(&self) -> f64 {
        libm::scalbn(self.scaled, self.e)
    }

    /// The standard error of the difference.
    pub(super) fn standard_error(&self) -> f64 {
        libm::scalbn(self.error, self.e)
    }

    /// `(mean_a - mean_b - shift) / standard_error`, formed at the scaled samples' scale.
    pub(super) fn t(&self, shift: f64) -> f64 {
        (self.scaled - libm::scalbn(shift, -self.e)) / self.error
    }
}

/// `P(|T| >= |t|)` for Student's t with `df` degrees of freedom (NaN for a NaN `t` or an
/// invalid `df`).
pub fn student_t_two_sided(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) => (2.0 * dist.sf(t.abs())).min(1.0),
        Err(_) => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The t distribution's two-sided tails at textbook critical values (t tables: 0.05 at
    /// t = 12.706 for 1 df, 4.303 for 2, 2.776 for 4, 2.228 for 10; 0.01 at 9.925 for 2),
    /// the normal limit (1.959964 at a million df) and the closed form for 1 df (Cauchy:
    /// 1 - 2 atan(t) / pi).
    #[test]
    fn student_t_tails_match_the_tables() {
        for (t, df, p) in [
            (12.706, 1.0, 0.05),
            (4.303, 2.0, 0.05),
            (2.776, 4.0, 0.05),
            (2.228, 10.0, 0.05),
            (9.925, 2.0, 0.01),
            (1.959964, 1e6, 0.05),
        ] {
            let got = student_t_two_sided(t, df);
            assert!(
                (got - p).abs() < 2e-4 * p.max(0.01) / 0.01,
                "t {t} df {df}: {got}"
            );
        }
        for t in [0.1, 1.0, 3.0, 30.0] {
            let exact = 1.0 - 2.0 * f64::atan(t) / std::f64::consts::PI;
            let got = student_t_two_sided(t, 1.0);
            assert!((got - exact).abs() < 1e-13, "{got} vs {exact}");
        }
        assert_eq!(student_t_two_sided(0.0, 3.0), 1.0);
        assert_eq!(student_t_two_sided(f64::INFINITY, 3.0), 0.0);
        assert!(student_t_two_sided(f64::NAN, 3.0).is_nan());
    }

    /// Welch's test on two small samples against a hand computation (means 2 and 5,
    /// variances 1 and 1, n = 3 each: se = sqrt(2/3), t = -3.674, df = 4) and scipy.
    #[test]
    fn welch_matches_a_hand_computation() {
        let w = welch(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!(w.difference, -3.0);
        assert!((w.standard_error - (2.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert!((w.df - 4.0).abs() < 1e-12);
        assert!((w.t + 3.0 / (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
        // scipy.stats.ttest_ind([1,2,3],[4,5,6], equal_var=False).pvalue = 0.021311641128756...
        assert!((w.p - 0.021311641128756).abs() < 1e-9, "{}", w.p);
        // t_{4, 0.975} = 2.7764451051977987 (scipy.stats.t.ppf): -3 -+ 2.776445 sqrt(2/3).
        let half = 2.7764451051977987 * (2.0f64 / 3.0).sqrt();
        assert!((w.ci_low - (-3.0 - half)).abs() < 1e-9, "{}", w.ci_low);
        assert!((w.ci_high - (-3.0 + half)).abs() < 1e-9, "{}", w.ci_high);
        assert!(welch(&[1.0], &[2.0, 3.0]).is_none());
    }

    /// Two constant samples have no spread: no t, no p-value, equal or not (a p of 0 or 1
    /// there would be a verdict the data cannot give).
    #[test]
    fn constant_samples_get_no_p_value() {
        assert!(welch(&[2.0, 2.0], &[2.0, 2.0]).is_none());
        assert!(welch(&[10.0, 10.0, 10.0], &[12.0, 12.0, 12.0]).is_none());
        // One constant side is still a test (the other side's spread).
        assert!(welch(&[10.0, 10.0, 10.0], &[11.0, 12.0, 13.0]).is_some());
        assert!(welch(&[1e300, -1e300], &[1.0, 2.0]).is_none_or(|w| w.p.is_finite()));
        // t, the degrees of freedom and p are free of the scale: samples whose spread's
        // square overflows (1e153: no test before) or underflows (1e-300: read as constant,
        // thirty-fifth hostile round, N3) are tested as at unit scale, as
        // experiments/welch.py does.
        let (a, b) = ([0.1, 0.2, 0.4], [0.15, 0.21, 0.5, 0.7]);
        let unit = welch(&a, &b).unwrap();
        for scale in [1e-300, 1e-200, 1e153, 1e300, f64::MIN_POSITIVE / 4.0] {
            let at = |x: &[f64]| x.iter().map(|v| v * scale).collect::<Vec<f64>>();
            let w = welch(&at(&a), &at(&b)).unwrap();
            assert!((w.t - unit.t).abs() < 1e-12, "{scale}: {w:?}");
            assert!((w.p - unit.p).abs() < 1e-12 && (w.df - unit.df).abs() < 1e-9);
            assert!((w.difference / scale - unit.difference).abs() < 1e-12 * unit.difference.abs());
        }
        // Samples that differ in their last bits: t as for the same samples less 1 and
        // scaled by 2^52 (integers, exact), which a mean rounded to a float missed by 20%
        // (seventy-first hostile round, N2).
        let eps = f64::EPSILON;
        let w = welch(&[1.0 + 4.0 * eps, 1.0, 1.0], &[1.0, 1.0, 1.0 + 9.0 * eps]).unwrap();
        let exact = welch(&[4.0, 0.0, 0.0], &[0.0, 0.0, 9.0]).unwrap();
        assert!(
            (w.t - exact.t).abs() < 1e-12 * exact.t.abs(),
            "{w:?} {exact:?}"
        );
        assert!((w.p - exact.p).abs() < 1e-12 && (w.df - exact.df).abs() < 1e-9);
        assert!((w.difference / eps - exact.difference).abs() < 1e-12);
        let w = welch(&[1e153, -1e153], &[1.0, 2.0]).unwrap();
        assert!(w.p.is_finite() && (w.df - 1.0).abs() < 1e-9, "{w:?}");
        // Eighty-fifth hostile round, D9: mixed signs of large magnitude beside small values
        // absorbed the reference: -0.75 for -1.5, -1.75 for -1.5, 0 for -1.
        for (a, b, d) in [
            (&[1e17, -1e17][..], &[1.0, 2.0][..], -1.5),
            (&[4e15, -4e15], &[1.0, 2.0], -1.5),
            (&[1e17, -1e17, 3.0], &[1.0, 2.0, 3.0], -1.0),
        ] {
            let w = welch(a, b).unwrap();
            assert_eq!(w.difference, d, "{a:?} {b:?}: {w:?}");
        }
        // A spread far below the samples' distance from the pooled mean keeps its digits
        // (hundred-and-twenty-fourth hostile round, N2: t -1.414213445e10 where mpmath at 60
        // digits gives -14142135038.67).
        let w = welch(&[0.0, 1e-10], &[1.0, 1.0 + 1e-10]).unwrap();
        assert!(
            (w.t + 14_142_135_038.67).abs() < 1e-9 * 14_142_135_038.67,
            "{w:?}"
        );
        // Subnormal samples (integer multiples of 2^-1074, exact): t from the difference and
        // error scaled back into subnormals gave p 0.076 for 0.088 (thirty-sixth hostile
        // round, D2); the equivalence test's p the same at both scales.
        let u = f64::from_bits(1);
        let (a, b) = ([3.0, 7.0, 8.0], [10.0, 13.0, 20.0]);
        let at = |x: &[f64]| x.iter().map(|v| v * u).collect::<Vec<f64>>();
        let (unit, tiny) = (welch(&a, &b).unwrap(), welch(&at(&a), &at(&b)).unwrap());
        assert!((tiny.t - unit.t).abs() < 1e-12 && (tiny.p - unit.p).abs() < 1e-12);
        let (unit, tiny) = (
            super::super::tost(&a, &b, 12.0).unwrap(),
            super::super::tost(&at(&a), &at(&b), 12.0 * u).unwrap(),
        );
        assert!((tiny.p - unit.p).abs() < 1e-12, "{tiny:?} {unit:?}");
    }
}
