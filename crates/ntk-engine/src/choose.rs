//! The one choice of an engine for a run: [`check`] when the config is loaded (what a
//! choice cannot run, before anything is built), [`plan`] for a dry run (which engine, without
//! building the network or starting a device), and [`choose`], the stepper a run trains with.
//!
//! `auto` takes the cuDNN engine for a CIFAR ResNet in f32 (either loss) where it starts
//! (built with `cudnn`), else the host engine on a CPU backend where it applies (MLPs
//! without normalization layers, CIFAR ResNets), else Burn's; `burn`, `host` and `cudnn`
//! take that engine or fail saying why.

use burn::module::Module;
use ntk_model::{Net, NetSpec};
use ntk_numerics::backend::{Compute, Fp32Precision, Precision};

use crate::burn::BurnStepper;
use crate::engine::{Engine, EngineChoice};
use crate::host::HostEngine;
use crate::host::stepper::HostStepper;
use crate::loss::Loss;
use crate::sgd::Sgd;
use crate::stepper::Stepper;
use crate::{Error, Result};

/// What a run's engine needs besides its network and its choice.
#[derive(Clone, Copy)]
pub struct Setup<'a> {
    pub sgd: &'a Sgd,
    pub loss: Loss,
    /// The backend, its device and the run's precision.
    pub compute: &'a Compute,
    /// The batch size (the cuDNN engine plans its buffers and its graph for it).
    pub batch: usize,
    /// How the cuDNN engine rounds the factors of its f32 products (`tf32` for it alone).
    pub fp32: Fp32Precision,
}

/// Whether `choice` can run `spec` in `precision` and `fp32` in this build: the error a
/// config with it gets when it is loaded (and under `--dry-run`), before anything is built.
/// Whether the cuDNN engine starts is known only when [`choose`] starts it. Every engine
/// computes both losses.
pub fn check(
    choice: EngineChoice,
    spec: &NetSpec,
    precision: Precision,
    fp32: Fp32Precision,
) -> Result<()> {
    if choice == EngineChoice::Host && !spec.on_host_engine() {
        return Err(Error::NoHostEngine {
            model: spec.describe(),
        });
    }
    if choice == EngineChoice::Cudnn
        && let Some(refusal) = cudnn_refusal(spec, precision)
    {
        return Err(refusal);
    }
    let candidate = cudnn_candidate(spec, precision);
    check_fp32(choice, fp32, "train.fp32_precision", candidate)
}

/// `fp32 = tf32` applies to the cuDNN engine only: where `choice` resolves to it, `cudnn`
/// itself or `auto` for a network the cuDNN engine trains in this build (`cudnn_trains`: a
/// CIFAR ResNet in f32, built with `cudnn`); an error naming `key`
/// where it resolves to another engine. Whether the cuDNN engine then starts is known when
/// [`choose`] starts it: under `auto` with `tf32` a start that fails is an error too, not a
/// fall back to an engine without TF32.
pub fn check_fp32(
    choice: EngineChoice,
    fp32: Fp32Precision,
    key: &'static str,
    cudnn_trains: bool,
) -> Result<()> {
    let resolves = match choice {
        EngineChoice::Cudnn => true,
        EngineChoice::Auto => cudnn_trains,
        EngineChoice::Burn | EngineChoice::Host => false,
    };
    if fp32 == Fp32Precision::Tf32 && !resolves {
        return Err(Error::Setting {
            key,
            value: fp32.name().to_string(),
            reason: "TF32 applies to the cuDNN engine only, which this run does not take \
                     (train.engine = \"auto\" takes it for a CIFAR ResNet in f32 in a build \
                     with --features ntk-train/cudnn): set \
                     train.engine = \"cudnn\" (--engine cudnn) or \"auto\" where it \
                     applies, or leave the key out for f32 products",
        });
    }
    Ok(())
}

/// Why the cuDNN engine does not train `spec` in `precision` in this build (the error
/// `train.engine = "cudnn"` gets), or `None` where it does: a CIFAR ResNet whose activation
/// has a CUDA form in the registry, in f32, in a build with the engine (with either loss).
fn cudnn_refusal(spec: &NetSpec, precision: Precision) -> Option<Error> {
    let reason = match spec {
        NetSpec::ResNet(r) => match r.normalized() {
            Some(n) if n.cuda().is_none() => format!(
                "the cuDNN engine runs an activation through its CUDA form in the registry \
                 (ntk_model::activation::ActivationFn::cuda), and {} has none",
                n.activation()
            ),
            _ if precision != Precision::F32 => {
                "the cuDNN engine computes in f32; set train.precision = \"f32\"".to_string()
            }
            _ if !cfg!(feature = "cudnn") => "this binary was built without the cuDNN engine; \
                                              build with --features ntk-train/cudnn"
                .to_string(),
            _ => return None,
        },
        other => format!(
            "the cuDNN engine trains CIFAR ResNets, not {}",
            other.describe()
        ),
    };
    Some(Error::NoCudnnEngine { reason })
}

/// Whether `auto` tries the cuDNN engine for `spec`: where `train.engine = "cudnn"` would
/// be accepted ([`cudnn_refusal`] has nothing to say).
pub fn cudnn_candidate(spec: &NetSpec, precision: Precision) -> bool {
    cudnn_refusal(spec, precision).is_none()
}

/// The engine a run of `spec` would take, decided as [`choose`] decides but without building
/// the network or starting a device: the cuDNN engine is taken to start where `auto` or
/// `cudnn` would try it (where it does not, `auto` falls back to the host engine on a CPU
/// backend, which keeps the same [`crate::StateForm`]). For a dry run and for judging a
/// resume before the run.
pub fn plan(choice: EngineChoice, spec: &NetSpec, compute: &Compute) -> Engine {
    match choice {
        EngineChoice::Burn => Engine::Burn,
        EngineChoice::Host => Engine::Host,
        EngineChoice::Cudnn => Engine::Cudnn,
        EngineChoice::Auto if cudnn_candidate(spec, compute.precision) => Engine::Cudnn,
        EngineChoice::Auto if compute.on_host() && spec.on_host_engine() => Engine::Host,
        EngineChoice::Auto => Engine::Burn,
    }
}

/// The stepper of a run of `model` (plain device, as built or loaded from a checkpoint):
/// the engine [`plan`] decides for `choice` (see the module's doc), started. `auto` falling
/// back from a cuDNN engine that does not start says so on stderr: why, that the steps run on
/// the CPU, and how to require or silence it; it then takes what `plan` takes in a build
/// without the cuDNN engine.
pub fn choose(choice: EngineChoice, model: Net, setup: &Setup<'_>) -> Result<Box<dyn Stepper>> {
    let (compute, spec) = (setup.compute, model.spec());
    let planned = plan(choice, &spec, compute);
    // `plan` takes the cuDNN engine under `auto` exactly where it is a candidate.
    check_fp32(
        choice,
        setup.fp32,
        "train.fp32_precision",
        planned == Engine::Cudnn,
    )?;
    let ad = compute.device.clone().autodiff();
    let model = model.fork(&ad).train();
    // The plan, stated once: the cuDNN engine (under `auto`, falling back where it does not
    // start to what a build without it would take), the host engine or Burn's autodiff.
    let on_host = match planned {
        Engine::Cudnn if choice == EngineChoice::Cudnn => {
            if let Some(refusal) = cudnn_refusal(&spec, compute.precision) {
                return Err(refusal);
            }
            return start_cudnn(model, setup).map_err(|reason| Error::NoCudnnEngine { reason });
        }
        Engine::Cudnn => match start_cudnn(model.clone(), setup) {
            Ok(s) => return Ok(s),
            // TF32 was asked of the cuDNN engine: no other engine has it.
            Err(reason) if setup.fp32 == Fp32Precision::Tf32 => {
                return Err(Error::Tf32WithoutCudnn { reason });
            }
            Err(reason) => {
                eprintln!(
                    "warning: the GPU is not used: the cuDNN engine does not start ({reason}); \
                     the steps run on the CPU instead (the host engine), many times slower. \
                     Pass --engine cudnn to require the GPU (the run then stops with this \
                     error), or --engine host to choose the CPU and silence this"
                );
                compute.on_host() && spec.on_host_engine()
            }
        },
        Engine::Host if !spec.on_host_engine() => {
            return Err(Error::NoHostEngine {
                model: model.describe(),
            });
        }
        Engine::Host => true,
        Engine::Burn => false,
    };
    let engine = on_host
        .then(|| HostEngine::of(&model, (setup.sgd, setup.loss), compute.precision))
        .flatten();
    Ok(match engine {
        Some(engine) => Box::new(HostStepper::new(engine, model)),
        None => Box::new(BurnStepper::new(
            model,
            (setup.sgd, setup.loss),
            ad,
            compute.dtype(),
        )),
    })
}

/// The cuDNN engine started for `model` (a CIFAR ResNet in f32, autodiff device, training
/// mode), or why it does not start. Without the feature [`cudnn_refusal`] has refused
/// before any call.
fn start_cudnn(model: Net, setup: &Setup<'_>) -> std::result::Result<Box<dyn Stepper>, String> {
    #[cfg(feature = "cudnn")]
    {
        crate::cudnn::stepper::CudnnStepper::start(
            (setup.sgd, setup.loss),
            model,
            setup.batch,
            setup.fp32,
        )
        .map(|s| Box::new(s) as Box<dyn Stepper>)
        .map_err(|e| e.to_string())
    }
    #[cfg(not(feature = "cudnn"))]
    {
        let _ = (model, setup);
        unreachable!("checked: the cuDNN engine is built in")
    }
}

/// What `train.engine = choice` computes the steps with in this build, for a dry run.
pub fn describe(choice: EngineChoice) -> &'static str {
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
