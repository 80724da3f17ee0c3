//! Tests on the real files fetched by `bash datasets/fetch.sh` (CI runs it first). A missing
//! file fails the test with the loader's message, which says how to fetch it.

use ntk_data::{ImageSet, Samples, Scaling, Source, Split, Subset};

fn load(source: Source, split: Split) -> ImageSet {
    source
        .load(None, split)
        .unwrap_or_else(|e| panic!("cannot load {source} {split:?}: {e}"))
}

fn mean_std(x: &[f32]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let var = x
        .iter()
        .map(|&v| (f64::from(v) - mean).powi(2))
        .sum::<f64>()
        / n;
    (mean, var.sqrt())
}

#[test]
fn mnist_train_and_test() {
    let train = load(Source::Mnist, Split::Train);
    assert_eq!(
        (train.n, train.channels, train.height, train.width),
        (60000, 1, 28, 28)
    );
    assert_eq!(train.images.len(), 60000 * 784);
    assert_eq!(train.labels[..5], [5, 0, 4, 1, 9]);
    assert_eq!(
        train.class_counts(),
        [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    );
    // Row 14 of the first image (a "5").
    assert_eq!(
        train.image(0)[14 * 28 + 13..14 * 28 + 19],
        [81, 240, 253, 253, 119, 25]
    );

    let test = load(Source::Mnist, Split::Test);
    assert_eq!((test.n, test.height, test.width), (10000, 28, 28));
    assert_eq!(test.labels[..5], [7, 2, 1, 0, 4]);
}

#[test]
fn fashion_mnist_train_and_test() {
    let train = load(Source::FashionMnist, Split::Train);
    assert_eq!(
        (train.n, train.channels, train.height, train.width),
        (60000, 1, 28, 28)
    );
    assert_eq!(train.labels[..5], [9, 0, 0, 3, 0]);
    assert_eq!(train.class_counts(), [6000; 10]);
    let test = load(Source::FashionMnist, Split::Test);
    assert_eq!(test.n, 10000);
    assert_eq!(test.class_counts(), [1000; 10]);
}

#[test]
fn digits_1797_by_64() {
    let set = load(Source::Digits, Split::Train);
    assert_eq!(
        (set.n, set.dim(), set.num_classes, set.max_value),
        (1797, 64, 10, 16)
    );
    assert_eq!(set.image(0)[..8], [0, 0, 5, 13, 9, 1, 0, 0]);
    assert_eq!(set.labels[..10], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(
        set.class_counts(),
        [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    );
    assert_eq!(
        set.images.iter().map(|&p| u64::from(p)).sum::<u64>(),
        561718
    );
    assert!(Source::Digits.load(None, Split::Test).is_err());

    // Digits scale by their own maximum 16: pixel 16 -> 1, 8 -> 0.
    let s = Scaling::MinusOneOne.apply(&set).unwrap();
    assert_eq!((s.n, s.dim), (1797, 64));
    assert_eq!(s.row(0)[2], (5.0 / 16.0 - 0.5) / 0.5);
    assert!(s.x.iter().all(|v| (-1.0..=1.0).contains(v)));
}

#[test]
fn mnist_scalings_match_published_statistics() {
    let train = load(Source::Mnist, Split::Train);
    // The well-known MNIST normalisation constants 0.1307 / 0.3081.
    let unit = Scaling::UnitInterval.apply(&train).unwrap();
    let (m, s) = mean_std(&unit.x);
    assert!(
        (m - 0.1307).abs() < 1e-4 && (s - 0.3081).abs() < 1e-4,
        "{m} {s}"
    );

    let pm = Scaling::MinusOneOne.apply(&train).unwrap();
    let (m2, s2) = mean_std(&pm.x);
    assert!((m2 - (2.0 * m - 1.0)).abs() < 1e-5 && (s2 - 2.0 * s).abs() < 1e-5);
    let row = &pm.row(0)[14 * 28 + 12..14 * 28 + 16];
    assert_eq!(
        row,
        [
            -1.0,
            (81.0 / 255.0 - 0.5) / 0.5,
            (240.0 / 255.0 - 0.5) / 0.5,
            (253.0 / 255.0 - 0.5) / 0.5
        ]
    );
    let max = pm.x.iter().cloned().fold(f32::MIN, f32::max);
    assert_eq!(max, 1.0);

    let raw = Scaling::Raw.apply(&train).unwrap();
    assert_eq!(raw.row(0)[14 * 28 + 14], 240.0);
    assert!(Scaling::CifarPerChannel.apply(&train).is_err(), "1 channel");
}

#[test]
fn fashion_mnist_unit_statistics() {
    let train = load(Source::FashionMnist, Split::Train);
    let (m, s) = mean_std(&Scaling::UnitInterval.apply(&train).unwrap().x);
    assert!(
        (m - 0.2860).abs() < 1e-4 && (s - 0.3530).abs() < 1e-4,
        "{m} {s}"
    );
}

#[test]
fn balanced_subsets_of_mnist() {
    let train = load(Source::Mnist, Split::Train);
    let sub = train.subset(&Subset::Balanced { n: 1000 }).unwrap();
    assert_eq!(sub.n, 1000);
    assert_eq!(sub.class_counts(), [100; 10]);
    let sub = train.subset(&Subset::Balanced { n: 2048 }).unwrap();
    assert_eq!(
        sub.class_counts(),
        [205, 205, 205, 205, 205, 205, 205, 205, 204, 204]
    );
    // Class 5, the smallest, has 5421 samples: 5421 of each class is the most there is.
    let all = train.subset(&Subset::Balanced { n: 54210 }).unwrap();
    assert_eq!(all.class_counts(), [5421; 10]);
    let err = train.subset(&Subset::Balanced { n: 54220 }).unwrap_err();
    assert!(
        matches!(
            err,
            ntk_data::DataError::NotEnoughInClass {
                class: 5,
                requested: 5422,
                available: 5421
            }
        ),
        "{err}"
    );
    let err = train
        .subset(&Subset::First { n: 60001 })
        .unwrap_err()
        .to_string();
    assert!(err.contains("60001") && err.contains("60000"), "{err}");

    let samples: Samples = Scaling::MinusOneOne.apply(&train).unwrap();
    let a = samples.subset(&Subset::Random { n: 512, seed: 1 }).unwrap();
    let b = samples.subset(&Subset::Random { n: 512, seed: 1 }).unwrap();
    assert_eq!(a, b);
    assert_eq!((a.n, a.dim), (512, 784));
}
