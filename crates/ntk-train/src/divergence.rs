//! When a run has diverged: a non-finite loss, or a loss that has exploded past
//! `train.divergence_factor` times the run's initial loss (the mean loss of its first
//! batch, measured before the first step).
//!
//! The initial loss is the reference because it is the one loss every run has before the
//! rate can act on it: an epoch's mean already contains the explosion when it happens in the
//! first epoch (full-batch gradient descent at lr 0.5 on MNIST under the square loss went
//! 2,381 -> 1.26e14 in a few steps; LayerNorm MLPs at lr 10 averaged 1e16 over their first
//! epoch). It is kept in the checkpoint, so a resumed run judges by the same reference as an
//! uninterrupted one.

use serde::{Deserialize, Serialize};

/// The default of `train.divergence_factor`: a loss 10,000 times its initial value. No
/// finished run of the committed experiments rose above 210 times its first epoch's mean
/// (the largest, Liu Fig. 3 Fashion-MNIST-60k at depth 9 and lr 30, diverged outright a few
/// epochs later), and a catapult phase rises by at most a few hundred; those that pass 1e4
/// never came back (up to 1e24 with accuracy at chance).
pub const DEFAULT_FACTOR: f64 = 1e4;

/// Which loss gave the verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measured {
    /// The mean loss of one training batch, before its step.
    TrainingBatch,
    /// The loss on the test set at the end of an epoch.
    Test,
    /// The weights at the end of an epoch, after its last step: an update that passed the
    /// precision's range leaves weights that are not finite, whose loss no step has seen yet
    /// (hundred-and-thirty-fifth hostile round, D3: a one-step f32 epoch wrote infinite
    /// weights into a "finished" run's checkpoint).
    Weights,
    /// The tracked NTK at the end of an epoch (`[ntk]`): finite weights whose kernel passes
    /// `ntk.precision`'s range after the steps (hundred-and-thirty-seventh hostile round,
    /// D3: a step at lr 1e30 failed the run, blaming an input row).
    TrackedNtk,
}

impl Measured {
    fn describe(self) -> &'static str {
        match self {
            Self::TrainingBatch => "the training loss",
            Self::Test => "the test loss",
            Self::Weights => "the weights",
            Self::TrackedNtk => "the tracked NTK",
        }
    }
}

/// Why a run was judged diverged, as `summary.json` records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Divergence {
    /// The loss that gave the verdict.
    pub measured: Measured,
    /// Its value (`null` in JSON where it was NaN or infinite).
    pub loss: Option<f64>,
    /// The run's initial loss, the reference.
    pub initial_loss: Option<f64>,
    /// `train.divergence_factor`.
    pub factor: f64,
    /// Where the weights are not finite ([`Measured::Weights`]): the tensor and entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = self.measured.describe();
        match (&self.detail, self.measured) {
            (Some(detail), Measured::Weights) => {
                return write!(
                    f,
                    "{what} are not finite after the epoch's last step ({detail}): an update \
                     passed the range of the training precision"
                );
            }
            (Some(detail), _) => {
                return write!(f, "{what} is not finite after the epoch's steps ({detail})");
            }
            (None, _) => {}
        }
        match (self.loss, self.initial_loss) {
            // The engines sum a batch's losses over its samples before the mean: that sum, not
            // the mean, is what passes the range (hundred-and-eighteenth hostile round, D4).
            (None, _) if matches!(self.measured, Measured::TrainingBatch) => write!(
                f,
                "{what} is not finite (the batch's outputs or loss left the training \
                 precision's range or are NaN, or its loss summed over its samples, before its \
                 mean, passes f64's range, in which every engine sums it)"
            ),
            (None, _) => write!(f, "{what} is not finite"),
            (Some(l), Some(l0)) => write!(
                f,
                "{what} {l:.4e} exceeds train.divergence_factor = {:e} times the initial \
                 loss {l0:.4e}",
                self.factor
            ),
            (Some(l), None) => write!(f, "{what} is {l:.4e}"),
        }
    }
}

/// The judge of one run: the factor and, once the first batch has been measured, the
/// initial loss.
#[derive(Clone, Debug, PartialEq)]
pub struct Guard {
    factor: f64,
    initial_loss: Option<f64>,
}

impl Guard {
    /// A run's judge: `initial_loss` from its checkpoint when it resumes (`None` for a fresh
    /// run, or one checkpointed before the initial loss was kept: its first batch after the
    /// resume becomes the reference).
    pub fn new(factor: f64, initial_loss: Option<f64>) -> Self {
        Self {
            factor,
            initial_loss,
        }
    }

    /// The reference, once measured.
    pub fn initial_loss(&self) -> Option<f64> {
        self.initial_loss
    }

    /// Judges a mean loss; the first finite training-batch loss becomes the reference.
    /// `Some` when the run has diverged.
    pub fn judge(&mut self, measured: Measured, loss: f64) -> Option<Divergence> {
        if !loss.is_finite() {
            return Some(self.not_finite(measured));
        }
        match self.initial_loss {
            None if measured == Measured::TrainingBatch => {
                self.initial_loss = Some(loss);
                None
            }
            Some(l0) if exploded(loss, l0, self.factor) => Some(self.verdict(measured, Some(loss))),
            _ => None,
        }
    }

    /// The verdict on a loss that was not finite (a step engine that refused its step).
    pub fn not_finite(&self, measured: Measured) -> Divergence {
        self.verdict(measured, None)
    }

    /// The verdict on weights that are not finite at an epoch's end, `detail` saying where.
    pub fn weights_not_finite(&self, detail: String) -> Divergence {
        Divergence {
            detail: Some(detail),
            ..self.verdict(Measured::Weights, None)
        }
    }

    /// The verdict on a tracked NTK that is not finite at an epoch's end, `detail` saying
    /// why.
    pub fn tracked_not_finite(&self, detail: String) -> Divergence {
        Divergence {
            detail: Some(detail),
            ..self.verdict(Measured::TrackedNtk, None)
        }
    }

    fn verdict(&self, measured: Measured, loss: Option<f64>) -> Divergence {
        Divergence {
            measured,
            loss,
            initial_loss: self.initial_loss,
            factor: self.factor,
            detail: None,
        }
    }
}

/// `loss > factor * initial`; an initial loss of exactly 0 (a network that fits its first
/// batch at initialization) judges only non-finite losses, as nothing is a multiple of 0.
fn exploded(loss: f64, initial: f64, factor: f64) -> bool {
    initial > 0.0 && loss > factor * initial
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_training_batch_is_the_reference() {
        let mut g = Guard::new(1e4, None);
        // A test loss before any training batch sets nothing.
        assert_eq!(g.judge(Measured::Test, 5.0), None);
        assert_eq!(g.initial_loss(), None);
        assert_eq!(g.judge(Measured::TrainingBatch, 2381.0), None);
        assert_eq!(g.initial_loss(), Some(2381.0));
        // The run: 2,381 -> 1.26e14.
        assert_eq!(g.judge(Measured::TrainingBatch, 2381.0e4), None);
        let d = g.judge(Measured::TrainingBatch, 1.26e14).unwrap();
        assert_eq!(d.loss, Some(1.26e14));
        assert_eq!(d.initial_loss, Some(2381.0));
        assert!(
            d.to_string()
                .contains("exceeds train.divergence_factor = 1e4 times the initial loss 2.3810e3"),
            "{d}"
        );
    }

    #[test]
    fn non_finite_losses_diverge_with_or_without_a_reference() {
        let mut g = Guard::new(1e4, None);
        let d = g.judge(Measured::TrainingBatch, f64::NAN).unwrap();
        assert_eq!((d.loss, d.initial_loss), (None, None));
        assert_eq!(
            d.to_string(),
            "the training loss is not finite (the batch's outputs or loss left the training \
             precision's range or are NaN, or its loss summed over its samples, before its \
             mean, passes f64's range, in which every engine sums it)"
        );
        let mut g = Guard::new(1e4, Some(2.3));
        let d = g.judge(Measured::Test, f64::INFINITY).unwrap();
        assert_eq!(d.to_string(), "the test loss is not finite");
    }

    #[test]
    fn the_test_loss_is_judged_against_the_training_reference() {
        let mut g = Guard::new(100.0, Some(2.0));
        assert_eq!(g.judge(Measured::Test, 200.0), None);
        assert!(g.judge(Measured::Test, 200.1).is_some());
        // A zero reference judges only non-finite losses.
        let mut g = Guard::new(100.0, Some(0.0));
        assert_eq!(g.judge(Measured::TrainingBatch, 1e300), None);
    }
}
