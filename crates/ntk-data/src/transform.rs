//! Pixel scaling and flattening, following the official Liu & Hui code (see
//! `conventions.md`): MNIST, Fashion-MNIST: `ToTensor` then `Normalize(0.5, 0.5)`, i.e.
//! `[-1, 1]`; CIFAR-10: per-channel mean/std; `min_angle.py`: raw `0..255` pixels.
//!
//! The arithmetic mirrors torchvision in f32: `x = p / max` (`ToTensor` with `max` = 255), then
//! `(x - mean) / std`, so values match PyTorch's bit for bit on 8-bit images.

use std::fmt;
use std::str::FromStr;

use crate::error::{DataError, Result};
use crate::set::{ImageSet, Samples};

/// Per-channel mean of CIFAR-10 training pixels on the `[0, 1]` scale (RGB).
pub const CIFAR10_MEAN: [f64; 3] = [125.3 / 255.0, 123.0 / 255.0, 113.9 / 255.0];
/// Per-channel standard deviation of CIFAR-10 training pixels on the `[0, 1]` scale (RGB).
pub const CIFAR10_STD: [f64; 3] = [63.0 / 255.0, 62.1 / 255.0, 66.7 / 255.0];

/// How integer pixels `0..=max_value` become floats.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Scaling {
    /// `(p / max - 0.5) / 0.5`, in `[-1, 1]`: torchvision's `Normalize(0.5, 0.5)` after
    /// `ToTensor`. The official code's choice for MNIST, Fashion-MNIST and SVHN.
    #[default]
    MinusOneOne,
    /// `p / max`, in `[0, 1]`: `ToTensor` alone.
    UnitInterval,
    /// `p` unchanged (`0..=255` for 8-bit images), as in the official `min_angle.py`.
    Raw,
    /// `(p / max - mean_c) / std_c` with [`CIFAR10_MEAN`] and [`CIFAR10_STD`]; 3 channels only.
    CifarPerChannel,
}

impl Scaling {
    /// All variants, for listings and tests.
    pub fn all() -> Vec<Self> {
        ntk_names::all()
    }

    /// The name used in configs and on the command line (the serde name).
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }

    /// Errors when the scaling does not apply to images with `channels` channels.
    pub fn check_channels(self, channels: usize) -> Result<()> {
        if self == Self::CifarPerChannel && channels != 3 {
            return Err(DataError::ScalingChannels {
                scaling: self.name(),
                channels,
            });
        }
        Ok(())
    }

    /// The float value of every possible pixel `0..=255` in `channel`, for images whose
    /// pixels range over `0..=max_value`.
    pub fn table(self, channel: usize, max_value: u8) -> [f32; 256] {
        let max = f32::from(max_value.max(1));
        let (mean, std) = match self {
            Self::MinusOneOne => (0.5f32, 0.5f32),
            Self::UnitInterval => (0.0, 1.0),
            Self::Raw => return std::array::from_fn(|p| p as f32),
            Self::CifarPerChannel => (
                CIFAR10_MEAN[channel % 3] as f32,
                CIFAR10_STD[channel % 3] as f32,
            ),
        };
        std::array::from_fn(|p| (p as f32 / max - mean) / std)
    }

    /// One pixel's float value.
    pub fn scale_pixel(self, p: u8, channel: usize, max_value: u8) -> f32 {
        self.table(channel, max_value)[usize::from(p)]
    }

    /// Scales one CHW image of `channels` planes, appending to `out`.
    pub fn scale_image_into(
        self,
        image: &[u8],
        channels: usize,
        max_value: u8,
        out: &mut Vec<f32>,
    ) {
        let plane = image.len() / channels.max(1);
        for (c, pixels) in image.chunks(plane.max(1)).enumerate() {
            let table = self.table(c, max_value);
            out.extend(pixels.iter().map(|&p| table[usize::from(p)]));
        }
    }

    /// Scales and flattens a whole set (CHW order per row, as PyTorch's `flatten`).
    pub fn apply(self, set: &ImageSet) -> Result<Samples> {
        self.check_channels(set.channels)?;
        let mut x = Vec::with_capacity(set.images.len());
        let tables: Vec<[f32; 256]> = (0..set.channels)
            .map(|c| self.table(c, set.max_value))
            .collect();
        let plane = set.height * set.width;
        if plane > 0 {
            for (k, pixels) in set.images.chunks(plane).enumerate() {
                let table = &tables[k % set.channels];
                x.extend(pixels.iter().map(|&p| table[usize::from(p)]));
            }
        }
        Samples::new(x, set.labels.clone(), set.dim(), set.num_classes)
    }
}

impl fmt::Display for Scaling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Scaling {
    type Err = DataError;

    fn from_str(s: &str) -> Result<Self> {
        ntk_names::parse(s).ok_or_else(|| DataError::UnknownName {
            what: "scaling",
            given: s.to_string(),
            expected: format!("one of {}", ntk_names::list::<Self>()),
        })
    }
}

/// Flattens a set into float rows with the given scaling (same as [`Scaling::apply`]).
pub fn flatten(set: &ImageSet, scaling: Scaling) -> Result<Samples> {
    scaling.apply(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grey(pixels: Vec<u8>) -> ImageSet {
        let n = pixels.len();
        ImageSet::new("t", pixels, vec![0; n], [1, 1, 1], 1, 255).unwrap()
    }

    #[test]
    fn pixel_values() {
        let set = grey(vec![0, 51, 255]);
        let at = |s: Scaling| s.apply(&set).unwrap().x;
        assert_eq!(at(Scaling::MinusOneOne), [-1.0, -0.6, 1.0]);
        assert_eq!(at(Scaling::UnitInterval), [0.0, 0.2, 1.0]);
        assert_eq!(at(Scaling::Raw), [0.0, 51.0, 255.0]);
        assert!(Scaling::CifarPerChannel.apply(&set).is_err());
    }

    #[test]
    fn flattening_keeps_chw_order() {
        // One 2-channel 1x2 image: planes [1, 2] and [3, 4].
        let set = ImageSet::new("t", vec![1, 2, 3, 4], vec![0], [2, 1, 2], 1, 255).unwrap();
        assert_eq!(Scaling::Raw.apply(&set).unwrap().x, [1.0, 2.0, 3.0, 4.0]);
        let mut out = Vec::new();
        Scaling::Raw.scale_image_into(&set.images, 2, 255, &mut out);
        assert_eq!(out, [1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn cifar_channels() {
        let set = ImageSet::new("t", vec![0, 255, 128], vec![0], [3, 1, 1], 1, 255).unwrap();
        let x = Scaling::CifarPerChannel.apply(&set).unwrap().x;
        let want = [
            -125.3 / 63.0,
            (255.0 - 123.0) / 62.1,
            (128.0 - 113.9) / 66.7,
        ];
        for (a, b) in x.iter().zip(want) {
            assert!((f64::from(*a) - b).abs() < 1e-5, "{a} vs {b}");
        }
    }

    #[test]
    fn names_round_trip() {
        for s in Scaling::all() {
            assert_eq!(s.name().parse::<Scaling>().unwrap(), s);
        }
        assert!("minus_one".parse::<Scaling>().is_err());
    }
}
