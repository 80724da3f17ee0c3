//! Learning-rate schedules: constant, step, multi-step, cosine, each with an optional
//! warm-up, counted in epochs or in iterations (`[schedule]` in a config).
//!
//! With base rate `eta`, position `t` (epochs completed, or iterations completed, per
//! `unit`) and horizon `T` (total epochs or iterations):
//! - constant: `eta`
//! - step: `eta gamma^floor(t / step_size)`
//! - multi_step: `eta gamma^#{m in milestones : m <= t}` (He et al.: milestones 32k, 48k
//!   iterations, gamma 0.1)
//! - cosine: `min_lr + (eta - min_lr) (1 + cos(pi (t - w) / (T - w))) / 2` after a warm-up
//!   of `w`
//!
//! Warm-up for `t < warmup`: `linear` goes from `warmup_lr` to `eta`,
//! `warmup_lr + (eta - warmup_lr) t / warmup`; `constant` holds `warmup_lr` (He et al.'s
//! ResNet-110: 0.01 for about 400 iterations).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleKind {
    #[default]
    Constant,
    Step,
    MultiStep,
    Cosine,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    #[default]
    Epoch,
    Iteration,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarmupMode {
    #[default]
    Linear,
    Constant,
}

fn default_gamma() -> f64 {
    0.1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleConfig {
    #[serde(default)]
    pub kind: ScheduleKind,
    /// What `step_size`, `milestones` and `warmup` count.
    #[serde(default)]
    pub unit: Unit,
    /// step: decay every this many units.
    #[serde(default)]
    pub step_size: Option<usize>,
    /// multi_step: decay at these positions.
    #[serde(default)]
    pub milestones: Vec<usize>,
    /// Decay factor of step and multi_step.
    #[serde(default = "default_gamma")]
    pub gamma: f64,
    /// cosine: the final rate.
    #[serde(default)]
    pub min_lr: f64,
    /// Warm-up length in units (0: none).
    #[serde(default)]
    pub warmup: usize,
    #[serde(default)]
    pub warmup_mode: WarmupMode,
    /// Start of a linear warm-up, or the rate of a constant one.
    #[serde(default)]
    pub warmup_lr: f64,
}

impl Default for ScheduleConfig {
    fn default() -> Self {
        Self {
            kind: ScheduleKind::Constant,
            unit: Unit::Epoch,
            step_size: None,
            milestones: Vec::new(),
            gamma: default_gamma(),
            min_lr: 0.0,
            warmup: 0,
            warmup_mode: WarmupMode::Linear,
            warmup_lr: 0.0,
        }
    }
}

impl ScheduleConfig {
    pub fn validate(&self) -> crate::Result<()> {
        if !(self.gamma.is_finite() && self.gamma > 0.0) {
            return Err(crate::Error::config(
                "schedule.gamma",
                self.gamma,
                "must be positive and finite",
            ));
        }
        match self.kind {
            ScheduleKind::Step if self.step_size.unwrap_or(0) == 0 => {
                return Err(crate::Error::Needs {
                    key: "schedule.kind",
                    value: "\"step\"",
                    needs: "schedule.step_size >= 1",
                });
            }
            ScheduleKind::MultiStep if self.milestones.is_empty() => {
                return Err(crate::Error::Needs {
                    key: "schedule.kind",
                    value: "\"multi_step\"",
                    needs: "schedule.milestones",
                });
            }
            ScheduleKind::MultiStep if self.milestones.windows(2).any(|w| w[0] >= w[1]) => {
                return Err(crate::Error::config(
                    "schedule.milestones",
                    format!("{:?}", self.milestones),
                    "must be increasing",
                ));
            }
            _ => {}
        }
        if !(self.min_lr.is_finite() && self.min_lr >= 0.0) {
            return Err(crate::Error::config(
                "schedule.min_lr",
                self.min_lr,
                "must be non-negative and finite",
            ));
        }
        if !(self.warmup_lr.is_finite() && self.warmup_lr >= 0.0) {
            return Err(crate::Error::config(
                "schedule.warmup_lr",
                self.warmup_lr,
                "must be non-negative and finite",
            ));
        }
        self.refuse_keys_that_do_not_apply()
    }

    /// A key of another kind of schedule (or of a warm-up there is not) is an error, not a
    /// value silently unused; a value equal to its default is no setting.
    fn refuse_keys_that_do_not_apply(&self) -> crate::Result<()> {
        use ScheduleKind::*;
        let default = Self::default();
        let kind = self.kind;
        let refused = [
            (
                self.step_size.is_some() && kind != Step,
                "schedule.step_size",
                format!("{:?}", self.step_size.unwrap_or(0)),
                "applies to schedule.kind = \"step\" only",
            ),
            (
                !self.milestones.is_empty() && kind != MultiStep,
                "schedule.milestones",
                format!("{:?}", self.milestones),
                "applies to schedule.kind = \"multi_step\" only",
            ),
            (
                self.gamma != default.gamma && !matches!(kind, Step | MultiStep),
                "schedule.gamma",
                self.gamma.to_string(),
                "applies to schedule.kind = \"step\" or \"multi_step\" only",
            ),
            (
                self.min_lr != default.min_lr && kind != Cosine,
                "schedule.min_lr",
                self.min_lr.to_string(),
                "applies to schedule.kind = \"cosine\" only",
            ),
            (
                self.warmup == 0 && self.warmup_mode != default.warmup_mode,
                "schedule.warmup_mode",
                format!("{:?}", self.warmup_mode).to_lowercase(),
                "applies to a warm-up only (schedule.warmup > 0)",
            ),
            (
                self.warmup == 0 && self.warmup_lr != default.warmup_lr,
                "schedule.warmup_lr",
                self.warmup_lr.to_string(),
                "applies to a warm-up only (schedule.warmup > 0)",
            ),
            (
                self.unit != default.unit && kind == Constant && self.warmup == 0,
                "schedule.unit",
                "\"iteration\"".to_string(),
                "counts the positions of step_size, milestones and warmup, and this schedule \
                 has none",
            ),
        ];
        match refused.into_iter().find(|r| r.0) {
            Some((_, key, value, reason)) => Err(crate::Error::config(key, value, reason)),
            None => Ok(()),
        }
    }

    /// What the schedule lets through but a researcher should hear, for a run of `total`
    /// steps of `per_epoch` each: a warm-up the run never leaves, a step size or milestones
    /// it never reaches (the rate never decays there; a short trial of a long run's config
    /// is the reason these are warnings, not errors).
    pub fn warnings(&self, total: usize, per_epoch: usize) -> Vec<String> {
        let run = match self.unit {
            Unit::Epoch => total.div_ceil(per_epoch.max(1)),
            Unit::Iteration => total,
        };
        let unit = match self.unit {
            Unit::Epoch => "epochs",
            Unit::Iteration => "iterations",
        };
        let mut said = Vec::new();
        if self.warmup > 0 && self.warmup >= run {
            said.push(format!(
                "schedule.warmup = {}: the run has {run} {unit}, so it ends in the warm-up and \
                 its rate never reaches optim.lr",
                self.warmup
            ));
        }
        // Step t (0-based) of the run's `run` decays at t = step_size, at each milestone m.
        if let (ScheduleKind::Step, Some(size)) = (self.kind, self.step_size)
            && size >= run
        {
            said.push(format!(
                "schedule.step_size = {size}: the run has {run} {unit}, so its rate never \
                 decays"
            ));
        }
        // A milestone at 0 decays from the first step: the run never sees optim.lr (tenth
        // hostile round, S03; PyTorch's MultiStepLR would never fire it).
        if self.kind == ScheduleKind::MultiStep && self.milestones.first() == Some(&0) {
            said.push(format!(
                "schedule.milestones = {:?}: a milestone at 0 decays the rate from the first \
                 step, so the run never trains at optim.lr",
                self.milestones
            ));
        }
        let beyond: Vec<usize> = self
            .milestones
            .iter()
            .copied()
            .filter(|&m| m >= run)
            .collect();
        if self.kind == ScheduleKind::MultiStep && !beyond.is_empty() {
            said.push(format!(
                "schedule.milestones = {:?}: the run has {run} {unit}, so it never reaches {}",
                self.milestones,
                match beyond.len() {
                    n if n == self.milestones.len() =>
                        "any of them: its rate never decays".to_string(),
                    _ => format!("{beyond:?}"),
                }
            ));
        }
        said
    }

    /// The rate of SGD step `iteration` (0-based) with base rate `lr`, `per_epoch` steps
    /// per epoch and `total` steps in the run.
    pub fn lr(&self, lr: f64, iteration: usize, per_epoch: usize, total: usize) -> f64 {
        let (t, horizon) = match self.unit {
            Unit::Epoch => (
                iteration / per_epoch.max(1),
                total.div_ceil(per_epoch.max(1)),
            ),
            Unit::Iteration => (iteration, total),
        };
        if t < self.warmup {
            return match self.warmup_mode {
                WarmupMode::Constant => self.warmup_lr,
                WarmupMode::Linear => {
                    self.warmup_lr + (lr - self.warmup_lr) * t as f64 / self.warmup as f64
                }
            };
        }
        match self.kind {
            ScheduleKind::Constant => lr,
            ScheduleKind::Step => {
                let k = t / self.step_size.unwrap_or(1).max(1);
                lr * self.gamma.powi(k as i32)
            }
            ScheduleKind::MultiStep => {
                let k = self.milestones.iter().filter(|&&m| m <= t).count();
                lr * self.gamma.powi(k as i32)
            }
            ScheduleKind::Cosine => {
                let span = horizon.saturating_sub(self.warmup).max(1) as f64;
                let s = (t - self.warmup) as f64 / span;
                self.min_lr + (lr - self.min_lr) * (1.0 + (std::f64::consts::PI * s).cos()) / 2.0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(kind: ScheduleKind) -> ScheduleConfig {
        ScheduleConfig {
            kind,
            ..Default::default()
        }
    }

    #[test]
    fn he_et_al_multi_step_with_constant_warm_up() {
        let s = ScheduleConfig {
            unit: Unit::Iteration,
            milestones: vec![32000, 48000],
            warmup: 400,
            warmup_mode: WarmupMode::Constant,
            warmup_lr: 0.01,
            ..cfg(ScheduleKind::MultiStep)
        };
        s.validate().unwrap();
        let lr = |i| s.lr(0.1, i, 391, 64000);
        assert_eq!(lr(0), 0.01);
        assert_eq!(lr(399), 0.01);
        assert_eq!(lr(400), 0.1);
        assert_eq!(lr(31999), 0.1);
        assert!((lr(32000) - 0.01).abs() < 1e-15);
        assert!((lr(48000) - 0.001).abs() < 1e-15);
    }

    #[test]
    fn step_counts_epochs() {
        let s = ScheduleConfig {
            step_size: Some(2),
            gamma: 0.5,
            ..cfg(ScheduleKind::Step)
        };
        // 10 steps per epoch: epochs 0, 1 at 1.0; 2, 3 at 0.5; 4 at 0.25.
        let got: Vec<f64> = (0..5).map(|e| s.lr(1.0, 10 * e + 3, 10, 50)).collect();
        assert_eq!(got, [1.0, 1.0, 0.5, 0.5, 0.25]);
    }

    #[test]
    fn cosine_ends_at_min_lr_after_linear_warm_up() {
        let s = ScheduleConfig {
            unit: Unit::Iteration,
            min_lr: 0.0,
            warmup: 10,
            ..cfg(ScheduleKind::Cosine)
        };
        assert_eq!(s.lr(1.0, 0, 1, 110), 0.0);
        assert!((s.lr(1.0, 5, 1, 110) - 0.5).abs() < 1e-15);
        assert_eq!(s.lr(1.0, 10, 1, 110), 1.0);
        assert!((s.lr(1.0, 60, 1, 110) - 0.5).abs() < 1e-12);
        assert!(s.lr(1.0, 109, 1, 110) < 1e-3);
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = cfg(ScheduleKind::Step).validate().unwrap_err().to_string();
        assert!(e.contains("schedule.step_size"), "{e}");
        let s = ScheduleConfig {
            milestones: vec![5, 3],
            ..cfg(ScheduleKind::MultiStep)
        };
        assert!(
            s.validate()
                .unwrap_err()
                .to_string()
                .contains("schedule.milestones")
        );
    }
}
