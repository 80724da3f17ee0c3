//! The one choice ([`crate::choose`]) on the CPU, and what every engine's [`Stepper`] keeps:
//! a non-finite loss is no step, and the state a snapshot holds continues the steps bit for
//! bit (the files a checkpoint writes of it are `ntk-train`'s tests).

use burn::module::Module;
use ntk_model::{ActivationKind, Net, NetSpec, Normalization, ResNetConfig, ResNetVariant};
use ntk_numerics::backend::{self, Compute, Fp32Precision, Precision};

use crate::{Engine, EngineChoice, Loss, Setup, Sgd, Stepper};

use crate::fixtures::{D, assert_same_steps, batch, params as values};

fn cpu() -> Compute {
    backend::select(Some("flex"), Precision::F32).unwrap()
}

fn momentum() -> Sgd {
    Sgd::new(0.9, 1e-4)
}

fn mlp(normalization: Normalization) -> NetSpec {
    mlp_with(ActivationKind::Relu, normalization)
}

fn mlp_with(activation: ActivationKind, normalization: Normalization) -> NetSpec {
    crate::fixtures::mlp(activation, normalization)
}

fn resnet() -> NetSpec {
    crate::fixtures::resnet()
}

fn build(spec: &NetSpec, compute: &Compute) -> Net {
    spec.build(D, &compute.device, compute.dtype()).unwrap()
}

fn stepper(choice: EngineChoice, model: Net, compute: &Compute) -> crate::Result<Box<dyn Stepper>> {
    let sgd = momentum();
    let setup = Setup {
        sgd: &sgd,
        loss: Loss::CrossEntropy,
        compute,
        batch: 5,
        fp32: Fp32Precision::Ieee,
    };
    crate::choose(choice, model, &setup)
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
        [Some(Engine::Host), Some(Engine::Burn), Some(Engine::Host)],
        [Some(Engine::Burn), Some(Engine::Burn), None],
        [Some(Engine::Host), Some(Engine::Burn), Some(Engine::Host)],
    ];
    let choices = [EngineChoice::Auto, EngineChoice::Burn, EngineChoice::Host];
    for ((name, spec), want) in nets.iter().zip(expected) {
        for (choice, want) in choices.into_iter().zip(want) {
            let got = stepper(choice, build(spec, &compute), &compute);
            // Without the cuDNN engine built in, the plan is the choice (with it, `auto`
            // plans the cuDNN engine for the ResNet, which keeps the host engine's state).
            if !cfg!(feature = "cudnn") {
                let planned = crate::plan(choice, spec, &compute);
                if let Some(engine) = want {
                    assert_eq!(planned, engine, "{name} {choice:?}: plan");
                }
            }
            match (got, want) {
                (Ok(s), Some(engine)) => {
                    assert_eq!(s.engine(), engine, "{name} {choice:?}");
                    let method = if engine == Engine::Host {
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
    let spec = mlp(Normalization::None);
    let s = stepper(EngineChoice::Auto, build(&spec, &compute), &compute).unwrap();
    assert_eq!(s.engine(), Engine::Burn);
    let planned = crate::plan(EngineChoice::Auto, &spec, &compute);
    assert_eq!(planned, Engine::Burn);
}

/// What `train.engine = "cudnn"` says where it does not apply, before anything runs, and
/// `tf32` without the cuDNN engine. The loss is no reason: every engine computes both.
#[test]
fn the_checks_name_what_a_choice_cannot_run() {
    let why = |choice, spec: &NetSpec, p, fp32| {
        crate::check(choice, spec, p, fp32).map_err(|e| e.to_string())
    };
    let (ieee, tf32) = (Fp32Precision::Ieee, Fp32Precision::Tf32);
    let resnet = NetSpec::ResNet(ResNetConfig::new(20, ResNetVariant::BatchNorm));
    let plain = mlp(Normalization::None);
    let cudnn = EngineChoice::Cudnn;
    let e = why(cudnn, &plain, Precision::F32, ieee).unwrap_err();
    assert!(e.contains("trains CIFAR ResNets, not"), "{e}");
    let e = why(cudnn, &resnet, Precision::F64, ieee).unwrap_err();
    assert!(e.contains("train.precision = \"f32\""), "{e}");
    if cfg!(feature = "cudnn") {
        assert!(why(cudnn, &resnet, Precision::F32, ieee).is_ok());
        // Every activation of the registry has a CUDA form: the normalized variant runs.
        for kind in ActivationKind::all() {
            let normalized = NetSpec::ResNet(ResNetConfig::new_normalized(20, kind));
            assert!(why(cudnn, &normalized, Precision::F32, ieee).is_ok());
        }
        assert!(why(cudnn, &resnet, Precision::F32, tf32).is_ok());
    } else {
        let e = why(cudnn, &resnet, Precision::F32, ieee).unwrap_err();
        assert!(e.contains("--features ntk-train/cudnn"), "{e}");
    }
    let e = why(
        EngineChoice::Host,
        &mlp(Normalization::LayerNorm),
        Precision::F32,
        ieee,
    )
    .unwrap_err();
    assert!(
        e.starts_with("train.engine = \"host\": the host engines train"),
        "{e}"
    );
    // TF32 under `auto`: where auto takes the cuDNN engine (a ResNet in f32, built with
    // it), and refused naming the key where it takes another.
    let auto = EngineChoice::Auto;
    let resnet_tf32 = why(auto, &resnet, Precision::F32, tf32);
    assert_eq!(
        resnet_tf32.is_ok(),
        cfg!(feature = "cudnn"),
        "{resnet_tf32:?}"
    );
    let e = why(auto, &resnet, Precision::F64, tf32).unwrap_err();
    assert!(e.contains("train.fp32_precision = tf32"), "{e}");
    for choice in [EngineChoice::Auto, EngineChoice::Host, EngineChoice::Burn] {
        let e = why(choice, &plain, Precision::F32, tf32).unwrap_err();
        assert!(
            e.contains("train.fp32_precision") && e.contains("cuDNN engine only"),
            "{e}"
        );
        assert!(why(choice, &plain, Precision::F32, ieee).is_ok());
    }
}

#[test]
fn a_non_finite_loss_is_reported_and_not_stepped() {
    let compute = cpu();
    // tanh: a NaN input reaches the loss (the host engine's ReLU maps NaN to 0).
    let spec = mlp_with(ActivationKind::Tanh, Normalization::None);
    for choice in [EngineChoice::Burn, EngineChoice::Host] {
        let mut s = stepper(choice, build(&spec, &compute), &compute).unwrap();
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

/// A snapshot's state loaded into a new stepper of the same engine continues the steps bit
/// for bit (the momentum buffers included); a state of the other form is refused.
#[test]
fn a_snapshot_continues_the_steps_bit_for_bit() {
    let compute = cpu();
    let runs = [
        (EngineChoice::Burn, mlp(Normalization::None)),
        (EngineChoice::Burn, resnet()),
        (EngineChoice::Host, mlp(Normalization::None)),
        (EngineChoice::Host, resnet()),
    ];
    for (choice, spec) in runs {
        let mut a = stepper(choice, build(&spec, &compute), &compute).unwrap();
        for i in 0..2 {
            a.step(batch(i), 0.1);
        }
        a.sync();
        let snap = a.snapshot();
        assert_eq!(snap.optim.form(), a.state_form());
        let model = snap.model.valid();
        let mut b = stepper(choice, model, &compute).unwrap();
        b.load_state(snap.optim.clone()).unwrap();
        assert_same_steps(a.as_mut(), b.as_mut(), &format!("{choice:?} {spec:?}"));
        let other = match snap.optim {
            crate::SavedOptim::Burn(_) => crate::SavedOptim::Host(Vec::new()),
            crate::SavedOptim::Host(_) => {
                crate::SavedOptim::Burn(crate::sgd::optimizer(&momentum()))
            }
        };
        let e = b.load_state(other).unwrap_err().to_string();
        assert!(e.contains("optimizer state, not"), "{e}");
    }
}

/// TF32 under `auto` for a network the cuDNN engine trains: its engine where it starts,
/// and an error naming the key (no fall back to an engine without TF32) where it does not.
#[cfg(feature = "cudnn")]
#[test]
fn tf32_under_auto_takes_the_cudnn_engine_or_says_why_not() {
    let compute = cpu();
    let sgd = momentum();
    let setup = Setup {
        sgd: &sgd,
        loss: Loss::CrossEntropy,
        compute: &compute,
        batch: 5,
        fp32: Fp32Precision::Tf32,
    };
    match crate::choose(EngineChoice::Auto, build(&resnet(), &compute), &setup) {
        Ok(s) => assert_eq!(s.engine(), Engine::Cudnn),
        Err(e) => {
            let e = e.to_string();
            assert!(
                e.starts_with("train.fp32_precision = tf32: TF32 applies to the cuDNN engine"),
                "{e}"
            );
        }
    }
}
