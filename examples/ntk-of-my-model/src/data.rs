//! Your data as Burn sees it: a `Dataset` of samples and a `Batcher` that stacks them. Here
//! the 8x8 digits the repository's set-up fetches (`datasets/data/digits`), pixels scaled to
//! `[0, 1]`; any `Vec<f32>` of features and `u8` labels works the same way.

use burn::data::dataloader::batcher::Batcher;
use burn::data::dataset::InMemDataset;
use burn::tensor::{Device, Int, Tensor, TensorData};

/// One sample: its features and its class.
#[derive(Clone, Debug)]
pub struct Sample {
    pub x: Vec<f32>,
    pub label: u8,
}

/// A batch: inputs `[b, d]` and classes `[b]`.
#[derive(Clone, Debug)]
pub struct Batch {
    pub x: Tensor<2>,
    pub y: Tensor<1, Int>,
}

/// Stacks samples into a [`Batch`] on the loader's device.
#[derive(Clone, Debug, Default)]
pub struct Stack;

impl Batcher<Sample, Batch> for Stack {
    fn batch(&self, items: Vec<Sample>, device: &Device) -> Batch {
        let d = items.first().map_or(0, |s| s.x.len());
        let x: Vec<f32> = items.iter().flat_map(|s| s.x.iter().copied()).collect();
        let y: Vec<i64> = items.iter().map(|s| i64::from(s.label)).collect();
        Batch {
            x: Tensor::from_data(TensorData::new(x, [items.len(), d]), device),
            y: Tensor::from_data(TensorData::new(y, [items.len()]), device),
        }
    }
}

/// The digits as samples, pixels divided by 16.
pub fn digits(dir: &str) -> Result<Vec<Sample>, ntk_data::DataError> {
    let set = ntk_data::load_digits(dir)?;
    Ok((0..set.n)
        .map(|i| Sample {
            x: set.image(i).iter().map(|&p| f32::from(p) / 16.0).collect(),
            label: set.labels[i],
        })
        .collect())
}

/// The first `n` samples' inputs as one `[n, d]` tensor (the NTK's probe batch).
pub fn inputs(samples: &[Sample], device: &Device) -> Tensor<2> {
    Stack.batch(samples.to_vec(), device).x
}

/// Burn's in-memory dataset over `samples`.
pub fn dataset(samples: Vec<Sample>) -> InMemDataset<Sample> {
    InMemDataset::new(samples)
}
