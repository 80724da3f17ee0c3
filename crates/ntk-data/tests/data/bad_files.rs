//! Every malformed-input case is an error naming the file and what is wrong, never a panic.

use std::io::Write;
use std::path::{Path, PathBuf};

use ntk_data::cifar::{CIFAR10_MAX_BATCH_BYTES, CIFAR10_RECORD_BYTES, read_cifar10_batch};
use ntk_data::digits::{DIGITS_MAX_BYTES, load_digits};
use ntk_data::idx::{load_idx_pair, read_images, read_labels};
use ntk_data::{
    DataError, ImageSet, Samples, Split, Subset, load_cifar10, load_fashion_mnist, load_mnist,
    write_cifar_like,
};

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
    assert!(msg(e).contains("garbage.gz: the gzip stream does not decompress"));

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
fn directory_in_place_of_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("test_batch.bin");
    std::fs::create_dir(&sub).unwrap();
    let e = read_cifar10_batch(&sub).unwrap_err();
    assert!(matches!(e, DataError::IsDirectory { .. }), "{e}");
    let e = msg(e);
    assert!(
        e.contains(&format!("{}: is a directory", sub.display())),
        "{e}"
    );
    let e = msg(load_cifar10(dir.path(), Split::Test).unwrap_err());
    assert!(
        e.contains(&format!("{}: is a directory", sub.display())),
        "{e}"
    );

    // IDX: a directory named like the file is named, not reported missing.
    let images = dir.path().join("t10k-images-idx3-ubyte");
    std::fs::create_dir(&images).unwrap();
    let e = load_mnist(dir.path(), Split::Test).unwrap_err();
    assert!(matches!(e, DataError::IsDirectory { .. }), "{e}");
    assert!(
        msg(e).starts_with(&format!("{}: is a directory", images.display())),
        "wrong path"
    );
    let e = msg(read_images(&images).unwrap_err());
    assert!(e.contains("t10k-images-idx3-ubyte: is a directory"), "{e}");

    // Digits.
    std::fs::create_dir(dir.path().join("digits.csv.gz")).unwrap();
    let e = msg(load_digits(dir.path()).unwrap_err());
    assert!(e.contains("digits.csv.gz: is a directory"), "{e}");

    // A directory beside a valid `.gz` file: the `.gz` file is used.
    let other = tempfile::tempdir().unwrap();
    small_split(other.path(), true);
    std::fs::create_dir(other.path().join("train-images-idx3-ubyte")).unwrap();
    assert_eq!(load_mnist(other.path(), Split::Train).unwrap().n, 3);
}

#[cfg(unix)]
#[test]
fn symlink_loop() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    symlink(&b, &a).unwrap();
    symlink(&a, &b).unwrap();
    let e = read_images(&a).unwrap_err();
    assert!(matches!(e, DataError::SymlinkLoop { .. }), "{e}");
    let e = msg(e);
    assert!(
        e.starts_with(&format!("{}: symbolic link loop", a.display())),
        "{e}"
    );

    // Through the loaders, which look for the plain name and `.gz`.
    let images = dir.path().join("train-images-idx3-ubyte");
    symlink(&images, &images).unwrap();
    let e = msg(load_mnist(dir.path(), Split::Train).unwrap_err());
    assert!(
        e.starts_with(&format!("{}: symbolic link loop", images.display())),
        "{e}"
    );
    let batch = dir.path().join("test_batch.bin");
    symlink(&batch, &batch).unwrap();
    let e = msg(load_cifar10(dir.path(), Split::Test).unwrap_err());
    assert!(
        e.starts_with(&format!("{}: symbolic link loop", batch.display())),
        "{e}"
    );
    let csv = dir.path().join("digits.csv");
    symlink(&csv, &csv).unwrap();
    let e = msg(load_digits(dir.path()).unwrap_err());
    assert!(
        e.starts_with(&format!("{}: symbolic link loop", csv.display())),
        "{e}"
    );
}

#[cfg(unix)]
#[test]
fn dangling_symlink() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("moved-away/train-images-idx3-ubyte");
    let images = dir.path().join("train-images-idx3-ubyte");
    symlink(&target, &images).unwrap();
    let e = load_mnist(dir.path(), Split::Train).unwrap_err();
    assert!(
        matches!(&e, DataError::BrokenSymlink { target: t, .. } if *t == target),
        "{e}"
    );
    let expected = format!(
        "{}: broken symbolic link pointing to {}",
        images.display(),
        target.display()
    );
    assert!(msg(e).starts_with(&expected), "wrong message");
    let e = msg(read_labels(&images, 10).unwrap_err());
    assert!(e.starts_with(&expected), "{e}");

    // CIFAR-10: the link is named, not the download hint of a missing file.
    let batch = dir.path().join("test_batch.bin");
    symlink("/nonexistent/test_batch.bin", &batch).unwrap();
    let e = msg(load_cifar10(dir.path(), Split::Test).unwrap_err());
    assert!(
        e.starts_with(&format!(
            "{}: broken symbolic link pointing to /nonexistent/test_batch.bin",
            batch.display()
        )),
        "{e}"
    );
    assert!(!e.contains("cifar-10-binary.tar.gz"), "{e}");
}

/// A gzip "bomb": `head` then `mib` MiB of zeros, as one gzip member holding `head` and a
/// MiB of zeros followed by `mib - 1` copies of a member of a MiB of zeros (a multi-member
/// stream is valid gzip and builds in milliseconds; the decoder inflates it all the same).
fn gzip_bomb(head: &[u8], mib: usize) -> Vec<u8> {
    let zeros = vec![0u8; 1 << 20];
    let mut first = head.to_vec();
    first.extend_from_slice(&zeros);
    let mut bomb = gzip(&first);
    let member = gzip(&zeros);
    for _ in 1..mib {
        bomb.extend_from_slice(&member);
    }
    bomb
}

#[test]
fn gzip_bomb_stops_at_the_size_the_header_promises() {
    let dir = tempfile::tempdir().unwrap();
    // 10 images of 28x28 promised (7856 bytes), followed by 200 MiB of zeros.
    let head = idx_images(10, 28, 28, &[1; 7840]);
    let p = write(
        dir.path(),
        "train-images-idx3-ubyte.gz",
        &gzip_bomb(&head, 200),
    );
    assert!(std::fs::metadata(&p).unwrap().len() < (1 << 20));
    let e = read_images(&p).unwrap_err();
    assert!(
        matches!(e, DataError::TrailingStream { expected: 7856, .. }),
        "{e}"
    );
    let e = msg(e);
    assert!(
        e.starts_with(&format!("{}: trailing data", p.display()))
            && e.contains("7856 bytes")
            && e.contains("byte offset 7856"),
        "{e}"
    );

    // The same for labels, and through the loader.
    let labels = vec![1u8; 10];
    let p = write(
        dir.path(),
        "train-labels-idx1-ubyte.gz",
        &gzip_bomb(&idx_labels(&labels), 200),
    );
    let e = read_labels(&p, 10).unwrap_err();
    assert!(
        matches!(e, DataError::TrailingStream { expected: 18, .. }),
        "{e}"
    );
    assert!(msg(e).contains("train-labels-idx1-ubyte.gz: trailing data"));
    let e = msg(load_mnist(dir.path(), Split::Train).unwrap_err());
    assert!(
        e.contains("train-images-idx3-ubyte.gz: trailing data"),
        "{e}"
    );

    // A single-member stream is stopped just the same.
    let mut single = head.clone();
    single.resize(head.len() + (16 << 20), 0);
    let p = write(dir.path(), "single.gz", &gzip(&single));
    assert!(matches!(
        read_images(&p),
        Err(DataError::TrailingStream { expected: 7856, .. })
    ));
}

#[test]
fn gzip_header_promising_more_than_the_stream_can_hold() {
    let dir = tempfile::tempdir().unwrap();
    // 2^32 - 1 images of 28x28 (3.4 TB) from a gzip file of a few dozen bytes: rejected
    // before anything is inflated or reserved.
    let p = write(
        dir.path(),
        "huge.gz",
        &gzip(&idx_images(u32::MAX, 28, 28, &[0; 64])),
    );
    let e = read_images(&p).unwrap_err();
    assert!(matches!(e, DataError::BadHeader { offset: 4, .. }), "{e}");
    let e = msg(e);
    assert!(
        e.starts_with(&format!("{}: bad IDX header", p.display()))
            && e.contains("declares 4294967295 images of 28x28")
            && e.contains("gzip"),
        "{e}"
    );
    let p = write(
        dir.path(),
        "huge-labels.gz",
        &gzip(&[0, 0, 8, 1, 255, 255, 255, 255]),
    );
    assert!(matches!(
        read_labels(&p, 10),
        Err(DataError::BadHeader { offset: 4, .. })
    ));
}

#[test]
fn zero_counts_in_idx_headers() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "no-images", &idx_images(0, 28, 28, &[]));
    let e = read_images(&p).unwrap_err();
    assert!(matches!(e, DataError::BadHeader { offset: 4, .. }), "{e}");
    assert!(msg(e).contains("no-images: bad IDX header at byte offset 4: zero images"));
    let p = write(dir.path(), "no-labels", &idx_labels(&[]));
    let e = msg(read_labels(&p, 10).unwrap_err());
    assert!(
        e.contains("no-labels: bad IDX header at byte offset 4: zero labels"),
        "{e}"
    );
    // The largest image dimensions do not overflow anything.
    let p = write(
        dir.path(),
        "wide",
        &idx_images(1, u32::MAX, u32::MAX, &[0; 8]),
    );
    assert!(matches!(
        read_images(&p),
        Err(DataError::Truncated { found: 24, .. })
    ));
}

#[cfg(unix)]
#[test]
fn endless_device_in_place_of_a_file() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let images = dir.path().join("imgs");
    symlink("/dev/zero", &images).unwrap();
    assert!(matches!(
        read_images(&images),
        Err(DataError::BadMagic { found: 0, .. })
    ));
    // The digits CSV is read up to its limit, then rejected.
    symlink("/dev/zero", dir.path().join("digits.csv")).unwrap();
    let e = load_digits(dir.path()).unwrap_err();
    assert!(matches!(e, DataError::TooLarge { .. }), "{e}");
}

#[test]
fn cifar_empty_batch() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "test_batch.bin", &[]);
    let e = read_cifar10_batch(&p).unwrap_err();
    assert!(matches!(e, DataError::Empty { .. }), "{e}");
    let e = msg(e);
    assert!(
        e.starts_with(&format!(
            "{}: empty CIFAR-10 batch file: 0 bytes",
            p.display()
        )),
        "{e}"
    );

    // An empty first batch among valid ones: an error, not a set starting at batch 2.
    write_cifar_like(dir.path(), 2, 0).unwrap();
    let first = write(dir.path(), "data_batch_1.bin", &[]);
    let e = msg(load_cifar10(dir.path(), Split::Train).unwrap_err());
    assert!(
        e.starts_with(&format!("{}: empty CIFAR-10 batch file", first.display())),
        "{e}"
    );
}

#[test]
fn oversized_files_are_rejected_unread() {
    let dir = tempfile::tempdir().unwrap();
    // Sparse files: no disk space or reading needed to exceed the limits.
    let p = dir.path().join("test_batch.bin");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(CIFAR10_MAX_BATCH_BYTES + CIFAR10_RECORD_BYTES as u64)
        .unwrap();
    let e = read_cifar10_batch(&p).unwrap_err();
    assert!(
        matches!(e, DataError::TooLarge { limit, .. } if limit == CIFAR10_MAX_BATCH_BYTES),
        "{e}"
    );
    let e = msg(e);
    assert!(
        e.starts_with(&format!("{}: too large", p.display()))
            && e.contains(&CIFAR10_MAX_BATCH_BYTES.to_string()),
        "{e}"
    );

    let p = dir.path().join("digits.csv");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(DIGITS_MAX_BYTES + 1).unwrap();
    let e = msg(load_digits(dir.path()).unwrap_err());
    assert!(e.starts_with(&format!("{}: too large", p.display())), "{e}");
    assert!(e.contains("67108864 bytes (64 MiB)"), "{e}");
}

#[test]
fn digits_gzip_bomb_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let mut row = vec!["0"; 65].join(",");
    row.push('\n');
    // A valid line, then 200 MiB of zeros: reading stops at the 64 MiB cap.
    let p = write(dir.path(), "digits.csv.gz", &gzip_bomb(row.as_bytes(), 200));
    let e = load_digits(dir.path()).unwrap_err();
    assert!(
        matches!(e, DataError::TooLarge { limit, .. } if limit == DIGITS_MAX_BYTES),
        "{e}"
    );
    let e = msg(e);
    assert!(
        e.starts_with(&format!("{}: too large", p.display())) && e.contains("64 MiB"),
        "{e}"
    );
}

#[test]
fn digits_hostile_fields() {
    let row = |col: usize, value: &str| {
        let mut fields = vec!["1"; 65];
        fields[col] = value;
        fields.join(",")
    };
    let dir = tempfile::tempdir().unwrap();
    let huge = "9".repeat(400);
    for (line, what) in [
        (row(5, "NaN"), "pixel 5 is \"NaN\""),
        (row(5, "inf"), "pixel 5 is \"inf\""),
        (row(5, "-1"), "pixel 5 is \"-1\""),
        (row(5, "1.5"), "pixel 5 is \"1.5\""),
        (row(5, ""), "pixel 5 is \"\""),
        (row(5, &huge), "(400 bytes)"),
        (row(64, "NaN"), "label \"NaN\" is not an integer in 0..10"),
        (row(64, "-3"), "label \"-3\" is not an integer in 0..10"),
        (
            row(64, "1e300"),
            "label \"1e300\" is not an integer in 0..10",
        ),
        (row(64, &huge), "(400 bytes) is not an integer in 0..10"),
        (format!("{},1", row(0, "1")), "found 66"),
        (",".repeat(64), "pixel 0 is \"\""),
        ("\u{feff}".to_string() + &row(0, "1"), "pixel 0"),
        ("\u{3000}".to_string() + &row(0, "1"), "pixel 0"),
    ] {
        let p = write(dir.path(), "digits.csv", line.as_bytes());
        let e = load_digits(dir.path()).unwrap_err();
        assert!(matches!(e, DataError::Parse { line: 1, .. }), "{e}");
        let e = msg(e);
        assert!(
            e.starts_with(&format!("{}: line 1", p.display())) && e.contains(what),
            "{what}: {e}"
        );
        assert!(e.len() < 400, "message quotes too much: {e}");
    }
    // Not UTF-8.
    write(dir.path(), "digits.csv", &[b'1', b',', 0xff, b'\n']);
    let e = msg(load_digits(dir.path()).unwrap_err());
    assert!(
        e.contains("digits.csv: line 1") && e.contains("UTF-8"),
        "{e}"
    );
    // No sample at all: empty, or blank lines only.
    for text in ["", "\n \r\n\n"] {
        let p = write(dir.path(), "digits.csv", text.as_bytes());
        let e = load_digits(dir.path()).unwrap_err();
        assert!(matches!(e, DataError::Empty { .. }), "{e}");
        assert!(
            msg(e).starts_with(&format!("{}: empty digits CSV", p.display())),
            "{text:?}"
        );
    }
}

#[test]
fn image_set_shapes_that_overflow() {
    let e = ImageSet::new("x", vec![0; 2], vec![0, 0], [usize::MAX, 2, 2], 1, 255).unwrap_err();
    assert!(matches!(e, DataError::BufferShape { .. }), "{e}");
    let e = Samples::new(vec![0.0; 2], vec![0, 0], usize::MAX, 1).unwrap_err();
    assert!(matches!(e, DataError::BufferShape { .. }), "{e}");
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

/// A named pipe where a data file should be: opening it would wait for a writer forever, so
/// it is refused unopened.
#[cfg(unix)]
#[test]
fn named_pipe_in_place_of_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("train-images-idx3-ubyte");
    let made = std::process::Command::new("mkfifo")
        .arg(&p)
        .status()
        .unwrap();
    assert!(made.success());
    let e = read_images(&p).unwrap_err();
    assert!(matches!(e, DataError::IsFifo { .. }), "{e}");
    assert!(
        msg(e).starts_with(&format!("{}: is a named pipe", p.display())),
        "the message names the file"
    );
}

/// Sixty-fifth hostile round, N1: the built-in digits read any file of 65-integer lines as
/// the set (cut, doubled, a class missing); as the built-in set, the file must hold 1797
/// samples of the 10 classes, and the message names the file. `load_digits` alone (the
/// parser, which reads any such file) is unchanged.
#[test]
fn the_builtin_digits_are_the_whole_set() {
    let row = |label: usize| {
        let mut fields = vec!["0".to_string(); 64];
        fields.push(label.to_string());
        fields.join(",")
    };
    let dir = tempfile::tempdir().unwrap();
    for (rows, what) in [
        (1797, "1797 samples of 9 classes"),
        (1000, "1000 samples of 10 classes"),
        (3594, "3594 samples of 10 classes"),
    ] {
        let classes = if rows == 1797 { 9 } else { 10 };
        let text: Vec<String> = (0..rows).map(|i| row(i % classes)).collect();
        write(dir.path(), "digits.csv", text.join("\n").as_bytes());
        assert_eq!(load_digits(dir.path()).unwrap().n, rows);
        let e = msg(ntk_data::Source::Digits
            .load(Some(dir.path()), ntk_data::Split::Train)
            .unwrap_err());
        assert!(
            e.contains("digits.csv: not the digits set")
                && e.contains(what)
                && e.contains("1797 samples of 10 classes"),
            "{e}"
        );
    }
    let text: Vec<String> = (0..1797).map(|i| row(i % 10)).collect();
    write(dir.path(), "digits.csv", text.join("\n").as_bytes());
    let set = ntk_data::Source::Digits
        .load(Some(dir.path()), ntk_data::Split::Train)
        .unwrap();
    assert_eq!(set.n, 1797);
}
