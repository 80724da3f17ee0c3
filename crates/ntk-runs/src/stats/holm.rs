//! Holm's correction of a family of p-values.

/// Holm's step-down adjusted p-values (Holm 1979, "A simple sequentially rejective multiple
/// test procedure"): with the `m` p-values of a family sorted ascending,
/// `p_(1) <= ... <= p_(m)`, the adjusted `p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))`.
/// Calling a difference real where `p~ < alpha` keeps the chance of any false call in the
/// family at most `alpha`. `None` and NaN entries (comparisons without a test) are not
/// members of the family and come back `None`, as R's `p.adjust` leaves `NA` out of its `n`
/// (and as `experiments/welch.py`'s `holm`); the result is in the order of the input.
pub fn holm(p: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut tested: Vec<(usize, f64)> = p
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.filter(|v| !v.is_nan()).map(|v| (i, v)))
        .collect();
    tested.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)));
    let m = tested.len();
    let mut out = vec![None; p.len()];
    let mut running = 0.0f64;
    for (rank, &(i, v)) in tested.iter().enumerate() {
        running = running.max(((m - rank) as f64 * v).min(1.0));
        out[i] = Some(running);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R's `p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm")` = 0.03 0.06 0.06 0.02; untested
    /// entries stay out; one test is its own family.
    #[test]
    fn matches_r_p_adjust() {
        let got = holm(&[Some(0.01), Some(0.04), None, Some(0.03), Some(0.005)]);
        let want = [Some(0.03), Some(0.06), None, Some(0.06), Some(0.02)];
        for (g, w) in got.iter().zip(want) {
            match (g, w) {
                (Some(g), Some(w)) => assert!((g - w).abs() < 1e-15, "{got:?}"),
                (None, None) => {}
                _ => panic!("{got:?}"),
            }
        }
        assert_eq!(holm(&[Some(0.2)]), vec![Some(0.2)]);
        assert_eq!(holm(&[Some(0.6), Some(0.7)]), vec![Some(1.0), Some(1.0)]);
        assert!(holm(&[]).is_empty());
        // NaN is no test, wherever it stands (ninth hostile round, W03): R's
        // p.adjust(c(NA, 0.01), "holm") = NA 0.01.
        assert_eq!(holm(&[Some(f64::NAN), Some(0.01)]), vec![None, Some(0.01)]);
        assert_eq!(
            holm(&[Some(0.01), Some(f64::NAN), Some(0.02)]),
            vec![Some(0.02), None, Some(0.02)]
        );
    }
}
