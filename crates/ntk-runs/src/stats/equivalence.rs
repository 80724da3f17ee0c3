//! "Similar" as a test: the two one-sided tests of equivalence against a margin stated
//! before looking at the data, and how many seeds such a margin needs.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The two one-sided tests (Schuirmann 1987) of `|mean_a - mean_b| < margin`, with Welch's
/// standard error `se` and degrees of freedom: `p = max(P(T >= (d + margin)/se),
/// P(T <= (d - margin)/se))`. Equivalent at level `ALPHA` when `p < ALPHA`, that is when
/// the `1 - 2 ALPHA` (90%) confidence interval of `d` lies inside `(-margin, margin)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tost {
    pub margin: f64,
    /// The larger of the two one-sided p-values.
    pub p: f64,
    /// The `1 - 2 ALPHA` confidence interval of the difference.
    pub ci_low: f64,
    pub ci_high: f64,
}

impl Tost {
    /// Whether the data show the two means within the margin of each other.
    pub fn equivalent(&self) -> bool {
        self.p < super::ALPHA
    }
}

/// [`Tost`] for two samples of at least two values each with some spread and a positive,
/// finite margin; `None` otherwise.
pub fn tost(a: &[f64], b: &[f64], margin: f64) -> Option<Tost> {
    if margin.is_nan() || margin <= 0.0 || margin.is_infinite() {
        return None;
    }
    let diff = super::welch::Difference::of(a, b)?;
    let (d, se) = (diff.difference(), diff.standard_error());
    let dist = StudentsT::new(0.0, 1.0, diff.df).ok()?;
    let p_lower = dist.sf(diff.t(-margin));
    let p_upper = dist.cdf(diff.t(margin));
    let q = dist.inverse_cdf(1.0 - super::ALPHA);
    Some(Tost {
        margin,
        p: p_lower.max(p_upper),
        ci_low: d - q * se,
        ci_high: d + q * se,
    })
}

/// Seeds per side for the two one-sided tests at level `ALPHA` to show equivalence within
/// `margin` with probability `power` when the means are equal, given per-seed standard
/// deviations `sd_a` and `sd_b` (the normal approximation, Chow, Shao & Wang, "Sample Size
/// Calculations in Clinical Research", Sec. 3.2: `n = (z_{1-ALPHA} + z_{(1+power)/2})^2
/// (sd_a^2 + sd_b^2) / margin^2`, rounded up, at least 2). `None` without a positive margin
/// or a finite spread.
pub fn seeds_for_margin(sd_a: f64, sd_b: f64, margin: f64, power: f64) -> Option<usize> {
    let usable = margin > 0.0 && sd_a.is_finite() && sd_b.is_finite();
    if !usable || !(0.0..1.0).contains(&power) {
        return None;
    }
    let z = Normal::new(0.0, 1.0).ok()?;
    let k = z.inverse_cdf(1.0 - super::ALPHA) + z.inverse_cdf((1.0 + power) / 2.0);
    let n = (k * k * (sd_a * sd_a + sd_b * sd_b) / (margin * margin)).ceil();
    Some((n as usize).max(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two samples with means 0.1 apart and small spread are equivalent within a margin of 1,
    /// not within 0.05; the p-value is the larger one-sided tail, computed here from the t
    /// statistics by hand (Welch se = sqrt(2/3) * 0.1 for unit-spaced samples scaled by 0.1).
    #[test]
    fn equivalent_within_a_wide_margin_not_a_narrow_one() {
        let a = [1.0, 1.1, 1.2];
        let b = [0.9, 1.0, 1.1];
        let wide = tost(&a, &b, 1.0).unwrap();
        assert!(wide.equivalent(), "{wide:?}");
        assert!(wide.ci_low > -1.0 && wide.ci_high < 1.0);
        let narrow = tost(&a, &b, 0.05).unwrap();
        assert!(!narrow.equivalent(), "{narrow:?}");
        let se = (2.0f64 / 3.0).sqrt() * 0.1;
        let t = StudentsT::new(0.0, 1.0, 4.0).unwrap();
        let want = t.sf((0.1 + 0.05) / se).max(t.cdf((0.1 - 0.05) / se));
        assert!((narrow.p - want).abs() < 1e-12, "{} vs {want}", narrow.p);
        assert!(tost(&a, &b, 0.0).is_none());
        assert!(tost(&[1.0, 1.0], &[1.0, 1.0], 1.0).is_none());
    }

    /// The normal approximation's textbook case: alpha 0.05, power 0.8, sd 1 each, margin 1:
    /// (1.6449 + 1.2816)^2 * 2 = 17.13, so 18 per side.
    #[test]
    fn seeds_for_a_margin() {
        assert_eq!(seeds_for_margin(1.0, 1.0, 1.0, 0.8), Some(18));
        assert_eq!(seeds_for_margin(0.01, 0.01, 1.0, 0.8), Some(2));
        assert_eq!(seeds_for_margin(1.0, 1.0, 0.0, 0.8), None);
    }
}
