//! The Burn side: [`Dataset`] implementations and batchers producing tensors on a device.
//!
//! Items are scaled float vectors with a class index ([`Item`]). [`FlatBatcher`] stacks them
//! into an `N x D` matrix for MLPs; [`ImageBatcher`] into `N x C x H x W` for convolutional
//! nets. Both create the float tensor with an explicit dtype and the targets as an `Int`
//! tensor of class indices. This module stays backend-free: the device is a runtime value.

use burn::data::dataloader::batcher::Batcher;
use burn::data::dataset::{Dataset, DatasetError};
use burn::tensor::{DType, Device, Int, Tensor, TensorData};

use crate::error::Result;
use crate::set::{ImageSet, Samples};
use crate::transform::Scaling;

/// One sample: scaled features (a flattened CHW image) and its class.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Features, `dim` floats.
    pub x: Vec<f32>,
    /// Class index.
    pub label: usize,
}

impl Dataset<Item> for Samples {
    /// # Panics
    ///
    /// If `index >= len()` (the [`Dataset`] contract).
    fn get(&self, index: usize) -> Result<Item, DatasetError> {
        assert!(
            index < self.n,
            "index {index} out of range for {} samples",
            self.n
        );
        Ok(Item {
            x: self.row(index).to_vec(),
            label: self.y[index].into(),
        })
    }

    fn len(&self) -> usize {
        self.n
    }
}

/// An [`ImageSet`] kept as bytes and scaled on access (a quarter of the memory of
/// [`Samples`]); the form to use with per-epoch augmentation
/// ([`CifarAugment::apply_set`](crate::CifarAugment::apply_set)).
#[derive(Debug, Clone)]
pub struct ImageDataset {
    set: ImageSet,
    scaling: Scaling,
    tables: Vec<[f32; 256]>,
}

impl ImageDataset {
    /// Wraps a set with the scaling applied to every item.
    pub fn new(set: ImageSet, scaling: Scaling) -> Result<Self> {
        scaling.check_channels(set.channels)?;
        let tables = (0..set.channels)
            .map(|c| scaling.table(c, set.max_value))
            .collect();
        Ok(Self {
            set,
            scaling,
            tables,
        })
    }

    /// The underlying images.
    pub fn set(&self) -> &ImageSet {
        &self.set
    }

    /// The scaling applied to items.
    pub fn scaling(&self) -> Scaling {
        self.scaling
    }

    /// `[channels, height, width]`, for an [`ImageBatcher`].
    pub fn shape(&self) -> [usize; 3] {
        self.set.shape()
    }
}

impl Dataset<Item> for ImageDataset {
    /// # Panics
    ///
    /// If `index >= len()` (the [`Dataset`] contract).
    fn get(&self, index: usize) -> Result<Item, DatasetError> {
        assert!(
            index < self.set.n,
            "index {index} out of range for {} images",
            self.set.n
        );
        let plane = self.set.height * self.set.width;
        let image = self.set.image(index);
        let mut x = Vec::with_capacity(image.len());
        for (c, table) in self.tables.iter().enumerate() {
            x.extend(
                image[c * plane..(c + 1) * plane]
                    .iter()
                    .map(|&p| table[usize::from(p)]),
            );
        }
        Ok(Item {
            x,
            label: self.set.labels[index].into(),
        })
    }

    fn len(&self) -> usize {
        self.set.n
    }
}

/// A batch: inputs of rank `D` (2 flattened, 4 images) and class-index targets.
#[derive(Debug, Clone)]
pub struct Batch<const D: usize> {
    /// `[N, dim]` or `[N, C, H, W]`.
    pub images: Tensor<D>,
    /// `[N]` class indices.
    pub targets: Tensor<1, Int>,
}

/// Batches [`Item`]s into `[N, dim]` float inputs of the given dtype.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlatBatcher {
    /// Float dtype of the inputs (e.g. `DType::F32`).
    pub dtype: DType,
}

/// Batches [`Item`]s into `[N, C, H, W]` float inputs of the given dtype.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImageBatcher {
    /// `[C, H, W]` of every item.
    pub shape: [usize; 3],
    /// Float dtype of the inputs.
    pub dtype: DType,
}

/// Stacks items; panics if their lengths differ from `dim` (items of one dataset never do).
fn stack(items: &[Item], dim: usize) -> (Vec<f32>, Vec<i64>) {
    let mut x = Vec::with_capacity(items.len() * dim);
    for item in items {
        assert_eq!(
            item.x.len(),
            dim,
            "item of {} features, expected {dim}",
            item.x.len()
        );
        x.extend_from_slice(&item.x);
    }
    let y = items.iter().map(|i| i.label as i64).collect();
    (x, y)
}

/// A `[N]` Int tensor of class indices on `device` (the device's default int dtype).
pub fn targets_tensor(labels: &[i64], device: &Device) -> Tensor<1, Int> {
    Tensor::from_data(TensorData::new(labels.to_vec(), [labels.len()]), device)
}

impl Batcher<Item, Batch<2>> for FlatBatcher {
    /// # Panics
    ///
    /// If the items have different lengths.
    fn batch(&self, items: Vec<Item>, device: &Device) -> Batch<2> {
        let dim = items.first().map_or(0, |i| i.x.len());
        let (x, y) = stack(&items, dim);
        Batch {
            images: Tensor::from_data(TensorData::new(x, [items.len(), dim]), (device, self.dtype)),
            targets: targets_tensor(&y, device),
        }
    }
}

impl Batcher<Item, Batch<4>> for ImageBatcher {
    /// # Panics
    ///
    /// If an item's length is not `C * H * W`.
    fn batch(&self, items: Vec<Item>, device: &Device) -> Batch<4> {
        let [c, h, w] = self.shape;
        let (x, y) = stack(&items, c * h * w);
        Batch {
            images: Tensor::from_data(
                TensorData::new(x, [items.len(), c, h, w]),
                (device, self.dtype),
            ),
            targets: targets_tensor(&y, device),
        }
    }
}

impl Samples {
    /// The whole set as one `[n, dim]` float tensor of the given dtype (for whole-set NTKs).
    pub fn to_tensor(&self, device: &Device, dtype: DType) -> Tensor<2> {
        Tensor::from_data(
            TensorData::new(self.x.clone(), [self.n, self.dim]),
            (device, dtype),
        )
    }

    /// The labels as a `[n]` Int tensor.
    pub fn targets_tensor(&self, device: &Device) -> Tensor<1, Int> {
        let y: Vec<i64> = self.y.iter().map(|&l| l.into()).collect();
        targets_tensor(&y, device)
    }
}
