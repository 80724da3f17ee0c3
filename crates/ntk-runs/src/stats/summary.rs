//! Means and spreads over seeds.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sample_spread() {
        assert_eq!(mean([1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(mean(std::iter::empty()), None);
        let (m, s) = mean_std(&[1.0, 3.0]);
        assert_eq!((m, s), (2.0, 2f64.sqrt()));
        assert_eq!(mean_std(&[5.0]), (5.0, 0.0));
        let (m, s) = mean_std(&[]);
        assert!(m.is_nan() && s.is_nan(), "no values: no mean and no spread");
        assert_eq!(standard_error(&[1.0, 3.0]), Some(1.0));
        assert_eq!(standard_error(&[1.0]), None);
    }
}
