//! A tiled run's phase files (`ntk_probe::phases`): a run killed after any phase resumes from
//! it with the uninterrupted run's numbers and without redoing it; files of another config
//! are not used; a finished run leaves none behind; the environment variable is checked.

use std::cell::Cell;

use ntk_kernel::extreme::tiled::Tiled;
use ntk_kernel::extreme::{Operand, Options, solve};
use ntk_probe::phases::{Formed, Held, PhaseFiles, Place, Resumable};

use crate::common::*;

/// A symmetric positive definite `n x n` matrix (row-major) with a spread of eigenvalues.
fn spd(n: usize) -> Vec<f64> {
    let b: Vec<f64> = (0..n * n)
        .map(|k| ((k * 7919 % 1009) as f64 / 1009.0) - 0.5)
        .collect();
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = (0..n).map(|t| b[i * n + t] * b[j * n + t]).sum::<f64>()
                + if i == j { 1e-3 } else { 0.0 };
        }
    }
    a
}

/// Tiles of `k` whose fills are counted: a resumed phase must not form the kernel again.
fn counted<'a>(k: &'a [f64], n: usize, block: usize, fills: &'a Cell<usize>) -> Tiled<'a> {
    Tiled::new(
        n,
        block,
        Box::new(move |rows, cols, mut tile| {
            fills.set(fills.get() + 1);
            for (jj, c) in cols.clone().enumerate() {
                for (ii, r) in rows.clone().enumerate() {
                    tile[(ii, jj)] = k[r * n + c];
                }
            }
        }),
    )
}

#[test]
fn a_killed_tiled_run_resumes_from_its_last_phase() {
    let (n, block) = (150, 32);
    let k = spd(n);
    let options = Options {
        block,
        ..Options::default()
    };
    let reference = solve(&mut Tiled::from_dense(&k, n, block), f64::EPSILON, &options).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let place = Place::beside(&dir.path().join("run"), true, "config A");
    let bytes = Tiled::bytes_for(n, block) as u64;
    let open = |place: &Place, fingerprint: &str| {
        let place = Place {
            fingerprint: fingerprint.into(),
            ..place.clone()
        };
        PhaseFiles::open(&place, (n, block), bytes)
            .unwrap()
            .expect("room for the phase files")
    };
    let formed = Formed {
        min_angle: None,
        seconds: 2.5,
    };

    // Killed after the formation.
    let fills = Cell::new(0);
    let mut files = open(&place, "config A");
    assert_eq!(files.held(), None);
    let tiles = counted(&k, n, block, &fills);
    files.save_kernel(&tiles, formed);
    drop(files);
    assert!(place.dir.join("tiles.f64").exists());

    // Resumed: the kernel read back; killed after the factorization.
    let mut files = open(&place, "config A");
    assert_eq!(files.held(), Some(Held::Kernel));
    assert_eq!(files.formed(), Some(formed));
    let fills = Cell::new(0);
    let mut tiles = counted(&k, n, block, &fills);
    let filled = fills.get();
    files.load(&mut tiles).unwrap();
    {
        let mut op = Resumable {
            tiles: &mut tiles,
            files: Some(&mut files),
        };
        op.max_abs().unwrap();
        op.largest(options.max_steps, options.seed, &|_| 1e-10)
            .unwrap();
        assert!(op.factor(0.0).unwrap().is_ok());
    }
    assert_eq!(fills.get(), filled, "the kernel was not formed again");
    drop(files);

    // Resumed from the factor: lambda_max from the record, lambda_min through the factor
    // read back, nothing formed or factored again; the reference's numbers exactly.
    let mut files = open(&place, "config A");
    assert_eq!(files.held(), Some(Held::Factor { shift: 0.0 }));
    let fills = Cell::new(0);
    let mut tiles = counted(&k, n, block, &fills);
    let filled = fills.get();
    files.load(&mut tiles).unwrap();
    let e = solve(
        &mut Resumable {
            tiles: &mut tiles,
            files: Some(&mut files),
        },
        f64::EPSILON,
        &options,
    )
    .unwrap();
    assert_eq!(fills.get(), filled, "the kernel was not formed again");
    assert_eq!(
        (e.lambda_min, e.lambda_max, e.kappa, e.steps),
        (
            reference.lambda_min,
            reference.lambda_max,
            reference.kappa,
            reference.steps
        )
    );
    files.finish();
    assert!(!place.dir.exists(), "a finished run leaves no phase files");

    // Files of another config, or a run that does not resume, start afresh.
    let mut files = open(&place, "config A");
    files.save_kernel(&counted(&k, n, block, &Cell::new(0)), formed);
    drop(files);
    assert_eq!(open(&place, "config B").held(), None);
    let mut files = open(&place, "config B");
    files.save_kernel(&counted(&k, n, block, &Cell::new(0)), formed);
    drop(files);
    let fresh = Place {
        resume: false,
        ..place.clone()
    };
    assert_eq!(open(&fresh, "config B").held(), None);

    // Removing phase files removes only the files this module writes: a user's own file in
    // a directory of that hidden name stays, and so does the directory.
    let mut files = open(&place, "config A");
    files.save_kernel(&counted(&k, n, block, &Cell::new(0)), formed);
    std::fs::write(place.dir.join("notes.txt"), "mine").unwrap();
    files.finish();
    assert_eq!(
        std::fs::read_to_string(place.dir.join("notes.txt")).unwrap(),
        "mine"
    );
    assert!(!place.dir.join("tiles.f64").exists() && !place.dir.join("phases.json").exists());
    assert_eq!(open(&fresh, "config A").held(), None);
    assert!(
        place.dir.join("notes.txt").exists(),
        "a fresh start keeps it too"
    );
}

/// A kernel whose factorization breaks down: the breakdown is recorded, and a resumed solve
/// does not try that shift again (the tiles, which a breakdown refills, are not touched).
#[test]
fn a_recorded_breakdown_is_not_tried_again() {
    let (n, block) = (60, 16);
    // Rank 30 of 60: K = B B^T with B 60 x 30.
    let b: Vec<f64> = (0..n * 30).map(|k| ((k * 31 % 17) as f64) - 8.0).collect();
    let k: Vec<f64> = (0..n * n)
        .map(|ij| {
            (0..30)
                .map(|t| b[(ij / n) * 30 + t] * b[(ij % n) * 30 + t])
                .sum()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let place = Place::beside(&dir.path().join("run"), true, "c");
    let bytes = Tiled::bytes_for(n, block) as u64;
    let fills = Cell::new(0);
    let mut tiles = counted(&k, n, block, &fills);
    let mut files = PhaseFiles::open(&place, (n, block), bytes)
        .unwrap()
        .unwrap();
    let first = solve(
        &mut Resumable {
            tiles: &mut tiles,
            files: Some(&mut files),
        },
        f64::EPSILON,
        &Options::default(),
    )
    .unwrap();
    assert!(first.singular && first.shift > 0.0, "{first:?}");
    drop(files);
    let mut files = PhaseFiles::open(&place, (n, block), bytes)
        .unwrap()
        .unwrap();
    let fills = Cell::new(0);
    let mut tiles = counted(&k, n, block, &fills);
    let filled = fills.get();
    files.load(&mut tiles).unwrap();
    let mut op = Resumable {
        tiles: &mut tiles,
        files: Some(&mut files),
    };
    assert!(op.factor(0.0).unwrap().is_err(), "the recorded breakdown");
    assert!(op.factor(first.shift).unwrap().is_ok(), "the kept factor");
    assert_eq!(fills.get(), filled);
}

/// Through the command line: a finished tiled run leaves no phase files beside its output,
/// and `NTK_PHASE_FILES` other than 0 or 1 is refused by name before any work.
#[test]
fn the_tiled_command_cleans_its_phase_files_and_checks_their_variable() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_file(
        dir.path(),
        "tiled.toml",
        "[data]\ndataset = \"synthetic\"\nn = 200\ninput_dim = 5\n[model]\nwidth = 32\n\
         depth = 2\nactivation = \"relu\"\n[probe]\nprecision = \"f64\"\neigen = \"tiled\"\n",
    );
    let out = dir.path().join("out");
    let o = ntk_cli(&cfg, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("summary.json").exists());
    assert!(!dir.path().join(".out.phases").exists());
    let o = probe()
        .env("NTK_PHASE_FILES", "yes")
        .args(["ntk", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(dir.path().join("bad"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("NTK_PHASE_FILES") && err.contains("yes"),
        "{err}"
    );
}
