//! `ntk-probe run` (alias `ntk`): the NTK of one network on one data set, its files and table.

use crate::CliResult;
use clap::Args;
use ntk_cli::args;
use ntk_cli::args::RunFlags;
use ntk_data::inputs;
use ntk_numerics::backend;
use ntk_probe::config::ProbeConfig;
use ntk_probe::run;
use ntk_probe::run::Summary;
use ntk_probe::run::existing::{self, SetCommand};
use ntk_runs::overrides;
use ntk_runs::overrides::Assignment;
use std::path::Path;

#[derive(Args)]
pub(crate) struct NtkArgs {
    #[command(flatten)]
    run: RunFlags,
    #[command(flatten)]
    own: ProbeFlags,
    /// Also write OUT/weights.safetensors (PyTorch's names) and OUT/outputs.npy (the
    /// network's outputs on the inputs, n x outputs, in evaluation mode).
    #[arg(long)]
    save_weights: bool,
    /// Print summary.json to stdout instead of the table.
    #[arg(long)]
    json: bool,
}

/// The short flags of the probe's own keys, beside those both tools take
/// ([`ntk_cli::args::KeyFlags`]).
#[derive(Args)]
pub(crate) struct ProbeFlags {
    /// probe.protocol: whole or blocks.
    #[arg(long)]
    protocol: Option<String>,
    /// probe.output: sum, full or an output index.
    #[arg(long)]
    output: Option<String>,
}

impl ProbeFlags {
    /// The `--set`s that `run` (both tools' flags, then these, then `--set`) stands for.
    pub(crate) fn assignments(
        &self,
        run: &RunFlags,
        table: &toml::Table,
    ) -> CliResult<Vec<Assignment>> {
        Ok(args::assignments(
            table,
            &run.keys,
            "probe",
            &run.set,
            |f| {
                f.text("probe.protocol", "protocol", self.protocol.as_deref());
                f.text("probe.output", "output", self.output.as_deref());
                Ok(())
            },
        )?)
    }
}

/// A kappa as printed: its value, or `inf` with the rank of the `n` rows, "at least" where the
/// route computed only the extremes (`lower`: the rank then counts the Ritz values above the
/// tolerance; eighty-eighth hostile round, N4: "rank 13 of 20" where 18 eigenvalues were
/// above it).
pub(crate) fn fmt_kappa(k: Option<f64>, rank: usize, (n, lower): (usize, bool)) -> String {
    let at_least = if lower { "at least " } else { "" };
    match k {
        Some(k) => format!("{k:.6e}"),
        None => format!("inf (singular: rank {at_least}{rank} of {n})"),
    }
}

pub(crate) fn print_table(s: &Summary) {
    // The kernel's size: n, or n times the outputs with `probe.output = "full"`, from the
    // config the run recorded (eighty-sixth hostile round, D1: "rank 14 of 14" for a 30 x 30
    // kernel, the rank standing for its size).
    let outputs = s
        .provenance
        .as_ref()
        .and_then(|p| {
            ["model.output_dim", "resnet.num_classes"]
                .iter()
                .find_map(|k| p.config.get(*k)?.as_u64())
        })
        .unwrap_or(1) as usize;
    let size = if s.output == "full" {
        (s.n * outputs).max(s.rank)
    } else {
        s.n
    };
    // The data's description names a path, which a config's TOML escape can give a
    // control character: never printed raw (hundredth hostile round, N2).
    println!(
        "NTK  {} | depth {} width {} | {}",
        s.activation,
        s.depth,
        s.width,
        ntk_runs::quote::controls_escaped(&s.data)
    );
    println!(
        "     {} {} on {} ({} path, output {}, protocol {})",
        s.precision, s.parameterization, s.backend, s.method, s.output, s.protocol
    );
    // The blocks protocol's numbers are means over its blocks (the official code's kappa):
    // said, with their count, so that they are not read as one kernel's (eighty-first
    // hostile round, D6: a mean kappa of 4.99e5 under a ratio of the two lines of 356).
    match (s.protocol, s.blocks) {
        (ntk_probe::config::Protocol::Blocks, Some(b)) => {
            // One block is the whole set (`block_size` at least n: eighty-seventh hostile
            // round, N7: "mean over 1 blocks").
            // Given blocks (`probe.blocks`) are cut by their file, not by the size
            // (eighty-ninth hostile round, N4).
            let given = s.provenance.as_ref().is_some_and(|p| {
                p.config
                    .get("probe.blocks_digest")
                    .is_some_and(|v| !v.is_null())
            });
            let why = if given {
                "probe.blocks gives one block of all rows"
            } else {
                "probe.block_size >= n"
            };
            let over = match b {
                1 => format!("(one block: the whole set, {why}; blocks.csv)"),
                b => format!("(mean over {b} blocks; each in blocks.csv)"),
            };
            println!("  lambda_min          {:.6e} {over}", s.lambda_min);
            println!("  lambda_max          {:.6e} {over}", s.lambda_max);
            match s.kappa {
                Some(k) => println!("  kappa               {k:.6e} {over}"),
                // The least rank is any block's, not the singular one's (hundred-and-
                // thirty-sixth hostile round, second review, N1): blocks.csv says which.
                None => println!(
                    "  kappa               inf (a block is singular, blocks.csv says which; \
                     the least rank of any block is {})",
                    s.rank
                ),
            }
        }
        _ => {
            println!("  lambda_min          {:.6e}", s.lambda_min);
            println!("  lambda_max          {:.6e}", s.lambda_max);
            println!(
                "  kappa               {}",
                fmt_kappa(
                    s.kappa,
                    s.rank,
                    (size, s.eigen != ntk_probe::config::Eigen::Full)
                )
            );
        }
    }
    println!(
        "  gram kappa (L = 0)  {}",
        fmt_kappa(s.gram_kappa, s.gram_rank, (s.n, false))
    );
    if let (Some(a), Some([i, j])) = (s.min_grad_angle_deg, s.min_grad_angle_pair) {
        println!(
            "  min grad angle      {} deg (samples {i}, {j})",
            degrees(a)
        );
    }
    if let Some([i, j]) = s.min_grad_angle_unresolved {
        println!("  min grad angle      null: not resolved (samples {i}, {j}; see the note)");
    }
    // An angle that is null (a zero vector of the pair, or one below its layer's rounding;
    // the note says which) reads "null".
    let angles = |t: &[f64]| {
        let v: Vec<String> = t
            .iter()
            .map(|v| match v.is_nan() {
                true => "null".to_string(),
                false => degrees(*v),
            })
            .collect();
        v.join(" ")
    };
    if let Some(t) = &s.embedding_min_angle_deg {
        println!("  min theta_l (deg)   {}", angles(t));
    }
    if let Some(t) = &s.pair_embedding_angles_deg {
        println!("  pair theta_l (deg)  {}", angles(t));
    }
    if let Some(p) = s.pair_grad_angle_deg {
        match p.is_nan() {
            true => println!("  pair grad angle     undefined"),
            false => println!("  pair grad angle     {} deg", degrees(p)),
        }
    }
    if let Some(note) = &s.note {
        println!("  note                {note}");
    }
    for w in &s.warnings {
        eprintln!("warning: {w}");
    }
    println!(
        "  seconds             {:.3} (kernel {:.3}, eigenvalues {:.3})",
        s.seconds, s.kernel_seconds, s.eigen_seconds
    );
}

pub(crate) fn ntk(args: NtkArgs) -> CliResult<()> {
    let flags = &args.run;
    let path = flags.config()?;
    let src = overrides::Source::read(path)?;
    let sets = args.own.assignments(flags, src.table())?;
    let cfg = ProbeConfig::load_from(&src, &sets)?;
    cfg.validate()
        .and_then(|()| cfg.probe.check_block_size_applies(&[cfg.probe.protocol]))
        .and_then(|()| cfg.check_seed_applies())
        .map_err(|e| format!("{}: {e}", src.name(&sets)))?;
    if args.save_weights && cfg.probe.method == ntk_probe::config::Method::Theory {
        return Err(format!(
            "--save-weights with probe.method = \"theory\" ({}): the infinite-width kernel \
             has no weights, so none would be the kernel's (a seeded draw's file would say \
             otherwise); leave --save-weights out, or use \"auto\", \"autodiff\" or \
             \"structured\"",
            src.name(&sets)
        )
        .into());
    }
    let out_arg = flags
        .out
        .as_deref()
        .ok_or("--out DIR is required: the directory the NTK's files go to")?;
    let out = ntk_files::outset::resolve_out(out_arg)?;
    run::check_inputs_outside(&cfg, &out)?;
    // Every place the run writes: the set, where it is made, its lock.
    ntk_files::places::check(&run::places::planned(&out))?;
    run::check_memory(
        &cfg,
        inputs::expected_dim(&cfg.data)?,
        ntk_kernel::host::Reuse::OneKernel,
        flags.max_memory.as_deref(),
    )?;
    // An error of the data's files names the config as its keys' errors do (sixty-fourth
    // hostile round, N2).
    let inputs = inputs::load(&cfg.data).map_err(|e| ntk_probe::Error::Named {
        name: src.name(&sets),
        source: Box::new(e.into()),
    })?;
    run::check_inputs(cfg.probe.precision, &inputs)?;
    let compute = backend::select(cfg.probe.backend.as_deref(), cfg.probe.precision)?;
    // What the run reads and checks before any work, checked before a dry run answers: the
    // given weights and blocks (each file read once), the phase files' variable.
    let given = run::Given::read(&cfg, &inputs, &compute)?;
    run::check_before_work()?;
    // A set at `out` that another config or `onnx` made is replaced only with --recompute,
    // by the dry run and the run alike, with or without --resume.
    // Another process making a set here or writing a sweep here first: what it holds now
    // is not what the check below would read.
    check_not_being_written(&out)?;
    let prov = run::provenance(&cfg, &inputs, &inputs.digest(), &compute, Some(&given));
    let state = existing::state(&out, SetCommand::Run, &prov);
    if let Some(why) = existing::refusal(&state, flags.recompute) {
        return Err(why.into());
    }
    // Another run's phase files beside `out` are its resumable state: a run that would
    // remove them is refused without --recompute, as that run's results would be; beside
    // results `--resume` keeps, they are left (eighty-eighth hostile round, D1).
    let keeps = matches!(state, ntk_runs::sweep::State::Done)
        && flags.resume
        && (!args.save_weights || has_weights(&out));
    let another = match flags.recompute {
        true => None,
        false => run::another_phases(&out, &prov, inputs.n),
    };
    if let (Some(another), false) = (&another, keeps) {
        return Err(format!(
            "{another}, and which this run would remove: write to a new --out, or pass \
             --recompute to replace them"
        )
        .into());
    }
    if flags.dry_run || flags.resume {
        let summary_path = out.join("summary.json");
        // A finished run without the weights `--save-weights` asks for is not kept: it is
        // computed again, with them.
        let lacks_weights = args.save_weights && !has_weights(&out);
        let computes =
            !matches!(state, ntk_runs::sweep::State::Done) || !flags.resume || lacks_weights;
        if flags.dry_run && computes {
            let place = run::check_phase_place(&cfg, &inputs, &compute, &out, &prov, flags.resume);
            // What the run would warn of its phase files, on stderr as the run does.
            if let Some(words) = place? {
                eprintln!("{words}");
            }
        } else if flags.dry_run {
            // Kept results: this config's phase files beside them (eighty-fifth hostile
            // round, D10), or another route's, which the run removes.
            let place = ntk_probe::phases::Place::of_run(&out, true, &prov);
            if let Some(another) = &another {
                eprintln!("note: {another}: left as they are beside the kept results");
            } else if let Some(words) = ntk_probe::phases::drop_when_kept(&place, false) {
                eprintln!("note: {words}");
            } else if let Some(words) = run::unused_phases(&cfg, &compute, &out, false) {
                eprintln!("{words}");
            }
        }
        if flags.dry_run {
            // Phase files of this run make it partial: `--resume` continues from them, a
            // run without it removes them.
            // A stale set that `--recompute` replaces takes them the same way (eighty-second
            // hostile round, D6: its dry run said "computed again" where the run continued
            // from them, or removed them).
            // A finished set computed again (without --resume, or for --save-weights) takes
            // them too (eighty-sixth hostile round, D3: its dry run said nothing of them).
            let replaced = (matches!(
                state,
                ntk_runs::sweep::State::Stale(_) | ntk_runs::sweep::State::Failed(_)
            ) && flags.recompute)
                || (matches!(state, ntk_runs::sweep::State::Done) && computes);
            let examined = match &state {
                ntk_runs::sweep::State::New => {
                    run::examine_phases(&cfg, &inputs, &compute, &out, &prov)
                }
                _ if replaced => run::examine_phases(&cfg, &inputs, &compute, &out, &prov),
                _ => ntk_probe::phases::Examined::Nothing,
            };
            // Tiles the run would drop are said as the run says them.
            let kept = match examined {
                ntk_probe::phases::Examined::Kept(words) => Some(words),
                ntk_probe::phases::Examined::Dropped(warning, kept) => {
                    eprintln!("{warning}");
                    kept
                }
                ntk_probe::phases::Examined::Nothing => None,
            };
            if let Some(kept) = kept {
                let again = if replaced { " again" } else { "" };
                // Beside finished results `--resume` keeps them, and removes the phase files
                // (eighty-seventh hostile round, D1: "continues from them" was said there);
                // where `--save-weights` lacks the weights it computes again from them.
                let resumed = if matches!(state, ntk_runs::sweep::State::Done) && !lacks_weights {
                    "--resume keeps the finished results and removes them"
                } else {
                    "--resume continues from them"
                };
                let then = if flags.resume && replaced {
                    format!("it would be computed again, continuing from {kept} (--resume)")
                } else if flags.resume {
                    format!("--resume continues from {kept}")
                } else if let Some(why) =
                    ntk_probe::phases::unwritable(&ntk_probe::phases::dir_beside(&out))
                {
                    // What the run cannot remove, it leaves (eighty-third hostile round, D4:
                    // the dry run said "removing").
                    format!(
                        "it would be computed{again} afresh, leaving {kept} as they are \
                         ({why}); {resumed}"
                    )
                } else {
                    format!("it would be computed{again} afresh, removing {kept}; {resumed}")
                };
                let label = match (replaced, flags.resume) {
                    (true, _) => state.label(),
                    (false, true) => "partial",
                    (false, false) => "new",
                };
                DryRunAnswer {
                    out: Some(out.display().to_string()),
                    state: label,
                    reason: existing::reason(&state, flags.recompute),
                    what: format!(
                        "the NTK of n = {} inputs on {} {}",
                        inputs.n, compute.backend, compute.precision
                    ),
                    then,
                }
                .print(args.json);
                return Ok(());
            }
            let why = existing::reason(&state, flags.recompute);
            let then = match (&state, flags.resume) {
                (ntk_runs::sweep::State::Done, true) if lacks_weights => {
                    "it would be computed again: it has no weights for --save-weights"
                }
                (ntk_runs::sweep::State::Done, true) => "--resume keeps it",
                (ntk_runs::sweep::State::New, _) => "it would be computed",
                _ => "it would be computed again",
            };
            // The set is replaced whole: a run without --save-weights does not write the
            // weights a finished set's --save-weights left, so they go (ninetieth hostile
            // round, N5: the dry run did not name them).
            let weights = earlier_weights(&out, args.save_weights);
            let then = match weights.as_slice() {
                [] => then.to_string(),
                _ if then.starts_with("--resume keeps") => then.to_string(),
                files => format!(
                    "{then}, its set replaced whole: {} (of an earlier --save-weights) removed; \
                     pass --save-weights to write them again",
                    files.join(" and ")
                ),
            };
            DryRunAnswer {
                out: Some(out.display().to_string()),
                state: state.label(),
                reason: why,
                what: format!(
                    "the NTK of n = {} inputs on {} {}",
                    inputs.n, compute.backend, compute.precision
                ),
                then,
            }
            .print(args.json);
            return Ok(());
        }
        if matches!(state, ntk_runs::sweep::State::Done) && !lacks_weights {
            let summary = ntk_probe::sweep::read_summary(&summary_path)?
                .ok_or_else(|| format!("{}: vanished", summary_path.display()))?;
            // On stderr: with --json stdout is the summary alone.
            eprintln!("{}: made by this config; kept (--resume)", out.display());
            let place = ntk_probe::phases::Place::of_run(&out, true, &prov);
            if let Some(another) = &another {
                eprintln!("note: {another}: left as they are beside the kept results");
            } else if let Some(removed) = ntk_probe::phases::drop_when_kept(&place, true) {
                eprintln!("note: {removed}");
            } else if let Some(note) = run::unused_phases(&cfg, &compute, &out, true) {
                eprintln!("{note}");
            }
            return report_ntk(&summary, &args, &out, "kept");
        }
    }
    // The run says what its dry run says (ninety-second hostile round, N2).
    if let files @ [_, ..] = earlier_weights(&out, args.save_weights).as_slice() {
        eprintln!(
            "note: {}: {} (of an earlier --save-weights) go with the set this run replaces \
             whole; pass --save-weights to write them again",
            out.display(),
            files.join(" and ")
        );
    }
    let summary = run::run(
        &cfg,
        &inputs,
        &compute,
        given,
        Some(&out),
        (args.save_weights, flags.resume),
    )?;
    report_ntk(&summary, &args, &out, "wrote")
}

/// The files of an earlier `--save-weights` standing in `out` that a run without the flag
/// does not write, and removes with the set it replaces whole (ninetieth hostile round, N5).
fn earlier_weights(out: &Path, save_weights: bool) -> Vec<&'static str> {
    WEIGHT_FILES
        .into_iter()
        .filter(|f| !save_weights && out.join(f).is_file())
        .collect()
}

/// Refuses an `--out` that another process is writing now, in the dry run and the run alike
/// (round 23's D4: the dry run said "new"), before what is there is read: a probe's set being
/// made for it (the lock beside it), or a sweep (the writers' locks inside). The lock's place
/// itself is among the command's places (`run::places`).
pub(crate) fn check_not_being_written(out: &Path) -> CliResult<()> {
    let holder = ntk_files::lock::DirLock::holder_beside(out)
        .or_else(|| ntk_files::lock::SweepClaim::live_writer(out));
    match holder {
        Some(holder) => Err(ntk_files::Error::Locked {
            dir: out.to_path_buf(),
            holder,
        }
        .into()),
        None => Ok(()),
    }
}

/// What a dry run answers: one line, or with `--json` one JSON object (a script that parses
/// `--json` output reads the dry run's too: round 22's N4).
#[derive(serde::Serialize)]
pub(crate) struct DryRunAnswer {
    /// The output directory (`None`: no `--out`, where the command allows that).
    pub out: Option<String>,
    /// `new`, `partial`, `done`, `stale` or `failed`.
    pub state: &'static str,
    /// Why a run there is stale or failed.
    pub reason: Option<String>,
    /// What would be computed.
    pub what: String,
    /// What the run would do with it.
    pub then: String,
}

impl DryRunAnswer {
    pub(crate) fn print(&self, json: bool) {
        if json {
            let mut value = serde_json::to_value(self).expect("serializes");
            value["dry_run"] = serde_json::Value::Bool(true);
            println!(
                "{}",
                serde_json::to_string_pretty(&value).expect("serializes")
            );
            return;
        }
        let reason = self
            .reason
            .as_ref()
            .map_or(String::new(), |r| format!(": {r}"));
        println!(
            "{}: {}{reason} ({}; {})",
            self.out.as_deref().unwrap_or("(no --out)"),
            self.state,
            self.what,
            self.then
        );
    }
}

/// Prints a probe's summary: as JSON with `--json`, else as a table and the files written.
pub(crate) fn report_ntk(
    summary: &Summary,
    args: &NtkArgs,
    out: &Path,
    verb: &str,
) -> CliResult<()> {
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("serializes")
        );
    } else {
        print_table(summary);
        let blocks = if summary.blocks.is_some() {
            ", blocks.csv"
        } else {
            ""
        };
        let weights = if has_weights(out) {
            ", weights.safetensors, outputs.npy"
        } else {
            ""
        };
        // The block-by-block and tiled routes never form the whole kernel: no ntk.npy.
        let ntk = if out.join("ntk.npy").exists() {
            " ntk.npy,"
        } else {
            ""
        };
        println!(
            "  {verb} {}/{{summary.json, inputs.npy,{ntk} eigenvalues.npy{blocks}{weights}}}",
            out.display()
        );
    }
    Ok(())
}

/// The files `--save-weights` writes beside the output set.
const WEIGHT_FILES: [&str; 2] = ["weights.safetensors", "outputs.npy"];

/// Whether the run in `out` holds the files `--save-weights` writes.
fn has_weights(out: &Path) -> bool {
    WEIGHT_FILES.iter().all(|f| out.join(f).is_file())
}

/// An angle in degrees as the text summary prints it: four decimals, and a small nonzero one
/// in exponent form, so that it keeps its digits (0.003 read for 0.0031; a resolved 7.7e-6
/// read "0.0000", as parallel: hundred-and-fifty-fourth hostile round, second review, N2).
/// An angle just short of 180 keeps the digits that show its gap to 180 (hundred-and-fifty-
/// fifth hostile round, N2: a resolved 179.99998 read "180.0000", as antiparallel).
pub(crate) fn degrees(v: f64) -> String {
    let gap = 180.0 - v.abs();
    if v != 0.0 && v.abs() < 0.1 {
        format!("{v:.3e}")
    } else if gap > 0.0 && gap < 1e-3 {
        let decimals = ((-gap.log10()).ceil() as usize + 3).min(15);
        format!("{v:.decimals$}")
    } else {
        format!("{v:.4}")
    }
}

#[cfg(test)]
mod degrees_tests {
    /// A resolved small angle keeps its digits; zero and larger ones have four decimals.
    #[test]
    fn a_small_angle_is_not_printed_as_zero() {
        assert_eq!(super::degrees(7.68396281626435e-6), "7.684e-6");
        assert_eq!(super::degrees(0.0), "0.0000");
        assert_eq!(super::degrees(25.123694138115358), "25.1237");
        assert_eq!(super::degrees(0.0031), "3.100e-3");
        assert_eq!(super::degrees(179.99998028910477), "179.99998029");
        assert_eq!(super::degrees(180.0), "180.0000");
        assert_eq!(super::degrees(179.5), "179.5000");
    }
}
