//! How the `Learner` reports here: one line per epoch. Without its terminal UI, burn-train's
//! own renderer prints every batch's progress as a debug line (`ProgressSnapshot { .. }`),
//! which floods a log that is not a terminal; a renderer is a small trait set to implement.

use burn::train::logger::{EvaluationProgressLogger, TrainingProgressLogger};
use burn::train::metric::MetricDefinition;
use burn::train::renderer::{
    EvaluationName, MetricState, MetricsRenderer, MetricsRendererEvaluation,
    MetricsRendererTraining,
};

/// Prints when training starts and when each epoch ends; burn-train's summary at the end.
#[derive(Default)]
pub struct EpochLines {
    epochs: usize,
}

impl MetricsRendererTraining for EpochLines {
    fn update_train(&mut self, _: MetricState) {}
    fn update_valid(&mut self, _: MetricState) {}
}

impl MetricsRendererEvaluation for EpochLines {
    fn update_test(&mut self, _: EvaluationName, _: MetricState) {}
}

impl TrainingProgressLogger for EpochLines {
    fn start(&mut self, epochs: usize, from: usize, items: Option<usize>, _: Option<&str>) {
        self.epochs = epochs;
        let items = items.map_or(String::new(), |n| format!(", {n} items"));
        println!("training: epochs {from}..{epochs}{items}");
    }
    fn update_epoch(&mut self, epoch: usize) {
        println!("epoch {epoch}/{} done", self.epochs);
    }
    fn start_split(&mut self, _: &str, _: usize) {}
    fn update_split(&mut self, _: usize) {}
    fn end_split(&mut self) {}
    fn end(&mut self) {}
    fn log_event_training(&mut self, _: String) {}
}

impl EvaluationProgressLogger for EpochLines {
    fn start_global_progress(&mut self, _: usize) {}
    fn start_test(&mut self, _: &str, _: usize) {}
    fn update_test_progress(&mut self, _: usize) {}
    fn end_test(&mut self) {}
    fn end_global_progress(&mut self) {}
    fn log_event_evaluation(&mut self, _: String) {}
}

impl MetricsRenderer for EpochLines {
    fn manual_close(&mut self) {}
    fn register_metric(&mut self, _: MetricDefinition) {}
}
