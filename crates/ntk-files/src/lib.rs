//! A run's files, written so that nothing is lost: [`io`] (atomic writes), [`outset`]
//! (output sets committed whole, `--out` checks), [`lock`] (one writer per run or sweep
//! directory), [`npy`] (arrays numpy loads), [`table`] (CSV rows pandas loads), [`bounded`]
//! (a file a run is given, read once within a limit), [`apart`] (a run's inputs outside
//! what it writes), [`places`] (every place a command writes, checked before any work),
//! and the [`Error`] that names the path. No configs, numerics, networks or data.

pub mod apart;
pub mod bounded;
pub mod error;
pub mod format;
pub mod io;
pub mod lock;
pub mod npy;
pub mod outset;
pub mod owner;
pub mod places;
pub mod shown;
pub mod table;

pub use error::{Error, Result};
