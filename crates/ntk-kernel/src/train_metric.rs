//! The NTK watched during a user's burn-train training (feature `burn-train`): the kernel of
//! the model on a fixed probe batch every `N` steps, its condition number
//! `kappa = lambda_max / lambda_min` and its smallest gradient angle
//! `min_{i<j} arccos(K_ij / sqrt(K_ii K_jj))` (Liu & Hui Sec. 4), as two numeric metrics of
//! a `Learner` and, if asked, one CSV row per measurement.
//!
//! The metric reads the model from the step's output: the user's training output carries an
//! [`NtkInput`] (`NtkInput::of(self)` in `TrainStep::step`, the model before that step's
//! update) and adapts to it. The measurement is [`empirical_ntk`] (per-sample autodiff, any
//! module) in the probe's precision (f64 by default, whatever the model's), then
//! [`Conditioning::of`]: the same numbers as calling them by hand, which the example crate
//! `examples/ntk-of-my-model` checks.
//!
//! ```ignore
//! let probe = NtkProbe::new(x_probe, |m: &MyModel, x| m.forward(x))
//!     .every(NonZeroUsize::new(20).unwrap())
//!     .csv("runs/ntk.csv");
//! let training = SupervisedTraining::new(dir, train, valid)
//!     .metric_train_numeric(probe.kappa())
//!     .metric_train_numeric(probe.min_angle());
//! ```

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use burn::module::Module;
use burn::tensor::{Tensor, TensorReadError};
use burn::train::metric::{
    Metric, MetricAttributes, MetricMetadata, MetricName, Numeric, NumericAttributes, NumericEntry,
    SerializedEntry,
};
use ntk_numerics::backend::Precision;
use ntk_numerics::kernel::OutputMode;
use serde::Serialize;

use crate::api::{Conditioning, empirical_ntk};

/// What the metric reads from a training step: the model as that step saw it, off the
/// autodiff graph. Build it in `TrainStep::step` with [`NtkInput::of`] and return it from
/// the output's `Adaptor<NtkInput<M>>`.
#[derive(Clone, Debug)]
pub struct NtkInput<M> {
    model: M,
}

impl<M: Module> NtkInput<M> {
    /// The model before this step's update (parameters are shared, not copied).
    pub fn of(model: &M) -> Self {
        Self {
            model: model.valid(),
        }
    }
}

/// The forward map whose NTK is watched: a batch to its `[n, outputs]` outputs.
pub type Forward<M, const D: usize> = Arc<dyn Fn(&M, Tensor<D>) -> Tensor<2> + Send + Sync>;

/// One measurement of the metric: the NTK's conditioning after `step` SGD updates (a row of
/// the metric's CSV; column names as in the probe's tables). Named apart from ntk-train's
/// `ntk.csv` row (`ntk_train::metrics::NtkRow`, whose run counts epochs), which it was
/// named like before 2026-11-29.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricRow {
    /// Optimizer steps applied before the measurement (0: the initial model).
    pub step: usize,
    /// Kernel size (probe samples, times outputs for `OutputMode::Full`).
    pub n: usize,
    pub lambda_min: f64,
    pub lambda_max: f64,
    /// Empty when the kernel is numerically singular in the probe's precision.
    pub kappa: Option<f64>,
    pub rank: usize,
    pub singular: bool,
    /// Empty with `OutputMode::Full` ([`Conditioning::of_mode`]).
    pub min_grad_angle_deg: Option<f64>,
}

/// The name [`MetricRow`] had before 2026-11-29.
#[deprecated(since = "0.1.0", note = "renamed MetricRow")]
pub type NtkRow = MetricRow;

/// A probe batch, a forward map and a schedule; [`NtkProbe::kappa`] and
/// [`NtkProbe::min_angle`] are its two metrics, which share each measurement.
pub struct NtkProbe<M, const D: usize> {
    shared: Arc<Mutex<Shared<M, D>>>,
}

impl<M, const D: usize> Clone for NtkProbe<M, D> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

struct Shared<M, const D: usize> {
    x: Tensor<D>,
    forward: Forward<M, D>,
    every: NonZeroUsize,
    precision: Precision,
    mode: OutputMode,
    csv: Option<PathBuf>,
    /// Training steps each view has seen (a view is updated once per step).
    seen: [usize; 2],
    rows: Vec<MetricRow>,
}

impl<M: Module + 'static, const D: usize> NtkProbe<M, D> {
    /// Watches the NTK of `forward` on the probe batch `x` (`[n, ...]`, on the device the
    /// kernel is formed on); by default every 100 steps, in f64, `OutputMode::Sum`, no CSV.
    pub fn new(
        x: Tensor<D>,
        forward: impl Fn(&M, Tensor<D>) -> Tensor<2> + Send + Sync + 'static,
    ) -> Self {
        Self {
            shared: Arc::new(Mutex::new(Shared {
                x,
                forward: Arc::new(forward),
                every: NonZeroUsize::new(100).expect("100 is not zero"),
                precision: Precision::F64,
                mode: OutputMode::Sum,
                csv: None,
                seen: [0; 2],
                rows: Vec::new(),
            })),
        }
    }

    /// Measures at steps 0, `every`, `2 every`, ...
    pub fn every(self, every: NonZeroUsize) -> Self {
        self.lock().every = every;
        self
    }

    /// The precision the kernel is formed and factored in (the model is widened to it).
    pub fn precision(self, precision: Precision) -> Self {
        self.lock().precision = precision;
        self
    }

    /// Which outputs' gradients the kernel sums ([`OutputMode`]).
    pub fn mode(self, mode: OutputMode) -> Self {
        self.lock().mode = mode;
        self
    }

    /// Also writes every measurement to `path` as CSV (rewritten atomically each time).
    pub fn csv(self, path: impl Into<PathBuf>) -> Self {
        self.lock().csv = Some(path.into());
        self
    }

    /// The condition number `kappa` as a numeric metric (no value at steps between
    /// measurements, nor where the kernel is singular: the CSV says so, with its rank).
    pub fn kappa(&self) -> NtkMetric<M, D> {
        NtkMetric::new(self.clone(), View::Kappa)
    }

    /// The smallest gradient angle (degrees) as a numeric metric.
    pub fn min_angle(&self) -> NtkMetric<M, D> {
        NtkMetric::new(self.clone(), View::MinAngle)
    }

    /// Every measurement so far.
    pub fn rows(&self) -> Vec<MetricRow> {
        self.lock().rows.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared<M, D>> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a step for `view` and, on the schedule, returns that step's measurement
    /// (formed once, whichever view asks first).
    fn observe(&self, view: View, input: &NtkInput<M>) -> Observation {
        let mut s = self.lock();
        let step = s.seen[view as usize];
        s.seen[view as usize] += 1;
        if !step.is_multiple_of(s.every.get()) {
            return Observation::Between;
        }
        if let Some(row) = s.rows.iter().rev().find(|r| r.step == step) {
            return Observation::Measured(row.clone());
        }
        let k = empirical_ntk(
            &input.model,
            |m: &M, x| (s.forward)(m, x),
            s.x.clone(),
            s.mode,
            s.precision,
        );
        // Per-sample gradients, their Gram in f64: the autodiff route's angle resolution.
        let resolution =
            crate::angles::Resolution::of_route(crate::compute::Route::Autodiff, s.precision, 1);
        let c = match Conditioning::of_network(&k, resolution, s.mode, None) {
            Ok(c) => c,
            Err(e) => return Observation::Failed(format!("step {step}: {e}")),
        };
        let row = MetricRow {
            step,
            n: k.size,
            lambda_min: c.lambda_min,
            lambda_max: c.lambda_max,
            kappa: c.kappa,
            rank: c.rank,
            singular: c.singular,
            min_grad_angle_deg: c.min_grad_angle_deg,
        };
        s.rows.push(row.clone());
        if let Some(path) = &s.csv
            && let Err(e) = ntk_files::table::write_csv(path, &s.rows)
        {
            return Observation::Failed(e.to_string());
        }
        Observation::Measured(row)
    }
}

enum Observation {
    Between,
    Measured(MetricRow),
    Failed(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum View {
    Kappa = 0,
    MinAngle = 1,
}

/// One of the probe's two numbers as a burn-train metric.
pub struct NtkMetric<M, const D: usize> {
    probe: NtkProbe<M, D>,
    view: View,
    name: MetricName,
    /// This step's value (none between measurements) and the epoch's last one.
    current: Option<f64>,
    last: Option<f64>,
}

impl<M, const D: usize> Clone for NtkMetric<M, D> {
    fn clone(&self) -> Self {
        Self {
            probe: self.probe.clone(),
            view: self.view,
            name: Arc::clone(&self.name),
            current: self.current,
            last: self.last,
        }
    }
}

impl<M: Module + 'static, const D: usize> NtkMetric<M, D> {
    fn new(probe: NtkProbe<M, D>, view: View) -> Self {
        let name = match view {
            View::Kappa => "NTK kappa",
            View::MinAngle => "NTK min gradient angle",
        };
        Self {
            probe,
            view,
            name: Arc::new(name.to_string()),
            current: None,
            last: None,
        }
    }

    fn entry(&self, text: String) -> SerializedEntry {
        let serialized = self.current.map_or(String::new(), |v| v.to_string());
        SerializedEntry::new(text, serialized)
    }
}

impl<M: Module + 'static, const D: usize> Metric for NtkMetric<M, D> {
    type Input = NtkInput<M>;

    fn name(&self) -> MetricName {
        Arc::clone(&self.name)
    }

    fn description(&self) -> Option<String> {
        Some(match self.view {
            View::Kappa => "lambda_max / lambda_min of the NTK on the probe batch".into(),
            View::MinAngle => "smallest angle between two probe samples' gradients".into(),
        })
    }

    fn attributes(&self) -> MetricAttributes {
        NumericAttributes {
            unit: (self.view == View::MinAngle).then(|| "deg".to_string()),
            higher_is_better: self.view == View::MinAngle,
        }
        .into()
    }

    fn update(
        &mut self,
        item: &NtkInput<M>,
        _metadata: &MetricMetadata,
    ) -> Result<SerializedEntry, TensorReadError> {
        self.current = None;
        let text = match self.probe.observe(self.view, item) {
            Observation::Between => return Ok(SerializedEntry::not_available(None)),
            Observation::Failed(e) => format!("not measured: {e}"),
            Observation::Measured(row) => {
                let value = match self.view {
                    View::Kappa => row.kappa,
                    View::MinAngle => row.min_grad_angle_deg,
                };
                self.current = value;
                self.last = value.or(self.last);
                match (self.view, value) {
                    (View::Kappa, Some(k)) => format!("{k:.4e} (step {})", row.step),
                    (View::Kappa, None) => format!(
                        "singular: rank {} of {} (step {})",
                        row.rank, row.n, row.step
                    ),
                    (View::MinAngle, Some(a)) => format!("{a:.3} deg (step {})", row.step),
                    (View::MinAngle, None) => format!("undefined (step {})", row.step),
                }
            }
        };
        Ok(self.entry(text))
    }

    /// Nothing at an epoch's end: the measurements are the steps' entries (the epoch's
    /// final value, for summaries, is its last measurement).
    fn compute(&mut self) -> Result<SerializedEntry, TensorReadError> {
        self.current = None;
        Ok(SerializedEntry::not_available(None))
    }

    fn clear(&mut self) {
        self.current = None;
        self.last = None;
    }
}

impl<M: Module + 'static, const D: usize> Numeric for NtkMetric<M, D> {
    fn value(&self) -> Option<NumericEntry> {
        self.current.map(NumericEntry::Value)
    }

    fn running_value(&self) -> Option<NumericEntry> {
        self.last.map(NumericEntry::Value)
    }

    fn final_value(&self) -> NumericEntry {
        NumericEntry::Final(self.last.unwrap_or(f64::NAN))
    }
}
