//! The data sets by name, with their default directories and the official code's scaling.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::cifar::load_cifar10;
use crate::digits::{DIGITS_N, load_builtin_digits};
use crate::error::{DataError, Result};
use crate::idx::{load_fashion_mnist, load_mnist};
use crate::paths::default_dir;
use crate::set::{ImageSet, Split};
use crate::transform::Scaling;

/// An image data set stored on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// MNIST, `mnist/`.
    Mnist,
    /// Fashion-MNIST, `fashion-mnist/`.
    FashionMnist,
    /// CIFAR-10 binary version, `cifar-10/`.
    #[serde(rename = "cifar-10", alias = "cifar10")]
    Cifar10,
    /// 8x8 digits, `digits/` (no test split).
    Digits,
}

impl Source {
    /// The classes of every built-in set (ten digits, ten garments, ten CIFAR-10 classes).
    pub const CLASSES: usize = 10;

    /// All sources.
    pub fn all() -> Vec<Self> {
        ntk_names::all()
    }

    /// The name used in configs (the serde name), and the subdirectory of the data root.
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }

    /// `default_data_root()/<name>` (see [`crate::paths`]).
    pub fn default_dir(self) -> PathBuf {
        default_dir(self.name())
    }

    /// The input scaling of the official Liu & Hui code: per-channel for CIFAR-10, `[-1, 1]`
    /// otherwise (`conventions.md`).
    pub fn paper_scaling(self) -> Scaling {
        match self {
            Self::Cifar10 => Scaling::CifarPerChannel,
            _ => Scaling::MinusOneOne,
        }
    }

    /// The number of samples of a split from the files' headers and sizes, without reading
    /// them: an IDX label file's count, CIFAR-10's records (3073 bytes each), the digits'
    /// 1797. `None` when the files cannot tell (missing: loading says why).
    pub fn split_len(self, dir: Option<&Path>, split: Split) -> Option<usize> {
        let dir = dir.map_or_else(|| self.default_dir(), Path::to_path_buf);
        match self {
            Self::Mnist | Self::FashionMnist => {
                let (_, labels) = crate::idx::idx_file_names(split);
                let path = crate::idx::find_file(&dir, labels).ok()?;
                let head = crate::file::Content::open(&path, true)
                    .ok()?
                    .read_up_to(8)
                    .ok()?;
                // Magic 0x00000801 (unsigned bytes, one dimension), then the count.
                (head.len() == 8 && head[..4] == [0, 0, 8, 1])
                    .then(|| u32::from_be_bytes([head[4], head[5], head[6], head[7]]) as usize)
            }
            Self::Cifar10 => crate::cifar::cifar10_files(split)
                .iter()
                .map(|f| {
                    std::fs::metadata(dir.join(f))
                        .ok()
                        .map(|m| (m.len() / 3073) as usize)
                })
                .sum(),
            Self::Digits => (split == Split::Train).then_some(DIGITS_N),
        }
    }

    /// Loads a split from `dir`, or from [`Source::default_dir`] when `None`.
    ///
    /// The digits have no test split: `Split::Train` gives all 1797 samples and `Split::Test`
    /// is an error.
    pub fn load(self, dir: Option<&Path>, split: Split) -> Result<ImageSet> {
        let dir = dir.map_or_else(|| self.default_dir(), Path::to_path_buf);
        match self {
            Self::Mnist => load_mnist(&dir, split),
            Self::FashionMnist => load_fashion_mnist(&dir, split),
            Self::Cifar10 => load_cifar10(&dir, split),
            Self::Digits => match split {
                Split::Train => load_builtin_digits(&dir),
                Split::Test => Err(DataError::NoSplit {
                    data_set: self.name(),
                    split: "test",
                }),
            },
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Source {
    type Err = DataError;

    /// Accepts the names of [`Source::name`], plus `fashion_mnist`, `fmnist` and `cifar10`.
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "mnist" => Ok(Self::Mnist),
            "fashion-mnist" | "fashion_mnist" | "fmnist" => Ok(Self::FashionMnist),
            "cifar-10" | "cifar10" => Ok(Self::Cifar10),
            "digits" => Ok(Self::Digits),
            _ => Err(DataError::UnknownName {
                what: "data set",
                given: s.to_string(),
                expected: format!("one of {}", ntk_names::list::<Self>()),
            }),
        }
    }
}

#[cfg(test)]
mod names {
    use super::Source;

    /// A source's config name is its subdirectory of the data root.
    #[test]
    fn names_are_the_data_subdirectories() {
        let dirs = [
            crate::idx::MNIST_SUBDIR,
            crate::idx::FASHION_MNIST_SUBDIR,
            crate::cifar::CIFAR10_SUBDIR,
            crate::digits::DIGITS_SUBDIR,
        ];
        let names: Vec<&str> = Source::all().into_iter().map(Source::name).collect();
        assert_eq!(names, dirs);
    }
}
