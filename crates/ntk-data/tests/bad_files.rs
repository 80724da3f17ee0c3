//! Every malformed-input case is an error naming the file and what is wrong, never a panic.

use std::io::Write;
use std::path::{Path, PathBuf};

use ntk_data::cifar::{CIFAR10_RECORD_BYTES, read_cifar10_batch};
use ntk_data::digits::load_digits;
use ntk_data::idx::{load_idx_pair, read_images, read_labels};
use ntk_data::{DataError, Split, Subset, load_cifar10, load_fashion_mnist, load_mnist};

fn idx_images(n: u32, rows: u32, cols: u32, pixels: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [2051, n, rows, cols] {
        b.extend_from_slice(&u32::to_be_bytes(v));
    }
    b.extend_from_slice(pixels);
    b
}

fn idx_labels(labels: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [2049, labels.len() as u32] {
        b.extend_from_slice(&u32::to_be_bytes(v));
    }
    b.extend_from_slice(labels);
    b
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A valid 3-image 2x2 MNIST-layout train split in `dir`.
fn small_split(dir: &Path, gz: bool) -> (Vec<u8>, Vec<u8>) {
    let pixels: Vec<u8> = (0..12).map(|i| i * 20).collect();
    let labels = vec![3, 9, 0];
    let (imgs, labs) = (idx_images(3, 2, 2, &pixels), idx_labels(&labels));
    if gz {
        write(dir, "train-images-idx3-ubyte.gz", &gzip(&imgs));
        write(dir, "train-labels-idx1-ubyte.gz", &gzip(&labs));
    } else {
        write(dir, "train-images-idx3-ubyte", &imgs);
        write(dir, "train-labels-idx1-ubyte", &labs);
    }
    (pixels, labels)
}

fn msg(e: DataError) -> String {
    e.to_string()
}

#[test]
fn valid_small_files_raw_and_gzipped() {
    for gz in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (pixels, labels) = small_split(dir.path(), gz);
        for set in [
            load_mnist(dir.path(), Split::Train).unwrap(),
            load_fashion_mnist(dir.path(), Split::Train).unwrap(),
        ] {
            assert_eq!((set.n, set.channels, set.height, set.width), (3, 1, 2, 2));
            assert_eq!(set.images, pixels);
            assert_eq!(set.labels, labels);
        }
    }
}

#[test]
fn gzip_is_detected_by_content_not_name() {
    let dir = tempfile::tempdir().unwrap();
    let img = write(dir.path(), "imgs", &gzip(&idx_images(1, 1, 2, &[7, 8])));
    assert_eq!(read_images(&img).unwrap().pixels, [7, 8]);
    // A raw file named .gz is read raw.
    let lab = write(dir.path(), "labels.gz", &idx_labels(&[4]));
    assert_eq!(read_labels(&lab, 10).unwrap(), [4]);
}

#[test]
fn wrong_magic() {
    let dir = tempfile::tempdir().unwrap();
    let labels = write(dir.path(), "labels", &idx_labels(&[1, 2]));
    let e = msg(read_images(&labels).unwrap_err());
    assert!(
        e.contains("labels") && e.contains("expected 2051") && e.contains("found 2049"),
        "{e}"
    );
    assert!(e.contains("byte offset 0"), "{e}");
    let images = write(dir.path(), "images", &idx_images(1, 1, 1, &[0]));
    let e = read_labels(&images, 10).unwrap_err();
    assert!(
        matches!(
            e,
            DataError::BadMagic {
                expected: 2049,
                found: 2051,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn truncated_files() {
    let dir = tempfile::tempdir().unwrap();
    // Header says 3 images of 2x2 (28 bytes in all); 2 pixels are missing.
    let mut bytes = idx_images(3, 2, 2, &[0; 12]);
    bytes.truncate(26);
    let p = write(dir.path(), "short-images", &bytes);
    let e = msg(read_images(&p).unwrap_err());
    assert!(e.contains("short-images") && e.contains("truncated"), "{e}");
    assert!(e.contains("expected 28 bytes, found 26"), "{e}");

    // Incomplete header.
    let p = write(dir.path(), "short-header", &bytes[..10]);
    let e = msg(read_images(&p).unwrap_err());
    assert!(e.contains("expected 16 bytes, found 10"), "{e}");
    let p = write(dir.path(), "tiny", &[0, 0]);
    assert!(matches!(
        read_labels(&p, 10),
        Err(DataError::Truncated {
            expected: 8,
            found: 2,
            ..
        })
    ));

    // Labels: header says 5, 3 present.
    let mut labels = idx_labels(&[1, 2, 3, 4, 5]);
    labels.truncate(11);
    let p = write(dir.path(), "short-labels", &labels);
    let e = msg(read_labels(&p, 10).unwrap_err());
    assert!(e.contains("expected 13 bytes, found 11"), "{e}");

    // Truncated inside a gzipped file: the header is read after decompression.
    let p = write(dir.path(), "short.gz", &gzip(&bytes));
    assert!(matches!(
        read_images(&p),
        Err(DataError::Truncated {
            expected: 28,
            found: 26,
            ..
        })
    ));
}

#[test]
fn trailing_data() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "long", &idx_images(1, 2, 2, &[0; 6]));
    let e = msg(read_images(&p).unwrap_err());
    assert!(
        e.contains("trailing data") && e.contains("expected 20 bytes, found 22"),
        "{e}"
    );
}

#[test]
fn image_and_label_counts_disagree() {
    let dir = tempfile::tempdir().unwrap();
    let img = write(dir.path(), "imgs-3", &idx_images(3, 1, 1, &[0, 1, 2]));
    let lab = write(dir.path(), "labs-2", &idx_labels(&[0, 1]));
    let e = load_idx_pair(&img, &lab, "x", 10).unwrap_err();
    assert!(matches!(
        e,
        DataError::CountMismatch {
            n_images: 3,
            n_labels: 2,
            ..
        }
    ));
    let e = msg(e);
    assert!(
        e.contains("imgs-3")
            && e.contains("labs-2")
            && e.contains("3 images")
            && e.contains("2 labels"),
        "{e}"
    );
}

#[test]
fn label_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "labels", &idx_labels(&[0, 9, 10, 3]));
    let e = read_labels(&p, 10).unwrap_err();
    assert!(
        matches!(
            e,
            DataError::LabelOutOfRange {
                index: 2,
                offset: 10,
                label: 10,
                num_classes: 10,
                ..
            }
        ),
        "{e}"
    );
    let e = msg(e);
    assert!(
        e.contains("labels") && e.contains("sample 2") && e.contains("byte offset 10"),
        "{e}"
    );
}

#[test]
fn bad_idx_header() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "zero-rows", &idx_images(1, 0, 5, &[]));
    assert!(matches!(
        read_images(&p),
        Err(DataError::BadHeader { offset: 8, .. })
    ));
    // A huge header count must not overflow or allocate: just "truncated".
    let p = write(
        dir.path(),
        "huge",
        &idx_images(u32::MAX, u32::MAX, u32::MAX, &[]),
    );
    assert!(matches!(
        read_images(&p),
        Err(DataError::Truncated { found: 16, .. })
    ));
}

#[test]
fn corrupt_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "garbage.gz",
        &[0x1f, 0x8b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    );
    let e = read_images(&p).unwrap_err();
    assert!(matches!(e, DataError::Gzip { .. }), "{e}");
    assert!(msg(e).contains("garbage.gz: corrupt gzip stream"));

    // A gzip stream cut in half.
    let full = gzip(&idx_images(4, 8, 8, &[5; 256]));
    let p = write(dir.path(), "cut.gz", &full[..full.len() / 2]);
    assert!(matches!(read_images(&p), Err(DataError::Gzip { .. })));

    // A flipped byte in the deflate data or the CRC.
    let mut bad = full.clone();
    let k = bad.len() - 6;
    bad[k] ^= 0xff;
    let p = write(dir.path(), "crc.gz", &bad);
    assert!(matches!(read_images(&p), Err(DataError::Gzip { .. })));
}

#[test]
fn missing_files_say_how_to_fetch() {
    let dir = tempfile::tempdir().unwrap();
    let e = load_mnist(dir.path(), Split::Test).unwrap_err();
    assert!(matches!(e, DataError::Missing { .. }));
    let e = msg(e);
    assert!(
        e.contains("t10k-images-idx3-ubyte") && e.contains("bash datasets/fetch.sh"),
        "{e}"
    );
    assert!(e.contains("NTK_DATA_DIR"), "{e}");

    let e = msg(load_digits(dir.path()).unwrap_err());
    assert!(e.contains("digits.csv") && e.contains("fetch.sh"), "{e}");

    let e = msg(load_cifar10(dir.path(), Split::Train).unwrap_err());
    assert!(
        e.contains("data_batch_1.bin") && e.contains("cifar-10-binary.tar.gz"),
        "{e}"
    );
    assert!(e.contains("cifar-10-batches-bin"), "{e}");
    assert!(e.contains(&dir.path().display().to_string()), "{e}");
}

#[test]
fn cifar_wrong_size() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "test_batch.bin",
        &vec![0u8; 2 * CIFAR10_RECORD_BYTES + 5],
    );
    let e = read_cifar10_batch(&p).unwrap_err();
    assert!(
        matches!(
            e,
            DataError::CifarSize {
                size: 6151,
                record: 3073,
                ..
            }
        ),
        "{e}"
    );
    let e = msg(e);
    assert!(
        e.contains("test_batch.bin") && e.contains("6151 bytes") && e.contains("3073"),
        "{e}"
    );
    // The loader reports the same.
    assert!(matches!(
        load_cifar10(dir.path(), Split::Test),
        Err(DataError::CifarSize { .. })
    ));
}

#[test]
fn cifar_label_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = vec![0u8; 3 * CIFAR10_RECORD_BYTES];
    bytes[CIFAR10_RECORD_BYTES] = 10;
    let p = write(dir.path(), "test_batch.bin", &bytes);
    let e = read_cifar10_batch(&p).unwrap_err();
    assert!(
        matches!(
            e,
            DataError::LabelOutOfRange {
                index: 1,
                offset: 3073,
                label: 10,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn unreadable_file_is_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("test_batch.bin");
    std::fs::create_dir(&sub).unwrap();
    let e = read_cifar10_batch(&sub).unwrap_err();
    assert!(matches!(e, DataError::Io { .. }), "{e}");
    assert!(msg(e).contains("test_batch.bin: cannot read"));
}

#[test]
fn digits_bad_lines() {
    let row = |label: &str| {
        let mut fields = vec!["0"; 64];
        fields[3] = "16";
        fields.push(label);
        fields.join(",")
    };
    let dir = tempfile::tempdir().unwrap();

    // Valid, gzipped, floats accepted.
    let text = format!("{}\n{}\n", row("3"), row("9.0"));
    write(dir.path(), "digits.csv.gz", &gzip(text.as_bytes()));
    let set = load_digits(dir.path()).unwrap();
    assert_eq!((set.n, set.labels.clone()), (2, vec![3, 9]));
    assert_eq!(set.image(1)[3], 16);

    // Label out of range on line 2: offset of the label field.
    let line1 = row("1");
    let text = format!("{line1}\n{}\n", row("12"));
    write(dir.path(), "digits.csv.gz", &gzip(text.as_bytes()));
    let e = load_digits(dir.path()).unwrap_err();
    let offset = (line1.len() + 1 + 64 * 2 + 1) as u64; // 63 "0," and one "16,"
    assert!(
        matches!(e, DataError::LabelOutOfRange { index: 1, label: 12, offset: o, .. } if o == offset),
        "{e}"
    );

    // Wrong field count.
    write(dir.path(), "digits.csv.gz", &gzip(b"1,2,3\n"));
    let e = msg(load_digits(dir.path()).unwrap_err());
    assert!(
        e.contains("line 1") && e.contains("expected 65") && e.contains("found 3"),
        "{e}"
    );

    // Pixel out of range, raw (not gzipped) file found under the plain name first.
    let text = row("1").replacen("16", "17", 1);
    write(dir.path(), "digits.csv", text.as_bytes());
    let e = msg(load_digits(dir.path()).unwrap_err());
    assert!(
        e.contains("digits.csv:") && e.contains("pixel 3") && e.contains("17"),
        "{e}"
    );
}

#[test]
fn subsets_larger_than_the_set() {
    let dir = tempfile::tempdir().unwrap();
    small_split(dir.path(), false);
    let set = load_mnist(dir.path(), Split::Train).unwrap();
    for rule in [
        Subset::First { n: 4 },
        Subset::Balanced { n: 4 },
        Subset::Random { n: 4, seed: 0 },
    ] {
        let e = set.subset(&rule).unwrap_err();
        assert!(matches!(
            e,
            DataError::NotEnoughSamples {
                requested: 4,
                available: 3,
                ..
            }
        ));
        let e = msg(e);
        assert!(e.contains("requested 4") && e.contains("only 3"), "{e}");
    }
    // Labels 3, 9, 0: balanced 3 needs one sample of classes 0, 1, 2.
    let e = set.subset(&Subset::Balanced { n: 3 }).unwrap_err();
    assert!(
        matches!(
            e,
            DataError::NotEnoughInClass {
                class: 1,
                requested: 1,
                available: 0
            }
        ),
        "{e}"
    );
}
