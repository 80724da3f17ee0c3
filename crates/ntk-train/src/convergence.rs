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
//! the middle half of training (epochs `E/4 .. 3E/4` of the `E` the run plans), per step when
//! each epoch is one full-batch step: the speed once the first transient has passed and
//! before the curve flattens. Only runs that have ended are rated ([`Ended`]): one running,
//! interrupted or failed has trained part of its epochs, whose middle half is not training's
//! ([`unrated`]; hundred-and-fifty-second hostile round, second review, D1).

use ntk_plot::{Dash, Figure, Marker, Scale, Series, Spread, ramp};
use std::collections::{BTreeMap, BTreeSet};

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

/// How a run rated in `convergence.csv` ended (its `status`, as `sweep.csv` says it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// It trained every epoch it plans.
    Finished,
    /// It stopped where its loss diverged: its measured rate is empty unless it reached
    /// the end of the middle half ([`window_rate`]).
    Diverged,
    /// Running, interrupted or failed: never a row of `convergence.csv`; the figure's note
    /// counts such a run among those of its point ([`unrated_rows`]).
    NotEnded,
}

impl Ended {
    /// How `run` ended; `None` where it has not (running, interrupted or failed).
    pub fn of(run: &impl SeedRun) -> Option<Ended> {
        if run.finished() {
            Some(Ended::Finished)
        } else if run.diverged() {
            Some(Ended::Diverged)
        } else {
            None
        }
    }
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
    pub status: Ended,
    /// The epochs it trained (a diverged run: those before it diverged).
    pub epochs: usize,
    /// kappa of the empirical NTK at initialization (per output); empty where singular.
    pub kappa: Option<f64>,
    /// Whether that kernel is singular (`lambda_min < n eps lambda_max`), and its rank.
    pub singular_empirical: Option<bool>,
    pub rank_empirical: Option<usize>,
    pub inverse_kappa: Option<f64>,
    /// The least-squares slope of `-ln L` per epoch over the middle half of the training the
    /// run plans; `None` (empty in the CSV, as the predicted rates) where that half holds
    /// fewer than 3 epochs or a loss that is not positive and finite, or where the run
    /// diverged before its end.
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
    window_rate(points, last)
}

/// [`middle_rate`] over the middle half of `0 .. last` (`last`: the epochs training plans),
/// `None` where the points stop before that half's end (a run that diverged there: the
/// slope of the part it reached is not the half's).
pub fn window_rate(points: &[(f64, f64)], last: f64) -> Option<f64> {
    let (lo, hi) = (last / 4.0, 3.0 * last / 4.0);
    let reached = points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    if reached < hi {
        return None;
    }
    let mid: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.0 >= lo && p.0 <= hi)
        .map(|&(x, y)| (x, y))
        .collect();
    // A loss that is not positive and finite has no logarithm to fit: an infinite one (a
    // predicted curve past the stability limit overflows) made the slope NaN
    // (hundred-and-fifty-fifth hostile round, second review, D1).
    if mid.len() < 3 || mid.iter().any(|p| !(p.1.is_finite() && p.1 > 0.0)) {
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

/// The runs that carry a prediction but have not ended (running, interrupted or failed):
/// left out of [`rows`] and the figure, which the collect says.
pub fn unrated<R: PredictedRun>(runs: &[R]) -> impl Iterator<Item = &R> {
    runs.iter()
        .filter(|r| !r.predicted().is_empty() && Ended::of(*r).is_none())
}

/// The runs of [`unrated`] as rows with no rate ([`Ended::NotEnded`]), for the figure alone:
/// its note names them among the runs of their point, which are then fewer than the seeds
/// (hundred-and-fifty-third hostile round, N1: "mean over seeds" of 1 of 3, unsaid).
pub fn unrated_rows<R: PredictedRun>(runs: &[R]) -> Vec<ConvergenceRow> {
    unrated(runs)
        .map(|r| ConvergenceRow {
            measured_rate: None,
            predicted_rate_empirical: None,
            predicted_rate_theory: None,
            asymptotic_rate_empirical: None,
            asymptotic_rate_theory: None,
            ..row(r, Ended::NotEnded)
        })
        .collect()
}

/// The rows of the runs that carry a prediction and have ended ([`Ended`]), in the runs'
/// order.
pub fn rows<R: PredictedRun>(runs: &[R]) -> Vec<ConvergenceRow> {
    runs.iter()
        .filter(|r| !r.predicted().is_empty() && !r.epochs().is_empty())
        .filter_map(|r| Some((r, Ended::of(r)?)))
        .map(|(r, status)| row(r, status))
        .collect()
}

/// The row of run `r`, which ended as `status`.
fn row<R: PredictedRun>(r: &R, status: Ended) -> ConvergenceRow {
    let measured: Vec<(f64, f64)> = r
        .epochs()
        .iter()
        .map(|m| (m.epoch as f64, m.train_loss))
        .collect();
    // The epochs training plans: the predicted curve's (written for every planned
    // epoch before the first step); a finished run measured each of them.
    let planned = r
        .predicted()
        .iter()
        .map(|p| p.epoch as f64)
        .chain(measured.last().map(|m| m.0))
        .fold(0.0, f64::max);
    // A predicted curve over the planned epochs (its rate), and over those measured
    // (its deviation from the measured one and its last loss).
    let full = |kernel: &str| -> Option<Vec<(f64, f64)>> {
        let rows = of_kernel(r.predicted(), kernel);
        (!rows.is_empty()).then(|| {
            rows.iter()
                .map(|p| (p.epoch as f64, p.train_loss))
                .collect()
        })
    };
    let predicted = |kernel: &str| -> Option<Vec<(f64, f64)>> {
        full(kernel).map(|c| c.into_iter().take(measured.len()).collect())
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
        // The last evaluated epoch's: none where its outputs were not finite, never an
        // earlier epoch's (hundred-and-thirty-sixth hostile round, D1).
        .find(|p| p.test_loss.is_some())
        .and_then(|p| p.test_accuracy);
    let (depth, activation, normalization) = r.configuration();
    ConvergenceRow {
        id: r.id().to_string(),
        depth,
        activation: activation.to_string(),
        normalization: normalization.to_string(),
        lr: r.lr(),
        seed: r.seed(),
        status,
        epochs: r.epochs().len(),
        kappa,
        inverse_kappa: kappa.map(|k| 1.0 / k),
        measured_rate: window_rate(&measured, planned),
        predicted_rate_empirical: full("empirical").as_deref().and_then(middle_rate),
        predicted_rate_theory: full("theory").as_deref().and_then(middle_rate),
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

/// One rate the figure draws: its legend words, its short name in the note, the row's
/// value, and its line.
#[derive(Clone, Copy)]
struct Measure {
    label: &'static str,
    short: &'static str,
    pick: fn(&ConvergenceRow) -> Option<f64>,
    dash: Dash,
    marker: Option<Marker>,
}

/// The figure's rates, in legend order.
const MEASURES: [Measure; 4] = [
    Measure {
        label: "measured",
        short: "measured",
        pick: |r| r.measured_rate,
        dash: Dash::Solid,
        marker: Some(Marker::Circle),
    },
    Measure {
        label: "predicted, empirical NTK",
        short: "empirical NTK",
        pick: |r| r.predicted_rate_empirical,
        dash: Dash::Dashed,
        marker: Some(Marker::Square),
    },
    Measure {
        label: "predicted, infinite width",
        short: "infinite width",
        pick: |r| r.predicted_rate_theory,
        dash: Dash::DashDot,
        marker: Some(Marker::Triangle),
    },
    Measure {
        label: "−2 ln max|1 − η λ / n|, empirical",
        short: "late rate",
        pick: |r| r.asymptotic_rate_empirical,
        dash: Dash::Dotted,
        marker: None,
    },
];

/// `MEASURES`' late rate: empty for a singular kernel, which the note says by family (so
/// such an empty value is not counted among the values left out).
const LATE: usize = 3;

/// `MEASURES`' measured rate.
const MEASURED: usize = 0;

/// The runs drawn in one colour: a family (activation, normalization), and one lr of it
/// where the family has an lr axis ([`rate_groups`]); `lr` is `None` where the family's
/// seeds pool at each depth whatever lr each ran (one lr for all, or each seed its own, as
/// experiments/convergence's `n / lambda_max`).
#[derive(Clone, Debug, PartialEq)]
pub struct RateGroup {
    pub activation: String,
    pub normalization: String,
    pub lr: Option<f64>,
}

impl RateGroup {
    /// Whether row `r` is drawn in this group.
    fn holds(&self, r: &ConvergenceRow) -> bool {
        r.activation == self.activation
            && r.normalization == self.normalization
            && self.lr.is_none_or(|lr| r.lr.to_bits() == lr.to_bits())
    }

    /// The group in the legend and the note: "ReLU", or "ReLU (lr 0.2)" where it is one lr
    /// of several, as the sweep's other figures name a configuration's lr.
    pub fn label(&self) -> String {
        let name = ntk_plot::style::family_words(&self.activation, &self.normalization);
        match self.lr {
            Some(lr) => format!("{name} (lr {})", ntk_plot::style::three_digits(lr)),
            None => name,
        }
    }
}

/// Whether a family's rows have an lr axis: some seed ran several lrs at one depth (a
/// grid, as a sweep's `lrs`). Without one each seed ran one lr there, and the seeds are
/// one configuration's.
fn lr_axis(family: &[&ConvergenceRow]) -> bool {
    let mut lrs: BTreeMap<(usize, u64), BTreeSet<u64>> = BTreeMap::new();
    for r in family {
        lrs.entry((r.depth, r.seed))
            .or_default()
            .insert(r.lr.to_bits());
    }
    lrs.values().any(|l| l.len() > 1)
}

/// The groups of `rows`, by family then lr: one per family, or one per lr of a family with
/// an lr axis, so that a point's mean and bars are over the seeds of one configuration
/// (hundred-and-thirty-first hostile round, second review, D1: two lrs were drawn as one
/// point "over seeds").
pub fn rate_groups(rows: &[ConvergenceRow]) -> Vec<RateGroup> {
    let mut families: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.activation.as_str(), r.normalization.as_str()))
        .collect();
    families.sort_unstable();
    families.dedup();
    let mut groups = Vec::new();
    for (activation, normalization) in families {
        let family: Vec<&ConvergenceRow> = rows
            .iter()
            .filter(|r| r.activation == activation && r.normalization == normalization)
            .collect();
        let lrs: Vec<Option<f64>> = if lr_axis(&family) {
            let mut lrs: Vec<f64> = family.iter().map(|r| r.lr).collect();
            lrs.sort_by(f64::total_cmp);
            lrs.dedup_by(|a, b| a.to_bits() == b.to_bits());
            lrs.into_iter().map(Some).collect()
        } else {
            vec![None]
        };
        groups.extend(lrs.into_iter().map(|lr| RateGroup {
            activation: activation.to_string(),
            normalization: normalization.to_string(),
            lr,
        }));
    }
    groups
}

/// Why a run's rate is not drawn on the figure's log axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NotDrawn {
    /// No rate: the window holds fewer than 3 epochs, or a loss not positive and finite.
    Missing,
    /// Rate 0: the loss does not move over the window.
    Zero,
    /// A negative rate: the loss grows (the predicted one does above the lr stability limit).
    Negative,
    /// A rate that is not finite.
    NotFinite,
    /// No measured rate: the run diverged before the window's end.
    Diverged,
    /// No rate: the run has not ended (running, interrupted or failed).
    NotEnded,
}

impl NotDrawn {
    /// The value to draw, or why there is none.
    fn of(v: Option<f64>) -> Result<f64, NotDrawn> {
        match v {
            None => Err(NotDrawn::Missing),
            Some(v) if !v.is_finite() => Err(NotDrawn::NotFinite),
            Some(v) if v > 0.0 => Ok(v),
            Some(0.0) => Err(NotDrawn::Zero),
            Some(_) => Err(NotDrawn::Negative),
        }
    }

    /// The note's heading over the runs left out for this reason.
    fn heading(self) -> &'static str {
        match self {
            NotDrawn::Missing => {
                "no rate (under 3 epochs in the window,\nor a loss not positive and finite),\nnot drawn:"
            }
            NotDrawn::Zero => "rate 0 (the loss does not move over\nthe window), not drawn:",
            NotDrawn::Negative => {
                "rate < 0 (the loss grows, as the predicted\none does above the lr stability limit),\nnot drawn:"
            }
            NotDrawn::NotFinite => "rate not finite, not drawn:",
            NotDrawn::NotEnded => {
                "not ended (running, interrupted or\nfailed: their rates would be of part of\ntraining), not drawn:"
            }
            NotDrawn::Diverged => {
                "no measured rate (diverged before the\nmiddle half's end), not drawn:"
            }
        }
    }
}

/// One point of a rate series: at `depth`, the mean of the drawn values (positive and
/// finite) and their min and max, over `drawn` of the group's `runs` runs there.
#[derive(Clone, Debug, PartialEq)]
pub struct RatePoint {
    pub depth: usize,
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
    pub drawn: usize,
    pub runs: usize,
}

/// The points of one rate of one group: `label` in the legend, `group` the index in
/// [`RatePlan::groups`] (its colour).
#[derive(Clone, Debug, PartialEq)]
pub struct RateSeries {
    pub group: usize,
    pub label: String,
    pub points: Vec<RatePoint>,
    measure: usize,
}

/// `count` of the `runs` runs of group `group` (its label) at `depth` whose rate `measure`
/// (its short name) is not drawn, for reason `why`.
#[derive(Clone, Debug, PartialEq)]
pub struct LeftOut {
    pub group: String,
    pub depth: usize,
    pub measure: &'static str,
    pub why: NotDrawn,
    pub count: usize,
    pub runs: usize,
}

/// What the convergence figure draws of its rows ([`rate_plan`]) and what it leaves out.
#[derive(Clone, Debug, PartialEq)]
pub struct RatePlan {
    pub groups: Vec<RateGroup>,
    pub series: Vec<RateSeries>,
    pub left_out: Vec<LeftOut>,
    /// Some point is over several runs (seeds): the points are means, with bars.
    pub several: bool,
    /// Some point pools seeds that ran different lrs (each its own, no lr axis).
    pub own_lrs: bool,
}

/// The point of rate `m` over `at` (one group's runs at one depth), `None` where no run
/// has a value to draw, and how many runs are left out for each reason.
fn point(at: &[&ConvergenceRow], m: usize) -> (Option<RatePoint>, BTreeMap<NotDrawn, usize>) {
    let mut drawn = Vec::new();
    let mut left = BTreeMap::new();
    for r in at {
        if r.status == Ended::NotEnded {
            *left.entry(NotDrawn::NotEnded).or_insert(0) += 1;
            continue;
        }
        match NotDrawn::of((MEASURES[m].pick)(r)) {
            Ok(v) => drawn.push(v),
            // A singular kernel has no late rate: the note's singular line says so.
            Err(NotDrawn::Missing) if m == LATE && r.kappa.is_none() => {}
            Err(NotDrawn::Missing) if m == MEASURED && r.status == Ended::Diverged => {
                *left.entry(NotDrawn::Diverged).or_insert(0) += 1
            }
            Err(why) => *left.entry(why).or_insert(0) += 1,
        }
    }
    let point = (!drawn.is_empty()).then(|| RatePoint {
        depth: at[0].depth,
        mean: drawn.iter().sum::<f64>() / drawn.len() as f64,
        lo: drawn.iter().copied().fold(f64::INFINITY, f64::min),
        hi: drawn.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        drawn: drawn.len(),
        runs: at.len(),
    });
    (point, left)
}

/// The series of the convergence figure and the values it leaves out: per group
/// ([`rate_groups`]) and rate, per depth the mean over that group's runs of the values a
/// log axis can draw; every value that is missing, zero, negative or not finite is counted
/// in `left_out` by group, depth and rate (hundred-and-thirty-first hostile round, second
/// review, D1: negative predicted rates were dropped from their series, unsaid, while the
/// measured series kept those runs).
pub fn rate_plan(rows: &[ConvergenceRow]) -> RatePlan {
    let mut plan = RatePlan {
        groups: rate_groups(rows),
        series: Vec::new(),
        left_out: Vec::new(),
        several: false,
        own_lrs: false,
    };
    for (g, group) in plan.groups.iter().enumerate() {
        let members: Vec<&ConvergenceRow> = rows.iter().filter(|r| group.holds(r)).collect();
        let mut depths: Vec<usize> = members.iter().map(|r| r.depth).collect();
        depths.sort_unstable();
        depths.dedup();
        let at: Vec<Vec<&ConvergenceRow>> = depths
            .iter()
            .map(|&d| members.iter().copied().filter(|r| r.depth == d).collect())
            .collect();
        for runs in &at {
            plan.several |= runs.len() > 1;
            plan.own_lrs |= runs.iter().any(|r| r.lr.to_bits() != runs[0].lr.to_bits());
        }
        for (m, measure) in MEASURES.iter().enumerate() {
            let mut points = Vec::new();
            for runs in &at {
                let (p, left) = point(runs, m);
                points.extend(p);
                plan.left_out
                    .extend(left.into_iter().map(|(why, count)| LeftOut {
                        group: group.label(),
                        depth: runs[0].depth,
                        measure: measure.short,
                        why,
                        count,
                        runs: runs.len(),
                    }));
            }
            if !points.is_empty() {
                plan.series.push(RateSeries {
                    group: g,
                    label: format!("{}: {}", group.label(), measure.label),
                    points,
                    measure: m,
                });
            }
        }
    }
    plan
}

/// The note's longest line the left-out lines are wrapped to, in characters: about the
/// width of the note's other lines, so that the side legend does not widen for them.
const NOTE_WIDTH: usize = 44;

/// `text` broken at spaces into lines of at most `width` characters, the lines after the
/// first indented: the side legend draws each note line as it is, as wide as it is. A
/// parenthesis ("(lr 0.45)", "(1 of 3 runs)") stays on one line, as does a longer word.
fn wrap(text: &str, width: usize) -> String {
    let mut units: Vec<String> = Vec::new();
    let mut open = false;
    for word in text.split(' ') {
        match units.last_mut() {
            Some(unit) if open => {
                unit.push(' ');
                unit.push_str(word);
            }
            _ => units.push(word.to_string()),
        }
        open = (open || word.starts_with('(')) && !word.contains(')');
    }
    let mut lines: Vec<String> = Vec::new();
    for unit in units {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + unit.chars().count() <= width => {
                line.push(' ');
                line.push_str(&unit);
            }
            Some(_) => lines.push(format!("  {unit}")),
            None => lines.push(unit),
        }
    }
    lines.join("\n")
}

/// The rates of one point left out for one reason, by how many runs: `(count, short names)`.
type ByCount<'a> = Vec<(usize, Vec<&'a str>)>;

/// The note's lines for the values left out for reason `why`: per group and depth the rates
/// and how many of the runs there ("ReLU (lr 0.45), depth 2: empirical NTK, late rate
/// (1 of 1 run)"), depths with the same words in one line; empty where none is.
fn left_out_lines(left_out: &[LeftOut], why: NotDrawn) -> Vec<String> {
    // (group, depth) -> the rates by count; groups in the plan's order, then by depth.
    let mut points: Vec<(&str, usize, usize, ByCount)> = Vec::new();
    for l in left_out.iter().filter(|l| l.why == why) {
        let at = match points
            .iter()
            .position(|p| (p.0, p.1) == (l.group.as_str(), l.depth))
        {
            Some(at) => at,
            None => {
                points.push((&l.group, l.depth, l.runs, Vec::new()));
                points.len() - 1
            }
        };
        let counts = &mut points[at].3;
        match counts.iter_mut().find(|c| c.0 == l.count) {
            Some(c) => c.1.push(l.measure),
            None => counts.push((l.count, vec![l.measure])),
        }
    }
    let first = |group: &str| left_out.iter().position(|l| l.group == group);
    points.sort_by_key(|p| (first(p.0), p.1));
    // Merge the depths of a group where the words are the same.
    let mut lines: Vec<(&str, Vec<usize>, String)> = Vec::new();
    for (group, depth, runs, counts) in points {
        let words = counts
            .iter()
            .map(|(count, measures)| {
                let s = if runs == 1 { "" } else { "s" };
                format!("{} ({count} of {runs} run{s})", measures.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ");
        match lines.last_mut() {
            Some(last) if last.0 == group && last.2 == words => last.1.push(depth),
            _ => lines.push((group, vec![depth], words)),
        }
    }
    lines
        .into_iter()
        .map(|(group, depths, words)| {
            let list: Vec<String> = depths.iter().map(usize::to_string).collect();
            let s = if depths.len() == 1 { "" } else { "s" };
            wrap(
                &format!("{group}, depth{s} {}: {words}", list.join(", ")),
                NOTE_WIDTH,
            )
        })
        .collect()
}

/// The convergence figure's note: what a rate is, what a point is (the mean over one
/// configuration's seeds), the runs whose rates are not drawn and why, the families
/// without a late rate.
fn note(rows: &[ConvergenceRow], plan: &RatePlan) -> String {
    let mut note =
        "rate: least-squares slope of −ln L\nover the middle half of training".to_string();
    if plan.several && plan.own_lrs {
        note += "\npoints: mean over seeds, each at its\nown lr; bars: their min to max";
    } else if plan.several {
        note += "\npoints: mean over seeds;\nbars: their min to max";
    }
    for why in [
        NotDrawn::NotEnded,
        NotDrawn::Missing,
        NotDrawn::Zero,
        NotDrawn::Negative,
        NotDrawn::NotFinite,
        NotDrawn::Diverged,
    ] {
        let lines = left_out_lines(&plan.left_out, why);
        if !lines.is_empty() {
            note += "\n";
            note += why.heading();
            for line in lines {
                note += "\n";
                note += &line;
            }
        }
    }
    let mut singular: Vec<(&str, &str)> = rows
        .iter()
        .filter(|r| r.kappa.is_none())
        .map(|r| (r.activation.as_str(), r.normalization.as_str()))
        .collect();
    singular.sort_unstable();
    singular.dedup();
    let singular: Vec<String> = singular
        .into_iter()
        .map(|(a, n)| ntk_plot::style::family_words(a, n))
        .collect();
    if !singular.is_empty() {
        note += &format!(
            "\nno late rate drawn where the kernel\nis singular (λ_min ≤ 0 in f64): {}",
            singular.join(", ")
        );
    }
    note
}

/// The figure `convergence_rate`, titled with `on` (the data; `title` as
/// [`ntk_plot::title_as_asked`]): per family (and lr, where a seed ran several) the
/// measured rate, the predicted rates and the linearized late rate against depth, each
/// point the mean over that configuration's seeds ([`rate_plan`]), the values a log axis
/// cannot draw named in the note; `None` when there is no rate to draw.
pub fn figure(
    rows: &[ConvergenceRow],
    (on, title): (Option<&str>, Option<&str>),
) -> Option<Figure> {
    let plan = rate_plan(rows);
    if plan.series.is_empty() {
        // No rate to draw (runs too short for the middle half, kernels singular).
        return None;
    }
    let colours = plan.groups.len().max(2);
    let series = plan
        .series
        .iter()
        .map(|s| {
            let measure = MEASURES[s.measure];
            Series {
                label: s.label.clone(),
                points: s.points.iter().map(|p| (p.depth as f64, p.mean)).collect(),
                spread: plan
                    .several
                    .then(|| Spread::Bars(s.points.iter().map(|p| (p.lo, p.hi)).collect())),
                color: ramp(s.group, colours),
                dash: measure.dash,
                // A line alone draws nothing at one depth (one run): a marker there.
                marker: measure
                    .marker
                    .or((s.points.len() == 1).then_some(Marker::Diamond)),
                unresolved: Vec::new(),
            }
        })
        .collect();
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
        note: Some(note(rows, &plan)),
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
        // An infinite loss in the window (a predicted curve that overflows): no rate, never
        // NaN.
        let mut overflow = points.clone();
        overflow[40].1 = f64::INFINITY;
        assert_eq!(middle_rate(&overflow), None);
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
            status: Ended::Finished,
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

    /// A run of family `activation` at `depth`, `lr` and `seed` whose four rates are
    /// `rates` (measured, predicted empirical and infinite width, late), kernel regular.
    fn run(
        activation: &str,
        depth: usize,
        (lr, seed): (f64, u64),
        rates: [f64; 4],
    ) -> ConvergenceRow {
        ConvergenceRow {
            id: format!("d{depth}_{activation}_lr{lr}_s{seed}"),
            depth,
            activation: activation.into(),
            normalization: "none".into(),
            lr,
            seed,
            status: Ended::Finished,
            epochs: 200,
            kappa: Some(10.0),
            singular_empirical: Some(false),
            rank_empirical: Some(60),
            inverse_kappa: Some(0.1),
            measured_rate: Some(rates[0]),
            predicted_rate_empirical: Some(rates[1]),
            predicted_rate_theory: Some(rates[2]),
            asymptotic_rate_empirical: Some(rates[3]),
            asymptotic_rate_theory: Some(rates[3]),
            final_train_loss: 0.1,
            predicted_final_train_loss_empirical: Some(0.1),
            predicted_final_train_loss_theory: Some(0.1),
            max_log_deviation_empirical: Some(0.0),
            max_log_deviation_theory: Some(0.0),
            final_test_accuracy: None,
            predicted_final_test_accuracy_empirical: None,
        }
    }

    fn labels(plan: &RatePlan) -> Vec<&str> {
        plan.series.iter().map(|s| s.label.as_str()).collect()
    }

    /// Hundred-and-thirty-first hostile round, second review, D1: one family's runs at two
    /// lrs (each seed ran both) were drawn as one point "mean over seeds". Now one series
    /// per lr, named as the sweep's other figures name it, each point the mean over that
    /// lr's seeds.
    #[test]
    fn two_lrs_of_a_family_draw_two_series_named_by_lr() {
        let rows = [
            run("relu", 1, (0.05, 1), [0.0050, 0.0051, 0.0060, 1e-4]),
            run("relu", 1, (0.05, 2), [0.0070, 0.0071, 0.0080, 3e-4]),
            run("relu", 1, (0.2, 1), [0.0020, 0.0021, 0.0030, 4e-4]),
            run("relu", 1, (0.2, 2), [0.0040, 0.0041, 0.0050, 6e-4]),
        ];
        let plan = rate_plan(&rows);
        assert_eq!(
            labels(&plan),
            [
                "ReLU (lr 0.05): measured",
                "ReLU (lr 0.05): predicted, empirical NTK",
                "ReLU (lr 0.05): predicted, infinite width",
                "ReLU (lr 0.05): −2 ln max|1 − η λ / n|, empirical",
                "ReLU (lr 0.2): measured",
                "ReLU (lr 0.2): predicted, empirical NTK",
                "ReLU (lr 0.2): predicted, infinite width",
                "ReLU (lr 0.2): −2 ln max|1 − η λ / n|, empirical",
            ]
        );
        let measured = |i: usize| &plan.series[i].points[0];
        assert!(
            (measured(0).mean - 0.006).abs() < 1e-15,
            "{:?}",
            measured(0)
        );
        assert_eq!((measured(0).lo, measured(0).hi), (0.005, 0.007));
        assert!(
            (measured(4).mean - 0.003).abs() < 1e-15,
            "{:?}",
            measured(4)
        );
        assert_eq!((measured(4).lo, measured(4).hi), (0.002, 0.004));
        assert!((plan.series[7].points[0].mean - 5e-4).abs() < 1e-15);
        assert!(plan.series.iter().all(|s| s.points[0].drawn == 2));
        // Two colours, one per lr; bars over seeds; no lr pooled.
        assert_eq!(plan.series[0].group, 0);
        assert_eq!(plan.series[4].group, 1);
        assert!(plan.several && !plan.own_lrs && plan.left_out.is_empty());
        // One seed at two lrs: two series still, one run per point, no bars.
        let one_seed = rate_plan(&[rows[0].clone(), rows[2].clone()]);
        assert_eq!(one_seed.groups.len(), 2);
        assert!(!one_seed.several);
        let f = figure(&rows, (None, None)).unwrap();
        assert_eq!(f.series[4].label, "ReLU (lr 0.2): measured");
        assert!(
            f.note
                .unwrap()
                .contains("points: mean over seeds;\nbars: their min to max")
        );
    }

    /// Hundred-and-thirty-first hostile round, second review, D1: a run above the stability
    /// limit has negative predicted and late rates; they were dropped from their series
    /// unsaid while the measured series kept the run. Now every such value is counted in
    /// the note by group, depth and rate, with how many of the point's runs it is.
    #[test]
    fn negative_rates_are_counted_in_the_note() {
        // One seed, lrs 0.1 and 0.45 (above the limit): the lr 0.45 point has its measured
        // rate only, and the note says which rates are left out.
        let rows = [
            run("relu", 2, (0.1, 1), [0.0072, 0.0079, 0.0113, 5.1e-4]),
            run("relu", 2, (0.45, 1), [0.0086, -0.366, -0.214, -0.366]),
        ];
        let plan = rate_plan(&rows);
        assert_eq!(
            labels(&plan),
            [
                "ReLU (lr 0.1): measured",
                "ReLU (lr 0.1): predicted, empirical NTK",
                "ReLU (lr 0.1): predicted, infinite width",
                "ReLU (lr 0.1): −2 ln max|1 − η λ / n|, empirical",
                "ReLU (lr 0.45): measured",
            ]
        );
        assert_eq!(plan.left_out.len(), 3);
        assert!(plan.left_out.iter().all(|l| l.why == NotDrawn::Negative
            && l.group == "ReLU (lr 0.45)"
            && (l.depth, l.count, l.runs) == (2, 1, 1)));
        let note = figure(&rows, (None, None)).unwrap().note.unwrap();
        assert!(
            note.contains(
                "rate < 0 (the loss grows, as the predicted\none does above the lr stability limit),\nnot drawn:\nReLU (lr 0.45), depth 2: empirical NTK,\n  infinite width, late rate (1 of 1 run)"
            ),
            "{note}"
        );
        // Seeds pooled (each at its own lr, as n / lambda_max): one seed's negative
        // prediction leaves that point's prediction over the other two, and the note says
        // 1 of 3 runs while the measured point stays over all three.
        let pooled = [
            run("relu", 2, (0.30, 1), [0.004, 0.005, 0.006, 1e-4]),
            run("relu", 2, (0.31, 2), [0.006, -0.1, 0.008, 2e-4]),
            run("relu", 2, (0.32, 3), [0.008, 0.007, 0.010, 3e-4]),
        ];
        let plan = rate_plan(&pooled);
        assert!(plan.own_lrs && plan.several);
        assert_eq!(plan.series[0].label, "ReLU: measured");
        assert_eq!(
            (
                plan.series[0].points[0].drawn,
                plan.series[0].points[0].runs
            ),
            (3, 3)
        );
        let predicted = &plan.series[1].points[0];
        assert_eq!((predicted.drawn, predicted.runs), (2, 3));
        assert!((predicted.mean - 0.006).abs() < 1e-15, "{predicted:?}");
        // Two depths with the same rates left out: one line.
        let two_depths = [
            rows[1].clone(),
            ConvergenceRow {
                depth: 3,
                ..rows[1].clone()
            },
        ];
        let note = figure(&two_depths, (None, None)).unwrap().note.unwrap();
        assert!(
            note.ends_with(
                "\nReLU, depths 2, 3: empirical NTK, infinite\n  width, late rate (1 of 1 run)"
            ),
            "{note}"
        );
        let note = figure(&pooled, (None, None)).unwrap().note.unwrap();
        assert!(
            note.contains("points: mean over seeds, each at its\nown lr; bars: their min to max"),
            "{note}"
        );
        assert!(
            note.contains("\nReLU, depth 2: empirical NTK (1 of 3 runs)"),
            "{note}"
        );
        // Zero, not finite and missing rates are counted too.
        let mut odd = run("relu", 1, (0.1, 1), [0.0, f64::INFINITY, 0.002, 1e-4]);
        odd.predicted_rate_theory = None;
        let note = figure(&[odd], (None, None)).unwrap().note.unwrap();
        for line in [
            "not drawn:\nReLU, depth 1: infinite width (1 of 1 run)",
            "the window), not drawn:\nReLU, depth 1: measured (1 of 1 run)",
            "rate not finite, not drawn:\nReLU, depth 1: empirical NTK (1 of 1 run)",
        ] {
            assert!(note.contains(line), "{line:?} in {note}");
        }
    }

    /// One lr per family (the committed experiments): the labels and the note are as they
    /// were, no lr named; a singular kernel's missing late rate is said by family only.
    #[test]
    fn one_lr_per_family_keeps_the_labels() {
        let mut rows = vec![
            run("relu", 1, (0.2, 1), [0.004, 0.005, 0.006, 1e-4]),
            run("relu", 1, (0.2, 2), [0.006, 0.007, 0.008, 2e-4]),
            run("relu", 2, (0.2, 1), [0.005, 0.006, 0.007, 3e-4]),
            run("linear", 1, (0.5, 1), [0.004, 0.005, 0.006, 1e-4]),
        ];
        rows[3].kappa = None;
        rows[3].asymptotic_rate_empirical = None;
        let plan = rate_plan(&rows);
        assert_eq!(
            labels(&plan),
            [
                "linear: measured",
                "linear: predicted, empirical NTK",
                "linear: predicted, infinite width",
                "ReLU: measured",
                "ReLU: predicted, empirical NTK",
                "ReLU: predicted, infinite width",
                "ReLU: −2 ln max|1 − η λ / n|, empirical",
            ]
        );
        assert!(plan.left_out.is_empty() && !plan.own_lrs);
        let f = figure(&rows, (None, None)).unwrap();
        assert_eq!(f.series[3].color, ramp(1, 2));
        assert_eq!(
            f.note.unwrap(),
            "rate: least-squares slope of −ln L\nover the middle half of training\npoints: mean over seeds;\nbars: their min to max\nno late rate drawn where the kernel\nis singular (λ_min ≤ 0 in f64): linear"
        );
    }

    /// A run of [`rows`]: `reached` of its 40 planned epochs trained (loss `e^{-0.05 e}`,
    /// predicted `e^{-0.04 e}` over all 40), finished, diverged or neither.
    struct Trained {
        metrics: Vec<crate::metrics::EpochMetrics>,
        predicted: Vec<PredictedRow>,
        seed: u64,
        ended: Option<Ended>,
    }

    fn trained(seed: u64, reached: usize, ended: Option<Ended>) -> Trained {
        let metrics = (1..=reached)
            .map(|epoch| crate::metrics::EpochMetrics {
                epoch,
                iteration: epoch,
                train_loss: (-0.05 * epoch as f64).exp(),
                train_accuracy: 0.5,
                test_loss: None,
                test_accuracy: None,
                lr: 0.1,
                seconds: 1.0,
                samples_per_second: 1.0,
            })
            .collect();
        let predicted = (1..=40)
            .map(|epoch| PredictedRow {
                epoch,
                iteration: epoch,
                kernel: "empirical".into(),
                train_loss: (-0.04 * epoch as f64).exp(),
                test_loss: None,
                test_accuracy: None,
            })
            .collect();
        Trained {
            metrics,
            predicted,
            seed,
            ended,
        }
    }

    impl SeedRun for Trained {
        fn configuration(&self) -> (usize, &str, &str) {
            (3, "relu", "none")
        }
        fn lr(&self) -> f64 {
            0.1
        }
        fn seed(&self) -> u64 {
            self.seed
        }
        fn finished(&self) -> bool {
            self.ended == Some(Ended::Finished)
        }
        fn diverged(&self) -> bool {
            self.ended == Some(Ended::Diverged)
        }
        fn epochs(&self) -> &[crate::metrics::EpochMetrics] {
            &self.metrics
        }
    }

    impl PredictedRun for Trained {
        fn id(&self) -> &str {
            "run"
        }
        fn predicted(&self) -> &[PredictedRow] {
            &self.predicted
        }
        fn predicted_spectrum(&self) -> &[SpectrumRow] {
            &[]
        }
    }

    /// The hundred-and-fifty-second hostile round, second review, D1: an interrupted run
    /// was rated over the epochs it reached (its "middle half" epochs 11..34 of 150) and
    /// pooled with the finished seeds. A run that has not ended is left out (and named by
    /// [`unrated`]); one that diverged before the middle half's end has no measured rate,
    /// said in the note; one that diverged after it keeps the half's rate.
    #[test]
    fn only_runs_that_have_ended_are_rated_over_the_half_they_plan() {
        let runs = [
            trained(1, 40, Some(Ended::Finished)),
            trained(2, 12, None),
            trained(3, 25, Some(Ended::Diverged)),
            trained(4, 30, Some(Ended::Diverged)),
        ];
        let unrated: Vec<u64> = unrated(&runs).map(|r| r.seed).collect();
        assert_eq!(unrated, [2]);
        let rows = rows(&runs);
        let seeds: Vec<(u64, Ended)> = rows.iter().map(|r| (r.seed, r.status)).collect();
        assert_eq!(
            seeds,
            [
                (1, Ended::Finished),
                (3, Ended::Diverged),
                (4, Ended::Diverged)
            ]
        );
        let close = |v: Option<f64>, want: f64| v.is_some_and(|v| (v - want).abs() < 1e-12);
        // Epochs 10..30 of 40: seed 3 stopped at 25, seed 4 reached 30.
        assert!(close(rows[0].measured_rate, 0.05), "{:?}", rows[0]);
        assert_eq!(rows[1].measured_rate, None);
        assert!(close(rows[2].measured_rate, 0.05), "{:?}", rows[2]);
        // The predicted rate is over the 40 planned epochs for each; the deviation and the
        // last predicted loss over the epochs measured.
        for r in &rows {
            assert!(close(r.predicted_rate_empirical, 0.04), "{r:?}");
            let e = r.epochs as f64;
            assert!(close(r.max_log_deviation_empirical, 0.01 * e), "{r:?}");
            assert!(close(
                r.predicted_final_train_loss_empirical,
                (-0.04 * e).exp()
            ));
        }
        let csv_text = {
            let mut w = csv::Writer::from_writer(Vec::new());
            w.serialize(&rows[1]).unwrap();
            String::from_utf8(w.into_inner().unwrap()).unwrap()
        };
        assert!(csv_text.contains(",status,epochs,"), "{csv_text}");
        assert!(csv_text.contains(",3,diverged,25,"), "{csv_text}");
        let note = figure(&rows, (None, None)).unwrap().note.unwrap();
        assert!(
            note.contains(
                "no measured rate (diverged before the\nmiddle half's end), not drawn:\n\
                 ReLU, depth 3: measured (1 of 3 runs)"
            ),
            "{note}"
        );
        // The hundred-and-fifty-third hostile round, N1: the run not ended is counted in
        // the note among its point's runs, with no rate of its own.
        let unrated_rows = unrated_rows(&runs);
        assert_eq!(unrated_rows.len(), 1);
        assert_eq!(unrated_rows[0].status, Ended::NotEnded);
        assert_eq!(unrated_rows[0].predicted_rate_empirical, None);
        let all: Vec<ConvergenceRow> = rows.iter().cloned().chain(unrated_rows).collect();
        let note = figure(&all, (None, None)).unwrap().note.unwrap();
        assert!(
            note.contains(
                "not ended (running, interrupted or\nfailed: their rates would be of part of\n\
                 training), not drawn:\nReLU, depth 3: measured, empirical NTK,\n  infinite \
                 width, late rate (1 of 4 runs)"
            ),
            "{note}"
        );
        assert!(note.contains("measured (1 of 4 runs)"), "{note}");
    }
}
