//! `ntk-probe sweep`: every point of a config's `[sweep]`, then the tables and figures.

use super::run::ProbeFlags;
use crate::CliResult;
use clap::Args;
use ntk_cli::args::SweepFlags;
use ntk_probe::sweep;
use ntk_probe::sweep::SweepConfig;
use ntk_runs::overrides;
use ntk_runs::overrides::Assignment;
use ntk_runs::sweep::{Shard, after_collect, claim};
use std::path::Path;

#[derive(Args)]
pub(crate) struct SweepArgs {
    #[command(flatten)]
    sweep: SweepFlags,
    #[command(flatten)]
    own: ProbeFlags,
}

pub(crate) fn load_sweep(path: &Path, sets: &[Assignment]) -> CliResult<SweepConfig> {
    Ok(SweepConfig::load_with(path, sets)?)
}

pub(crate) fn sweep_cmd(args: SweepArgs) -> CliResult<()> {
    let flags = &args.sweep.run;
    let path = flags.config()?;
    // The device is the sweep's to choose, not part of its config (`SweepOptions::device`).
    let mut keys_flags = flags.clone();
    keys_flags.keys.device = None;
    let sets = args
        .own
        .assignments(&keys_flags, &overrides::read_table(path)?)?;
    let cfg = load_sweep(path, &sets)?;
    let out = ntk_files::outset::resolve_out(flags.out.as_deref().unwrap_or(&cfg.sweep.out))?;
    sweep::check_out(&out)?;
    ntk_probe::run::check_data_outside(&cfg.data, &out)?;
    let shard = Shard::parse_or_all(args.sweep.shard.as_deref())?;
    let opts = sweep::SweepOptions {
        device: flags.keys.device.clone(),
        recompute: flags.recompute,
        max_memory: flags.max_memory.clone(),
        allow_mixed: args.sweep.allow_mixed,
    };
    if flags.dry_run {
        return Ok(sweep::dry_run(&cfg, &out, shard, &opts)?);
    }
    let start = std::time::Instant::now();
    let points = (cfg.points().len(), "point");
    let Some(_claim) = claim(&out, shard, points, &sweep::fingerprint(&cfg), path)? else {
        return Ok(());
    };
    let ran = sweep::run_sweep(&cfg, &out, shard, &opts)?;
    println!(
        "sweep: {} point(s) computed, {} already finished, {:.1} s",
        ran.made,
        ran.skipped,
        start.elapsed().as_secs_f64()
    );
    let collected = sweep::collect(Some(&cfg), &out, None, args.sweep.allow_mixed);
    if let Some(groups) = after_collect(collected, ran.check.is_some())? {
        print_groups(&groups);
        println!(
            "wrote {}/{{results.csv, summary.csv, *.png, *.svg, *.pdf}}",
            out.display()
        );
    }
    match ran.check {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

pub(crate) fn print_groups(groups: &[sweep::GroupRow]) {
    let width = groups.iter().map(|g| g.setting.len()).max().unwrap_or(0);
    println!(
        "{:>8} {:width$} {:>16} {:>5} {:>6} {:>14} {:>14} {:>10} {:>10}",
        "protocol",
        "",
        "activation",
        "depth",
        "seeds",
        "kappa",
        "theory kappa",
        "min angle",
        "theory"
    );
    for g in groups {
        let k = if g.singular == g.seeds {
            "inf".to_string()
        } else {
            format!("{:.4e}", g.kappa_mean)
        };
        let tk = g
            .theory_kappa
            .map_or("-".to_string(), |v| format!("{v:.4e}"));
        let ta = g
            .theory_min_grad_angle_deg
            .map_or("-".to_string(), |v| format!("{v:.3}"));
        // Not measured (blocks run block by block): "-", as an absent theory value.
        let a = Some(g.min_grad_angle_mean_deg)
            .filter(|v| v.is_finite())
            .map_or("-".to_string(), |v| format!("{v:.3}"));
        println!(
            "{:>8} {:width$} {:>16} {:>5} {:>6} {:>14} {:>14} {:>10} {:>10}",
            g.protocol, g.setting, g.activation, g.depth, g.seeds, k, tk, a, ta
        );
    }
    // Why theory values are absent, once per reason.
    let mut notes: Vec<&str> = groups
        .iter()
        .map(|g| g.theory_note.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    notes.sort_unstable();
    notes.dedup();
    for n in notes {
        println!("theory: {n}");
    }
}
