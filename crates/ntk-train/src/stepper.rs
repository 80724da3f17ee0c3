//! Who computes a run's SGD steps, behind the one interface the epoch loop of
//! [`crate::train`] needs: [`Stepper`]. Two engines implement it:
//! - [`BurnStepper`]: Burn's autodiff (`loss.backward()`), `CrossEntropyLoss` and
//!   `ModuleOptimizer` (any network, any backend);
//! - [`HostStepper`]: the host engines of [`crate::host`] on host GEMMs (CIFAR ResNets, and MLPs without
//!   normalization layers).
//!
//! [`stepper`] picks one for a run ([`choose_engine`]). Both keep a Burn
//! [`Model`] (autodiff device, training mode) as the run's state of record: evaluation, the
//! NTK tracking and checkpoints read it.

use std::path::Path;

use burn::module::Module;
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::tensor::{DType, Device, Tensor, TensorData};
use ntk_numerics::backend::Compute;

use crate::checkpoint::{self, History, Loaded, OptimState, RunIdentity, StateOf};
use crate::config::{EngineChoice, OptimConfig};
use crate::host::{Engine, StepResult};
use crate::loss::Loss;
use crate::model::Model;
use crate::sgd::{optimizer, scalar, sgd_step};

/// A mini-batch: `x` row-major `[B, d]` (augmented when the run augments), its labels.
pub struct Batch {
    pub x: Vec<f64>,
    pub d: usize,
    pub labels: Vec<usize>,
}

/// What the epoch loop needs from a step engine.
pub trait Stepper {
    /// Whose optimizer state its checkpoints hold (`checkpoint::Pointer::engine`).
    fn engine(&self) -> StateOf;

    /// What computes the steps, for the log: `Burn autodiff`, `host GEMM` or the device.
    fn method(&self) -> &'static str;

    /// The engine's name in the log: [`Stepper::engine`], unless the engine writes another
    /// engine's checkpoints (the cuDNN engine writes the host engine's).
    fn name(&self) -> &'static str {
        self.engine().name()
    }

    /// Whether the steps run on a GPU (the provenance then names it: [`Stepper::method`]).
    fn on_gpu(&self) -> bool {
        false
    }

    /// One SGD step on `batch` at learning rate `lr`: the summed loss and the correct
    /// predictions of the forward before the update. `None` when the loss is not finite
    /// (the run diverged): then no update is made.
    fn step(&mut self, batch: Batch, lr: f64) -> Option<StepResult>;

    /// Brings the model of record up to date with the steps (the host engine writes its
    /// weights back); called at the end of every finite epoch, before evaluation, NTK
    /// tracking and checkpoints.
    fn sync(&mut self) {}

    /// The model of record in evaluation mode on the plain device (for evaluation and the
    /// NTK); up to date after [`Stepper::sync`].
    fn valid(&self) -> Model;

    /// The mean loss and accuracy on `set` in evaluation mode computed by the engine itself,
    /// or `None` where the model of record ([`Stepper::valid`]) is to be evaluated.
    fn evaluate(&self, _set: &ntk_data::Inputs, _batch: usize) -> Option<(f64, f64)> {
        None
    }

    /// A copy of what a checkpoint holds: the model of record and the optimizer's state.
    fn snapshot(&self) -> Snapshot;

    /// Loads the optimizer state of `ck`, a checkpoint written by this engine: Burn's
    /// optimizer record, or the host engine's momentum buffers.
    fn load_state(&mut self, ck: &Loaded) -> crate::Result<()>;

    /// The first error of a device behind the engine since the last call (a step, a sync or
    /// an evaluation that failed on the GPU), which the epoch loop reports instead of
    /// counting a failed step as a divergence. `None` for the host engines.
    fn failure(&mut self) -> Option<crate::Error> {
        None
    }
}

/// The stepper of a run of `model` (plain device, as built or loaded from a checkpoint):
/// the host engine where [`choose_engine`] takes it for `choice`, Burn's otherwise.
pub fn stepper(
    choice: EngineChoice,
    (optim, loss): (&OptimConfig, Loss),
    model: Model,
    compute: &Compute,
) -> crate::Result<Box<dyn Stepper>> {
    let ad = compute.device.clone().autodiff();
    let model = model.fork(&ad).train();
    Ok(
        match choose_engine(choice, (optim, loss), &model, compute)? {
            Some(engine) => Box::new(HostStepper { engine, model }),
            None => Box::new(BurnStepper::new(model, (optim, loss), ad, compute.dtype())),
        },
    )
}

/// A stepper's state at the end of an epoch, as a checkpoint holds it.
#[derive(Clone)]
pub struct Snapshot {
    model: Model,
    optim: SavedOptim,
}

impl Snapshot {
    /// The state of `model` with the optimizer state `optim` (the cuDNN engine's).
    #[cfg_attr(not(feature = "cudnn"), allow(dead_code))]
    pub(crate) fn new(model: Model, optim: SavedOptim) -> Self {
        Self { model, optim }
    }
}

/// The optimizer state of a [`Snapshot`].
#[derive(Clone)]
pub(crate) enum SavedOptim {
    Burn(ModuleOptimizer),
    /// The host engine's momentum buffers, flattened (`crate::host::Engine::velocity`).
    Host(Vec<f64>),
}

impl Snapshot {
    /// Writes it as the run's checkpoint after `position = (epoch, iteration)`, with what the
    /// run has recorded so far, and makes it current ([`checkpoint::save`]).
    pub fn save(
        &self,
        run: &Path,
        position: (usize, usize),
        identity: &RunIdentity<'_>,
        history: &History<'_>,
    ) -> crate::Result<()> {
        let optim = match &self.optim {
            SavedOptim::Burn(o) => OptimState::Burn(o),
            SavedOptim::Host(v) => OptimState::Host(v),
        };
        checkpoint::save(run, position, identity, &self.model, optim, history)
    }
}

/// Burn's autodiff, cross-entropy and SGD: `loss.backward()`, then `ModuleOptimizer::step`.
pub struct BurnStepper {
    /// The model of record (autodiff device, training mode); taken only inside a step.
    model: Option<Model>,
    optim: ModuleOptimizer,
    /// The SGD config (`scalar_lr_scale` splits a step, [`crate::sgd::sgd_step`]).
    config: OptimConfig,
    loss: Loss,
    /// The autodiff device and the run's float type, for the batch tensors.
    device: Device,
    dtype: DType,
}

impl BurnStepper {
    /// Trains `model` (on the autodiff device `device`, training mode) with SGD as `config`
    /// says ([`crate::sgd::optimizer`]).
    pub fn new(
        model: Model,
        (config, loss): (&OptimConfig, Loss),
        device: Device,
        dtype: DType,
    ) -> Self {
        Self {
            model: Some(model),
            optim: optimizer(config),
            config: config.clone(),
            loss,
            device,
            dtype,
        }
    }

    fn model(&self) -> &Model {
        self.model
            .as_ref()
            .expect("the model is back after every step")
    }

    /// The batch's inputs `[B, d]` as a tensor on the autodiff device.
    fn inputs(&self, batch: &Batch) -> Tensor<2> {
        let b = batch.labels.len();
        Tensor::from_data(
            TensorData::new(batch.x.clone(), [b, batch.d]),
            (&self.device, self.dtype),
        )
    }
}

impl Stepper for BurnStepper {
    fn engine(&self) -> StateOf {
        StateOf::Burn
    }

    fn method(&self) -> &'static str {
        "Burn autodiff"
    }

    fn step(&mut self, batch: Batch, lr: f64) -> Option<StepResult> {
        let b = batch.labels.len();
        let logits = self.model().forward(self.inputs(&batch));
        let (loss, hits) = self.loss.burn(logits, &batch.labels);
        let l = scalar(loss.clone());
        if !l.is_finite() {
            return None;
        }
        let model = self
            .model
            .take()
            .expect("the model is back after every step");
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        self.model = Some(sgd_step(&mut self.optim, &self.config, lr, model, grads));
        Some(StepResult {
            loss_sum: l * b as f64,
            correct: hits,
        })
    }

    fn valid(&self) -> Model {
        self.model().valid()
    }

    fn snapshot(&self) -> Snapshot {
        // BatchNorm's running statistics: the training forward stages each update per thread
        // (`RunningState::update`), and a visitor (the checkpoint's record) reads the value
        // from before the last one. `valid()` merges the staged updates into the shared state.
        let _ = self.model().valid();
        Snapshot {
            model: self.model().clone(),
            optim: SavedOptim::Burn(self.optim.clone()),
        }
    }

    fn load_state(&mut self, ck: &Loaded) -> crate::Result<()> {
        self.optim = ck.load_optim(self.optim.clone())?;
        Ok(())
    }
}

/// The host engine ([`crate::host`]): the steps on host GEMMs, the Burn model of record
/// updated from its weights at every [`Stepper::sync`].
pub struct HostStepper {
    engine: Engine,
    /// The model of record (autodiff device, training mode).
    model: Model,
}

impl Stepper for HostStepper {
    fn engine(&self) -> StateOf {
        StateOf::Host
    }

    fn method(&self) -> &'static str {
        "host GEMM"
    }

    fn step(&mut self, batch: Batch, lr: f64) -> Option<StepResult> {
        let r = self.engine.step(&batch.x, batch.d, &batch.labels, lr);
        r.loss_sum.is_finite().then_some(r)
    }

    fn sync(&mut self) {
        self.engine.write_into(&mut self.model);
    }

    fn evaluate(&self, set: &ntk_data::Inputs, batch: usize) -> Option<(f64, f64)> {
        self.engine.evaluate(set, batch)
    }

    fn valid(&self) -> Model {
        self.model.valid()
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            model: self.model.clone(),
            optim: SavedOptim::Host(self.engine.velocity()),
        }
    }

    fn load_state(&mut self, ck: &Loaded) -> crate::Result<()> {
        self.engine
            .set_velocity(&ck.load_velocity()?)
            .map_err(|e| crate::Error::At {
                path: ck.dir.clone(),
                source: Box::new(e),
            })
    }
}

/// The host engine for this run (see [`crate::host`]), or `None` for Burn's autodiff and
/// optimizer: `auto` takes the host engine on a CPU backend for MLPs without normalization
/// and for CIFAR ResNets.
pub fn choose_engine(
    choice: EngineChoice,
    (optim, loss): (&OptimConfig, Loss),
    model: &Model,
    compute: &Compute,
) -> crate::Result<Option<Engine>> {
    let cpu = compute.on_host();
    let engine = || Engine::for_model(model, (optim, loss), compute.precision);
    match choice {
        EngineChoice::Burn => Ok(None),
        EngineChoice::Auto => Ok(if cpu { engine() } else { None }),
        // Started (or refused) by `crate::cudnn_engine::stepper` before this is asked.
        EngineChoice::Cudnn => Err(crate::Error::NoDeviceEngine {
            reason: "the host engine does not run it".into(),
        }),
        EngineChoice::Host => engine()
            .map(Some)
            .ok_or_else(|| crate::Error::NoHostEngine {
                model: model.describe(),
            }),
    }
}

#[cfg(test)]
mod tests {
    use ntk_model::{ActivationKind, MlpConfig, Normalization, ResNetConfig, ResNetVariant};
    use ntk_numerics::backend::{self, Precision};
    use ntk_runs::provenance::Provenance;

    use super::*;
    use crate::metrics::EpochMetrics;
    use ntk_model::NetSpec;

    const D: usize = 16;
    const K: usize = 3;

    fn cpu() -> Compute {
        backend::select(Some("flex"), Precision::F32).unwrap()
    }

    fn momentum() -> OptimConfig {
        OptimConfig::sgd(0.1, 0.9, 1e-4)
    }

    fn mlp(normalization: Normalization) -> NetSpec {
        mlp_with(ActivationKind::Relu, normalization)
    }

    fn mlp_with(activation: ActivationKind, normalization: Normalization) -> NetSpec {
        NetSpec::Mlp(MlpConfig {
            output_dim: K,
            seed: 5,
            normalization,
            ..MlpConfig::new(D, 8, 2, activation)
        })
    }

    /// A ResNet-8 on 1 x 4 x 4 images (`D` inputs), two channels wide.
    fn resnet() -> NetSpec {
        NetSpec::ResNet(
            ResNetConfig::new(8, ResNetVariant::BatchNorm)
                .with_base_width(2)
                .with_image_size(4)
                .with_in_channels(1)
                .with_num_classes(K),
        )
    }

    fn build(spec: &NetSpec, compute: &Compute) -> Model {
        spec.build(D, &compute.device, compute.dtype()).unwrap()
    }

    /// A batch of 5 rows of fixed pseudo-random values, different for each `step`.
    fn batch(step: usize) -> Batch {
        let b = 5;
        let x = (0..b * D)
            .map(|i| ((i * 37 + step * 101) % 113) as f64 / 56.5 - 1.0)
            .collect();
        let labels = (0..b).map(|i| (i * 7 + step) % K).collect();
        Batch { x, d: D, labels }
    }

    /// Every parameter of `model`, flattened.
    fn values(model: &Model) -> Vec<f64> {
        let mut out = Vec::new();
        model.visit(&mut Collect(&mut out));
        out
    }

    struct Collect<'a>(&'a mut Vec<f64>);

    impl burn::module::ModuleVisitor for Collect<'_> {
        fn visit_float<const D: usize>(&mut self, param: &burn::module::Param<Tensor<D>>) {
            self.0.extend(param.val().try_into_vec_as::<f64>().unwrap());
        }
    }

    #[test]
    fn the_engine_follows_the_choice_and_the_network_on_the_cpu() {
        let compute = cpu();
        let nets = [
            ("plain mlp", mlp(Normalization::None)),
            ("batch-norm mlp", mlp(Normalization::BatchNorm)),
            ("resnet", resnet()),
        ];
        let expected = [
            // auto, burn, host
            [
                Some(StateOf::Host),
                Some(StateOf::Burn),
                Some(StateOf::Host),
            ],
            [Some(StateOf::Burn), Some(StateOf::Burn), None],
            [
                Some(StateOf::Host),
                Some(StateOf::Burn),
                Some(StateOf::Host),
            ],
        ];
        let choices = [EngineChoice::Auto, EngineChoice::Burn, EngineChoice::Host];
        for ((name, spec), want) in nets.iter().zip(expected) {
            for (choice, want) in choices.into_iter().zip(want) {
                let got = stepper(
                    choice,
                    (&momentum(), Loss::CrossEntropy),
                    build(spec, &compute),
                    &compute,
                );
                match (got, want) {
                    (Ok(s), Some(engine)) => {
                        assert_eq!(s.engine(), engine, "{name} {choice:?}");
                        let method = if engine == StateOf::Host {
                            "host GEMM"
                        } else {
                            "Burn autodiff"
                        };
                        assert_eq!(s.method(), method, "{name} {choice:?}");
                    }
                    (Err(e), None) => assert!(
                        e.to_string().contains("train.engine = \"host\"")
                            && e.to_string().contains("\"burn\""),
                        "{name}: {e}"
                    ),
                    (got, want) => panic!(
                        "{name} {choice:?}: {:?} instead of {want:?}",
                        got.map(|s| s.engine())
                    ),
                }
            }
        }
    }

    #[test]
    fn auto_takes_burn_off_the_cpu() {
        let compute = Compute {
            backend: ntk_numerics::backend::Backend::Cuda,
            ..cpu()
        };
        let model = build(&mlp(Normalization::None), &compute);
        let s = stepper(
            EngineChoice::Auto,
            (&momentum(), Loss::CrossEntropy),
            model,
            &compute,
        )
        .unwrap();
        assert_eq!(s.engine(), StateOf::Burn);
    }

    #[test]
    fn a_non_finite_loss_is_reported_and_not_stepped() {
        let compute = cpu();
        // tanh: a NaN input reaches the loss (the host engine's ReLU maps NaN to 0).
        let spec = mlp_with(ActivationKind::Tanh, Normalization::None);
        for choice in [EngineChoice::Burn, EngineChoice::Host] {
            let model = build(&spec, &compute);
            let mut s =
                stepper(choice, (&momentum(), Loss::CrossEntropy), model, &compute).unwrap();
            let r = s.step(batch(0), 0.1).expect("a finite first step");
            assert!(
                r.loss_sum.is_finite() && r.correct <= 5,
                "{choice:?}: {r:?}"
            );
            s.sync();
            let before = values(&s.valid());
            let mut bad = batch(1);
            bad.x[3] = f64::NAN;
            assert!(s.step(bad, 0.1).is_none(), "{choice:?}: NaN input");
            s.sync();
            assert_eq!(before, values(&s.valid()), "{choice:?}: parameters moved");
        }
    }

    /// A checkpoint's state taken by `snapshot` and loaded by `load_state` continues the
    /// steps bit for bit (the momentum buffers included).
    #[test]
    fn the_checkpoint_state_resumes_the_steps_bit_for_bit() {
        let compute = cpu();
        let runs = [
            (EngineChoice::Burn, mlp(Normalization::None)),
            (EngineChoice::Burn, resnet()),
            (EngineChoice::Host, mlp(Normalization::None)),
            (EngineChoice::Host, resnet()),
        ];
        for (choice, spec) in runs {
            let mut a = stepper(
                choice,
                (&momentum(), Loss::CrossEntropy),
                build(&spec, &compute),
                &compute,
            )
            .unwrap();
            let iteration = (0..2).filter(|&i| a.step(batch(i), 0.1).is_some()).count();
            a.sync();
            let dir = tempfile::tempdir().unwrap();
            save_epoch_one(&a.snapshot(), dir.path(), iteration);
            let ck = checkpoint::find(dir.path()).unwrap().unwrap();
            assert_eq!(ck.pointer.engine, a.engine());
            let model = ck.load_model(build(&spec, &compute)).unwrap();
            let mut b =
                stepper(choice, (&momentum(), Loss::CrossEntropy), model, &compute).unwrap();
            b.load_state(&ck).unwrap();
            for i in 2..4 {
                let (ra, rb) = (a.step(batch(i), 0.05), b.step(batch(i), 0.05));
                let bits = |r: Option<StepResult>| r.map(|r| (r.loss_sum.to_bits(), r.correct));
                assert_eq!(bits(ra), bits(rb), "{choice:?} {spec:?} step {i}");
            }
            a.sync();
            b.sync();
            assert_eq!(
                values(&a.valid()),
                values(&b.valid()),
                "{choice:?} {spec:?}"
            );
        }
    }

    /// Saves `state` as the checkpoint of epoch 1 (`iteration` steps) in `dir`.
    fn save_epoch_one(state: &Snapshot, dir: &Path, iteration: usize) {
        let provenance = Provenance::new("test", Default::default(), "faer");
        let identity = RunIdentity {
            config: "",
            provenance: &provenance,
        };
        let row = EpochMetrics {
            epoch: 1,
            iteration,
            train_loss: 1.0,
            train_accuracy: 0.5,
            test_loss: None,
            test_accuracy: None,
            lr: 0.1,
            seconds: 1.0,
            samples_per_second: 1.0,
        };
        let history = History {
            rows: &[row],
            tracked: &Default::default(),
            initial_loss: None,
        };
        state
            .save(dir, (1, iteration), &identity, &history)
            .unwrap();
    }
}
