//! In-memory data sets: [`ImageSet`] (8-bit images as stored on disk) and [`Samples`]
//! (the float view that models and kernels consume).

use crate::error::{DataError, Result};

/// Which part of a data set with a fixed train/test split to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// The training part (MNIST 60000, CIFAR-10 50000 samples).
    Train,
    /// The test part (10000 samples for MNIST, Fashion-MNIST and CIFAR-10).
    Test,
}

/// Images with integer pixels, exactly as the files store them.
///
/// `images` holds `n` images back to back, each in CHW order (channel planes, each plane
/// row-major), which is PyTorch's layout: flattening an image is taking its slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSet {
    /// Short name, e.g. `"mnist-train"`.
    pub name: String,
    /// `n * channels * height * width` pixels.
    pub images: Vec<u8>,
    /// `n` labels, each `< num_classes`.
    pub labels: Vec<u8>,
    /// Number of images.
    pub n: usize,
    /// Channels per image (1 for grey-scale, 3 for RGB).
    pub channels: usize,
    /// Rows per image.
    pub height: usize,
    /// Columns per image.
    pub width: usize,
    /// Number of classes.
    pub num_classes: usize,
    /// Largest possible pixel value: 255 for 8-bit images, 16 for the 8x8 digits.
    /// [`Scaling`](crate::Scaling) maps `0..=max_value` onto its target range.
    pub max_value: u8,
}

impl ImageSet {
    /// Builds a set, checking that the buffers match the shape and the labels the classes.
    pub fn new(
        name: impl Into<String>,
        images: Vec<u8>,
        labels: Vec<u8>,
        [channels, height, width]: [usize; 3],
        num_classes: usize,
        max_value: u8,
    ) -> Result<Self> {
        let n = labels.len();
        let expected = [channels, height, width]
            .into_iter()
            .try_fold(n, usize::checked_mul);
        if expected != Some(images.len()) {
            return Err(DataError::BufferShape {
                len: images.len(),
                unit: "pixels",
                n,
                items: "images",
                shape: vec![channels, height, width],
            });
        }
        if let Some((i, &l)) = labels
            .iter()
            .enumerate()
            .find(|(_, l)| usize::from(**l) >= num_classes)
        {
            return Err(DataError::LabelRange {
                label: l,
                sample: Some(i),
                classes: num_classes,
            });
        }
        Ok(Self {
            name: name.into(),
            images,
            labels,
            n,
            channels,
            height,
            width,
            num_classes,
            max_value,
        })
    }

    /// Number of images.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Pixels per image, `channels * height * width`.
    pub fn dim(&self) -> usize {
        self.channels * self.height * self.width
    }

    /// `[channels, height, width]`.
    pub fn shape(&self) -> [usize; 3] {
        [self.channels, self.height, self.width]
    }

    /// What a set concatenated with this one must share: [`DataError::ConcatMismatch`].
    pub fn form(&self) -> crate::error::SetForm {
        crate::error::SetForm {
            name: self.name.clone(),
            shape: self.shape(),
            num_classes: self.num_classes,
            max_value: self.max_value,
        }
    }

    /// Image `i` in CHW order. Panics if `i >= n`.
    pub fn image(&self, i: usize) -> &[u8] {
        let d = self.dim();
        &self.images[i * d..(i + 1) * d]
    }

    /// Samples per class.
    pub fn class_counts(&self) -> Vec<usize> {
        class_counts(&self.labels, self.num_classes)
    }

    /// The images at `indices`, in that order (duplicates allowed).
    pub fn select(&self, indices: &[usize]) -> Result<Self> {
        check_indices(indices, self.n, &self.name)?;
        let mut images = Vec::with_capacity(indices.len() * self.dim());
        for &i in indices {
            images.extend_from_slice(self.image(i));
        }
        Ok(Self {
            name: self.name.clone(),
            images,
            labels: indices.iter().map(|&i| self.labels[i]).collect(),
            n: indices.len(),
            ..*self
        })
    }

    /// Concatenates sets of identical shape, classes and pixel range.
    pub fn concat(name: impl Into<String>, parts: Vec<Self>) -> Result<Self> {
        let mut parts = parts.into_iter();
        let Some(mut out) = parts.next() else {
            return Err(DataError::ConcatNone);
        };
        for p in parts {
            if p.shape() != out.shape()
                || p.num_classes != out.num_classes
                || p.max_value != out.max_value
            {
                return Err(DataError::ConcatMismatch {
                    first: Box::new(out.form()),
                    other: Box::new(p.form()),
                });
            }
            out.images.extend_from_slice(&p.images);
            out.labels.extend_from_slice(&p.labels);
            out.n += p.n;
        }
        out.name = name.into();
        Ok(out)
    }
}

/// A float data set: `n` rows of `dim` features and a label per row.
///
/// This is what an MLP, a kernel or an NTK probe consumes; images are flattened in CHW order.
#[derive(Debug, Clone, PartialEq)]
pub struct Samples {
    /// Row-major `n x dim` features.
    pub x: Vec<f32>,
    /// `n` labels, each `< num_classes`.
    pub y: Vec<u8>,
    /// Number of rows.
    pub n: usize,
    /// Features per row.
    pub dim: usize,
    /// Number of classes (1 for unlabelled sets such as the synthetic Gaussian).
    pub num_classes: usize,
}

impl Samples {
    /// Builds a set, checking the buffer sizes and labels.
    pub fn new(x: Vec<f32>, y: Vec<u8>, dim: usize, num_classes: usize) -> Result<Self> {
        let n = y.len();
        if n.checked_mul(dim) != Some(x.len()) {
            return Err(DataError::BufferShape {
                len: x.len(),
                unit: "features",
                n,
                items: "rows",
                shape: vec![dim],
            });
        }
        if let Some(l) = y.iter().find(|l| usize::from(**l) >= num_classes) {
            return Err(DataError::LabelRange {
                label: *l,
                sample: None,
                classes: num_classes,
            });
        }
        Ok(Self {
            x,
            y,
            n,
            dim,
            num_classes,
        })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Row `i`. Panics if `i >= n`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.x[i * self.dim..(i + 1) * self.dim]
    }

    /// Rows per class.
    pub fn class_counts(&self) -> Vec<usize> {
        class_counts(&self.y, self.num_classes)
    }

    /// The rows at `indices`, in that order (duplicates allowed).
    pub fn select(&self, indices: &[usize]) -> Result<Self> {
        check_indices(indices, self.n, "samples")?;
        let mut x = Vec::with_capacity(indices.len() * self.dim);
        for &i in indices {
            x.extend_from_slice(self.row(i));
        }
        Ok(Self {
            x,
            y: indices.iter().map(|&i| self.y[i]).collect(),
            n: indices.len(),
            ..*self
        })
    }
}

fn class_counts(labels: &[u8], num_classes: usize) -> Vec<usize> {
    let mut counts = vec![0; num_classes];
    for &l in labels {
        if let Some(c) = counts.get_mut(usize::from(l)) {
            *c += 1;
        }
    }
    counts
}

fn check_indices(indices: &[usize], n: usize, what: &str) -> Result<()> {
    match indices.iter().find(|&&i| i >= n) {
        Some(&index) => Err(DataError::IndexRange {
            what: what.to_string(),
            index,
            n,
        }),
        None => Ok(()),
    }
}
