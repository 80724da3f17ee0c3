//! CIFAR training augmentation (He et al. 2016): pad each side by 4 pixels with zeros, take a
//! random 32x32 crop, flip horizontally with probability 1/2.
//!
//! This is torchvision's `RandomCrop(32, padding=4)` then `RandomHorizontalFlip()`. Those run
//! on the PIL image before `ToTensor`/`Normalize`, so the padding is black (pixel 0) and not a
//! normalized zero: apply the augmentation to the integer image, then scale.

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
    let [c, h, w] = shape;
    assert_eq!(
        image.len(),
        c * h * w,
        "image does not have shape {shape:?}"
    );
    let mut out = Vec::with_capacity(image.len());
    for plane in image.chunks_exact((h * w).max(1)).take(c) {
        for y in 0..h {
            // Row in the unpadded image; None inside the padding.
            let sy = (y + p.dy).checked_sub(pad).filter(|&r| r < h);
            for x in 0..w {
                let x = if p.flip { w - 1 - x } else { x };
                let sx = (x + p.dx).checked_sub(pad).filter(|&col| col < w);
                out.push(match (sy, sx) {
                    (Some(r), Some(col)) => plane[r * w + col],
                    _ => T::default(),
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

#[cfg(test)]
mod tests {
    use super::*;

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
