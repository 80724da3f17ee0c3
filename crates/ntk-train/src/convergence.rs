//! Does conditioning predict convergence? What `collect` writes for runs that carry their
//! linearized prediction (`[prediction]`, [`crate::predict`]):
//!
//! - `convergence.csv`, one row per run: the measured rate of the training loss, the rates
//!   its NTK at initialization predicts (the linearized curve, empirical and infinite-width
//!   kernel), the late rate of the linearized model `-2 ln |1 - eta lambda_min / n|`, kappa,
//!   and how far the predicted curve strays from the measured one;
//! - `convergence_rate.png` (and `.svg`, `.pdf`): those rates against depth;
//! - the predicted curves drawn beside the measured ones in the training-loss figures
//!   ([`predicted_series`]).
//!
//! The rate of a curve `L(e)` is the least-squares slope of `-ln L` against the epoch over
//! the middle half of training (epochs `E/4 .. 3E/4` of `E`), per step when each epoch is one
//! full-batch step: the speed once the first transient has passed and before the curve
//! flattens.

use ntk_plot::{Dash, Figure, Marker, Scale, Series, Spread, ramp};
use serde::Serialize;

use crate::predict::{PredictedRow, SpectrumRow};
use crate::seeds::SeedRun;

/// A run read back with its prediction (`report::RunRecord` is one): its configuration,
/// rate and metrics ([`SeedRun`]), and its `predicted.csv` and `predicted_spectrum.csv`.
pub trait PredictedRun: SeedRun {
    fn id(&self) -> &str;
    /// Empty when the run made no prediction.
    fn predicted(&self) -> &[PredictedRow];
    fn predicted_spectrum(&self) -> &[SpectrumRow];
}

/// One row of `convergence.csv`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ConvergenceRow {
    pub id: String,
    pub depth: usize,
    pub activation: String,
    pub normalization: String,
    pub lr: f64,
    pub seed: u64,
    pub epochs: usize,
    /// kappa of the empirical NTK at initialization (per output); empty where singular.
    pub kappa: Option<f64>,
    /// Whether that kernel is singular (`lambda_min < n eps lambda_max`), and its rank.
    pub singular_empirical: Option<bool>,
    pub rank_empirical: Option<usize>,
    pub inverse_kappa: Option<f64>,
    /// The least-squares slope of `-ln L` per epoch over the middle half of training; `None`
    /// (empty in the CSV, as the predicted rates) where that half holds fewer than 3 epochs
    /// or a loss that is not positive and finite (a diverged run).
    pub measured_rate: Option<f64>,
    pub predicted_rate_empirical: Option<f64>,
    pub predicted_rate_theory: Option<f64>,
    /// `-2 ln |1 - lr lambda_min / n|` of each kernel: the linearized model's late rate.
    pub asymptotic_rate_empirical: Option<f64>,
    pub asymptotic_rate_theory: Option<f64>,
    pub final_train_loss: f64,
    pub predicted_final_train_loss_empirical: Option<f64>,
    pub predicted_final_train_loss_theory: Option<f64>,
    /// The largest `|ln L_measured - ln L_predicted|` over the epochs (`ln` of the ratio).
    pub max_log_deviation_empirical: Option<f64>,
    pub max_log_deviation_theory: Option<f64>,
    pub final_test_accuracy: Option<f64>,
    pub predicted_final_test_accuracy_empirical: Option<f64>,
}

/// The least-squares slope of `-ln y` against `x` over the points with
/// `x` in the middle half of `x`'s range; `None` for fewer than 3 such points or a
/// non-positive `y`.
pub fn middle_rate(points: &[(f64, f64)]) -> Option<f64> {
    let last = points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = (last / 4.0, 3.0 * last / 4.0);
    let mid: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.0 >= lo && p.0 <= hi)
        .map(|&(x, y)| (x, y))
        .collect();
    if mid.len() < 3 || mid.iter().any(|p| p.1.is_nan() || p.1 <= 0.0) {
        return None;
    }
    let n = mid.len() as f64;
    let mx = mid.iter().map(|p| p.0).sum::<f64>() / n;
    let my = mid.iter().map(|p| p.1.ln()).sum::<f64>() / n;
    let sxy: f64 = mid.iter().map(|p| (p.0 - mx) * (p.1.ln() - my)).sum();
    let sxx: f64 = mid.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let slope = -sxy / sxx;
    // A curve that does not move over the window (below f32 rounding of ln L: a singular
    // kernel's floor) has rate 0, not the slope of its rounding noise.
    let span = mid.last().map_or(0.0, |p| p.0) - mid[0].0;
    Some(if (slope * span).abs() < NO_PROGRESS {
        0.0
    } else {
        slope
    })
}

/// The change of `ln L` over the window below which a curve counts as flat (rate 0).
pub const NO_PROGRESS: f64 = 1e-6;

fn of_kernel<'a>(rows: &'a [PredictedRow], kernel: &str) -> Vec<&'a PredictedRow> {
    rows.iter().filter(|r| r.kernel == kernel).collect()
}

fn spectrum<'a>(rows: &'a [SpectrumRow], kernel: &str) -> Option<&'a SpectrumRow> {
    rows.iter().find(|r| r.kernel == kernel)
}

/// The rows of the runs that carry a prediction, in the runs' order.
pub fn rows<R: PredictedRun>(runs: &[R]) -> Vec<ConvergenceRow> {
    runs.iter()
        .filter(|r| !r.predicted().is_empty() && !r.epochs().is_empty())
        .map(|r| {
            let measured: Vec<(f64, f64)> = r
                .epochs()
                .iter()
                .map(|m| (m.epoch as f64, m.train_loss))
                .collect();
            let predicted = |kernel: &str| -> Option<Vec<(f64, f64)>> {
                let rows = of_kernel(r.predicted(), kernel);
                (!rows.is_empty()).then(|| {
                    rows.iter()
                        .take(measured.len())
                        .map(|p| (p.epoch as f64, p.train_loss))
                        .collect()
                })
            };
            let deviation = |curve: &Option<Vec<(f64, f64)>>| {
                curve.as_ref().map(|c| {
                    c.iter()
                        .zip(&measured)
                        .map(|(p, m)| (m.1.ln() - p.1.ln()).abs())
                        .fold(0.0, f64::max)
                })
            };
            let (emp, theory) = (predicted("empirical"), predicted("theory"));
            let last = |c: &Option<Vec<(f64, f64)>>| c.as_ref().and_then(|c| c.last().map(|p| p.1));
            let s_emp = spectrum(r.predicted_spectrum(), "empirical");
            let s_theory = spectrum(r.predicted_spectrum(), "theory");
            let kappa = s_emp.and_then(|s| s.kappa);
            let final_predicted_accuracy = of_kernel(r.predicted(), "empirical")
                .iter()
                .take(measured.len())
                .rev()
                .find_map(|p| p.test_accuracy);
            let (depth, activation, normalization) = r.configuration();
            ConvergenceRow {
                id: r.id().to_string(),
                depth,
                activation: activation.to_string(),
                normalization: normalization.to_string(),
                lr: r.lr(),
                seed: r.seed(),
                epochs: r.epochs().len(),
                kappa,
                inverse_kappa: kappa.map(|k| 1.0 / k),
                measured_rate: middle_rate(&measured),
                predicted_rate_empirical: emp.as_deref().and_then(middle_rate),
                predicted_rate_theory: theory.as_deref().and_then(middle_rate),
                asymptotic_rate_empirical: s_emp.and_then(|s| s.asymptotic_rate),
                asymptotic_rate_theory: s_theory.and_then(|s| s.asymptotic_rate),
                singular_empirical: s_emp.map(|s| s.singular),
                rank_empirical: s_emp.map(|s| s.rank),
                final_train_loss: measured.last().map_or(f64::NAN, |p| p.1),
                predicted_final_train_loss_empirical: last(&emp),
                predicted_final_train_loss_theory: last(&theory),
                max_log_deviation_empirical: deviation(&emp),
                max_log_deviation_theory: deviation(&theory),
                final_test_accuracy: crate::seeds::final_accuracy(r),
                predicted_final_test_accuracy_empirical: final_predicted_accuracy,
            }
        })
        .collect()
}

/// The predicted training-loss curves of `members` (one configuration's seeds) from the
/// empirical kernel, mean over the seeds, as `(epoch, loss)`; empty where none has one.
pub fn predicted_curve<R: PredictedRun>(members: &[&R]) -> Vec<(f64, f64)> {
    let tables: Vec<Vec<&PredictedRow>> = members
        .iter()
        .map(|r| of_kernel(r.predicted(), "empirical"))
        .filter(|t| !t.is_empty())
        .collect();
    if tables.len() != members.len() || tables.is_empty() {
        return Vec::new();
    }
    let len = tables.iter().map(Vec::len).min().unwrap_or(0);
    (0..len)
        .map(|i| {
            let mean = tables.iter().map(|t| t[i].train_loss).sum::<f64>() / tables.len() as f64;
            (tables[0][i].epoch as f64, mean)
        })
        .collect()
}

/// What the figures' notes say of the predicted curves.
pub const PREDICTED_NOTE: &str = "dotted, same colour: the curve\nthe NTK at initialization predicts\n(linearized, empirical kernel)";

/// The series of a predicted curve beside a measured curve of colour `color`: the same
/// colour, dotted, no markers, out of the legend ([`PREDICTED_NOTE`] says what it is).
pub fn predicted_series<R: PredictedRun>(
    color: ntk_plot::RGBColor,
    members: &[&R],
) -> Option<Series> {
    let points = predicted_curve(members);
    (!points.is_empty()).then(|| Series {
        label: String::new(),
        points,
        spread: None,
        color,
        dash: Dash::Dotted,
        marker: None,
        unresolved: Vec::new(),
    })
}

/// The figure `convergence_rate`, titled with `on` (the data; `title` as
/// [`ntk_plot::title_as_asked`]): per activation (and normalization), the
/// measured rate, the predicted rates and the linearized late rate against depth (one seed:
/// the rows' mean where several); `None` when there is no rate to draw.
pub fn figure(
    rows: &[ConvergenceRow],
    (on, title): (Option<&str>, Option<&str>),
) -> Option<Figure> {
    if rows.is_empty() {
        return None;
    }
    let mut families: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.activation.clone(), r.normalization.clone()))
        .collect();
    families.sort();
    families.dedup();
    type Pick = fn(&ConvergenceRow) -> Option<f64>;
    let measures: [(&str, Pick, Dash, Option<Marker>); 4] = [
        (
            "measured",
            |r| r.measured_rate,
            Dash::Solid,
            Some(Marker::Circle),
        ),
        (
            "predicted, empirical NTK",
            |r| r.predicted_rate_empirical,
            Dash::Dashed,
            Some(Marker::Square),
        ),
        (
            "predicted, infinite width",
            |r| r.predicted_rate_theory,
            Dash::DashDot,
            Some(Marker::Triangle),
        ),
        (
            "−2 ln max|1 − η λ / n|, empirical",
            |r| r.asymptotic_rate_empirical,
            Dash::Dotted,
            None,
        ),
    ];
    // Several seeds of one (family, depth): the points are their means, with bars.
    let mut counts = std::collections::BTreeMap::new();
    for r in rows {
        *counts
            .entry((&r.activation, &r.normalization, r.depth))
            .or_insert(0usize) += 1;
    }
    let several = counts.values().any(|&c| c > 1);
    let mut series = Vec::new();
    for (f, (act, norm)) in families.iter().enumerate() {
        let family: Vec<&ConvergenceRow> = rows
            .iter()
            .filter(|r| &r.activation == act && &r.normalization == norm)
            .collect();
        let mut depths: Vec<usize> = family.iter().map(|r| r.depth).collect();
        depths.sort_unstable();
        depths.dedup();
        let name = ntk_plot::style::family_words(act, norm);
        for (label, pick, dash, marker) in measures {
            // Per depth: the mean over seeds, and their min..max.
            let stats: Vec<(f64, f64, f64, f64)> = depths
                .iter()
                .filter_map(|&d| {
                    let v: Vec<f64> = family
                        .iter()
                        .filter(|r| r.depth == d)
                        .filter_map(|r| pick(r))
                        .filter(|v| v.is_finite() && *v > 0.0)
                        .collect();
                    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
                    (!v.is_empty()).then_some((d as f64, mean, lo, hi))
                })
                .collect();
            if stats.is_empty() {
                continue;
            }
            series.push(Series {
                label: format!("{name}: {label}"),
                points: stats.iter().map(|p| (p.0, p.1)).collect(),
                spread: several.then(|| Spread::Bars(stats.iter().map(|p| (p.2, p.3)).collect())),
                color: ramp(f, families.len().max(2)),
                dash,
                // A line alone draws nothing at one depth (one run): a marker there.
                marker: marker.or((stats.len() == 1).then_some(Marker::Diamond)),
                unresolved: Vec::new(),
            });
        }
    }
    let singular: Vec<String> = families
        .iter()
        .filter(|(a, n)| {
            rows.iter()
                .filter(|r| &r.activation == a && &r.normalization == n)
                .any(|r| r.kappa.is_none())
        })
        .map(|(a, n)| ntk_plot::style::family_words(a, n))
        .collect();
    let mut note =
        "rate: least-squares slope of −ln L\nover the middle half of training".to_string();
    if several {
        note += "\npoints: mean over seeds;\nbars: their min to max";
    }
    let flat: Vec<String> = families
        .iter()
        .filter(|(a, n)| {
            rows.iter()
                .filter(|r| &r.activation == a && &r.normalization == n)
                .any(|r| r.measured_rate == Some(0.0))
        })
        .map(|(a, n)| ntk_plot::style::family_words(a, n))
        .collect();
    if !flat.is_empty() {
        note += &format!(
            "\nrate 0 (the loss does not move over\nthe window), not drawn: {}",
            flat.join(", ")
        );
    }
    if !singular.is_empty() {
        note += &format!(
            "\nno late rate drawn where the kernel\nis singular (λ_min ≤ 0 in f64): {}",
            singular.join(", ")
        );
    }
    if series.is_empty() {
        // No rate to draw (runs too short for the middle half, kernels singular).
        return None;
    }
    Some(Figure {
        title: ntk_plot::title_as_asked(
            title,
            || match on {
                Some(d) => format!("Convergence rate against depth ({d})"),
                None => "Convergence rate of the training loss against depth".into(),
            },
            "Convergence rate against depth",
        ),
        x_label: "depth (hidden layers)".into(),
        y_label: "rate: slope of −ln L per epoch (log scale)".into(),
        x_scale: Scale::Integer,
        y_scale: Scale::Log,
        series,
        note: Some(note),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slope over the middle half of an exact exponential is its rate; the transient
    /// before and the plateau after are not in the window.
    #[test]
    fn the_middle_rate_of_an_exponential_is_its_rate() {
        let points: Vec<(f64, f64)> = (1..=100)
            .map(|e| {
                let e = e as f64;
                let y = if e < 20.0 {
                    50.0
                } else if e > 80.0 {
                    1e-9
                } else {
                    3.0 * (-0.07 * e).exp()
                };
                (e, y)
            })
            .collect();
        let r = middle_rate(&points).unwrap();
        assert!((r - 0.07).abs() < 1e-12, "{r}");
        assert_eq!(middle_rate(&points[..3]), None);
        // A flat curve with rounding noise: rate 0.
        let flat: Vec<(f64, f64)> = (1..=100)
            .map(|e| (e as f64, 0.5 * (1.0 + 1e-9 * ((e * 7) % 3) as f64)))
            .collect();
        assert_eq!(middle_rate(&flat), Some(0.0));
    }

    /// A run too short for a rate, of a singular kernel (the one-step run that reads
    /// lambda_max): nothing to draw, so no figure and no error.
    #[test]
    fn no_rate_draws_no_figure() {
        let row = ConvergenceRow {
            id: "x".into(),
            depth: 1,
            activation: "linear".into(),
            normalization: "none".into(),
            lr: 1.0,
            seed: 1,
            epochs: 1,
            kappa: None,
            singular_empirical: Some(true),
            rank_empirical: Some(784),
            inverse_kappa: None,
            measured_rate: None,
            predicted_rate_empirical: None,
            predicted_rate_theory: None,
            asymptotic_rate_empirical: None,
            asymptotic_rate_theory: None,
            final_train_loss: 1.0,
            predicted_final_train_loss_empirical: Some(1.0),
            predicted_final_train_loss_theory: None,
            max_log_deviation_empirical: Some(0.0),
            max_log_deviation_theory: None,
            final_test_accuracy: None,
            predicted_final_test_accuracy_empirical: None,
        };
        // Issue 65, fifth hostile round: convergence.csv wrote such a rate as "NaN" where
        // the predicted rates beside it are empty; now empty too.
        let mut csv = csv::Writer::from_writer(Vec::new());
        csv.serialize(&row).unwrap();
        let text = String::from_utf8(csv.into_inner().unwrap()).unwrap();
        assert!(!text.contains("NaN"), "{text}");
        let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
        let values: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
        let at = header.iter().position(|h| *h == "measured_rate").unwrap();
        assert_eq!(values[at], "", "{text}");
        assert!(figure(&[row], (None, None)).is_none());
    }
}
