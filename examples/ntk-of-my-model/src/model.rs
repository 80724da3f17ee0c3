//! Your model: any Burn module. This one is a small classifier with a LayerNorm (no layer of
//! ntk-model's), trained by burn-train's `Learner`; its training output carries the model
//! for the NTK metric (`NtkInput`).

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::activation::tanh;
use burn::tensor::{Device, Tensor};
use burn::train::metric::{AccuracyInput, Adaptor, ItemLazy, LossInput};
use burn::train::{ClassificationOutput, InferenceStep, TrainOutput, TrainStep};
use ntk_kernel::train_metric::NtkInput;

use crate::data::Batch;

/// `f(x) = W_2 tanh(LayerNorm(W_1 x + b_1)) + b_2`.
#[derive(Module, Debug)]
pub struct Classifier {
    hidden: Linear,
    norm: LayerNorm,
    out: Linear,
}

impl Classifier {
    pub fn new(inputs: usize, width: usize, classes: usize, device: &Device) -> Self {
        Self {
            hidden: LinearConfig::new(inputs, width).init(device),
            norm: LayerNormConfig::new(width).init(device),
            out: LinearConfig::new(width, classes).init(device),
        }
    }

    /// Logits `[b, classes]` of a batch `[b, inputs]`.
    pub fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        self.out
            .forward(tanh(self.norm.forward(self.hidden.forward(x))))
    }

    fn classify(&self, batch: Batch) -> ClassificationOutput {
        let logits = self.forward(batch.x);
        let loss = CrossEntropyLossConfig::new()
            .init(&logits.device())
            .forward(logits.clone(), batch.y.clone());
        ClassificationOutput::new(loss, logits, batch.y)
    }
}

/// A training step's output: what Burn's metrics read, and the model for the NTK metric.
pub struct StepOutput {
    classification: ClassificationOutput,
    ntk: NtkInput<Classifier>,
}

impl TrainStep for Classifier {
    type Input = Batch;
    type Output = StepOutput;

    fn step(&self, batch: Batch) -> TrainOutput<StepOutput> {
        let classification = self.classify(batch);
        let grads = classification.loss.backward();
        // The model before this step's update: the NTK metric's measurement at this step.
        let ntk = NtkInput::of(self);
        TrainOutput::new(
            self,
            grads,
            StepOutput {
                classification,
                ntk,
            },
        )
    }
}

impl InferenceStep for Classifier {
    type Input = Batch;
    type Output = ClassificationOutput;

    fn step(&self, batch: Batch) -> ClassificationOutput {
        self.classify(batch)
    }
}

impl ItemLazy for StepOutput {
    fn sync(self) -> Result<Self, burn::tensor::ExecutionError> {
        Ok(Self {
            classification: self.classification.sync()?,
            ntk: self.ntk,
        })
    }
}

impl Adaptor<LossInput> for StepOutput {
    fn adapt(&self) -> LossInput {
        self.classification.adapt()
    }
}

impl Adaptor<AccuracyInput> for StepOutput {
    fn adapt(&self) -> AccuracyInput {
        self.classification.adapt()
    }
}

impl Adaptor<NtkInput<Classifier>> for StepOutput {
    fn adapt(&self) -> NtkInput<Classifier> {
        self.ntk.clone()
    }
}
