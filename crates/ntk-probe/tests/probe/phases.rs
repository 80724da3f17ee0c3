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
    assert!(files.load(&mut tiles), "the kept tiles are read back");
    {
        let mut op = Resumable {
            tiles: &mut tiles,
            files: Some(&mut files),
        };
        op.max_abs().unwrap();
        // The tolerance `solve` gives (`1e-10` relative to the Ritz value).
        op.largest(options.max_steps, options.seed, &|theta| {
            1e-10 * theta.abs()
        })
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
    assert!(files.load(&mut tiles), "the kept tiles are read back");
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
    drop(files);
    let config_a = Place {
        fingerprint: "config A".into(),
        ..place.clone()
    };
    ntk_probe::phases::finish(&config_a, (n, block));
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
    drop(files);
    ntk_probe::phases::finish(&config_a, (n, block));
    assert_eq!(
        std::fs::read_to_string(place.dir.join("notes.txt")).unwrap(),
        "mine"
    );
    assert!(!place.dir.join("tiles.f64").exists() && !place.dir.join("phases.json").exists());
    // A directory holding a user's file and no phases.json is not a phase place: a fresh
    // start keeps no phase files there and leaves it (eighty-fourth hostile round, D6).
    let fresh_a = Place {
        fingerprint: "config A".into(),
        ..fresh.clone()
    };
    assert!(
        PhaseFiles::open(&fresh_a, (n, block), bytes)
            .unwrap()
            .is_none()
    );
    assert_eq!(
        std::fs::read_dir(&place.dir).unwrap().count(),
        1,
        "a fresh start keeps it too, and writes nothing there"
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
    assert!(files.load(&mut tiles), "the kept tiles are read back");
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
    let cfg = write_file(dir.path(), "tiled.toml", &tiled_config(200, 5, 32));
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

/// Issue 65 items 3 and 13: kept tiles are used only when they are the ones `phases.json`
/// records (size and SHA-256). An entry scaled by 1.5, zeroed tiles, a truncated, longer or
/// missing file: each is refused by `load`, the state starts again, the file is removed, and
/// the kernel formed again gives the uninterrupted run's numbers exactly.
#[test]
fn kept_tiles_that_are_not_the_recorded_ones_are_formed_again() {
    let (n, block) = (90, 32);
    let k = spd(n);
    let options = Options {
        block,
        ..Options::default()
    };
    let reference = solve(&mut Tiled::from_dense(&k, n, block), f64::EPSILON, &options).unwrap();
    let formed = Formed {
        min_angle: None,
        seconds: 1.0,
    };
    let bytes = Tiled::bytes_for(n, block) as u64;
    for damage in ["scaled", "zeroed", "truncated", "longer", "missing"] {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::beside(&dir.path().join("run"), true, "c");
        let mut files = PhaseFiles::open(&place, (n, block), bytes)
            .unwrap()
            .unwrap();
        files.save_kernel(&counted(&k, n, block, &Cell::new(0)), formed);
        drop(files);
        let path = place.dir.join("tiles.f64");
        let mut raw = std::fs::read(&path).unwrap();
        match damage {
            "scaled" => {
                let v = f64::from_le_bytes(raw[80..88].try_into().unwrap()) * 1.5;
                raw[80..88].copy_from_slice(&v.to_le_bytes());
                std::fs::write(&path, &raw)
            }
            "zeroed" => std::fs::write(&path, vec![0u8; raw.len()]),
            "truncated" => std::fs::write(&path, &raw[..raw.len() / 2]),
            "longer" => {
                raw.extend([0u8; 8]);
                std::fs::write(&path, &raw)
            }
            _ => std::fs::remove_file(&path),
        }
        .unwrap();
        let mut files = PhaseFiles::open(&place, (n, block), bytes)
            .unwrap()
            .expect("a probe's phase files, resumed");
        assert_eq!(files.held(), Some(Held::Kernel), "{damage}");
        let fills = Cell::new(0);
        let mut tiles = counted(&k, n, block, &fills);
        assert!(!files.load(&mut tiles), "{damage}: the tiles were used");
        assert_eq!((files.held(), files.formed()), (None, None), "{damage}");
        assert!(!path.exists(), "{damage}: the damaged tiles are dropped");
        tiles.refill();
        let e = solve(
            &mut Resumable {
                tiles: &mut tiles,
                files: Some(&mut files),
            },
            f64::EPSILON,
            &options,
        )
        .unwrap();
        assert_eq!(
            (e.lambda_min, e.lambda_max, e.kappa),
            (reference.lambda_min, reference.lambda_max, reference.kappa),
            "{damage}"
        );
    }
}

/// Hundred-and-twenty-eighth hostile round, N1 of the second review: damaged tiles cost the
/// tiles alone. lambda_max, found from the same kernel and recorded in the checksummed
/// state, is kept (as where tiles were never written), said by the dry run and the run
/// alike, and the kernel formed again gives the uninterrupted run's numbers exactly.
#[test]
fn damaged_tiles_keep_lambda_max() {
    let (n, block) = (90, 32);
    let k = spd(n);
    let options = Options {
        block,
        ..Options::default()
    };
    let reference = solve(&mut Tiled::from_dense(&k, n, block), f64::EPSILON, &options).unwrap();
    let formed = Formed {
        min_angle: None,
        seconds: 1.0,
    };
    let bytes = Tiled::bytes_for(n, block) as u64;
    let dir = tempfile::tempdir().unwrap();
    let place = Place::beside(&dir.path().join("run"), true, "c");
    let mut files = PhaseFiles::open(&place, (n, block), bytes)
        .unwrap()
        .unwrap();
    files.save_kernel(&counted(&k, n, block, &Cell::new(0)), formed);
    let first = Cell::new(0);
    let mut tiles = counted(&k, n, block, &first);
    assert!(files.load(&mut tiles));
    let e = solve(
        &mut Resumable {
            tiles: &mut tiles,
            files: Some(&mut files),
        },
        f64::EPSILON,
        &options,
    )
    .unwrap();
    assert_eq!(e.kappa, reference.kappa);
    assert!(
        files.describe().contains("lambda_max"),
        "{}",
        files.describe()
    );
    drop(files);
    let path = place.dir.join("tiles.f64");
    let raw = std::fs::read(&path).unwrap();
    std::fs::write(&path, &raw[..raw.len() / 2]).unwrap();
    let kept = "lambda_max (the kernel is formed again)";
    let said = ntk_probe::phases::kept(&place, (n, block));
    assert!(
        said.as_deref().is_some_and(|s| s.contains(kept)),
        "{said:?}"
    );
    let mut files = PhaseFiles::open(&place, (n, block), bytes)
        .unwrap()
        .unwrap();
    let fills = Cell::new(0);
    let mut tiles = counted(&k, n, block, &fills);
    assert!(!files.load(&mut tiles), "the damaged tiles were used");
    assert!(files.describe().contains(kept), "{}", files.describe());
    tiles.refill();
    let e = solve(
        &mut Resumable {
            tiles: &mut tiles,
            files: Some(&mut files),
        },
        f64::EPSILON,
        &options,
    )
    .unwrap();
    assert_eq!(
        (e.lambda_min, e.lambda_max, e.kappa),
        (reference.lambda_min, reference.lambda_max, reference.kappa)
    );
}

/// Issue 65 items 1 and 13: what is at `.<out>.phases` and is not a probe's phase files (a
/// symbolic link to a directory, a file, tiles without a probe's `phases.json`, a state of an
/// older format, or one altered after it was written) is neither used nor removed, with or
/// without resuming: no phase files are kept and everything there stays as it was.
#[test]
fn phase_places_that_are_not_a_probes_are_left_as_they_are() {
    let (n, block) = (40, 16);
    let k = spd(n);
    let bytes = Tiled::bytes_for(n, block) as u64;
    let formed = Formed {
        min_angle: None,
        seconds: 1.0,
    };
    for resume in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::beside(&dir.path().join("run"), resume, "c");
        let mine = dir.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        for (name, text) in [
            ("phases.json", "{}"),
            ("tiles.f64", "mine"),
            ("tiles.f64.partial", "mine too"),
        ] {
            std::fs::write(mine.join(name), text).unwrap();
        }
        let intact = |at: &std::path::Path| {
            assert_eq!(
                std::fs::read_to_string(at.join("phases.json")).unwrap(),
                "{}"
            );
            assert_eq!(
                std::fs::read_to_string(at.join("tiles.f64")).unwrap(),
                "mine"
            );
            assert_eq!(
                std::fs::read_to_string(at.join("tiles.f64.partial")).unwrap(),
                "mine too"
            );
        };
        let refused = |what: &str| {
            let got = PhaseFiles::open(&place, (n, block), bytes).unwrap();
            assert!(got.is_none(), "{what}: used as phase files");
        };

        // A symbolic link to a directory: the linked directory is not emptied.
        std::os::unix::fs::symlink(&mine, &place.dir).unwrap();
        refused("a link");
        intact(&mine);
        assert!(std::fs::symlink_metadata(&place.dir).unwrap().is_symlink());
        std::fs::remove_file(&place.dir).unwrap();

        // A regular file of that name.
        std::fs::write(&place.dir, "a file").unwrap();
        refused("a file");
        assert_eq!(std::fs::read_to_string(&place.dir).unwrap(), "a file");
        std::fs::remove_file(&place.dir).unwrap();

        // A directory of tiles with a state that is not a probe's (`{}`), or none.
        std::fs::rename(&mine, &place.dir).unwrap();
        refused("a foreign state");
        intact(&place.dir);
        std::fs::remove_file(place.dir.join("phases.json")).unwrap();
        refused("no state");
        assert!(place.dir.join("tiles.f64").exists());
        std::fs::remove_dir_all(&place.dir).unwrap();

        // A probe's state of an older format (no owner, no checksums), and one altered after
        // it was written.
        let mut files = PhaseFiles::open(&place, (n, block), bytes)
            .unwrap()
            .unwrap();
        files.save_kernel(&counted(&k, n, block, &Cell::new(0)), formed);
        drop(files);
        let state = place.dir.join("phases.json");
        let text = std::fs::read_to_string(&state).unwrap();
        let altered = text.replace("\"seconds\": 1.0", "\"seconds\": 2.0");
        assert_ne!(altered, text);
        std::fs::write(&state, &altered).unwrap();
        refused("an altered state");
        let mut old: serde_json::Value = serde_json::from_str(&text).unwrap();
        let o = old.as_object_mut().unwrap();
        for key in ["owner", "tiles_sha256", "checksum"] {
            o.remove(key);
        }
        let old = serde_json::to_string(&old).unwrap();
        std::fs::write(&state, &old).unwrap();
        refused("an older format");
        assert_eq!(std::fs::read_to_string(&state).unwrap(), old);
        assert!(place.dir.join("tiles.f64").exists());
    }
}

/// Issue 65 items 1 and 13 through the command line: a symbolic link or a file at
/// `.<out>.phases` does not make a tiled run fail (it is said and left as it is, with or
/// without `--resume`, and `NTK_PHASE_FILES=0` does not touch it either); with
/// `NTK_PHASE_FILES=1` the run is refused, naming the variable and the place.
#[test]
fn the_tiled_command_leaves_what_is_not_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_file(dir.path(), "tiled.toml", &tiled_config(120, 5, 16));
    let mine = dir.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("phases.json"), "{}").unwrap();
    std::fs::write(mine.join("tiles.f64"), "mine").unwrap();
    let link = dir.path().join(".a.phases");
    std::os::unix::fs::symlink(&mine, &link).unwrap();
    let file = dir.path().join(".b.phases");
    std::fs::write(&file, "a file").unwrap();
    let run_as = |out: &str, env: Option<&str>, resume: bool, dry: bool| {
        let mut c = probe();
        if let Some(v) = env {
            c.env("NTK_PHASE_FILES", v);
        }
        c.args(["ntk", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(dir.path().join(out));
        if resume {
            c.arg("--resume");
        }
        if dry {
            c.arg("--dry-run");
        }
        c.output().unwrap()
    };
    let run = |out: &str, env: Option<&str>, resume: bool| run_as(out, env, resume, false);
    let warning = |err: &str| -> Option<String> {
        err.lines()
            .find(|l| l.contains("without phase files"))
            .map(str::to_string)
    };
    for (out, env, resume) in [
        ("a", None, false),
        ("a", None, true),
        ("a", Some("0"), false),
        ("b", None, false),
        ("b", None, true),
    ] {
        // The dry run says what the run will warn of, in its words (seventy-first hostile
        // round, N1: it said only "new").
        let dry = run_as(out, env, resume, true);
        let dry_err = String::from_utf8_lossy(&dry.stderr);
        assert!(dry.status.success(), "{out} {env:?}: {dry_err}");
        let o = run(out, env, resume);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{out} {env:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(warning(&dry_err), warning(&err), "{out} {env:?} {resume}");
        if env.is_none() {
            assert!(
                err.contains(&format!(".{out}.phases")) && err.contains("without phase files"),
                "{out}: {err}"
            );
        }
        std::fs::remove_dir_all(dir.path().join(out)).unwrap();
    }
    let o = run("a", Some("1"), false);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("NTK_PHASE_FILES") && err.contains(".a.phases") && err.contains("link"),
        "{err}"
    );
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(
        std::fs::read_to_string(mine.join("tiles.f64")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(mine.join("phases.json")).unwrap(),
        "{}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a file");
}

/// A probe config of a ReLU MLP of depth 2 and `width` on `n` synthetic points in R^`d`,
/// f64, on the tiled route.
fn tiled_config(n: usize, d: usize, width: usize) -> String {
    format!(
        "[data]\ndataset = \"synthetic\"\nn = {n}\ninput_dim = {d}\n[model]\nwidth = {width}\n\
         depth = 2\nactivation = \"relu\"\n[probe]\nprecision = \"f64\"\neigen = \"tiled\"\n"
    )
}

/// The config fingerprint a probe run of the config `text` records (and keys its phase
/// files by), on the CPU default in f64.
fn fingerprint_of(text: &str) -> String {
    provenance_of(text).fingerprint
}

/// The provenance a probe run of the config `text` records, on the CPU default in f64.
fn provenance_of(text: &str) -> ntk_runs::provenance::Provenance {
    use ntk_numerics::backend::{Precision, select};
    use ntk_probe::config::ProbeConfig;
    use ntk_probe::run;
    let pcfg = ProbeConfig::parse(text).unwrap();
    let inputs = ntk_data::inputs::load(&pcfg.data).unwrap();
    let compute = select(None, Precision::F64).unwrap();
    let given = run::Given::read(&pcfg, &inputs, &compute).unwrap();
    run::provenance(&pcfg, &inputs, &inputs.digest(), &compute, Some(&given))
}

/// The phase files a run of `fingerprint` killed after forming its kernel (an SPD stand-in
/// of size `n`) leaves beside `out`, recording no config (as builds before it was
/// recorded); their place.
fn leave_formed_kernel(out: &std::path::Path, fingerprint: &str, n: usize) -> Place {
    leave_formed_kernel_at(Place::beside(out, true, fingerprint), n)
}

/// [`leave_formed_kernel`] for the run whose provenance is `prov`, as this build records
/// them (with its config).
fn leave_formed_kernel_of(
    out: &std::path::Path,
    prov: &ntk_runs::provenance::Provenance,
    n: usize,
) -> Place {
    leave_formed_kernel_at(Place::of_run(out, true, prov), n)
}

/// The phase files a run at `place` killed after forming its kernel leaves there.
fn leave_formed_kernel_at(place: Place, n: usize) -> Place {
    let bytes = Tiled::bytes_for(n, ntk_probe::run::TILE) as u64;
    let mut files = PhaseFiles::open(&place, (n, ntk_probe::run::TILE), bytes)
        .unwrap()
        .unwrap();
    let formed = Formed {
        min_angle: None,
        seconds: 1.0,
    };
    files.save_kernel(&Tiled::from_dense(&spd(n), n, ntk_probe::run::TILE), formed);
    drop(files);
    place
}

/// Issue 65 item 14: a dry run says what phase files make of a tiled run: with `--resume`
/// it is partial and continues from them (named, with what they keep); without, it is
/// computed afresh and they are removed. The run without `--resume` then removes them (they
/// are provably the probe's) and leaves none.
#[test]
fn a_dry_run_says_what_kept_phase_files_make_of_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let n = 120;
    let text = tiled_config(n, 5, 16);
    let cfg = write_file(dir.path(), "tiled.toml", &text);
    let out = dir.path().join("out");
    // This run's phase files, as a killed run would have left them after the formation.
    let place = leave_formed_kernel(&out, &fingerprint_of(&text), n);
    let dry = |extra: &[&str]| {
        let o = probe()
            .args(["ntk", "--dry-run", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let resumed = dry(&["--resume"]);
    assert!(
        resumed.contains("partial")
            && resumed.contains(".out.phases")
            && resumed.contains("the kernel's tiles")
            && !resumed.contains("would be computed"),
        "{resumed}"
    );
    let afresh = dry(&[]);
    assert!(
        afresh.contains("new") && afresh.contains("removing") && afresh.contains("--resume"),
        "{afresh}"
    );
    assert!(
        place.dir.join("tiles.f64").exists(),
        "a dry run changes nothing"
    );
    let o = ntk_cli(&cfg, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!place.dir.exists(), "the run's own phase files are removed");
}

/// Issue 65, twentieth hostile round, N3: `--resume` of a finished tiled run keeps its
/// results and removes the phase files a killed `--recompute` of the same config left (no
/// run would read them: the next plain run removed them only then); another config's
/// phase files stay, and `NTK_PHASE_FILES=0` removes none.
#[test]
fn a_kept_finished_run_removes_its_configs_leftover_phase_files() {
    let dir = tempfile::tempdir().unwrap();
    let n = 120;
    let text = tiled_config(n, 5, 16);
    let cfg = write_file(dir.path(), "tiled.toml", &text);
    let out = dir.path().join("out");
    let o = ntk_cli(&cfg, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = std::fs::read(out.join("summary.json")).unwrap();
    let resume = |env: Option<&str>| {
        let mut c = probe();
        c.args(["ntk", "--resume", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(&out);
        if let Some(v) = env {
            c.env(ntk_probe::phases::PHASE_FILES, v);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // Another config's phase files, and this config's under NTK_PHASE_FILES=0, stay.
    let place = leave_formed_kernel(&out, "another config", n);
    resume(None);
    assert!(
        place.dir.join("tiles.f64").exists(),
        "another config's stay"
    );
    let place = leave_formed_kernel(&out, &fingerprint_of(&text), n);
    resume(Some("0"));
    assert!(place.dir.join("tiles.f64").exists(), "NTK_PHASE_FILES=0");
    let said = resume(None);
    assert!(
        said.contains("kept (--resume)")
            && said.contains("this config's phase files")
            && said.contains(": removed"),
        "{said}"
    );
    assert!(
        !place.dir.exists(),
        "this config's leftover phase files are removed"
    );
    assert_eq!(
        std::fs::read(out.join("summary.json")).unwrap(),
        summary,
        "results kept"
    );
}

/// Issue 65 items 2 and 14 for sweeps: a tiled sweep point whose own phase files are kept is
/// `partial` in the dry run (the sweep continues from them), and a sweep whose `--out` holds
/// its data file is refused, naming the key and the file.
#[test]
fn a_tiled_sweeps_dry_run_says_partial_and_its_data_stay_outside() {
    use ntk_numerics::backend::{Precision, select};
    use ntk_probe::run;
    use ntk_probe::sweep::SweepConfig;
    let dir = tempfile::tempdir().unwrap();
    let n = 100;
    let text = format!(
        "[sweep]\ndepths = [2]\nactivations = [\"relu\"]\nseeds = [1]\nprotocols = [\"whole\"]\n\
         out = \"unused\"\ntheory = false\n[data]\ndataset = \"synthetic\"\nn = {n}\n\
         input_dim = 5\n[model]\nwidth = 16\ndepth = 1\nactivation = \"relu\"\n[probe]\n\
         precision = \"f64\"\neigen = \"tiled\"\n"
    );
    let cfg_path = write_file(dir.path(), "sweep.toml", &text);
    let out = dir.path().join("sweep");
    let cfg = SweepConfig::parse(&text).unwrap();
    let point = &cfg.points()[0];
    let pcfg = cfg.point_config(point, ntk_probe::config::Protocol::Whole);
    let inputs = ntk_data::inputs::load(&pcfg.data).unwrap();
    let compute = select(None, Precision::F64).unwrap();
    let prov = run::provenance(&pcfg, &inputs, &inputs.digest(), &compute, None);
    let place = Place::beside(&point.dir(&out), true, &prov.fingerprint);
    std::fs::create_dir_all(place.dir.parent().unwrap()).unwrap();
    let bytes = Tiled::bytes_for(n, run::TILE) as u64;
    let k = spd(n);
    let mut files = PhaseFiles::open(&place, (n, run::TILE), bytes)
        .unwrap()
        .unwrap();
    let formed = Formed {
        min_angle: None,
        seconds: 1.0,
    };
    files.save_kernel(&Tiled::from_dense(&k, n, run::TILE), formed);
    drop(files);
    let o = probe()
        .args(["sweep", "--dry-run", "--config"])
        .arg(&cfg_path)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("partial"), "{stdout}");

    // The data inside the sweep's output directory.
    let data = out.join("x.csv");
    let rows: Vec<String> = (0..20)
        .map(|i| format!("{},{},{}", i as f64 * 0.1, 1.0, (i as f64).sin()))
        .collect();
    std::fs::write(&data, rows.join("\n") + "\n").unwrap();
    let inside = text.replace(
        "dataset = \"synthetic\"\nn = 100\ninput_dim = 5",
        &format!("dataset = \"file\"\nx = {:?}", data.display().to_string()),
    );
    let cfg_path = write_file(dir.path(), "inside.toml", &inside);
    for extra in [&[][..], &["--dry-run"]] {
        let o = crate::common::command_cli("sweep", &cfg_path, &out, extra);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("data.x") && err.contains("x.csv") && err.contains("inside"),
            "{err}"
        );
    }
    assert!(data.exists());
}

/// Eighty-eighth hostile round, D1, for sweeps: a tiled point's phase files of another
/// config (here `data.n` 80, the sweep's 100) were removed by the sweep without
/// `--recompute`, the dry run listing the point `new`. Now the point is stale, named with
/// the key, and the sweep refused without `--recompute`; with it the point is made.
#[test]
fn a_sweep_point_with_another_configs_phase_files_is_stale() {
    use ntk_probe::sweep::SweepConfig;
    let dir = tempfile::tempdir().unwrap();
    let text = |n: usize| {
        format!(
            "[sweep]\ndepths = [2]\nactivations = [\"relu\"]\nseeds = [1]\n\
             protocols = [\"whole\"]\nout = \"unused\"\ntheory = false\n[data]\n\
             dataset = \"synthetic\"\nn = {n}\ninput_dim = 5\n[model]\nwidth = 16\n\
             depth = 1\nactivation = \"relu\"\n[probe]\nprecision = \"f64\"\n\
             eigen = \"tiled\"\n"
        )
    };
    let cfg_path = write_file(dir.path(), "sweep.toml", &text(100));
    let out = dir.path().join("sweep");
    let other = SweepConfig::parse(&text(80)).unwrap();
    let point = &other.points()[0];
    let pcfg = other.point_config(point, ntk_probe::config::Protocol::Whole);
    let inputs = ntk_data::inputs::load(&pcfg.data).unwrap();
    let compute =
        ntk_numerics::backend::select(None, ntk_numerics::backend::Precision::F64).unwrap();
    let prov = ntk_probe::run::provenance(&pcfg, &inputs, &inputs.digest(), &compute, None);
    std::fs::create_dir_all(point.dir(&out).parent().unwrap()).unwrap();
    let place = leave_formed_kernel_of(&point.dir(&out), &prov, 80);
    for extra in [&["--dry-run"][..], &[][..]] {
        let o = crate::common::command_cli("sweep", &cfg_path, &out, extra);
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {said}");
        assert!(
            said.contains("another run's phase files")
                && said.contains("data.n: 80 -> 100")
                && said.contains("--recompute"),
            "{extra:?}: {said}"
        );
        assert!(place.dir.join("tiles.f64").exists(), "{extra:?}: left");
    }
    let o = crate::common::command_cli("sweep", &cfg_path, &out, &["--recompute"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        !place.dir.exists(),
        "replaced, then the point's own removed"
    );
}

/// A run killed while writing its first state leaves only a temporary copy of it: no tiles,
/// so the directory is usable (not taken for another's), and finishing removes the copy.
#[test]
fn a_leftover_temporary_state_does_not_block_phase_files() {
    let (n, block) = (40, 16);
    let dir = tempfile::tempdir().unwrap();
    let place = Place::beside(&dir.path().join("run"), true, "c");
    std::fs::create_dir(&place.dir).unwrap();
    let tmp = place.dir.join("phases.json.ntk-tmp-1");
    std::fs::write(&tmp, "{").unwrap();
    let files = PhaseFiles::open(&place, (n, block), Tiled::bytes_for(n, block) as u64)
        .unwrap()
        .expect("a usable place");
    drop(files);
    ntk_probe::phases::finish(&place, (n, block));
    assert!(!place.dir.exists(), "{:?}", std::fs::read_dir(&place.dir));
}

/// Eighty-first hostile round, D1: the tiled route kept its phase files only until its
/// eigenvalues were found, and removed them before the results were moved into `--out`, so a
/// failed move (or a kill in between) lost both. Now the computation leaves them (with the
/// factor) and they are removed only once the results are in place
/// ([`run::settle_phases`], after the output set's commit); another config's are left.
#[test]
fn tiled_phase_files_stay_until_the_results_are_in_place() {
    use ntk_numerics::backend::{Precision, select};
    use ntk_probe::config::ProbeConfig;
    use ntk_probe::run;
    let dir = tempfile::tempdir().unwrap();
    let n = 60;
    let text = tiled_config(n, 5, 16);
    let pcfg = ProbeConfig::parse(&text).unwrap();
    let inputs = ntk_data::inputs::load(&pcfg.data).unwrap();
    let compute = select(None, Precision::F64).unwrap();
    let given = run::Given::read(&pcfg, &inputs, &compute).unwrap();
    let prov = run::provenance(&pcfg, &inputs, &inputs.digest(), &compute, Some(&given));
    let gram = run::gram_spectrum(&inputs).unwrap();
    let out = dir.path().join("out");
    let place = Place::of_run(&out, false, &prov);
    let probed = run::Probed {
        cfg: &pcfg,
        inputs: &inputs,
        compute: &compute,
        net: &given.net,
        gram: &gram,
    };
    run::summarize_tiled(probed, Some(&place)).unwrap();
    assert!(
        place.dir.join("phases.json").exists() && place.dir.join("tiles.f64").exists(),
        "the phase files outlive the computation: {:?}",
        std::fs::read_dir(&place.dir).map(|d| d.count())
    );
    // Another config's results in place: this run's phase files are not theirs to remove.
    let other = provenance_of(&tiled_config(n, 5, 17));
    run::settle_phases(&pcfg, &compute, &out, &other, n);
    assert!(place.dir.join("tiles.f64").exists());
    run::settle_phases(&pcfg, &compute, &out, &prov, n);
    assert!(!place.dir.exists(), "removed once the results are in place");
}

/// Issue 65 items 3 and 13 through the command line: `ntk --resume` over this run's phase
/// files whose tiles are truncated, missing, or altered (one entry x1.5) says so, forms the
/// kernel again and gives the uninterrupted run's summary numbers exactly, exit 0; the phase
/// files are gone afterwards.
#[test]
fn a_resumed_tiled_command_forms_damaged_tiles_again() {
    let dir = tempfile::tempdir().unwrap();
    let n = 150;
    let text = tiled_config(n, 6, 24);
    let cfg = write_file(dir.path(), "tiled.toml", &text);
    let reference = dir.path().join("reference");
    let o = ntk_cli(&cfg, &reference);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = |out: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
    };
    let want = summary(&reference);
    let fingerprint = fingerprint_of(&text);
    for damage in ["truncated", "missing", "scaled"] {
        let out = dir.path().join(damage);
        let place = leave_formed_kernel(&out, &fingerprint, n);
        let tiles = place.dir.join("tiles.f64");
        let mut raw = std::fs::read(&tiles).unwrap();
        match damage {
            "truncated" => std::fs::write(&tiles, &raw[..raw.len() / 3]).unwrap(),
            "missing" => std::fs::remove_file(&tiles).unwrap(),
            _ => {
                let v = f64::from_le_bytes(raw[8..16].try_into().unwrap()) * 1.5;
                raw[8..16].copy_from_slice(&v.to_le_bytes());
                std::fs::write(&tiles, &raw).unwrap();
            }
        }
        let o = ntk_with(&cfg, &out, &["--resume"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{damage}: {err}");
        assert!(
            err.contains("tiles.f64") && err.contains("formed again"),
            "{damage}: {err}"
        );
        let got = summary(&out);
        for key in ["lambda_min", "lambda_max", "kappa", "min_grad_angle_deg"] {
            assert_eq!(got[key], want[key], "{damage}: {key}");
        }
        assert!(!place.dir.exists(), "{damage}: phase files left");
    }
}

/// Issue 65, fifth hostile round: tiles kept beside a valid `phases.json` but missing,
/// truncated or a symbolic link made the dry run say the run continues from them, where the
/// run drops them and starts afresh; the dry run now says what the run does (nothing kept:
/// new), and the run's warning names a symbolic link as one (it read "too many levels of
/// symbolic links").
#[test]
fn a_dry_run_does_not_promise_tiles_the_run_drops() {
    let n = 70;
    let block = ntk_probe::run::TILE;
    for damage in ["missing", "truncated", "link", "intact"] {
        let dir = tempfile::tempdir().unwrap();
        let place = leave_formed_kernel(&dir.path().join("out"), "f", n);
        let tiles = place.dir.join("tiles.f64");
        match damage {
            "missing" => std::fs::remove_file(&tiles).unwrap(),
            "truncated" => {
                let raw = std::fs::read(&tiles).unwrap();
                std::fs::write(&tiles, &raw[..raw.len() - 8]).unwrap();
            }
            "link" => {
                let elsewhere = dir.path().join("elsewhere.f64");
                std::fs::rename(&tiles, &elsewhere).unwrap();
                std::os::unix::fs::symlink(&elsewhere, &tiles).unwrap();
            }
            _ => {}
        }
        let said = ntk_probe::phases::kept(&place, (n, block));
        assert_eq!(said.is_some(), damage == "intact", "{damage}: {said:?}");
        if damage == "link" {
            // Not the run's to read nor to remove (seventy-third hostile round, D4): no
            // phase files are kept, and the link and its target stay.
            let bytes = Tiled::bytes_for(n, block) as u64;
            let files = PhaseFiles::open(&place, (n, block), bytes).unwrap();
            assert!(files.is_none());
            assert!(
                dir.path().join("elsewhere.f64").is_file(),
                "the link's target stays"
            );
            assert!(std::fs::symlink_metadata(&tiles).unwrap().is_symlink());
        }
    }
}

/// The run's words for kept tiles that are a symbolic link (fifth hostile round: it said
/// "Too many levels of symbolic links (os error 40)"), and the link's target stays. The
/// link itself stays too, and a user's `tiles.f64.partial` beside it, with and without
/// `--resume`, the dry run saying what the run does (seventy-third hostile round, D4: both
/// were removed, without a word when not resuming).
#[test]
fn a_linked_tiles_file_is_named_a_link_and_left() {
    for (i, flags) in [&["--resume"][..], &[][..]].into_iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let n = 70;
        let text = tiled_config(n, 5, 16);
        let cfg = write_file(dir.path(), "tiled.toml", &text);
        let out = dir.path().join("out");
        let place = leave_formed_kernel(&out, &fingerprint_of(&text), n);
        let tiles = place.dir.join("tiles.f64");
        let elsewhere = dir.path().join("elsewhere.f64");
        std::fs::rename(&tiles, &elsewhere).unwrap();
        let before = std::fs::read(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &tiles).unwrap();
        let partial = place.dir.join("tiles.f64.partial");
        std::fs::write(&partial, "mine").unwrap();
        let dry = ntk_with(&cfg, &out, &[flags, &["--dry-run"]].concat());
        let dry_err = String::from_utf8_lossy(&dry.stderr);
        assert!(dry.status.success(), "{dry_err}");
        let o = ntk_with(&cfg, &out, flags);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        for e in [&dry_err, &err] {
            assert!(
                e.contains("tiles.f64 is a symbolic link, never followed")
                    && e.contains("without phase files")
                    && !e.contains("levels"),
                "case {i}: {e}"
            );
        }
        assert_eq!(std::fs::read(&elsewhere).unwrap(), before);
        assert!(
            std::fs::symlink_metadata(&tiles).unwrap().is_symlink(),
            "case {i}"
        );
        assert_eq!(
            std::fs::read_to_string(&partial).unwrap(),
            "mine",
            "case {i}"
        );
    }
}

/// `ntk-probe ntk FLAGS --config CFG --out OUT`, its output.
fn ntk_with(cfg: &std::path::Path, out: &std::path::Path, flags: &[&str]) -> std::process::Output {
    probe()
        .arg("ntk")
        .args(flags)
        .arg("--config")
        .arg(cfg)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// The sixty-first hostile round, D4, and the sixty-second, D2: the phase files of a run
/// interrupted under a build before the one recorded form carry the fingerprint of the
/// config as that build recorded it (a NormReLU kink spelled `model.kink`), and this build
/// read the run as `new` and removed them, whether the config is now written in that
/// spelling or another. They are this network's: a dry run with `--resume` says partial,
/// the run continues from them (the kernel's tiles, not formed again) and leaves none.
#[test]
fn an_earlier_builds_phase_files_of_this_config_are_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let n = 120;
    let base = tiled_config(n, 5, 16);
    for (name, now) in [
        ("kink", "activation = \"norm_relu\"\nkink = -1.5"),
        (
            "param",
            "activation = \"norm_relu\"\nactivation_param = -1.5",
        ),
    ] {
        let text = base.replace("activation = \"relu\"", now);
        let cfg = write_file(dir.path(), &format!("{name}.toml"), &text);
        let out = dir.path().join(name);
        // The record of round 59's build: the kink under `model.kink`, no parameter key.
        let mut earlier = provenance_of(&text).config;
        earlier.insert("model.kink".into(), serde_json::json!(-1.5));
        earlier.remove("model.activation_param");
        let earlier = ntk_runs::provenance::fingerprint(&earlier);
        assert_ne!(earlier, fingerprint_of(&text));
        let place = leave_formed_kernel(&out, &earlier, n);
        let o = ntk_with(&cfg, &out, &["--dry-run", "--resume"]);
        let said = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            said.contains("partial") && said.contains("the kernel's tiles"),
            "{name}: {said}"
        );
        // Round 91, N3: tiles with a flipped byte are formed again by the run, so the dry
        // run says new (it hashes tiles up to 1 GB); restored, partial again.
        let tiles = place.dir.join("tiles.f64");
        let bytes = std::fs::read(&tiles).unwrap();
        let mut flipped = bytes.clone();
        flipped[bytes.len() / 2] ^= 1;
        std::fs::write(&tiles, &flipped).unwrap();
        let o = ntk_with(&cfg, &out, &["--dry-run", "--resume"]);
        let said = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            said.contains("new") && !said.contains("the kernel's tiles"),
            "{name}: {said}"
        );
        // Ninety-second, N9: and why, in the run's words.
        let warned = String::from_utf8_lossy(&o.stderr);
        assert!(
            warned.contains("tiles.f64: its content does not match the SHA-256")
                && warned.contains("not used: the kernel is formed again"),
            "{name}: {warned}"
        );
        std::fs::write(&tiles, &bytes).unwrap();
        let o = ntk_with(&cfg, &out, &["--resume"]);
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{said}");
        assert!(
            said.contains("the kernel's tiles") && !said.contains("nothing yet"),
            "{name}: {said}"
        );
        assert!(
            !place.dir.exists(),
            "the run's phase files are removed once done"
        );
    }
}

/// Eighty-first hostile round, D5, and eighty-eighth, D1: a run of another route (here
/// `eigen = "full"`) into the `--out` of an interrupted tiled run left that run's phase
/// files beside its results without a word (D5), then removed them, that run's resumable
/// state, with a note only (D1). Now a run that would remove them is refused without
/// `--recompute`, dry run and run alike, naming them and the keys that differ; under
/// `NTK_PHASE_FILES=0` they are said and left; beside results `--resume` keeps they are
/// said and left; with `--recompute` they are said and removed once the results are in.
#[test]
fn a_run_of_another_route_is_refused_where_it_would_remove_a_tiled_runs_phase_files() {
    let dir = tempfile::tempdir().unwrap();
    let n = 60;
    let tiled = tiled_config(n, 5, 16);
    let dense = tiled.replace("eigen = \"tiled\"", "eigen = \"full\"");
    let cfg = write_file(dir.path(), "dense.toml", &dense);
    let out = dir.path().join("out");
    let place = leave_formed_kernel_of(&out, &provenance_of(&tiled), n);
    let run = |extra: &[&str], env: Option<&str>| {
        let mut c = probe();
        c.args(["ntk", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(&out)
            .args(extra);
        if let Some(v) = env {
            c.env(ntk_probe::phases::PHASE_FILES, v);
        }
        let o = c.output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    for flags in [&["--dry-run"][..], &[][..], &["--resume"][..]] {
        let (rc, said) = run(flags, None);
        assert_eq!(rc, Some(2), "{flags:?}: {said}");
        assert!(
            said.contains(".out.phases: another run's phase files")
                && said.contains("probe.eigen: \"tiled\" -> \"full\" (the default)")
                && said.contains("pass --recompute to replace them"),
            "{flags:?}: {said}"
        );
        assert!(place.dir.join("tiles.f64").exists(), "{flags:?}: left");
    }
    let (rc, said) = run(&[], Some("0"));
    assert_eq!(rc, Some(0), "{said}");
    assert!(said.contains("neither used nor removed"), "{said}");
    assert!(place.dir.join("tiles.f64").exists(), "NTK_PHASE_FILES=0");
    // Beside kept results (`--resume` of the finished dense run): said and left, by the dry
    // run and the run, the results as they were.
    let summary = std::fs::read(out.join("summary.json")).unwrap();
    for flags in [&["--resume", "--dry-run"][..], &["--resume"][..]] {
        let (rc, said) = run(flags, None);
        assert_eq!(rc, Some(0), "{flags:?}: {said}");
        assert!(
            said.contains("another run's phase files")
                && said.contains("left as they are beside the kept results"),
            "{flags:?}: {said}"
        );
        assert!(place.dir.join("tiles.f64").exists(), "{flags:?}: left");
    }
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), summary);
    // With --recompute: the dry run says the run removes them, the run removes them once
    // its results are in place.
    let (rc, said) = run(&["--recompute", "--dry-run"], None);
    assert_eq!(rc, Some(0), "{said}");
    assert!(said.contains("the run removes them"), "{said}");
    assert!(
        place.dir.join("tiles.f64").exists(),
        "a dry run changes nothing"
    );
    let (rc, said) = run(&["--recompute"], None);
    assert_eq!(rc, Some(0), "{said}");
    assert!(
        said.contains("a probe's phase files") && said.contains("removed"),
        "{said}"
    );
    assert!(!place.dir.exists(), "removed with the results in place");
    assert!(out.join("summary.json").exists());
}

/// Eighty-first hostile round, D3: with a bare `--out` name the phase files' place is
/// `.o.phases`, whose parent is the empty path, and the disk under it was never asked:
/// `NTK_PHASE_FILES=1` did not refuse a full disk and the unset mode wrote until it was full.
/// The working directory's disk is asked now (no disk holds `u64::MAX` bytes).
#[test]
fn a_bare_out_names_disk_is_asked_for_room() {
    let place = Place::beside(std::path::Path::new("no-such-out-81"), false, "c");
    assert_eq!(place.dir, std::path::Path::new(".no-such-out-81.phases"));
    let note = ntk_probe::phases::unkept(&place, (10, 4), u64::MAX)
        .expect("the working directory's disk cannot hold u64::MAX bytes");
    assert!(note.contains("the disk has"), "{note}");
    assert!(!place.dir.exists(), "nothing made");
}

/// Eighty-second hostile round, D1 and D2. D1: this run's finished phases in a directory it
/// may read but not write (another user's) were dropped at `open` ("cannot write
/// phases.json") and the kernel formed and factored again, though the dry run said the run
/// continues from them; they are now used as they are, nothing written there. D2: "removed"
/// was said of phase files that stayed; what cannot be removed is now said with why. As
/// root no permission stops a write, so a directory where the run's temporary copy of the
/// state must go (`phases.json.ntk-tmp-PID`) stands for the directory it may not write.
#[test]
fn phase_files_that_cannot_be_written_are_read_and_said() {
    let n = 40;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let place = leave_formed_kernel(&out, "config R", n);
    let blocker = place
        .dir
        .join(format!("phases.json.ntk-tmp-{}", std::process::id()));
    std::fs::create_dir(&blocker).unwrap();
    std::fs::write(blocker.join("x"), "").unwrap();
    let bytes = Tiled::bytes_for(n, ntk_probe::run::TILE) as u64;
    let mut files = PhaseFiles::open(&place, (n, ntk_probe::run::TILE), bytes)
        .unwrap()
        .expect("this run's phases, read");
    assert_eq!(files.held(), Some(Held::Kernel));
    let zeros = vec![0.0; n * n];
    let mut tiles = Tiled::from_dense(&zeros, n, ntk_probe::run::TILE);
    assert!(files.load(&mut tiles), "the kept kernel is read back");
    drop(files);
    assert!(place.dir.join("tiles.f64").exists(), "nothing removed");
    // D2: phase files that cannot all be removed are said, not "removed": beside kept
    // results of their config, and beside a run of another route.
    let kept = ntk_probe::phases::drop_when_kept(&place, true).expect("this config's");
    assert!(
        kept.contains("not removed") && kept.contains("phases.json.ntk-tmp-"),
        "{kept}"
    );
    std::fs::remove_dir_all(&blocker).unwrap();
    let place = leave_formed_kernel(&out, "config R", n);
    std::fs::create_dir(&blocker).unwrap();
    std::fs::write(blocker.join("x"), "").unwrap();
    let note = ntk_probe::phases::unused(&out, true).expect("a probe's phase files");
    assert!(
        note.contains("not removed") && note.contains("phases.json.ntk-tmp-"),
        "{note}"
    );
    std::fs::remove_dir_all(&blocker).unwrap();
    assert!(!place.dir.join("tiles.f64").exists());
}

/// Eighty-second hostile round, D6: a finished tiled set of one config, and the phase files
/// an interrupted `--recompute` of another config left beside it. That config's
/// `--recompute --resume --dry-run` said "it would be computed again" where the run
/// continued from the phase files, and `--recompute --dry-run` the same where the run
/// removed them; each dry run now says which.
#[test]
fn a_stale_sets_dry_run_says_what_its_phase_files_make_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let n = 60;
    let first = tiled_config(n, 5, 16);
    let second = tiled_config(n, 5, 17);
    let cfg1 = write_file(dir.path(), "first.toml", &first);
    let cfg2 = write_file(dir.path(), "second.toml", &second);
    let out = dir.path().join("out");
    let o = ntk_cli(&cfg1, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let place = leave_formed_kernel(&out, &fingerprint_of(&second), n);
    let dry = |extra: &[&str]| {
        let o = probe()
            .args(["ntk", "--dry-run", "--recompute", "--config"])
            .arg(&cfg2)
            .arg("--out")
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let resumed = dry(&["--resume"]);
    assert!(
        resumed.contains("stale")
            && resumed.contains("continuing from phase files in")
            && resumed.contains(".out.phases"),
        "{resumed}"
    );
    let afresh = dry(&[]);
    assert!(
        afresh.contains("stale") && afresh.contains("afresh, removing phase files in"),
        "{afresh}"
    );
    assert!(
        place.dir.join("tiles.f64").exists(),
        "a dry run changes nothing"
    );
}

/// Eighty-second hostile round, D12, and eighty-eighth, D1: a tiled run removed another
/// config's resumable phase files beside its `--out` (to keep its own), first without a word
/// (D12), then with a note only, `--resume` or not (D1: a typo in `--set data.n=50` discarded
/// an interrupted run's tiles). Now the dry run and the run are refused without
/// `--recompute`, naming the keys that differ (or, for files that record no config, the
/// inputs); with it both say the run removes them, and it does.
#[test]
fn a_tiled_run_is_refused_where_it_would_remove_another_runs_phase_files() {
    let dir = tempfile::tempdir().unwrap();
    let n = 60;
    let text = tiled_config(n, 5, 16);
    let cfg = write_file(dir.path(), "tiled.toml", &text);
    let out = dir.path().join("out");
    let said = |extra: &[&str]| {
        let o = probe()
            .args(["ntk", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    // Another n's, recording their config; another config's of an earlier build, not.
    let other = text.replace("n = 60", "n = 50");
    let leave: [(&dyn Fn() -> Place, &str); 2] = [
        (
            &|| leave_formed_kernel_of(&out, &provenance_of(&other), 50),
            "data.n: 50 -> 60",
        ),
        (
            &|| leave_formed_kernel(&out, "another config", n),
            "of another config)",
        ),
    ];
    for (leave, key) in leave {
        let place = leave();
        for flags in [
            &["--dry-run"][..],
            &[][..],
            &["--resume", "--dry-run"][..],
            &["--resume"][..],
        ] {
            let (rc, words) = said(flags);
            assert_eq!(rc, Some(2), "{flags:?}: {words}");
            assert!(
                words.contains(".out.phases: another run's phase files")
                    && words.contains(key)
                    && words.contains("pass --recompute to replace them"),
                "{flags:?}: {words}"
            );
            assert!(place.dir.join("tiles.f64").exists(), "{flags:?}: left");
        }
    }
    let (rc, dry) = said(&["--recompute", "--dry-run"]);
    assert_eq!(rc, Some(0), "{dry}");
    assert!(
        dry.contains("another run's phase files") && dry.contains("which this run removes"),
        "{dry}"
    );
    let (rc, ran) = said(&["--recompute"]);
    assert_eq!(rc, Some(0), "{ran}");
    assert!(ran.contains("another run's phase files"), "{ran}");
    assert!(
        !dir.path().join(".out.phases").exists(),
        "the run's own removed at its end, the other's at its start"
    );
}

/// A change to the system a test makes at a directory and undoes when dropped, even by a
/// failing assertion: the command `undo` (its arguments, then the directory) is run then.
pub(crate) struct Undone {
    dir: std::path::PathBuf,
    undo: &'static [&'static str],
}

impl Undone {
    /// Runs `apply` (its arguments, then `dir`), which the test needs (`what`).
    fn apply(
        apply: &[&str],
        dir: &std::path::Path,
        undo: &'static [&'static str],
        what: &str,
    ) -> Self {
        let ok = std::process::Command::new(apply[0])
            .args(&apply[1..])
            .arg(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "{what} is needed for this test");
        Self {
            dir: dir.to_path_buf(),
            undo,
        }
    }
}

impl Drop for Undone {
    fn drop(&mut self) {
        let _ = std::process::Command::new(self.undo[0])
            .args(&self.undo[1..])
            .arg(&self.dir)
            .output();
    }
}

/// `chattr +i` on a directory while it lives: as root no permission stops a write, an
/// immutable directory does (it stands for another user's).
pub(crate) struct Immutable;

impl Immutable {
    pub(crate) fn set(dir: &std::path::Path) -> Undone {
        Undone::apply(&["chattr", "+i"], dir, &["chattr", "-i"], "chattr +i")
    }
}

/// Eighty-third hostile round, D4 and D6. This config's phase files in a directory the run
/// may read but not write: under `NTK_PHASE_FILES=1` the dry runs planned them (partial,
/// or afresh "removing" them) where the runs refused; unset, the dry run without `--resume`
/// said "removing" them where the run could not and left them. Under `NTK_PHASE_FILES=0`
/// the dry run said nothing of them where the run notes them. Each dry run now says what
/// its run does.
#[test]
fn a_dry_run_says_what_unwritable_or_unused_phase_files_make_of_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let n = 60;
    let text = tiled_config(n, 5, 16);
    let cfg = write_file(dir.path(), "tiled.toml", &text);
    let out = dir.path().join("out");
    let place = leave_formed_kernel(&out, &fingerprint_of(&text), n);
    let with = |env: Option<&str>, flags: &[&str]| {
        let mut c = probe();
        c.arg("ntk")
            .args(flags)
            .arg("--config")
            .arg(&cfg)
            .arg("--out")
            .arg(&out);
        match env {
            Some(v) => c.env("NTK_PHASE_FILES", v),
            None => c.env_remove("NTK_PHASE_FILES"),
        };
        let o = c.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (o.status.code(), text)
    };
    // D6: NTK_PHASE_FILES=0, with --resume: said by the dry run as by the run.
    for flags in [&["--resume", "--dry-run"][..], &["--dry-run"][..]] {
        let (rc, said) = with(Some("0"), flags);
        assert_eq!(rc, Some(0), "{said}");
        assert!(
            said.contains(".out.phases: earlier phase files, neither used nor removed"),
            "{flags:?}: {said}"
        );
    }
    let frozen = Immutable::set(&place.dir);
    // D4: NTK_PHASE_FILES=1 refuses, dry run and run, with --resume and without.
    for flags in [
        &["--resume", "--dry-run"][..],
        &["--dry-run"][..],
        &["--resume"][..],
        &[][..],
    ] {
        let (rc, said) = with(Some("1"), flags);
        assert_eq!(rc, Some(2), "{flags:?}: {said}");
        assert!(
            said.contains("NTK_PHASE_FILES") && said.contains("no phase files can be kept"),
            "{flags:?}: {said}"
        );
    }
    // Unset: with --resume, the finished phases are used as they are.
    let (rc, said) = with(None, &["--resume", "--dry-run"]);
    assert_eq!(rc, Some(0), "{said}");
    assert!(
        said.contains("partial") && said.contains("used as they are"),
        "{said}"
    );
    // Without it, the dry run says they are left, not removed, and the run leaves them.
    let (rc, said) = with(None, &["--dry-run"]);
    assert_eq!(rc, Some(0), "{said}");
    assert!(
        said.contains("afresh, leaving phase files in")
            && !said.contains("removing")
            && said.contains("goes on without phase files"),
        "{said}"
    );
    let (rc, said) = with(None, &[]);
    assert_eq!(rc, Some(0), "{said}");
    assert!(said.contains("were not removed"), "{said}");
    drop(frozen);
    assert!(place.dir.join("tiles.f64").exists(), "left as said");
}

/// Eighty-fourth hostile round, D6: a tiled run wrote its phase files into whatever stood
/// at `.<out>.phases`, an output set of the probe's named so included, and its dry run said
/// nothing. A directory holding any file that is not phase files is said and left, by the
/// dry run as by the run, which goes on without phase files.
#[test]
fn a_directory_of_other_files_at_the_phase_place_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let n = 60;
    let cfg = write_file(dir.path(), "tiled.toml", &tiled_config(n, 5, 16));
    let out = dir.path().join("out");
    let place = dir.path().join(".out.phases");
    std::fs::create_dir(&place).unwrap();
    std::fs::write(place.join("summary.json"), "{}").unwrap();
    std::fs::write(place.join("ntk.npy"), "x").unwrap();
    for flags in [&["--dry-run"][..], &[][..]] {
        let o = ntk_with(&cfg, &out, flags);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert!(
            err.contains(".out.phases: holds ntk.npy, summary.json, and no phases.json")
                && err.contains("goes on without phase files"),
            "{flags:?}: {err}"
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(&place)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["ntk.npy", "summary.json"], "nothing written there");
}

/// Eighty-fifth hostile round, D10: this config's phase files beside its kept results (a
/// killed run finished under `NTK_PHASE_FILES=0`) were removed by `--resume` without a word
/// from its dry run, and a sweep never removed or said them beside a `done` point. Both dry
/// runs say the run removes them; the runs remove them and say so.
#[test]
fn phase_files_beside_kept_results_are_said_by_the_dry_run_and_removed() {
    use ntk_numerics::backend::{Precision, select};
    use ntk_probe::run;
    use ntk_probe::sweep::SweepConfig;
    let dir = tempfile::tempdir().unwrap();
    let n = 60;
    let text = tiled_config(n, 5, 16);
    let cfg = write_file(dir.path(), "tiled.toml", &text);
    let out = dir.path().join("out");
    let o = ntk_with(&cfg, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let place = leave_formed_kernel(&out, &fingerprint_of(&text), n);
    let o = ntk_with(&cfg, &out, &["--resume", "--dry-run"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success()
            && err.contains("this config's phase files")
            && err.contains("the run removes them"),
        "{err}"
    );
    assert!(place.dir.exists(), "a dry run changes nothing");
    let o = ntk_with(&cfg, &out, &["--resume"]);
    assert!(o.status.success());
    assert!(!place.dir.exists());

    // A sweep's done point.
    let sweep_text = format!(
        "[sweep]\ndepths = [2]\nactivations = [\"relu\"]\nseeds = [1]\nprotocols = [\"whole\"]\n\
         out = \"unused\"\ntheory = false\n[data]\ndataset = \"synthetic\"\nn = {n}\n\
         input_dim = 5\n[model]\nwidth = 16\ndepth = 1\nactivation = \"relu\"\n[probe]\n\
         precision = \"f64\"\neigen = \"tiled\"\n"
    );
    let sweep_cfg = write_file(dir.path(), "sweep.toml", &sweep_text);
    let sweep_out = dir.path().join("sweep");
    let sweep = |extra: &[&str]| {
        probe()
            .arg("sweep")
            .args(extra)
            .arg("--config")
            .arg(&sweep_cfg)
            .arg("--out")
            .arg(&sweep_out)
            .output()
            .unwrap()
    };
    assert!(sweep(&[]).status.success());
    let parsed = SweepConfig::parse(&sweep_text).unwrap();
    let point = &parsed.points()[0];
    let pcfg = parsed.point_config(point, ntk_probe::config::Protocol::Whole);
    let inputs = ntk_data::inputs::load(&pcfg.data).unwrap();
    let compute = select(None, Precision::F64).unwrap();
    let prov = run::provenance(&pcfg, &inputs, &inputs.digest(), &compute, None);
    let place = leave_formed_kernel(&point.dir(&sweep_out), &prov.fingerprint, n);
    for (extra, gone) in [(&["--dry-run"][..], false), (&[][..], true)] {
        let o = sweep(extra);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{all}");
        assert!(
            all.contains("this config's phase files"),
            "{extra:?}: {all}"
        );
        assert_eq!(!place.dir.exists(), gone, "{extra:?}: {all}");
    }
}

/// Eighty-sixth hostile round, D3: a run without `--resume` over a finished set, beside this
/// config's own phase files, removed them without a word from it or its dry run. Both say it.
#[test]
fn a_finished_set_computed_again_says_its_phase_files() {
    let dir = tempfile::tempdir().unwrap();
    let n = 60;
    let text = tiled_config(n, 5, 16);
    let cfg = write_file(dir.path(), "tiled.toml", &text);
    let out = dir.path().join("out");
    assert!(ntk_with(&cfg, &out, &[]).status.success());
    let place = leave_formed_kernel(&out, &fingerprint_of(&text), n);
    let o = ntk_with(&cfg, &out, &["--dry-run"]);
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && plan.contains("afresh, removing phase files in"),
        "{plan}"
    );
    // Eighty-seventh hostile round, D1: beside kept results `--resume` keeps them and
    // removes the phase files; it does not continue from them.
    assert!(
        plan.contains("--resume keeps the finished results and removes them")
            && !plan.contains("continues from them"),
        "{plan}"
    );
    let resumed = ntk_with(&cfg, &out, &["--resume", "--dry-run"]);
    let said = String::from_utf8_lossy(&resumed.stdout).into_owned()
        + &String::from_utf8_lossy(&resumed.stderr);
    assert!(
        said.contains("--resume keeps it") && said.contains("the run removes them"),
        "{said}"
    );
    assert!(place.dir.exists(), "a dry run changes nothing");
    let o = ntk_with(&cfg, &out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && err.contains("not used by a run without --resume"),
        "{err}"
    );
    assert!(!place.dir.exists());
}

/// A tmpfs mounted at a directory while it lives (root only, as `chattr` above): a disk of a
/// given size, to fill.
struct Tmpfs;

impl Tmpfs {
    fn mount(dir: &std::path::Path, size: &str) -> Undone {
        let size = format!("size={size}");
        let apply = ["mount", "-t", "tmpfs", "-o", &size, "tmpfs"];
        Undone::apply(&apply, dir, &["umount", "-l"], "mounting a tmpfs")
    }
}

/// Fills the disk under `dir` with one file, then frees `room` bytes of it.
fn fill_leaving(dir: &std::path::Path, room: u64) {
    use std::io::Write;
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let chunk = vec![0u8; 4096];
    while f.write_all(&chunk).is_ok() {}
    let len = f.metadata().unwrap().len();
    f.set_len(len.saturating_sub(room)).unwrap();
}

/// Eighty-seventh hostile round, D3: where the disk holds the phase files but not the results
/// beside them, the run removes its phase files, says so, and writes the results (every run
/// and `--resume` failed to write `inputs.npy`, the tiles kept); and a disk that could not
/// hold both is given no phase files up front, the room counted with the results.
#[test]
fn phase_files_give_way_to_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let disk = dir.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let _mounted = Tmpfs::mount(&disk, "1m");
    let n = 155;
    let text = tiled_config(n, 5, 32);
    let cfg = write_file(dir.path(), "tiled.toml", &text);
    let out = disk.join("out");
    let place = leave_formed_kernel(&out, &fingerprint_of(&text), n);
    fill_leaving(&disk, 4096);
    let o = ntk_with(&cfg, &out, &["--resume"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("could not be written beside the run's phase files")
            && err.contains("removed them to make room"),
        "{err}"
    );
    assert!(out.join("summary.json").is_file() && out.join("inputs.npy").is_file());
    assert!(!place.dir.exists());
    // Room for the tiles (192 KB) but not for the results beside them: none kept.
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_file(disk.join("filler")).unwrap();
    let tiles = Tiled::bytes_for(n, ntk_probe::run::TILE) as u64;
    fill_leaving(&disk, tiles + 8192);
    let o = ntk_with(&cfg, &out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("the tiles and the results beside them need"),
        "{err}"
    );
    assert!(!place.dir.exists() && out.join("summary.json").is_file());
    // Eighty-eighth hostile round, D7: results that would not fit without the phase files
    // either (a wide network's saved weights, about 0.5 MB) leave them for `--resume`.
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_file(disk.join("filler")).unwrap();
    let wide = tiled_config(n, 5, 256);
    let wide_cfg = write_file(dir.path(), "wide.toml", &wide);
    let place = leave_formed_kernel(&out, &fingerprint_of(&wide), n);
    fill_leaving(&disk, 4096);
    let o = ntk_with(&wide_cfg, &out, &["--resume", "--save-weights"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("would not fit without the run's phase files either")
            && err.contains("kept for --resume"),
        "{err}"
    );
    assert!(place.dir.join("tiles.f64").is_file());
}

/// Ninety-sixth hostile round, D4: a tiled run removed another user's phase files (root's,
/// met by `nobody` in a shared directory), with `--recompute` of another config and after a
/// `--resume` of the same. Files of another user at the phase place are neither used nor
/// removed, dry run and run, `--recompute` or not: the run goes on without phase files.
/// As root: the files given to user 65534.
#[test]
fn another_users_phase_files_are_neither_used_nor_removed() {
    let uid = std::process::Command::new("id").arg("-u").output().unwrap();
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return; // giving a file to another user needs root
    }
    let dir = tempfile::tempdir().unwrap();
    let n = 60;
    let text = tiled_config(n, 5, 16);
    let cfg = write_file(dir.path(), "tiled.toml", &text);
    let out = dir.path().join("out");
    let place = leave_formed_kernel_of(&out, &provenance_of(&text), n);
    let mut sums = Vec::new();
    for e in std::fs::read_dir(&place.dir).unwrap().flatten() {
        std::os::unix::fs::chown(e.path(), Some(65534), None).unwrap();
        sums.push((e.path(), std::fs::read(e.path()).unwrap()));
    }
    for flags in [
        &["--dry-run"][..],
        &["--resume"][..],
        &["--recompute", "--set", "model.seed=2"][..],
    ] {
        let o = ntk_with(&cfg, &out, flags);
        let words = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{flags:?}: {words}");
        assert!(
            words.contains("a file of user 65534") && words.contains("theirs to resume or remove"),
            "{flags:?}: {words}"
        );
        for (path, bytes) in &sums {
            assert_eq!(
                &std::fs::read(path).unwrap(),
                bytes,
                "{flags:?}: {path:?} kept"
            );
        }
    }
}

/// The hundredth hostile round, D1: a tiled run that refuses its kernel (six inputs of norm
/// 5.6e153: every entry finite, lambda_max past f64's range) left its phase files, with a
/// `phases.json` holding `null` that no later run could read, so that they stayed for good.
/// Now the refusal removes them (a resume would refuse again), nothing is written, and the
/// remedy's run (the inputs rescaled) into the same `--out` succeeds and leaves none.
#[test]
fn a_refused_kernel_leaves_no_phase_files() {
    let dir = tempfile::tempdir().unwrap();
    let unit = [
        [-0.49397787, -0.81578552, -0.15298708, 0.25898804],
        [0.76178941, 0.07356492, -0.37058418, -0.52624373],
        [0.34073916, 0.74395692, 0.12413159, -0.5612631],
        [-0.37529179, 0.62662613, 0.0794562, -0.67836751],
        [-0.05926736, -0.82370931, -0.44561459, -0.34556909],
        [-0.66046041, 0.51237589, -0.05841162, -0.54575734],
    ];
    let rows = |scale: f64| -> Vec<f64> {
        unit.iter()
            .flat_map(|r| {
                let norm = r.iter().map(|v| v * v).sum::<f64>().sqrt();
                r.iter().map(move |v| v / norm * scale)
            })
            .collect()
    };
    let config = |x: &str| {
        let cfg = dir.path().join(format!("{x}.toml"));
        let text = format!(
            "[data]\ndataset = \"file\"\nx = \"{}\"\n[model]\nwidth = 16\ndepth = 2\n\
             activation = \"relu\"\n[probe]\nprecision = \"f64\"\neigen = \"tiled\"\n",
            dir.path().join(format!("{x}.npy")).display()
        );
        std::fs::write(&cfg, text).unwrap();
        cfg
    };
    ntk_files::npy::write_f64(&dir.path().join("big.npy"), &rows(5.6e153), &[6, 4]).unwrap();
    ntk_files::npy::write_f64(&dir.path().join("one.npy"), &rows(1.0), &[6, 4]).unwrap();
    let out = dir.path().join("out");
    let phases = dir.path().join(".out.phases");

    let refused = ntk_with(&config("big"), &out, &[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("past f64's largest number"), "{stderr}");
    assert!(!out.exists() && !phases.exists(), "{stderr}");

    let remedy = ntk_with(&config("one"), &out, &[]);
    let stderr = String::from_utf8_lossy(&remedy.stderr);
    assert!(remedy.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(out.join("summary.json").exists() && !phases.exists());
}
