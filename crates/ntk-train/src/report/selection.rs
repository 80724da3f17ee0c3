//! How each configuration's learning rate is chosen, and which seeds then speak for it
//! (`best.csv`).
//!
//! Liu & Hui choose the rate of the grid with the lowest final training loss. Choosing it
//! on the seeds that are then compared favours whichever configuration's chosen seed was
//! lucky (the winner's curse), so the rate is chosen on data the comparison does not use:
//!
//! - **held out** ([`Selection::HeldOut`]): the *selection seed*, the smallest seed that
//!   ran every rate of the configuration's grid (and did not diverge at all of them),
//!   chooses the rate (its lowest final
//!   training loss among its finished runs); the comparison uses only the *other* seeds at
//!   that rate (`seeds` of `best.csv`; those that diverged are counted in
//!   `seeds_diverged`, never dropped silently).
//! - **selection seed only** ([`Selection::SelectionSeedOnly`]): as held out, but no other
//!   seed has run at the chosen rate yet; the row reports the selection seed itself, which
//!   is not held out, and says so.
//! - **single rate** ([`Selection::SingleRate`]): the grid has one rate; nothing is chosen
//!   and every seed is compared.
//! - **pooled** ([`Selection::Pooled`]): no seed ran the whole grid (each seed trained at
//!   its own rate, as the rate `n / lambda_max` of experiments/convergence does): the rate
//!   with the lowest mean final loss over its seeds, as before this rule.
//!
//! Where the sweep's config is known (`collect --config`, a sweep's closing collect) the grid
//! is the config's: a run it plans that has no result ([`PlannedRun`]) is waited for
//! wherever a run not ended would be.
//!
//! A rate a selection seed chose at its grid's smallest or largest value is flagged
//! (`at_grid_edge`): the next rate beyond the edge belongs in the grid before the choice
//! is trusted.

use std::collections::{BTreeMap, BTreeSet};

use ntk_runs::stats::mean;
use serde::Serialize;

use super::{BestRow, Key, PlannedRun, RunRecord};
use crate::seeds::{self, SeedRun};

/// How a configuration's rate was chosen, and so which seeds its row reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    HeldOut,
    SelectionSeedOnly,
    SingleRate,
    Pooled,
}

/// The rate chosen for one configuration, and the seed that chose it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    pub lr: f64,
    pub selection: Selection,
    /// The seed whose runs chose the rate (left out of the comparison when `HeldOut`).
    pub selection_seed: Option<u64>,
    /// The selection seed's final training loss at the chosen rate.
    pub selection_loss: Option<f64>,
    /// The chosen rate is the smallest or the largest of a grid of several.
    pub at_grid_edge: bool,
}

impl BestRow {
    /// The row of configuration `key` at `choice`'s rate, before its seeds are read: no
    /// seeds, spreads or speed yet.
    pub fn chosen((depth, activation, normalization): Key, choice: Choice) -> Self {
        BestRow {
            depth,
            activation,
            normalization,
            lr: choice.lr,
            selection: choice.selection,
            selection_seed: choice.selection_seed,
            selection_loss: choice.selection_loss,
            at_grid_edge: choice.at_grid_edge,
            seeds: 0,
            seeds_diverged: 0,
            final_train_loss: None,
            final_train_loss_sd: None,
            final_train_loss_se: None,
            final_test_accuracy: None,
            final_test_accuracy_sd: None,
            final_test_accuracy_se: None,
            epochs: 0,
            lrs_diverged: 0,
            loss_threshold: None,
            epochs_to_threshold: None,
            epochs_to_threshold_sd: None,
        }
    }

    /// The seed the comparison leaves out: the selection seed when its rate was chosen
    /// held out.
    pub fn held_out_seed(&self) -> Option<u64> {
        match self.selection {
            Selection::HeldOut => self.selection_seed,
            _ => None,
        }
    }
}

/// Usable for a choice: finished (not diverged, running, interrupted or failed), with a
/// finite final loss.
fn eligible(r: &RunRecord) -> Option<f64> {
    SeedRun::finished(r).then(|| r.final_loss()).flatten()
}

/// The choice for one configuration's runs (all at the configuration's key), without a
/// config's plan: [`choose_rate_planned`] with no missing run.
pub fn choose_rate(runs: &[&RunRecord]) -> Option<Choice> {
    choose_rate_planned(runs, &[])
}

/// The choice for one configuration's runs and the runs its config plans that have no
/// result (`missing`; all at the configuration's key): the grid is the rates of both, and a
/// choice that would read a missing run waits for it (`None`), as for a run not ended.
pub fn choose_rate_planned(runs: &[&RunRecord], missing: &[&PlannedRun]) -> Option<Choice> {
    let grid: BTreeSet<u64> = runs
        .iter()
        .map(|r| r.lr)
        .chain(missing.iter().map(|m| m.lr))
        .map(f64::to_bits)
        .collect();
    let edges = |lr: f64| {
        let lrs: Vec<f64> = grid.iter().map(|b| f64::from_bits(*b)).collect();
        let (lo, hi) = lrs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        lrs.len() > 1 && (lr == lo || lr == hi)
    };
    if grid.len() == 1 {
        return runs.iter().any(|r| eligible(r).is_some()).then(|| Choice {
            lr: runs[0].lr,
            selection: Selection::SingleRate,
            selection_seed: None,
            selection_loss: None,
            at_grid_edge: false,
        });
    }
    let mut lrs_of_seed: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for (seed, lr) in runs
        .iter()
        .map(|r| (r.seed, r.lr))
        .chain(missing.iter().map(|m| (m.seed, m.lr)))
    {
        lrs_of_seed.entry(seed).or_default().insert(lr.to_bits());
    }
    // A seed whose every run diverged chose nothing: the next seed that ran the grid
    // chooses, and the diverged one is counted at the chosen rate (ninth hostile round: the
    // configuration was left out of best.csv and compare.csv, silently). A seed with a
    // missing run has not chosen yet.
    let missing_of = |seed: u64| missing.iter().any(|m| m.seed == seed);
    let chose_nothing = |seed: u64| {
        !missing_of(seed) && runs.iter().filter(|r| r.seed == seed).all(|r| r.diverged())
    };
    let selection_seed = lrs_of_seed
        .iter()
        .filter(|(_, lrs)| **lrs == grid)
        .map(|(s, _)| *s)
        .find(|s| !chose_nothing(*s));
    // A choice waits for the runs it reads: one not ended (running, interrupted, failed)
    // or planned and missing would have been passed over, and another rate chosen without
    // a word (hundred-and-thirty-seventh hostile round, N1: a run's summary.json removed
    // moved best.csv's rate from 2.0 to 0.5; hundred-and-thirty-ninth, D2: a planned run
    // missing did). `left_out` says why the configuration has no row.
    let unended = |r: &RunRecord| !r.finished() && !r.diverged();
    let Some(seed) = selection_seed else {
        if runs.iter().any(|r| unended(r)) || !missing.is_empty() {
            return None;
        }
        return pooled(runs).map(|lr| Choice {
            lr,
            selection: Selection::Pooled,
            selection_seed: None,
            selection_loss: None,
            // No seed ran a grid to be at the edge of.
            at_grid_edge: false,
        });
    };
    if missing_of(seed) || runs.iter().filter(|r| r.seed == seed).any(|r| unended(r)) {
        return None;
    }
    let (lr, loss) = runs
        .iter()
        .filter(|r| r.seed == seed)
        .filter_map(|r| eligible(r).map(|l| (r.lr, l)))
        .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0)))?;
    let others = runs.iter().any(|r| r.seed != seed && r.lr == lr);
    Some(Choice {
        lr,
        selection: if others {
            Selection::HeldOut
        } else {
            Selection::SelectionSeedOnly
        },
        selection_seed: Some(seed),
        selection_loss: Some(loss),
        at_grid_edge: edges(lr),
    })
}

/// The rate with the lowest mean final loss over its seeds, among the rates at which every
/// seed finished.
fn pooled(runs: &[&RunRecord]) -> Option<f64> {
    let mut by_lr: BTreeMap<u64, Vec<&RunRecord>> = BTreeMap::new();
    for r in runs {
        by_lr.entry(r.lr.to_bits()).or_default().push(r);
    }
    by_lr
        .iter()
        .filter(|(_, rs)| rs.iter().all(|r| eligible(r).is_some()))
        .filter_map(|(lr, rs)| mean(rs.iter().filter_map(|r| eligible(r))).map(|l| (*lr, l)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(lr, _)| f64::from_bits(lr))
}

/// The runs that speak for configuration `b` (its seeds at its chosen rate but the held-out
/// selection seed), finished or not.
pub fn compared_runs<'a>(runs: &'a [RunRecord], b: &BestRow) -> Vec<&'a RunRecord> {
    let key = (b.depth, b.activation.clone(), b.normalization.clone());
    let held_out = b.held_out_seed();
    runs.iter()
        .filter(|r| r.key() == key && r.lr == b.lr && Some(r.seed) != held_out)
        .collect()
}

/// The chosen rate of each configuration, with the compared seeds' spread and speed.
pub fn choose(runs: &[RunRecord]) -> Vec<BestRow> {
    choose_planned(runs, &[])
}

/// The runs of `missing` at configuration `key`.
fn missing_at<'a>(missing: &'a [PlannedRun], key: &Key) -> Vec<&'a PlannedRun> {
    missing.iter().filter(|m| m.key() == *key).collect()
}

/// [`choose`] with the runs a config plans that have no result (`missing`): a row that
/// would read one waits for it.
pub fn choose_planned(runs: &[RunRecord], missing: &[PlannedRun]) -> Vec<BestRow> {
    let mut by_key: BTreeMap<Key, Vec<&RunRecord>> = BTreeMap::new();
    for r in runs {
        by_key.entry(r.key()).or_default().push(r);
    }
    let mut best = Vec::new();
    for (key, group) in by_key {
        let waits_for = missing_at(missing, &key);
        let Some(choice) = choose_rate_planned(&group, &waits_for) else {
            continue;
        };
        let (depth, activation, normalization) = key;
        let lrs_diverged = group
            .iter()
            .filter(|r| r.diverged())
            .map(|r| r.lr.to_bits())
            .collect::<BTreeSet<_>>()
            .len();
        let mut row = BestRow::chosen((depth, activation, normalization), choice);
        row.lrs_diverged = lrs_diverged;
        let compared = compared_runs(runs, &row);
        // A run still going, interrupted or failed has trained fewer epochs: the row waits
        // for it, and for a planned run of its seeds at its rate that is missing.
        let held_out = row.held_out_seed();
        if compared
            .iter()
            .any(|r| !SeedRun::finished(*r) && !r.diverged())
            || waits_for
                .iter()
                .any(|m| m.lr == row.lr && Some(m.seed) != held_out)
        {
            continue;
        }
        let finished: Vec<&RunRecord> =
            compared.iter().copied().filter(|r| !r.diverged()).collect();
        row.seeds_diverged = compared.len() - finished.len();
        row.seeds = finished.len();
        let losses: Vec<f64> = finished.iter().filter_map(|r| r.final_loss()).collect();
        let accuracies: Vec<f64> = finished
            .iter()
            .filter_map(|r| seeds::final_accuracy(*r))
            .collect();
        row.final_train_loss = mean(losses.iter().copied());
        (row.final_train_loss_sd, row.final_train_loss_se) = seeds::spread(&losses);
        if accuracies.len() == finished.len() {
            row.final_test_accuracy = mean(accuracies.iter().copied());
            (row.final_test_accuracy_sd, row.final_test_accuracy_se) = seeds::spread(&accuracies);
        }
        row.epochs = finished.iter().map(|r| r.metrics.len()).min().unwrap_or(0);
        best.push(row);
    }
    with_speed(runs, best)
}

/// Why a configuration of the runs has no row in best.csv ([`left_out`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    /// A run its choice or its row reads has not ended (running, interrupted or failed).
    NotEnded,
    /// A run its config plans for it has no result.
    Missing,
    /// No rate can be chosen: every run that would choose one diverged.
    Diverged,
}

impl Held {
    /// Whether the configuration waits for runs (its rate is not chosen yet), rather than
    /// having none to choose.
    pub fn waits(self) -> bool {
        self != Held::Diverged
    }
}

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Held::NotEnded => {
                "a run it needs has not ended (running, interrupted or failed: sweep.csv)"
            }
            Held::Missing => "a run the config plans for it has no result yet",
            Held::Diverged => {
                "no rate can be chosen: the runs that would choose one diverged (sweep.csv)"
            }
        })
    }
}

/// The configurations of `runs` that have no row in `best`, each with why: a run it waits
/// for, or no rate it could be chosen at (every run that would choose one diverged). Said
/// by `collect`, never left out silently.
pub fn left_out(runs: &[RunRecord], best: &[BestRow]) -> Vec<(Key, Held)> {
    left_out_planned(runs, best, &[])
}

/// [`left_out`] with the runs a config plans that have no result (`missing`).
pub fn left_out_planned(
    runs: &[RunRecord],
    best: &[BestRow],
    missing: &[PlannedRun],
) -> Vec<(Key, Held)> {
    let mut by_key: BTreeMap<Key, Vec<&RunRecord>> = BTreeMap::new();
    for r in runs {
        by_key.entry(r.key()).or_default().push(r);
    }
    // A configuration the config plans with no run at all is said too (hundred-and-forty-
    // first hostile round, N2: only those with a run were).
    for m in missing {
        by_key.entry(m.key()).or_default();
    }
    by_key
        .into_iter()
        .filter(|(key, _)| {
            !best
                .iter()
                .any(|b| (b.depth, &b.activation, &b.normalization) == (key.0, &key.1, &key.2))
        })
        .map(|(key, group)| {
            let waiting = group
                .iter()
                .any(|r| !SeedRun::finished(*r) && !r.diverged());
            let why = if waiting {
                Held::NotEnded
            } else if !missing_at(missing, &key).is_empty() {
                Held::Missing
            } else {
                Held::Diverged
            };
            (key, why)
        })
        .collect()
}

/// `best` with the speed measure: epochs to the loss every compared run reaches.
fn with_speed(runs: &[RunRecord], mut best: Vec<BestRow>) -> Vec<BestRow> {
    let finished = |b: &BestRow| -> Vec<&RunRecord> {
        compared_runs(runs, b)
            .into_iter()
            .filter(|r| SeedRun::finished(*r))
            .collect()
    };
    let threshold = seeds::loss_threshold(best.iter().flat_map(finished));
    for b in &mut best {
        b.loss_threshold = threshold;
        let Some(t) = threshold else { continue };
        let epochs: Vec<f64> = finished(b)
            .into_iter()
            .filter_map(|r| seeds::epochs_to(r, t))
            .collect();
        if epochs.len() == b.seeds && b.seeds > 0 {
            b.epochs_to_threshold = mean(epochs.iter().copied());
            b.epochs_to_threshold_sd = seeds::spread(&epochs).0;
        }
    }
    best
}
