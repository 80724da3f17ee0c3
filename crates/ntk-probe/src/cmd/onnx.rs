//! `ntk-probe onnx`: the NTK of a network given as an ONNX file (`[onnx] file = ...`), its
//! spectrum and minimum gradient angle, written as `run` writes an MLP's.

use crate::CliResult;
use clap::Args;
use ntk_cli::args;
use ntk_cli::args::RunFlags;
use ntk_data::inputs;
use ntk_numerics::backend;
use ntk_probe::onnx::{self, OUTPUT_FILES, OnnxSummary};
use ntk_probe::run::existing::{self, SetCommand};
use ntk_runs::overrides;
use ntk_runs::sweep::State;

#[derive(Args)]
pub(crate) struct OnnxArgs {
    #[command(flatten)]
    run: RunFlags,
    /// probe.output: sum, full or an output index.
    #[arg(long)]
    output: Option<String>,
    /// Print summary.json to stdout instead of the table.
    #[arg(long)]
    json: bool,
}

pub(crate) fn onnx_cmd(args: OnnxArgs) -> CliResult<()> {
    let flags = &args.run;
    let path = flags.config()?;
    let src = overrides::Source::read(path)?;
    let sets = args::assignments(src.table(), &flags.keys, "probe", &flags.set, |f| {
        f.text("probe.output", "output", args.output.as_deref());
        Ok(())
    })?;
    ntk_probe::config::check_not_training(path, src.table(), &sets)?;
    let mut cfg = onnx::load_config(&src, &sets)?;
    let problems = inputs::check(&cfg.data);
    if let Some(first) = problems.into_iter().next() {
        return Err(format!("{}: {first}", src.name(&sets)).into());
    }
    let out = match flags.out.as_deref() {
        Some(o) => Some(ntk_files::outset::resolve_out(o)?),
        None if flags.dry_run => None,
        None => return Err("--out DIR is required: the directory the NTK's files go to".into()),
    };
    if let Some(dir) = &out {
        // A `run`'s set holds more files (weights.safetensors, outputs.npy): its own, which
        // the state below names as `run`'s set.
        ntk_files::outset::check_owned(dir, &|name| {
            OUTPUT_FILES.contains(&name) || ntk_probe::run::OUTPUT_FILES.contains(&name)
        })?;
        // Before the kernel is formed, and in the dry run (ninth hostile round: the run
        // computed it, then failed to write inputs.npy).
        ntk_files::outset::check_writable_unmade(dir)?;
        // The lock's place beside the set (fortieth hostile round, D1).
        ntk_files::lock::DirLock::check_place_beside(dir)?;
        ntk_probe::run::check_onnx_inputs_outside(&cfg.onnx.file, &cfg.data, dir)?;
    }
    let compute = backend::select(cfg.probe.backend.as_deref(), cfg.probe.precision)?;
    let loaded = onnx::load_model(&mut cfg, &compute)?;
    let model = &loaded.model;
    let inputs = inputs::load(&cfg.data).map_err(|e| ntk_probe::Error::Named {
        name: src.name(&sets),
        source: Box::new(e.into()),
    })?;
    ntk_probe::run::check_f32_inputs(cfg.probe.precision, &inputs)?;
    onnx::check_width(&cfg, model, &inputs)?;
    onnx::check_output(&cfg, model)?;
    onnx::check_memory(&cfg, model, inputs.n, flags.max_memory.as_deref())?;
    // A set at `out` that another config or `run` made is replaced only with --recompute,
    // by the dry run and the run alike; this config's own set is computed again.
    let prov = onnx::provenance(&cfg, &loaded.digest, &inputs, &compute);
    let state = match &out {
        Some(dir) => {
            // Another process making a set here first: what it holds now is not what
            // the state reads.
            super::run::check_not_being_written(dir)?;
            existing::state(dir, SetCommand::Onnx, &prov)
        }
        None => State::New,
    };
    if let Some(why) = existing::refusal(&state, flags.recompute) {
        return Err(why.into());
    }
    if flags.dry_run {
        let reason = existing::reason(&state, flags.recompute);
        let then = match &state {
            State::New => "it would be computed",
            State::Done if flags.resume => "--resume keeps it",
            _ => "it would be computed again",
        };
        super::run::DryRunAnswer {
            out: out.as_deref().map(|o| o.display().to_string()),
            state: state.label(),
            reason,
            what: format!(
                "the NTK of n = {} inputs through {} ({} parameters, input {:?}, {} output(s)) \
                 on {} {}",
                inputs.n,
                ntk_runs::quote::controls_escaped(&cfg.onnx.file.display().to_string()),
                model.num_params_total(),
                model.sample_dims(),
                model.output_dim(),
                compute.backend,
                compute.precision,
            ),
            then: then.into(),
        }
        .print(args.json);
        return Ok(());
    }
    // `--resume` keeps this config's finished set, as `run`'s does (twenty-sixth hostile
    // round, N5: refused, against its help); anything else is computed whole.
    let kept = match (&out, &state) {
        (Some(dir), State::Done) if flags.resume => {
            let path = dir.join("summary.json");
            let summary = ntk_runs::sweep::read::<OnnxSummary>(&path)?
                .ok_or_else(|| format!("{}: vanished", path.display()))?;
            eprintln!("{}: made by this config; kept (--resume)", dir.display());
            Some(summary)
        }
        _ => None,
    };
    let computed = kept.is_none();
    let summary = match kept {
        Some(summary) => summary,
        None => onnx::run(&cfg, &loaded, &inputs, &compute, out.as_deref())?,
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("serializes")
        );
    } else {
        print_table(&summary);
        if let Some(dir) = out.as_ref().filter(|_| computed) {
            println!(
                "  wrote {}/{{summary.json, inputs.npy, ntk.npy, eigenvalues.npy}}",
                dir.display()
            );
        }
    }
    Ok(())
}

fn print_table(s: &OnnxSummary) {
    println!(
        "NTK  {} | input {:?}, {} parameters | {}",
        ntk_runs::quote::controls_escaped(&s.onnx.display().to_string()),
        s.input_shape,
        s.parameters,
        ntk_runs::quote::controls_escaped(&s.data)
    );
    println!(
        "     {} on {} (autodiff path, output {})",
        s.precision,
        s.backend,
        match s.output {
            ntk_numerics::kernel::OutputMode::Sum => "sum".to_string(),
            ntk_numerics::kernel::OutputMode::Full => "full".to_string(),
            ntk_numerics::kernel::OutputMode::Single(o) => o.to_string(),
        }
    );
    println!("  lambda_min          {:.6e}", s.lambda_min);
    println!("  lambda_max          {:.6e}", s.lambda_max);
    println!(
        "  kappa               {}",
        super::run::fmt_kappa(s.kappa, s.rank, (s.kernel_size, false))
    );
    if let Some(note) = &s.note {
        println!("  note                {note}");
    }
    if let (Some(a), Some([i, j])) = (s.min_grad_angle_deg, s.min_grad_angle_pair) {
        println!(
            "  min grad angle      {} deg (samples {i}, {j})",
            super::run::degrees(a)
        );
    }
    println!(
        "  seconds             {:.3} (kernel {:.3}, eigenvalues {:.3})",
        s.seconds, s.kernel_seconds, s.eigen_seconds
    );
}
