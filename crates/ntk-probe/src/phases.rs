//! A tiled run's finished phases on disk, so that a run killed mid-way restarts from the last
//! one instead of from nothing: all 60,000 MNIST images at depth 10 take about 15 minutes to
//! form and 20 to factor on the 2-core machine.
//!
//! **What is kept**, in a directory beside the run's output directory (`.<name>.phases`):
//! - `phases.json`: the run's config fingerprint, `n` and the tile width, and what each
//!   finished phase found: the minimum gradient angle and the formation's seconds (the
//!   kernel formed), `max |K|` and the Lanczos run on `K` (`lambda_max`), the shifts whose
//!   factorization broke down and the one that held (the factorization);
//! - `tiles.f64`: the tiles as the last phase left them ([`Tiled::write_tiles`]): the kernel
//!   after its formation, its Cholesky factor after the factorization. [`Tiled::bytes`]
//!   bytes: 14.7 GB at `n = 60,000`. The kernel's file is removed before the factor's is
//!   written, so the disk never holds two; a run killed while the factor is being written
//!   restarts after `lambda_max` and forms the kernel again.
//!
//! **When they are used**: by `ntk --resume` (without `--resume` a run starts afresh and
//! removes them) and by every sweep point (a sweep continues what was interrupted), and only
//! when their fingerprint, `n` and tile width are the run's. They are removed once the
//! run's results are written. Removing them removes only the files named here (and their
//! partial copies), then the directory if that leaves it empty.
//!
//! **Disk**: before the kernel is formed, the directory's file system must have room for the
//! tiles. `NTK_PHASE_FILES` decides what happens when it has not: unset, the run goes on
//! without phase files and says so; `1` refuses the run before any work; `0` never keeps
//! phase files. A write that fails later (the disk filled since) is said on stderr and the
//! run goes on without them: they never make a run fail.

use std::fs;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use ntk_kernel::angles::MinAngle;
use ntk_kernel::extreme::tiled::Tiled;
use ntk_kernel::extreme::{Operand, cholesky, lanczos};

use crate::error::Error;

/// The environment variable that decides whether phase files are kept (see the module doc).
pub const PHASE_FILES: &str = "NTK_PHASE_FILES";

const STATE: &str = "phases.json";
const TILES: &str = "tiles.f64";

/// Where a run keeps its phase files, whether it may resume from them, and the run's config
/// fingerprint (its provenance's, which the caller has computed already), which earlier
/// files must record to be used.
#[derive(Clone, Debug)]
pub struct Place {
    pub dir: PathBuf,
    pub resume: bool,
    pub fingerprint: String,
}

impl Place {
    /// `.<name>.phases` beside the output directory `out`.
    pub fn beside(out: &Path, resume: bool, fingerprint: &str) -> Self {
        let name = out
            .file_name()
            .map_or_else(|| "run".into(), |n| n.to_string_lossy().into_owned());
        let parent = out.parent().unwrap_or(Path::new("."));
        Self {
            dir: parent.join(format!(".{name}.phases")),
            resume,
            fingerprint: fingerprint.into(),
        }
    }
}

/// `NTK_PHASE_FILES`: what to do about phase files.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// Kept when the disk holds them, else said and not kept (unset).
    WhenTheyFit,
    /// Kept, or the run is refused before any work (`1`).
    Required,
    /// Never kept (`0`).
    Off,
}

impl Mode {
    fn from_env() -> crate::Result<Self> {
        match std::env::var(PHASE_FILES) {
            Err(_) => Ok(Self::WhenTheyFit),
            Ok(v) if v == "1" => Ok(Self::Required),
            Ok(v) if v == "0" => Ok(Self::Off),
            Ok(v) => Err(Error::Config {
                key: PHASE_FILES,
                value: v,
                reason: "must be 1 (phase files required) or 0 (none); unset keeps them when \
                         they fit on the disk"
                    .into(),
            }),
        }
    }
}

/// What the tiles file holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Held {
    Kernel,
    /// The factor of `K + shift I`.
    Factor {
        shift: f64,
    },
}

/// `phases.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct State {
    fingerprint: String,
    n: usize,
    block: usize,
    /// What `tiles.f64` holds (`None`: no tiles file, or one being written).
    tiles: Option<Held>,
    /// The formation's results, once the kernel was formed.
    formed: Option<Formed>,
    /// `max |K|`, once read.
    max_abs: Option<f64>,
    /// The Lanczos run on `K`, once done.
    top: Option<lanczos::Ritz>,
    /// Shifts whose factorization broke down, and at which row.
    broke_down: Vec<(f64, usize)>,
}

/// What the kernel's formation found.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Formed {
    pub min_angle: Option<MinAngle>,
    pub seconds: f64,
}

/// A run's phase files (see the module doc).
pub struct PhaseFiles {
    dir: PathBuf,
    state: State,
}

impl PhaseFiles {
    /// The phase files of the run `place` names over `n` inputs in tiles of `block`, whose
    /// tiles take `bytes`; `None` when none are kept (`NTK_PHASE_FILES=0`, or the disk cannot
    /// hold them: said on stderr). Earlier files are used only when `place` resumes and they
    /// are this run's (its fingerprint, `n` and `block`); otherwise they are removed.
    pub fn open(
        place: &Place,
        (n, block): (usize, usize),
        bytes: u64,
    ) -> crate::Result<Option<Self>> {
        let mode = Mode::from_env()?;
        let dir = place.dir.clone();
        let fresh = State {
            fingerprint: place.fingerprint.clone(),
            n,
            block,
            ..State::default()
        };
        let earlier = read_state(&dir);
        let state = match earlier {
            Some(s) if place.resume && mode != Mode::Off && same_run(&s, &fresh) => s,
            _ => {
                remove(&dir);
                fresh
            }
        };
        if mode == Mode::Off {
            return Ok(None);
        }
        if state.tiles.is_none() {
            let free = free_bytes(dir.parent().unwrap_or(Path::new(".")));
            if let Some(free) = free.filter(|&f| f < bytes) {
                let why = format!(
                    "{}: the disk has {} free, the tiles need {}",
                    dir.display(),
                    ntk_runs::budget::human(free as f64),
                    ntk_runs::budget::human(bytes as f64)
                );
                if mode == Mode::Required {
                    return Err(Error::Config {
                        key: PHASE_FILES,
                        value: "1".into(),
                        reason: format!("no room for the phase files: {why}"),
                    });
                }
                eprintln!(
                    "note: no phase files ({why}): a run killed now starts again from \
                     nothing; {PHASE_FILES}=0 says so silently"
                );
                return Ok(None);
            }
        }
        let files = Self { dir, state };
        files.save_state()?;
        Ok(Some(files))
    }

    /// What the tiles file holds, when there is one.
    pub fn held(&self) -> Option<Held> {
        self.state.tiles
    }

    /// The formation's results, once the kernel was formed.
    pub fn formed(&self) -> Option<Formed> {
        self.state.formed
    }

    /// What is kept, in words, for the run's log.
    pub fn describe(&self) -> String {
        let what = match (self.state.tiles, self.state.top.is_some()) {
            (Some(Held::Factor { shift }), _) => {
                format!("the kernel's Cholesky factor (shift {shift:e}) and lambda_max")
            }
            (Some(Held::Kernel), true) => "the kernel's tiles and lambda_max".into(),
            (Some(Held::Kernel), false) => "the kernel's tiles".into(),
            (None, true) => "lambda_max (the kernel is formed again)".into(),
            (None, false) => "nothing yet".into(),
        };
        format!("phase files in {}: {what}", self.dir.display())
    }

    /// Reads the tiles file into `tiles` (allocated for the same `n` and tile width).
    pub fn load(&self, tiles: &mut Tiled) -> crate::Result<()> {
        let held = self
            .state
            .tiles
            .expect("load is called when tiles are held");
        let path = self.dir.join(TILES);
        let file = fs::File::open(&path).map_err(|e| self.error("read the tiles", e))?;
        tiles
            .read_tiles(
                &mut BufReader::with_capacity(1 << 22, file),
                matches!(held, Held::Factor { .. }),
            )
            .map_err(|e| self.error("read the tiles", e))
    }

    /// Records the kernel's formation and keeps its tiles.
    pub fn save_kernel(&mut self, tiles: &Tiled, formed: Formed) {
        self.state.formed = Some(formed);
        self.keep_tiles(tiles, Held::Kernel);
    }

    /// Removes the phase files: the run's results are written.
    pub fn finish(self) {
        remove(&self.dir);
    }

    /// Writes `tiles` as `held` (the previous tiles file removed first), then the state that
    /// says so; a failure is said and the phase files dropped.
    fn keep_tiles(&mut self, tiles: &Tiled, held: Held) {
        self.state.tiles = None;
        let path = self.dir.join(TILES);
        let written = self.save_state().map_err(|e| e.to_string()).and_then(|()| {
            let _ = fs::remove_file(&path);
            write_tiles(&path, tiles).map_err(|e| format!("{}: {e}", path.display()))
        });
        match written {
            Ok(()) => {
                self.state.tiles = Some(held);
                self.save_or_drop();
            }
            Err(e) => self.drop_files(&e),
        }
    }

    fn save_state(&self) -> crate::Result<()> {
        fs::create_dir_all(&self.dir).map_err(|e| self.error("create the directory", e))?;
        let json = serde_json::to_vec_pretty(&self.state).expect("the state serializes");
        ntk_files::io::atomic_write(&self.dir.join(STATE), &json)
            .map_err(|e| self.error("write phases.json", e))
    }

    /// [`Self::save_state`], or the phase files dropped when it fails.
    fn save_or_drop(&mut self) {
        if let Err(e) = self.save_state() {
            self.drop_files(&e.to_string());
        }
    }

    fn drop_files(&mut self, why: &str) {
        eprintln!("warning: phase files dropped ({why}); the run goes on without them");
        remove(&self.dir);
        self.state.tiles = None;
        self.state.formed = None;
        self.state.top = None;
    }

    fn error(&self, action: &'static str, source: std::io::Error) -> Error {
        Error::CannotWrite {
            dir: self.dir.clone(),
            action,
            source,
        }
    }
}

/// [`super::extreme::solve`]'s operand on the tiles, keeping each phase's result in the phase
/// files and answering from them what an earlier run finished: `max |K|` and the Lanczos run
/// on `K` from the state, a factorization that broke down from its record, and the factor
/// from the tiles file when it held.
pub struct Resumable<'t, 'a> {
    pub tiles: &'t mut Tiled<'a>,
    pub files: Option<&'t mut PhaseFiles>,
}

impl Operand for Resumable<'_, '_> {
    fn size(&self) -> usize {
        self.tiles.size()
    }

    fn epsilon(&self) -> f64 {
        self.tiles.epsilon()
    }

    fn max_abs(&mut self) -> ntk_kernel::Result<f64> {
        if let Some(m) = self.files.as_ref().and_then(|f| f.state.max_abs) {
            return Ok(m);
        }
        let m = self.tiles.max_abs()?;
        if let Some(f) = self.files.as_deref_mut() {
            f.state.max_abs = Some(m);
            f.save_or_drop();
        }
        Ok(m)
    }

    fn largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> ntk_kernel::Result<lanczos::Ritz> {
        if let Some(top) = self.files.as_ref().and_then(|f| f.state.top.clone()) {
            return Ok(top);
        }
        let top = self.tiles.largest(max_steps, seed, tolerance)?;
        if let Some(f) = self.files.as_deref_mut() {
            f.state.top = Some(top.clone());
            f.save_or_drop();
        }
        Ok(top)
    }

    fn factor(&mut self, shift: f64) -> ntk_kernel::Result<Result<(), cholesky::Breakdown>> {
        if let Some(f) = self.files.as_deref() {
            if let Some(&(_, row)) = f.state.broke_down.iter().find(|(s, _)| *s == shift) {
                return Ok(Err(cholesky::Breakdown { row }));
            }
            if f.state.tiles == Some(Held::Factor { shift }) && self.tiles.holds_factor() {
                return Ok(Ok(()));
            }
        }
        let r = self.tiles.factor(shift)?;
        if let Some(f) = self.files.as_deref_mut() {
            match &r {
                Ok(()) => f.keep_tiles(self.tiles, Held::Factor { shift }),
                Err(b) => {
                    f.state.broke_down.push((shift, b.row));
                    f.save_or_drop();
                }
            }
        }
        Ok(r)
    }

    fn inverse_largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> ntk_kernel::Result<lanczos::Ritz> {
        self.tiles.inverse_largest(max_steps, seed, tolerance)
    }
}

fn same_run(a: &State, b: &State) -> bool {
    (a.fingerprint.as_str(), a.n, a.block) == (b.fingerprint.as_str(), b.n, b.block)
}

fn read_state(dir: &Path) -> Option<State> {
    let bytes = fs::read(dir.join(STATE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Removes the phase files this module writes (`phases.json`, `tiles.f64`, their partial and
/// temporary copies), then the directory when that leaves it empty: anything else a user
/// keeps there, under the same hidden name, stays.
fn remove(dir: &Path) {
    let ours = |name: &str| {
        name == STATE
            || name == TILES
            || name == format!("{TILES}.partial")
            || name
                .strip_prefix(STATE)
                .is_some_and(|rest| rest.starts_with(ntk_files::outset::TMP_TAG))
    };
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_name().to_str().is_some_and(ours) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
    let _ = fs::remove_dir(dir);
}

/// The tiles into `path` through a temporary file, synced, renamed over it.
fn write_tiles(path: &Path, tiles: &Tiled) -> std::io::Result<()> {
    let tmp = path.with_extension("f64.partial");
    let file = fs::File::create(&tmp)?;
    let mut w = BufWriter::with_capacity(1 << 22, file);
    tiles.write_tiles(&mut w)?;
    let file = w.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    fs::rename(&tmp, path)
}

/// Bytes free to this user on the file system holding `dir` (`None` when it cannot be told).
fn free_bytes(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let existing = dir.ancestors().find(|d| d.exists())?;
        let c = std::ffi::CString::new(existing.as_os_str().as_bytes()).ok()?;
        // SAFETY: `libc::statvfs` is a plain C struct of integer fields (and an integer
        // spare array): all-zero bytes are a valid value.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: a NUL-terminated path and a statvfs buffer to fill.
        if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
            return None;
        }
        Some(s.f_bavail as u64 * s.f_frsize as u64)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}
