//! Checkpoints: the model's parameters and buffers (Burn's burnpack record, which keeps
//! each parameter's id), the optimizer's state (momentum buffers, keyed by those ids) and
//! the tables so far, under `RUN/checkpoints/epoch-NNNNN/`, made current by atomically
//! rewriting `RUN/checkpoint.json`. A crash at any moment leaves the previous checkpoint
//! intact and current; older checkpoint directories are removed only after the pointer
//! moves on.
//!
//! Checkpoints are verified, not trusted: the pointer records the SHA-256 of every file of
//! its checkpoint and a checksum of itself, its `dir` must be `checkpoints/epoch-NNNNN` of
//! its own epoch, and its epoch and iteration must agree with the metrics table it points
//! to; [`find`] refuses anything else with an error naming the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::ModuleOptimizer;
use burn::store::ModuleRecord;
use ntk_runs::provenance::{self, Provenance};
use serde::{Deserialize, Serialize};

use ntk_engine::{SavedOptim, Snapshot, StateForm};

use crate::metrics::{EpochMetrics, Tracked, parse_csv, write_csv};
use crate::model::Model;

/// `RUN/checkpoint.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Pointer {
    pub epoch: usize,
    pub iteration: usize,
    /// The checkpoint directory, relative to the run directory.
    pub dir: String,
    /// The run's config (TOML) that produced it; a resume must match it.
    pub config: String,
    /// Whose optimizer state the checkpoint holds (`burn` before the choice existed).
    #[serde(default)]
    pub engine: StateForm,
    /// The resolved config and its fingerprint (a resume must match it).
    #[serde(default)]
    pub provenance: Option<Provenance>,
    /// SHA-256 of each file of the checkpoint directory, by name.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// SHA-256 of the run directory's prediction files ([`PREDICTION_FILES`]) as they were
    /// when the checkpoint was written: a resumed run keeps its prediction, which is written
    /// once, before the first step, so a resume checks it (seventy-fourth hostile round, D3:
    /// an edited, emptied or removed `predicted.csv` was kept through `--resume` and then
    /// recorded as the run's). Absent in checkpoints written before, and left out of the
    /// JSON then, so their checksums hold.
    /// Empty where the run has no prediction: a prediction file beside the run that it does
    /// not record is then not the run's (seventy-fifth hostile round, D2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_files: Option<BTreeMap<String, String>>,
    /// The run's initial loss, the reference of [`crate::divergence`] (absent in checkpoints
    /// written before it was kept, and left out of the JSON then, so their checksums hold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_loss: Option<f64>,
    /// SHA-256 of this pointer's JSON with `checksum` null: an edited pointer is refused.
    #[serde(default)]
    pub checksum: Option<String>,
}

impl Pointer {
    /// The checksum of the pointer's other fields.
    fn own_checksum(&self) -> String {
        let mut p = self.clone();
        p.checksum = None;
        provenance::sha256_hex(
            serde_json::to_string(&p)
                .expect("a pointer serializes")
                .as_bytes(),
        )
    }
}

/// The optimizer state a checkpoint holds.
pub enum OptimState<'a> {
    Burn(&'a ModuleOptimizer),
    /// The host engine's momentum buffers, flattened (`ntk_engine::host::HostEngine::velocity`).
    Host(&'a [f64]),
}

/// A checkpoint found on disk.
pub struct Loaded {
    pub pointer: Pointer,
    pub dir: PathBuf,
    pub rows: Vec<EpochMetrics>,
    pub tracked: Tracked,
}

fn pointer_path(run: &Path) -> PathBuf {
    run.join("checkpoint.json")
}

/// Saves `write(tmp)` under `path` by writing a sibling temporary file and renaming it.
fn save_via_rename<E: std::fmt::Display>(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), E>,
) -> crate::Result<()> {
    let tmp = path.with_extension("partial");
    write(&tmp).map_err(|e| crate::Error::Record {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .and_then(|()| ntk_files::io::replace_file(&tmp, path))
        .map_err(|source| {
            ntk_files::Error::Write {
                path: path.to_path_buf(),
                source,
            }
            .into()
        })
}

/// The representations table in a checkpoint (present when the run tracks them).
const REPRESENTATIONS: &str = "representations.csv";

/// Removes the epoch directories under `run/checkpoints` that lack a file every checkpoint
/// holds (the model, an optimizer state, the metrics and NTK tables): a checkpoint whose
/// writing was cut off (`checkpoint.json` names a directory only after all of them), by a
/// kill or a full disk. A run killed while writing its first checkpoint then starts over as
/// one killed before it does; it was refused as holding checkpoints but no checkpoint.json,
/// with and without --resume (fourteenth hostile round, D5). The tree is the run's own
/// (`checkpoints` a directory, not a link: `check_run_dir`); links in it are not followed.
/// The directory `checkpoint.json` names is never removed, whatever it lacks: it was
/// complete when the pointer moved to it, so a missing file there is damage done after,
/// which [`find`] reports, naming the file, and the rest of it stays for the user to see.
pub fn remove_unfinished(run: &Path) {
    for dir in unfinished(run) {
        remove_checkpoint(&dir);
    }
}

/// True for a file a checkpoint's directory holds as the run wrote it: a checkpoint's file,
/// its temporary before the rename (`model.partial`: [`save_via_rename`], and the recorder's
/// own temporary of that, `model.partial.NNN.tmp`), or an `atomic_write` leftover of one
/// (`metrics.csv.ntk-tmp-PID`).
fn is_checkpoint_file(name: &str) -> bool {
    let files = [StateForm::Host, StateForm::Burn]
        .into_iter()
        .flat_map(checkpoint_files)
        .chain([REPRESENTATIONS]);
    files.into_iter().any(|f| {
        let partial = Path::new(f).with_extension("partial");
        name == f
            || partial.to_str() == Some(name)
            || partial
                .to_str()
                .and_then(|p| name.strip_prefix(p))
                .is_some_and(|rest| rest.starts_with('.') && rest.ends_with(".tmp"))
            || name
                .strip_prefix(f)
                .is_some_and(|rest| rest.starts_with(ntk_files::outset::TMP_TAG))
    })
}

/// Removes a checkpoint's directory `dir` as far as it is the run's: the files a checkpoint
/// holds ([`is_checkpoint_file`]), then the directory when that leaves it empty. A file of
/// the user's there stays, and so does the directory that holds it (thirty-ninth hostile
/// round, D2: a note in an old checkpoint's directory went with it, as did notes in
/// `checkpoints/` under `--recompute`).
fn remove_checkpoint(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let ours = entry.file_name().to_str().is_some_and(is_checkpoint_file)
                && entry.file_type().is_ok_and(|t| t.is_file());
            if ours {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// Removes a run's checkpoints as far as they are the run's ([`remove_checkpoint`] for each
/// `epoch-NNNNN` directory), then `checkpoints/` when that leaves it empty; what the user put
/// there stays. A link at `checkpoints` is removed, not followed.
pub fn remove_checkpoints(run: &Path) -> std::io::Result<()> {
    let checkpoints = run.join("checkpoints");
    let meta = match std::fs::symlink_metadata(&checkpoints) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if !meta.is_dir() {
        return std::fs::remove_file(&checkpoints);
    }
    for entry in std::fs::read_dir(&checkpoints)?.flatten() {
        let ours = entry.file_name().to_str().is_some_and(is_checkpoint_name)
            && entry.file_type().is_ok_and(|t| t.is_dir());
        if ours {
            remove_checkpoint(&entry.path());
        }
    }
    let _ = std::fs::remove_dir(&checkpoints);
    Ok(())
}

/// The epoch directories [`remove_unfinished`] removes.
fn unfinished(run: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(run.join("checkpoints")) else {
        return Vec::new();
    };
    let pointed = ntk_files::io::read_to_string(pointer_path(run))
        .ok()
        .and_then(|text| serde_json::from_str::<Pointer>(&text).ok())
        .and_then(|p| p.dir.strip_prefix("checkpoints/").map(str::to_string));
    let mut found = Vec::new();
    for e in entries.flatten() {
        let dir = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if pointed.as_deref() == Some(name.as_str()) {
            continue;
        }
        let epoch_dir = name.starts_with("epoch-") && e.file_type().is_ok_and(|t| t.is_dir());
        let has = |f: &str| dir.join(f).is_file();
        let complete = [StateForm::Host, StateForm::Burn]
            .into_iter()
            .any(|form| checkpoint_files(form).iter().all(|f| has(f)));
        if epoch_dir && !complete {
            found.push(dir);
        }
    }
    found
}

/// Whether the run's first checkpoint was cut off between its directory's rename and its
/// pointer's: no `checkpoint.json`, and the temporary copy of one its writer left
/// (`checkpoint.json.ntk-tmp-PID`). Its epoch checkpoints were never recorded, so no run
/// resumes from them, and the run starts over ([`remove_unrecorded`]); a `checkpoint.json`
/// removed by hand leaves no such copy, and is refused as before (eighty-ninth hostile round,
/// D9: every mode, `--recompute` included, was refused, advised to restore a file never
/// written). Nothing is changed.
pub fn pointer_cut(run: &Path) -> bool {
    let tmp = format!("checkpoint.json{}", ntk_files::outset::TMP_TAG);
    !pointer_path(run).exists()
        && std::fs::read_dir(run).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(&tmp))
        })
}

/// Removes the run's epoch checkpoints that no `checkpoint.json` recorded, as far as they are
/// the run's ([`remove_checkpoint`]), where its first pointer was cut off ([`pointer_cut`],
/// asked before the dead writer's temporary copy is cleaned).
pub fn remove_unrecorded(run: &Path) {
    if let Ok(entries) = std::fs::read_dir(run.join("checkpoints")) {
        for e in entries.flatten() {
            let epoch = e.file_name().to_string_lossy().starts_with("epoch-")
                && e.file_type().is_ok_and(|t| t.is_dir());
            if epoch {
                remove_checkpoint(&e.path());
            }
        }
    }
}

/// Why this user cannot remove the run's unrecorded epoch checkpoints ([`remove_unrecorded`]):
/// `checkpoints/` or an `epoch-*` directory in it that it may not write (another user's, or
/// kept from change); `None` where it can. Asked without removing anything, by the run
/// before it cleans and by its dry run (ninety-first hostile round, D2: the run said
/// "removed" of what it could not remove, and was then refused).
pub fn unrecorded_unremovable(run: &Path) -> Option<String> {
    let checkpoints = run.join("checkpoints");
    for e in std::fs::read_dir(&checkpoints).ok()?.flatten() {
        let epoch = e.file_name().to_string_lossy().starts_with("epoch-")
            && e.file_type().is_ok_and(|t| t.is_dir());
        if epoch {
            let writable = ntk_files::outset::check_writable_unmade(&checkpoints)
                .and_then(|()| ntk_files::outset::check_writable_unmade(&e.path()));
            if let Err(why) = writable {
                return Some(why.to_string());
            }
        }
    }
    None
}

/// Whether `run/checkpoints` holds an epoch checkpoint that [`remove_unfinished`] keeps:
/// what a run without `checkpoint.json` meets as epoch checkpoints it may not delete
/// (`run_dir::ResumeDecision::NoPointer`), asked without removing anything (a dry run).
pub fn has_kept_epochs(run: &Path) -> bool {
    let gone = unfinished(run);
    std::fs::read_dir(run.join("checkpoints")).is_ok_and(|d| {
        d.flatten().any(|e| {
            e.file_name().to_string_lossy().starts_with("epoch-") && !gone.contains(&e.path())
        })
    })
}

/// The run's prediction (`[prediction]`), written once before the first step, whose
/// SHA-256 each checkpoint records ([`Pointer::run_files`]).
pub const PREDICTION_FILES: [&str; 2] = ["predicted.csv", "predicted_spectrum.csv"];

/// The files of a checkpoint written by `engine`: the model, the optimizer state (Burn's
/// `optim.bpk`, or the host engine's `velocity.npy`), the metrics and NTK tables.
fn checkpoint_files(engine: StateForm) -> [&'static str; 4] {
    let optim = match engine {
        StateForm::Host => "velocity.npy",
        StateForm::Burn => "optim.bpk",
    };
    ["model.bpk", optim, "metrics.csv", "ntk.csv"]
}

/// The files a checkpoint's directory holds, and the names they are written under before
/// their rename (`model.partial`: [`save_via_rename`]): what a dead writer may leave in
/// `checkpoints/` that is the run's to remove (a user's file there is not, whatever it looks
/// like; twenty-eighth hostile round, D3).
pub fn writes_file(name: &str) -> bool {
    let files = [StateForm::Host, StateForm::Burn]
        .into_iter()
        .flat_map(checkpoint_files)
        .chain([REPRESENTATIONS]);
    files
        .into_iter()
        .any(|f| name == f || Path::new(f).file_stem().is_some_and(|stem| stem == name))
}

/// The error for a checkpoint that `path` (its pointer or one of its files) shows cannot be
/// trusted, and why.
fn untrusted(path: &Path, why: &str) -> crate::Error {
    crate::Error::Untrusted {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

/// A record (model, optimizer state, momentum buffers) at `path` that cannot be loaded.
fn record_error(path: &Path, e: impl std::fmt::Display) -> crate::Error {
    crate::Error::Record {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Loads a `model.bpk` (Burn's burnpack record, the bytes of the file `path`) into `model`
/// (built from the run's config) when every tensor it records has the dtype the network's
/// own record gives that name; otherwise an error naming the tensor and both dtypes. A run
/// writes its checkpoints in its network's dtype, so another one is a file this run did not
/// write: Burn 0.22's loader panics on a float parameter recorded as integers ("Expected
/// float dtype, got I32", found by fuzzing `model.bpk`), and a cast would train on whatever
/// the bytes hold (nineteenth hostile round, N1: a forged pointer's checksum let one through).
/// Names the network lacks or does not find are Burn's loader's errors.
pub fn load_model_bytes(model: Model, bytes: Vec<u8>, path: &Path) -> crate::Result<Model> {
    let recorded = tensor_dtypes(bytes.clone()).map_err(|e| record_error(path, e))?;
    let own = model
        .clone()
        .into_record()
        .into_bytes()
        .map_err(|e| record_error(path, e))
        .and_then(|b| tensor_dtypes(b.to_vec()).map_err(|e| record_error(path, e)))?;
    for (name, dtype) in &recorded {
        if let Some(want) = own.get(name)
            && want != dtype
        {
            return Err(record_error(
                path,
                format!(
                    "{name} is recorded as {dtype:?}, but this run's network holds {want:?}: \
                     the file is not a checkpoint this run wrote"
                ),
            ));
        }
    }
    let record = ModuleRecord::from_bytes(burn::tensor::Bytes::from_bytes_vec(bytes))
        .map_err(|e| record_error(path, e))?;
    model
        .try_load_record(record)
        .map_err(|e| record_error(path, e))
}

/// Each tensor's name and dtype in a burnpack record.
fn tensor_dtypes(
    bytes: Vec<u8>,
) -> Result<BTreeMap<String, burn::tensor::DType>, burn_pack::Error> {
    burn_pack::Reader::from_bytes(burn::tensor::Bytes::from_bytes_vec(bytes))?
        .into_tensors()?
        .into_iter()
        .map(|t| t.into_parts().map(|(name, dtype, ..)| (name, dtype)))
        .collect()
}

/// SHA-256 of a file, or an error naming it.
fn file_sha256(path: &Path) -> crate::Result<String> {
    ntk_files::io::read(path)
        .map(|b| provenance::sha256_hex(&b))
        .map_err(|source| {
            ntk_files::Error::Read {
                path: path.to_path_buf(),
                source,
            }
            .into()
        })
}

/// What a run directory and its checkpoints belong to: the run's config text and
/// provenance, made once when the run is set up ([`crate::run::Run`]).
#[derive(Clone, Debug)]
pub struct RunIdentity {
    pub config: String,
    pub provenance: Provenance,
    /// Whether the run has a prediction (`[prediction]`): only then do its checkpoints
    /// record the prediction's files ([`Pointer::run_files`]).
    pub predicts: bool,
}

/// What a run has recorded so far, kept with each checkpoint.
#[derive(Clone, Copy, Debug)]
pub struct History<'a> {
    /// The metrics rows of the finished epochs.
    pub rows: &'a [EpochMetrics],
    /// The probes' tables.
    pub tracked: &'a Tracked,
    /// The reference of [`crate::divergence`], once measured.
    pub initial_loss: Option<f64>,
}

/// Writes `state`, a stepper's [`Snapshot`], as the run's checkpoint after `position =
/// (epoch, iteration)`, with what the run has recorded so far ([`save`]).
pub fn save_snapshot(
    run: &Path,
    position: (usize, usize),
    identity: &RunIdentity,
    state: &Snapshot,
    history: &History<'_>,
) -> crate::Result<()> {
    let optim = match &state.optim {
        SavedOptim::Burn(o) => OptimState::Burn(o),
        SavedOptim::Host(v) => OptimState::Host(v),
    };
    save(run, position, identity, &state.model, optim, history)
}

/// Writes a checkpoint after `epoch` epochs (`iteration` steps) and makes it current.
pub fn save(
    run: &Path,
    (epoch, iteration): (usize, usize),
    identity: &RunIdentity,
    model: &Model,
    optim: OptimState<'_>,
    history: &History<'_>,
) -> crate::Result<()> {
    let (rows, tracked) = (history.rows, history.tracked);
    let name = format!("epoch-{epoch:05}");
    let checkpoints = run.join("checkpoints");
    if std::fs::symlink_metadata(&checkpoints).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ntk_files::Error::OutputPath {
            path: checkpoints,
            why: "a symbolic link: checkpoints stay inside the run directory".into(),
        }
        .into());
    }
    let dir = checkpoints.join(&name);
    std::fs::create_dir_all(&dir).map_err(|source| ntk_files::Error::Write {
        path: dir.clone(),
        source,
    })?;
    refuse_foreign_in(&dir)?;
    let engine = match optim {
        OptimState::Burn(_) => StateForm::Burn,
        OptimState::Host(_) => StateForm::Host,
    };
    let files = checkpoint_files(engine);
    let [model_file, optim_file, metrics_file, ntk_file] = files;
    save_via_rename(&dir.join(model_file), |p| {
        model.clone().into_record().save(p)
    })?;
    save_via_rename(&dir.join(optim_file), |p| match optim {
        OptimState::Burn(optim) => optim.save(p).map_err(|e| e.to_string()),
        OptimState::Host(velocity) => {
            ntk_files::npy::write_f64(p, velocity, &[velocity.len() as u64])
                .map_err(|e| e.to_string())
        }
    })?;
    write_csv(&dir.join(metrics_file), rows)?;
    write_csv(&dir.join(ntk_file), &tracked.ntk)?;
    // Only when tracked, so that checkpoints of runs without `[representations]` hold the
    // same files as before it existed.
    let mut files: Vec<&str> = files.to_vec();
    if !tracked.representations.is_empty() {
        write_csv(&dir.join(REPRESENTATIONS), &tracked.representations)?;
        files.push(REPRESENTATIONS);
    }
    let files = files
        .iter()
        .map(|f| Ok((f.to_string(), file_sha256(&dir.join(f))?)))
        .collect::<crate::Result<BTreeMap<_, _>>>()?;
    let run_files = PREDICTION_FILES
        .iter()
        .filter(|_| identity.predicts)
        .filter(|f| std::fs::symlink_metadata(run.join(f)).is_ok_and(|m| m.is_file()))
        .map(|f| Ok((f.to_string(), file_sha256(&run.join(f))?)))
        .collect::<crate::Result<BTreeMap<_, _>>>()
        .map(Some)?;
    let mut pointer = Pointer {
        epoch,
        iteration,
        dir: format!("checkpoints/{name}"),
        config: identity.config.to_string(),
        engine,
        provenance: Some(identity.provenance.clone()),
        files,
        run_files,
        initial_loss: history.initial_loss,
        checksum: None,
    };
    pointer.checksum = Some(pointer.own_checksum());
    let json = serde_json::to_string_pretty(&pointer).expect("serializes");
    ntk_files::io::atomic_write(&pointer_path(run), json.as_bytes()).map_err(|source| {
        ntk_files::Error::Write {
            path: run.to_path_buf(),
            source,
        }
    })?;
    // The pointer has moved: older checkpoints can go (ours only: `epoch-NNNNN`
    // directories, never a link or anything else found there).
    if let Ok(entries) = std::fs::read_dir(run.join("checkpoints")) {
        for entry in entries.flatten() {
            let other = entry.file_name().to_str().is_some_and(|n| {
                n != name && is_checkpoint_name(n) && entry.file_type().is_ok_and(|t| t.is_dir())
            });
            if other {
                remove_checkpoint(&entry.path());
            }
        }
    }
    Ok(())
}

/// Refuses, before any work, a run directory whose checkpoints cannot be written where the
/// run writes them: `checkpoints` a link or not a directory, or an `epoch-NNNNN` entry in it
/// that is not a directory (a FIFO or a file there failed the resumed run at that epoch,
/// after its work, where its dry run said `partial`: thirty-eighth hostile round, D2). A
/// directory at a later epoch's name is the run's own leftover (a kill while it saved) and is
/// written again.
pub fn check_places(run: &Path) -> crate::Result<()> {
    let checkpoints = run.join("checkpoints");
    let Ok(meta) = std::fs::symlink_metadata(&checkpoints) else {
        return Ok(());
    };
    let refuse = |path: PathBuf, what: &str| -> crate::Result<()> {
        Err(ntk_files::Error::OutputPath {
            path,
            why: format!("{what}, where the run writes its checkpoints; move it"),
        }
        .into())
    };
    if meta.file_type().is_symlink() {
        return refuse(
            checkpoints,
            "a symbolic link (checkpoints stay inside the run directory)",
        );
    }
    if !meta.is_dir() {
        return refuse(checkpoints, "not a directory");
    }
    let entries = std::fs::read_dir(&checkpoints).map_err(|source| ntk_files::Error::Read {
        path: checkpoints.clone(),
        source,
    })?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let ours = name.to_str().is_some_and(is_checkpoint_name);
        if ours && !entry.file_type().is_ok_and(|t| t.is_dir()) {
            return refuse(
                entry.path(),
                "not a directory (a FIFO, a file or a link) at a checkpoint's name",
            );
        }
        if ours {
            refuse_foreign_in(&entry.path())?;
        }
    }
    Ok(())
}

/// Refuses anything but a regular file at the name of a file a checkpoint holds in its
/// directory `dir` ([`is_checkpoint_file`], its temporaries too): the run writes those files
/// again there (`--recompute`, `--resume` past a kill while it saved), never through a
/// symbolic link, whose target is outside the run (fifty-second hostile round, D1:
/// `model.bpk`, `metrics.csv`, `ntk.csv` and `velocity.npy` linked to a user's file were
/// written into it), and never over a FIFO or a directory, which failed the run after its
/// training where the dry run passed (fifty-third, D1). Checked before any work
/// ([`check_places`]) and again as each checkpoint is saved ([`save`]).
fn refuse_foreign_in(dir: &Path) -> crate::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_file() || !entry.file_name().to_str().is_some_and(is_checkpoint_file) {
            continue;
        }
        let what = if kind.is_symlink() {
            let target = std::fs::read_link(entry.path()).unwrap_or_default();
            format!("a symbolic link to {}", target.display())
        } else {
            ntk_files::io::kind_of(kind).to_string()
        };
        return Err(ntk_files::Error::OutputPath {
            path: entry.path(),
            why: format!(
                "{what}, at a file the run writes in its checkpoint; the run writes only \
                 files of its own there, never through a link: remove it"
            ),
        }
        .into());
    }
    Ok(())
}

/// True for the name of a checkpoint directory (`epoch-NNNNN`, five or more digits).
fn is_checkpoint_name(name: &str) -> bool {
    name.strip_prefix("epoch-")
        .is_some_and(|d| d.len() >= 5 && d.bytes().all(|b| b.is_ascii_digit()))
}

/// Parses `checkpoint.json` (at `path`, for messages) and checks what it says of itself:
/// its checksum, and that `dir` is `checkpoints/epoch-NNNNN` of its own epoch (so never a
/// place outside the run directory).
pub fn parse_pointer(text: &str, path: &Path) -> crate::Result<Pointer> {
    let pointer: Pointer =
        serde_json::from_str(text).map_err(|source| crate::Error::NotPointer {
            path: path.to_path_buf(),
            source,
        })?;
    match &pointer.checksum {
        None => {
            return Err(untrusted(
                path,
                "records no checksums (written by an older version)",
            ));
        }
        Some(c) if *c != pointer.own_checksum() => {
            return Err(untrusted(
                path,
                "was modified after it was written (its checksum does not match)",
            ));
        }
        Some(_) => {}
    }
    let expected_dir = format!("checkpoints/epoch-{:05}", pointer.epoch);
    if pointer.dir != expected_dir {
        return Err(untrusted(
            path,
            &format!(
                "dir = {:?}: must be {expected_dir:?}, inside the run directory",
                pointer.dir
            ),
        ));
    }
    Ok(pointer)
}

/// Whether the table `name` in the run directory `run` is the run's by its checkpoint (an
/// interrupted run has no summary to record it): a prediction file as the pointer's
/// `run_files` records it, `ntk.csv` or `representations.csv` beginning with the
/// checkpoint's copy of it, which holds a row (a run that tracks neither checkpoints empty
/// or no copies). So a table of an interrupted run of a config with the table is the run's,
/// and the run another config's to `--recompute` (hundred-and-fifty-third hostile round, D1:
/// its own predicted.csv was refused as not the run's, `--recompute` included).
pub(crate) fn records_table(run: &Path, name: &str) -> bool {
    let path = pointer_path(run);
    let Some(pointer) = ntk_files::io::read_to_string(&path)
        .ok()
        .and_then(|text| parse_pointer(&text, &path).ok())
    else {
        return false;
    };
    let table = run.join(name);
    if PREDICTION_FILES.contains(&name) {
        return pointer
            .run_files
            .as_ref()
            .and_then(|f| f.get(name))
            .is_some_and(|sha| file_sha256(&table).is_ok_and(|s| s == *sha));
    }
    let Some(sha) = pointer.files.get(name) else {
        return false;
    };
    let copy = match ntk_files::io::read(run.join(&pointer.dir).join(name)) {
        Ok(bytes) if !bytes.is_empty() && provenance::sha256_hex(&bytes) == *sha => bytes,
        _ => return false,
    };
    ntk_files::io::read(&table).is_ok_and(|bytes| bytes.starts_with(&copy))
}

/// The current checkpoint of `run`, if any, verified: the pointer's own checksum, its
/// `dir`, every file's SHA-256, and the epoch and iteration against the metrics table.
pub fn find(run: &Path) -> crate::Result<Option<Loaded>> {
    let path = pointer_path(run);
    let text = match ntk_files::io::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ntk_files::Error::Read { path, source }.into()),
    };
    let pointer = parse_pointer(&text, &path)?;
    let dir = run.join(&pointer.dir);
    // Each file is read once: checked against its recorded SHA-256, then parsed from the
    // same bytes (the tables here; the model and optimizer state by `load_*`, after this).
    let mut verified = BTreeMap::new();
    let tracked = pointer
        .files
        .contains_key(REPRESENTATIONS)
        .then_some(REPRESENTATIONS);
    for f in checkpoint_files(pointer.engine).into_iter().chain(tracked) {
        let Some(recorded) = pointer.files.get(f) else {
            return Err(untrusted(&path, &format!("records no checksum of {f}")));
        };
        let file = dir.join(f);
        let bytes = ntk_files::io::read(&file).map_err(|source| ntk_files::Error::Read {
            path: file.clone(),
            source,
        })?;
        if provenance::sha256_hex(&bytes) != *recorded {
            return Err(untrusted(
                &file,
                &format!(
                    "its SHA-256 differs from the one {} recorded: the file was changed or \
                     damaged after the checkpoint was written",
                    path.display()
                ),
            ));
        }
        verified.insert(f, bytes);
    }
    // The run's prediction as the checkpoint found it, and none it did not find.
    let run_files = pointer.run_files.clone().unwrap_or_default();
    if pointer.run_files.is_some()
        && let Some(f) = PREDICTION_FILES.iter().find(|f| {
            !run_files.contains_key(**f) && std::fs::symlink_metadata(run.join(f)).is_ok()
        })
    {
        return Err(untrusted(
            &run.join(f),
            &format!(
                "a file of a prediction that {} does not record (the run made none): not the \
                 run's",
                path.display()
            ),
        ));
    }
    for (f, recorded) in &run_files {
        if !PREDICTION_FILES.contains(&f.as_str()) {
            return Err(untrusted(
                &path,
                &format!("records {f:?}, which is not a file of the run's prediction"),
            ));
        }
        let file = run.join(f);
        let (what, since) = match ntk_files::io::read(&file) {
            Ok(bytes) if provenance::sha256_hex(&bytes) == *recorded => continue,
            Ok(_) => ("its SHA-256 differs from the one", "changed"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ("missing; its SHA-256", "removed")
            }
            Err(source) => return Err(ntk_files::Error::Read { path: file, source }.into()),
        };
        return Err(untrusted(
            &file,
            &format!(
                "{what} {} recorded when the run was checkpointed: the prediction, written \
                 once before the first step, was {since} since",
                path.display()
            ),
        ));
    }
    let name = |f: &str| dir.join(f).display().to_string();
    let rows: Vec<EpochMetrics> = parse_csv(&verified["metrics.csv"], &name("metrics.csv"))?;
    let ntk_rows = parse_csv(&verified["ntk.csv"], &name("ntk.csv"))?;
    let representations = match verified.get(REPRESENTATIONS) {
        Some(bytes) => parse_csv(bytes, &name(REPRESENTATIONS))?,
        None => Vec::new(),
    };
    let epochs_in_order = rows.iter().enumerate().all(|(i, r)| r.epoch == i + 1);
    let last = rows.last().map_or((0, 0), |r| (r.epoch, r.iteration));
    if !epochs_in_order || last != (pointer.epoch, pointer.iteration) {
        return Err(untrusted(
            &path,
            &format!(
                "epoch {} iteration {} disagree with its metrics.csv ({} rows, last epoch {} \
                 iteration {})",
                pointer.epoch,
                pointer.iteration,
                rows.len(),
                last.0,
                last.1
            ),
        ));
    }
    Ok(Some(Loaded {
        pointer,
        dir,
        rows,
        tracked: Tracked {
            ntk: ntk_rows,
            representations,
        },
    }))
}

impl Loaded {
    /// Loads the checkpoint's parameters into `model` (built from the same config):
    /// [`load_model_bytes`] of its `model.bpk`.
    pub fn load_model(&self, model: Model) -> crate::Result<Model> {
        let path = self.dir.join("model.bpk");
        let bytes = ntk_files::io::read(&path).map_err(|source| {
            crate::Error::from(ntk_files::Error::Read {
                path: path.clone(),
                source,
            })
        })?;
        load_model_bytes(model, bytes, &path)
    }

    /// The host engine's momentum buffers (`ntk_engine::host`).
    pub fn load_velocity(&self) -> crate::Result<Vec<f64>> {
        let path = self.dir.join("velocity.npy");
        ntk_files::npy::read(&path)
            .map(|(v, _)| v)
            .map_err(|e| record_error(&path, e))
    }

    /// Loads the optimizer state into `optim`.
    pub fn load_optim(&self, optim: ModuleOptimizer) -> crate::Result<ModuleOptimizer> {
        let path = self.dir.join("optim.bpk");
        optim.load(&path).map_err(|e| record_error(&path, e))
    }

    /// The optimizer state it holds, read into `fresh` (a stepper's
    /// [`Stepper::fresh_state`](ntk_engine::Stepper::fresh_state), whose form the pointer's
    /// was checked against): Burn's optimizer record, or the momentum buffers.
    pub fn load_state(&self, fresh: SavedOptim) -> crate::Result<SavedOptim> {
        Ok(match fresh {
            SavedOptim::Burn(optim) => SavedOptim::Burn(self.load_optim(optim)?),
            SavedOptim::Host(_) => SavedOptim::Host(self.load_velocity()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use ntk_engine::{EngineChoice, Loss, Setup, Sgd, Stepper, fixtures};
    use ntk_model::{ActivationKind, NetSpec, Normalization};
    use ntk_numerics::backend::{self, Compute, Fp32Precision, Precision};
    use ntk_runs::provenance::Provenance;

    use super::*;

    fn stepper(choice: EngineChoice, model: Model, compute: &Compute) -> Box<dyn Stepper> {
        let sgd = Sgd::new(0.9, 1e-4);
        let setup = Setup {
            sgd: &sgd,
            loss: Loss::CrossEntropy,
            compute,
            batch: 5,
            fp32: Fp32Precision::Ieee,
        };
        ntk_engine::choose(choice, model, &setup).unwrap()
    }

    /// What a checkpoint directory's writer may leave is the run's to remove; a user's file
    /// there is not (twenty-eighth hostile round, D3).
    #[test]
    fn a_checkpoints_own_files_are_named_and_no_others() {
        for f in [
            "model.bpk",
            "model",
            "optim.bpk",
            "optim",
            "velocity.npy",
            "velocity",
            "metrics.csv",
            "ntk.csv",
            "representations.csv",
        ] {
            assert!(writes_file(f), "{f}");
        }
        for f in [
            "mine.npy",
            "mine",
            "notes.txt",
            "model.bpk.bak",
            "checkpoint.json",
        ] {
            assert!(!writes_file(f), "{f}");
        }
    }

    /// `model.bpk` is loaded only when every recorded dtype is the network's: the run's own
    /// record loads back exactly; a tensor's dtype changed to I32 in the bytes (Burn's loader
    /// panicked on it; a cast trained on its bytes) or the record of the same network in f64
    /// is refused, naming the tensor (nineteenth hostile round, N1).
    #[test]
    fn a_record_in_another_dtype_is_refused() {
        use burn::tensor::{DType, Device};
        let mut cfg = ntk_model::MlpConfig::new(6, 4, 1, ActivationKind::Relu);
        cfg.output_dim = 3;
        let build = |dtype| {
            NetSpec::Mlp(cfg.clone())
                .build(6, &Device::flex(), dtype)
                .unwrap()
        };
        let path = Path::new("model.bpk");
        let own = build(DType::F32)
            .into_record()
            .into_bytes()
            .unwrap()
            .to_vec();
        let loaded = load_model_bytes(build(DType::F32), own.clone(), path).unwrap();
        assert_eq!(
            loaded.into_record().into_bytes().unwrap().to_vec(),
            own,
            "the run's own record loads back exactly"
        );
        // CBOR's text "F32" (0x63 'F' '3' '2'): the dtype of the first tensor.
        let at = own
            .windows(4)
            .position(|w| w == b"cF32")
            .expect("a dtype in the record");
        let mut forged = own.clone();
        forged[at..at + 4].copy_from_slice(b"cI32");
        let e = load_model_bytes(build(DType::F32), forged, path)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("model.bpk") && e.contains("I32") && e.contains("F32"),
            "{e}"
        );
        let f64_record = build(DType::F64)
            .into_record()
            .into_bytes()
            .unwrap()
            .to_vec();
        let e = load_model_bytes(build(DType::F32), f64_record, path)
            .unwrap_err()
            .to_string();
        assert!(e.contains("recorded as F64"), "{e}");
    }

    /// A checkpoint's state, written from a stepper's snapshot and read back into a new
    /// stepper of the same engine, continues the steps bit for bit (the momentum buffers
    /// included), and its pointer records the engine's state form.
    #[test]
    fn the_checkpoint_state_resumes_the_steps_bit_for_bit() {
        let compute = backend::select(Some("flex"), Precision::F32).unwrap();
        let mlp = fixtures::mlp(ActivationKind::Relu, Normalization::None);
        let resnet = fixtures::resnet();
        let build = |spec: &NetSpec| {
            spec.build(fixtures::D, &compute.device, compute.dtype())
                .unwrap()
        };
        for choice in [EngineChoice::Burn, EngineChoice::Host] {
            for spec in [&mlp, &resnet] {
                let mut a = stepper(choice, build(spec), &compute);
                let iteration = (0..2)
                    .filter(|&i| a.step(fixtures::batch(i), 0.1).is_some())
                    .count();
                a.sync();
                let dir = tempfile::tempdir().unwrap();
                save_epoch_one(&a.snapshot(), dir.path(), iteration);
                let ck = find(dir.path()).unwrap().unwrap();
                assert_eq!(ck.pointer.engine, a.state_form());
                let model = ck.load_model(build(spec)).unwrap();
                let mut b = stepper(choice, model, &compute);
                b.load_state(ck.load_state(b.fresh_state()).unwrap())
                    .unwrap();
                let what = format!("{choice:?} {spec:?}");
                fixtures::assert_same_steps(a.as_mut(), b.as_mut(), &what);
            }
        }
    }

    /// Saves `state` as the checkpoint of epoch 1 (`iteration` steps) in `dir`.
    fn save_epoch_one(state: &Snapshot, dir: &Path, iteration: usize) {
        let provenance = Provenance::new("test", Default::default(), "faer");
        let identity = RunIdentity {
            config: String::new(),
            provenance: provenance.clone(),
            predicts: false,
        };
        let row = EpochMetrics {
            epoch: 1,
            iteration,
            train_loss: 1.0,
            train_accuracy: 0.5,
            test_loss: None,
            test_accuracy: None,
            lr: 0.1,
            seconds: 1.0,
            samples_per_second: 1.0,
        };
        let history = History {
            rows: &[row],
            tracked: &Default::default(),
            initial_loss: None,
        };
        save_snapshot(dir, (1, iteration), &identity, state, &history).unwrap();
    }
}
