//! The statistics of sweep tables: means and spreads over seeds.

/// The mean, `None` for no values.
pub fn mean(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (s, n) = v
        .into_iter()
        .fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

/// Mean and sample standard deviation (`n - 1` in the denominator; 0 for one value, NaN
/// for none).
pub fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = match v.len() {
        0 => f64::NAN,
        1 => 0.0,
        _ => v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0),
    };
    (mean, var.sqrt())
}

/// The standard error of a mean: the sample standard deviation over `sqrt(n)`; `None` for
/// fewer than two values (one seed has no spread to estimate).
pub fn standard_error(v: &[f64]) -> Option<f64> {
    (v.len() >= 2).then(|| mean_std(v).1 / (v.len() as f64).sqrt())
}

/// Welch's two-sample t-test of the means of `a` and `b` (unequal variances):
/// `t = (mean_a - mean_b) / sqrt(s_a^2/n_a + s_b^2/n_b)`, with the Welch-Satterthwaite
/// degrees of freedom `(s_a^2/n_a + s_b^2/n_b)^2 / ((s_a^2/n_a)^2/(n_a-1) + (s_b^2/n_b)^2/(n_b-1))`
/// and the two-sided p-value `P(|T_df| >= |t|)`.
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
}

/// [`Welch`] for two samples of at least two values each; `None` otherwise (no spread to
/// test against).
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, sa) = mean_std(a);
    let (mb, sb) = mean_std(b);
    let (va, vb) = (sa * sa / a.len() as f64, sb * sb / b.len() as f64);
    let difference = ma - mb;
    let standard_error = (va + vb).sqrt();
    if standard_error == 0.0 {
        // Both samples constant: equal means are alike, different ones certainly differ.
        let p = if difference == 0.0 { 1.0 } else { 0.0 };
        let t = if difference == 0.0 {
            0.0
        } else {
            difference.signum() * f64::INFINITY
        };
        let df = (a.len() + b.len() - 2) as f64;
        return Some(Welch {
            difference,
            standard_error,
            t,
            df,
            p,
        });
    }
    let t = difference / standard_error;
    let df = (va + vb).powi(2) / (va * va / (a.len() - 1) as f64 + vb * vb / (b.len() - 1) as f64);
    let p = student_t_two_sided(t, df);
    Some(Welch {
        difference,
        standard_error,
        t,
        df,
        p,
    })
}

/// `P(|T| >= |t|)` for Student's t with `df` degrees of freedom: the regularized
/// incomplete beta function `I_x(df/2, 1/2)` at `x = df / (df + t^2)`.
pub fn student_t_two_sided(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return if t.is_nan() { f64::NAN } else { 0.0 };
    }
    incomplete_beta(df / (df + t * t), df / 2.0, 0.5)
}

/// The regularized incomplete beta function `I_x(a, b)`, by the continued fraction of
/// Numerical Recipes (3rd ed., Sec. 6.4; modified Lentz), on the side where it converges
/// fast (`x < (a + 1) / (a + b + 2)`, else `1 - I_{1-x}(b, a)`).
pub fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front =
        libm::lgamma(a + b) - libm::lgamma(a) - libm::lgamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of [`incomplete_beta`] (converges to 1e-15 in well under 300
/// terms for the arguments a t-test gives).
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
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
    }

    /// Welch's test on two small samples against a hand computation (means 2 and 5,
    /// variances 1 and 1, n = 3 each: se = sqrt(2/3), t = -3.674, df = 4).
    #[test]
    fn welch_matches_a_hand_computation() {
        let w = welch(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!(w.difference, -3.0);
        assert!((w.standard_error - (2.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert!((w.df - 4.0).abs() < 1e-12);
        assert!((w.t + 3.0 / (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
        // scipy.stats.ttest_ind([1,2,3],[4,5,6], equal_var=False).pvalue = 0.021311641128756...
        assert!((w.p - 0.021311641128756).abs() < 1e-9, "{}", w.p);
        assert!(welch(&[1.0], &[2.0, 3.0]).is_none());
        assert_eq!(standard_error(&[1.0, 3.0]), Some(1.0));
        assert_eq!(standard_error(&[1.0]), None);
        let same = welch(&[2.0, 2.0], &[2.0, 2.0]).unwrap();
        assert_eq!((same.p, same.t), (1.0, 0.0));
    }

    #[test]
    fn mean_and_sample_spread() {
        assert_eq!(mean([1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(mean(std::iter::empty()), None);
        let (m, s) = mean_std(&[1.0, 3.0]);
        assert_eq!((m, s), (2.0, 2f64.sqrt()));
        assert_eq!(mean_std(&[5.0]), (5.0, 0.0));
        let (m, s) = mean_std(&[]);
        assert!(m.is_nan() && s.is_nan(), "no values: no mean and no spread");
    }
}
