//! What the seeds of a sweep say, in numbers a verdict can rest on: each configuration's
//! spread over its seeds (`best.csv`), a speed measure ("converges faster": epochs to reach
//! a training loss every chosen curve reaches), and the tests between configurations
//! (`compare.csv`).
//!
//! `compare.csv` carries two readings of each pair. The first, `p` and `verdict`, is Welch's
//! t-test of the seeds' means per comparison ([`ntk_runs::stats::welch`]): a difference
//! whose two-sided p-value is at least [`ALPHA`] is "alike"; one seed on a side, or two
//! constant sides, have no spread and so no test ("untested"). With many pairs (45 for ten
//! depths) some pairs show p < 0.05 by chance. The second is the one a verdict should rest
//! on: a test that fits the measure (`test`: Welch's t on log10 of the final losses, which
//! span decades; Welch's t on the accuracies; the exact permutation test on the epoch
//! counts, which allows ties and constant samples), the 95% confidence interval of the
//! difference on that test's scale, and its p-value corrected by Holm over the family of
//! the table's comparisons on the same basis and measure (`p_holm`, `verdict_holm`: "a
//! lower", "a higher", "similar" or "not distinguishable" with these seeds). "Similar" is
//! an equivalence test, the two one-sided tests ([`ntk_runs::stats::tost`], Holm-corrected
//! over the same family: `p_tost_holm`) against a margin stated before looking
//! ([`margin`]); `seeds_for_margin` says how many seeds a side would show it.
//!
//! On the `chosen` basis each configuration is represented by the seeds its rate was not
//! chosen on ([`Chosen::held_out_seed`]); seeds that diverged are counted (`diverged_a`,
//! `diverged_b`) and left out of the values.

use ntk_runs::stats::{holm, mean_std, permutation, seeds_for_margin, standard_error, tost, welch};
use serde::Serialize;

use crate::metrics::EpochMetrics;

/// A training run as the seeds' statistics read it (the report's `RunRecord` is one):
/// its configuration, lr, whether it finished, and its epochs.
pub trait SeedRun {
    /// (depth, activation, normalization): the configuration, without lr and seed.
    fn configuration(&self) -> (usize, &str, &str);
    fn lr(&self) -> f64;
    fn seed(&self) -> u64;
    /// Finished (not diverged, running, interrupted or failed).
    fn finished(&self) -> bool;
    /// Stopped because its loss diverged.
    fn diverged(&self) -> bool;
    /// The rows of its `metrics.csv`.
    fn epochs(&self) -> &[EpochMetrics];
    /// The last epoch's training loss, when finite.
    fn final_loss(&self) -> Option<f64> {
        self.epochs()
            .last()
            .map(|m| m.train_loss)
            .filter(|l| l.is_finite())
    }
}

/// A configuration at the lr it was chosen at (a row of `best.csv`), for [`compare`].
#[derive(Clone, Copy, Debug)]
pub struct Chosen<'a> {
    pub depth: usize,
    pub activation: &'a str,
    pub normalization: &'a str,
    pub lr: f64,
    /// The seed the lr was chosen on, left out of the `chosen` comparisons (none when the
    /// grid had one rate, or no other seed ran at the chosen rate).
    pub held_out_seed: Option<u64>,
}

/// The equivalence margin of `measure`, on its test's scale, stated before looking at any
/// equivalence test: 20% in the final training loss (a ratio of 1.2, `log10(1.2)` on the log
/// scale its test uses), 1 percentage point of test accuracy, and a tenth of the training budget
/// (`epochs`) in epochs to the loss threshold. Differences inside these are below what the
/// papers' figures resolve.
pub fn margin(measure: &str, epochs: usize) -> Option<f64> {
    match measure {
        "final_train_loss" => Some(1.2f64.log10()),
        "final_test_accuracy" => Some(0.01),
        "epochs_to_threshold" if epochs > 0 => Some(0.1 * epochs as f64),
        _ => None,
    }
}

/// The level below which a two-sided p-value calls a difference real.
pub const ALPHA: f64 = ntk_runs::stats::ALPHA;

/// The sample standard deviation and the standard error of the mean of `v`, both `None`
/// for fewer than two values.
pub fn spread(v: &[f64]) -> (Option<f64>, Option<f64>) {
    match v.len() {
        0 | 1 => (None, None),
        _ => (Some(mean_std(v).1), standard_error(v)),
    }
}

/// The loss threshold of the speed measure: the largest final training loss of any seed of
/// any chosen configuration, so every chosen run reaches it by its last epoch.
pub fn loss_threshold<'a, R: SeedRun + 'a>(chosen: impl IntoIterator<Item = &'a R>) -> Option<f64> {
    chosen
        .into_iter()
        .filter_map(|r| r.final_loss())
        .reduce(f64::max)
}

/// The first epoch whose training loss is at most `threshold` (epochs count from 1).
pub fn epochs_to(run: &impl SeedRun, threshold: f64) -> Option<f64> {
    run.epochs()
        .iter()
        .find(|m| m.train_loss <= threshold)
        .map(|m| m.epoch as f64)
}

/// The final test accuracy of a run (its last evaluated epoch's).
pub fn final_accuracy(run: &impl SeedRun) -> Option<f64> {
    run.epochs().iter().rev().find_map(|m| m.test_accuracy)
}

/// One row of `compare.csv`: configuration `a` against `b` on one measure, over their
/// seeds.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct CompareRow {
    /// `chosen` (each configuration at its own chosen lr) or `lr=<value>` (both at that lr).
    pub basis: String,
    /// `final_train_loss`, `final_test_accuracy` or `epochs_to_threshold`.
    pub measure: String,
    pub depth_a: usize,
    pub activation_a: String,
    pub normalization_a: String,
    pub lr_a: f64,
    /// The seeds whose values are compared (finished).
    pub seeds_a: usize,
    /// Seeds of `a` that diverged: left out of the values.
    pub diverged_a: usize,
    pub mean_a: f64,
    pub depth_b: usize,
    pub activation_b: String,
    pub normalization_b: String,
    pub lr_b: f64,
    pub seeds_b: usize,
    pub diverged_b: usize,
    pub mean_b: f64,
    /// `mean_a - mean_b`.
    pub difference: f64,
    /// Welch's standard error of the difference; empty with one seed on either side.
    pub standard_error: Option<f64>,
    pub t: Option<f64>,
    pub df: Option<f64>,
    /// Two-sided.
    pub p: Option<f64>,
    /// `a lower`, `a higher`, `alike` (p >= 0.05) or `untested` (one seed on a side, or
    /// two constant sides).
    pub verdict: String,
    /// The test of `p_test`: `welch_log10` (Welch's t on log10 of the values: the final
    /// training losses), `welch` (the accuracies), `permutation` (exact, ties allowed: the
    /// epoch counts); empty when none applies.
    pub test: String,
    /// That test's two-sided p-value, per comparison.
    pub p_test: Option<f64>,
    /// The 95% confidence interval (Welch) of the difference on the test's scale (for
    /// `welch_log10`, of `log10(a) - log10(b)`); empty where a side has no spread.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// The equivalence margin on the test's scale ([`margin`]).
    pub margin: Option<f64>,
    /// The two one-sided tests of `|difference| < margin` (Welch), per comparison; empty
    /// where a side has no spread.
    pub p_tost: Option<f64>,
    /// `p_test` corrected by Holm over the family: this table's rows with the same `basis`
    /// and `measure`.
    pub p_holm: Option<f64>,
    /// `p_tost` corrected by Holm over the same family.
    pub p_tost_holm: Option<f64>,
    /// `a lower` or `a higher` (p_holm < 0.05), `similar` (p_tost_holm < 0.05: within the
    /// margin), `not distinguishable` (with these seeds: neither), or `untested`.
    pub verdict_holm: String,
    /// Seeds a side that would show the two within the margin with 80% power were their
    /// means equal, from the two sides' spreads (normal approximation).
    pub seeds_for_margin: Option<usize>,
}

/// The columns of `compare.csv`, in order: its header where it has no row.
pub const COMPARE_COLUMNS: [&str; 32] = [
    "basis",
    "measure",
    "depth_a",
    "activation_a",
    "normalization_a",
    "lr_a",
    "seeds_a",
    "diverged_a",
    "mean_a",
    "depth_b",
    "activation_b",
    "normalization_b",
    "lr_b",
    "seeds_b",
    "diverged_b",
    "mean_b",
    "difference",
    "standard_error",
    "t",
    "df",
    "p",
    "verdict",
    "test",
    "p_test",
    "ci_low",
    "ci_high",
    "margin",
    "p_tost",
    "p_holm",
    "p_tost_holm",
    "verdict_holm",
    "seeds_for_margin",
];

/// The seeds of one configuration at one lr: every run finished.
struct Group<'a, R> {
    depth: usize,
    activation: &'a str,
    normalization: &'a str,
    lr: f64,
    /// The finished seeds.
    runs: Vec<&'a R>,
    /// Seeds that diverged.
    diverged: usize,
}

impl<R: SeedRun> Group<'_, R> {
    fn values(&self, measure: Measure, threshold: Option<f64>) -> Vec<f64> {
        self.runs
            .iter()
            .filter_map(|r| match measure {
                Measure::Loss => r.final_loss(),
                Measure::Accuracy => final_accuracy(*r),
                Measure::Speed => threshold.and_then(|t| epochs_to(*r, t)),
            })
            .collect()
    }
}

#[derive(Clone, Copy)]
enum Measure {
    Loss,
    Accuracy,
    Speed,
}

impl Measure {
    const ALL: [Measure; 3] = [Measure::Loss, Measure::Accuracy, Measure::Speed];
    fn name(self) -> &'static str {
        match self {
            Measure::Loss => "final_train_loss",
            Measure::Accuracy => "final_test_accuracy",
            Measure::Speed => "epochs_to_threshold",
        }
    }
}

/// The rows of `compare.csv`: every pair of chosen configurations (basis `chosen`), and
/// every pair at a shared lr where both have at least two finished seeds there (basis
/// `lr=...`), on each measure both sides have values for.
pub fn compare<R: SeedRun>(runs: &[R], best: &[Chosen], threshold: Option<f64>) -> Vec<CompareRow> {
    let mut rows = Vec::new();
    for (i, a) in best.iter().enumerate() {
        for b in &best[i + 1..] {
            let (ga, gb) = (
                group(runs, a, a.lr, a.held_out_seed),
                group(runs, b, b.lr, b.held_out_seed),
            );
            if let (Some(ga), Some(gb)) = (ga, gb) {
                pair_rows(&mut rows, "chosen", &ga, &gb, threshold);
            }
            let mut lrs: Vec<f64> = runs
                .iter()
                .filter(|r| r.configuration() == (a.depth, a.activation, a.normalization))
                .map(|r| r.lr())
                .collect();
            lrs.sort_by(f64::total_cmp);
            lrs.dedup();
            for lr in lrs {
                if let (Some(ga), Some(gb)) = (group(runs, a, lr, None), group(runs, b, lr, None))
                    && ga.runs.len() >= 2
                    && gb.runs.len() >= 2
                {
                    pair_rows(&mut rows, &format!("lr={lr}"), &ga, &gb, threshold);
                }
            }
        }
    }
    correct(&mut rows);
    rows
}

/// Holm's correction over each family (the rows of one basis and measure), and the
/// corrected verdicts.
fn correct(rows: &mut [CompareRow]) {
    let mut families: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.basis.clone(), r.measure.clone()))
        .collect();
    families.sort();
    families.dedup();
    for (basis, measure) in families {
        let members: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].basis == basis && rows[i].measure == measure)
            .collect();
        let p: Vec<Option<f64>> = members.iter().map(|&i| rows[i].p_test).collect();
        let p_tost: Vec<Option<f64>> = members.iter().map(|&i| rows[i].p_tost).collect();
        for ((&i, adjusted), tost_adjusted) in members.iter().zip(holm(&p)).zip(holm(&p_tost)) {
            let row = &mut rows[i];
            row.p_holm = adjusted;
            row.p_tost_holm = tost_adjusted;
            row.verdict_holm = match (adjusted, tost_adjusted) {
                (None, _) => "untested",
                (Some(q), _) if q < ALPHA && row.difference < 0.0 => "a lower",
                (Some(q), _) if q < ALPHA => "a higher",
                (_, Some(q)) if q < ALPHA => "similar",
                _ => "not distinguishable",
            }
            .to_string();
        }
    }
}

/// The test that fits `measure` (see the module's doc): its name, raw two-sided p-value and
/// the 95% confidence interval of the difference on its scale.
fn fitting_test(
    measure: Measure,
    a: &[f64],
    b: &[f64],
) -> (&'static str, Option<f64>, Option<(f64, f64)>) {
    let interval = |w: ntk_runs::stats::Welch| (w.ci_low, w.ci_high);
    match measure {
        Measure::Loss if a.iter().chain(b).all(|v| *v > 0.0) => {
            let (la, lb): (Vec<f64>, Vec<f64>) = (
                a.iter().map(|v| v.log10()).collect(),
                b.iter().map(|v| v.log10()).collect(),
            );
            let w = welch(&la, &lb);
            ("welch_log10", w.map(|w| w.p), w.map(interval))
        }
        Measure::Loss | Measure::Accuracy => {
            let w = welch(a, b);
            ("welch", w.map(|w| w.p), w.map(interval))
        }
        // One seed on a side is no sample: its only split is itself (p = 1 by construction).
        Measure::Speed if a.len() < 2 || b.len() < 2 => ("permutation", None, None),
        // Beyond the splits it enumerates no test, and so no interval on its row either
        // (ninth hostile round: an untested row with an interval).
        Measure::Speed => {
            let p = permutation(a, b).map(|p| p.p);
            ("permutation", p, p.and(welch(a, b).map(interval)))
        }
    }
}

/// The values on the scale of `test` (log10 for `welch_log10`).
fn on_test_scale(test: &str, a: &[f64], b: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let scale = |v: &[f64]| -> Vec<f64> {
        if test == "welch_log10" {
            v.iter().map(|x| x.log10()).collect()
        } else {
            v.to_vec()
        }
    };
    (scale(a), scale(b))
}

/// The seeds of configuration `b` at `lr` but `left_out`, when every one has ended (finished
/// or diverged) and some finished.
fn group<'a, R: SeedRun>(
    runs: &'a [R],
    b: &Chosen<'a>,
    lr: f64,
    left_out: Option<u64>,
) -> Option<Group<'a, R>> {
    let members: Vec<&R> = runs
        .iter()
        .filter(|r| r.configuration() == (b.depth, b.activation, b.normalization) && r.lr() == lr)
        .filter(|r| Some(r.seed()) != left_out)
        .collect();
    if members.iter().any(|r| !r.finished() && !r.diverged()) {
        return None;
    }
    let finished: Vec<&R> = members.iter().copied().filter(|r| r.finished()).collect();
    (!finished.is_empty()).then_some(Group {
        depth: b.depth,
        activation: b.activation,
        normalization: b.normalization,
        lr,
        diverged: members.len() - finished.len(),
        runs: finished,
    })
}

/// The rows of one pair on every measure both sides have a value for (all their seeds).
fn pair_rows<R: SeedRun>(
    rows: &mut Vec<CompareRow>,
    basis: &str,
    a: &Group<R>,
    b: &Group<R>,
    threshold: Option<f64>,
) {
    for measure in Measure::ALL {
        let (va, vb) = (a.values(measure, threshold), b.values(measure, threshold));
        if va.len() != a.runs.len() || vb.len() != b.runs.len() || va.is_empty() || vb.is_empty() {
            continue;
        }
        let (mean_a, mean_b) = (mean_std(&va).0, mean_std(&vb).0);
        let test = welch(&va, &vb);
        let (fitting, p_test, ci) = fitting_test(measure, &va, &vb);
        let budget = a.runs.iter().chain(&b.runs).map(|r| r.epochs().len()).min();
        // A loss margin is a ratio: only on the log scale.
        let margin = match measure {
            Measure::Loss if fitting != "welch_log10" => None,
            _ => margin(measure.name(), budget.unwrap_or(0)),
        };
        let (sa, sb) = on_test_scale(fitting, &va, &vb);
        let equivalence = margin.and_then(|m| tost(&sa, &sb, m));
        let spread = |v: &[f64]| (v.len() >= 2).then(|| mean_std(v).1);
        let seeds_needed = match (margin, spread(&sa), spread(&sb)) {
            (Some(m), Some(da), Some(db)) if p_test.is_some() => seeds_for_margin(da, db, m, 0.8),
            _ => None,
        };
        let verdict = match test {
            None => "untested",
            Some(w) if w.p >= ALPHA => "alike",
            Some(w) if w.difference < 0.0 => "a lower",
            Some(_) => "a higher",
        };
        rows.push(CompareRow {
            basis: basis.to_string(),
            measure: measure.name().to_string(),
            depth_a: a.depth,
            activation_a: a.activation.to_string(),
            normalization_a: a.normalization.to_string(),
            lr_a: a.lr,
            seeds_a: va.len(),
            diverged_a: a.diverged,
            mean_a,
            depth_b: b.depth,
            activation_b: b.activation.to_string(),
            normalization_b: b.normalization.to_string(),
            lr_b: b.lr,
            seeds_b: vb.len(),
            diverged_b: b.diverged,
            mean_b,
            difference: mean_a - mean_b,
            standard_error: test.map(|w| w.standard_error),
            t: test.map(|w| w.t),
            df: test.map(|w| w.df),
            p: test.map(|w| w.p),
            verdict: verdict.to_string(),
            test: if p_test.is_some() { fitting } else { "" }.to_string(),
            p_test,
            ci_low: ci.map(|c| c.0),
            ci_high: ci.map(|c| c.1),
            margin: margin.filter(|_| p_test.is_some()),
            p_tost: equivalence.map(|t| t.p).filter(|_| p_test.is_some()),
            // Set by `correct` over the whole family.
            p_holm: None,
            p_tost_holm: None,
            verdict_holm: String::new(),
            seeds_for_margin: seeds_needed,
        });
    }
}
