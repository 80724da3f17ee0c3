//! `ntk-probe sweep`: every point of a config's `[sweep]`, then the tables and figures.

use super::run::ProbeFlags;
use crate::CliResult;
use clap::Args;
use ntk_cli::args::SweepFlags;
use ntk_probe::sweep;
use ntk_probe::sweep::SweepConfig;
use ntk_runs::overrides;
use ntk_runs::overrides::Assignment;
use ntk_runs::sweep::command::StepError;
use ntk_runs::sweep::{Invocation, Shard, SweepCommand, run_command};
use std::path::Path;

#[derive(Args)]
pub(crate) struct SweepArgs {
    #[command(flatten)]
    sweep: SweepFlags,
    #[command(flatten)]
    own: ProbeFlags,
}

pub(crate) fn load_sweep(src: &overrides::Source, sets: &[Assignment]) -> CliResult<SweepConfig> {
    Ok(SweepConfig::load_from(src, sets)?)
}

pub(crate) fn sweep_cmd(args: SweepArgs) -> CliResult<()> {
    let flags = &args.sweep.run;
    let path = flags.config()?;
    // The backend is the sweep's to choose, not part of its config (`SweepOptions::backend`).
    let mut keys_flags = flags.clone();
    keys_flags.keys.backend = None;
    let src = overrides::Source::read(path)?;
    let sets = args.own.assignments(&keys_flags, src.table())?;
    let cfg = load_sweep(&src, &sets)?;
    say_one_block(&cfg);
    let mut tool = ProbeCommand {
        opts: sweep::SweepOptions {
            backend: flags.keys.backend.clone(),
            recompute: flags.recompute,
            max_memory: flags.max_memory.clone(),
            allow_mixed: args.sweep.allow_mixed,
            config: Some(src.name(&sets)),
        },
        cfg: &cfg,
        start: std::time::Instant::now(),
    };
    let out = match flags.out.as_deref() {
        Some(out) => out,
        None if cfg.sweep.out.as_os_str().is_empty() => {
            return Err(format!(
                "{}: no output directory (sweep.out is absent or an empty path): give --out \
                 DIR, or sweep.out in the config",
                src.name_for(&sets, "sweep.out")
            )
            .into());
        }
        None => &cfg.sweep.out,
    };
    let call = Invocation {
        out,
        output: ntk_files::outset::Output::Other,
        shard: args.sweep.shard.as_deref(),
        dry_run: flags.dry_run,
        config: path,
    };
    run_command(&mut tool, call)?;
    Ok(())
}

/// Says where the blocks protocol's points are one block of the whole set (`block_size`
/// at least the setting's n): their numbers are then the whole protocol's (eighty-seventh
/// hostile round, N7: a sweep over n = 300 drew the two protocols' rows equal, no word).
fn say_one_block(cfg: &SweepConfig) {
    if !cfg
        .sweep
        .protocols
        .contains(&ntk_probe::config::Protocol::Blocks)
    {
        return;
    }
    let size = cfg.probe.block_size;
    let mut ns: Vec<usize> = cfg
        .settings()
        .iter()
        .map(|s| cfg.data_config(s).n)
        .filter(|&n| n <= size)
        .collect();
    ns.sort_unstable();
    ns.dedup();
    if let Some(n) = ns.first() {
        eprintln!(
            "note: probe.block_size = {size} is at least n = {n}: each blocks point there is \
             one block of the whole set, its numbers the whole protocol's (a smaller \
             probe.block_size gives blocks)"
        );
    }
}

/// The probe's steps of the sweep command ([`run_command`]).
struct ProbeCommand<'a> {
    cfg: &'a SweepConfig,
    opts: sweep::SweepOptions,
    /// When the run started, for its line of counts.
    start: std::time::Instant,
}

impl SweepCommand for ProbeCommand<'_> {
    type Ran = sweep::Ran;
    type Collected = Vec<sweep::GroupRow>;

    fn check(&mut self, out: &Path) -> Result<(), StepError> {
        sweep::check_out(out)?;
        ntk_probe::run::check_data_outside(&self.cfg.data, out)?;
        sweep::check_proven(out, self.cfg)?;
        // Before any point, as a single run checks it (eighty-second hostile round, D8: a
        // tiled sweep planned its points and recorded each one's failure instead).
        ntk_probe::phases::check_variable()?;
        Ok(())
    }

    fn dry_run(&self, out: &Path, shard: Shard) -> Result<(), StepError> {
        Ok(sweep::dry_run(self.cfg, out, shard, &self.opts)?)
    }

    fn size(&self) -> (usize, &'static str) {
        (self.cfg.points().len(), "point")
    }

    fn fingerprint(&self) -> String {
        sweep::fingerprint(self.cfg)
    }

    fn run(
        &mut self,
        out: &Path,
        shard: Shard,
    ) -> Result<(Self::Ran, Option<StepError>), StepError> {
        self.start = std::time::Instant::now();
        let mut ran = sweep::run_sweep(self.cfg, out, shard, &self.opts)?;
        let failed = ran.check.take().map(StepError::from);
        Ok((ran, failed))
    }

    fn ran(&self, ran: &Self::Ran) {
        println!(
            "sweep: {} point(s) computed, {} already finished, {:.1} s",
            ran.made,
            ran.skipped,
            self.start.elapsed().as_secs_f64()
        );
    }

    fn left_to_other_shards(&self, ran: &Self::Ran) -> usize {
        ran.left_to_other_shards
    }

    fn unfinished_elsewhere(&self, ran: &Self::Ran) -> usize {
        ran.unfinished_elsewhere
    }

    fn collect(&self, out: &Path) -> Result<Self::Collected, StepError> {
        Ok(sweep::collect(
            Some(self.cfg),
            out,
            None,
            self.opts.allow_mixed,
        )?)
    }

    fn report(&self, out: &Path, _: &Self::Ran, groups: Option<Self::Collected>, _: bool) {
        if let Some(groups) = groups {
            print_groups(&groups);
            println!(
                "wrote {}/{{results.csv, summary.csv, *.png, *.svg, *.pdf}}",
                out.display()
            );
        }
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
        // Over the seeds whose kernel is not singular, marked where some are (eighty-sixth
        // hostile round, N5: "seeds 2" beside the one finite seed's kappa, no word).
        let k = if g.singular == g.seeds {
            "inf".to_string()
        } else if g.singular > 0 {
            format!("{:.4e}*{}", g.kappa_mean, g.singular)
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
    if groups
        .iter()
        .any(|g| g.singular > 0 && g.singular < g.seeds)
    {
        println!(
            "*S: kappa is the mean over the seeds whose kernel is not singular; S of the seeds \
             have a singular kernel (kappa infinite; summary.csv's `singular`)"
        );
    }
    // Why theory values are absent, once per reason, with the depths it holds at (a reason
    // names its activation: hundred-and-thirtieth hostile round, second review, N2).
    let mut notes: Vec<(&str, Vec<usize>)> = Vec::new();
    for g in groups.iter().filter(|g| !g.theory_note.is_empty()) {
        match notes.iter_mut().find(|(n, _)| *n == g.theory_note) {
            Some((_, depths)) => depths.push(g.depth),
            None => notes.push((g.theory_note.as_str(), vec![g.depth])),
        }
    }
    notes.sort_unstable();
    for (n, mut depths) in notes {
        depths.sort_unstable();
        depths.dedup();
        let depths: Vec<String> = depths.iter().map(usize::to_string).collect();
        let s = if depths.len() == 1 { "" } else { "s" };
        println!("theory: {n} (depth{s} {})", depths.join(", "));
    }
}
