//! CIFAR training augmentation (He et al. 2016): pad each side by 4 pixels with zeros, take a
//! random 32x32 crop, flip horizontally with probability 1/2; the same for any image size
//! ([`ImageAugment`]: Fashion-MNIST's 28x28 in the stand-ins of Agarwal et al.'s figures).
//!
//! This is torchvision's `RandomCrop(32, padding=4)` then `RandomHorizontalFlip()`. Those run
//! on the PIL image before `ToTensor`/`Normalize`, so the padding is black (pixel 0) and not a
//! normalized zero: apply the augmentation to the integer image, then scale, or, on scaled
//! images, pad with each channel's scaled black ([`ImageAugment::fill`]).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::set::ImageSet;

/// One draw of the augmentation: where the crop starts in the padded image, and whether to
/// flip. `CropFlip { dy: pad, dx: pad, flip: false }` is the identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CropFlip {
    /// Top row of the crop in the padded image, `0..=2 * pad`.
    pub dy: usize,
    /// Left column of the crop in the padded image, `0..=2 * pad`.
    pub dx: usize,
    /// Mirror the crop left-right.
    pub flip: bool,
}

/// Pads a CHW image of `shape = [c, h, w]` by `pad` zeros on every side, crops `h x w` at
/// `(p.dy, p.dx)` of the padded image, and mirrors it when `p.flip`. Pure; the output has the
/// input's shape. Offsets beyond `2 * pad` just crop more padding.
///
/// # Panics
///
/// If `image.len() != c * h * w`.
pub fn crop_flip<T: Copy + Default>(
    image: &[T],
    shape: [usize; 3],
    pad: usize,
    p: CropFlip,
) -> Vec<T> {
    crop_flip_fill(image, shape, pad, p, &vec![T::default(); shape[0]])
}

/// [`crop_flip`] with the padding of channel `c` set to `fill[c]` (a scaled image's black).
///
/// # Panics
///
/// If `image.len() != c * h * w` or `fill.len() != c`.
pub fn crop_flip_fill<T: Copy>(
    image: &[T],
    shape: [usize; 3],
    pad: usize,
    p: CropFlip,
    fill: &[T],
) -> Vec<T> {
    let [c, h, w] = shape;
    assert_eq!(fill.len(), c, "one fill value per channel");
    assert_eq!(
        image.len(),
        c * h * w,
        "image does not have shape {shape:?}"
    );
    let mut out = Vec::with_capacity(image.len());
    for (plane, &background) in image.chunks_exact((h * w).max(1)).take(c).zip(fill) {
        for y in 0..h {
            // Row in the unpadded image; None inside the padding.
            let sy = (y + p.dy).checked_sub(pad).filter(|&r| r < h);
            for x in 0..w {
                let x = if p.flip { w - 1 - x } else { x };
                let sx = (x + p.dx).checked_sub(pad).filter(|&col| col < w);
                out.push(match (sy, sx) {
                    (Some(r), Some(col)) => plane[r * w + col],
                    _ => background,
                });
            }
        }
    }
    out
}

/// The random part: crop offsets uniform in `0..=2 * pad`, flip with probability `flip_prob`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CifarAugment {
    /// Zero padding on each side (4 in He et al.).
    pub pad: usize,
    /// Probability of a horizontal flip (0.5).
    pub flip_prob: f64,
}

impl Default for CifarAugment {
    fn default() -> Self {
        Self {
            pad: 4,
            flip_prob: 0.5,
        }
    }
}

impl CifarAugment {
    /// Draws one crop offset and flip.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> CropFlip {
        CropFlip {
            dy: rng.random_range(0..=2 * self.pad),
            dx: rng.random_range(0..=2 * self.pad),
            flip: rng.random_bool(self.flip_prob.clamp(0.0, 1.0)),
        }
    }

    /// Augments one CHW image with a fresh draw from `rng`.
    pub fn apply<T: Copy + Default, R: Rng + ?Sized>(
        &self,
        image: &[T],
        shape: [usize; 3],
        rng: &mut R,
    ) -> Vec<T> {
        let p = self.sample(rng);
        crop_flip(image, shape, self.pad, p)
    }

    /// Augments every image of a set (one epoch's worth), drawing from a ChaCha8 stream seeded by
    /// `seed`; use e.g. `seed = base_seed + epoch` for a new draw each epoch. Labels are kept.
    pub fn apply_set(&self, set: &ImageSet, seed: u64) -> ImageSet {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let shape = set.shape();
        let mut images = Vec::with_capacity(set.images.len());
        for i in 0..set.n {
            images.extend(self.apply(set.image(i), shape, &mut rng));
        }
        ImageSet {
            name: set.name.clone(),
            images,
            labels: set.labels.clone(),
            ..*set
        }
    }
}

/// The training augmentation of scaled images of any shape: He et al.'s pad-crop-flip
/// ([`CifarAugment`]'s draws) with the padding at each channel's scaled black pixel, so that
/// the pad reads as the image's own background (-1 for Fashion-MNIST in `[-1, 1]`; the
/// normalized black of each CIFAR channel), as torchvision's crop of the PIL image before
/// `Normalize` gives.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageAugment {
    /// `[channels, height, width]` of one image (a row of the inputs, CHW order).
    pub shape: [usize; 3],
    /// The draws: padding on each side and flip probability (He et al.: 4 and 1/2).
    pub draws: CifarAugment,
    /// Each channel's padding value: the scaled black pixel.
    pub fill: Vec<f64>,
}

impl ImageAugment {
    /// He et al.'s draws on images of `shape` scaled by `scaling` (black: pixel 0 scaled).
    pub fn new(shape: [usize; 3], scaling: crate::Scaling) -> Self {
        Self {
            shape,
            draws: CifarAugment::default(),
            fill: (0..shape[0])
                .map(|c| f64::from(scaling.scale_pixel(0, c, 255)))
                .collect(),
        }
    }

    /// One image (a row of scaled inputs) augmented with a fresh draw from `rng`.
    pub fn apply<R: Rng + ?Sized>(&self, image: &[f64], rng: &mut R) -> Vec<f64> {
        let p = self.draws.sample(rng);
        crop_flip_fill(image, self.shape, self.draws.pad, p, &self.fill)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pad is each channel's scaled black: -1 in `[-1, 1]`, -mean/std per CIFAR channel;
    /// inside the crop the pixels are the image's own.
    #[test]
    fn image_augment_pads_with_the_scaled_black() {
        let a = ImageAugment::new([1, 28, 28], crate::Scaling::MinusOneOne);
        assert_eq!(a.fill, [-1.0]);
        let c = ImageAugment::new([3, 32, 32], crate::Scaling::CifarPerChannel);
        for (ch, f) in c.fill.iter().enumerate() {
            let black = -crate::transform::CIFAR10_MEAN[ch] / crate::transform::CIFAR10_STD[ch];
            assert!((f - black).abs() < 1e-6, "{f} vs {black}");
        }
        // A 1x2x2 image cropped at the top-left corner of its 1-pixel padding: three
        // pixels of pad, the image's first pixel at the bottom right.
        let img = [0.5, 0.25, 0.125, 0.0625];
        let p = CropFlip {
            dy: 0,
            dx: 0,
            flip: false,
        };
        assert_eq!(
            crop_flip_fill(&img, [1, 2, 2], 1, p, &[-1.0]),
            [-1.0, -1.0, -1.0, 0.5]
        );
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let out = a.apply(&[0.5; 28 * 28], &mut rng);
        assert_eq!(out.len(), 28 * 28);
        assert!(out.iter().all(|&v| v == 0.5 || v == -1.0));
    }

    #[test]
    fn identity_and_double_flip() {
        let shape = [2, 3, 5];
        let img: Vec<u8> = (1..=30).collect();
        let id = CropFlip {
            dy: 4,
            dx: 4,
            flip: false,
        };
        assert_eq!(crop_flip(&img, shape, 4, id), img);
        let flip = CropFlip { flip: true, ..id };
        let once = crop_flip(&img, shape, 4, flip);
        assert_eq!(once[..5], [5, 4, 3, 2, 1]);
        assert_eq!(crop_flip(&once, shape, 4, flip), img);
        // Without padding the only crop is the identity.
        assert_eq!(
            crop_flip(
                &img,
                shape,
                0,
                CropFlip {
                    dy: 0,
                    dx: 0,
                    flip: false
                }
            ),
            img
        );
    }

    #[test]
    fn crop_then_flip_order() {
        // 1x1x3 row [1, 2, 3], pad 1, crop at dx = 0 gives [0, 1, 2]; flipped [2, 1, 0].
        let p = CropFlip {
            dy: 1,
            dx: 0,
            flip: true,
        };
        assert_eq!(crop_flip(&[1u8, 2, 3], [1, 1, 3], 1, p), [2, 1, 0]);
    }
}
