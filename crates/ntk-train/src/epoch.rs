//! The epoch loop of a run: the steps of each epoch through the run's
//! [`Stepper`](ntk_engine::stepper::Stepper), the epoch's metrics row (with the test set
//! evaluated when due), the probes of [`Tracking`](crate::track::Tracking) when due, and
//! checkpoints; when the run diverges ([`crate::divergence`]: a non-finite or exploding loss)
//! the loop stops and keeps the last good state.

use std::time::Instant;

use crate::checkpoint::{self, History};
use crate::data::{augment_rng, batch, epoch_order, evaluate};
use crate::divergence::{Divergence, Guard, Measured};
use crate::metrics::{EpochMetrics, Tracked, write_csv};
use crate::run::Run;
use crate::track::Tracking;
use ntk_engine::stepper::{Snapshot, Stepper};

/// What the run has done so far: the tables, the steps taken, the epoch of the current
/// checkpoint, and the last finite epoch's state not yet checkpointed.
pub(crate) struct Progress {
    /// Where the science is at risk ([`ntk_kernel::scale`]), for the summary.
    pub(crate) warnings: Vec<String>,
    pub(crate) rows: Vec<EpochMetrics>,
    pub(crate) tracked: Tracked,
    pub(crate) iteration: usize,
    /// 0 before the first checkpoint.
    pub(crate) last_checkpoint: usize,
    pub(crate) last_good: Option<LastGood>,
    /// The judge of divergence, with the run's initial loss once measured.
    pub(crate) guard: Guard,
}

/// Where and why a run diverged.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Diverged {
    /// The epoch in which it did (not recorded: the last good state is the end of the one
    /// before).
    pub(crate) epoch: usize,
    pub(crate) why: Divergence,
    /// Whether it did at the epoch's first step: the loss that diverged is then that of the
    /// state the epoch started from, the one kept.
    pub(crate) first_step: bool,
}

/// The state at the end of the last finite epoch not yet checkpointed (a divergence
/// checkpoints it).
pub(crate) struct LastGood {
    state: Snapshot,
    epoch: usize,
    iteration: usize,
}

impl Progress {
    /// Nothing done, or what the checkpoint `found` holds; `factor`:
    /// `train.divergence_factor`.
    pub(crate) fn new(found: Option<&checkpoint::Loaded>, factor: f64) -> Self {
        let (rows, tracked, iteration, last_checkpoint) = match found {
            Some(ck) => (
                ck.rows.clone(),
                ck.tracked.clone(),
                ck.pointer.iteration,
                ck.pointer.epoch,
            ),
            None => (Vec::new(), Tracked::default(), 0, 0),
        };
        Self {
            warnings: Vec::new(),
            rows,
            tracked,
            iteration,
            last_checkpoint,
            last_good: None,
            guard: Guard::new(factor, found.and_then(|ck| ck.pointer.initial_loss)),
        }
    }

    /// On a resume: the run's tables rewritten as its checkpoint holds them, so the rows a
    /// killed process wrote after its last checkpoint are gone before the first epoch; a run
    /// that then diverged at once kept them beside a summary that counts the checkpoint's
    /// epochs, and neither resumed nor collected again (nineteenth hostile round, N1).
    /// Only the tables the checkpoint holds rows of: a table beside a run that tracks
    /// nothing of it is not the run's, and is refused before any work (`run_dir::
    /// check_untracked`; seventy-sixth hostile round, D2: a user's `ntk.csv` beside a run
    /// without `[ntk]` was emptied, then refused after 300 epochs).
    pub(crate) fn restore_tables(&self, out: &std::path::Path) -> crate::Result<()> {
        write_csv(&out.join("metrics.csv"), &self.rows)?;
        if !self.tracked.ntk.is_empty() {
            write_csv(&out.join("ntk.csv"), &self.tracked.ntk)?;
        }
        if !self.tracked.representations.is_empty() {
            write_csv(
                &out.join("representations.csv"),
                &self.tracked.representations,
            )?;
        }
        Ok(())
    }

    /// What is kept with a checkpoint.
    fn history(&self) -> History<'_> {
        History {
            rows: &self.rows,
            tracked: &self.tracked,
            initial_loss: self.guard.initial_loss(),
        }
    }

    /// Checkpoints `state` after `epoch` when due (every `train.checkpoint_every` epochs
    /// and after the last); otherwise keeps it as the last good state.
    pub(crate) fn checkpoint_or_keep(
        &mut self,
        run: &Run,
        state: Snapshot,
        epoch: usize,
        last: bool,
    ) -> crate::Result<()> {
        if last || epoch.is_multiple_of(run.cfg.train.checkpoint_every) {
            let position = (epoch, self.iteration);
            checkpoint::save_snapshot(run.out, position, &run.identity, &state, &self.history())?;
            self.last_checkpoint = epoch;
            self.last_good = None;
        } else {
            let iteration = self.iteration;
            self.last_good = Some(LastGood {
                state,
                epoch,
                iteration,
            });
        }
        Ok(())
    }

    /// After a divergence: checkpoints the last good state (the end of the last epoch
    /// before it) when it is newer than the current checkpoint, and says where it is.
    pub(crate) fn keep_last_good(&self, run: &Run, diverged: &Diverged) -> crate::Result<()> {
        if let Some(good) = &self.last_good
            && good.epoch > self.last_checkpoint
        {
            let position = (good.epoch, good.iteration);
            checkpoint::save_snapshot(
                run.out,
                position,
                &run.identity,
                &good.state,
                &self.history(),
            )?;
        }
        // Where it diverged in its first epoch nothing is kept: its initial state is the
        // seed's, made again by the same config (hundred-and-seventeenth hostile round, D4:
        // "the last good state (epoch 0) is in OUT/checkpoint.json", no such file).
        // A state whose own loss diverged is kept, but not called good (hundred-and-thirty-
        // fifth hostile round, N2: full batch at lr 1e200, "the last good state (epoch 1)"
        // was the state whose loss epoch 2's first step found not finite).
        let own = match diverged.why.measured {
            Measured::TrainingBatch if diverged.first_step => Some(format!(
                "its own loss, on epoch {}'s first batch, is the one that diverged",
                diverged.epoch
            )),
            Measured::TrackedNtk => Some("its tracked NTK is not".to_string()),
            _ => None,
        };
        let kept = match (self.rows.last(), own) {
            (Some(r), Some(own)) => format!(
                "the state after epoch {} is in {}/checkpoint.json: its weights are finite, but \
                 {own}",
                r.epoch,
                run.out.display(),
            ),
            (Some(r), None) => format!(
                "the last good state (epoch {}) is in {}/checkpoint.json",
                r.epoch,
                run.out.display()
            ),
            (None, _) => "no checkpoint is kept: it had no good epoch, and its initial state is \
                     its seed's, made again by the same config"
                .to_string(),
        };
        run.reporter.log(&format!(
            "{}: diverged in epoch {} ({}); {kept}",
            run.labels.model, diverged.epoch, diverged.why,
        ));
        Ok(())
    }
}

/// The epoch loop: trains the epochs after the current checkpoint (at most `stop_after` of
/// them) and records each; at a divergence stops and keeps the last good state
/// ([`Progress::keep_last_good`]). Returns where the run diverged, if it did.
pub(crate) fn run_epochs(
    run: &Run,
    stepper: &mut dyn Stepper,
    progress: &mut Progress,
    tracking: Option<&Tracking>,
    stop_after: Option<usize>,
) -> crate::Result<Option<Diverged>> {
    let first_epoch = progress.last_checkpoint + 1;
    let epoch_bar = run.reporter.bar(run.epochs as u64, "epochs".into());
    epoch_bar.set_position(first_epoch as u64 - 1);
    let mut diverged = None;
    for epoch in first_epoch..=run.epochs {
        if stop_after.is_some_and(|s| epoch - first_epoch >= s) {
            break;
        }
        let started = progress.iteration;
        let totals = train_epoch(
            run,
            stepper,
            epoch,
            &mut progress.iteration,
            &mut progress.guard,
        );
        let first_step = progress.iteration == started;
        if let Some(e) = stepper.failure() {
            return Err(e.into());
        }
        let outcome = match totals {
            Ok(totals) => record_epoch(run, &*stepper, progress, tracking, epoch, &totals)?,
            Err(why) => Some(why),
        };
        if let Some(e) = stepper.failure() {
            return Err(e.into());
        }
        if let Some(why) = outcome {
            diverged = Some(Diverged {
                epoch,
                why,
                first_step,
            });
            break;
        }
        epoch_bar.inc(1);
    }
    epoch_bar.finish_and_clear();
    if let Some(d) = &diverged {
        progress.keep_last_good(run, d)?;
    }
    Ok(diverged)
}

/// The sums over an epoch's steps, its learning rate (at its first step) and wall time.
#[derive(Clone, Debug, Default)]
pub(crate) struct EpochTotals {
    loss_sum: f64,
    hits: usize,
    seen: usize,
    lr: f64,
    seconds: f64,
}

/// The steps of `epoch` (advancing `iteration`), then the model of record brought up to
/// date; the divergence at the first batch whose loss `guard` judges diverged (a
/// non-finite one's step is not taken).
pub(crate) fn train_epoch(
    run: &Run,
    stepper: &mut dyn Stepper,
    epoch: usize,
    iteration: &mut usize,
    guard: &mut Guard,
) -> Result<EpochTotals, Divergence> {
    let (t, set) = (&run.cfg.train, &run.data.train);
    let start = Instant::now();
    let order = epoch_order(t.seed, epoch, set.n);
    let mut rng = augment_rng(t.seed, epoch);
    let steps = run.per_epoch.min(run.total - *iteration);
    let bar = run.reporter.bar(steps as u64, format!("epoch {epoch}"));
    let mut sums = EpochTotals {
        lr: run.lr(*iteration),
        ..EpochTotals::default()
    };
    for idx in order.chunks(t.batch_size).take(steps) {
        let lr = run.lr(*iteration);
        let step = stepper.step(
            batch(set, idx, run.augment.as_ref().map(|a| (a, &mut rng))),
            lr,
        );
        // A step that returns nothing saw a non-finite loss.
        let verdict = match &step {
            None => Err(guard.not_finite(Measured::TrainingBatch)),
            Some(r) => guard
                .judge(Measured::TrainingBatch, r.loss_sum / idx.len() as f64)
                .map_or(Ok(r), Err),
        };
        let r = match verdict {
            Ok(r) => r,
            Err(why) => {
                bar.finish_and_clear();
                return Err(why);
            }
        };
        sums.loss_sum += r.loss_sum;
        sums.hits += r.correct;
        sums.seen += idx.len();
        *iteration += 1;
        bar.inc(1);
        bar.set_message(format!(
            "loss {:.4} {:.0} samples/s",
            sums.loss_sum / sums.seen as f64,
            sums.seen as f64 / start.elapsed().as_secs_f64()
        ));
    }
    bar.finish_and_clear();
    stepper.sync();
    sums.seconds = start.elapsed().as_secs_f64();
    Ok(sums)
}

/// Records a finished epoch: its metrics row (with the test set evaluated when due),
/// logged and appended to `metrics.csv`, a checkpoint or the last good state, then the
/// probes when due (after the checkpoint, so that an interruption while they measure keeps
/// the epoch: the resumed run measures them, [`Tracking::record`]). A test loss that
/// `progress.guard` judges diverged records nothing and is returned.
pub(crate) fn record_epoch(
    run: &Run,
    stepper: &dyn Stepper,
    progress: &mut Progress,
    tracking: Option<&Tracking>,
    epoch: usize,
    totals: &EpochTotals,
) -> crate::Result<Option<Divergence>> {
    let last = epoch == run.epochs;
    // Every step's loss was finite, but the last update may have left weights that are not
    // (hundred-and-thirty-fifth hostile round, D3: an f32 step wrote infinite weights into a
    // "finished" run's checkpoint, or into "the last good state"): a divergence, this
    // epoch's, with nothing of its state kept.
    let state = stepper.snapshot();
    if let Some(detail) = ntk_model::export::first_non_finite(&state.model) {
        return Ok(Some(progress.guard.weights_not_finite(detail)));
    }
    let row = epoch_row(run, stepper, epoch, progress.iteration, totals);
    log_epoch(run, &row);
    if let Some(why) = row
        .test_loss
        .and_then(|l| progress.guard.judge(Measured::Test, l))
    {
        return Ok(Some(why));
    }
    progress.rows.push(row);
    write_csv(&run.out.join("metrics.csv"), &progress.rows)?;
    progress.checkpoint_or_keep(run, state, epoch, last)?;
    if let Some(tr) = tracking {
        // A tracked kernel that leaves the range after the steps is the training's
        // divergence, not the inputs' fault (hundred-and-thirty-seventh hostile round, D3: a
        // step at lr 1e30 took the weights to 1e30 and the run "failed", blaming a row).
        match tr.record(run, stepper, &mut progress.tracked, epoch, last) {
            Err(crate::Error::NtkNotFinite { precision, .. }) => {
                let largest = ntk_model::export::largest_magnitude(&stepper.valid());
                return Ok(Some(progress.guard.tracked_not_finite(format!(
                    "the weights' largest magnitude is {largest:.3e} after the steps: they carry \
                     the kernel past {precision}'s range"
                ))));
            }
            done => done?,
        }
    }
    Ok(None)
}

/// The metrics row of `epoch`; the test set is evaluated every `train.eval_every` epochs
/// and after the last.
pub(crate) fn epoch_row(
    run: &Run,
    stepper: &dyn Stepper,
    epoch: usize,
    iteration: usize,
    totals: &EpochTotals,
) -> EpochMetrics {
    let (test_loss, test_accuracy) = match &run.data.test {
        Some(s) if run.evaluates(epoch) => {
            let set = ntk_engine::Labelled {
                x: &s.x,
                n: s.n,
                labels: &s.labels,
            };
            let (l, a) = stepper.evaluate(set, 500).unwrap_or_else(|| {
                evaluate(&stepper.valid(), s, run.compute, (500, run.cfg.train.loss))
            });
            (Some(l), Some(a))
        }
        _ => (None, None),
    };
    let seen = totals.seen as f64;
    EpochMetrics {
        epoch,
        iteration,
        train_loss: totals.loss_sum / seen,
        train_accuracy: totals.hits as f64 / seen,
        test_loss,
        test_accuracy,
        lr: totals.lr,
        seconds: totals.seconds,
        samples_per_second: seen / totals.seconds,
    }
}

/// A loss in a log line: five decimals, in exponent form from 10^6 up (a diverging run's
/// loss of 2.6e98 printed as a 99-digit number; fourteenth hostile round, D4).
pub fn loss_text(loss: f64) -> String {
    if loss.abs() >= 1e6 {
        format!("{loss:.5e}")
    } else {
        format!("{loss:.5}")
    }
}

/// The log line of an epoch.
pub(crate) fn log_epoch(run: &Run, row: &EpochMetrics) {
    run.reporter.log(&format!(
        "{} epoch {}/{}: train loss {} acc {:.4}{} lr {:.3e} {:.1} s ({:.0} samples/s)",
        run.labels.model,
        row.epoch,
        run.epochs,
        loss_text(row.train_loss),
        row.train_accuracy,
        row.test_accuracy
            .map_or(String::new(), |a| format!(" test acc {a:.4}")),
        row.lr,
        row.seconds,
        row.samples_per_second
    ));
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_huge_loss_is_written_with_an_exponent() {
        assert_eq!(super::loss_text(0.08699), "0.08699");
        assert_eq!(super::loss_text(2.619797412096641e98), "2.61980e98");
        assert_eq!(super::loss_text(-1.5e7), "-1.50000e7");
        assert_eq!(super::loss_text(f64::NAN), "NaN");
    }
}
