//! `ntk-train bench`: the training throughput of an MLP or a CIFAR ResNet (samples per
//! second, GFLOP/s, and the floor at the device's peak).

use clap::Args;
use ntk_model::activation::ActivationKind;
use ntk_model::{Activation, NetSpec, ResNetConfig, ResNetVariant};
use ntk_numerics::backend::{self, Fp32Precision, Precision};
use ntk_train::config::EngineChoice;

use crate::CliResult;

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Burn's backend: flex, ndarray, wgpu, cuda (also BURN_DEVICE; `--device`, its name
    /// before 2026-11-29, is the same flag).
    #[arg(long, visible_alias = "device", env = "BURN_DEVICE")]
    backend: Option<String>,
    /// f32 or f64.
    #[arg(long, default_value = "f32", value_parser = ntk_names::parse_arg::<Precision>)]
    precision: Precision,
    /// Input dimension of the MLP (not with --resnet, whose input is 3x32x32); at least 1
    /// [default: 784].
    #[arg(long, value_parser = ntk_cli::args::count(1))]
    input_dim: Option<usize>,
    /// Hidden width of the MLP (not with --resnet); at least 1 [default: 512].
    #[arg(long, value_parser = ntk_cli::args::count(1))]
    width: Option<usize>,
    /// Depth of the MLP (not with --resnet, which takes its depth) [default: 10].
    #[arg(long, value_parser = ntk_cli::args::count(0))]
    depth: Option<usize>,
    /// Samples per SGD step; at least 1.
    #[arg(long, default_value_t = 500, value_parser = ntk_cli::args::count(1))]
    batch: usize,
    /// Timed steps; at least 1.
    #[arg(long, default_value_t = 20, value_parser = ntk_cli::args::count(1))]
    steps: usize,
    /// Time a CIFAR ResNet of this depth (6n+2) instead of the MLP (input 3x32x32).
    #[arg(long, value_parser = ntk_cli::args::count(0))]
    resnet: Option<usize>,
    /// The ResNet's variant (with --resnet only): batch_norm, norm_relu, fixup, selu, or
    /// normalized (with --activation) [default: batch_norm].
    #[arg(long, value_parser = ntk_names::parse_arg::<ResNetVariant>)]
    variant: Option<ResNetVariant>,
    /// The MLP's activation (default relu), or that of a ResNet with `--variant
    /// normalized` (required there; the other variants fix their own): a family's name, or
    /// one with its parameter (`leaky_relu(alpha=0.1)`).
    #[arg(long, value_parser = activation_words)]
    activation: Option<Activation>,
    /// Who computes the step, as `train.engine`: auto (the cuDNN engine for a
    /// ResNet where it starts, else the host engine on a CPU backend), burn, host or
    /// cudnn (built with --features cudnn).
    #[arg(long, default_value = "auto", value_parser = ntk_names::parse_arg::<EngineChoice>)]
    engine: EngineChoice,
    /// How the cuDNN engine rounds its f32 products, as `train.fp32_precision`: ieee (f32)
    /// or tf32 (the tensor cores; the cuDNN engine only: --engine cudnn, or auto where it
    /// takes the cuDNN engine).
    #[arg(long, default_value = "ieee", value_parser = ntk_names::parse_arg::<Fp32Precision>)]
    fp32_precision: Fp32Precision,
    /// The memory the benchmark may plan for (e.g. 64G; default: the smallest of the
    /// available memory, the cgroup's limit and RLIMIT_AS; also NTK_MAX_MEMORY)
    #[arg(long)]
    max_memory: Option<String>,
}

pub(crate) fn bench_cmd(a: BenchArgs) -> CliResult<()> {
    // The flag named, as a run names it (hundred-and-eighth hostile round, N1).
    let compute =
        backend::select(a.backend.as_deref(), a.precision).map_err(|e| match &a.backend {
            Some(flag) => format!("--backend {}: {e}", ntk_names::controls_escaped(flag)),
            None => e.to_string(),
        })?;
    let peak = ntk_numerics::bench::peak_gflops(a.precision);
    refuse_flags_of_the_other_network(&a)?;
    // Under the flag's name, not the config field's (fourteenth hostile round, D3).
    if let Some(d) = a.depth.filter(|&d| d > ntk_model::MAX_DEPTH) {
        return Err(format!(
            "--depth {d}: at most {} hidden layers",
            ntk_model::MAX_DEPTH
        )
        .into());
    }
    let (spec, input_dim) = match a.resnet {
        Some(d) => {
            let v = a.variant.unwrap_or(ResNetVariant::BatchNorm);
            let named = ntk_names::name(&v);
            match (v, a.activation) {
                (ResNetVariant::Normalized, None) => {
                    return Err(format!(
                        "--variant normalized needs --activation, one of: {}",
                        ntk_names::list::<ActivationKind>()
                    )
                    .into());
                }
                (ResNetVariant::Normalized, Some(_)) | (_, None) => {}
                (_, Some(_)) => {
                    return Err(format!(
                        "--activation: does not apply to --variant {named}, which fixes its \
                         own (it applies to the MLP and to --variant normalized)"
                    )
                    .into());
                }
            }
            let r = ResNetConfig {
                activation: a.activation.map(|act| act.kind()),
                activation_param: a.activation.and_then(|act| act.param()),
                ..ResNetConfig::new(d, v)
            };
            r.validate().map_err(|e| format!("--resnet {d}: {e}"))?;
            let dim = r.input_dim();
            (NetSpec::ResNet(r), dim)
        }
        None => {
            let input_dim = a.input_dim.unwrap_or(784);
            let spec = ntk_train::bench::mlp_spec(
                input_dim,
                a.width.unwrap_or(512),
                a.depth.unwrap_or(10),
                a.activation
                    .unwrap_or_else(|| Activation::new(ActivationKind::Relu, None)),
            );
            (spec, input_dim)
        }
    };
    let cudnn_trains = ntk_engine::choose::cudnn_candidate(&spec, a.precision);
    ntk_engine::check_fp32(a.engine, a.fp32_precision, "--fp32-precision", cudnn_trains)?;
    ntk_train::bench::check_memory(&compute, &spec, input_dim, a.batch, a.max_memory.as_deref())?;
    let r = ntk_train::bench::step(
        &compute,
        &spec,
        (a.engine, a.fp32_precision),
        input_dim,
        a.batch,
        a.steps,
        peak,
    )?;
    println!(
        "{}, batch {}, {} {} ({} engine, host linear algebra {}): {:.4} s/step, {:.0} samples/s, {:.2} GFLOP/step, \
         {:.1} GFLOP/s ({})",
        r.model,
        r.batch,
        r.backend,
        r.precision,
        r.engine,
        ntk_numerics::linalg::library().describe(),
        r.seconds_per_step,
        r.samples_per_second,
        r.gflop_per_step,
        r.gflops,
        r.floor_seconds_per_step
            .map_or("no floor: peak of this device unknown".into(), |f| {
                format!(
                    "floor {f:.4} s/step at {peak:.0} GFLOP/s peak, measured: {}",
                    ntk_numerics::bench::peak_method()
                )
            })
    );
    println!("{}", serde_json::to_string(&r).expect("serializes"));
    Ok(())
}

/// Refuses a flag of the network not timed: the MLP's --input-dim, --width and --depth
/// beside --resnet, --variant without it (tenth hostile round: each was ignored without a
/// word, and the other network timed).
fn refuse_flags_of_the_other_network(a: &BenchArgs) -> CliResult<()> {
    let (given, other): (Vec<&str>, &str) = match a.resnet {
        Some(_) => (
            [
                ("--input-dim", a.input_dim.is_some()),
                ("--width", a.width.is_some()),
                ("--depth", a.depth.is_some()),
            ]
            .into_iter()
            .filter_map(|(f, g)| g.then_some(f))
            .collect(),
            "the MLP's (not timed with --resnet, a CIFAR ResNet of 3x32x32 inputs)",
        ),
        None => (
            a.variant
                .is_some()
                .then_some("--variant")
                .into_iter()
                .collect(),
            "the ResNet's (with --resnet only; without it the MLP is timed)",
        ),
    };
    match given.as_slice() {
        [] => Ok(()),
        flags => Err(format!("{}: does not apply: {other}", flags.join(", ")).into()),
    }
}

/// `--activation`: a family's name or `name(symbol=value)`, as configs and `ntk-probe`'s
/// flags read them (fifteenth hostile round, N5: a parameter was refused here alone).
fn activation_words(words: &str) -> Result<Activation, String> {
    Activation::read_words(words).map_err(|e| match e {
        e @ (ntk_model::activation::WordsError::Param(_)
        | ntk_model::activation::WordsError::Symbol { .. }
        | ntk_model::activation::WordsError::Underflow { .. }) => e.to_string(),
        ntk_model::activation::WordsError::Unknown => format!(
            "not an activation ({}), such as relu or leaky_relu(alpha=0.1)",
            ActivationKind::list()
        ),
    })
}
