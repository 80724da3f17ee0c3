//! The cuDNN engine in a run (`train.engine = "cudnn"`, and `auto`'s pick for a
//! CIFAR ResNet in f32 where it starts): [`CudnnStepper`], a [`Stepper`] over
//! [`ntk_cudnn::CudnnResNet`], built with the `cudnn` feature.
//!
//! Its checkpoints are the host engine's files (the momentum buffers in the host engine's
//! order, `checkpoint::Pointer::engine = "host"`), so a run moves between a CPU and a GPU
//! machine with `--resume`.

#[cfg(feature = "cudnn")]
pub use enabled::{CudnnStepper, choose};
use ntk_numerics::backend::Fp32Precision;

/// `fp32 = tf32` applies to the cuDNN engine only, asked for by name (`auto` may fall back
/// to an engine without TF32): an error naming `key` otherwise.
pub fn check_fp32(
    choice: crate::config::EngineChoice,
    fp32: Fp32Precision,
    key: &'static str,
) -> crate::Result<()> {
    if fp32 == Fp32Precision::Tf32 && choice != crate::config::EngineChoice::Cudnn {
        return Err(crate::Error::config(
            key,
            fp32.name(),
            "TF32 applies to the cuDNN engine only: set train.engine = \"cudnn\" \
             (--engine cudnn), or leave the key out for f32 products",
        ));
    }
    Ok(())
}

/// The stepper of a run: the cuDNN engine where [`choose`] takes it (its f32 products
/// rounded as `fp32` says), else [`crate::stepper::stepper`]'s (the host engine or Burn's).
pub fn stepper(
    choice: crate::config::EngineChoice,
    how: (&crate::config::OptimConfig, crate::loss::Loss),
    model: crate::model::Model,
    compute: &ntk_numerics::backend::Compute,
    batch: usize,
    fp32: Fp32Precision,
) -> crate::Result<Box<dyn crate::stepper::Stepper>> {
    use burn::module::Module;
    let ad = compute.device.clone().autodiff();
    let of_record = model.clone().fork(&ad).train();
    if let Some(s) = choose(choice, how, &of_record, compute, batch, fp32)? {
        return Ok(s);
    }
    crate::stepper::stepper(choice, how, model, compute)
}

/// What `train.engine = choice` computes the steps with in this build, for a dry run.
pub fn describe(choice: crate::config::EngineChoice) -> &'static str {
    use crate::config::EngineChoice;
    match choice {
        EngineChoice::Cudnn => {
            "cudnn: the cuDNN engine, started on the GPU by the run (no fallback)"
        }
        EngineChoice::Auto if cfg!(feature = "cudnn") => {
            "auto: the cuDNN engine for a CIFAR ResNet in f32 where it starts, else the \
             host engine where it applies, else Burn's autodiff"
        }
        EngineChoice::Auto => {
            "auto: the host engine where it applies, else Burn's autodiff (this build has no \
             cuDNN engine: --features cudnn)"
        }
        EngineChoice::Host => "host: the host engine",
        EngineChoice::Burn => "burn: Burn's autodiff",
    }
}

#[cfg(not(feature = "cudnn"))]
/// Without the `cudnn` feature there is no cuDNN engine: `None` for `auto` and `burn`,
/// `host`; `cudnn` was refused when the config was checked ([`crate::config::check_cudnn_engine`]).
pub fn choose(
    choice: crate::config::EngineChoice,
    _: (&crate::config::OptimConfig, crate::loss::Loss),
    model: &crate::model::Model,
    compute: &ntk_numerics::backend::Compute,
    _: usize,
    fp32: Fp32Precision,
) -> crate::Result<Option<Box<dyn crate::stepper::Stepper>>> {
    check_fp32(choice, fp32, "train.fp32_precision")?;
    if choice == crate::config::EngineChoice::Cudnn {
        let resnet = matches!(model, ntk_model::Net::ResNet(_));
        crate::config::check_device_net(resnet, &model.describe(), compute.precision)?;
    }
    Ok(None)
}

#[cfg(feature = "cudnn")]
mod enabled {
    use std::cell::RefCell;

    use burn::module::Module;
    use ntk_cudnn::{CudnnResNet, Sgd};
    use ntk_model::Net;
    use ntk_numerics::backend::{Compute, Fp32Precision, Precision};

    use crate::checkpoint::Loaded;
    use crate::config::{EngineChoice, OptimConfig};
    use crate::host::StepResult;
    use crate::model::Model;
    use crate::stepper::{Batch, SavedOptim, Snapshot, Stepper};

    /// The cuDNN engine, the Burn model of record (autodiff device, training mode) written
    /// from its parameters at every [`Stepper::sync`], and the first device error (reported
    /// by [`Stepper::failure`]).
    pub struct CudnnStepper {
        engine: RefCell<CudnnResNet>,
        model: Model,
        method: &'static str,
        failed: RefCell<Option<ntk_cudnn::Error>>,
    }

    /// The cuDNN engine for this run, or `None` where another engine computes the steps:
    /// `cudnn` starts it or fails naming why; `auto` starts it for a CIFAR ResNet in f32 and
    /// falls back when it cannot start, with a warning on stderr saying why, that the steps
    /// run on the CPU, and how to require or silence it; `burn` and `host` never.
    pub fn choose(
        choice: EngineChoice,
        (optim, loss): (&OptimConfig, crate::loss::Loss),
        model: &Model,
        compute: &Compute,
        batch: usize,
        fp32: Fp32Precision,
    ) -> crate::Result<Option<Box<dyn Stepper>>> {
        super::check_fp32(choice, fp32, "train.fp32_precision")?;
        // The cuDNN engine computes the cross-entropy only; `cudnn` with another loss was
        // refused when the config was checked.
        let applies = matches!(model, Net::ResNet(_))
            && compute.precision == Precision::F32
            && loss == crate::loss::Loss::CrossEntropy;
        match choice {
            EngineChoice::Burn | EngineChoice::Host => Ok(None),
            EngineChoice::Auto if !applies => Ok(None),
            EngineChoice::Auto => match start(optim, model, batch, fp32) {
                Ok(s) => Ok(Some(Box::new(s))),
                Err(e) => {
                    // Loudly (issue 66 item 5): the run goes on, on the CPU, many times slower.
                    eprintln!(
                        "warning: the GPU is not used: the cuDNN engine does not start ({e}); \
                         the steps run on the CPU instead (the host engine), many times \
                         slower. Pass --engine cudnn to require the GPU (the run then stops \
                         with this error), or --engine host to choose the CPU and silence this"
                    );
                    Ok(None)
                }
            },
            EngineChoice::Cudnn => {
                crate::config::check_device_net(
                    applies || matches!(model, Net::ResNet(_)),
                    &model.describe(),
                    compute.precision,
                )?;
                start(optim, model, batch, fp32)
                    .map(|s| Some(Box::new(s) as Box<dyn Stepper>))
                    .map_err(|e| crate::Error::NoDeviceEngine {
                        reason: e.to_string(),
                    })
            }
        }
    }

    fn start(
        optim: &OptimConfig,
        model: &Model,
        batch: usize,
        fp32: Fp32Precision,
    ) -> ntk_cudnn::Result<CudnnStepper> {
        let Net::ResNet(r) = model else {
            unreachable!("checked: a ResNet")
        };
        let sgd = Sgd {
            momentum: optim.momentum,
            nesterov: optim.nesterov,
            weight_decay: optim.weight_decay,
            scalar_lr_scale: optim.scalar_lr_scale,
        };
        let engine = CudnnResNet::new(r, sgd, batch, 0, fp32)?;
        let mode = match engine.bn_mode() {
            ntk_cudnn::BnMode::Spatial => "",
            ntk_cudnn::BnMode::Persistent => ", BatchNorm persistent",
        };
        let math = match fp32 {
            Fp32Precision::Ieee => "",
            Fp32Precision::Tf32 => ", TF32",
        };
        let name = format!("cuDNN on {}{mode}{math}", engine.device_name());
        let method = Box::leak(name.into_boxed_str());
        Ok(CudnnStepper {
            engine: RefCell::new(engine),
            model: model.clone(),
            method,
            failed: RefCell::new(None),
        })
    }

    impl CudnnStepper {
        fn fail(&self, e: ntk_cudnn::Error) {
            self.failed.borrow_mut().get_or_insert(e);
        }
    }

    impl Stepper for CudnnStepper {
        /// The host engine's: its checkpoints hold the same momentum buffers.
        fn engine(&self) -> crate::checkpoint::StateOf {
            crate::checkpoint::StateOf::Host
        }

        fn method(&self) -> &'static str {
            self.method
        }

        fn name(&self) -> &'static str {
            "device"
        }

        fn on_gpu(&self) -> bool {
            true
        }

        fn step(&mut self, batch: Batch, lr: f64) -> Option<StepResult> {
            match self.engine.get_mut().step(&batch.x, &batch.labels, lr) {
                Ok(s) => s.loss_sum.is_finite().then_some(StepResult {
                    loss_sum: s.loss_sum,
                    correct: s.correct,
                }),
                Err(e) => {
                    self.fail(e);
                    None
                }
            }
        }

        fn sync(&mut self) {
            let Net::ResNet(r) = &mut self.model else {
                unreachable!("a ResNet engine writes into its ResNet")
            };
            if let Err(e) = self.engine.get_mut().write_into(r) {
                self.fail(e);
            }
        }

        fn evaluate(&self, set: &ntk_data::Inputs, _batch: usize) -> Option<(f64, f64)> {
            let (mut loss, mut hits) = (0.0f64, 0usize);
            let r = self
                .engine
                .borrow_mut()
                .eval_logits(&set.x, set.n, |logits, rows| {
                    let (l, c) = crate::host::labelled_loss(
                        logits,
                        &set.labels[rows],
                        crate::loss::Loss::CrossEntropy,
                    );
                    loss += l;
                    hits += c;
                });
            match r {
                Ok(()) => Some((loss / set.n as f64, hits as f64 / set.n as f64)),
                Err(e) => {
                    self.fail(e);
                    None
                }
            }
        }

        fn valid(&self) -> Model {
            self.model.valid()
        }

        fn snapshot(&self) -> Snapshot {
            let velocity = self.engine.borrow().velocity().unwrap_or_else(|e| {
                self.fail(e);
                Vec::new()
            });
            Snapshot::new(self.model.clone(), SavedOptim::Host(velocity))
        }

        fn load_state(&mut self, ck: &Loaded) -> crate::Result<()> {
            self.engine
                .get_mut()
                .set_velocity(&ck.load_velocity()?)
                .map_err(|e| crate::Error::At {
                    path: ck.dir.clone(),
                    source: Box::new(crate::Error::NoDeviceEngine {
                        reason: e.to_string(),
                    }),
                })
        }

        fn failure(&mut self) -> Option<crate::Error> {
            self.failed
                .get_mut()
                .take()
                .map(|e| crate::Error::NoDeviceEngine {
                    reason: format!("the device failed: {e}"),
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use ntk_model::{ActivationKind, MlpConfig, NetSpec, ResNetConfig, ResNetVariant};
    use ntk_numerics::backend::Precision;

    /// What `train.engine = "cudnn"` says where it does not apply, before anything runs.
    #[test]
    fn the_device_engine_is_refused_where_it_does_not_apply() {
        let resnet = NetSpec::ResNet(ResNetConfig::new(20, ResNetVariant::BatchNorm));
        let mlp = NetSpec::Mlp(MlpConfig::new(8, 4, 2, ActivationKind::Relu));
        let why = |spec: &NetSpec, p| {
            crate::config::check_cudnn_engine(spec, p).map_err(|e| e.to_string())
        };
        let e = why(&mlp, Precision::F32).unwrap_err();
        assert!(e.contains("trains CIFAR ResNets, not"), "{e}");
        let e = why(&resnet, Precision::F64).unwrap_err();
        assert!(e.contains("train.precision = \"f32\""), "{e}");
        if cfg!(feature = "cudnn") {
            assert!(why(&resnet, Precision::F32).is_ok());
        } else {
            let e = why(&resnet, Precision::F32).unwrap_err();
            assert!(e.contains("--features ntk-train/cudnn"), "{e}");
        }
    }

    /// `train.fp32_precision = "tf32"` is the cuDNN engine's alone: with any other engine the
    /// config is refused when checked, naming the key (the command line's refusal, exit 2,
    /// is in tests/train/hostile.rs); `ieee`, the default, is left out of the config written
    /// back, so f32 runs keep their identity, and `tf32` is written.
    #[test]
    fn tf32_is_refused_without_the_cudnn_engine_and_recorded_when_asked() {
        use crate::config::EngineChoice;
        use ntk_numerics::backend::Fp32Precision;
        for engine in [EngineChoice::Auto, EngineChoice::Host, EngineChoice::Burn] {
            let e = super::check_fp32(engine, Fp32Precision::Tf32, "train.fp32_precision")
                .expect_err("tf32 without the cuDNN engine")
                .to_string();
            assert!(
                e.contains("train.fp32_precision") && e.contains("cuDNN engine only"),
                "{e}"
            );
            assert!(super::check_fp32(engine, Fp32Precision::Ieee, "k").is_ok());
        }
        assert!(super::check_fp32(EngineChoice::Cudnn, Fp32Precision::Tf32, "k").is_ok());
        let text = "[data]\ndataset = \"digits\"\nn = 60\n[model]\nwidth = 8\ndepth = 1\nactivation = \"relu\"\n\
                    [optim]\nlr = 0.1\n[train]\nbatch_size = 20\nepochs = 1\n";
        let mut cfg = crate::config::TrainConfig::parse(text).expect("parses");
        assert_eq!(cfg.train.fp32_precision, Fp32Precision::Ieee);
        let written = toml::to_string(&cfg).expect("serializes");
        assert!(!written.contains("fp32_precision"), "{written}");
        cfg.train.fp32_precision = Fp32Precision::Tf32;
        let written = toml::to_string(&cfg).expect("serializes");
        assert!(written.contains("fp32_precision = \"tf32\""), "{written}");
    }
}
