//! The data a run trains on: the training and test sets loaded once per sweep, the order of
//! each epoch and its augmentation (functions of the seed and the epoch, so a resumed run
//! sees the same batches), the batches themselves, and the test set's evaluation.

use std::sync::OnceLock;

use burn::tensor::{Device, Tensor, TensorData};
use ntk_data::ImageAugment;
use ntk_data::config::DataConfig;
use ntk_data::inputs::{self, Inputs};
use ntk_numerics::backend::Compute;
use ntk_runs::provenance;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::model::Model;
use ntk_engine::loss::Loss;
use ntk_engine::sgd::scalar;
use ntk_engine::stepper::Batch;

/// The training set and the test set, loaded once per sweep.
pub struct Data {
    pub train: Inputs,
    pub test: Option<Inputs>,
    digest: OnceLock<String>,
}

impl Data {
    /// The sets of a run (the test set optional).
    pub fn new(train: Inputs, test: Option<Inputs>) -> Self {
        Self {
            train,
            test,
            digest: OnceLock::new(),
        }
    }

    /// SHA-256 of the training and test selections (`data.digest` of the provenance),
    /// computed once.
    pub fn digest(&self) -> &str {
        self.digest.get_or_init(|| {
            let test = self.test.as_ref().map_or(String::new(), Inputs::digest);
            provenance::sha256_hex(format!("train {} test {test}", self.train.digest()).as_bytes())
        })
    }
}

/// Loads the train set and the first `test_n` test samples (of `data.test_x` for a file
/// set: all of them when it holds fewer, none without one).
pub fn load_data(data: &DataConfig, test_n: usize) -> crate::Result<Data> {
    let train = inputs::load(data)?;
    let test_n = match inputs::test_rows(data)? {
        Some(rows) => test_n.min(rows),
        None if data.dataset == ntk_data::Dataset::File => 0,
        None => test_n,
    };
    if test_n == 0 {
        return Ok(Data::new(train, None));
    }
    let test = inputs::load_test(data, test_n).map_err(|e| crate::Error::TestSet {
        set: match data.dataset {
            ntk_data::Dataset::File => "data.test_x",
            _ => "the data set's test split",
        },
        test_n,
        source: Box::new(e.into()),
    })?;
    if test.d != train.d {
        return Err(crate::Error::SplitShapes {
            train: train.description,
            train_d: train.d,
            test: test.description,
            test_d: test.d,
        });
    }
    Ok(Data::new(train, Some(test)))
}

/// Rows `idx` of `set` as a `[len, d]` tensor, augmented (pad, crop and flip) when `aug`
/// holds the augmentation and its generator.
fn batch_x(
    set: &Inputs,
    idx: &[usize],
    compute: &Compute,
    device: &Device,
    aug: Option<(&ImageAugment, &mut ChaCha8Rng)>,
) -> Tensor<2> {
    Tensor::from_data(
        TensorData::new(batch_rows(set, idx, aug), [idx.len(), set.d]),
        (device, compute.dtype()),
    )
}

/// Rows `idx` of `set`, row-major, augmented when `aug` holds the augmentation and its
/// generator.
fn batch_rows(
    set: &Inputs,
    idx: &[usize],
    aug: Option<(&ImageAugment, &mut ChaCha8Rng)>,
) -> Vec<f64> {
    let d = set.d;
    let mut x = Vec::with_capacity(idx.len() * d);
    match aug {
        None => {
            for &i in idx {
                x.extend_from_slice(&set.x[i * d..(i + 1) * d]);
            }
        }
        Some((a, rng)) => {
            for &i in idx {
                x.extend(a.apply(&set.x[i * d..(i + 1) * d], rng));
            }
        }
    }
    x
}

/// Mean `loss` and accuracy of `model` (plain device, evaluation mode) on `set`: each
/// batch's mean weighed by its share of the set, so that a mean in range is not lost to a
/// sum past it (hundred-and-seventeenth hostile round, D3).
pub fn evaluate(
    model: &Model,
    set: &Inputs,
    compute: &Compute,
    (batch, loss_fn): (usize, Loss),
) -> (f64, f64) {
    let (mut loss, mut hits) = (0.0, 0usize);
    let all: Vec<usize> = (0..set.n).collect();
    for idx in all.chunks(batch.max(1)) {
        let x = batch_x(set, idx, compute, &compute.device, None);
        let y: Vec<usize> = idx.iter().map(|&i| usize::from(set.labels[i])).collect();
        let (l, c) = loss_fn.burn(model.forward(x), &y);
        loss += scalar(l) * (idx.len() as f64 / set.n as f64);
        hits += c;
    }
    (loss, hits as f64 / set.n as f64)
}

/// The data order of `epoch`: `0..n` shuffled by ChaCha8 (`seed`, stream `epoch`).
pub(crate) fn epoch_order(seed: u64, epoch: usize, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(epoch as u64);
    order.shuffle(&mut rng);
    order
}

/// The augmentation generator of `epoch`: ChaCha8 (`seed`, stream `2^32 + epoch`).
pub(crate) fn augment_rng(seed: u64, epoch: usize) -> ChaCha8Rng {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    r.set_stream((1 << 32) + epoch as u64);
    r
}

/// Rows `idx` of `set` as a batch, augmented when `aug` holds the augmentation and its
/// generator.
pub(crate) fn batch(
    set: &Inputs,
    idx: &[usize],
    aug: Option<(&ImageAugment, &mut ChaCha8Rng)>,
) -> Batch {
    Batch {
        x: batch_rows(set, idx, aug),
        d: set.d,
        labels: idx.iter().map(|&i| usize::from(set.labels[i])).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An augmented batch of Fashion-MNIST-shaped rows in `[-1, 1]` is each row padded with
    /// -1 (the images' black), cropped and flipped by the draws of the epoch's generator, in
    /// row order: the same as drawing each image's crop by hand from a copy of the generator.
    #[test]
    fn augmented_batches_pad_with_black_and_follow_the_generator() {
        let d = 28 * 28;
        let x: Vec<f64> = (0..2 * d).map(|i| (i % 97) as f64 / 97.0).collect();
        let set = Inputs {
            x: x.clone(),
            n: 2,
            d,
            labels: vec![3, 7],
            description: "two images".into(),
            source_rows: None,
        };
        let aug = ImageAugment::new([1, 28, 28], ntk_data::Scaling::MinusOneOne);
        let mut rng = augment_rng(5, 2);
        let mut by_hand = rng.clone();
        let b = batch(&set, &[1, 0], Some((&aug, &mut rng)));
        assert_eq!(b.labels, [7, 3]);
        let mut expected = Vec::new();
        for i in [1, 0] {
            let p = aug.draws.sample(&mut by_hand);
            expected.extend(ntk_data::crop_flip_fill(
                &x[i * d..(i + 1) * d],
                [1, 28, 28],
                4,
                p,
                &[-1.0],
            ));
        }
        assert_eq!(b.x, expected);
        assert!(b.x.contains(&-1.0), "some padding shows");
        assert_eq!(batch(&set, &[0], None).x, x[..d]);
    }
}
