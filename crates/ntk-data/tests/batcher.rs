//! The Burn integration: datasets and batchers produce tensors of the right shape and dtype.

use burn::data::dataloader::batcher::Batcher;
use burn::data::dataset::Dataset;
use burn::tensor::{DType, Device};
use ntk_data::{
    FlatBatcher, ImageBatcher, ImageDataset, Item, Scaling, gaussian, write_cifar_like,
};

#[test]
fn flat_batches_of_samples() {
    let device = Device::flex();
    let samples = gaussian(10, 5, 0);
    assert_eq!(Dataset::<Item>::len(&samples), 10);
    let items: Vec<Item> = (0..4).map(|i| samples.get(i).unwrap()).collect();
    assert_eq!(items[2].x, samples.row(2));
    let batch = FlatBatcher { dtype: DType::F32 }.batch(items, &device);
    assert_eq!(batch.images.dims(), [4, 5]);
    assert_eq!(batch.images.dtype(), DType::F32);
    assert_eq!(batch.targets.dims(), [4]);
    let x = batch.images.into_data().try_into_vec::<f32>().unwrap();
    assert_eq!(x, samples.x[..20]);

    let whole = samples.to_tensor(&device, DType::F32);
    assert_eq!(whole.dims(), [10, 5]);
    assert_eq!(samples.targets_tensor(&device).dims(), [10]);
}

#[test]
fn image_batches_of_cifar() {
    let device = Device::flex();
    let dir = tempfile::tempdir().unwrap();
    let (train, _) = write_cifar_like(dir.path(), 3, 7).unwrap();
    let labels: Vec<i64> = train.labels[..6].iter().map(|&l| l.into()).collect();
    let ds = ImageDataset::new(train.clone(), Scaling::CifarPerChannel).unwrap();
    assert_eq!(ds.len(), 15);
    let items = ds.get_many((0..6).collect()).unwrap();
    let scaled = Scaling::CifarPerChannel.apply(&train).unwrap();
    assert_eq!(items[5].x, scaled.row(5));

    let batcher = ImageBatcher {
        shape: ds.shape(),
        dtype: DType::F32,
    };
    let batch = batcher.batch(items.clone(), &device);
    assert_eq!(batch.images.dims(), [6, 3, 32, 32]);
    assert_eq!(batch.targets.dims(), [6]);
    let targets = batch.targets.into_data().try_into_vec_as::<i64>().unwrap();
    assert_eq!(targets, labels);

    let flat = FlatBatcher { dtype: DType::F32 }.batch(items, &device);
    assert_eq!(flat.images.dims(), [6, 3072]);

    assert!(ImageDataset::new(gaussian_set(), Scaling::CifarPerChannel).is_err());
}

fn gaussian_set() -> ntk_data::ImageSet {
    ntk_data::ImageSet::new("g", vec![0; 4], vec![0], [1, 2, 2], 1, 255).unwrap()
}
