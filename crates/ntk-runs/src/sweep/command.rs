//! A sweep's command as both tools run it (`ntk-probe sweep`, `ntk-train sweep` and `run`),
//! written once: the output directory resolved, the shard read, the tool's checks, then
//! either the dry run or the claim, the run, the collect and the report, ending with the
//! error of the points that failed. The tool says what each step does ([`SweepCommand`]).

use std::error::Error;
use std::path::{Path, PathBuf};

use super::{Shard, after_collect, claim};

/// An error of a tool's step, as the command line reports it.
pub type StepError = Box<dyn Error>;

/// What a tool does at each step of [`run_command`].
pub trait SweepCommand {
    /// What the run reports (its counts).
    type Ran;
    /// What the collect wrote.
    type Collected;

    /// The tool's refusals before anything is made or shown, against the resolved output
    /// directory `out` (its files, the inputs outside it, the memory, the device); a dry run
    /// fails here exactly as the run would.
    fn check(&mut self, out: &Path) -> Result<(), StepError>;

    /// `--dry-run`: every point of `shard` with its state; makes nothing.
    fn dry_run(&self, out: &Path, shard: Shard) -> Result<(), StepError>;

    /// The sweep's points and what one is called (`point`, `run`), for the claim.
    fn size(&self) -> (usize, &'static str);

    /// The fingerprint of the config the claim is taken for.
    fn fingerprint(&self) -> String;

    /// Makes the points of `shard` not done: what it did, and the error the sweep ends with
    /// when points failed (each recorded in its directory; the others were made).
    fn run(
        &mut self,
        out: &Path,
        shard: Shard,
    ) -> Result<(Self::Ran, Option<StepError>), StepError>;

    /// Said as soon as the run is over, before the collect (the probe's counts).
    fn ran(&self, _ran: &Self::Ran) {}

    /// The points of the other shards that still hold another config's results when the
    /// run ends ([`super::Outcome::left_to_other_shards`]): while their shards have not
    /// made them again, the collect would merge two configs, so it waits.
    fn left_to_other_shards(&self, _ran: &Self::Ran) -> usize {
        0
    }

    /// What of the tables and figures waits for the other shards' points (said with
    /// [`SweepCommand::unfinished_elsewhere`]'s note), if anything: ntk-train's rate choice.
    fn waits_for_them(&self) -> Option<&'static str> {
        None
    }

    /// The points of the other shards with no result of this config when the run ends
    /// ([`super::Outcome::unfinished_elsewhere`]): the collect holds the others only.
    fn unfinished_elsewhere(&self, _ran: &Self::Ran) -> usize {
        0
    }

    /// Merges what has finished into the tables and figures.
    fn collect(&self, out: &Path) -> Result<Self::Collected, StepError>;

    /// Says what the sweep did: `collected` is `None` when the collect failed after failed
    /// points (its error is then a warning: [`after_collect`]); `failed` whether points did.
    fn report(&self, out: &Path, ran: &Self::Ran, collected: Option<Self::Collected>, failed: bool);
}

/// How the sweep command was called: its output directory (before it is resolved), its
/// `--shard`, `--dry-run`, and the config file the claim names.
pub struct Invocation<'a> {
    pub out: &'a Path,
    /// What `out` holds, for the rule against outputs inside the tools' directories
    /// ([`ntk_files::outset::check_not_inside_made_for`]).
    pub output: ntk_files::outset::Output,
    pub shard: Option<&'a str>,
    pub dry_run: bool,
    pub config: &'a Path,
}

/// The sweep command: `out` resolved ([`ntk_files::outset::resolve_out_for`]), the shard read,
/// the tool's checks; then the dry run, or the claim (nothing to do when the shard owns no
/// point), the run, the collect ([`after_collect`]) and the report, returning the error of
/// the points that failed. Returns the resolved output directory.
pub fn run_command<C: SweepCommand>(
    tool: &mut C,
    call: Invocation<'_>,
) -> Result<PathBuf, StepError> {
    let out = ntk_files::outset::resolve_out_for(call.out, call.output)?;
    let shard = Shard::parse_or_all(call.shard)?;
    tool.check(&out)?;
    // A directory under runs/ this user cannot list or enter: its points' states cannot be
    // read, and the collect that ends the sweep refuses it; refused here, dry run and run
    // alike, with the remedy that works (ninety-third hostile round, D1 and D2: the probe's
    // dry run said done, and both said `--recompute`, which fails there).
    super::refuse_unlistable(&out.join("runs"))?;
    // Where the run's claim would refuse (an --out that cannot be made or written), the dry
    // run refuses too, making nothing (ninth hostile round), and both in the same words
    // (hundred-and-thirty-fourth hostile round, second review, N2: the run said "cannot
    // create the output directory" where the dry run named the directory not writable).
    ntk_files::outset::check_writable_unmade(&out)?;
    if call.dry_run {
        ntk_files::lock::SweepClaim::check_no_set_being_made(&out)?;
        ntk_files::lock::SweepClaim::check_no_other_writer(&out, &tool.fingerprint())?;
        tool.dry_run(&out, shard)?;
        return Ok(out);
    }
    let Some(claim) = claim(&out, shard, tool.size(), &tool.fingerprint(), call.config)? else {
        return Ok(out);
    };
    // A run refused before any work leaves nothing the claim made (eighth hostile round: an
    // empty new --out holding `.ntk-writers`).
    let (ran, failed) = match tool.run(&out, shard) {
        Ok(ran) => ran,
        Err(e) => {
            claim.withdraw();
            return Err(e);
        }
    };
    tool.ran(&ran);
    // With --recompute, a shard that ends while other shards' points are still another
    // config's leaves the collect to them (sixty-first hostile round, D2: it failed as
    // "made by different configs").
    let left = tool.left_to_other_shards(&ran);
    let collected = if left > 0 {
        eprintln!(
            "note: {}: not collected yet: {left} {}(s) of the other shards still hold \
             another config's results, which their shards make again (--recompute), and until \
             then any tables and figures there are the earlier results'; the last shard to \
             end collects (or `collect --config`; under submit.sh the collect job)",
            out.display(),
            tool.size().1
        );
        None
    } else {
        let collected = after_collect(&out, tool.collect(&out), failed.is_some())?;
        let unfinished = tool.unfinished_elsewhere(&ran);
        if collected.is_some() && unfinished > 0 {
            let unit = tool.size().1;
            // What waits is said as waiting, not as held (hundred-and-forty-second hostile
            // round, N1: "the tables and figures hold" where no figure was drawn).
            let holds = match tool.waits_for_them() {
                Some(w) => format!("sweep.csv holds the {unit}s finished so far, and {w} wait"),
                None => format!("the tables and figures hold the {unit}s finished so far"),
            };
            eprintln!(
                "note: {}: {holds}: {unfinished} {unit}(s) of the other shards have no result \
                 yet; the last shard to end collects them all (or `collect --config`; under \
                 submit.sh the collect job)",
                out.display(),
            );
        }
        collected
    };
    tool.report(&out, &ran, collected, failed.is_some());
    drop(claim);
    match failed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
