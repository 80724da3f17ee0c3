//! The statistics of sweep tables and of the verdicts drawn over seeds, on statrs's
//! distributions:
//!
//! - [`summary`]: means, sample spreads, standard errors;
//! - [`welch`]: Welch's t-test of two means with the confidence interval of their
//!   difference (no test for two constant samples: there is no spread to test against);
//! - [`permutation`]: the exact permutation test of two means, which allows ties (epoch
//!   counts) and constant samples;
//! - [`holm`]: Holm's step-down correction of a family of p-values;
//! - [`equivalence`]: the two one-sided tests (TOST) of "similar" against a margin stated
//!   before looking, and the seeds a margin needs.

pub mod equivalence;
pub mod holm;
pub mod permutation;
pub mod summary;
pub mod welch;

pub use equivalence::{Tost, seeds_for_margin, tost};
pub use holm::holm;
pub use permutation::{Permutation, permutation};
pub use summary::{mean, mean_std, standard_error};
pub use welch::{Welch, student_t_two_sided, welch};

/// The level of every test: a two-sided p-value below it calls a difference real; the
/// confidence intervals are at `1 - ALPHA`.
pub const ALPHA: f64 = 0.05;
