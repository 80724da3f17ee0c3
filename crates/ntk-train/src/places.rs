//! Every place a training sweep (or run) writes or removes, with its rule
//! ([`ntk_files::places`]), checked before any work by the dry run and the run alike: each
//! run it trains (its checkpoints, its lock, the files a run already there is written again
//! or removed by), the sweep's tables and figures, and its writers' directory. The failure
//! record of each run is checked by the shared sweep's lifecycle for both tools
//! (`ntk_runs::sweep::Failure`).

use std::path::{Path, PathBuf};

use ntk_files::places::{Place, Rule};
use ntk_runs::sweep::State;

use crate::Error;
use crate::config::TrainConfig;
use crate::files::ReportNames;

/// The places of the sweep in `out` of the config `fingerprint` and of its runs (each run's
/// directory with its state); a finished run is not trained and writes nothing.
/// `reports` are the files the collect at its end may write ([`reports_of`]).
pub fn planned<'a>(
    out: &Path,
    fingerprint: &str,
    reports: &ReportNames,
    runs: impl IntoIterator<Item = (PathBuf, &'a State)>,
) -> Vec<Place<Error>> {
    let mut places = Vec::new();
    for (dir, state) in runs.into_iter().filter(|(_, s)| **s != State::Done) {
        // The checkpoints written later (thirty-eighth hostile round, D2: a FIFO at a later
        // checkpoint's name was `partial` in the dry run; the run trained to it and failed).
        places.push(Place::new(&dir, Rule::Own(crate::checkpoint::check_places)));
        // The run's lock file (thirty-ninth hostile round, D3; fortieth, D2).
        places.push(Place::new(&dir, Rule::Lock));
        // The files a run there is written again by, and a stale run's removed by under
        // --recompute (thirty-seventh hostile round, D3: a FIFO at config.toml was
        // `partial` in the dry run). A new run's directory holds no run of its own: a
        // regular file at a run's name there is refused before any work
        // (`run_dir::check_run_dir`, seventy-third hostile round, D5); a directory or a FIFO
        // there fails that run when it writes it, and the failure is recorded while the
        // sweep goes on.
        if *state != State::New {
            places.extend(
                crate::run_dir::RUN_FILES
                    .iter()
                    .filter(|n| **n != "checkpoints")
                    .map(|name| Place::new(dir.join(name), Rule::Replaced)),
            );
        }
    }
    // The tables and figures the collect at the end writes again (thirty-eighth hostile
    // round, D2: a FIFO at sweep.csv or train_loss.png), and the writers' directory
    // (forty-first, D1) with this config's registration (forty-second, D1).
    places.extend(ntk_files::places::replaced_in(out, &|name: &str| {
        reports.writes(name)
    }));
    places.push(Place::new(
        out,
        Rule::Writers {
            fingerprint: fingerprint.to_string(),
        },
    ));
    places
}

/// The files the collect at the end of a sweep of `cfg` may write: the tables, the loss (also
/// on a log scale), the accuracy where there is a test set, the tracked NTK's figures with `[ntk]`, the representations'
/// with `[representations]`, the convergence table and figure with `[prediction]`; every name
/// with `--allow-mixed` (the runs of other configs merged may have measured anything).
/// Forty-fourth hostile round, D1: a FIFO at a name the sweep never writes was refused.
pub fn reports_of(cfg: &TrainConfig, allow_mixed: bool) -> ReportNames {
    if allow_mixed {
        return ReportNames::all();
    }
    let mut stems = vec!["train_loss", "train_loss_log"];
    // A test set: `train.test_n` rows of the built-in set's test split, or of a file set's
    // `data.test_x` (forty-fifth hostile round, D1: `train.test_n = 0` drew no accuracy and
    // the sweep refused what stood at its name).
    let file = cfg.data.dataset == ntk_data::Dataset::File;
    if cfg.train.test_n > 0 && (!file || cfg.data.test_x.is_some()) {
        stems.push("test_accuracy");
    }
    if cfg.ntk.is_some() {
        stems.extend(["ntk_kappa", "ntk_angle"]);
    }
    if cfg.representations.is_some() {
        stems.push("representation_cosine");
    }
    if cfg.prediction.is_some() {
        stems.push("convergence_rate");
    }
    ReportNames {
        tables: true,
        convergence: cfg.prediction.is_some(),
        stems,
    }
}
