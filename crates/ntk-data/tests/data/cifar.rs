//! CIFAR-10 loader on generated files in the exact binary layout, and the augmentation.

use ntk_data::cifar::{CIFAR10_CLASSES, CIFAR10_RECORD_BYTES, read_cifar10_classes};
use ntk_data::{
    CifarAugment, CropFlip, Scaling, Source, Split, crop_flip, load_cifar10, write_cifar_like,
};

#[test]
fn generated_files_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = write_cifar_like(dir.path(), 7, 42).unwrap();
    for (i, f) in ["data_batch_1.bin", "data_batch_5.bin", "test_batch.bin"]
        .iter()
        .enumerate()
    {
        let len = std::fs::metadata(dir.path().join(f)).unwrap().len();
        assert_eq!(len, (7 * CIFAR10_RECORD_BYTES) as u64, "file {i}");
    }
    let loaded_train = load_cifar10(dir.path(), Split::Train).unwrap();
    let loaded_test = Source::Cifar10.load(Some(dir.path()), Split::Test).unwrap();
    assert_eq!(loaded_train, train);
    assert_eq!(loaded_test, test);
    assert_eq!(
        (train.n, train.channels, train.height, train.width),
        (35, 3, 32, 32)
    );
    assert_eq!(test.n, 7);
    assert_eq!(read_cifar10_classes(dir.path()).unwrap(), CIFAR10_CLASSES);

    // Record layout: label byte then R, G, B planes.
    let raw = std::fs::read(dir.path().join("data_batch_2.bin")).unwrap();
    let rec = &raw[CIFAR10_RECORD_BYTES..2 * CIFAR10_RECORD_BYTES]; // record 1 of file 2
    assert_eq!(train.labels[8], rec[0]);
    assert_eq!(train.image(8), &rec[1..]);

    // Deterministic in the seed.
    let other = tempfile::tempdir().unwrap();
    assert_eq!(write_cifar_like(other.path(), 7, 42).unwrap().0, train);
    assert_ne!(write_cifar_like(other.path(), 7, 43).unwrap().0, train);
}

#[test]
fn archive_directory_is_found_inside_the_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("cifar-10-batches-bin");
    let (_, test) = write_cifar_like(&nested, 2, 1).unwrap();
    assert_eq!(load_cifar10(dir.path(), Split::Test).unwrap(), test);
}

#[test]
fn per_channel_scaling() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut test) = write_cifar_like(dir.path(), 1, 3).unwrap();
    test.images.fill(0);
    test.images[1024] = 255; // first green pixel
    let s = Scaling::CifarPerChannel.apply(&test).unwrap();
    // As torchvision: the constants are Python doubles, the arithmetic f32.
    let mean = [125.3f64 / 255.0, 123.0 / 255.0, 113.9 / 255.0].map(|v| v as f32);
    let std = [63.0f64 / 255.0, 62.1 / 255.0, 66.7 / 255.0].map(|v| v as f32);
    let red0 = s.row(0)[0];
    assert!((red0 + 125.3 / 63.0).abs() < 1e-5, "{red0}");
    assert_eq!(red0, (0.0 - mean[0]) / std[0]);
    assert_eq!(s.row(0)[1024], (1.0 - mean[1]) / std[1]);
    assert!((s.row(0)[1024] - (255.0 - 123.0) / 62.1).abs() < 1e-5);
    assert_eq!(s.row(0)[2048], -mean[2] / std[2]);
}

#[test]
fn augmentation_identity_and_flip() {
    let shape = [3, 32, 32];
    let img: Vec<u8> = (0..3 * 32 * 32).map(|i| (i * 7 % 251) as u8).collect();
    let id = CropFlip {
        dy: 4,
        dx: 4,
        flip: false,
    };
    assert_eq!(crop_flip(&img, shape, 4, id), img);
    let flip = CropFlip { flip: true, ..id };
    let once = crop_flip(&img, shape, 4, flip);
    assert_ne!(once, img);
    assert_eq!(once[5], img[31 - 5]);
    assert_eq!(crop_flip(&once, shape, 4, flip), img);

    // Offset (0, 0): a 4-pixel black border at the top and left, the image shifted by 4.
    let shifted = crop_flip(
        &img,
        shape,
        4,
        CropFlip {
            dy: 0,
            dx: 0,
            flip: false,
        },
    );
    for c in 0..3 {
        for y in 0..32 {
            for x in 0..32 {
                let got = shifted[c * 1024 + y * 32 + x];
                let want = if y < 4 || x < 4 {
                    0
                } else {
                    img[c * 1024 + (y - 4) * 32 + x - 4]
                };
                assert_eq!(got, want, "c{c} y{y} x{x}");
            }
        }
    }
    // Offset (8, 8): bottom-right border; works for floats too.
    let f: Vec<f32> = img.iter().map(|&p| f32::from(p) + 1.0).collect();
    let br = crop_flip(
        &f,
        shape,
        4,
        CropFlip {
            dy: 8,
            dx: 8,
            flip: false,
        },
    );
    assert_eq!(br[31 * 32 + 31], 0.0);
    assert_eq!(br[0], f[4 * 32 + 4]);
}

#[test]
fn augmentation_draws_are_seeded_and_cover_the_range() {
    use rand::SeedableRng;
    let aug = CifarAugment::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let draws: Vec<CropFlip> = (0..2000).map(|_| aug.sample(&mut rng)).collect();
    assert!(draws.iter().all(|d| d.dy <= 8 && d.dx <= 8));
    assert!(draws.iter().any(|d| d.dy == 0) && draws.iter().any(|d| d.dx == 8));
    let flips = draws.iter().filter(|d| d.flip).count();
    assert!((900..1100).contains(&flips), "{flips}");

    let dir = tempfile::tempdir().unwrap();
    let (train, _) = write_cifar_like(dir.path(), 4, 0).unwrap();
    let a = aug.apply_set(&train, 5);
    assert_eq!(a, aug.apply_set(&train, 5));
    assert_ne!(a, aug.apply_set(&train, 6));
    assert_eq!(
        (a.n, a.labels.clone(), a.images.len()),
        (train.n, train.labels.clone(), train.images.len())
    );
}
