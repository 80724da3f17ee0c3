//! What a single probe (`run`/`ntk`, `onnx`) finds at its `--out`: no set, a set this config
//! made, or a set another config or the other command made. Both commands write one output
//! set of the same layout (`summary.json` last), so each reads the other's: a set it did not
//! make for this config is replaced only with `--recompute`, by the dry run's word and the
//! run's alike (twenty-fourth hostile round, D1 and D2: a finished set of another config was
//! replaced without a word while the dry run said it was refused, and `onnx --dry-run` called
//! every `--out` new).

use std::path::Path;

use ntk_runs::provenance::Provenance;
use ntk_runs::sweep::{self, State};

use crate::onnx::OnnxSummary;
use crate::run::Summary;

/// The two commands whose output sets share a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetCommand {
    /// `ntk-probe run` (and its name `ntk`): an MLP's or a ResNet's kernel.
    Run,
    /// `ntk-probe onnx`: the kernel of a network given as an ONNX file.
    Onnx,
}

impl SetCommand {
    /// The command line's words.
    pub fn name(self) -> &'static str {
        match self {
            Self::Run => "ntk-probe run",
            Self::Onnx => "ntk-probe onnx",
        }
    }

    /// The command whose `summary.json` `value` is (an ONNX probe's names its file).
    fn of(value: &serde_json::Value) -> Self {
        match value.get("onnx") {
            Some(_) => Self::Onnx,
            None => Self::Run,
        }
    }
}

/// What `--recompute` says in every refusal of a set another config or command made.
pub const REDO: &str = "pass --recompute to compute it again";

/// The set at `out` for a probe of `command` whose provenance is `now`: `New` (no
/// `summary.json`), `Done` (this config's set), `Stale` (another config's, the other
/// command's, or a summary that does not read; the reason names the file and
/// `--recompute`).
pub fn state(out: &Path, command: SetCommand, now: &Provenance) -> State {
    let path = out.join("summary.json");
    let value = ntk_files::io::read_limited(&path, ntk_files::io::TEXT_LIMIT)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
    // Before the command's check, which `--recompute` passes: replacing the set removes
    // every name of either command's sets.
    if let Some(why) = value.as_ref().and_then(|v| unrecorded(out, &path, v)) {
        return State::Blocked(why);
    }
    let found = value.as_ref().map(SetCommand::of);
    if let Some(found) = found
        && found != command
    {
        return State::Stale(format!(
            "{}: an output set of `{}`, not of `{}`; write to a new --out, or pass \
             --recompute to replace it",
            out.display(),
            found.name(),
            command.name()
        ));
    }
    let expected = [(path.clone(), now)];
    match command {
        // A summary not as written (its checksum, its numbers against its eigenvalues and
        // blocks: `Recorded::check`) is not kept, as a sweep's point is not
        // (seventy-seventh hostile round, D1: `--resume` kept and printed an edited
        // activation and kappa).
        SetCommand::Run => sweep::state::<Summary>(&expected, REDO, sweep::Holder::Set),
        SetCommand::Onnx => sweep::state::<OnnxSummary>(&expected, REDO, sweep::Holder::Set),
    }
}

/// A file at one of the names of either command's sets (`run`'s `outputs.npy`, say, in an
/// `onnx` set) that the summary `value` at `path` does not record: not the tools' (the
/// hundredth hostile round, D2: an onnx set replaced, by `onnx` itself or by `run
/// --recompute`, removed the user's file there, whose name only `run`'s sets were checked
/// for). `None` for a summary that records no files (written before 2026-12-01).
fn unrecorded(out: &Path, path: &Path, value: &serde_json::Value) -> Option<String> {
    let files: ntk_runs::manifest::Files =
        serde_json::from_value(value.get("files")?.clone()).ok()?;
    if files.is_empty() {
        return None;
    }
    let mut names: Vec<&str> = crate::run::OUTPUT_FILES[1..].to_vec();
    for name in &crate::onnx::OUTPUT_FILES[1..] {
        if !names.contains(name) {
            names.push(name);
        }
    }
    ntk_runs::manifest::unrecorded(out, &files, &names, path)
        .map(|why| format!("{why}; not the run's: move it away"))
}

/// The state's reason when the set is another config's or command's and `--recompute` is
/// not given, or when something not the tools' is in it (`Blocked`, any flags): the
/// refusal, the same in the dry run and the run.
pub fn refusal(state: &State, recompute: bool) -> Option<String> {
    match state {
        State::Stale(why) if !recompute => Some(why.clone()),
        // Not the tools' in the set: refused with `--recompute` too (ninety-ninth hostile
        // round, D2).
        State::Blocked(why) => Some(why.clone()),
        _ => None,
    }
}

/// The state's reason, for a dry run's answer; with `--recompute` given, without the
/// advice to pass it (twenty-fifth hostile round, N1).
pub fn reason(state: &State, recompute: bool) -> Option<String> {
    match state {
        State::Stale(why) | State::Failed(why) | State::Blocked(why) if recompute => {
            Some(without_advice(why))
        }
        State::Stale(why) | State::Failed(why) | State::Blocked(why) => Some(why.clone()),
        _ => None,
    }
}

/// `why` without its last clause when that clause advises `--recompute`.
fn without_advice(why: &str) -> String {
    match why.rfind("; ") {
        Some(i) if why[i..].contains("--recompute") => why[..i].to_string(),
        _ => why.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_given_recompute_drops_the_advice_to_pass_it() {
        let why = "o/summary.json: made by a different config (model.seed: 1 -> 5); write to \
                   a new --out, or pass --recompute to replace it";
        let stale = State::Stale(why.into());
        assert_eq!(reason(&stale, false).as_deref(), Some(why));
        assert_eq!(
            reason(&stale, true).as_deref(),
            Some("o/summary.json: made by a different config (model.seed: 1 -> 5)")
        );
        assert_eq!(reason(&State::New, true), None);
    }
}
