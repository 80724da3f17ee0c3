//! Checkpoints: the model's parameters and buffers (Burn's burnpack record, which keeps
//! each parameter's id), the optimizer's state (momentum buffers, keyed by those ids) and
//! the tables so far, under `RUN/checkpoints/epoch-NNNNN/`, made current by atomically
//! rewriting `RUN/checkpoint.json`. A crash at any moment leaves the previous checkpoint
//! intact and current; older checkpoint directories are removed only after the pointer
//! moves on.

use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::ModuleOptimizer;
use burn::store::ModuleRecord;
use serde::{Deserialize, Serialize};

use crate::metrics::{EpochMetrics, NtkRow, read_csv, write_csv};
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
    /// The engine that computed the steps: `burn` (optimizer state in `optim.bpk`) or
    /// `host` (momentum buffers in `velocity.npy`, see `crate::host`).
    #[serde(default = "burn_engine")]
    pub engine: String,
}

fn burn_engine() -> String {
    "burn".into()
}

/// The optimizer state a checkpoint holds.
pub enum OptimState<'a> {
    Burn(&'a ModuleOptimizer),
    /// The host engine's momentum buffers, flattened (see `crate::host::HostMlp::velocity`).
    Host(&'a [f64]),
}

/// A checkpoint found on disk.
pub struct Loaded {
    pub pointer: Pointer,
    pub dir: PathBuf,
    pub rows: Vec<EpochMetrics>,
    pub ntk_rows: Vec<NtkRow>,
}

fn pointer_path(run: &Path) -> PathBuf {
    run.join("checkpoint.json")
}

/// Saves `write(tmp)` under `path` by writing a sibling temporary file and renaming it.
fn save_via_rename(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), String> {
    let tmp = path.with_extension("partial");
    write(&tmp).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes a checkpoint after `epoch` epochs (`iteration` steps) and makes it current.
#[allow(clippy::too_many_arguments)]
pub fn save(
    run: &Path,
    epoch: usize,
    iteration: usize,
    config: &str,
    model: &Model,
    optim: OptimState<'_>,
    rows: &[EpochMetrics],
    ntk_rows: &[NtkRow],
) -> Result<(), String> {
    let name = format!("epoch-{epoch:05}");
    let dir = run.join("checkpoints").join(&name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    save_via_rename(&dir.join("model.bpk"), |p| {
        model
            .clone()
            .into_record()
            .save(p)
            .map_err(|e| e.to_string())
    })?;
    let engine = match optim {
        OptimState::Burn(optim) => {
            save_via_rename(&dir.join("optim.bpk"), |p| {
                optim.save(p).map_err(|e| e.to_string())
            })?;
            "burn"
        }
        OptimState::Host(velocity) => {
            save_via_rename(&dir.join("velocity.npy"), |p| {
                ntk_probe::npy::write_f64(p, velocity, &[velocity.len() as u64])
                    .map_err(|e| e.to_string())
            })?;
            "host"
        }
    };
    write_csv(&dir.join("metrics.csv"), rows)?;
    write_csv(&dir.join("ntk.csv"), ntk_rows)?;
    let pointer = Pointer {
        epoch,
        iteration,
        dir: format!("checkpoints/{name}"),
        config: config.to_string(),
        engine: engine.into(),
    };
    let json = serde_json::to_string_pretty(&pointer).expect("serializes");
    ntk_model::io::atomic_write(&pointer_path(run), json.as_bytes())
        .map_err(|e| format!("{}: {e}", run.display()))?;
    // The pointer has moved: older checkpoints can go.
    if let Ok(entries) = std::fs::read_dir(run.join("checkpoints")) {
        for entry in entries.flatten() {
            if entry.file_name() != name.as_str() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    Ok(())
}

/// The current checkpoint of `run`, if any.
pub fn find(run: &Path) -> Result<Option<Loaded>, String> {
    let path = pointer_path(run);
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let pointer: Pointer =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = run.join(&pointer.dir);
    let rows = read_csv(&dir.join("metrics.csv"))?;
    let ntk_rows = read_csv(&dir.join("ntk.csv"))?;
    Ok(Some(Loaded {
        pointer,
        dir,
        rows,
        ntk_rows,
    }))
}

impl Loaded {
    /// Loads the checkpoint's parameters into `model` (built from the same config).
    pub fn load_model(&self, model: Model) -> Result<Model, String> {
        let path = self.dir.join("model.bpk");
        let record = ModuleRecord::load(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        model
            .try_load_record(record)
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The host engine's momentum buffers (see `crate::host`).
    pub fn load_velocity(&self) -> Result<Vec<f64>, String> {
        let path = self.dir.join("velocity.npy");
        ntk_probe::npy::read(&path)
            .map(|(v, _)| v)
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Loads the optimizer state into `optim`.
    pub fn load_optim(&self, optim: ModuleOptimizer) -> Result<ModuleOptimizer, String> {
        let path = self.dir.join("optim.bpk");
        optim
            .load(&path)
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}
