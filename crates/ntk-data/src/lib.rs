//! Data sets for NTK studies: MNIST, Fashion-MNIST, CIFAR-10, the 8x8 digits and synthetic
//! Gaussian inputs, loaded into memory with checked parsers, plus the transforms of the
//! published experiments.
//!
//! - [`ImageSet`]: 8-bit images as stored (CHW), [`Samples`]: the float `n x dim` view.
//! - Loaders: [`load_mnist`], [`load_fashion_mnist`] (IDX, raw or gzipped), [`load_cifar10`]
//!   (binary batches), [`load_digits`] (scikit-learn CSV), [`gaussian`]; or by name with
//!   [`Source`]. Default directories: [`paths`].
//! - [`Scaling`] (pixel maps of the official code), [`Subset`] (first / class-balanced /
//!   random n), [`CifarAugment`] (pad-crop-flip).
//! - The user's own arrays ([`arrays`]): `.npy`, `.npz` or CSV inputs and labels, read with
//!   the same checks (`data.dataset = "file"`).
//! - What the tools read: [`config::DataConfig`] (the `[data]` table) and [`inputs`] (the
//!   `n x d` matrix it selects, fed to the networks).
//!
//! Real files come from `bash datasets/fetch.sh` (MNIST, Fashion-MNIST, digits); CIFAR-10 is
//! downloaded by hand (see `datasets/README.md`). Every malformed input is a [`DataError`].

pub mod arrays;
pub mod augment;
pub mod cifar;
pub mod config;
pub mod digits;
pub mod error;
mod file;
pub mod idx;
pub mod inputs;
pub mod paths;
pub mod set;
pub mod source;
pub mod subset;
pub mod synthetic;
pub mod transform;

pub use augment::{CifarAugment, CropFlip, ImageAugment, crop_flip, crop_flip_fill};
pub use cifar::{load_cifar10, write_cifar_like};
pub use config::{DataConfig, Dataset, SubsetRule};
pub use digits::load_digits;
pub use error::{DataError, MissingDefault, Result};
pub use idx::{load_fashion_mnist, load_mnist};
pub use inputs::Inputs;
pub use paths::default_data_root;
pub use set::{ImageSet, Samples, Split};
pub use source::Source;
pub use subset::Subset;
pub use synthetic::gaussian;
pub use transform::Scaling;
