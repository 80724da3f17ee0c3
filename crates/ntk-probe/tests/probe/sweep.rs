//! Sweeps: shards are disjoint and cover the grid, a restarted sweep skips finished points,
//! and `collect` writes one results row per point and protocol plus the figures.

use std::path::Path;
use std::process::Command;

use ntk_probe::sweep::{self, Point, Setting, SweepConfig, SweepOptions};
use ntk_runs::sweep::Shard;

fn flex() -> SweepOptions {
    SweepOptions {
        backend: Some("flex".into()),
        ..SweepOptions::default()
    }
}

const CONFIG: &str = r#"
[sweep]
depths = [0, 1, 2]
activations = ["relu", "linear"]
seeds = [1, 2]
protocols = ["whole", "blocks"]
out = "unused"
theory = true

[data]
dataset = "synthetic"
n = 30
input_dim = 4

[model]
width = 16
depth = 1
activation = "relu"

[probe]
precision = "f64"
block_size = 16
"#;

#[test]
fn shards_resume_and_collect() {
    let dir = tempfile::tempdir().unwrap();
    let cfg_path = dir.path().join("sweep.toml");
    std::fs::write(&cfg_path, CONFIG).unwrap();
    let cfg = SweepConfig::load(&cfg_path).unwrap();
    let out = dir.path().join("out");
    assert_eq!(cfg.points().len(), 12);

    let (a, _) = sweep::run_sweep(&cfg, &out, Shard::parse("0/2").unwrap(), &flex())
        .unwrap()
        .counts();
    let (b, skipped) = sweep::run_sweep(&cfg, &out, Shard::parse("1/2").unwrap(), &flex())
        .unwrap()
        .counts();
    assert_eq!(
        (a, b, skipped),
        (6, 6, 0),
        "shards are disjoint and cover the grid"
    );
    // A restart skips everything that finished.
    let (ran, skipped) = sweep::run_sweep(&cfg, &out, Shard::all(), &flex())
        .unwrap()
        .counts();
    assert_eq!((ran, skipped), (0, 12));
    // Removing one summary makes exactly that point run again.
    std::fs::remove_file(out.join("runs/relu/depth02/seed2/blocks/summary.json")).unwrap();
    let (ran, skipped) = sweep::run_sweep(&cfg, &out, Shard::all(), &flex())
        .unwrap()
        .counts();
    assert_eq!((ran, skipped), (1, 11));

    // Every blocks point keeps its block membership; whole-set points have none.
    let point = out.join("runs/relu/depth02/seed1");
    let rows = ntk_probe::blocks::read(&point.join("blocks")).unwrap();
    assert_eq!(rows.iter().map(|r| r.size).sum::<usize>(), 30);
    assert!(!point.join("whole/blocks.csv").exists());
    let groups = sweep::collect(Some(&cfg), &out, None, false).unwrap();
    assert_eq!(groups.len(), 2 * 2 * 3, "protocol x activation x depth");
    let results = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(results.lines().count(), 1 + 12 * 2);
    for f in [
        "summary.csv",
        "min_grad_angle_vs_depth.png",
        "min_grad_angle_vs_depth.svg",
        "kappa_vs_depth_whole.png",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    // The linear network on n = 30 > d = 4 points is singular at every depth.
    for g in groups.iter().filter(|g| g.activation == "linear") {
        assert_eq!(g.singular, g.seeds, "{g:?}");
        assert!(g.kappa_mean.is_infinite());
    }
    // ReLU at depth >= 1 separates them: finite kappa, theory beside it.
    let relu2 = groups
        .iter()
        .find(|g| g.activation == "relu" && g.depth == 2 && g.protocol == "whole")
        .unwrap();
    assert!(
        relu2.kappa_mean.is_finite()
            && relu2.theory_kappa.is_some()
            && relu2.theory_min_grad_angle_deg.is_some()
    );
    assert!(Shard::parse("2/2").is_err() && Shard::parse("x").is_err());

    // `plot` redraws the figures from the two tables alone, leaving the tables as they are.
    let tables = |f: &str| std::fs::read(out.join(f)).unwrap();
    let (summary, results) = (tables("summary.csv"), tables("results.csv"));
    std::fs::remove_dir_all(out.join("runs")).unwrap();
    for f in [
        "min_grad_angle_vs_depth",
        "kappa_vs_depth_whole",
        "kappa_vs_depth_blocks",
    ] {
        std::fs::remove_file(out.join(f).with_extension("png")).unwrap();
    }
    let stems = sweep::redraw(&out, &out, None, ntk_plot::Layout::Screen)
        .unwrap()
        .stems;
    assert_eq!(stems.len(), 3, "{stems:?}");
    for stem in &stems {
        for ext in ["png", "svg", "pdf"] {
            assert!(
                stem.with_extension(ext).exists(),
                "{}.{ext}",
                stem.display()
            );
        }
    }
    // The same figures for a paper's column: 510 units across, 244.8 pt in the PDF.
    let column = sweep::redraw(&out, &out, None, ntk_plot::Layout::Column)
        .unwrap()
        .stems;
    assert_eq!(column, stems);
    let pdf = std::fs::read(out.join("kappa_vs_depth_whole.pdf")).unwrap();
    assert!(String::from_utf8_lossy(&pdf).contains("/MediaBox [0 0 244.8 "));
    let svg = std::fs::read_to_string(out.join("kappa_vs_depth_whole.svg")).unwrap();
    assert!(svg.contains("width=\"510\""));
    sweep::redraw(&out, &out, None, ntk_plot::Layout::Screen).unwrap();
    let svg = std::fs::read_to_string(out.join("kappa_vs_depth_whole.svg")).unwrap();
    assert!(
        svg.contains("Synthetic N(0, I_")
            && svg.contains(": NTK condition number")
            && svg.contains('κ')
    );
    assert!(
        svg.contains("min to max over the seeds"),
        "the band says what it is"
    );
    // `--title` replaces each figure's title (`{what}`: what the figure shows), `""` draws
    // none, and `--out` puts the figures elsewhere, leaving the sweep's own as they were.
    let elsewhere = out.join("paper");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let before = std::fs::read(out.join("kappa_vs_depth_whole.svg")).unwrap();
    sweep::redraw(
        &out,
        &elsewhere,
        Some("{what}, 2 seeds"),
        ntk_plot::Layout::Screen,
    )
    .unwrap();
    let svg = std::fs::read_to_string(elsewhere.join("kappa_vs_depth_whole.svg")).unwrap();
    assert!(
        svg.contains("\nNTK condition number (whole set), 2 seeds\n"),
        "{svg}"
    );
    assert!(!svg.contains("synthetic:"));
    assert_eq!(
        std::fs::read(out.join("kappa_vs_depth_whole.svg")).unwrap(),
        before
    );
    sweep::redraw(&out, &elsewhere, Some(""), ntk_plot::Layout::Screen).unwrap();
    let svg = std::fs::read_to_string(elsewhere.join("min_grad_angle_vs_depth.svg")).unwrap();
    assert!(!svg.contains("model-gradient angle"), "no title: {svg}");
    assert_eq!(
        (tables("summary.csv"), tables("results.csv")),
        (summary, results)
    );
    // Without its tables there is nothing to redraw, and the error names the file.
    std::fs::remove_file(out.join("results.csv")).unwrap();
    let e = sweep::redraw(&out, &out, None, ntk_plot::Layout::Screen)
        .unwrap_err()
        .to_string();
    assert!(e.contains("results.csv") && e.contains("missing"), "{e}");
}

#[test]
fn theory_subcommand_prints_phi() {
    let out = Command::new(env!("CARGO_BIN_EXE_ntk-probe"))
        .args(["theory", "--theta-deg", "5", "--depth", "10", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        (v["phi_deg"].as_f64().unwrap() - 28.913).abs() < 6e-4,
        "{v}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_ntk-probe"))
        .args(["theory", "--theta-deg", "60", "--depth", "1:10:9"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "theta_in_deg,depth,activation,phi_deg");
    assert!(
        lines[1].ends_with("61.890") || lines[1].contains("61.89"),
        "{text}"
    );
    assert!(lines[2].contains("68.06"), "{text}");
}

/// A sweep shares work across a seed's depths (the deepest network truncated, its forward and
/// Grams reused, buffers pooled): every point must still be the standalone probe's result,
/// to the last bit, as read back from its summary.json (serde_json's exact float parsing).
#[test]
fn sweep_points_equal_standalone_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg_path = dir.path().join("sweep.toml");
    let config = CONFIG
        .replace("depths = [0, 1, 2]", "depths = [0, 1, 3]")
        .replace(
            "protocols = [\"whole\", \"blocks\"]",
            "protocols = [\"whole\"]",
        )
        // No blocks: a block size would not apply (and is refused).
        .replace("block_size = 16\n", "")
        .replace("theory = true", "theory = false")
        .replace("width = 16", "width = 24");
    std::fs::write(&cfg_path, config).unwrap();
    let cfg = SweepConfig::load(&cfg_path).unwrap();
    let out = dir.path().join("out");
    sweep::run_sweep(&cfg, &out, Shard::all(), &flex()).unwrap();
    let swept = sweep::read_summaries(&out).unwrap();
    assert_eq!(swept.len(), 12);

    let compute = ntk_numerics::backend::select(Some("flex"), cfg.probe.precision).unwrap();
    let inputs = ntk_data::inputs::load(&cfg.data).unwrap();
    for s in &swept {
        let activation =
            ntk_model::ActivationKind::parse(&s.activation).expect("an activation name");
        let point = Point {
            setting: Setting::default(),
            activation,
            depth: s.depth,
            seed: s.seed,
        };
        let pcfg = cfg.probe_config(&point);
        let alone = ntk_probe::run::run(
            &pcfg,
            &inputs,
            &compute,
            ntk_probe::run::Given::read(&pcfg, &inputs, &compute).unwrap(),
            None,
            (false, false),
        )
        .unwrap();
        let what = format!("{} depth {} seed {}", s.activation, s.depth, s.seed);
        assert_eq!(s.lambda_min.to_bits(), alone.lambda_min.to_bits(), "{what}");
        assert_eq!(s.lambda_max.to_bits(), alone.lambda_max.to_bits(), "{what}");
        assert_eq!(s.rank, alone.rank, "{what}");
        assert_eq!(s.min_grad_angle_deg, alone.min_grad_angle_deg, "{what}");
        assert_eq!(s.min_grad_angle_pair, alone.min_grad_angle_pair, "{what}");
        // The point's recorded config is the standalone probe's, key for key.
        let (p, q) = (
            s.provenance.as_ref().unwrap(),
            alone.provenance.as_ref().unwrap(),
        );
        assert_eq!(p.config, q.config, "{what}");
        assert_eq!(p.fingerprint, q.fingerprint, "{what}");
    }
}

/// Conventions are spelled as the config spells them (`unit_variance`), in every output:
/// the point directories, `summary.json`, and the collected tables' `convention` and
/// `setting` columns.
#[test]
fn conventions_are_spelled_as_in_the_config() {
    let text = r#"
[sweep]
depths = [1]
activations = ["gelu"]
seeds = [1]
protocols = ["whole"]
conventions = ["paper", "unit_variance"]
out = "unused"

[data]
dataset = "synthetic"
n = 12
input_dim = 3

[model]
width = 8
depth = 1
activation = "relu"

[probe]
precision = "f64"
"#;
    let dir = tempfile::tempdir().unwrap();
    let cfg = SweepConfig::parse(text).unwrap();
    let out = dir.path().join("out");
    sweep::run_sweep(&cfg, &out, Shard::all(), &flex()).unwrap();
    let point = out.join("runs/unit_variance/gelu/depth01/seed1/whole/summary.json");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&point).unwrap()).unwrap();
    assert_eq!(summary["convention"], "unit_variance");
    assert_eq!(summary["parameterization"], "ntk");
    let groups = sweep::collect(Some(&cfg), &out, None, false).unwrap();
    let mut settings: Vec<&str> = groups.iter().map(|g| g.setting.as_str()).collect();
    settings.sort_unstable();
    assert_eq!(settings, ["paper", "unit_variance"]);
    let results = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let summary_csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(results.contains(",unit_variance,") && summary_csv.contains(",unit_variance,"));
    assert!(!results.contains("unitvariance") && !summary_csv.contains("unitvariance"));
}

/// A blocks-only sweep over more rows than `run::PER_BLOCK_ROWS` goes block by block (as
/// `configs/fig2_mnist_blocks60k.toml` over all 60,000 images; that each block is the cut of
/// the whole kernel is `blocks.rs`'s): every sample in one block, the point's κ the
/// mean of its blocks', and `collect` writes the κ figure but no angle figure and no theory.
#[test]
fn a_blocks_only_sweep_over_a_large_set_goes_block_by_block() {
    let n = ntk_probe::run::PER_BLOCK_ROWS + 100;
    let text = CONFIG
        .replace("n = 30", &format!("n = {n}"))
        .replace("block_size = 16", "block_size = 64")
        .replace("width = 16", "width = 128")
        .replace("depths = [0, 1, 2]", "depths = [1]")
        .replace("seeds = [1, 2]", "seeds = [3]")
        .replace(
            "activations = [\"relu\", \"linear\"]",
            "activations = [\"relu\"]",
        )
        .replace(
            "protocols = [\"whole\", \"blocks\"]",
            "protocols = [\"blocks\"]",
        );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("each.toml");
    std::fs::write(&path, text).unwrap();
    let cfg = SweepConfig::load(&path).unwrap();
    let out = dir.path().join("out");
    assert_eq!(
        sweep::run_sweep(&cfg, &out, Shard::all(), &flex())
            .unwrap()
            .made,
        1
    );
    let point = out.join("runs/relu/depth01/seed3/blocks");
    let rows = ntk_probe::blocks::read(&point).unwrap();
    assert_eq!(rows.len(), n.div_ceil(64));
    let mut all: Vec<usize> = rows
        .iter()
        .flat_map(|r| r.sample_indices().unwrap())
        .collect();
    all.sort_unstable();
    assert_eq!(all, (0..n).collect::<Vec<_>>());
    let summary: ntk_probe::run::Summary =
        serde_json::from_str(&std::fs::read_to_string(point.join("summary.json")).unwrap())
            .unwrap();
    let kappas: Vec<f64> = rows.iter().map(|r| r.kappa.unwrap()).collect();
    let mean = kappas.iter().sum::<f64>() / kappas.len() as f64;
    assert!((summary.kappa.unwrap() - mean).abs() < 1e-12 * mean);
    assert!(summary.min_grad_angle_deg.is_none() && !point.join("ntk.npy").exists());
    let groups = sweep::collect(Some(&cfg), &out, None, false).unwrap();
    assert!(groups[0].kappa_mean.is_finite() && groups[0].theory_kappa.is_none());
    assert!(groups[0].theory_note.contains("not computed"), "{groups:?}");
    assert!(out.join("kappa_vs_depth_blocks.png").exists());
    assert!(!out.join("min_grad_angle_vs_depth.png").exists());
}

/// Issue 65 item 6 (its hostile round): a sweep's points are held to the kernel range a run
/// is. Inputs scaled by 1e-25 in f32, refused by `ntk`, gave every point "singular" and exit
/// 0 in a sweep; each point now fails saying the row, its norm and the fix (recorded in its
/// failed.json), and the sweep exits 2.
#[test]
fn a_sweep_point_whose_kernel_underflows_fails() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut x = Vec::new();
    for i in 0..20 {
        x.extend((0..4).map(|j| ((i * 4 + j) as f64 * 0.37).sin() * 1e-25));
    }
    ntk_files::npy::write_f64(&d.join("x.npy"), &x, &[20, 4]).unwrap();
    let text = format!(
        "[sweep]\ndepths = [1]\nactivations = [\"relu\"]\nseeds = [1]\nprotocols = \
         [\"whole\"]\nout = {:?}\n[data]\ndataset = \"file\"\nx = {:?}\n[model]\nwidth = 16\n\
         depth = 1\nactivation = \"relu\"\n[probe]\nprecision = \"f32\"\n",
        d.join("out").display().to_string(),
        d.join("x.npy").display().to_string()
    );
    let cfg = d.join("sweep.toml");
    std::fs::write(&cfg, text).unwrap();
    // The dry run says so first, in the run's words, and makes nothing.
    let o = Command::new(env!("CARGO_BIN_EXE_ntk-probe"))
        .args(["sweep", "--dry-run", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(out.contains("   0 fails   "), "{out}");
    for w in [
        "1 point(s) would fail when made",
        "relu depth 1 seed 1",
        "underflows",
        "probe in f64",
    ] {
        assert!(err.contains(w), "{w:?} not in: {err}");
    }
    assert!(!d.join("out/runs").exists());
    let o = Command::new(env!("CARGO_BIN_EXE_ntk-probe"))
        .args(["sweep", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in [
        "point relu depth 1 seed 1",
        "underflows",
        "f32::MIN_POSITIVE",
        "probe in f64",
    ] {
        assert!(err.contains(w), "{w:?} not in: {err}");
    }
    let failed = d.join("out/runs/relu/depth01/seed1/failed.json");
    let text = std::fs::read_to_string(&failed).unwrap();
    assert!(text.contains("underflows"), "{text}");
}

/// Issue 65 item 14 (its hostile round): a sweep's dry run foresees the points the run
/// fails by the kernel range check (ReLU^2 at depth 14 overflows f64), lists each as `fails`
/// with why beside the points it would make, and exits 2 naming the first; the run then
/// makes the others and records the failure, and the next dry run still says `fails`.
#[test]
fn a_sweeps_dry_run_says_which_points_the_kernel_range_fails() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = format!(
        "[sweep]\ndepths = [1, 14]\nactivations = [\"relu_squared\"]\nseeds = [1]\n\
         protocols = [\"whole\"]\nout = {:?}\ntheory = false\n[data]\ndataset = \"synthetic\"\n\
         n = 12\ninput_dim = 3\n[model]\nwidth = 16\ndepth = 1\nactivation = \"relu\"\n\
         [probe]\nprecision = \"f64\"\n",
        d.join("out").display().to_string(),
    );
    let cfg = d.join("sweep.toml");
    std::fs::write(&cfg, text).unwrap();
    let run = |dry: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ntk-probe"));
        c.args(["sweep", "--config"]).arg(&cfg);
        if dry {
            c.arg("--dry-run");
        }
        let o = c.output().unwrap();
        let said = (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        );
        assert_eq!(o.status.code(), Some(2), "{said:?}");
        assert!(!said.1.contains("panicked"), "{}", said.1);
        said
    };
    let (out, err) = run(true);
    assert!(out.contains("   0 new     "), "{out}");
    assert!(out.contains("   1 fails   "), "{out}");
    assert!(out.contains("fails: point 1: "), "{out}");
    assert!(
        err.contains("1 point(s) would fail when made")
            && err.contains("relu_squared depth 14 seed 1")
            && err.contains("overflow"),
        "{err}"
    );
    assert!(!d.join("out/runs").exists());
    let (_, err) = run(false);
    assert!(
        err.contains("point relu_squared depth 14 seed 1") && err.contains("overflow"),
        "{err}"
    );
    assert!(
        d.join("out/runs/relu_squared/depth01/seed1/whole/summary.json")
            .exists()
    );
    assert!(
        d.join("out/runs/relu_squared/depth14/seed1/failed.json")
            .exists()
    );
    let (out, _) = run(true);
    assert!(
        out.contains("   0 done    ") && out.contains("   1 fails   "),
        "{out}"
    );
}

/// Thirty-ninth hostile round, D2: a point made replaces its directory whole, so a directory
/// at a point's place that holds the user's files (beside a protocol's set, or inside it) is
/// refused before any work, by the sweep and its dry run alike, naming the files, which stay;
/// under `--recompute` of a stale point too. The point's own failure record is no obstacle.
#[test]
fn a_sweep_leaves_the_users_files_in_a_points_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = one_point_sweep(d);
    let sweep = |out: &Path, extra: &[&str]| sweep_cli(&cfg, out, extra);
    let refused = |o: &std::process::Output, words: &[&str]| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        for w in words {
            assert!(err.contains(w), "{w:?} not in: {err}");
        }
    };
    // A new point: the user's directory at its place.
    let out = d.join("new");
    let point = out.join("runs/relu/depth01/seed1");
    std::fs::create_dir_all(point.join("whole")).unwrap();
    std::fs::write(point.join("notes.txt"), "mine").unwrap();
    std::fs::write(point.join("whole/notes.txt"), "mine").unwrap();
    std::fs::write(
        point.join("failed.json"),
        r#"{"reason": "an earlier try", "fingerprint": "f", "tool": "ntk-probe 0.1.0"}"#,
    )
    .unwrap();
    for extra in [&["--dry-run"][..], &[][..]] {
        refused(
            &sweep(&out, extra),
            &["runs/relu/depth01/seed1", "notes.txt"],
        );
    }
    std::fs::remove_file(point.join("notes.txt")).unwrap();
    for extra in [&["--dry-run"][..], &[][..]] {
        refused(&sweep(&out, extra), &["seed1/whole", "notes.txt"]);
    }
    assert!(point.join("whole/notes.txt").exists());
    // A stale point under --recompute: a note beside its set.
    let out = d.join("stale");
    assert!(sweep(&out, &[]).status.success());
    let point = out.join("runs/relu/depth01/seed1");
    std::fs::write(point.join("notes.txt"), "mine").unwrap();
    let other = ["--set", "model.width=16", "--recompute"];
    for extra in [&[&other[..], &["--dry-run"]].concat()[..], &other[..]] {
        refused(&sweep(&out, extra), &["notes.txt"]);
    }
    assert_eq!(
        std::fs::read_to_string(point.join("notes.txt")).unwrap(),
        "mine"
    );
    std::fs::remove_file(point.join("notes.txt")).unwrap();
    assert!(sweep(&out, &other).status.success());
}

/// Review of round 41 (the places a sweep writes, one list): a table or figure's name at the
/// top of a sweep's directory held by what the collect at the end must not replace (a
/// directory, a FIFO) is refused before any work, by the sweep and its dry run alike, naming
/// it; before, the sweep computed every point and failed at its end.
#[test]
fn a_sweeps_tables_and_figures_places_are_checked_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = one_point_sweep(d);
    let sweep = |out: &Path, extra: &[&str]| sweep_cli(&cfg, out, extra);
    for (name, fifo) in [
        ("results.csv", false),
        ("summary.csv", true),
        ("kappa_vs_depth_whole.png", false),
    ] {
        let out = d.join(name.replace('.', "_"));
        std::fs::create_dir_all(&out).unwrap();
        let place = out.join(name);
        if fifo {
            let c = std::ffi::CString::new(place.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path; mkfifo has no other precondition.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        } else {
            std::fs::create_dir(&place).unwrap();
        }
        for extra in [&["--dry-run"][..], &[][..]] {
            let o = sweep(&out, extra);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{name}: {err}");
            assert!(err.contains(name), "{name} not in: {err}");
            assert!(
                !out.join("runs").exists(),
                "{name}: a point was made: {err}"
            );
        }
        assert!(std::fs::symlink_metadata(&place).is_ok());
    }
}

/// A sweep of one point (a ReLU MLP of width 8, depth 1, on 12 synthetic inputs), written to
/// `dir/sweep.toml`.
fn one_point_sweep(dir: &Path) -> std::path::PathBuf {
    let text = "[sweep]\ndepths = [1]\nactivations = [\"relu\"]\nseeds = [1]\nprotocols = \
                [\"whole\"]\n[data]\ndataset = \"synthetic\"\nn = 12\ninput_dim = 3\n\
                [model]\nwidth = 8\ndepth = 1\nactivation = \"relu\"\n[probe]\n\
                precision = \"f64\"\n";
    let cfg = dir.join("sweep.toml");
    std::fs::write(&cfg, text).unwrap();
    cfg
}

/// `ntk-probe sweep --config cfg --out out` with `extra`.
fn sweep_cli(cfg: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ntk-probe"))
        .args(["sweep", "--config"])
        .arg(cfg)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// `ntk-probe <args> <dir>`: `collect` or `plot` of the sweep in `dir`.
fn probe_cli(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ntk-probe"))
        .args(args)
        .arg(dir)
        .output()
        .unwrap()
}

/// Forty-third hostile round, D3: `collect` and `plot` check every table and figure they
/// write again before they write the first, and name a refused one once.
#[test]
fn collect_and_plot_check_their_places_before_writing_and_name_them_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = one_point_sweep(d);
    let out = d.join("sw");
    assert!(sweep_cli(&cfg, &out, &[]).status.success());
    let summary = std::fs::read(out.join("summary.csv")).unwrap();
    let stamp = |name: &str| {
        std::fs::metadata(out.join(name))
            .unwrap()
            .modified()
            .unwrap()
    };
    let png = stamp("kappa_vs_depth_whole.png");
    std::fs::remove_file(out.join("results.csv")).unwrap();
    std::fs::create_dir(out.join("results.csv")).unwrap();
    std::fs::remove_file(out.join("kappa_vs_depth_whole.svg")).unwrap();
    std::fs::create_dir(out.join("kappa_vs_depth_whole.svg")).unwrap();
    for args in [&["collect"][..], &["plot"][..]] {
        let o = probe_cli(args, &out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        // `plot` reads results.csv first (it draws what the tables hold, forty-sixth
        // hostile round, D1), `collect` checks the places it writes.
        assert!(err.contains("is a directory"), "{args:?}: {err}");
        let named = err.matches("results.csv").count() + err.matches("whole.svg").count();
        assert_eq!(named, 1, "{args:?}: {err}");
    }
    assert_eq!(std::fs::read(out.join("summary.csv")).unwrap(), summary);
    assert_eq!(stamp("kappa_vs_depth_whole.png"), png, "a figure was drawn");
}

/// Forty-fourth hostile round, D1: `plot` checks only the figures it draws, and `collect`
/// without a config only the files it writes (it reads theory.json, never writes it): a
/// directory at theory.json refuses neither.
#[test]
fn plot_and_collect_check_only_what_they_write() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = one_point_sweep(d);
    let out = d.join("sw");
    assert!(sweep_cli(&cfg, &out, &[]).status.success());
    let _ = std::fs::remove_file(out.join("theory.json"));
    std::fs::create_dir(out.join("theory.json")).unwrap();
    for args in [&["plot"][..], &["collect"][..]] {
        let o = probe_cli(args, &out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: {err}");
    }
    assert!(out.join("theory.json").is_dir());
}

/// Forty-fifth hostile round, D1: the names checked are the names written. A sweep of the
/// whole protocol never draws the blocks protocol's figure, and without `sweep.theory` never
/// writes theory.json: what stands at either name is kept by `plot`, `collect`, the sweep and
/// its dry run, which refused it; the whole protocol's figure is still checked by each.
#[test]
fn a_sweep_checks_only_the_figures_of_its_protocols() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = one_point_sweep(d);
    let out = d.join("sw");
    let no_theory = ["--set", "sweep.theory=false"];
    assert!(sweep_cli(&cfg, &out, &no_theory).status.success());
    let _ = std::fs::remove_file(out.join("theory.json"));
    for name in ["kappa_vs_depth_blocks.png", "theory.json"] {
        std::fs::create_dir(out.join(name)).unwrap();
        std::fs::write(out.join(name).join("mine.txt"), "mine").unwrap();
    }
    let dry = [&no_theory[..], &["--dry-run"]].concat();
    let runs = [
        probe_cli(&["plot"], &out),
        probe_cli(&["collect"], &out),
        sweep_cli(&cfg, &out, &dry),
        sweep_cli(&cfg, &out, &no_theory),
    ];
    for o in &runs {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    for name in ["kappa_vs_depth_blocks.png", "theory.json"] {
        let mine = std::fs::read_to_string(out.join(name).join("mine.txt")).unwrap();
        assert_eq!(mine, "mine", "{name}");
    }
    std::fs::remove_file(out.join("kappa_vs_depth_whole.svg")).unwrap();
    std::fs::create_dir(out.join("kappa_vs_depth_whole.svg")).unwrap();
    for o in [
        probe_cli(&["plot"], &out),
        probe_cli(&["collect"], &out),
        sweep_cli(&cfg, &out, &dry),
    ] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("kappa_vs_depth_whole.svg: is a directory"),
            "{err}"
        );
    }
}

/// Forty-sixth hostile round, D1: the angle's figure is drawn only where an angle is
/// measured (not with `probe.output = "full"`, not block by block) or the theory draws one,
/// and theory.json is written only where the theory is of one input set: what stands at
/// either name otherwise is kept by `plot`, `collect`, the sweep and its dry run.
#[test]
fn a_sweep_checks_the_angle_figure_and_the_theory_only_where_it_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = one_point_sweep(d);
    let keep = |out: &Path, name: &str| {
        assert!(!out.join(name).exists(), "{name} was written");
        std::fs::create_dir(out.join(name)).unwrap();
        std::fs::write(out.join(name).join("mine.txt"), "mine").unwrap();
    };
    let kept = |out: &Path, name: &str| {
        let mine = std::fs::read_to_string(out.join(name).join("mine.txt")).unwrap();
        assert_eq!(mine, "mine", "{name}");
    };
    let ok = |o: std::process::Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    // Every output's kernel, no theory: no angle, no angle figure.
    let full = [
        "--set",
        "model.output_dim=3",
        "--set",
        "probe.output=full",
        "--set",
        "sweep.theory=false",
    ];
    let out = d.join("full");
    ok(sweep_cli(&cfg, &out, &full));
    keep(&out, "min_grad_angle_vs_depth.png");
    ok(probe_cli(&["plot"], &out));
    ok(probe_cli(&["collect"], &out));
    ok(sweep_cli(&cfg, &out, &[&full[..], &["--dry-run"]].concat()));
    ok(sweep_cli(&cfg, &out, &full));
    kept(&out, "min_grad_angle_vs_depth.png");
    // Points on two input sets: the theory is left out, theory.json not written.
    let ns = ["--set", "sweep.ns=[12, 13]"];
    let out = d.join("ns");
    ok(sweep_cli(&cfg, &out, &ns));
    keep(&out, "theory.json");
    ok(collect_with_config(&out, &cfg, &ns));
    ok(sweep_cli(&cfg, &out, &[&ns[..], &["--dry-run"]].concat()));
    ok(sweep_cli(&cfg, &out, &ns));
    kept(&out, "theory.json");
    // Forty-seventh hostile round, D1: the theory asked for but not of this network (biases:
    // no angle, no kappa) and no angle measured: no angle figure.
    let biased = [&full[..4], &["--set", "model.bias=true"]].concat();
    let out = d.join("biased");
    ok(sweep_cli(&cfg, &out, &biased));
    keep(&out, "min_grad_angle_vs_depth.png");
    ok(probe_cli(&["plot"], &out));
    ok(probe_cli(&["collect"], &out));
    ok(collect_with_config(&out, &cfg, &biased));
    ok(sweep_cli(
        &cfg,
        &out,
        &[&biased[..], &["--dry-run"]].concat(),
    ));
    ok(sweep_cli(&cfg, &out, &biased));
    kept(&out, "min_grad_angle_vs_depth.png");
    // Without the config, a theory.json made for other inputs (13 rows, the points' 12)
    // draws no angle either.
    let other = d.join("other");
    ok(sweep_cli(&cfg, &other, &["--set", "data.n=13"]));
    let full_out = d.join("full");
    std::fs::copy(other.join("theory.json"), full_out.join("theory.json")).unwrap();
    ok(probe_cli(&["collect"], &full_out));
    kept(&full_out, "min_grad_angle_vs_depth.png");
}

/// `ntk-probe collect out --config cfg` with `sets`.
fn collect_with_config(out: &Path, cfg: &Path, sets: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ntk-probe"))
        .arg("collect")
        .arg(out)
        .arg("--config")
        .arg(cfg)
        .args(sets)
        .output()
        .unwrap()
}

/// Forty-seventh hostile round, D3: an `--out` name with no room for the names made beside
/// it (`.<name>.ntk-tmp-<pid>-<nanos>.lock`, 35 bytes more, within 255) is refused by the
/// dry run as by the run, saying so, at 221 bytes as at 256 (where the dry run advised
/// --recompute); 220 bytes pass.
#[test]
fn an_out_name_too_long_for_the_names_beside_it_is_refused_alike() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = one_point_sweep(d);
    for len in [221, 256] {
        let out = d.join("k".repeat(len));
        for extra in [&["--dry-run"][..], &[]] {
            let o = sweep_cli(&cfg, &out, extra);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{len} {extra:?}: {err}");
            assert!(
                err.contains(&format!("its name is {len} bytes"))
                    && err.contains("choose a name of at most 220 bytes")
                    && !err.contains("--recompute"),
                "{len}: {err}"
            );
        }
    }
    let out = d.join("k".repeat(220));
    let o = sweep_cli(&cfg, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
