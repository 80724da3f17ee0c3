//! Hostile input against the `ntk-probe` binary: configs, command lines, output
//! directories and result files. Every case must end with exit code 2, no panic or abort,
//! and a message that names the culprit (the value, key or file). The stale-result cases
//! check that results are never reused for a config that did not produce them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn probe() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ntk-probe"));
    // The memory checks must see this machine's memory, whatever the caller exported.
    c.env_remove("NTK_MAX_MEMORY");
    c
}

/// Exit code 2, no panic, and every culprit named in stderr.
fn assert_clean_error(name: &str, out: &Output, culprits: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{name}: exit status; stderr:\n{stderr}"
    );
    for bad in [
        "panicked",
        "internal error",
        "RUST_BACKTRACE",
        "memory allocation",
    ] {
        assert!(
            !stderr.contains(bad),
            "{name}: {bad:?} in stderr:\n{stderr}"
        );
    }
    for c in culprits {
        assert!(
            stderr.contains(c),
            "{name}: stderr does not name {c:?}:\n{stderr}"
        );
    }
}

fn run(args: &[OsString]) -> Output {
    probe().args(args).output().unwrap()
}

fn assert_ok(name: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn os(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

/// `ntk-probe collect OUT`.
fn collect_out(out: &Path) -> Output {
    let mut v = os(&["collect"]);
    v.push(out.as_os_str().to_os_string());
    run(&v)
}

const TINY: &str = r#"
[data]
dataset = "synthetic"
n = 12
input_dim = 3

[model]
width = 8
depth = 2
activation = "relu"
seed = 1

[probe]
precision = "f64"
"#;

const TINY_SWEEP: &str = r#"
[sweep]
depths = [1, 2]
activations = ["relu"]
seeds = [1]
protocols = ["whole"]
out = "unused"
theory = false

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

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn ntk_args(cfg: &Path, out: &Path, extra: &[&str]) -> Vec<OsString> {
    let mut v = os(&["ntk", "--config"]);
    v.push(cfg.into());
    v.push("--out".into());
    v.push(out.into());
    v.extend(os(extra));
    v
}

#[test]
fn theory_arguments_are_bounded_and_finite() {
    let cases: [(&[&str], &[&str]); 10] = [
        (&["--theta-deg", "0:inf:1"], &["--theta-deg", "inf"]),
        (&["--theta-deg", "0:180:1e-12"], &["--theta-deg", "at most"]),
        (&["--theta-deg", "0:nan:1"], &["--theta-deg", "nan"]),
        (&["--theta-deg", "1e400"], &["--theta-deg"]),
        (&["--theta-deg", "200"], &["--theta-deg 200"]),
        (&["--depth", "1e12"], &["--depth", "at most"]),
        (&["--depth", "2.5"], &["--depth 2.5"]),
        (&["--depth=-1"], &["--depth -1"]),
        (
            &["--activation", "norm_relu", "--kink", "nan"],
            &["--kink NaN", "kink"],
        ),
        (&["--activation", "swish"], &["--activation swish"]),
    ];
    for (args, culprits) in cases {
        let mut v = os(&["theory"]);
        v.extend(os(args));
        assert_clean_error(&format!("theory {args:?}"), &run(&v), culprits);
    }
    // The figure commands hold their numbers to the same rules (the second hostile review:
    // these wrote NaN results, or aborted, with rc 0).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out").to_string_lossy().into_owned();
    let figures: [(&[&str], &[&str]); 6] = [
        (&["activations", "--kink", "nan"], &["--kink NaN"]),
        (&["transfer", "--kink", "nan"], &["--kink NaN"]),
        (&["fig1", "--thetas", "200"], &["--thetas 200"]),
        (&["fig1", "--thetas", "nan"], &["--thetas NaN"]),
        (
            &["fig1", "--widths", "100000000"],
            &["--widths 100000000", "GiB"],
        ),
        (&["fig1", "--thetas=-5"], &["--thetas -5"]),
    ];
    for (args, culprits) in figures {
        let mut v = os(args);
        v.extend(os(&["--out", &out]));
        assert_clean_error(&format!("{args:?}"), &run(&v), culprits);
    }
    assert!(!dir.path().join("out").exists());
    // Standard output on a full device: an error, not a panic.
    if let Ok(full) = std::fs::File::create("/dev/full") {
        let out = probe()
            .args(os(&["theory", "--theta-deg", "5", "--depth", "3"]))
            .stdout(full)
            .output()
            .unwrap();
        assert_clean_error("stdout on a full device", &out, &["standard output"]);
    }
    // A range a caller may well ask for still works.
    let ok = run(&os(&[
        "theory",
        "--theta-deg",
        "0:180:0.01",
        "--depth",
        "0:3:1",
    ]));
    assert!(ok.status.success());
}

#[test]
fn configs_and_flags_name_their_culprit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = write(d, "good.toml", TINY);
    let out = d.join("out");
    let cases: Vec<(&str, PathBuf, Vec<&str>, Vec<&str>)> = vec![
        (
            "missing config",
            d.join("nope.toml"),
            vec![],
            vec!["nope.toml"],
        ),
        (
            "unknown key",
            write(d, "k.toml", &TINY.replace("seed = 1", "sede = 1")),
            vec![],
            vec!["k.toml", "sede"],
        ),
        (
            "bad value type",
            write(d, "t.toml", &TINY.replace("width = 8", "width = \"wide\"")),
            vec![],
            vec!["t.toml", "width"],
        ),
        (
            "zero samples",
            write(d, "n0.toml", &TINY.replace("n = 12", "n = 0")),
            vec![],
            vec!["data.n = 0"],
        ),
        (
            "input_dim disagreeing with the data",
            write(
                d,
                "dim.toml",
                &TINY.replace("width = 8", "width = 8\ninput_dim = 7"),
            ),
            vec![],
            vec!["model.input_dim = 7", "3 inputs"],
        ),
        (
            "unknown activation flag",
            good.clone(),
            vec!["--activation", "swish"],
            vec!["--activation swish"],
        ),
        (
            "bad precision",
            good.clone(),
            vec!["--precision", "f16"],
            vec!["--precision f16"],
        ),
        (
            "bad protocol",
            good.clone(),
            vec!["--protocol", "diagonal"],
            vec!["--protocol diagonal"],
        ),
        (
            "bad output",
            good.clone(),
            vec!["--output", "most"],
            vec!["--output most"],
        ),
        (
            "bad dataset",
            good.clone(),
            vec!["--dataset", "imagenet"],
            vec!["--dataset imagenet"],
        ),
        (
            "bad max memory",
            good.clone(),
            vec!["--max-memory", "lots"],
            vec!["--max-memory", "lots"],
        ),
        (
            "a billion units wide",
            good.clone(),
            vec!["--width", "1000000000"],
            vec!["model.width = 1000000000", "GiB"],
        ),
        (
            "a billion samples",
            good.clone(),
            vec!["--n", "1000000000"],
            vec!["data.n = 1000000000", "GiB"],
        ),
        (
            "a million layers",
            good.clone(),
            vec!["--depth", "1000000", "--width", "512"],
            // Refused with the config (the network's own limit), before any estimate.
            vec!["model", "`depth` = 1000000", "at most 10000"],
        ),
        (
            "all of MNIST (a 28.8 GB kernel) in 8 GiB",
            write(
                d,
                "mnist.toml",
                &TINY
                    .replace("\"synthetic\"", "\"mnist\"")
                    .replace("input_dim = 3\n", ""),
            ),
            vec!["--n", "60000", "--max-memory", "8G"],
            vec!["data.n = 60000", "--max-memory"],
        ),
        (
            "twenty thousand layers",
            good.clone(),
            vec!["--depth", "20000"],
            vec!["20000", "at most 10000"],
        ),
        (
            "unknown backend",
            good.clone(),
            vec!["--device", "tpu"],
            vec!["tpu"],
        ),
    ];
    for (name, cfg, extra, culprits) in cases {
        assert_clean_error(name, &run(&ntk_args(&cfg, &out, &extra)), &culprits);
    }
}

#[test]
fn output_directories_hold_one_complete_run_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "c.toml", TINY);
    // A directory of something else is never written into.
    let foreign = d.join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    assert_clean_error(
        "foreign --out",
        &run(&ntk_args(&cfg, &foreign, &[])),
        &["foreign", "notes.txt", "not an ntk-probe output set"],
    );
    assert_eq!(
        std::fs::read_to_string(foreign.join("notes.txt")).unwrap(),
        "mine"
    );
    // --out naming a file.
    let file = write(d, "file", "x");
    assert_clean_error(
        "--out is a file",
        &run(&ntk_args(&cfg, &file, &[])),
        &["file"],
    );

    // A second run replaces the first set as a whole: no file of the old run survives.
    let out = d.join("out");
    assert!(
        run(&ntk_args(&cfg, &out, &["--save-weights"]))
            .status
            .success()
    );
    assert!(out.join("weights.safetensors").exists());
    assert!(
        run(&ntk_args(&cfg, &out, &["--n", "10", "--recompute"]))
            .status
            .success()
    );
    assert!(
        !out.join("weights.safetensors").exists(),
        "an old file survived"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["n"], 10);
    assert_eq!(s["provenance"]["config"]["data.n"], 10);
    // A failing run (bad config caught late: the inputs.npy of a new run must not appear
    // beside the old summary) leaves the old set intact.
    let before = std::fs::read(out.join("inputs.npy")).unwrap();
    let bad = write(
        d,
        "late.toml",
        &TINY.replace("width = 8", "width = 8\ninput_dim = 9"),
    );
    assert_clean_error(
        "late failure",
        &run(&ntk_args(&bad, &out, &[])),
        &["model.input_dim"],
    );
    assert_eq!(std::fs::read(out.join("inputs.npy")).unwrap(), before);
    // Leftovers of a killed run are cleaned by the next start.
    let leftover = d.join(".out.ntk-tmp-4000000000-1");
    std::fs::create_dir(&leftover).unwrap();
    std::fs::write(d.join(".out.ntk-tmp-4000000000-1.lock"), "").unwrap();
    assert!(
        run(&ntk_args(&cfg, &out, &["--recompute"]))
            .status
            .success()
    );
    assert!(!leftover.exists());
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

fn sweep_args(cfg: &Path, out: &Path, extra: &[&str]) -> Vec<OsString> {
    let mut v = os(&["sweep", "--config"]);
    v.push(cfg.into());
    v.push("--out".into());
    v.push(out.into());
    v.extend(os(extra));
    v
}

#[test]
fn sweeps_never_reuse_or_mix_results_of_another_config() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    let cfg = write(d, "s.toml", TINY_SWEEP);
    assert!(run(&sweep_args(&cfg, &out, &[])).status.success());
    // The issue's reproduction: the same --out, another width.
    let narrow = write(
        d,
        "narrow.toml",
        &TINY_SWEEP.replace("width = 8", "width = 4"),
    );
    assert_clean_error(
        "stale sweep",
        &run(&sweep_args(&narrow, &out, &[])),
        &["model.width: 8 -> 4", "--recompute", "summary.json"],
    );
    // Other data under the same keys: the digest differs.
    let other_data = write(
        d,
        "seed.toml",
        &TINY_SWEEP.replace("n = 12", "n = 12\nseed = 5"),
    );
    assert_clean_error(
        "other data",
        &run(&sweep_args(&other_data, &out, &[])),
        &["data.seed: 0 -> 5", "data.digest"],
    );
    // --set is the same config as the file: a narrower network is stale too.
    assert_clean_error(
        "stale sweep by --set",
        &run(&sweep_args(&cfg, &out, &["--set", "model.width=4"])),
        &["model.width: 8 -> 4", "--recompute"],
    );
    // A key a sweep axis sets for every point is refused, naming the axis.
    assert_clean_error(
        "--set of an axis' key",
        &run(&sweep_args(&cfg, &out, &["--set", "model.depth=3"])),
        &["--set model.depth=3", "sweep.depths"],
    );
    assert_clean_error(
        "--set of an unknown key",
        &run(&sweep_args(&cfg, &out, &["--set", "sweep.depht=[1]"])),
        &["--set sweep.depht=[1]", "unknown key `sweep.depht`"],
    );
    assert_clean_error(
        "--set validated as the file",
        &run(&sweep_args(&cfg, &out, &["--set", "sweep.depths=[]"])),
        &["s.toml (with overrides)", "sweep.depths"],
    );
    // The dry run says which points are stale, computes nothing, and fails as the sweep
    // would without --recompute.
    let dry = run(&sweep_args(&narrow, &out, &["--dry-run"]));
    assert_eq!(dry.status.code(), Some(2));
    let text = String::from_utf8_lossy(&dry.stdout);
    assert_eq!(text.matches(" stale ").count(), 2, "{text}");
    let dry = run(&sweep_args(
        &cfg,
        &out,
        &["--dry-run", "--set", "model.width=4"],
    ));
    assert_eq!(
        String::from_utf8_lossy(&dry.stdout)
            .matches(" stale ")
            .count(),
        2
    );
    // --recompute replaces them.
    assert!(
        run(&sweep_args(&narrow, &out, &["--recompute"]))
            .status
            .success()
    );
    let dry = run(&sweep_args(&narrow, &out, &["--dry-run"]));
    assert_eq!(
        String::from_utf8_lossy(&dry.stdout)
            .matches(" done ")
            .count(),
        2
    );
    // New points of another config are not added to this sweep's directory...
    let seed2 = write(
        d,
        "seed2.toml",
        &TINY_SWEEP.replace("seeds = [1]", "seeds = [2]"),
    );
    assert_clean_error(
        "adding another config's points",
        &run(&sweep_args(&seed2, &out, &[])),
        &["different configs", "model.width", "--allow-mixed"],
    );
    assert!(!out.join("runs/relu/depth01/seed2").exists());
    // ...and collect refuses a directory mixed by hand.
    let mut collect = os(&["collect"]);
    collect.push(out.clone().into());
    assert!(
        run(&sweep_args(&seed2, &d.join("other"), &[]))
            .status
            .success()
    );
    // Move a width-8 point into the width-4 sweep.
    std::fs::rename(
        d.join("other/runs/relu/depth01/seed2"),
        out.join("runs/relu/depth01/seed2"),
    )
    .unwrap();
    assert_clean_error(
        "collect of mixed configs",
        &run(&collect),
        &["different configs", "model.width", "--allow-mixed"],
    );
    collect.push("--allow-mixed".into());
    assert!(run(&collect).status.success());
    // A corrupt summary is named, not skipped.
    std::fs::write(out.join("runs/relu/depth02/seed1/whole/summary.json"), "{").unwrap();
    assert_clean_error(
        "corrupt summary",
        &run(&collect),
        &["depth02/seed1/whole/summary.json"],
    );
    assert_clean_error(
        "a sweep over a corrupt point",
        &run(&sweep_args(&narrow, &out, &[])),
        &["depth02/seed1/whole/summary.json", "--recompute"],
    );
}

#[test]
fn sweep_inputs_name_their_culprit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    let cfg = write(d, "s.toml", TINY_SWEEP);
    let cases: Vec<(&str, Vec<OsString>, Vec<&str>)> = vec![
        (
            "shard out of range",
            sweep_args(&cfg, &out, &["--shard", "3/2"]),
            vec!["--shard 3/2"],
        ),
        (
            "empty axis",
            sweep_args(
                &write(
                    d,
                    "e.toml",
                    &TINY_SWEEP.replace("seeds = [1]", "seeds = []"),
                ),
                &out,
                &[],
            ),
            vec!["sweep.seeds"],
        ),
        (
            "a resnet sweep",
            sweep_args(
                &write(
                    d,
                    "r.toml",
                    &format!("{TINY_SWEEP}\n[resnet]\ndepth = 20\n"),
                ),
                &out,
                &[],
            ),
            vec!["[resnet]"],
        ),
        (
            "a sweep too big for memory",
            sweep_args(
                &write(d, "big.toml", &TINY_SWEEP.replace("n = 12", "n = 200000")),
                &out,
                &[],
            ),
            vec!["data.n = 200000", "GiB"],
        ),
        (
            "a network that overflows names its point",
            sweep_args(
                &write(
                    d,
                    "o.toml",
                    // ReLU^2 squares the pre-activation variance per layer: inputs of
                    // squared norm ~3 reach 3^(2^14), past f64, by depth 14.
                    &TINY_SWEEP
                        .replace("depths = [1, 2]", "depths = [14]")
                        .replace(
                            "activations = [\"relu\"]",
                            "activations = [\"relu_squared\"]",
                        ),
                ),
                &out,
                &[],
            ),
            vec!["relu_squared depth 14 seed 1", "non-finite"],
        ),
        (
            "collect of nothing",
            {
                // An empty directory (a missing one is named as missing: eighty-second
                // hostile round, D7).
                std::fs::create_dir_all(d.join("empty")).unwrap();
                let mut v = os(&["collect"]);
                v.push(d.join("empty").into());
                v
            },
            vec!["empty", "no sweep here (no runs/, summary.csv missing)"],
        ),
    ];
    for (name, args, culprits) in cases {
        assert_clean_error(name, &run(&args), &culprits);
    }
}

/// The second hostile review, clusters 1 and 2: the tool touches only what it created, and
/// a sweep directory has the writers of one config only.
#[test]
fn only_what_the_tool_created_is_touched_and_one_config_writes_a_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "tiny.toml", TINY);
    // A user's hidden directory named like an old temporary set of the target: kept.
    let old = d.join(".out.tmp-old");
    std::fs::create_dir(&old).unwrap();
    std::fs::write(old.join("keep.txt"), "mine").unwrap();
    let out = d.join("out");
    assert!(run(&ntk_args(&cfg, &out, &[])).status.success());
    assert!(old.join("keep.txt").exists());
    // No lock or temporary name is left beside the output.
    let hidden: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert_eq!(hidden, [".out.tmp-old"]);
    // --out a symbolic link: the results land at its target and the link stays a link.
    let target = d.join("target");
    std::fs::create_dir(&target).unwrap();
    let link = d.join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(run(&ntk_args(&cfg, &link, &[])).status.success());
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(target.join("summary.json").exists());
    // A dangling link fails before the work.
    let dangling = d.join("dangling");
    std::os::unix::fs::symlink(d.join("gone"), &dangling).unwrap();
    assert_clean_error(
        "dangling --out",
        &run(&ntk_args(&cfg, &dangling, &[])),
        &["dangling", "cannot be reached"],
    );
    // A sweep's --out with a user's hidden directory: refused (dry run too), kept.
    let sweep = write(d, "s.toml", TINY_SWEEP);
    let photos = d.join("photos");
    std::fs::create_dir_all(photos.join(".photos.tmp-2024")).unwrap();
    for extra in [&[][..], &["--dry-run"]] {
        assert_clean_error(
            "sweep into a user's directory",
            &run(&sweep_args(&sweep, &photos, extra)),
            &[".photos.tmp-2024", "not this command's"],
        );
    }
    assert!(photos.join(".photos.tmp-2024").is_dir());
    // A live writer of another config holds the sweep directory: refused at once, naming
    // it; once it is gone, the sweep runs.
    let shared = d.join("shared");
    std::fs::create_dir(&shared).unwrap();
    let other = ntk_files::lock::SweepClaim::acquire(&shared, "0123", "config wide.toml").unwrap();
    assert_clean_error(
        "another config's live sweep",
        &run(&sweep_args(&sweep, &shared, &[])),
        &["another config", "wide.toml"],
    );
    assert!(!shared.join("runs").exists());
    drop(other);
    assert!(run(&sweep_args(&sweep, &shared, &[])).status.success());
    // A point being written by a live process (this test): its writer is named.
    let busy = shared.join("runs/relu/depth01/seed2");
    let point = ntk_files::outset::OutputSet::begin(&busy).unwrap();
    let seeds = write(
        d,
        "seeds.toml",
        &TINY_SWEEP.replace("seeds = [1]", "seeds = [1, 2]"),
    );
    let me = format!("pid {}", std::process::id());
    assert_clean_error(
        "a point being written",
        &run(&sweep_args(&seeds, &shared, &[])),
        &["depth01/seed2", "another process is writing", me.as_str()],
    );
    drop(point);
    assert!(run(&sweep_args(&seeds, &shared, &[])).status.success());
}

/// A dead writer's leftovers of a sweep's own files go (a killed collect's figure, a table,
/// a point's summary; round 27's N1), a user's files that merely look like leftovers stay,
/// in `sweep`, `collect` and `plot` alike (twenty-eighth hostile round, D3).
#[test]
fn only_a_dead_writers_leftovers_of_the_sweeps_own_files_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = write(d, "s.toml", TINY_SWEEP);
    let out = d.join("sw");
    assert_ok("sweep", &run(&sweep_args(&sweep, &out, &[])));
    let point = "runs/relu/depth01/seed1/whole";
    assert!(out.join(point).join("summary.json").is_file());
    let dead = ".ntk-tmp-4000000000";
    let own = [
        format!("kappa_vs_depth_whole.png{dead}.png"),
        format!("min_grad_angle_vs_depth.svg{dead}"),
        format!("summary.csv{dead}"),
    ];
    let users = [
        format!("notes.png{dead}.png"),
        format!("my_figure.pdf{dead}"),
        format!("data.csv{dead}"),
        format!("kappa_vs_depth.png{dead}.png"),
    ];
    let user_point = format!("{point}/mine.npy{dead}");
    let own_point = format!("{point}/summary.json{dead}");
    let plant = || {
        for f in own.iter().chain(&users).chain([&user_point, &own_point]) {
            std::fs::write(out.join(f), "a file").unwrap();
        }
    };
    let check = |what: &str, points: bool| {
        for f in &own {
            assert!(!out.join(f).exists(), "{what}: the leftover {f} stayed");
        }
        for f in users.iter().chain([&user_point]) {
            assert!(out.join(f).is_file(), "{what}: the user's {f} was removed");
        }
        assert_eq!(
            !out.join(&own_point).exists(),
            points,
            "{what}: {own_point}"
        );
    };
    plant();
    assert_ok("plot", &run(&os(&["plot", out.to_str().unwrap()])));
    check("plot", false);
    plant();
    assert_ok("collect", &run(&os(&["collect", out.to_str().unwrap()])));
    check("collect", false);
    plant();
    assert_ok("sweep again", &run(&sweep_args(&sweep, &out, &[])));
    check("sweep", true);
}

/// The commands that write figures and tables outside a sweep remove a dead writer's
/// leftovers of their own files and keep a user's look-alikes (twenty-ninth hostile round,
/// N1); a sweep's output directory comes from `--out` alone too (N5).
#[test]
fn figure_commands_clean_their_own_leftovers_and_sweeps_take_out_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dead = ".ntk-tmp-4000000000";
    for (cmd, own) in [
        (
            "gmap",
            ["gmap.csv".to_string(), format!("gmap.png{dead}.png")],
        ),
        (
            "transfer",
            ["transfer.csv".into(), format!("transfer_norm.pdf{dead}")],
        ),
        (
            "activations",
            ["activations.csv".into(), format!("activations.svg{dead}")],
        ),
    ] {
        let out = d.join(cmd);
        std::fs::create_dir(&out).unwrap();
        let own = [format!("{}{dead}", own[0]), own[1].clone()];
        let users = [format!("notes.png{dead}.png"), format!("{cmd}.txt{dead}")];
        for f in own.iter().chain(&users) {
            std::fs::write(out.join(f), "a file").unwrap();
        }
        assert_ok(cmd, &run(&os(&[cmd, "--out", out.to_str().unwrap()])));
        for f in &own {
            assert!(!out.join(f).exists(), "{cmd}: the leftover {f} stayed");
        }
        for f in &users {
            assert!(out.join(f).is_file(), "{cmd}: the user's {f} was removed");
        }
    }
    // --out without sweep.out in the config: the sweep runs; with neither: refused.
    let cfg = write(d, "s.toml", &TINY_SWEEP.replace("out = \"unused\"\n", ""));
    assert_ok(
        "sweep --out",
        &run(&sweep_args(&cfg, &d.join("sw"), &["--dry-run"])),
    );
    let o = run(&os(&[
        "sweep",
        "--config",
        cfg.to_str().unwrap(),
        "--dry-run",
    ]));
    assert_clean_error("no output directory", &o, &["--out", "sweep.out"]);
}

/// The second hostile review, cluster 4: a sweep always finishes. A point that fails is
/// recorded with its reason, the others are made, the dry run and collect say which failed.
#[test]
fn a_failing_point_is_recorded_and_the_sweep_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    // ReLU^2 overflows f64 by depth 14 (see above); depth 1 is fine.
    let cfg = write(
        d,
        "o.toml",
        &TINY_SWEEP
            .replace("depths = [1, 2]", "depths = [1, 14]")
            .replace(
                "activations = [\"relu\"]",
                "activations = [\"relu_squared\"]",
            ),
    );
    let first = run(&sweep_args(&cfg, &out, &[]));
    assert_clean_error(
        "a failing point",
        &first,
        &[
            "1 point(s) failed",
            "relu_squared depth 14 seed 1",
            "non-finite",
        ],
    );
    assert!(
        out.join("runs/relu_squared/depth01/seed1/whole/summary.json")
            .exists()
    );
    let failed = out.join("runs/relu_squared/depth14/seed1/failed.json");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&failed).unwrap()).unwrap();
    assert!(
        record["reason"].as_str().unwrap().contains("non-finite"),
        "{record}"
    );
    assert_eq!(record["fingerprint"].as_str().unwrap().len(), 64);
    // The tables hold the finished point; the failed one is named.
    assert!(out.join("results.csv").exists());
    // The dry run foresees the failure (the kernel range check, on the host): `fails`,
    // and exit 2.
    let dry = run(&sweep_args(&cfg, &out, &["--dry-run"]));
    let listing = String::from_utf8_lossy(&dry.stdout);
    assert!(
        listing.contains(" fails ") && listing.contains(" done "),
        "{listing}"
    );
    assert_eq!(dry.status.code(), Some(2));
    let mut v = os(&["collect"]);
    v.push(out.clone().into());
    let collected = run(&v);
    assert!(collected.status.success());
    let warned = String::from_utf8_lossy(&collected.stderr);
    assert!(warned.contains("depth14/seed1: failed"), "{warned}");
    // The figures name it too.
    let svg = std::fs::read_to_string(out.join("kappa_vs_depth_whole.svg")).unwrap();
    assert!(
        svg.contains("failed, not drawn:") && svg.contains("relu_squared/depth14/seed1"),
        "the figure does not name the failed point"
    );
}

/// A user's file where a point's directory goes: refused before any work, by the dry run as
/// by the run, naming it, and the file stays where it is, with `--recompute` too (the fourth
/// hostile review's D13: `--recompute` moved the file to a hidden temporary name for good;
/// then the point failed alone after the others were computed, which the dry run did not
/// foresee and whose failure could not be recorded: fifty-third, D2).
#[test]
fn a_users_file_at_a_point_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    let cfg = write(d, "s.toml", TINY_SWEEP);
    let point = out.join("runs/relu/depth02/seed1");
    std::fs::create_dir_all(point.parent().unwrap()).unwrap();
    std::fs::write(&point, "x\n").unwrap();
    for extra in [&[][..], &["--recompute"], &["--dry-run"]] {
        let o = run(&sweep_args(&cfg, &out, extra));
        assert_clean_error(
            &format!("a file at a point {extra:?}"),
            &o,
            &[
                point.to_str().unwrap(),
                "is a file, where the sweep makes a point's directory",
            ],
        );
        assert!(!out.join("runs/relu/depth01").exists());
        assert_eq!(std::fs::read_to_string(&point).unwrap(), "x\n");
        let stray: Vec<_> = std::fs::read_dir(point.parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "seed1")
            .collect();
        assert!(stray.is_empty(), "left beside the point: {stray:?}");
    }
}

/// The estimate in a refusal under `--max-memory 1M` ("needs about 1.5 GiB"), in bytes.
fn estimate_of(args: &[OsString]) -> f64 {
    let mut v = args.to_vec();
    v.extend(os(&["--max-memory", "1M"]));
    let text = String::from_utf8_lossy(&run(&v).stderr).into_owned();
    let about = text.split("needs about ").nth(1).expect(&text);
    let mut words = about.split_whitespace();
    let value: f64 = words.next().unwrap().parse().unwrap();
    value
        * match words.next().unwrap() {
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            "MiB" => 1024.0 * 1024.0,
            u => panic!("unit {u} in {text}"),
        }
}

/// The memory guard's estimates against the peaks real probes reach (`wait4` usage of the
/// child), within a factor of 1.5 either way: the structured MLP kernel (n = 2000, width
/// 512, depth 10) of one run, which forms each layer's Gram once, and of a sweep over two depths,
/// whose cache keeps them (352 MB more: `ntk_kernel::host::Reuse`), and a 1202-layer Fixup
/// ResNet's per-sample gradients (the second hostile review: a ResNet-9998 was estimated at
/// 4.6 GiB and peaked at 8.2 GB, the forward maps and the network's copies uncounted), and an
/// MLP's on the autodiff route, n = 260 just past a power of two (the fifty-fourth round's
/// D1: its rows grew by doubling, so the run held about twice the estimate, 0.55 here), and
/// a ResNet-8's on 600 images (the fifty-fifth round's N1: the forward maps of every image
/// were counted where the host engine holds one per worker thread, about 3x the peak), and a
/// wide first layer in f64 and f32 (the hundred-and-thirty-second round's D2).
#[test]
fn memory_estimates_hold_to_the_measured_peaks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mlp = write(
        d,
        "mlp.toml",
        &TINY
            .replace("n = 12", "n = 2000")
            .replace("width = 8", "width = 512")
            .replace("depth = 2", "depth = 10"),
    );
    let resnet = write(
        d,
        "resnet.toml",
        "[data]\ndataset = \"synthetic\"\nn = 2\ninput_dim = 3072\n\n\
         [resnet]\ndepth = 1202\nvariant = \"fixup\"\nseed = 1\n\n\
         [probe]\nprecision = \"f32\"\n",
    );
    let autodiff = write(
        d,
        "autodiff.toml",
        &TINY
            .replace("n = 12", "n = 260")
            .replace("input_dim = 3", "input_dim = 256")
            .replace("width = 8", "width = 512")
            .replace(
                "precision = \"f64\"",
                "precision = \"f64\"\nmethod = \"autodiff\"",
            ),
    );
    let resnet8 = write(
        d,
        "resnet8.toml",
        "[data]\ndataset = \"synthetic\"\nn = 600\ninput_dim = 3072\n\n\
         [resnet]\ndepth = 8\nvariant = \"norm_relu\"\nnum_classes = 1\nseed = 1\n",
    );
    let sweep = write(
        d,
        "sweep.toml",
        &TINY_SWEEP
            .replace("depths = [1, 2]", "depths = [9, 10]")
            .replace("n = 12", "n = 2000")
            .replace("width = 8", "width = 512"),
    );
    // A first layer of 3072 x 8192 (200 MB in f64): the host engine's copy of it and Burn's
    // copies as it is read were not counted, about half the peak (hundred-and-thirty-second
    // hostile round, D2), and in f32 the f64 network of the accuracy check beside it.
    let wide = write(d, "wide.toml", &shaped(3072, 8192, 1, "f64"));
    let wide32 = write(d, "wide32.toml", &shaped(3072, 8192, 1, "f32"));
    // Hidden layers of 2048 x 2048 (32 MiB each): the transposes the backward keeps were
    // not counted, three copies a layer where two were (hundred-and-thirty-third round, D3).
    let deep = write(d, "deep.toml", &shaped(2048, 2048, 5, "f32"));
    let sweep_args = |out: &str| {
        let mut v = os(&["sweep", "--config"]);
        v.push(sweep.clone().into());
        v.extend(os(&["--out"]));
        v.push(d.join(out).into());
        v
    };
    let args = |name: &str, cfg: &Path, out: &str| match name {
        "sweep" => sweep_args(out),
        _ => ntk_args(cfg, &d.join(out), &[]),
    };
    for (name, cfg) in [
        ("mlp", &mlp),
        ("sweep", &sweep),
        ("resnet", &resnet),
        ("autodiff", &autodiff),
        ("resnet8", &resnet8),
        ("wide", &wide),
        ("wide32", &wide32),
        ("deep", &deep),
    ] {
        let estimate = estimate_of(&args(name, cfg, &format!("{name}-a")));
        let mut cmd = probe();
        cmd.args(args(name, cfg, &format!("{name}-b")));
        let (ok, peak) = ntk_runs::budget::peak_of(cmd).unwrap();
        assert!(ok, "{name}: the run failed");
        let ratio = estimate / peak;
        assert!(
            (1.0 / 1.5..=1.5).contains(&ratio),
            "{name}: estimate {estimate:.3e} B, measured peak {peak:.3e} B (ratio {ratio:.2})"
        );
    }
}

/// An allocation that fails in spite of the memory guard (here the guard is overruled with
/// `--max-memory`, under `ulimit -v`) is an error with exit code 2, not an abort (134) or a
/// panic (101): the allocator's wrapper, `ntk_cli::oom`.
#[test]
fn an_allocation_that_fails_is_an_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "big.toml", &TINY.replace("n = 12", "n = 14000"));
    let out = d.join("out");
    let limited = Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 2097152 && exec \"$@\"")
        .arg("limited")
        .arg(env!("CARGO_BIN_EXE_ntk-probe"))
        .args(ntk_args(&cfg, &out, &["--max-memory", "100G"]))
        .env_remove("NTK_MAX_MEMORY")
        .output()
        .unwrap();
    assert_clean_error(
        "ulimit -v, guard overruled",
        &limited,
        &["out of memory", "bytes"],
    );
    // Said before the work starts (round 22's N5): the flag cannot lift ulimit -v.
    let err = String::from_utf8_lossy(&limited.stderr);
    assert!(
        err.contains("warning: data.n = 14000")
            && err.contains("--max-memory allows it, but what RLIMIT_AS (ulimit -v 2097152")
            && err.contains("raise it to ulimit -v"),
        "{err}"
    );
    // An address space too small for the BLAS library's buffer (the fourth hostile review's
    // D1: such runs hung in OpenBLAS, at their first call or at exit, whatever
    // --max-memory said): refused at start, and the process ends.
    for args in [
        ntk_args(
            &write(d, "tiny.toml", TINY),
            &d.join("t"),
            &["--max-memory", "1G"],
        ),
        os(&["theory", "--theta-deg", "5", "--depth", "3"]),
    ] {
        let tight = Command::new("bash")
            .arg("-c")
            .arg("ulimit -v 300000 && exec timeout 60 \"$@\"")
            .arg("limited")
            .arg(env!("CARGO_BIN_EXE_ntk-probe"))
            .args(&args)
            .env_remove("NTK_MAX_MEMORY")
            .output()
            .unwrap();
        assert_clean_error(
            "ulimit -v 300000",
            &tight,
            &["RLIMIT_AS (ulimit -v 300000)", "raise it to ulimit -v"],
        );
    }
}

/// The tiny sweep with its theory column, run in `d`: its config and output directory.
fn theory_sweep(d: &Path) -> (PathBuf, PathBuf) {
    let out = d.join("out");
    let theory = write(
        d,
        "theory.toml",
        &TINY_SWEEP.replace("theory = false", "theory = true"),
    );
    assert!(run(&sweep_args(&theory, &out, &[])).status.success());
    (theory, out)
}

/// `collect` without its config sets no theory beside the points that is not of their
/// inputs (the second hostile review: after the points were recomputed on other data,
/// `collect` kept the old theory.json, 8.770 deg where 10.807 is right).
#[test]
fn collect_sets_no_theory_of_other_inputs_beside_the_points() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, out) = theory_sweep(d);
    let mut collect = os(&["collect"]);
    collect.push(out.clone().into());
    assert!(run(&collect).status.success());
    let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(!table.contains("other inputs"), "{table}");
    // The same points on other data (another synthetic draw), without the theory.
    let other = write(
        d,
        "other.toml",
        &TINY_SWEEP.replace("input_dim = 3", "input_dim = 3\nseed = 7"),
    );
    assert!(
        run(&sweep_args(&other, &out, &["--recompute"]))
            .status
            .success()
    );
    assert!(run(&collect).status.success());
    let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert!(!rows.is_empty());
    for row in rows {
        assert!(row.contains("computed for other inputs"), "{row}");
    }
}

/// `collect` without its config sets no theory beside the points that is not of their
/// networks: points recomputed with biases, the standard parameterization or another
/// activation parameter and `sweep.theory = false` over a sweep whose `theory.json` is of
/// the plain ReLU network (fifty-first hostile round, D1: alpha 0.5's kappa 2686.6 beside
/// the points of alpha -0.5, whose theory is 479.0; ReLU's values where biases have none).
#[test]
fn collect_sets_no_theory_of_other_network_settings_beside_the_points() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    let collect = os(&["collect", out.to_str().unwrap()]);
    let leaky = TINY_SWEEP
        .replace("theory = false", "theory = true")
        .replace("activations = [\"relu\"]", "activations = [\"leaky_relu\"]")
        .replace(
            "activation = \"relu\"",
            "activation = \"leaky_relu\"\nactivation_param = 0.5",
        );
    for (base, set) in [
        (None, "model.bias=true"),
        (None, "model.parameterization=\"standard\""),
        (Some(&leaky), "model.activation_param=-0.5"),
    ] {
        let _ = std::fs::remove_dir_all(&out);
        let theory = match base {
            None => theory_sweep(d).0,
            Some(text) => {
                let cfg = write(d, "leaky.toml", text);
                assert_ok(set, &run(&sweep_args(&cfg, &out, &[])));
                cfg
            }
        };
        let recompute = ["--recompute", "--set", "sweep.theory=false", "--set", set];
        assert_ok(set, &run(&sweep_args(&theory, &out, &recompute)));
        assert_ok(set, &run(&collect));
        let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        let rows: Vec<&str> = table.lines().skip(1).collect();
        assert!(!rows.is_empty());
        for row in rows {
            assert!(row.contains("other network settings"), "{set}: {row}");
        }
        // The points of the cache's own network: its values, as before.
        assert_ok(set, &run(&sweep_args(&theory, &out, &["--recompute"])));
        assert_ok(set, &run(&collect));
        let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        assert!(!table.contains("other network settings"), "{set}: {table}");
    }
}

/// A FIFO or a user's file where a probe sweep makes a point's directory, or at a directory
/// above it: refused before any work by the dry run and the run, naming it (fifty-third
/// hostile round, D2: the dry run passed; the run failed those points with the system's
/// errors and said each failure was recorded in its failed.json, where none could be).
#[test]
fn a_file_or_fifo_where_a_point_directory_goes_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (theory, out) = theory_sweep(d);
    let relu = out.join("runs/relu");
    let depth = relu.join("depth01");
    let moved = d.join("moved");
    for (place, fifo) in [
        (depth.clone(), true),
        (depth.clone(), false),
        (relu.clone(), true),
    ] {
        std::fs::rename(&place, &moved).unwrap();
        if fifo {
            let made = std::process::Command::new("mkfifo").arg(&place).status();
            assert!(made.unwrap().success());
        } else {
            std::fs::write(&place, "my notes\n").unwrap();
        }
        for extra in [&["--dry-run"][..], &[][..]] {
            let mut a = vec!["--recompute", "--set", "model.width=9"];
            a.extend(extra);
            assert_clean_error(
                &format!("{}", place.display()),
                &run(&sweep_args(&theory, &out, &a)),
                &[
                    place.to_str().unwrap(),
                    "where the sweep makes a point's directory",
                ],
            );
        }
        std::fs::remove_file(&place).unwrap();
        std::fs::rename(&moved, &place).unwrap();
    }
}

/// A theory cache whose values were edited (a kappa of -5, an angle of 400 degrees) under
/// this build's stamp is computed again by the sweep, and left out by `collect` without the
/// config, saying why: its checksum no longer matches (fifty-first hostile round, N2: every
/// command wrote the edited values into summary.csv).
#[test]
fn a_theory_cache_whose_values_were_edited_is_computed_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (theory, out) = theory_sweep(d);
    let cache = out.join("theory.json");
    let text = std::fs::read_to_string(&cache).unwrap();
    assert!(text.contains("\"sha256\": \""), "{text}");
    let key = "\"min_grad_angle_deg\": ";
    let i = text.find(key).unwrap() + key.len();
    let j = i + text[i..].find([',', '\n', '}']).unwrap();
    let edited = format!("{}400.5{}", &text[..i], &text[j..]);
    std::fs::write(&cache, &edited).unwrap();
    let collect = os(&["collect", out.to_str().unwrap()]);
    assert_ok("collect", &run(&collect));
    let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(!table.contains("400.5"), "{table}");
    assert!(table.contains("does not match its checksum"), "{table}");
    assert_ok("resume", &run(&sweep_args(&theory, &out, &["--resume"])));
    let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(!table.contains("400.5"), "{table}");
    assert!(!table.contains("checksum"), "{table}");
    assert_eq!(std::fs::read_to_string(&cache).unwrap(), text);
}

/// A `theory.json` that is no cache at all (`{}`, other JSON, cut short, not UTF-8) is left
/// out by `collect` without the config with a `theory_note` that says so; without the file,
/// where the tables had the theory, the note says it is missing. Eighty-third hostile round,
/// D2: the damaged cache read as "no theory asked for", with nothing said.
#[test]
fn eighty_third_review_a_damaged_theory_cache_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, out) = theory_sweep(d);
    let cache = out.join("theory.json");
    let text = std::fs::read(&cache).unwrap();
    let collect = os(&["collect", out.to_str().unwrap()]);
    for (what, bytes) in [
        ("{}", b"{}".to_vec()),
        ("other JSON", br#"{"garbage":1}"#.to_vec()),
        ("cut short", text[..150].to_vec()),
        ("not UTF-8", vec![0xff, 0xfe, b'{']),
    ] {
        std::fs::write(&cache, &bytes).unwrap();
        let o = run(&collect);
        assert_ok(what, &o);
        let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        assert!(
            table.contains("theory.json is not a theory cache"),
            "{what}: {table}"
        );
        let said = String::from_utf8_lossy(&o.stdout);
        assert!(
            said.contains("theory: theory.json is not a theory cache"),
            "{what}: {said}"
        );
    }
    // Eighty-eighth hostile round, N5: without the file, where the tables had the theory, the
    // note says it is missing (it was left empty, as for a sweep that asked no theory), and
    // the next collect says it again.
    std::fs::remove_file(&cache).unwrap();
    for _ in 0..2 {
        assert_ok("no cache", &run(&collect));
        let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        assert!(table.contains("theory.json is missing"), "{table}");
    }
}

/// `collect`, with its config or without, never writes through a symbolic link at one of
/// the sweep's tables or its theory cache: refused before anything is written, naming the
/// link and its target, as the sweep refuses it (fifty-first hostile round, D2: the user's
/// file the link led to was replaced by the table).
#[test]
fn collect_never_writes_through_a_link_at_its_tables() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (theory, out) = theory_sweep(d);
    let mine = write(d, "mine.txt", "my notes\n");
    for name in ["results.csv", "summary.csv", "theory.json"] {
        let place = out.join(name);
        let kept = std::fs::read(&place).unwrap();
        std::fs::remove_file(&place).unwrap();
        std::os::unix::fs::symlink(&mine, &place).unwrap();
        let mut with_config = os(&["collect", out.to_str().unwrap(), "--config"]);
        with_config.push(theory.clone().into());
        let without = os(&["collect", out.to_str().unwrap()]);
        for (how, args) in [("--config", &with_config), ("no config", &without)] {
            let o = run(args);
            // Without the config the cache is only read.
            if name == "theory.json" && how == "no config" {
                assert_ok(name, &o);
            } else {
                assert_clean_error(
                    &format!("{name}, {how}"),
                    &o,
                    &[name, "is a symbolic link to", "mine.txt"],
                );
            }
            assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my notes\n");
            assert!(std::fs::symlink_metadata(&place).unwrap().is_symlink());
        }
        std::fs::remove_file(&place).unwrap();
        std::fs::write(&place, kept).unwrap();
    }
}

/// A theory cache written by a build before the theory's angles were formed from the rows
/// (its stamp `v2; ...`), or before ReLU's and leaky ReLU's kernel and angles were formed
/// from each pair's own angle (`v3; ...`), or before one rule gave a pair's angle (`v4; ...`),
/// is computed again, not reused (thirty-third hostile round, D3: an older build's values
/// went into summary.csv through `--resume` and `collect`; fiftieth, D2: round 49's wrong
/// leaky ReLU values, through a `v3` cache).
#[test]
fn an_older_builds_theory_cache_is_computed_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (theory, out) = theory_sweep(d);
    let cache = out.join("theory.json");
    let text = std::fs::read_to_string(&cache).unwrap();
    assert!(text.contains("\"v5; "), "{text}");
    // As an older build wrote it: its stamp, and a value of its own.
    let key = "\"min_grad_angle_deg\": ";
    let i = text.find(key).unwrap() + key.len();
    let j = i + text[i..].find([',', '\n', '}']).unwrap();
    for stamp in ["\"v2; ", "\"v3; ", "\"v4; "] {
        let old = format!("{}1234.5{}", &text[..i], &text[j..]).replace("\"v5; ", stamp);
        std::fs::write(&cache, &old).unwrap();
        assert!(
            run(&sweep_args(&theory, &out, &["--resume"]))
                .status
                .success()
        );
        let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        assert!(!table.contains("1234.5"), "{stamp}: {table}");
        assert!(std::fs::read_to_string(&cache).unwrap().contains("\"v5; "));
        // Collect without the config cannot compute it again: the older values are left
        // out, saying why.
        std::fs::write(&cache, &old).unwrap();
        let o = run(&os(&["collect", out.to_str().unwrap()]));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        assert!(!table.contains("1234.5"), "{stamp}: {table}");
        assert!(table.contains("computed by an older build"), "{table}");
    }
}

/// The vocabulary both tools share: `run` (and its alias `ntk`), `--dry-run` that computes
/// nothing and says what the directory holds, `--resume` that keeps this config's result
/// and refuses another's unless `--recompute`; the short flags on a sweep, refused on an
/// axis; `--log` refused by the probe's `collect` and `plot`, naming why.
#[test]
fn one_vocabulary_run_dry_run_resume() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "c.toml", TINY);
    let out = d.join("out");
    let mut run_args = ntk_args(&cfg, &out, &[]);
    run_args[0] = "run".into();
    let with = |extra: &[&str]| {
        let mut v = run_args.clone();
        v.extend(os(extra));
        v
    };

    // A dry run on a new directory: `new`, nothing written.
    let o = run(&with(&["--dry-run"]));
    assert_ok("dry run, new", &o);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(": new"),
        "{o:?}"
    );
    assert!(!out.exists(), "a dry run wrote {}", out.display());

    // `run` computes; the alias `ntk` is the same command.
    assert_ok("run", &run(&with(&[])));
    let summary = out.join("summary.json");
    let first = std::fs::read(&summary).unwrap();
    assert_ok("ntk alias", &run(&ntk_args(&cfg, &out, &[])));

    // --resume keeps this config's result (the file untouched) and says so.
    let before = std::fs::read(&summary).unwrap();
    let o = run(&with(&["--resume"]));
    assert_ok("resume, done", &o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("kept"), "{o:?}");
    assert_eq!(std::fs::read(&summary).unwrap(), before);
    let o = run(&with(&["--resume", "--dry-run"]));
    assert_ok("resume dry run, done", &o);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(": done"),
        "{o:?}"
    );

    // Another config's result: --resume refuses it (the dry run too), naming the key;
    // --recompute computes it again.
    let o = run(&with(&["--resume", "--n", "10"]));
    assert_clean_error("resume, stale", &o, &["data.n"]);
    let o = run(&with(&["--resume", "--n", "10", "--dry-run"]));
    assert_clean_error("resume dry run, stale", &o, &["data.n"]);
    assert_eq!(std::fs::read(&summary).unwrap(), before);
    assert_ok(
        "resume, recompute",
        &run(&with(&["--resume", "--n", "10", "--recompute"])),
    );
    assert_ne!(std::fs::read(&summary).unwrap(), first);

    // `--out` is required by `run`, with a clear error.
    let o = run(&os(&["run", "--config", cfg.to_str().unwrap()]));
    assert_clean_error("run without --out", &o, &["--out"]);

    // A sweep takes the short flags (a dry run with --n); one on an axis is refused.
    let sweep = write(d, "s.toml", TINY_SWEEP);
    let sout = d.join("sweep");
    let o = run(&sweep_args(&sweep, &sout, &["--dry-run", "--n", "10"]));
    assert_ok("sweep --n", &o);
    let o = run(&sweep_args(&sweep, &sout, &["--dry-run", "--depth", "3"]));
    assert_clean_error("sweep --depth", &o, &["--depth", "sweep.depths"]);

    // `--log` is the trainer's: the probe's collect and plot refuse it.
    for cmd in ["collect", "plot"] {
        let o = run(&os(&[cmd, sout.to_str().unwrap(), "--log"]));
        assert_clean_error(cmd, &o, &["--log", "log scale"]);
    }
}

/// The network's input size against the data set's images is checked with the config, so
/// a dry run fails exactly when the run would (before, only the run failed).
#[test]
fn a_resnet_on_images_of_another_size_is_refused_by_the_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../configs/probe_resnet20_cifar.toml"
    ));
    let out = dir.path().join("out");
    let mut args = ntk_args(cfg, &out, &["--dataset", "mnist", "--dry-run"]);
    args[0] = "run".into();
    let o = run(&args);
    assert_clean_error("resnet-20 on mnist", &o, &["784", "data.dataset"]);
    assert!(!out.exists());
    // An MLP's own rules (a kink for ReLU, no width) are the config's too: the dry run
    // refuses them as building the network would.
    let tiny = write(dir.path(), "tiny.toml", TINY);
    for (set, culprit) in [("model.kink=0.5", "kink"), ("model.width=0", "width")] {
        let mut args = ntk_args(&tiny, &out, &["--dry-run", "--set", set]);
        args[0] = "run".into();
        assert_clean_error(set, &run(&args), &["model", culprit]);
    }
    assert!(!out.exists());
}

/// Permission errors name what is at fault, run without the capability to read or write
/// past a file's mode (`setpriv`, where it is; as root no mode stops either):
/// - a probe's summary.json its user cannot read is said as such, run, resume and dry run,
///   not called another tool's (hundred-and-thirty-ninth hostile round, second review, D2:
///   "no probe summary.json beside it" of every file);
/// - a sweep's directory that cannot be written is named as such by `collect` and `plot`,
///   where the writable table or figure was said "Permission denied" (hundred-and-fortieth
///   hostile round, second review, D2).
#[test]
fn permission_errors_name_what_is_at_fault() {
    let mut can = std::process::Command::new("setpriv");
    if !can
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return;
    }
    let without_override = |args: Vec<OsString>| {
        std::process::Command::new("setpriv")
            .args(["--bounding-set", "-dac_override,-dac_read_search", "--"])
            .arg(env!("CARGO_BIN_EXE_ntk-probe"))
            .args(args)
            .env_remove("NTK_MAX_MEMORY")
            .output()
            .unwrap()
    };
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "tiny.toml", TINY);
    let out = dir.path().join("out");
    assert_ok("first run", &run(&ntk_args(&cfg, &out, &[])));
    mode(&out.join("summary.json"), 0o000).unwrap();
    for extra in [&[][..], &["--resume"][..], &["--dry-run"][..]] {
        let o = without_override(ntk_args(&cfg, &out, extra));
        assert_clean_error(
            &format!("{extra:?}"),
            &o,
            &["summary.json: cannot read: Permission denied"],
        );
        assert!(!String::from_utf8_lossy(&o.stderr).contains("beside it"));
    }
    let cfg = write(dir.path(), "sweep.toml", TINY_SWEEP);
    let swept = dir.path().join("swept");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &swept, &[])));
    mode(&swept, 0o555).unwrap();
    for command in ["collect", "plot"] {
        let o = without_override(vec![command.into(), swept.clone().into()]);
        assert_clean_error(command, &o, &["its directory is not writable"]);
    }
    mode(&swept, 0o755).unwrap();
}

/// The third review's probe cases (issue 29): a user's files named like a probe's are
/// never replaced; a ResNet whose images are not the file's (same count, another layout)
/// is refused; BatchNorm's batch statistics with the blocks protocol, and the training-only
/// data keys, are refused; an explicit default (`batch_norm_statistics = "running"`) is the
/// same config as none.
#[test]
fn third_review_probe_cases() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "tiny.toml", TINY);
    // A user's summary.json and ntk.npy under --out.
    let user = dir.path().join("user");
    std::fs::create_dir(&user).unwrap();
    std::fs::write(user.join("summary.json"), "{\"mine\": 1}").unwrap();
    std::fs::write(user.join("ntk.npy"), "hello").unwrap();
    let out = run(&ntk_args(&cfg, &user, &[]));
    assert_clean_error(
        "user files",
        &out,
        &["summary.json", "not an ntk-probe output set"],
    );
    assert_eq!(
        std::fs::read_to_string(user.join("ntk.npy")).unwrap(),
        "hello"
    );
    // A probe's own output is replaced.
    let own = dir.path().join("own");
    assert_ok("first run", &run(&ntk_args(&cfg, &own, &[])));
    assert_ok("second run", &run(&ntk_args(&cfg, &own, &[])));
    // Images of another layout: 4x4x4 files read by a ResNet of 1x8x8 images.
    let x: Vec<f32> = (0..6 * 64).map(|i| (i as f32 * 0.1).sin()).collect();
    let npy = ntk_files::npy::to_bytes(&x, &[6, 4, 4, 4]).unwrap();
    std::fs::write(dir.path().join("img.npy"), npy).unwrap();
    let resnet = format!(
        "[data]\ndataset = \"file\"\nx = {:?}\nn = 6\nsubset = \"first\"\n\n[resnet]\ndepth = 8\n\
         variant = \"batch_norm\"\nbase_width = 2\nimage_size = 8\nin_channels = 1\n\
         num_classes = 2\n\n[probe]\nprecision = \"f64\"\n",
        dir.path().join("img.npy").display().to_string()
    );
    let rcfg = write(dir.path(), "resnet.toml", &resnet);
    let out = run(&ntk_args(&rcfg, &dir.path().join("r"), &["--dry-run"]));
    assert_clean_error(
        "image layout",
        &out,
        &["resnet.in_channels = 1", "holds 4x4x4 images"],
    );
    let same = resnet.replace(
        "image_size = 8\nin_channels = 1",
        "image_size = 4\nin_channels = 4",
    );
    let rcfg = write(dir.path(), "resnet4.toml", &same);
    let out = run(&ntk_args(
        &rcfg,
        &dir.path().join("r4"),
        &[
            "--set",
            "probe.protocol=blocks",
            "--set",
            "probe.block_size=3",
            "--set",
            "probe.batch_norm_statistics=batch",
            "--dry-run",
        ],
    ));
    assert_clean_error(
        "batch statistics in blocks",
        &out,
        &["probe.batch_norm_statistics = batch", "blocks protocol"],
    );
    let out = run(&ntk_args(
        &rcfg,
        &dir.path().join("r5"),
        &["--set", "data.test_x=img.npy", "--dry-run"],
    ));
    assert_clean_error("test_x", &out, &["data.test_x", "for ntk-train"]);
    // An explicit default is the same config: the sweep's points stay done.
    let sweep = write(
        dir.path(),
        "sweep.toml",
        &TINY_SWEEP.replace("[model]", "[model]\nnormalization = \"batch_norm\""),
    );
    let sout = dir.path().join("sweep");
    assert_ok("sweep", &run(&sweep_args(&sweep, &sout, &[])));
    let again = run(&sweep_args(
        &sweep,
        &sout,
        &["--set", "probe.batch_norm_statistics=running", "--dry-run"],
    ));
    assert_ok("explicit default", &again);
    assert!(!String::from_utf8_lossy(&again.stdout).contains("stale"));
    // collect --config checks what the points recorded.
    let collect = |extra: &[&str]| {
        let mut v = os(&["collect"]);
        v.push(sout.clone().into());
        v.extend(os(&["--config"]));
        v.push(sweep.clone().into());
        v.extend(os(extra));
        run(&v)
    };
    assert_ok("collect", &collect(&[]));
    assert_clean_error(
        "collect of another width",
        &collect(&["--set", "model.width=9"]),
        &["model.width"],
    );
    // Results of points the config does not have (depth 2 when it sweeps depth 1 only).
    assert_clean_error(
        "collect of fewer depths",
        &collect(&["--set", "sweep.depths=[1]"]),
        &["depth02", "not a point of this config"],
    );
    // A dry run fails where the sweep would: stale points without --recompute.
    let stale = run(&sweep_args(
        &sweep,
        &sout,
        &["--set", "model.width=9", "--dry-run"],
    ));
    assert_clean_error("stale dry run", &stale, &["--recompute"]);
}

/// The fourth hostile review, D3-D4: `collect` merges no copy of a point (it counted as a
/// second seed) and no summary whose fingerprint was edited, with or without `--config`.
#[test]
fn collect_refuses_copies_and_edited_fingerprints() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    let cfg = write(d, "s.toml", TINY_SWEEP);
    assert_ok("sweep", &run(&sweep_args(&cfg, &out, &[])));
    let mut collect = os(&["collect"]);
    collect.push(out.clone().into());
    assert_ok("collect", &run(&collect));
    let summary = out.join("runs/relu/depth01/seed1/whole/summary.json");
    let json = std::fs::read_to_string(&summary).unwrap();
    let at = json.find("\"fingerprint\": \"").unwrap() + "\"fingerprint\": \"".len();
    let flipped = if &json[at..at + 1] == "0" { "1" } else { "0" };
    std::fs::write(
        &summary,
        format!("{}{flipped}{}", &json[..at], &json[at + 1..]),
    )
    .unwrap();
    assert_clean_error(
        "edited fingerprint",
        &run(&collect),
        &["depth01/seed1", "fingerprint does not match"],
    );
    std::fs::write(&summary, &json).unwrap();
    // A copy of the point (its set whole: a summary alone is refused for its missing
    // files, eighty-first hostile round, N5).
    let copy = out.join("runs/relu/depth01/seed1_backup/whole");
    std::fs::create_dir_all(&copy).unwrap();
    for e in std::fs::read_dir(summary.parent().unwrap()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), copy.join(e.file_name())).unwrap();
    }
    assert_clean_error(
        "a copied point",
        &run(&collect),
        &["seed1_backup", "record the same config"],
    );
    // The sweep refuses it too, its dry run as its run, before any work (eighty-third
    // hostile round, D5: the dry run said `done` and the sweep failed in its collect).
    for extra in [&["--dry-run"][..], &[][..]] {
        assert_clean_error(
            "a copied point, the sweep",
            &run(&sweep_args(&cfg, &out, extra)),
            &[
                "seed1_backup",
                "one is a copy of the other",
                "remove the copy",
            ],
        );
    }
    // Its summary alone: the set's missing file is named.
    std::fs::remove_file(copy.join("eigenvalues.npy")).unwrap();
    assert_clean_error(
        "a copied summary",
        &run(&collect),
        &["seed1_backup", "eigenvalues.npy", "missing"],
    );
}

/// The fourth hostile review, D12: inputs whose Gram matrix overflows f64 (values near
/// 1e155) are named with their largest magnitude, not reported as an eigensolver that did
/// not converge; with more and fewer samples than inputs per sample.
#[test]
fn inputs_that_overflow_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rows: Vec<String> = (0..8)
        .map(|i| {
            (0..3)
                .map(|j| format!("{:e}", (1.0 + f64::from(i * 3 + j)) * 1e155))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let x = write(d, "x.csv", &format!("a,b,c\n{}\n", rows.join("\n")));
    let cfg = write(
        d,
        "f.toml",
        &format!(
            "[data]\ndataset = \"file\"\nn = 8\nx = \"{}\"\n\n[model]\nwidth = 8\ndepth = 1\n\
             activation = \"relu\"\n\n[probe]\nprecision = \"f64\"\n",
            x.display()
        ),
    );
    for n in ["8", "2"] {
        let o = run(&ntk_args(
            &cfg,
            &d.join("o"),
            &["--set", &format!("data.n={n}")],
        ));
        assert_clean_error(
            &format!("n = {n}"),
            &o,
            &["x.csv", "not finite in f64", "rescale the inputs"],
        );
    }
}

/// The fourth hostile review, D5: `collect` names what it cannot read (a point whose
/// summary.json was deleted or replaced by a directory) instead of leaving it out without a
/// word, and with `--config` names the points that have no result.
#[test]
fn collect_names_what_it_leaves_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    let cfg = write(d, "s.toml", TINY_SWEEP);
    assert_ok("sweep", &run(&sweep_args(&cfg, &out, &[])));
    let point = out.join("runs/relu/depth02/seed1/whole");
    std::fs::remove_file(point.join("summary.json")).unwrap();
    std::fs::create_dir(point.join("summary.json")).unwrap();
    let mut collect = os(&["collect"]);
    collect.push(out.clone().into());
    let o = run(&collect);
    assert_ok("collect", &o);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("depth02/seed1/whole") && said.contains("no readable summary.json"),
        "{said}"
    );
    // With its config (the summary deleted: a directory there is refused as unreadable).
    std::fs::remove_dir(point.join("summary.json")).unwrap();
    collect.extend(["--config".into(), cfg.clone().into()]);
    let said = String::from_utf8_lossy(&run(&collect).stderr).into_owned();
    assert!(
        said.contains("1 of the config's 2 points has no finished result")
            && said.contains("depth   2"),
        "{said}"
    );
}

/// The fourth hostile review, D17: `bench --n 0` names `--n`; `--kink -1e308` is printed as
/// written, not as its 309 digits; a `SLURM_CPUS_PER_TASK` that is no count is said.
#[test]
fn fourth_review_minor_cases() {
    assert_clean_error("bench --n 0", &run(&os(&["bench", "--n", "0"])), &["--n"]);
    let o = run(&os(&["activations", "--kink", "-1e308"]));
    assert_clean_error("--kink -1e308", &o, &["--kink -1e308", "kink"]);
    assert!(String::from_utf8_lossy(&o.stderr).len() < 300);
    let o = probe()
        .args(["theory", "--theta-deg", "5", "--depth", "1"])
        .env("SLURM_CPUS_PER_TASK", "abc")
        .output()
        .unwrap();
    assert_ok("theory", &o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("SLURM_CPUS_PER_TASK=\"abc\""));
    // D14: more samples than the split holds is said before the memory guard's estimate
    // (which such an n inflates to tens of GiB).
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "d.toml",
        "[data]\ndataset = \"digits\"\nn = 100000\n\n[model]\nwidth = 8\ndepth = 1\n\
         activation = \"relu\"\n",
    );
    let o = run(&ntk_args(&cfg, &dir.path().join("o"), &["--dry-run"]));
    assert_clean_error(
        "digits n = 100000",
        &o,
        &["data.n = 100000", "only 1797 samples"],
    );
    assert!(!String::from_utf8_lossy(&o.stderr).contains("needs about"));
}

/// Makes a FIFO (named pipe) at `path`.
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Issue 45, D0: no command renames over a FIFO, a device or a link to one. Every command
/// that takes an output path is given a FIFO there (and, for the figure commands, a FIFO or
/// a link to /dev/null at one of the files they write): each ends with exit code 2 naming
/// it, and the FIFO and the link are still what they were.
#[test]
fn no_command_replaces_a_fifo_or_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    let cfg = write(d, "tiny.toml", TINY);
    let sweep_cfg = write(d, "sweep.toml", TINY_SWEEP);
    let f = fifo.to_str().unwrap();
    let (c, s) = (cfg.to_str().unwrap(), sweep_cfg.to_str().unwrap());
    let bench = ["bench", "--n", "4", "--depths", "1", "--precisions", "f64"];
    let cases: Vec<Vec<&str>> = vec![
        [&bench[..], &["--repeats", "1", "--out", f]].concat(),
        vec!["run", "--config", c, "--out", f],
        vec!["run", "--config", c, "--out", f, "--dry-run"],
        vec!["sweep", "--config", s, "--out", f],
        vec!["sweep", "--config", s, "--out", f, "--dry-run"],
        vec!["fig1", "--out", f],
        vec!["gmap", "--out", f],
        vec!["activations", "--out", f],
        vec!["transfer", "--out", f],
    ];
    for args in &cases {
        let o = run(&os(args));
        assert_clean_error(&args.join(" "), &o, &[f]);
        assert!(is_fifo(&fifo), "{}: the FIFO was replaced", args.join(" "));
    }
    // bench --out through a link to a device: refused, the link stays a link.
    let null = d.join("null.json");
    std::os::unix::fs::symlink("/dev/null", &null).unwrap();
    let o = run(&os(
        &[&bench[..], &["--out", null.to_str().unwrap()]].concat()
    ));
    assert_clean_error("bench --out link to /dev/null", &o, &["character device"]);
    assert!(std::fs::symlink_metadata(&null).unwrap().is_symlink());
    // A figure command's own file a FIFO, another a link to /dev/null.
    let figs = d.join("figs");
    std::fs::create_dir(&figs).unwrap();
    mkfifo(&figs.join("gmap.csv"));
    std::os::unix::fs::symlink("/dev/null", figs.join("gmap.svg")).unwrap();
    let o = run(&os(&["gmap", "--out", figs.to_str().unwrap()]));
    assert_clean_error("gmap, gmap.csv a FIFO", &o, &["gmap.csv", "FIFO"]);
    assert!(is_fifo(&figs.join("gmap.csv")));
    std::fs::remove_file(figs.join("gmap.csv")).unwrap();
    let o = run(&os(&["gmap", "--out", figs.to_str().unwrap()]));
    assert_clean_error("gmap, gmap.svg a link to /dev/null", &o, &["gmap.svg"]);
    assert!(
        std::fs::symlink_metadata(figs.join("gmap.svg"))
            .unwrap()
            .is_symlink()
    );
    // collect writes its tables into the sweep directory: a FIFO there is refused too.
    let out = d.join("sw");
    assert_ok("sweep", &run(&sweep_args(&sweep_cfg, &out, &[])));
    std::fs::remove_file(out.join("summary.csv")).unwrap();
    mkfifo(&out.join("summary.csv"));
    let o = run(&os(&["collect", out.to_str().unwrap()]));
    assert_clean_error("collect, summary.csv a FIFO", &o, &["summary.csv", "FIFO"]);
    assert!(is_fifo(&out.join("summary.csv")));
}

/// The exit code and the last line of stderr (the error) of `args` with and without
/// `--dry-run` (each into a fresh output directory under `d`).
fn dry_and_real(d: &Path, name: &str, args: &[OsString]) -> [(Option<i32>, String); 2] {
    [true, false].map(|dry| {
        let mut a = args.to_vec();
        a.push("--out".into());
        a.push(d.join(format!("{name}-{dry}")).into());
        if dry {
            a.push("--dry-run".into());
        }
        let o = run(&a);
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!stderr.contains("panicked"), "{name} (dry {dry}): {stderr}");
        let error = stderr
            .lines()
            .rev()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_default()
            .to_string();
        (o.status.code(), error)
    })
}

/// Issue 45, D1: the dry run refuses what the run refuses, with the same exit code and the
/// same words: the prerequisites of `probe.method = "theory"` and `"structured"`, inputs
/// beyond f32's range in an f32 probe, an output index past the network's outputs. A
/// table of configs, each run with and without `--dry-run` (as a run and as a one-point
/// sweep); the good config passes both.
#[test]
fn the_dry_run_refuses_what_the_run_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let huge: Vec<String> = (0..12)
        .map(|i| format!("{},1,2", if i == 5 { "1e39" } else { "0.5" }))
        .collect();
    let x = write(d, "x.csv", &format!("a,b,c\n{}\n", huge.join("\n")));
    let file_data = format!(
        "[data]\ndataset = \"file\"\nn = 12\nx = \"{}\"\n",
        x.display()
    );
    let tiny_file = TINY.replace(
        "[data]\ndataset = \"synthetic\"\nn = 12\ninput_dim = 3\n",
        &file_data,
    );
    // Inputs whose Gram matrix overflows f64 (the run refused them, its dry run did not).
    let vast: Vec<String> = (0..12).map(|i| format!("{}e155,1,2", 1 + i)).collect();
    let x_vast = write(d, "vast.csv", &format!("a,b,c\n{}\n", vast.join("\n")));
    let vast_file = tiny_file.replace(&x.display().to_string(), &x_vast.display().to_string());
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        ("good", TINY.into(), vec![]),
        (
            "theory, bias",
            TINY.into(),
            vec!["probe.method=\"theory\"", "model.bias=true"],
        ),
        (
            "theory, standard",
            TINY.into(),
            vec![
                "probe.method=\"theory\"",
                "model.parameterization=\"standard\"",
            ],
        ),
        (
            "theory, layer_norm",
            TINY.into(),
            vec![
                "probe.method=\"theory\"",
                "model.normalization=\"layer_norm\"",
            ],
        ),
        (
            "theory, 2 outputs",
            TINY.into(),
            vec!["probe.method=\"theory\"", "model.output_dim=2"],
        ),
        (
            "structured, batch_norm",
            TINY.into(),
            vec![
                "probe.method=\"structured\"",
                "model.normalization=\"batch_norm\"",
            ],
        ),
        (
            "output past the outputs",
            TINY.into(),
            vec!["probe.output=3"],
        ),
        (
            "beyond f32",
            tiny_file.clone(),
            vec!["probe.precision=\"f32\""],
        ),
        ("file in f64", tiny_file, vec![]),
        ("Gram beyond f64", vast_file, vec![]),
    ];
    for (name, text, sets) in &cases {
        let cfg = write(d, &format!("{}.toml", name.replace([' ', ','], "_")), text);
        let sweep_cfg = write(
            d,
            &format!("{}-sweep.toml", name.replace([' ', ','], "_")),
            &format!(
                "{text}\n[sweep]\ndepths = [2]\nactivations = [\"relu\"]\nseeds = [1]\n\
                 protocols = [\"whole\"]\ntheory = false\nout = \"unused\"\n"
            ),
        );
        let mut run_args = os(&["run", "--config"]);
        run_args.push(cfg.into());
        let mut sweep_args = os(&["sweep", "--config"]);
        sweep_args.push(sweep_cfg.into());
        for s in sets {
            for a in [&mut run_args, &mut sweep_args] {
                a.extend(os(&["--set", s]));
            }
        }
        for (how, args) in [("run", &run_args), ("sweep", &sweep_args)] {
            let [dry, real] = dry_and_real(d, &format!("{name}-{how}"), args);
            assert_eq!(
                dry.0, real.0,
                "{name} ({how}): dry run {dry:?}, run {real:?}"
            );
            assert!(
                real.1.contains(&dry.1),
                "{name} ({how}): other words: dry run {:?}, run {:?}",
                dry.1,
                real.1
            );
            let want_ok = name.starts_with("good") || name.starts_with("file in f64");
            assert_eq!(dry.0 == Some(0), want_ok, "{name} ({how}): {dry:?}");
        }
    }
}

/// Issue 45, D2: no silent wrong result. A `--set` value holding a line break is refused
/// (it ran with the rest of the config dropped); `--resume --save-weights` of a finished
/// point without weights computes it again with them (it said `kept` and wrote none);
/// `bench` refuses 0 repeats, width or input dimension (it printed inf with exit code 0); a
/// figure title with control characters still writes well-formed SVG text; a negative κ
/// in summary.csv or results.csv is refused naming the row (its curve vanished); the
/// blocks protocol never reports a block of one sample.
#[test]
fn no_silent_wrong_results() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "tiny.toml", TINY);
    let o = run(&ntk_args(
        &cfg,
        &d.join("nl"),
        &["--set", "model.width=8\n[data]\nn=3"],
    ));
    assert_clean_error(
        "a newline in --set",
        &o,
        &["model.width=8\\n", "control character"],
    );
    assert!(!d.join("nl").exists());

    // --resume --save-weights of a point finished without weights.
    let out = d.join("w");
    assert_ok("first run", &run(&ntk_args(&cfg, &out, &[])));
    assert!(!out.join("weights.safetensors").exists());
    let dry = run(&ntk_args(
        &cfg,
        &out,
        &["--resume", "--save-weights", "--dry-run"],
    ));
    assert_ok("dry run", &dry);
    assert!(
        String::from_utf8_lossy(&dry.stdout).contains("computed again"),
        "{}",
        String::from_utf8_lossy(&dry.stdout)
    );
    let o = run(&ntk_args(&cfg, &out, &["--resume", "--save-weights"]));
    assert_ok("--resume --save-weights", &o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("wrote"));
    assert!(out.join("weights.safetensors").is_file() && out.join("outputs.npy").is_file());
    let o = run(&ntk_args(&cfg, &out, &["--resume", "--save-weights"]));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("kept"),
        "now it is kept"
    );
    // Round 90, N5: a plain rerun without --save-weights replaces the set whole; its dry run
    // names the weights it removes, and the run removes them.
    let dry = run(&ntk_args(&cfg, &out, &["--dry-run"]));
    assert_ok("plain dry run", &dry);
    let said = String::from_utf8_lossy(&dry.stdout);
    assert!(
        said.contains(
            "computed again, its set replaced whole: weights.safetensors and \
                       outputs.npy (of an earlier --save-weights) removed"
        ),
        "{said}"
    );
    let dry = run(&ntk_args(&cfg, &out, &["--dry-run", "--save-weights"]));
    assert!(!String::from_utf8_lossy(&dry.stdout).contains("replaced whole"));
    let o = run(&ntk_args(&cfg, &out, &[]));
    assert_ok("plain rerun", &o);
    assert!(!out.join("weights.safetensors").exists() && !out.join("outputs.npy").exists());
    // Ninety-second, N2: the run says it too.
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(
            "weights.safetensors and outputs.npy (of an earlier --save-weights) go with the set"
        ),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // The blocks protocol with a remainder of one sample (n = 13, blocks of 4).
    let out = d.join("b");
    let o = run(&ntk_args(
        &cfg,
        &out,
        &[
            "--set",
            "data.n=13",
            "--protocol",
            "blocks",
            "--set",
            "probe.block_size=4",
        ],
    ));
    assert_ok("blocks", &o);
    let blocks = std::fs::read_to_string(out.join("blocks.csv")).unwrap();
    let sizes: Vec<&str> = blocks
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(sizes, ["4", "4", "5"], "{blocks}");

    // bench's counts.
    for (flag, value) in [("--repeats", "0"), ("--width", "0"), ("--input-dim", "0")] {
        let o = run(&os(&["bench", "--n", "4", "--depths", "1", flag, value]));
        assert_clean_error(&format!("bench {flag} {value}"), &o, &[flag, "0"]);
    }
    // Ninth hostile round: a count beyond a config's integers read "TOML parse error at
    // line 7" of a config the user never wrote; the flag and the value are named.
    for flag in ["--width", "--input-dim", "--n", "--depths"] {
        let o = run(&os(&["bench", flag, "18446744073709551615"]));
        assert_clean_error(
            &format!("bench {flag} 2^64-1"),
            &o,
            &[flag, "18446744073709551615", "9223372036854775807"],
        );
        assert!(!String::from_utf8_lossy(&o.stderr).contains("TOML"));
    }

    // A collected sweep: a title with control characters, then a negative κ.
    let sweep_cfg = write(d, "sweep.toml", TINY_SWEEP);
    let out = d.join("sw");
    assert_ok("sweep", &run(&sweep_args(&sweep_cfg, &out, &[])));
    let o = run(&os(&[
        "plot",
        out.to_str().unwrap(),
        "--title",
        "a\u{1}b\u{1b}[31m<c>",
    ]));
    assert_ok("plot with a control title", &o);
    for entry in std::fs::read_dir(&out).unwrap().flatten() {
        let p = entry.path();
        if p.extension().is_some_and(|e| e == "svg") {
            let svg = std::fs::read_to_string(&p).unwrap();
            assert!(
                !svg.chars()
                    .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')),
                "{}: a control character",
                p.display()
            );
        }
    }
    // NaN, which no tool writes there, too (twenty-first hostile round, N5: drawn); every
    // other value in its domain (twenty-second round, N3: a kappa_min of inf above the mean,
    // angles of 400 and -7 degrees, a negative spread, a NaN log10 were drawn).
    // Round 24's D4: counts outside their domain (a group of 0 seeds, more singular seeds
    // than seeds) and an infinite kappa on a row that is not singular.
    // Round 25's D1: the two tables against each other (a group's seeds and singular counts
    // its rows; an infinite mean beside finite seeds; a singular row with a finite kappa).
    let cases: [(&str, &str, &[&str]); 10] = [
        ("summary.csv", "seeds", &["0", "2"]),
        ("summary.csv", "singular", &["5", "1"]),
        ("results.csv", "singular", &["true"]),
        ("summary.csv", "kappa_mean", &["-3.5", "NaN", "inf", "4000"]),
        ("summary.csv", "kappa_min", &["inf", "123456789"]),
        (
            "summary.csv",
            "min_grad_angle_mean_deg",
            &["400", "-7", "45.5"],
        ),
        ("summary.csv", "kappa_std", &["-7", "inf"]),
        ("summary.csv", "log10_kappa_mean", &["NaN"]),
        ("results.csv", "kappa", &["-3.5", "NaN", "inf"]),
        ("results.csv", "min_grad_angle_deg", &["400"]),
    ];
    for (file, column, bads) in cases {
        let path = out.join(file);
        let good = std::fs::read_to_string(&path).unwrap();
        let mut rows: Vec<csv::StringRecord> = csv::Reader::from_reader(good.as_bytes())
            .records()
            .map(Result::unwrap)
            .collect();
        let header = csv::Reader::from_reader(good.as_bytes())
            .headers()
            .unwrap()
            .clone();
        let k = header.iter().position(|h| h == column).unwrap();
        for &bad in bads {
            let mut fields: Vec<String> = rows[1].iter().map(str::to_string).collect();
            fields[k] = bad.into();
            rows[1] = csv::StringRecord::from(fields);
            let mut w = csv::Writer::from_path(&path).unwrap();
            w.write_record(&header).unwrap();
            for r in &rows {
                w.write_record(r).unwrap();
            }
            w.flush().unwrap();
            let o = run(&os(&["plot", out.to_str().unwrap()]));
            assert_clean_error(
                &format!("{column} {bad} in {file}"),
                &o,
                &[file, "row 2", column, bad],
            );
        }
        std::fs::write(&path, good).unwrap();
    }
}

/// Issue 45, D3: `bench` estimates its memory and refuses what does not fit before any
/// work, as every other command (it grew until the OOM killer ended it), naming its flags.
#[test]
fn bench_refuses_what_does_not_fit() {
    for (flag, value) in [("--n", "2000000"), ("--width", "100000000")] {
        for limit in [None, Some("1G")] {
            let mut a = os(&["bench", "--depths", "1", "--precisions", "f64", flag, value]);
            if let Some(l) = limit {
                a.extend(os(&["--max-memory", l]));
            }
            let o = run(&a);
            assert_clean_error(
                &format!("bench {flag} {value}"),
                &o,
                &[flag, value, "needs about"],
            );
        }
    }
    // What fits runs.
    let o = run(&os(&[
        "bench",
        "--n",
        "8",
        "--depths",
        "1",
        "--precisions",
        "f64",
        "--repeats",
        "1",
        "--max-memory",
        "1G",
    ]));
    assert_ok("a small bench", &o);
}

/// `args` of the probe under `ulimit -v kib` (at most 60 s), with `env` set.
fn under_ulimit(kib: u64, env: &[(&str, &str)], args: &[OsString]) -> Output {
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(format!("ulimit -v {kib} && exec timeout 60 \"$@\""))
        .arg("limited")
        .arg(env!("CARGO_BIN_EXE_ntk-probe"))
        .args(args)
        .env_remove("NTK_MAX_MEMORY")
        .env_remove("SLURM_CPUS_PER_TASK")
        .env_remove("RAYON_NUM_THREADS")
        .env_remove("OPENBLAS_NUM_THREADS");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// [`TINY`] on 50 synthetic inputs of `input_dim` through an MLP of `width` and `depth`, in
/// `precision`: the shapes the memory estimates are held to.
fn shaped(input_dim: usize, width: usize, depth: usize, precision: &str) -> String {
    TINY.replace("n = 12", "n = 50")
        .replace("input_dim = 3", &format!("input_dim = {input_dim}"))
        .replace("width = 8", &format!("width = {width}"))
        .replace("depth = 2", &format!("depth = {depth}"))
        .replace("\"f64\"", &format!("{precision:?}"))
}

/// The `ulimit -v` a refusal under `ulimit -v {kib}` advises (a clean error that names
/// it), with the refusal's words.
fn advised(kib: u64, o: &Output) -> (u64, String) {
    assert_clean_error(&format!("ulimit -v {kib}"), o, &["raise it to ulimit -v"]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let next = stderr
        .split("raise it to ulimit -v ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    (next, stderr)
}

/// Issue 45, D3: under `ulimit -v`, the `ulimit -v N` each refusal advises is enough for
/// what it checked once followed (it grew each time: the allocator reserved more under a
/// higher limit), so one refusal (the program's floor, with room for the program itself and
/// a small run) precedes a small run; and `SLURM_CPUS_PER_TASK=16` under `ulimit -v 4000000` ends (it hung in 3-5 of 5
/// tries: 16 BLAS threads on 2 CPUs, each with a 128 MiB buffer, and OpenBLAS retrying a
/// failed allocation forever).
#[test]
fn the_advised_ulimit_is_enough_and_slurm_threads_never_hang() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "tiny.toml", &TINY.replace("n = 12", "n = 200"));
    let mut kib = 200_000u64;
    let mut refusals = 0;
    loop {
        let o = under_ulimit(kib, &[], &ntk_args(&cfg, &d.join(format!("o{kib}")), &[]));
        if o.status.success() {
            break;
        }
        let (next, stderr) = advised(kib, &o);
        assert!(next > kib, "{stderr}");
        kib = next;
        refusals += 1;
        // Hundred-and-thirty-first hostile round, D5: the floor's advice leaves room for
        // the program itself and a small run's buffers, so a small run starts there.
        assert!(
            refusals <= 1,
            "a second refusal: the advice was not enough:\n{stderr}"
        );
    }
    for attempt in 0..3 {
        let o = under_ulimit(
            4_000_000,
            &[("SLURM_CPUS_PER_TASK", "16")],
            &ntk_args(&cfg, &d.join(format!("slurm{attempt}")), &[]),
        );
        assert_ok(&format!("SLURM_CPUS_PER_TASK=16, attempt {attempt}"), &o);
    }
}

/// Issue 65, hundred-and-thirtieth hostile round, D3 and D4: a CSV's values take about four
/// times its text (`0,` is two bytes, eight as f64), and they were parsed into a buffer grown
/// by doubling: under `ulimit -v` the read failed in the allocator naming no file, and the
/// limit the guard advised after a whole read (which left the allocator's mapping larger)
/// was refused again. The shape is now counted keeping no values, the guard advises from
/// it, and the values are parsed into one buffer of that size: every refusal names the
/// limit, the first advised one runs, dry run and run alike.
#[test]
fn a_large_csv_under_ulimit_is_advised_a_limit_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 2,000,000 rows of eight values: 32 MB of text, 128 MB of values.
    let row = "0,0,0,0,0,0,0.5,1\n";
    std::fs::write(d.join("big.csv"), row.repeat(2_000_000)).unwrap();
    let cfg = write(
        d,
        "big.toml",
        &format!(
            "[data]\ndataset = \"file\"\nx = {:?}\nn = 20\nsubset = \"first\"\n\n\
             [model]\nwidth = 8\ndepth = 1\nactivation = \"relu\"\nseed = 1\n\n\
             [probe]\nprecision = \"f64\"\n",
            d.join("big.csv").display().to_string()
        ),
    );
    let out = d.join("out");
    for extra in [&["--dry-run"][..], &[]] {
        let mut kib = 800_000u64;
        let mut refusals = 0;
        loop {
            let mut args = os(&["run", "--config"]);
            args.extend([
                cfg.clone().into_os_string(),
                "--out".into(),
                out.clone().into(),
            ]);
            args.extend(os(extra));
            let o = under_ulimit(kib, &[], &args);
            if o.status.success() {
                break;
            }
            let (next, stderr) = advised(kib, &o);
            kib = next;
            refusals += 1;
            assert!(
                refusals <= 1,
                "the advice was not enough ({extra:?}):\n{stderr}"
            );
        }
        assert_eq!(
            refusals, 1,
            "{extra:?}: the first limit was meant to refuse"
        );
    }
    assert!(out.join("ntk.npy").is_file());
}

/// Issue 65, hundred-and-thirtieth hostile round, D5, and hundred-and-thirty-first, D4: a
/// gzipped IDX file whose count was raised is refused under `ulimit -v` naming the file and
/// what its header declares, before anything is reserved or read (it failed in the
/// allocator naming no file, then was called "too large ... reading stopped there").
#[test]
fn a_gzipped_idx_file_declaring_too_much_is_refused_by_its_header() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fm = d.join("fashion-mnist");
    std::fs::create_dir_all(&fm).unwrap();
    let mut images = Vec::new();
    for word in [0x0803u32, 2_000_000, 28, 28] {
        images.extend(word.to_be_bytes());
    }
    // Pixels that do not compress: the gzip file (1.6 MB) could hold what the header
    // declares at deflate's limit, so only the memory refuses it.
    let mut state = 1u32;
    images.extend((0..2048 * 784).map(|_| {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (state >> 24) as u8
    }));
    std::fs::write(fm.join("train-images-idx3-ubyte"), &images).unwrap();
    let gz = Command::new("gzip")
        .arg(fm.join("train-images-idx3-ubyte"))
        .status()
        .unwrap();
    assert!(gz.success());
    let mut labels = Vec::new();
    for word in [0x0801u32, 10] {
        labels.extend(word.to_be_bytes());
    }
    labels.extend([0u8; 10]);
    std::fs::write(fm.join("train-labels-idx1-ubyte"), &labels).unwrap();
    let cfg = write(
        d,
        "fm.toml",
        "[data]\ndataset = \"fashion-mnist\"\nn = 10\nsubset = \"first\"\n\n\
         [model]\nwidth = 8\ndepth = 1\nactivation = \"relu\"\nseed = 1\n\n\
         [probe]\nprecision = \"f64\"\n",
    );
    let data = d.to_str().unwrap();
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = os(&["run", "--config"]);
        args.extend([
            cfg.clone().into_os_string(),
            "--out".into(),
            d.join("out").into(),
        ]);
        args.extend(os(extra));
        let o = under_ulimit(900_000, &[("NTK_DATA_DIR", data)], &args);
        assert_clean_error(
            "a raised count",
            &o,
            &[
                "train-images-idx3-ubyte.gz",
                "declares 2000000 images of 28x28 pixels (1568000016 bytes in all)",
                "nothing was read",
            ],
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            !stderr.contains("out of memory") && !stderr.contains("reading stopped"),
            "{stderr}"
        );
    }
}

/// Issue 65, fifth hostile round: a sweep drops `model.activation_param` and `model.kink`
/// at points whose activation has no such parameter, so one that no activation of the sweep
/// takes was ignored by every point, exit 0. Refused naming the key, by the dry run as by the
/// run; where some activation takes it, the sweep runs.
#[test]
fn a_sweep_parameter_no_point_takes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "sweep.toml", TINY_SWEEP);
    let out = dir.path().join("out");
    for (set, key) in [
        ("model.activation_param=0.2", "model.activation_param"),
        ("model.kink=-1", "model.kink"),
    ] {
        for extra in [&["--dry-run"][..], &[]] {
            let mut args = vec!["--set", set];
            args.extend(extra);
            let o = run(&sweep_args(&cfg, &out, &args));
            assert_clean_error(set, &o, &[key, "sweep.activations", "relu"]);
            assert!(!out.exists());
        }
    }
    let o = run(&sweep_args(
        &cfg,
        &out,
        &[
            "--set",
            "model.activation_param=0.2",
            "--set",
            "sweep.activations=[\"relu\", \"leaky_relu\"]",
            "--dry-run",
        ],
    ));
    assert_ok("a parameter one activation takes", &o);
    // The same round: probe.block_size where no blocks are formed (a run of the whole
    // protocol, a sweep of protocols = ["whole"]) was unused, exit 0; refused naming it.
    let o = run(&sweep_args(
        &cfg,
        &out,
        &["--set", "probe.block_size=7", "--dry-run"],
    ));
    assert_clean_error("sweep block_size", &o, &["probe.block_size", "7", "blocks"]);
    let tiny = write(dir.path(), "tiny.toml", TINY);
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec!["--set", "probe.block_size=7"];
        args.extend(extra);
        let o = run(&ntk_args(&tiny, &out, &args));
        assert_clean_error("run block_size", &o, &["probe.block_size", "7", "blocks"]);
        assert!(!out.exists());
    }
    let o = run(&ntk_args(
        &tiny,
        &out,
        &[
            "--set",
            "probe.block_size=7",
            "--protocol",
            "blocks",
            "--dry-run",
        ],
    ));
    assert_ok("block_size with the blocks protocol", &o);
}

/// With `NTK_PHASE_FILES=1` and the phase files' place taken by a user's file, the run is
/// refused (no phase files can be kept) while its dry run said `new ... it would be
/// computed`, exit 0 (sixth hostile round, dry run differing from the run). Both refuse
/// now, in the same words, and the file is left as it is; without the variable both go on.
#[test]
fn a_required_phase_place_taken_is_refused_by_the_dry_run_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = d.join("tiled.toml");
    std::fs::write(
        &cfg,
        TINY.replace(
            "precision = \"f64\"",
            "precision = \"f64\"\neigen = \"tiled\"",
        ),
    )
    .unwrap();
    let out = d.join("out");
    let place = d.join(".out.phases");
    std::fs::write(&place, "the user's own\n").unwrap();
    let args = |extra: &[&str]| {
        let mut a = os(&["run", "--config"]);
        a.push(cfg.clone().into());
        a.push("--out".into());
        a.push(out.clone().into());
        a.extend(os(extra));
        a
    };
    for extra in [&["--dry-run"][..], &["--resume", "--dry-run"][..], &[][..]] {
        let o = probe()
            .env("NTK_PHASE_FILES", "1")
            .args(args(extra))
            .output()
            .unwrap();
        assert_clean_error(
            &format!("NTK_PHASE_FILES=1 {extra:?}"),
            &o,
            &[
                "NTK_PHASE_FILES",
                "no phase files can be kept",
                ".out.phases",
            ],
        );
        assert_eq!(std::fs::read_to_string(&place).unwrap(), "the user's own\n");
    }
    let o = probe()
        .env_remove("NTK_PHASE_FILES")
        .args(args(&["--dry-run"]))
        .output()
        .unwrap();
    assert_ok("the place taken, phase files not required", &o);
}

/// `ntk-probe onnx` named a config whose refused key came from `--set` as `F:` alone
/// (sixth hostile round: `F: probe.eigen: not for an ONNX model` for `--set
/// probe.eigen=tiled`); it says `F (with overrides)`, as `ntk-probe run` does.
#[test]
fn onnx_errors_of_set_keys_say_with_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("onnx.toml");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/onnx_mlp.onnx");
    std::fs::write(
        &cfg,
        format!(
            "[onnx]\nfile = \"{}\"\n\n[data]\ndataset = \"synthetic\"\nn = 10\nseed = 0\n",
            model.display()
        ),
    )
    .unwrap();
    let mut a = os(&["onnx", "--config"]);
    a.push(cfg.clone().into());
    a.extend(os(&["--dry-run", "--set", "probe.eigen=tiled"]));
    assert_clean_error(
        "--set probe.eigen",
        &run(&a),
        // The keys [probe] takes, by their names now (seventh hostile round: "device"
        // after the key became probe.backend).
        &[
            "onnx.toml (with overrides): probe.eigen",
            "takes precision, output and backend",
        ],
    );
}

/// Seventh hostile round: `ntk-probe onnx` in f32 with an input beyond f32's range said only
/// "the kernel has non-finite entries (overflow or NaN in the network)" (naming neither the
/// file, the row nor the precision) where its dry run said the kernel "would be computed".
/// Both refuse it now as `ntk-probe run` does, naming the row, the column and probe.precision;
/// in f64 the same inputs are probed (this tanh network saturates: its kernel is finite).
#[test]
fn an_onnx_input_beyond_f32_is_refused_by_run_and_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rows: String = (0..12)
        .map(|i| {
            let big = if i == 7 { "-4e300" } else { "0.5" };
            format!("0.{i},{big},1,-1,0.25\n")
        })
        .collect();
    std::fs::write(d.join("x.csv"), rows).unwrap();
    let cfg = d.join("onnx.toml");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/onnx_mlp.onnx");
    std::fs::write(
        &cfg,
        format!(
            "[onnx]\nfile = \"{}\"\n\n[data]\ndataset = \"file\"\nx = \"{}\"\n",
            model.display(),
            d.join("x.csv").display()
        ),
    )
    .unwrap();
    for extra in [&["--dry-run"][..], &[]] {
        let out = d.join("out");
        let mut a = os(&["onnx", "--precision", "f32", "--config"]);
        a.push(cfg.clone().into());
        a.push("--out".into());
        a.push(out.clone().into());
        a.extend(os(extra));
        assert_clean_error(
            "onnx f32 input beyond f32",
            &run(&a),
            &[
                "x.csv",
                "row 7 (counted from 0, as numpy indexes them), column 1",
                "beyond f32's range",
                "probe.precision",
            ],
        );
        assert!(!out.join("summary.json").exists());
    }
    let mut a = os(&["onnx", "--precision", "f64", "--config"]);
    a.push(cfg.into());
    a.push("--out".into());
    a.push(d.join("f64").into());
    assert_ok("onnx f64 input at 4e300", &run(&a));
}

/// The eighth hostile round's notes, settled: a config for the other command says which
/// command takes it (T03: `run` with a `[sweep]` table, also one a `--set` adds; `sweep`
/// without one), and `collect` on ntk-train's runs names the tool that collects them
/// (CO05, PC07); `bench` refuses a backend before it prints the table's header (B03).
#[test]
fn eighth_review_notes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = write(d, "s.toml", TINY_SWEEP);
    let one = write(d, "t.toml", TINY);
    let o = run(&ntk_args(&sweep, &d.join("o"), &["--dry-run"]));
    assert_clean_error(
        "run a sweep",
        &o,
        &["s.toml", "has a [sweep] table", "ntk-probe sweep"],
    );
    let o = run(&ntk_args(&one, &d.join("o"), &["--set", "sweep.seeds=[1]"]));
    assert_clean_error(
        "run with a --set sweep",
        &o,
        &[
            "t.toml (with overrides)",
            "ntk-probe sweep",
            "and the same --set",
        ],
    );
    // Thirty-first hostile round, N5: an [onnx] table from a --set was blamed on the file.
    let o = run(&ntk_args(
        &one,
        &d.join("o"),
        &["--set", "onnx={file=\"net.onnx\"}"],
    ));
    assert_clean_error(
        "run with a --set onnx",
        &o,
        &[
            "t.toml (with overrides): has an [onnx] table",
            "ntk-probe onnx --config",
            "and the same --set",
        ],
    );
    let o = run(&sweep_args(&one, &d.join("o"), &["--dry-run"]));
    assert_clean_error(
        "sweep one",
        &o,
        &["t.toml", "has no [sweep] table", "ntk-probe run"],
    );
    assert!(!d.join("o").exists());

    let train_run = d.join("ts/runs/depth001_relu_none_lr1e-1_seed1");
    std::fs::create_dir_all(&train_run).unwrap();
    std::fs::write(train_run.join("metrics.csv"), "epoch\n").unwrap();
    std::fs::write(train_run.join("summary.json"), "{}").unwrap();
    let mut collect = os(&["collect"]);
    collect.push(d.join("ts").into());
    let o = run(&collect);
    assert_clean_error(
        "collect a train sweep",
        &o,
        &["holds ntk-train runs", "ntk-train collect"],
    );
    collect.extend(["--config".into(), sweep.into()]);
    let o = run(&collect);
    assert_clean_error(
        "with --config",
        &o,
        &["holds ntk-train runs", "ntk-train collect"],
    );
    assert_eq!(
        std::fs::read_dir(d.join("ts")).unwrap().count(),
        1,
        "nothing written"
    );

    // B03: a backend refused before the table's header is printed.
    let o = run(&os(&["bench", "--backend", "bogus", "--n", "8"]));
    assert_clean_error("bench --backend bogus", &o, &["unknown backend `bogus`"]);
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// The ninth hostile round's V06: `RAYON_NUM_THREADS=100000` spent minutes starting
/// threads before any work; a count beyond 64 threads a CPU is refused by name, first.
#[test]
fn ninth_review_notes() {
    let o = probe()
        .args(["theory", "--theta-deg", "5", "--depth", "1"])
        .env("RAYON_NUM_THREADS", "100000")
        .output()
        .unwrap();
    assert_clean_error(
        "RAYON_NUM_THREADS=100000",
        &o,
        &["RAYON_NUM_THREADS=100000", "worker threads"],
    );
}

/// Issue 65, tenth hostile round. `ntk-probe run --set sweep=1` (or `sweep=[]`, no table)
/// read "has a [sweep] table: run it with `ntk-probe sweep`"; only a table is one, and the
/// load names the value's type. `ntk-probe collect` on a probe sweep whose `runs/` also held
/// a training run said it "holds ntk-train runs, not ntk-probe points" and sent the user to
/// `ntk-train collect`, which wrote training tables into the probe sweep's directory: the
/// mix is said as one, and nothing written.
#[test]
fn tenth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let one = write(d, "t.toml", TINY);
    for value in ["sweep=1", "sweep=[]"] {
        let o = run(&ntk_args(
            &one,
            &d.join("o"),
            &["--set", value, "--dry-run"],
        ));
        assert_clean_error(value, &o, &[&format!("--set {value}")]);
        assert!(
            !String::from_utf8_lossy(&o.stderr).contains("has a [sweep] table"),
            "{value}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert!(!d.join("o").exists());

    let mixed = d.join("ps");
    let point = mixed.join("runs/relu/depth01/seed1/whole");
    std::fs::create_dir_all(&point).unwrap();
    std::fs::write(point.join("summary.json"), "{}").unwrap();
    let train_run = mixed.join("runs/trainrun");
    std::fs::create_dir_all(&train_run).unwrap();
    std::fs::write(train_run.join("metrics.csv"), "epoch\n").unwrap();
    let mut collect = os(&["collect"]);
    collect.push(mixed.clone().into());
    let o = run(&collect);
    assert_clean_error(
        "collect a mix",
        &o,
        &[
            "runs/trainrun/metrics.csv",
            "beside other entries under runs/",
        ],
    );
    assert!(!String::from_utf8_lossy(&o.stderr).contains("collect it with"));
    assert_eq!(
        std::fs::read_dir(&mixed).unwrap().count(),
        1,
        "nothing written"
    );
    // A training sweep with a run killed before its first epoch (config.toml alone) is
    // still a training sweep, not a mix.
    let ts = d.join("ts");
    for (run_dir, file) in [("a", "metrics.csv"), ("b", "config.toml")] {
        std::fs::create_dir_all(ts.join("runs").join(run_dir)).unwrap();
        std::fs::write(ts.join("runs").join(run_dir).join(file), "x\n").unwrap();
    }
    let mut collect = os(&["collect"]);
    collect.push(ts.into());
    let o = run(&collect);
    assert_clean_error(
        "a train sweep",
        &o,
        &["use ntk-train on it (`ntk-train collect"],
    );
}

/// The twelfth hostile review (experiments/hostile/round12.md).
///
/// T07: `probe.method = "theory"` with `probe.embedding_angles` and `probe.pair` reported the
/// embedding angles theta_l of the seeded finite network (width 8 here) beside the theory's
/// kernel and gradient angles: they changed with `model.seed` and `model.width`. A theory
/// run now reports the infinite-width recursion's angles: free of the seed and the width,
/// and for ReLU each layer's pair angle is the arc-cosine map of the one before
/// (cos t' = (sin t + (pi - t) cos t) / pi).
#[test]
fn twelfth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "t.toml", TINY);
    let angles = |seed: &str, width: &str, method: &str| -> (Vec<f64>, Vec<f64>, f64) {
        let out = d.join(format!("o_{seed}_{width}_{method}"));
        let o = run(&ntk_args(
            &cfg,
            &out,
            &[
                "--set",
                &format!("probe.method={method}"),
                "--set",
                "probe.embedding_angles=true",
                "--set",
                "probe.pair=[2,5]",
                "--set",
                &format!("model.seed={seed}"),
                "--set",
                &format!("model.width={width}"),
            ],
        ));
        assert_ok(method, &o);
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        let v = |key: &str| -> Vec<f64> {
            s[key]
                .as_array()
                .unwrap_or_else(|| panic!("{key} in {s}"))
                .iter()
                .map(|a| a.as_f64().unwrap())
                .collect()
        };
        (
            v("embedding_min_angle_deg"),
            v("pair_embedding_angles_deg"),
            s["pair_grad_angle_deg"].as_f64().unwrap(),
        )
    };
    // A theory run takes no seed (nineteenth hostile round, D2: `model.seed` other than the
    // default is refused there), so the finite network below is seeded, the theory not.
    let theory = angles("0", "8", "theory");
    assert_eq!(
        theory,
        angles("0", "64", "theory"),
        "the width changed them"
    );
    let (min, pair, _) = &theory;
    assert_eq!((min.len(), pair.len()), (3, 3));
    for l in 0..2 {
        let t = pair[l].to_radians();
        let want = ((t.sin() + (std::f64::consts::PI - t) * t.cos()) / std::f64::consts::PI)
            .acos()
            .to_degrees();
        assert!(
            (pair[l + 1] - want).abs() < 1e-9,
            "layer {}: {} vs the arc-cosine map's {want}",
            l + 1,
            pair[l + 1]
        );
    }
    // The finite network's angles are its own (a width-8 network is far from the limit),
    // and layer 0 (the inputs) is common to both.
    let (net_min, net_pair, _) = angles("1", "8", "auto");
    assert_eq!((net_min[0], net_pair[0]), (min[0], pair[0]));
    assert_ne!(net_pair, *pair);

    // P05: a BatchNorm MLP probed in f32 panicked ("storage: dtype mismatch (expected F64,
    // got F32)", exit 101), both protocols: the f64 check of the f32 kernel cast a copy of
    // the network to f64, and the copy shared (so cast) the network's running statistics.
    // The f32 kernel now matches the f64 one to f32's rounding.
    let kappa = |precision: &str, protocol: &str| -> f64 {
        let out = d.join(format!("bn_{precision}_{protocol}"));
        let mut extra = vec![
            "--set".to_string(),
            "model.normalization=batch_norm".into(),
            "--set".into(),
            format!("probe.precision={precision}"),
            "--set".into(),
            format!("probe.protocol={protocol}"),
        ];
        if protocol == "blocks" {
            extra.extend(["--set".into(), "probe.block_size=6".into()]);
        }
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let o = run(&ntk_args(&cfg, &out, &extra));
        assert_ok(&format!("batch_norm {precision} {protocol}"), &o);
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        s["kappa"].as_f64().unwrap()
    };
    // P07: `probe.pair` on a zero input: its angles are undefined; they read "NaN" on the
    // terminal and null in summary.json without a word. They read "undefined", and the
    // note says why.
    let x = write(
        d,
        "x.csv",
        "1,2,0.5\n0,0,0\n-1,0.3,2\n0.2,-1,1\n2,1,-1\n0.5,0.5,0.1\n",
    );
    let zero = write(
        d,
        "zero.toml",
        &format!(
            "[data]\ndataset = \"file\"\nx = {x:?}\n[model]\nwidth = 8\ndepth = 2\n\
             activation = \"relu\"\nseed = 1\n[probe]\nprecision = \"f64\"\npair = [1, 2]\n"
        ),
    );
    let out = d.join("zero");
    let o = run(&ntk_args(&zero, &out, &[]));
    assert_ok("a zero input in the pair", &o);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(!stdout.contains("NaN"), "{stdout}");
    assert!(stdout.contains("pair grad angle     undefined"), "{stdout}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(
        s["note"]
            .as_str()
            .is_some_and(|n| n.contains("probe.pair = [1, 2]: an angle of the pair is undefined")),
        "{s}"
    );

    for protocol in ["whole", "blocks"] {
        let (k32, k64) = (kappa("f32", protocol), kappa("f64", protocol));
        assert!(
            (k32 / k64 - 1.0).abs() < 1e-4,
            "{protocol}: kappa {k32} in f32, {k64} in f64"
        );
    }
}

/// The thirteenth hostile round (experiments/hostile/round13.md).
#[test]
fn thirteenth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "t.toml", TINY);
    // P02, P03: a normalization was named by Rust's Debug spelling ("normalization
    // LayerNorm", "field `normalization` = BatchNorm") where the file says "layer_norm",
    // and LayerNorm, which normalizes each sample on its own, was said to couple samples.
    let refused = |extra: &[&str], words: &str| {
        let out = d.join("refused");
        let o = run(&ntk_args(&cfg, &out, extra));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(words), "{extra:?}: {stderr}");
        for debug in [
            "LayerNorm couples",
            "BatchNorm:",
            "= LayerNorm",
            "= BatchNorm",
        ] {
            assert!(!stderr.contains(debug), "{extra:?}: {stderr}");
        }
        assert!(
            !out.exists(),
            "{extra:?}: a refused run made {}",
            out.display()
        );
    };
    let structured = ["--set", "probe.method=structured", "--set"];
    refused(
        &[&structured[..], &["model.normalization=layer_norm"]].concat(),
        "model.normalization = \"layer_norm\": LayerNorm normalizes each sample over its \
         features",
    );
    refused(
        &[&structured[..], &["model.normalization=batch_norm"]].concat(),
        "model.normalization = \"batch_norm\": BatchNorm couples the samples of a batch",
    );
    for norm in ["layer_norm", "batch_norm"] {
        refused(
            &[
                "--set",
                "model.depth=0",
                "--set",
                &format!("model.normalization={norm}"),
            ],
            &format!("field `normalization` = \"{norm}\": a depth-0 (linear) model"),
        );
    }
}

/// The fourteenth hostile review (experiments/hostile/round14.md), ntk-probe's defects: D2
/// (`bench --out` in a missing directory failed after every row was timed), D3 (a depth
/// beyond the limit refused after the rows before it, as the config field `depth`), D15
/// (`plot` on ntk-train's runs said "run `ntk-probe collect` first", which refuses them).
#[test]
fn fourteenth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bench = |extra: &[&str]| {
        let mut v = os(&["bench", "--n", "10", "--width", "4", "--repeats", "1"]);
        v.extend(os(extra));
        run(&v)
    };
    let o = bench(&[
        "--depths",
        "1",
        "--out",
        d.join("nodir/x.json").to_str().unwrap(),
    ]);
    assert_clean_error(
        "bench --out in a missing directory",
        &o,
        &["--out", "nodir", "not a directory"],
    );
    assert!(
        o.stdout.is_empty(),
        "nothing timed: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = bench(&["--depths", "1,10001"]);
    assert_clean_error(
        "bench --depths 1,10001",
        &o,
        &["--depths 10001", "at most 10000"],
    );
    assert!(
        o.stdout.is_empty(),
        "nothing timed: {}",
        String::from_utf8_lossy(&o.stdout)
    );

    // D8: a probe sweep into ntk-train's sweep is refused before any point, dry run too.
    let train_sweep = d.join("ts");
    std::fs::create_dir_all(train_sweep.join("runs/a")).unwrap();
    std::fs::write(train_sweep.join("runs/a/metrics.csv"), "epoch\n1\n").unwrap();
    let cfg = write(d, "s.toml", TINY_SWEEP);
    for extra in [&[][..], &["--dry-run"][..]] {
        let o = run(&sweep_args(&cfg, &train_sweep, extra));
        assert_clean_error(
            "a probe sweep into a training sweep",
            &o,
            &["holds ntk-train runs"],
        );
    }
    assert_eq!(
        std::fs::read_dir(train_sweep.join("runs")).unwrap().count(),
        1
    );

    let train_run = d.join("tr");
    std::fs::create_dir_all(&train_run).unwrap();
    std::fs::write(train_run.join("metrics.csv"), "epoch\n1\n").unwrap();
    let mut plot = os(&["plot"]);
    plot.push(train_run.clone().into());
    let o = run(&plot);
    assert_clean_error("plot a training run", &o, &["ntk-train plot"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("ntk-probe collect` first"));

    // D9: plot --out into a training run's directory (or another probe output set) is
    // refused before any figure; into a new directory, and again into it, it draws.
    let sweep = d.join("sw");
    assert_ok("sweep", &run(&sweep_args(&cfg, &sweep, &[])));
    let plot_to = |out: &Path| {
        run(&os(&[
            "plot",
            sweep.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]))
    };
    let before: Vec<_> = std::fs::read_dir(&train_run).unwrap().flatten().collect();
    assert_clean_error(
        "plot into a training run",
        &plot_to(&train_run),
        &["tr", "not figures", "metrics.csv"],
    );
    assert_eq!(std::fs::read_dir(&train_run).unwrap().count(), before.len());
    let figures = d.join("figures");
    assert_ok("plot into a new directory", &plot_to(&figures));
    assert_ok("plot into its figures", &plot_to(&figures));
    assert_ok("plot into the sweep itself", &plot_to(&sweep));
    // Hundred-and-twenty-fifth hostile round, D2: an image of the user's at a figure's name
    // in a directory of images, or a figure edited since the plot wrote it, is refused,
    // never replaced.
    assert_user_images_kept(&figures, d, &plot_to);
    // Hundred-and-twenty-sixth, N1: at the record's name, a directory or a user's JSON is
    // refused before any figure (the figures could not be recorded; the next plot refused
    // them as a user's).
    for (name, record) in [("rd", None), ("rj", Some("{\"mine\": 1}"))] {
        let out = d.join(name);
        match record {
            None => std::fs::create_dir_all(out.join(".ntk-reports.json")).unwrap(),
            Some(text) => {
                std::fs::create_dir_all(&out).unwrap();
                std::fs::write(out.join(".ntk-reports.json"), text).unwrap();
            }
        }
        assert_clean_error(
            "plot beside a record not the tools'",
            &plot_to(&out),
            &[".ntk-reports.json", "could not be recorded"],
        );
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1, "{name}");
    }
    assert_edited_captions_kept(&sweep, &|args: &[&str]| run(&os(args)));
    // Hundred-and-twenty-sixth, D3: a sweep into a folder whose runs/ holds TensorBoard's
    // logs, or an empty runs/ beside a user's figure, is refused, the dry run too. And
    // (hundred-and-twenty-seventh, D1, D2) neither a claim left by a refused sweep, nor a
    // user's own `summary.json`, nor a sweep's point beside them lets them by.
    let png = std::fs::read(figures.join("kappa_vs_depth_whole.png")).unwrap();
    let (tb, empty) = (d.join("tb"), d.join("er"));
    let logs = tb.join("runs/Dec06_12-00-00_host");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("events.out.tfevents.1733486400.host"), "x").unwrap();
    std::fs::create_dir_all(tb.join("runs/exp1")).unwrap();
    std::fs::write(tb.join("runs/exp1/summary.json"), r#"{"acc": 0.9}"#).unwrap();
    std::fs::create_dir_all(tb.join(".ntk-writers")).unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(sweep.join("runs/relu"))
        .arg(tb.join("runs"))
        .status();
    assert!(copied.unwrap().success());
    std::fs::write(tb.join("kappa_vs_depth_whole.png"), &png).unwrap();
    std::fs::create_dir_all(empty.join("runs")).unwrap();
    std::fs::write(empty.join("kappa_vs_depth_whole.png"), &png).unwrap();
    // Without the sweep's point the claim proves nothing; with it, the user's figure is still
    // no collect's.
    let point = tb.join("runs/relu");
    std::fs::rename(&point, d.join("relu-aside")).unwrap();
    for extra in [&["--dry-run"][..], &[][..]] {
        assert_clean_error(
            "a sweep into TensorBoard's runs/",
            &run(&sweep_args(&cfg, &tb, extra)),
            &["(Dec06_12-00-00_host, exp1; each not a sweep's run of this tool (its marker read"],
        );
    }
    std::fs::rename(d.join("relu-aside"), &point).unwrap();
    for extra in [&["--dry-run"][..], &[][..]] {
        assert_clean_error(
            "a sweep beside a point and TensorBoard's runs/",
            &run(&sweep_args(&cfg, &tb, extra)),
            &[
                "kappa_vs_depth_whole.png, not recorded as a collect wrote it (.ntk-reports.json) and with no collected table (results.csv, sweep.csv) beside it",
            ],
        );
        assert_clean_error(
            "a sweep beside an empty runs/",
            &run(&sweep_args(&cfg, &empty, extra)),
            &["kappa_vs_depth_whole.png, with no sweep's runs/ beside it"],
        );
    }
    assert_eq!(std::fs::read_dir(tb.join("runs")).unwrap().count(), 3);
    assert_eq!(
        std::fs::read(tb.join("kappa_vs_depth_whole.png")).unwrap(),
        png
    );
    assert_eq!(std::fs::read_dir(empty.join("runs")).unwrap().count(), 0);
    assert_eq!(
        std::fs::read(empty.join("kappa_vs_depth_whole.png")).unwrap(),
        png
    );
    // Hundred-and-twenty-seventh, D1's residue: a sweep refused after its claim (another
    // config's point under runs/) takes the claim back, leaving what was there as it was.
    let mixed = d.join("mixed");
    std::fs::create_dir_all(mixed.join("runs")).unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(sweep.join("runs/relu"))
        .arg(mixed.join("runs"))
        .status();
    assert!(copied.unwrap().success());
    let other = write(d, "s10.toml", &TINY_SWEEP.replace("n = 12", "n = 10"));
    assert_clean_error(
        "a sweep beside another config's point",
        &run(&sweep_args(&other, &mixed, &[])),
        &["made by a different config", "data.n: 12 -> 10"],
    );
    let mut left: Vec<_> = std::fs::read_dir(&mixed)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["runs"]);
    // Hundred-and-twenty-eighth, D2: a sweep whose collected table was removed keeps its own
    // recorded figures: the sweep goes on, dry run too, and collects again.
    let untabled = d.join("untabled");
    assert_ok("a sweep", &run(&sweep_args(&cfg, &untabled, &[])));
    std::fs::remove_file(untabled.join("results.csv")).unwrap();
    for extra in [&["--dry-run"][..], &[][..]] {
        assert_ok(
            "a sweep whose table was removed",
            &run(&sweep_args(&cfg, &untabled, extra)),
        );
    }
    assert!(untabled.join("results.csv").is_file());
    // Hundred-and-twenty-ninth, D2: a sweep's figures and record copied without its runs/
    // prove nothing: a sweep (of another config) there is refused, dry run too, and the
    // figures stay.
    let copied = d.join("copied");
    std::fs::create_dir(&copied).unwrap();
    for e in std::fs::read_dir(&untabled).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name == ".ntk-reports.json" || name.ends_with(".png") || name.ends_with(".svg") {
            std::fs::copy(e.path(), copied.join(&name)).unwrap();
        }
    }
    let figure = std::fs::read(copied.join("kappa_vs_depth_whole.png")).unwrap();
    for extra in [&["--dry-run"][..], &[][..]] {
        assert_clean_error(
            "a sweep into copied figures and their record",
            &run(&sweep_args(&other, &copied, extra)),
            &[
                "kappa_vs_depth_whole.png",
                "with no sweep's runs/ beside it",
            ],
        );
    }
    assert_eq!(
        std::fs::read(copied.join("kappa_vs_depth_whole.png")).unwrap(),
        figure
    );
    // D3: the dry run of a sweep says the column captions its collect settles: removed
    // where the record proves them, said and left where edited.
    assert_ok(
        "a column collect",
        &run(&os(&[
            "collect",
            untabled.to_str().unwrap(),
            "--layout",
            "column",
        ])),
    );
    let caption = untabled.join("kappa_vs_depth_whole.caption.txt");
    std::fs::write(&caption, "my words\n").unwrap();
    let o = run(&sweep_args(&cfg, &untabled, &["--dry-run"]));
    assert!(o.status.success(), "{o:?}");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        said.contains("reports: ")
            && said.contains(
                "kappa_vs_depth_whole.caption.txt: the captions of figures drawn now without one"
            )
            && said.contains("would say and leave them")
            && said.contains("min_grad_angle_vs_depth.caption.txt")
            && said.contains("would remove them"),
        "{said}"
    );
    assert_ok("the sweep", &run(&sweep_args(&cfg, &untabled, &[])));
    assert_eq!(std::fs::read_to_string(&caption).unwrap(), "my words\n");
    // D1: a first line skipped as a header is said, by the dry run too.
    let priced = d.join("priced.csv");
    std::fs::write(&priced, "JPY 120,JPY 80\n150,95\n-30,40\n200,10\n").unwrap();
    let one = write(
        d,
        "priced.toml",
        &format!(
            "[data]\ndataset = \"file\"\nx = {:?}\n[model]\nwidth = 8\ndepth = 1\nactivation = \"relu\"\n",
            priced.to_str().unwrap()
        ),
    );
    for extra in [&["--dry-run"][..], &[][..]] {
        let mut v = os(&["run", "--config"]);
        v.push(one.clone().into());
        v.push("--out".into());
        v.push(d.join("priced").into());
        v.extend(os(extra));
        let o = run(&v);
        assert!(o.status.success(), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(
                "line 1 is read as a header of names and skipped (\"JPY 120\", \"JPY 80\")"
            ),
            "{err}"
        );
    }
    // Hundred-and-twenty-ninth, D4 and N1: the note shows a path's control characters
    // escaped, and the header's own line after a comment.
    let odd = d.join("p\u{1b}[31m\nerror: fake.csv");
    std::fs::write(&odd, "# exported\nx,y\n1.5,2\n3,4\n").unwrap();
    let cfg_odd = write(
        d,
        "odd.toml",
        &format!(
            "[data]\ndataset = \"file\"\nx = \"{}\"\n[model]\nwidth = 8\ndepth = 1\nactivation = \"relu\"\n",
            odd.to_str()
                .unwrap()
                .replace('\u{1b}', "\\u001b")
                .replace('\n', "\\n")
        ),
    );
    let mut v = os(&["run", "--dry-run", "--config"]);
    v.push(cfg_odd.into());
    v.push("--out".into());
    v.push(d.join("odd").into());
    let o = run(&v);
    assert!(o.status.success(), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains('\u{1b}') && !err.contains("\nerror: fake.csv"),
        "{err}"
    );
    assert!(err.contains("line 2 is read as a header"), "{err}");
}

/// Hundred-and-twenty-sixth hostile round, D2: in a collected directory `dir` itself, a
/// caption edited since a column plot wrote it is kept by a column plot and a column
/// collect (`run` runs the tool with the arguments), each saying so; the others are written
/// and named in the "wrote" lines (N2).
pub(crate) fn assert_edited_captions_kept(dir: &Path, run: &dyn Fn(&[&str]) -> Output) {
    let dir_s = dir.to_str().unwrap();
    assert_ok(
        "a column plot",
        &run(&["plot", dir_s, "--layout", "column"]),
    );
    let mut captions: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".caption.txt"))
        .collect();
    captions.sort();
    assert!(captions.len() >= 2, "{captions:?}");
    let edited = dir.join(&captions[0]);
    let text = format!(
        "{}my words for the paper\n",
        std::fs::read_to_string(&edited).unwrap()
    );
    std::fs::write(&edited, &text).unwrap();
    for cmd in ["plot", "collect"] {
        let o = run(&[cmd, dir_s, "--layout", "column"]);
        assert_ok(cmd, &o);
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), text, "{cmd}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("{}: not proven", captions[0])) && err.contains(": kept;"),
            "{cmd}: {err}"
        );
        if cmd == "plot" {
            let out = String::from_utf8_lossy(&o.stdout);
            let named = |c: &str| {
                let stem = c.trim_end_matches(".caption.txt");
                out.contains(c) || out.contains(&format!("{stem}.{{png,svg,pdf,caption.txt}}"))
            };
            assert!(!named(&captions[0]) && named(&captions[1]), "{out}");
        }
    }
}

/// `plot --out` (`plot_to`) refuses a directory (under `d`) holding a copy of one of
/// `figures`' PNGs that no plot wrote there, and `figures` once one of its PNGs is edited;
/// neither file is replaced.
fn assert_user_images_kept(figures: &Path, d: &Path, plot_to: &dyn Fn(&Path) -> Output) {
    let name = std::fs::read_dir(figures)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".png"))
        .unwrap();
    let png = std::fs::read(figures.join(&name)).unwrap();
    let paper = d.join("paper");
    std::fs::create_dir_all(&paper).unwrap();
    std::fs::write(paper.join(&name), &png).unwrap();
    assert_clean_error(
        "plot over a user's image",
        &plot_to(&paper),
        &["paper", "no record of these tools", &name],
    );
    assert_eq!(std::fs::read(paper.join(&name)).unwrap(), png);
    let mut edited = png.clone();
    edited.extend(b"edited");
    std::fs::write(figures.join(&name), &edited).unwrap();
    assert_clean_error(
        "plot over an edited figure",
        &plot_to(figures),
        &["no record of these tools", &name],
    );
    assert_eq!(std::fs::read(figures.join(&name)).unwrap(), edited);
}

/// The fifteenth hostile review (experiments/hostile/round15.md), ntk-probe's defects.
#[test]
fn fifteenth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let cfg = write(d, "tiny.toml", TINY);
    let probe = d.join("probe");
    assert_ok(
        "a probe run",
        &run(&os(&[
            "run",
            "--config",
            &path(&cfg),
            "--out",
            &path(&probe),
        ])),
    );
    let sweep_cfg = write(d, "s.toml", TINY_SWEEP);
    let sweep = d.join("sw");
    assert_ok("sweep", &run(&sweep_args(&sweep_cfg, &sweep, &[])));
    let listing = |dir: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let (probe_files, sweep_files) = (listing(&probe), listing(&sweep));

    // D4: the figure commands refuse another run's or sweep's directory.
    let figure_cmds: [&[&str]; 4] = [
        &["gmap", "--depths", "1,2"],
        &["activations"],
        &["transfer"],
        &[
            "fig1", "--depths", "1", "--widths", "8", "--seeds", "1", "--thetas", "30",
        ],
    ];
    for cmd in figure_cmds {
        for target in [&probe, &sweep] {
            let mut v = os(cmd);
            v.extend(os(&["--out", &path(target)]));
            assert_clean_error(cmd[0], &run(&v), &["an ntk tool made"]);
        }
    }
    // D1 (the probe's side): plot --out a new directory inside the sweep's.
    let o = run(&os(&[
        "plot",
        &path(&sweep),
        "--out",
        &path(&sweep.join("figs")),
    ]));
    assert_clean_error("plot into the sweep", &o, &["inside", "an ntk tool made"]);
    // D8: bench --out a run's file.
    let summary = std::fs::read(probe.join("summary.json")).unwrap();
    let o = run(&os(&[
        "bench",
        "--n",
        "10",
        "--width",
        "4",
        "--depths",
        "1",
        "--repeats",
        "1",
        "--out",
        &path(&probe.join("summary.json")),
    ]));
    assert_clean_error("bench --out a run's file", &o, &["inside", "summary.json"]);
    assert_eq!(std::fs::read(probe.join("summary.json")).unwrap(), summary);
    // A run's --out inside another run.
    let o = run(&os(&[
        "run",
        "--config",
        &path(&cfg),
        "--out",
        &path(&probe.join("sub")),
    ]));
    assert_clean_error("a run inside a run", &o, &["inside", "an ntk tool made"]);
    assert_eq!(listing(&probe), probe_files);
    assert_eq!(listing(&sweep), sweep_files);

    // D5, D6: fig1's flags under their names, and the --max-memory its advice names.
    let fig1 = |extra: &[&str]| {
        let mut v = os(&["fig1", "--depths", "1", "--seeds", "1", "--thetas", "30"]);
        v.extend(os(extra));
        v.extend(os(&["--out", &path(&d.join("f1"))]));
        run(&v)
    };
    assert_clean_error("fig1 --widths 0", &fig1(&["--widths", "0"]), &["--widths"]);
    let o = fig1(&["--widths", "9223372036854775807", "--max-memory", "1G"]);
    assert_clean_error("fig1 --max-memory", &o, &["--max-memory is 1.0 GiB"]);
    assert_clean_error(
        "fig1 --depths beyond the limit",
        &fig1(&["--widths", "4", "--depths", "10001"]),
        &["--depths 10001", "at most 10000"],
    );
}

/// The sixteenth hostile review (experiments/hostile/round16.md), ntk-probe's defects: the
/// output rule of the fifteenth reads its markers (a user's `summary.json` or `config.toml`
/// is no run's), sees a sweep copied without its hidden entries, and `bench --out` with a
/// trailing slash is refused before any row is timed.
#[test]
fn sixteenth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let gmap = |out: &Path| run(&os(&["gmap", "--depths", "1,2", "--out", &path(out)]));

    // D1: a user's summary.json, and the bench's own JSON named so.
    let proj = d.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("summary.json"), "{\"my\": \"notes\"}").unwrap();
    assert_ok(
        "gmap under a user's summary.json",
        &gmap(&proj.join("figs")),
    );
    let bres = d.join("bres");
    std::fs::create_dir_all(&bres).unwrap();
    let bench = |out: &str| {
        run(&os(&[
            "bench",
            "--n",
            "10",
            "--width",
            "4",
            "--depths",
            "1",
            "--repeats",
            "1",
            "--out",
            out,
        ]))
    };
    assert_ok("bench --out", &bench(&path(&bres.join("summary.json"))));
    assert_ok("gmap beside the bench's JSON", &gmap(&bres.join("g")));

    // D2: a user's config.toml in a figure directory, twice.
    let myfig = d.join("myfig");
    std::fs::create_dir_all(&myfig).unwrap();
    std::fs::write(myfig.join("config.toml"), "# my notes\n").unwrap();
    assert_ok("gmap into a user's directory", &gmap(&myfig));
    assert_ok("gmap into it again", &gmap(&myfig));

    // D4: a collected sweep copied without .ntk-writers is still a sweep's directory.
    let cfg = write(d, "s.toml", TINY_SWEEP);
    let sweep = d.join("sw");
    assert_ok("sweep", &run(&sweep_args(&cfg, &sweep, &[])));
    std::fs::remove_dir_all(sweep.join(".ntk-writers")).unwrap();
    assert_clean_error(
        "gmap inside a copied sweep",
        &gmap(&sweep.join("figs")),
        &["inside", "runs/"],
    );
    assert!(!sweep.join("figs").exists());

    // D5: bench --out with a trailing slash, before any row.
    let o = bench(&format!("{}/", path(&d.join("newjson"))));
    assert_clean_error("bench --out DIR/", &o, &["--out", "ends with '/'"]);
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// The seventeenth hostile review (experiments/hostile/round17.md), ntk-probe's defects.
#[test]
fn seventeenth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let gmap = |out: &Path| run(&os(&["gmap", "--depths", "1,2", "--out", &path(out)]));

    // D1: a user's results.csv beside a runs/ directory is no sweep's table. (A probe run
    // into a collected probe sweep's runs/ was allowed here too; the nineteenth round found
    // such entries break the sweep's collect, so it is refused now: only a training run may
    // join a training sweep's runs/.)
    let proj = d.join("proj");
    std::fs::create_dir_all(proj.join("runs")).unwrap();
    std::fs::write(proj.join("results.csv"), "a,b\n").unwrap();
    let cfg = write(d, "tiny.toml", TINY);
    let probe_run = |out: &Path| run(&os(&["run", "--config", &path(&cfg), "--out", &path(out)]));
    assert_ok(
        "a run under a user's runs/",
        &probe_run(&proj.join("runs/a")),
    );
    let sweep_cfg = write(d, "s.toml", TINY_SWEEP);
    let sweep = d.join("sw");
    assert_ok("sweep", &run(&sweep_args(&sweep_cfg, &sweep, &[])));
    assert_clean_error(
        "a run into the sweep's runs/",
        &probe_run(&sweep.join("runs/mine")),
        &["inside", "an ntk tool made"],
    );

    // D2: a copied metrics.csv beside the figure command's own lock, twice.
    let notes = d.join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(
        notes.join("metrics.csv"),
        "epoch,iteration,train_loss\n1,1,0.5\n",
    )
    .unwrap();
    assert_ok("gmap into notes", &gmap(&notes));
    assert_ok("gmap into notes again", &gmap(&notes));

    // D3: keys that apply to no point.
    let o = run(&os(&[
        "run",
        "--config",
        &path(&cfg),
        "--out",
        &path(&d.join("r3")),
        "--set",
        "data.subset=random",
        "--dry-run",
    ]));
    assert_clean_error("subset random on the synthetic set", &o, &["data.subset"]);
    let mut v = sweep_args(&sweep_cfg, &d.join("s3"), &["--dry-run"]);
    v.extend(os(&[
        "--set",
        "sweep.datasets=[\"digits\"]",
        "--set",
        "data.input_dim=7",
    ]));
    assert_clean_error("input_dim beside datasets", &run(&v), &["data.input_dim"]);

    // D4: an empty output directory.
    let mut v = sweep_args(&sweep_cfg, &d.join("unused"), &["--dry-run"]);
    let at = v.iter().position(|a| a == "--out").unwrap();
    v.drain(at..at + 2);
    v.extend(os(&["--set", "sweep.out=\"\""]));
    assert_clean_error("sweep.out = \"\"", &run(&v), &["empty path"]);

    // D6: a plot that fails leaves no directory it made.
    let o = run(&os(&["plot", &path(&d.join("od/typo/a/b"))]));
    assert_eq!(o.status.code(), Some(2));
    assert!(!d.join("od").exists());
    let o = run(&os(&[
        "plot",
        &path(&d.join("nothing")),
        "--out",
        &path(&d.join("new/figs")),
    ]));
    assert_eq!(o.status.code(), Some(2));
    assert!(!d.join("new").exists());
}

/// The eighteenth hostile review (experiments/hostile/round18.md), ntk-probe's defects: a
/// `..` after a directory that does not exist yet, and a subset rule on the synthetic set.
#[test]
fn eighteenth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let cfg = write(d, "tiny.toml", TINY);
    let probe = d.join("probe");
    assert_ok(
        "a probe run",
        &run(&os(&[
            "run",
            "--config",
            &path(&cfg),
            "--out",
            &path(&probe),
        ])),
    );
    let before = std::fs::read_dir(d).unwrap().count();
    for (what, args) in [
        ("gmap", vec!["gmap", "--depths", "1", "--out"]),
        (
            "run",
            vec!["run", "--config", cfg.to_str().unwrap(), "--out"],
        ),
    ] {
        for out in [d.join("zz/../probe/g"), d.join("x/..")] {
            let mut v = os(&args);
            v.push(out.clone().into_os_string());
            assert_clean_error(what, &run(&v), &["'..'", "does not exist yet"]);
            v.push("--dry-run".into());
            if what == "run" {
                assert_clean_error(what, &run(&v), &["'..'"]);
            }
        }
    }
    assert!(!d.join("zz").exists() && !d.join("x").exists() && !probe.join("g").exists());
    assert_eq!(std::fs::read_dir(d).unwrap().count(), before);
    for rule in ["first", "random"] {
        let o = run(&os(&[
            "run",
            "--config",
            &path(&cfg),
            "--out",
            &path(&d.join("sub")),
            "--set",
            &format!("data.subset={rule}"),
            "--dry-run",
        ]));
        assert_clean_error(rule, &o, &["data.subset"]);
    }
}

/// The nineteenth hostile review (experiments/hostile/round19.md), ntk-probe's defects: an
/// output deeper inside a directory the tools made (a sweep's `runs/`, a point's directory,
/// an output set's subdirectory) refused as one directly inside it [D1]; under `probe.method
/// = "theory"` a sweep's widths, seeds over the whole protocol and a single run's seed,
/// which change nothing, refused [D2].
#[test]
fn nineteenth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let cfg = write(d, "tiny.toml", TINY);
    let sweep_cfg = write(d, "sweep.toml", TINY_SWEEP);
    let sw = d.join("sw");
    assert_ok(
        "a sweep",
        &run(&os(&[
            "sweep",
            "--config",
            &path(&sweep_cfg),
            "--out",
            &path(&sw),
        ])),
    );
    let probe = d.join("probe");
    assert_ok(
        "a probe run",
        &run(&os(&[
            "run",
            "--config",
            &path(&cfg),
            "--out",
            &path(&probe),
        ])),
    );
    let point = sw.join("runs/relu/depth01/seed1");
    assert!(point.join("whole/summary.json").is_file());
    for out in [
        sw.join("runs/g2"),
        sw.join("runs/relu/new"),
        point.join("g"),
        point.join("whole/g"),
        probe.join("a/b/c"),
    ] {
        let mut v = os(&["gmap", "--depths", "1", "--out"]);
        v.push(out.clone().into_os_string());
        assert_clean_error(
            "gmap deep inside",
            &run(&v),
            &["inside", "an ntk tool made"],
        );
        for extra in [&[][..], &["--dry-run"][..]] {
            let mut v = os(&["run", "--config", &path(&cfg), "--out"]);
            v.push(out.clone().into_os_string());
            v.extend(os(extra));
            assert_clean_error(
                "a run deep inside",
                &run(&v),
                &["inside", "an ntk tool made"],
            );
        }
        assert!(!out.exists(), "{}", out.display());
    }
    let mut v = os(&["plot", &path(&sw), "--out"]);
    v.push(sw.join("runs/relu/figs").into_os_string());
    assert_clean_error("plot deep inside", &run(&v), &["inside"]);
    // The sweep still runs and collects in place.
    assert_ok(
        "the sweep again",
        &run(&os(&[
            "sweep",
            "--config",
            &path(&sweep_cfg),
            "--out",
            &path(&sw),
        ])),
    );

    // D2: the infinite-width kernel has no width and draws no network.
    // A dry run of `command` on `cfg` into d/`out`, with `sets` after it.
    let dry = |command: &str, cfg: &Path, out: &str, sets: &[&str]| {
        let mut v = os(&[
            command,
            "--config",
            &path(cfg),
            "--out",
            &path(&d.join(out)),
            "--dry-run",
        ]);
        v.extend(os(sets));
        run(&v)
    };
    let theory = ["--set", "probe.method=\"theory\""];
    let sweep_with = |sets: &[&str]| dry("sweep", &sweep_cfg, "th", &[&theory[..], sets].concat());
    assert_clean_error(
        "theory with seeds",
        &sweep_with(&["--set", "sweep.seeds=[1,2,3]"]),
        &["sweep.seeds", "theory"],
    );
    assert_clean_error(
        "theory with widths",
        &sweep_with(&["--set", "sweep.widths=[8,4096]"]),
        &["sweep.widths", "theory"],
    );
    // One seed: seed 0 (the twentieth round's N1: another seed changes nothing).
    assert_ok(
        "theory with one seed",
        &sweep_with(&["--set", "sweep.seeds=[0]"]),
    );
    assert_ok(
        "theory's blocks protocol with seeds",
        &sweep_with(&[
            "--set",
            "sweep.seeds=[1,2]",
            "--set",
            "sweep.protocols=[\"blocks\"]",
            "--set",
            "probe.block_size=4",
        ]),
    );
    let single = |sets: &[&str]| dry("run", &cfg, "th1", &[&theory[..], sets].concat());
    assert_clean_error(
        "theory with model.seed",
        &single(&["--set", "model.seed=5"]),
        &["model.seed", "theory"],
    );
    assert_ok("theory without a seed", &single(&["--set", "model.seed=0"]));
    assert!(!d.join("th").exists() && !d.join("th1").exists());

    // N3: a mixed sweep's data.seed seeds its synthetic points (dropped at the others, as
    // data.input_dim is); with no synthetic point it applies to none.
    let no_dim = write(d, "no_dim.toml", &TINY_SWEEP.replace("input_dim = 3\n", ""));
    let mixed = |datasets: &str| {
        let cfg = if datasets.contains("synthetic") {
            &sweep_cfg
        } else {
            &no_dim
        };
        let list = format!("sweep.datasets={datasets}");
        dry(
            "sweep",
            cfg,
            "mixed",
            &["--set", "data.seed=3", "--set", &list],
        )
    };
    assert_ok(
        "a mixed sweep's seed",
        &mixed("[\"synthetic\", \"digits\"]"),
    );
    assert_clean_error(
        "a seed with no synthetic point",
        &mixed("[\"digits\"]"),
        &["data.seed", "sweep.datasets"],
    );
}

/// The twentieth hostile review (experiments/hostile/round20.md), ntk-probe's defects: a
/// mixed sweep's `data.seed` ran every point and then failed its own collect ("data.seed:
/// 0 -> 3 differs") [D2]; under the theory, given blocks draw nothing either, so a seed is
/// refused there too [D6].
#[test]
fn twentieth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let sweep_cfg = write(d, "sweep.toml", TINY_SWEEP);
    let mx = d.join("mx");
    // The sweep collects at its end; then again in place, and its dry run.
    for extra in [&[][..], &[][..], &["--dry-run"][..]] {
        let mut v = os(&[
            "sweep",
            "--config",
            &path(&sweep_cfg),
            "--out",
            &path(&mx),
            "--set",
            "sweep.depths=[1]",
            "--set",
            "sweep.datasets=[\"synthetic\", \"digits\"]",
            "--set",
            "data.seed=3",
        ]);
        v.extend(os(extra));
        assert_ok("a mixed sweep with data.seed", &run(&v));
    }
    assert!(mx.join("summary.csv").is_file());

    let cfg = write(d, "tiny.toml", TINY);
    let blocks = write(d, "blocks.txt", "0 1 2 3 4 5\n6 7 8 9 10 11\n");
    let given = format!("probe.blocks={:?}", path(&blocks));
    let theory_blocks = |seed: &str| {
        run(&os(&[
            "run",
            "--config",
            &path(&cfg),
            "--out",
            &path(&d.join("tb")),
            "--dry-run",
            "--set",
            "probe.method=\"theory\"",
            "--set",
            "probe.protocol=\"blocks\"",
            "--set",
            &given,
            "--set",
            &format!("model.seed={seed}"),
        ]))
    };
    assert_clean_error(
        "theory, given blocks, a seed",
        &theory_blocks("5"),
        &["model.seed"],
    );
    assert_ok("theory, given blocks, no seed", &theory_blocks("0"));
}

/// Issue 65, the twenty-first round's fixes and the twentieth round's notes: N1, a theory
/// sweep over the whole protocol alone takes seed 0 only (a single run's `model.seed` is
/// refused the same way), and the refusal of `sweep.widths` names the whole list.
#[test]
fn twenty_first_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let sweep_cfg = write(d, "sweep.toml", TINY_SWEEP);
    let theory_sweep = |sets: &[&str]| {
        let mut v = os(&[
            "sweep",
            "--config",
            &path(&sweep_cfg),
            "--out",
            &path(&d.join("ts")),
            "--dry-run",
            "--set",
            "probe.method=\"theory\"",
        ]);
        for s in sets {
            v.extend(os(&["--set", s]));
        }
        run(&v)
    };
    assert_clean_error(
        "a theory sweep over the whole protocol with seed 1",
        &theory_sweep(&[]),
        &["sweep.seeds", "[1]", "seed 1"],
    );
    assert_clean_error(
        "a theory sweep with widths",
        &theory_sweep(&["sweep.seeds=[0]", "sweep.widths=[8, 16]"]),
        &["sweep.widths", "[8, 16]"],
    );
    assert_ok(
        "a theory sweep with seed 0",
        &theory_sweep(&["sweep.seeds=[0]"]),
    );
    assert_ok(
        "a theory sweep over the blocks protocol with seed 1",
        &theory_sweep(&["sweep.protocols=[\"blocks\"]"]),
    );

    // Nineteenth round, N2: one sample is refused as a block of one was (kappa 1 whatever
    // the network, no pair for the angles), by a run of either protocol and by a sweep.
    let cfg = write(d, "tiny.toml", TINY);
    for protocol in ["whole", "blocks"] {
        let o = run(&os(&[
            "run",
            "--config",
            &path(&cfg),
            "--out",
            &path(&d.join("one")),
            "--dry-run",
            "--set",
            "data.n=1",
            "--set",
            "probe.pair=",
            "--set",
            &format!("probe.protocol=\"{protocol}\""),
        ]));
        assert_clean_error(
            &format!("one sample, {protocol}"),
            &o,
            &["data.n", "at least 2"],
        );
    }
    let o = run(&os(&[
        "sweep",
        "--config",
        &path(&sweep_cfg),
        "--out",
        &path(&d.join("ones")),
        "--dry-run",
        "--set",
        "sweep.ns=[1, 12]",
    ]));
    assert_clean_error("a sweep over one sample", &o, &["data.n", "at least 2"]);

    // N1: collect without --config over a sweep with a widths axis names --config.
    let mw = d.join("mw");
    let o = run(&os(&[
        "sweep",
        "--config",
        &path(&sweep_cfg),
        "--out",
        &path(&mw),
        "--set",
        "sweep.depths=[1]",
        "--set",
        "sweep.widths=[8, 16]",
    ]));
    assert_ok("a widths sweep", &o);
    let o = run(&os(&["collect", &path(&mw)]));
    assert_clean_error(
        "collect without its config",
        &o,
        &["model.width", "--allow-mixed", "--config FILE"],
    );
    let o = run(&os(&[
        "collect",
        &path(&mw),
        "--config",
        &path(&sweep_cfg),
        "--set",
        "sweep.depths=[1]",
        "--set",
        "sweep.widths=[8, 16]",
    ]));
    assert_ok("collect with its config", &o);

    // D3: given weights draw no network, so a seed that permutes nothing is refused (as
    // under the theory), with the whole protocol and with given blocks; the blocks
    // protocol's own permutation keeps it.
    let saved = d.join("saved");
    assert_ok(
        "weights saved",
        &run(&ntk_args(&cfg, &saved, &["--save-weights"])),
    );
    let weights = format!(
        "probe.weights={:?}",
        path(&saved.join("weights.safetensors"))
    );
    let blocks = write(d, "blocks.txt", "0 1 2 3 4 5\n6 7 8 9 10 11\n");
    let given_blocks = format!("probe.blocks={:?}", path(&blocks));
    let with_weights = |sets: &[&str]| {
        let mut v = ntk_args(&cfg, &d.join("w"), &["--dry-run", "--set", &weights]);
        for s in sets {
            v.extend(os(&["--set", s]));
        }
        run(&v)
    };
    assert_clean_error(
        "given weights, seed 1 (TINY's)",
        &with_weights(&[]),
        &["model.seed = 1", "probe.weights", "change nothing"],
    );
    assert_clean_error(
        "given weights and blocks, a seed",
        &with_weights(&["probe.protocol=\"blocks\"", &given_blocks]),
        &["model.seed = 1", "probe.weights"],
    );
    assert_ok("given weights, seed 0", &with_weights(&["model.seed=0"]));
    assert_ok(
        "given weights, the blocks protocol's permutation",
        &with_weights(&["probe.protocol=\"blocks\""]),
    );
}

/// Issue 65, the twenty-second hostile round. D8: `fig1` measures networks of the given
/// activation parameter (it measured the family's default beside the parameter's theory)
/// and its table names the parameter; D7: `theory` and `fig1` refuse a recursion that
/// leaves f64's range (NaN with exit 0); D5: `--kink` with no NormReLU listed is refused by
/// `activations` and `transfer`; D6: a subnormal `--q-min` is refused; D4: a grid whose width
/// overflows is refused before the earlier table is touched.
#[test]
fn twenty_second_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let fig1 = |name: &str, act: &str| {
        let out = d.join(name);
        let o = run(&os(&[
            "fig1",
            "--out",
            &path(&out),
            "--activation",
            act,
            "--depths",
            "1",
            "--widths",
            "8",
            "--seeds",
            "1",
            "--thetas",
            "30",
        ]));
        assert_ok(act, &o);
        let text = std::fs::read_to_string(out.join("fig1.csv")).unwrap();
        let row: Vec<String> = text
            .lines()
            .nth(1)
            .unwrap()
            .split(',')
            .map(String::from)
            .collect();
        (row[0].clone(), row[5].parse::<f64>().unwrap())
    };
    let (a_half, phi_half) = fig1("lh", "leaky_relu(alpha=0.5)");
    let (a_small, phi_small) = fig1("ls", "leaky_relu(alpha=0.01)");
    assert_eq!(a_half, "leaky_relu(alpha=0.5)");
    assert_eq!(a_small, "leaky_relu(alpha=0.01)");
    assert!(
        phi_half != phi_small,
        "{phi_half} {phi_small}: the same network measured"
    );

    let args = [
        "theory",
        "--activation",
        "relu_squared",
        "--theta-deg",
        "30",
        "--depth",
        "80",
    ];
    // Refused as "leaving f64's range" until ReLU^2 had its closed form: the quadrature's
    // rounding, doubled each layer by the norm map's unstable fixed point, was what left
    // it (hundred-and-eleventh hostile round, D1); the recursion itself stays at variance 1,
    // and the angle tends to 90 degrees. A recursion that does leave the range (tanh past
    // layer 4326) is refused: `the_theory_s_overflow_is_said_as_the_recursion_s`.
    let o = run(&os(&args));
    assert_ok(&args.join(" "), &o);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "90.000000");
    // NormReLU up to the kink range's end: its lambda_b was noise from b ~ 7 (round 22's
    // D7: NaN at 8, a collapse to 0 degrees at 7.3 and 7.4); its angles tend to 90 degrees
    // (the correlation 0 is the dual kernel's fixed point, and a kink far in the tail
    // decorrelates).
    for kink in ["7.3", "7.4", "8"] {
        let o = run(&os(&[
            "theory",
            "--activation",
            "norm_relu",
            "--kink",
            kink,
            "--theta-deg",
            "30",
            "--depth",
            "1:4:1",
        ]));
        assert_ok(kink, &o);
        let text = String::from_utf8_lossy(&o.stdout);
        let phis: Vec<f64> = text
            .lines()
            .skip(1)
            .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(phis.len(), 4, "{text}");
        assert!(phis.iter().all(|p| (87.0..=90.0).contains(p)), "{text}");
    }
    for cmd in ["activations", "transfer"] {
        let o = run(&os(&[
            cmd,
            "--out",
            &path(&d.join(cmd)),
            "--activations",
            "selu",
            "--kink",
            "0.5",
        ]));
        assert_clean_error(&format!("{cmd} --kink"), &o, &["--kink", "only norm_relu"]);
    }
    let o = run(&os(&[
        "transfer",
        "--out",
        &path(&d.join("tq")),
        "--q-min",
        "1e-308",
        "--q-max",
        "1",
        "--activations",
        "norm_relu",
    ]));
    assert_clean_error("a subnormal q-min", &o, &["--q-min", "smallest normal"]);
    let ac = d.join("ac");
    assert_ok(
        "activations",
        &run(&os(&[
            "activations",
            "--out",
            &path(&ac),
            "--activations",
            "relu",
        ])),
    );
    let before = std::fs::read(ac.join("activations.csv")).unwrap();
    let o = run(&os(&[
        "activations",
        "--out",
        &path(&ac),
        "--activations",
        "relu",
        "--x-min",
        "-1e308",
        "--x-max",
        "1e308",
    ]));
    assert_clean_error(
        "an overflowing grid",
        &o,
        &["--x-min", "finite x-max - x-min"],
    );
    assert_eq!(std::fs::read(ac.join("activations.csv")).unwrap(), before);
}

/// The twenty-second round's notes, fixed at their class. N4: a dry run with `--json` answers
/// in JSON (a script that parses `--json` output read a text line): new, then done under
/// `--resume` once the run is made. N2: a file set of one row is refused naming the file
/// its rows come from, not only `data.n` (a key the user never wrote). N1: a short flag and
/// a `--set` of its key with other values are refused (the `--set` won without a word). N7:
/// `sweep` sends an `[onnx]` config to `onnx`, and `onnx` refuses a config without `[onnx]`
/// for that (the hints went round in a circle). N8: two parameters of one activation family
/// in one table are named with their parameters.
#[test]
fn twenty_second_review_notes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let one = d.join("one.npy");
    ntk_files::npy::write_f64(&one, &[0.5, -1.0, 2.0], &[1, 3]).unwrap();
    let file_cfg = write(
        d,
        "file.toml",
        &format!(
            "[data]\ndataset = \"file\"\nx = {:?}\n\n[model]\nwidth = 8\ndepth = 1\n\
             activation = \"relu\"\n",
            one.display().to_string()
        ),
    );
    for args in [
        ntk_args(&file_cfg, &d.join("one-out"), &[]),
        ntk_args(&file_cfg, &d.join("one-out"), &["--dry-run"]),
    ] {
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("data.n = 1 (data.x = ") && err.contains("one.npy"),
            "{err}"
        );
    }
    let cfg = write(d, "tiny.toml", TINY);
    let out = d.join("o");
    let json = |extra: &[&str]| -> serde_json::Value {
        let o = run(&ntk_args(&cfg, &out, extra));
        assert_ok("--json --dry-run", &o);
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&o.stdout));
        })
    };
    let answer = json(&["--json", "--dry-run"]);
    assert_eq!(answer["dry_run"], true, "{answer}");
    assert_eq!(answer["state"], "new", "{answer}");
    assert!(
        answer["what"].as_str().unwrap().contains("n = 12"),
        "{answer}"
    );
    assert_ok("run", &run(&ntk_args(&cfg, &out, &[])));
    let answer = json(&["--json", "--dry-run", "--resume"]);
    assert_eq!(answer["state"], "done", "{answer}");
    assert_eq!(answer["then"], "--resume keeps it", "{answer}");

    // N1: `--seed 3` beside `--set model.seed=2` ran seed 2 without a word.
    for extra in [
        &["--seed", "3", "--set", "model.seed=2"][..],
        &["--set", "model.seed=2", "--seed", "3", "--dry-run"],
    ] {
        let o = run(&ntk_args(&cfg, &d.join("seeds"), extra));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("--seed 3 and --set model.seed=2 both set model.seed"),
            "{err}"
        );
    }
    // Two `--set`s of one key, likewise (ninety-fifth hostile round, D2: the last held).
    let o = run(&ntk_args(
        &cfg,
        &d.join("sets"),
        &[
            "--set",
            "model.width=5",
            "--set",
            "model.width=7",
            "--dry-run",
        ],
    ));
    assert_clean_error(
        "two --sets of one key",
        &o,
        &["--set model.width=5 and --set model.width=7 both set model.width"],
    );

    // N7: the hints between the commands end where the config runs.
    let ox = write(
        d,
        "ox.toml",
        "[data]\ndataset = \"synthetic\"\nn = 4\ninput_dim = 3\n\n[onnx]\nfile = \"m.onnx\"\n",
    );
    let mut sweep = os(&["sweep", "--config"]);
    sweep.push(ox.clone().into());
    let mut onnx = os(&["onnx", "--config"]);
    onnx.push(cfg.clone().into());
    onnx.extend(os(&["--out", d.join("ox").to_str().unwrap()]));
    for (args, hint) in [
        (
            sweep,
            "has an [onnx] table: run it with `ntk-probe onnx --config",
        ),
        (onnx, "has no [onnx] table"),
    ] {
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(hint), "{err}");
    }

    // N8: two parameters of one family are told apart in the tables; one of a family keeps
    // the family's name.
    let acts = d.join("acts");
    assert_ok(
        "activations",
        &run(&os(&[
            "activations",
            "--out",
            acts.to_str().unwrap(),
            "--activations",
            "leaky_relu(alpha=0.1),leaky_relu(alpha=0.5),selu",
            "--points",
            "11",
        ])),
    );
    let csv = std::fs::read_to_string(acts.join("activations.csv")).unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        "x,leaky_relu(alpha=0.1),leaky_relu(alpha=0.1)_derivative,leaky_relu(alpha=0.5),\
         leaky_relu(alpha=0.5)_derivative,selu,selu_derivative"
    );
    let tr = d.join("tr");
    assert_ok(
        "transfer",
        &run(&os(&[
            "transfer",
            "--out",
            tr.to_str().unwrap(),
            "--activations",
            "norm_relu(b=2),norm_relu(b=-1)",
            "--points",
            "3",
        ])),
    );
    let csv = std::fs::read_to_string(tr.join("transfer.csv")).unwrap();
    let labels: std::collections::BTreeSet<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(
        labels.into_iter().collect::<Vec<_>>(),
        ["norm_relu(b=-1)", "norm_relu(b=2)"]
    );
}

/// The twenty-third hostile round. D2: a sweep is refused while a probe's set is being made
/// for its `--out` (the lock beside it), and a run refuses an `--out` a sweep is writing;
/// D3: `--out DIR/.` names DIR in the dry run and the run alike (the run computed, then
/// failed to move its set); D4: the dry run refuses an `--out` another process is writing,
/// as the run does.
#[test]
fn twenty_third_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "tiny.toml", TINY);
    let dotted = format!("{}/.", d.join("dotted").display());
    for extra in [&["--dry-run"][..], &[]] {
        let o = run(&ntk_args(&cfg, Path::new(&dotted), extra));
        assert_ok("--out DIR/.", &o);
    }
    assert!(d.join("dotted/summary.json").is_file());

    let busy = d.join("busy");
    {
        let _held = ntk_files::lock::DirLock::acquire_beside(&busy).unwrap();
        for extra in [&["--dry-run"][..], &[]] {
            let o = run(&ntk_args(&cfg, &busy, extra));
            assert_clean_error(
                "a set being made",
                &o,
                &["busy", "another process is writing here"],
            );
        }
        let sweep_cfg = write(d, "sweep.toml", TINY_SWEEP);
        let o = run(&sweep_args(&sweep_cfg, &busy, &[]));
        assert_clean_error(
            "a sweep over a set being made",
            &o,
            &["busy", "another process is writing here"],
        );
        assert!(!busy.exists(), "the refused sweep made its directory");
    }
    let swept = d.join("swept");
    std::fs::create_dir_all(&swept).unwrap();
    let _claim = ntk_files::lock::SweepClaim::acquire(&swept, "f", "a sweep").unwrap();
    for extra in [&["--dry-run"][..], &[]] {
        let o = run(&ntk_args(&cfg, &swept, extra));
        assert_clean_error(
            "a sweep being written",
            &o,
            &["swept", "not an ntk-probe output set (.ntk-writers)"],
        );
    }
}

/// Twenty-fourth hostile round. D1: a finished set of another config is replaced only with
/// `--recompute`, the dry run refusing as the run does (it was replaced, exit 0, while the
/// dry run said it was refused); D3: a sweep's dry run refuses an `--out` a probe's set is
/// being made for, as the sweep does. Round 23's N1: a failed write names `--out`, not the
/// temporary directory it removed. Round 24's N6: a list item's parameter keeps its comma;
/// N7 (and round 10's T09): a training config is refused naming `ntk-train`.
#[test]
fn twenty_fourth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "tiny.toml", TINY);
    let out = d.join("x");
    assert_ok("first", &run(&ntk_args(&cfg, &out, &[])));
    let before = std::fs::read(out.join("summary.json")).unwrap();
    for extra in [&["--dry-run"][..], &[], &["--resume"]] {
        let mut args = vec!["--set", "model.seed=5"];
        args.extend(extra);
        let o = run(&ntk_args(&cfg, &out, &args));
        assert_clean_error(
            "another config's set",
            &o,
            &[
                "x/summary.json",
                "made by a different config (model.seed: 1 -> 5)",
            ],
        );
        assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), before);
    }
    assert_ok(
        "--recompute",
        &run(&ntk_args(
            &cfg,
            &out,
            &["--set", "model.seed=5", "--recompute"],
        )),
    );
    assert_ok(
        "its own config again",
        &run(&ntk_args(&cfg, &out, &["--set", "model.seed=5"])),
    );

    let busy = d.join("busy");
    let sweep_cfg = write(d, "sweep.toml", TINY_SWEEP);
    {
        let _held = ntk_files::lock::DirLock::acquire_beside(&busy).unwrap();
        let o = run(&sweep_args(&sweep_cfg, &busy, &["--dry-run"]));
        assert_clean_error(
            "a sweep's dry run over a set being made",
            &o,
            &["busy", "another process is writing here"],
        );
        assert!(!busy.exists());
    }

    let o = Command::new("bash")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 64; exec \"$@\"")
        .arg("limited")
        .arg(env!("CARGO_BIN_EXE_ntk-probe"))
        .args(ntk_args(&cfg, &d.join("fz/o"), &["--set", "data.n=200"]))
        .output()
        .unwrap();
    assert_clean_error("a failed write", &o, &["fz/o: cannot write ntk.npy"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("ntk-tmp"), "{err}");
    assert!(!d.join("fz/o").exists());

    let o = run(&os(&[
        "transfer",
        "--activations",
        "relu,leaky_relu(alpha=0.1,alpha=0.2)",
        "--out",
        d.join("tr").to_str().unwrap(),
    ]));
    assert_clean_error(
        "a parameter's comma",
        &o,
        &["--activations leaky_relu(alpha=0.1,alpha=0.2): not an activation"],
    );
    // A parameter out of its range is refused with the range (round 91, N6).
    let o = run(&os(&[
        "activations",
        "--activations",
        "leaky_relu(alpha=2)",
        "--out",
        d.join("ac").to_str().unwrap(),
    ]));
    assert_clean_error(
        "a parameter out of range",
        &o,
        &[
            "--activations leaky_relu(alpha=2): leaky_relu's negative slope alpha = 2.0 must be \
           finite, in [-1, 1]",
        ],
    );
    assert!(!d.join("ac").exists());

    let training = write(
        d,
        "train.toml",
        "[data]\ndataset = \"synthetic\"\nn = 10\n\n[model]\nwidth = 8\ndepth = 1\n\n\
         [optim]\nlr = 0.1\n",
    );
    for args in [
        ntk_args(&training, &d.join("t"), &[]),
        sweep_args(&training, &d.join("t"), &[]),
    ] {
        assert_clean_error(
            "a training config",
            &run(&args),
            &["train.toml", "a config of ntk-train", "`ntk-train run"],
        );
    }
}

/// Twenty-fifth hostile round. D2: one activation spelled two ways is refused, as one
/// spelled twice is; N4: a failed write of `activations` names the file; N6: `bench --out`
/// replaces only a bench's rows; N7: a single activation's column keeps a parameter that is
/// not the default, and NormReLU's parameter is read by its word `kink` too.
#[test]
fn twenty_fifth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    for (cmd, list) in [
        ("activations", "norm_relu(b=1),norm_relu(b=1.0)"),
        ("transfer", "norm_relu(b=-1.5907658564),norm_relu"),
    ] {
        let o = run(&os(&[cmd, "--activations", list, "--out", &path(cmd)]));
        assert_clean_error(list, &o, &["are one activation", "give each once"]);
        assert!(!d.join(cmd).exists());
    }

    let o = Command::new("bash")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 4; exec \"$@\"")
        .arg("limited")
        .arg(env!("CARGO_BIN_EXE_ntk-probe"))
        .args(os(&["activations", "--out", &path("fz")]))
        .output()
        .unwrap();
    assert_clean_error("a failed write", &o, &["fz/activations.csv"]);

    let toml = write(d, "keep.toml", TINY);
    let o = run(&os(&[
        "bench",
        "--n",
        "4",
        "--depths",
        "1",
        "--repeats",
        "1",
        "--out",
        &path("keep.toml"),
    ]));
    assert_clean_error(
        "bench over a config",
        &o,
        &["keep.toml", "not a bench's rows"],
    );
    assert_eq!(std::fs::read_to_string(&toml).unwrap(), TINY);
    let rows = path("rows.json");
    for _ in 0..2 {
        let o = run(&os(&[
            "bench",
            "--n",
            "4",
            "--depths",
            "1",
            "--repeats",
            "1",
            "--out",
            &rows,
        ]));
        assert_ok("bench over its own rows", &o);
    }

    let o = run(&os(&[
        "activations",
        "--activations",
        "leaky_relu(alpha=0.1),norm_relu(kink=0.5)",
        "--points",
        "3",
        "--out",
        &path("ac"),
    ]));
    assert_ok("a parameter not the default", &o);
    let csv = std::fs::read_to_string(d.join("ac/activations.csv")).unwrap();
    assert!(
        csv.starts_with(
            "x,leaky_relu(alpha=0.1),leaky_relu(alpha=0.1)_derivative,norm_relu(b=0.5),"
        ),
        "{csv}"
    );
}

/// Twenty-sixth hostile round, D2: a training config whose training tables the `--set`s
/// remove is not refused as ntk-train's; D4: `--set KEY=` of a key no config has is refused.
#[test]
fn twenty_sixth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let training = write(d, "train.toml", &format!("{TINY}\n[optim]\nlr = 0.1\n"));
    assert_clean_error(
        "a training config",
        &run(&ntk_args(&training, &d.join("t"), &["--dry-run"])),
        &["a config of ntk-train"],
    );
    assert_ok(
        "its training table removed",
        &run(&ntk_args(
            &training,
            &d.join("t"),
            &["--set", "optim=", "--dry-run"],
        )),
    );
    let cfg = write(d, "tiny.toml", TINY);
    assert_clean_error(
        "removing an unknown key",
        &run(&ntk_args(&cfg, &d.join("u"), &["--set", "data.input_dm="])),
        &["--set data.input_dm=", "unknown field `input_dm`"],
    );
}

/// Twenty-seventh hostile round, D1: `plot` refuses two protocols' rows of one activation and
/// depth whose infinite-width theory differs (an edit of the whole row's was ignored).
#[test]
fn twenty_seventh_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "sweep.toml",
        &TINY_SWEEP
            .replace(
                "protocols = [\"whole\"]",
                "protocols = [\"whole\", \"blocks\"]",
            )
            .replace("theory = false", "theory = true"),
    );
    let out = d.join("sw");
    assert_ok("sweep", &run(&sweep_args(&cfg, &out, &[])));
    let path = out.join("summary.csv");
    let good = std::fs::read_to_string(&path).unwrap();
    let mut reader = csv::Reader::from_reader(good.as_bytes());
    let header = reader.headers().unwrap().clone();
    let mut rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let k = header
        .iter()
        .position(|h| h == "theory_min_grad_angle_deg")
        .unwrap();
    assert!(!rows[0][k].is_empty(), "the sweep computes its theory");
    let mut fields: Vec<String> = rows[0].iter().map(str::to_string).collect();
    fields[k] = "12.5".into();
    rows[0] = csv::StringRecord::from(fields);
    let mut w = csv::Writer::from_path(&path).unwrap();
    w.write_record(&header).unwrap();
    for r in &rows {
        w.write_record(r).unwrap();
    }
    w.flush().unwrap();
    assert_clean_error(
        "one theory, two values",
        &run(&os(&["plot", out.to_str().unwrap()])),
        &[
            "summary.csv",
            "theory_min_grad_angle_deg",
            "12.5",
            "does not depend on the protocol",
        ],
    );
}

/// The fifty-eighth hostile round, D3 and D4: what the command makes of a config (an ONNX
/// file's network, a ResNet in a sweep) is judged with the overrides applied, and a refusal
/// an override caused names the config `F (with overrides)`; the file alone only where it
/// holds the culprit. `--set onnx=` with a `--set model={...}` was refused as an ONNX file,
/// and a sweep axis made by `--set` was said to be the file's.
#[test]
fn a_config_is_judged_and_named_with_its_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/onnx_mlp.onnx");
    let po = write(
        d,
        "po.toml",
        &format!(
            "[data]\ndataset = \"synthetic\"\nn = 12\ninput_dim = 3\n\n[onnx]\nfile = {:?}\n",
            model.display().to_string()
        ),
    );
    let o = run(&ntk_args(
        &po,
        &d.join("e"),
        &[
            "--set",
            "onnx=",
            "--set",
            "model={width=8,depth=1,activation=\"relu\"}",
            "--dry-run",
        ],
    ));
    assert_ok("an [onnx] removed and a [model] added by --set", &o);
    let mut a = os(&["onnx", "--config"]);
    a.push(po.clone().into());
    a.extend(os(&["--set", "onnx=", "--dry-run"]));
    assert_clean_error(
        "onnx with its [onnx] removed by --set",
        &run(&a),
        &["po.toml (with overrides): has no [onnx] table"],
    );

    let one = write(d, "t.toml", TINY);
    let axes = [
        "--set",
        "sweep.depths=[1,2]",
        "--set",
        "sweep.activations=[\"relu\"]",
        "--set",
        "sweep.seeds=[0]",
    ];
    let mut extra = axes.to_vec();
    extra.extend(["--set", "model.depth=3", "--dry-run"]);
    assert_clean_error(
        "an axis made by --set",
        &run(&sweep_args(&one, &d.join("s1"), &extra)),
        &[
            "t.toml (with overrides) sets this",
            "--set model.depth=3",
            "sweep.depths",
        ],
    );
    let mut extra = axes.to_vec();
    extra.extend(["--set", "resnet={depth=8}", "--dry-run"]);
    assert_clean_error(
        "a [resnet] added by --set to a sweep",
        &run(&sweep_args(&one, &d.join("s2"), &extra)),
        &["t.toml (with overrides): [resnet]: sweeps run MLPs only"],
    );
    // The file's own axis: the file named alone.
    let sweep = write(d, "s.toml", TINY_SWEEP);
    let o = run(&sweep_args(
        &sweep,
        &d.join("s3"),
        &["--set", "model.depth=3", "--dry-run"],
    ));
    assert_clean_error(
        "the file's axis",
        &o,
        &["s.toml sets this", "--set model.depth=3", "sweep.depths"],
    );
    assert!(!d.join("e").exists() && !d.join("s1").exists());
}

/// The sixtieth hostile round, D3: `collect` without the config kept no theory of a sweep
/// whose NormReLU kink was spelled `model.kink` (the points record it as
/// `activation_param`), nor of ReLU beside LeakyReLU at a slope of its own (ReLU's points
/// record no parameter); the theory the sweep computed is kept for both.
#[test]
fn collect_keeps_the_theory_of_every_spelling_and_of_parameter_free_points() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base = TINY_SWEEP.replace("theory = false", "theory = true");
    for (name, activations, extra) in [
        ("kink", "[\"norm_relu\"]", "kink = -1.5"),
        (
            "mixed",
            "[\"leaky_relu\", \"relu\"]",
            "activation_param = 0.5",
        ),
    ] {
        let text = base
            .replace(
                "activations = [\"relu\"]",
                &format!("activations = {activations}"),
            )
            .replace(
                "activation = \"relu\"",
                &format!("activation = \"relu\"\n{extra}"),
            );
        let text = if name == "kink" {
            text.replace(
                "activation = \"relu\"\nkink",
                "activation = \"norm_relu\"\nkink",
            )
        } else {
            text
        };
        let cfg = write(d, &format!("{name}.toml"), &text);
        let out = d.join(name);
        assert_ok(name, &run(&sweep_args(&cfg, &out, &[])));
        assert_ok(name, &run(&os(&["collect", out.to_str().unwrap()])));
        let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        assert!(
            !table.contains("other network settings") && !table.contains("theory.json"),
            "{name}: {table}"
        );
    }
}

/// The sixty-first hostile round, D1: a `theory.json` written by an earlier build carries its
/// stamp as that build spelled the network (`kink Some(-1.5)` for a NormReLU kink given as
/// `model.kink`, a leaky ReLU's default slope given), and `collect` without the config set
/// it aside as "other network settings". The stamp is read in the one form of the points'
/// network, and `collect --config` keeps its values (nothing computed again) and writes this
/// build's stamp.
#[test]
fn collect_reads_an_earlier_builds_theory_stamp_in_the_one_form() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base = TINY_SWEEP.replace("theory = false", "theory = true");
    for (name, activation, extra, now, earlier) in [
        (
            "kink",
            "norm_relu",
            "kink = -1.5",
            "kink None; parameterization ntk; bias false; normalization none; activation_param -1.5",
            "kink Some(-1.5); parameterization ntk; bias false; normalization none",
        ),
        (
            "default",
            "leaky_relu",
            "",
            "kink None; parameterization ntk; bias false; normalization none",
            "kink None; parameterization ntk; bias false; normalization none; activation_param 0.01",
        ),
    ] {
        let text = base
            .replace(
                "activations = [\"relu\"]",
                &format!("activations = [\"{activation}\"]"),
            )
            .replace(
                "activation = \"relu\"",
                &format!("activation = \"{activation}\"\n{extra}"),
            );
        let cfg = write(d, &format!("{name}.toml"), &text);
        let out = d.join(name);
        assert_ok(name, &run(&sweep_args(&cfg, &out, &[])));
        let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        let cache = out.join("theory.json");
        let json = std::fs::read_to_string(&cache).unwrap();
        assert!(json.contains(now), "{name}: {json}");
        std::fs::write(&cache, json.replace(now, earlier)).unwrap();
        assert_ok(name, &run(&os(&["collect", out.to_str().unwrap()])));
        assert_eq!(
            std::fs::read_to_string(out.join("summary.csv")).unwrap(),
            table,
            "{name}: the theory of an earlier build's stamp is set aside"
        );
        let mut with_config = os(&["collect", "--config"]);
        with_config.push(cfg.clone().into());
        with_config.push(out.clone().into());
        let o = run(&with_config);
        assert_ok(name, &o);
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(!said.contains("theory: "), "{name}: computed again: {said}");
        assert!(
            std::fs::read_to_string(&cache).unwrap().contains(now),
            "{name}: the stamp is not this build's"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("summary.csv")).unwrap(),
            table
        );
    }
}

/// The sixty-first hostile round, D2: `--recompute` under `--shard i/N` was refused in every
/// shard as "made by different configs" where another config's points fell in several
/// shards (each shard counted the others' points, which their own tasks make again). Each
/// shard now recomputes its own, dry run and run alike, and the sweep ends in one config.
#[test]
fn recompute_in_shards_counts_only_what_no_shard_makes_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "s.toml",
        &TINY_SWEEP.replace("seeds = [1]", "seeds = [0, 1]"),
    );
    let out = d.join("out");
    assert_ok("first", &run(&sweep_args(&cfg, &out, &[])));
    let other = ["--set", "data.n=13", "--recompute"];
    for shard in ["0/2", "1/2"] {
        let args = [&other[..], &["--shard", shard]].concat();
        let dry = run(&sweep_args(
            &cfg,
            &out,
            &[&args[..], &["--dry-run"]].concat(),
        ));
        assert_ok(&format!("dry run {shard}"), &dry);
        let said = String::from_utf8_lossy(&dry.stdout);
        assert!(said.contains("stale, made again (--recompute)"), "{said}");
        let o = run(&sweep_args(&cfg, &out, &args));
        assert_ok(&format!("shard {shard}"), &o);
        // The first shard to finish leaves the collect to the other, whose points are still
        // another config's.
        let said = String::from_utf8_lossy(&o.stderr);
        assert_eq!(said.contains("not collected yet"), shard == "0/2", "{said}");
    }
    let mut collect = os(&["collect", "--config"]);
    collect.push(cfg.clone().into());
    collect.extend(os(&["--set", "data.n=13"]));
    collect.push(out.clone().into());
    assert_ok("collect", &run(&collect));
    for summary in ntk_runs::sweep::find_files(&out.join("runs"), "summary.json") {
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
        assert_eq!(
            s["provenance"]["config"]["data.n"],
            13,
            "{}",
            summary.display()
        );
    }
    // Without --recompute a shard is still refused, naming --recompute.
    let o = run(&sweep_args(&cfg, &out, &["--shard", "0/2", "--dry-run"]));
    assert_eq!(o.status.code(), Some(2));
}

/// The sixty-third hostile round, D1: with two families that take the one parameter
/// (LeakyReLU first, then NormReLU), LeakyReLU's default slope given and left out made one
/// cache stamp, so NormReLU at b = 0.01 and at its default kink shared one theory: the
/// sweep recomputed at the default showed b = 0.01's theory. The stamp keeps the parameter
/// unless it is every family's default, and the recomputed sweep's theory is a fresh
/// sweep's.
#[test]
fn one_parameter_for_two_families_keeps_each_kinks_theory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = TINY_SWEEP
        .replace("theory = false", "theory = true")
        .replace("depths = [1, 2]", "depths = [1]")
        .replace(
            "activations = [\"relu\"]",
            "activations = [\"leaky_relu\", \"norm_relu\"]",
        );
    let cfg = write(d, "s.toml", &text);
    let theory = |out: &Path| -> Vec<String> {
        let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        let mut lines = table.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let (a, k) = (
            head.iter().position(|c| *c == "activation").unwrap(),
            head.iter().position(|c| *c == "theory_kappa").unwrap(),
        );
        lines
            .map(|l| {
                let cells: Vec<&str> = l.split(',').collect();
                format!("{} {}", cells[a], cells[k])
            })
            .collect()
    };
    let out = d.join("s");
    assert_ok(
        "b = 0.01",
        &run(&sweep_args(
            &cfg,
            &out,
            &["--set", "model.activation_param=0.01"],
        )),
    );
    let at_001 = theory(&out);
    assert_ok("default", &run(&sweep_args(&cfg, &out, &["--recompute"])));
    let fresh = d.join("fresh");
    assert_ok("fresh", &run(&sweep_args(&cfg, &fresh, &[])));
    assert_eq!(theory(&out), theory(&fresh));
    assert_ne!(
        theory(&out),
        at_001,
        "NormReLU's theory at b = 0.01 is kept"
    );
    // Each point's own collect keeps its theory: the first sweep's too.
    let first = d.join("first");
    assert_ok(
        "first",
        &run(&sweep_args(
            &cfg,
            &first,
            &["--set", "model.activation_param=0.01"],
        )),
    );
    assert_ok("collect", &run(&os(&["collect", first.to_str().unwrap()])));
    assert_eq!(theory(&first), at_001);
    assert!(at_001.iter().all(|row| !row.ends_with(' ')), "{at_001:?}");
}

/// Sixty-fourth hostile round, N2: an error of the data's files (a class-balanced subset
/// beyond a class's samples) named neither the config nor the sweep's setting, and digits'
/// missing test split was found only when loading; now each reads as the config's other
/// errors do, in `run`, `sweep` and its dry run.
#[test]
fn data_errors_name_the_config_and_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "r.toml", TINY);
    let sweep_cfg = write(d, "s.toml", TINY_SWEEP);
    let digits = [
        "--set",
        "data.dataset=\"digits\"",
        "--set",
        "data.input_dim=",
    ];
    let mut all_digits = os(&[
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        d.join("r").to_str().unwrap(),
    ]);
    all_digits.extend(os(&digits));
    all_digits.extend(os(&["--set", "data.n=1797"]));
    assert_clean_error(
        "run: balanced 1797 digits",
        &run(&all_digits),
        &[
            "r.toml (with overrides): ",
            "data.n = 1797 from digits",
            "class 0",
        ],
    );
    let mut test_split = os(&[
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        d.join("r").to_str().unwrap(),
    ]);
    test_split.extend(os(&digits));
    test_split.extend(os(&["--set", "data.split=\"test\"", "--dry-run"]));
    assert_clean_error(
        "run: digits' test split",
        &run(&test_split),
        &["r.toml (with overrides): data.split: digits has no test split"],
    );
    for dry in [&["--dry-run"][..], &[]] {
        let mut v = sweep_args(&sweep_cfg, &d.join("s"), dry);
        v.extend(os(&[
            "--set",
            "sweep.datasets=[\"digits\"]",
            "--set",
            "data.input_dim=",
            "--set",
            "data.n=1797",
        ]));
        assert_clean_error(
            "sweep: balanced 1797 digits",
            &run(&v),
            &[
                "s.toml (with overrides): digits",
                "data.n = 1797 from digits",
            ],
        );
        let mut v = sweep_args(&sweep_cfg, &d.join("s"), dry);
        v.extend(os(&[
            "--set",
            "sweep.datasets=[\"digits\",\"synthetic\"]",
            "--set",
            "data.input_dim=",
            "--set",
            "data.split=\"test\"",
        ]));
        assert_clean_error(
            "sweep: digits' test split",
            &run(&v),
            &[
                "s.toml (with overrides): digits",
                "digits has no test split",
            ],
        );
    }
    assert!(!d.join("r").exists() && !d.join("s").exists());
}

/// Sixty-fifth hostile round, D2: `--activation` on a ResNet was refused with a reason false
/// for `normalized`, which takes any activation; it sets `resnet.activation`, judged as that
/// key is.
#[test]
fn the_activation_flag_sets_a_resnets_activation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let resnet = |variant: &str| {
        format!(
            "[data]\ndataset = \"digits\"\nn = 12\n[resnet]\ndepth = 8\nvariant = \
             \"{variant}\"\nbase_width = 4\nimage_size = 8\nin_channels = 1\n[probe]\n\
             precision = \"f64\"\n"
        )
    };
    let normalized = write(d, "n.toml", &resnet("normalized"));
    let norm_relu = write(d, "r.toml", &resnet("norm_relu"));
    let probe = |cfg: &Path| {
        run(&os(&[
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "--out",
            d.join("o").to_str().unwrap(),
            "--activation",
            "gelu",
            "--dry-run",
        ]))
    };
    let o = probe(&normalized);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_clean_error(
        "gelu on norm_relu",
        &probe(&norm_relu),
        &["resnet.activation", "normalized"],
    );
    assert!(!d.join("o").exists());
}

/// Sixty-eighth hostile round, D1: a sweep over `sweep.ns` or `sweep.datasets` titled every
/// figure (and `plot --layout column`'s captions) with its first point's data alone
/// (`Synthetic N(0, I_3), 12 samples` over points of 5 and 12): the titles name all the data
/// the curves were measured on.
#[test]
fn a_sweeps_titles_name_all_the_data_it_measured() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "s.toml", TINY_SWEEP);
    let digits = write(
        d,
        "d.toml",
        &TINY_SWEEP
            .replace("dataset = \"synthetic\"", "dataset = \"digits\"")
            .replace("input_dim = 3\n", ""),
    );
    for (name, cfg, set, title) in [
        (
            "ns",
            &cfg,
            "sweep.ns=[12, 5]",
            "Synthetic N(0, I_3), 5 and 12 samples",
        ),
        (
            "datasets",
            &digits,
            "sweep.datasets=[\"digits\", \"synthetic\"]",
            "8x8 digits, 12 images; Synthetic N(0, I_5), 12 samples",
        ),
    ] {
        let out = d.join(name);
        let o = run(&sweep_args(cfg, &out, &["--set", set]));
        assert_ok(name, &o);
        let svg = std::fs::read_to_string(out.join("kappa_vs_depth_whole.svg")).unwrap();
        assert!(svg.contains(title), "{name}: {svg}");
        let column = d.join(format!("{name}-column"));
        let mut v = os(&["plot"]);
        v.extend([
            out.clone().into(),
            "--out".into(),
            column.clone().into(),
            "--layout".into(),
            "column".into(),
        ]);
        assert_ok(name, &run(&v));
        let caption =
            std::fs::read_to_string(column.join("kappa_vs_depth_whole.caption.txt")).unwrap();
        assert!(caption.contains(title), "{name}: {caption}");
    }
}

/// The infinite-width theory in a sweep figure over settings: one dotted entry per
/// activation where every setting has the same theory (widths: the theory has no width),
/// named by the activation alone; one per setting where they differ (erf under the `paper`
/// and `unit_variance` conventions: the latter scales the inputs by `1 / sqrt(d)`). The
/// seventy-second hostile round saw one identical dotted entry per width, each named with a
/// finite width. (An `ns` axis draws no theory: it is of one input set.) And erf under
/// `official`, which has no infinite-width limit at depth 2 (seventy-third round, D1): no
/// theory there, the note saying why, and the width-free one at depth 1.
#[test]
fn the_theory_is_drawn_once_where_the_settings_share_it() {
    let theory = TINY_SWEEP.replace("theory = false", "theory = true");
    let erf = theory.replace("activations = [\"relu\"]", "activations = [\"erf\"]");
    let official = erf.replace("[model]\n", "[model]\nconvention = \"official\"\n");
    for (base, axis, shared) in [
        (&theory, "widths = [8, 16]", Some("ReLU")),
        (&erf, "conventions = [\"paper\", \"unit_variance\"]", None),
        (&official, "widths = [8, 16]", Some("")),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let out = d.join("out");
        let text = base.replace("[sweep]\n", &format!("[sweep]\n{axis}\n"));
        let cfg = write(d, "s.toml", &text);
        assert_ok(axis, &run(&sweep_args(&cfg, &out, &[])));
        for stem in ["kappa_vs_depth_whole", "min_grad_angle_vs_depth"] {
            let svg = std::fs::read_to_string(out.join(format!("{stem}.svg"))).unwrap();
            // Every `<text>`'s words.
            let texts: Vec<&str> = svg
                .split("<text")
                .skip(1)
                .filter_map(|t| t.split_once('>'))
                .map(|(_, rest)| rest.split("</text>").next().unwrap_or("").trim())
                .collect();
            let theory: Vec<&str> = texts
                .iter()
                .copied()
                .filter(|t| t.ends_with(", infinite width"))
                .collect();
            match shared {
                Some("") => {
                    // One entry for depth 1's width-free theory, named by erf alone.
                    assert_eq!(theory.len(), 1, "{axis} {stem}: {theory:?}");
                    assert!(!theory[0].contains("width="), "{theory:?}");
                }
                Some(words) => {
                    assert_eq!(
                        theory,
                        [format!("{words}, infinite width")],
                        "{axis} {stem}"
                    )
                }
                None => {
                    assert_eq!(theory.len(), 2, "{axis} {stem}: {theory:?}");
                    assert!(theory[0].contains("paper"), "{theory:?}");
                    assert!(theory[1].contains("unit_variance"), "{theory:?}");
                }
            }
        }
        if shared == Some("") {
            let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
            let rows: Vec<&str> = summary.lines().filter(|l| l.contains("width=8")).collect();
            assert_eq!(rows.len(), 2, "{summary}");
            assert!(
                rows.iter().any(|r| r.contains(
                    "erf is not positively homogeneous, so this network has no infinite-width limit"
                )),
                "{summary}"
            );
        }
    }
}

/// Every file under `dir` (links not followed; the writers' registrations left out) with a
/// hash of its bytes, in a fixed order.
fn tree_bytes(dir: &Path) -> Vec<(PathBuf, u64)> {
    use std::hash::{Hash, Hasher};
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                if e.file_name() != ".ntk-writers" {
                    stack.push(p);
                }
            } else {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                std::fs::read(&p).unwrap_or_default().hash(&mut h);
                found.push((p, h.finish()));
            }
        }
    }
    found.sort();
    found
}

/// Every directory named `name` under `dir`.
fn find_dirs(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                if e.file_name() == name {
                    found.push(e.path());
                }
                stack.push(e.path());
            }
        }
    }
    found
}

/// Every `summary.json` under `dir`, in a fixed order.
fn summaries_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "summary.json") {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

/// The seventy-third hostile review (experiments/hostile/round73.md), ntk-probe's defects.
/// D1: `probe.method = "theory"` is refused where the network has no infinite-width limit
/// (erf under `official` at depth 2), dry run and run, naming the key; the same network
/// under `paper` is computed. D5: a sweep into a fresh `--out` holding a user's table alone
/// (no `runs/` beside it) is refused and the file kept. D6: a point's `summary.json` whose
/// `kappa` is not its `eigenvalues.npy`'s is refused by `collect`.
#[test]
fn seventy_third_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let theory = "[data]\ndataset = \"synthetic\"\nn = 8\ninput_dim = 3\n\n[model]\nwidth = 16\n\
                  depth = 2\nactivation = \"erf\"\nconvention = \"official\"\n\n[probe]\n\
                  precision = \"f64\"\nmethod = \"theory\"\n";
    let cfg = write(d, "theory.toml", theory);
    for extra in [&["--dry-run"][..], &[][..]] {
        assert_clean_error(
            "theory under official",
            &run(&ntk_args(&cfg, &d.join("official"), extra)),
            &[
                "probe.method",
                "erf is not positively homogeneous",
                "no infinite-width limit",
            ],
        );
    }
    assert!(!d.join("official").exists());
    let paper = write(
        d,
        "paper.toml",
        &theory.replace("\"official\"", "\"paper\""),
    );
    assert_ok(
        "theory under paper",
        &run(&ntk_args(&paper, &d.join("paper"), &[])),
    );
    let relu = write(d, "relu.toml", &theory.replace("\"erf\"", "\"relu\""));
    assert_ok(
        "relu under official",
        &run(&ntk_args(&relu, &d.join("relu"), &[])),
    );

    // D5: a user's results.csv alone where a sweep goes.
    let sweep = write(d, "s.toml", TINY_SWEEP);
    let lone = d.join("lone");
    std::fs::create_dir(&lone).unwrap();
    std::fs::write(lone.join("results.csv"), "mine").unwrap();
    for extra in [&["--dry-run"][..], &[][..]] {
        assert_clean_error(
            "a lone results.csv",
            &run(&sweep_args(&sweep, &lone, extra)),
            &["results.csv", "with no sweep's runs/ beside it"],
        );
    }
    assert_eq!(
        std::fs::read_to_string(lone.join("results.csv")).unwrap(),
        "mine"
    );

    // D6: a point's kappa edited in its summary.
    let out = d.join("sweep");
    assert_ok("the sweep", &run(&sweep_args(&sweep, &out, &[])));
    let collect = || collect_out(&out);
    assert_ok("collect as written", &collect());
    let path = summaries_under(&out.join("runs"))
        .into_iter()
        .next()
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let kappa = json["kappa"].as_f64().unwrap();
    json["kappa"] = serde_json::json!(kappa * 10.0);
    std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    let results = std::fs::read(out.join("results.csv")).unwrap();
    assert_clean_error(
        "an edited kappa",
        &collect(),
        &["summary.json", "kappa", "eigenvalues.npy"],
    );
    assert_eq!(std::fs::read(out.join("results.csv")).unwrap(), results);
    std::fs::write(&path, text).unwrap();
    assert_ok("collect as written again", &collect());
}

/// The seventy-fourth hostile review (experiments/hostile/round74.md), ntk-probe's defects.
/// D4: `collect` holds a point's rank and singular verdict to its `eigenvalues.npy`, and a
/// blocks point's means to its `blocks.csv`. D5: a tiled sweep's dry run asks each point's
/// phase place as the run does: a user's file at `.<seed>.phases` is said in the run's
/// words, and under `NTK_PHASE_FILES=1` the dry run fails as the run would.
#[test]
fn seventy_fourth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    // D4, on a sweep of both protocols.
    let both = TINY_SWEEP
        .replace(
            "protocols = [\"whole\"]",
            "protocols = [\"whole\", \"blocks\"]",
        )
        .replace("precision = \"f64\"", "precision = \"f64\"\nblock_size = 6");
    let cfg = write(d, "both.toml", &both);
    let out = d.join("both");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    let collect = || collect_out(&out);
    assert_ok("collect as written", &collect());
    let found = summaries_under(&out.join("runs"));
    let of = |protocol: &str| {
        found
            .iter()
            .find(|p| p.parent().unwrap().ends_with(protocol))
            .unwrap()
            .clone()
    };
    for (protocol, key, culprit) in [
        ("whole", "rank", "rank"),
        ("blocks", "lambda_max", "blocks.csv"),
        ("blocks", "lambda_min", "blocks.csv"),
    ] {
        let path = of(protocol);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
        json[key] = match key {
            "rank" => serde_json::json!(json["rank"].as_u64().unwrap() - 1),
            _ => serde_json::json!(json[key].as_f64().unwrap() * 0.5),
        };
        std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
        assert_clean_error(
            &format!("{protocol} {key}"),
            &collect(),
            &["summary.json", culprit, "edited after the run"],
        );
        std::fs::write(&path, text).unwrap();
    }
    assert_ok("collect as written again", &collect());

    // D5: the tiled route's phase places, from the dirs of a finished sweep.
    let tiled = TINY_SWEEP.replace(
        "precision = \"f64\"",
        "precision = \"f64\"\neigen = \"tiled\"",
    );
    let cfg = write(d, "tiled.toml", &tiled);
    let first = d.join("first");
    assert_ok("the tiled sweep", &run(&sweep_args(&cfg, &first, &[])));
    let fresh = d.join("fresh");
    let mut places = Vec::new();
    for summary in summaries_under(&first.join("runs")) {
        let point = summary.parent().unwrap().parent().unwrap();
        let name = point.file_name().unwrap().to_string_lossy().into_owned();
        let at = fresh
            .join(point.parent().unwrap().strip_prefix(&first).unwrap())
            .join(format!(".{name}.phases"));
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(&at, "mine").unwrap();
        places.push(at);
    }
    assert!(!places.is_empty());
    let dry = |env: Option<&str>| {
        let mut c = probe();
        c.args(sweep_args(&cfg, &fresh, &["--dry-run"]));
        match env {
            Some(v) => c.env("NTK_PHASE_FILES", v),
            None => c.env_remove("NTK_PHASE_FILES"),
        };
        c.output().unwrap()
    };
    let o = dry(None);
    assert_ok("dry run", &o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("exists and is not a directory") && err.contains("without phase files"),
        "{err}"
    );
    let o = dry(Some("1"));
    assert_clean_error(
        "dry run, NTK_PHASE_FILES=1",
        &o,
        &["NTK_PHASE_FILES", ".phases"],
    );
    for at in &places {
        assert_eq!(std::fs::read_to_string(at).unwrap(), "mine");
    }
}

/// The seventy-fifth hostile review, D3: a point's summary whose labels were edited (its
/// activation, depth, width) is refused by `collect`: its fields no longer match the
/// checksum it was written with.
#[test]
fn seventy_fifth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "s.toml", TINY_SWEEP);
    let out = d.join("sweep");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    let collect = || collect_out(&out);
    let path = summaries_under(&out.join("runs"))
        .into_iter()
        .next()
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    for (key, value) in [
        ("activation", serde_json::json!("erf")),
        ("depth", serde_json::json!(5)),
        ("width", serde_json::json!(512)),
    ] {
        let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
        json[key] = value;
        std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
        assert_clean_error(key, &collect(), &["summary.json", "checksum"]);
    }
    std::fs::write(&path, &text).unwrap();
    assert_ok("collect as written", &collect());
}

/// The seventy-sixth hostile review, D3: a finished point whose summary no longer matches
/// its checksum is `stale` in the sweep's dry run (it said `done`, and the sweep refused).
#[test]
fn seventy_sixth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "s.toml", TINY_SWEEP);
    let out = d.join("sweep");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    let path = summaries_under(&out.join("runs"))
        .into_iter()
        .next()
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["seed"] = serde_json::json!(99);
    std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    let o = run(&sweep_args(&cfg, &out, &["--resume", "--dry-run"]));
    let plan = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        plan.contains("stale") || err.contains("checksum"),
        "{plan}\n{err}"
    );
    assert!(
        !plan
            .lines()
            .all(|l| !l.contains("stale") && l.contains("done")),
        "{plan}"
    );
}

/// The seventy-seventh hostile review, D1: a finished single run whose `summary.json` was
/// edited after it was written (its activation, its kappa) is not kept by `--resume`: the
/// dry run and the run refuse it, naming the file, as a sweep's point is stale.
#[test]
fn seventy_seventh_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "t.toml", TINY);
    let out = d.join("out");
    assert_ok("the run", &run(&ntk_args(&cfg, &out, &[])));
    let path = out.join("summary.json");
    let text = std::fs::read_to_string(&path).unwrap();
    for (key, value) in [
        ("activation", serde_json::json!("erf")),
        ("kappa", serde_json::json!(5.0)),
    ] {
        let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
        json[key] = value;
        std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
        for extra in [&["--resume", "--dry-run"][..], &["--resume"][..]] {
            assert_clean_error(key, &run(&ntk_args(&cfg, &out, extra)), &["summary.json"]);
        }
    }
    std::fs::write(&path, &text).unwrap();
    assert_ok(
        "resume as written",
        &run(&ntk_args(&cfg, &out, &["--resume"])),
    );
}

/// The seventy-ninth hostile review (experiments/hostile/round79.md), D1: an ONNX set
/// (`ntk-probe onnx`) whose `summary.json` was edited after it was written (its `kappa`
/// against `eigenvalues.npy`, or any field against its own checksum) is refused by
/// `--resume` and its dry run, naming the summary, as `ntk-probe run`'s set is (round 77's
/// D1); `--recompute` makes it again; as written, it is kept.
#[test]
fn seventy_ninth_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/onnx_mlp.onnx");
    let cfg = write(
        d,
        "onnx.toml",
        &format!(
            "[onnx]\nfile = \"{}\"\n\n[data]\ndataset = \"synthetic\"\nn = 12\nseed = 0\n\n\
             [probe]\nprecision = \"f64\"\n",
            model.display()
        ),
    );
    let out = d.join("set");
    let onnx = |extra: &[&str]| {
        let mut a = os(&["onnx", "--config"]);
        a.push(cfg.clone().into());
        a.push("--out".into());
        a.push(out.clone().into());
        a.extend(os(extra));
        run(&a)
    };
    assert_ok("the run", &onnx(&[]));
    let path = out.join("summary.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"checksum\""), "{text}");
    for (key, value, culprit) in [
        (
            "kappa",
            serde_json::json!(5.0),
            "kappa 5 where eigenvalues.npy gives",
        ),
        ("parameters", serde_json::json!(9), "checksum"),
    ] {
        let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
        json[key] = value;
        std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
        for extra in [&["--resume", "--dry-run"][..], &["--resume"][..]] {
            assert_clean_error(key, &onnx(extra), &["summary.json", culprit, "--recompute"]);
        }
    }
    assert_ok("--recompute", &onnx(&["--recompute"]));
    assert_ok("resume as written", &onnx(&["--resume"]));
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("\"parameters\": 1281")
    );
}

/// Round 78's N1: a sweep config that leaves out the keys its axes set at every point
/// (`model.depth` by `sweep.depths`, `model.activation` by `sweep.activations`) is the same
/// sweep as one that gives them: it runs, and its points are done for the config that gives
/// them (the same fingerprints); `--set` of such a key is still refused naming the axis.
#[test]
fn seventy_eighth_review_axis_keys_may_be_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bare_text = TINY_SWEEP.replace("depth = 1\nactivation = \"relu\"\n", "");
    assert_ne!(bare_text, TINY_SWEEP);
    let bare = write(d, "bare.toml", &bare_text);
    let full = write(d, "full.toml", TINY_SWEEP);
    let out = d.join("out");
    assert_ok("dry run", &run(&sweep_args(&bare, &out, &["--dry-run"])));
    assert_ok("the sweep", &run(&sweep_args(&bare, &out, &[])));
    let plan = run(&sweep_args(&full, &out, &["--dry-run"]));
    assert_ok("the same sweep, keys given", &plan);
    let text = String::from_utf8_lossy(&plan.stdout);
    assert_eq!(text.matches("done").count(), 2, "{text}");
    assert!(!text.contains("stale") && !text.contains("new"), "{text}");
    assert_clean_error(
        "--set of an axis key",
        &run(&sweep_args(&bare, &out, &["--set", "model.depth=3"])),
        &["model.depth", "sweep.depths"],
    );
    // Eighty-fourth hostile round, D2: the axis removed, the key it filled was "missing
    // field `depth`" under a "TOML parse error" of the file, naming neither the --set nor
    // the key.
    let removed = run(&sweep_args(
        &bare,
        &out,
        &["--set", "sweep.depths=", "--dry-run"],
    ));
    assert_clean_error(
        "the axis removed",
        &removed,
        &["--set sweep.depths=", "removes what sets model.depth"],
    );
    assert!(
        !String::from_utf8_lossy(&removed.stderr).contains("TOML parse error"),
        "{}",
        String::from_utf8_lossy(&removed.stderr)
    );
}

/// The eighty-first hostile review (experiments/hostile/round81.md). D4: `collect` without
/// `--config` blamed an intact `summary.json` ("the summary was edited after the run") for
/// an edited `eigenvalues.npy`; it now names the file that is not as its summary records it.
/// N5: a point whose `eigenvalues.npy` is missing or a FIFO was merged without a word; it is
/// refused, naming the file. `results.csv` is left as it was each time.
#[test]
fn eighty_first_review_collect_names_the_edited_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = write(d, "s.toml", TINY_SWEEP);
    let out = d.join("sweep");
    assert_ok("the sweep", &run(&sweep_args(&sweep, &out, &[])));
    let collect = || collect_out(&out);
    assert_ok("collect as written", &collect());
    let results = std::fs::read(out.join("results.csv")).unwrap();
    let summary = summaries_under(&out.join("runs"))
        .into_iter()
        .next()
        .unwrap();
    let eigen = summary.with_file_name("eigenvalues.npy");
    let bytes = std::fs::read(&eigen).unwrap();
    let mut edited = bytes.clone();
    *edited.last_mut().unwrap() ^= 0x10;
    std::fs::write(&eigen, &edited).unwrap();
    let o = collect();
    assert_clean_error(
        "an edited eigenvalues.npy",
        &o,
        &["eigenvalues.npy", "SHA-256", "not reported"],
    );
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("the summary was edited"),
        "{o:?}"
    );
    std::fs::remove_file(&eigen).unwrap();
    assert_clean_error(
        "a missing eigenvalues.npy",
        &collect(),
        &["eigenvalues.npy", "missing"],
    );
    let fifo = Command::new("mkfifo").arg(&eigen).output().unwrap();
    assert!(fifo.status.success(), "{fifo:?}");
    assert_clean_error(
        "a FIFO for eigenvalues.npy",
        &collect(),
        &["eigenvalues.npy", "not a regular file"],
    );
    std::fs::remove_file(&eigen).unwrap();
    assert_eq!(std::fs::read(out.join("results.csv")).unwrap(), results);
    std::fs::write(&eigen, &bytes).unwrap();
    assert_ok("collect as written again", &collect());
}

/// The eighty-first hostile review, D6: the blocks protocol's screen summary printed the
/// means over its blocks as `lambda_min`, `lambda_max` and `kappa` with no word, so a mean
/// kappa far above the ratio of the two lines above it read as one kernel's. Each line now
/// says it is a mean and over how many blocks.
#[test]
fn eighty_first_review_the_blocks_summary_says_its_means() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "blocks.toml",
        &format!("{TINY}protocol = \"blocks\"\nblock_size = 4\n"),
    );
    let o = run(&ntk_args(&cfg, &d.join("b"), &[]));
    assert_ok("blocks", &o);
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    for line in ["lambda_min", "lambda_max", "kappa   "] {
        let l = table.lines().find(|l| l.contains(line)).unwrap();
        assert!(
            l.contains("(mean over 3 blocks; each in blocks.csv)"),
            "{table}"
        );
    }
}

/// The eighty-second hostile review. D7: `collect` of a missing path, a FIFO or a file said
/// "no finished ntk-probe points under runs/", and `plot` of a missing path "summary.csv:
/// missing (run ntk-probe collect first)"; each now names the path and what it is. D8:
/// `NTK_PHASE_FILES=yes` passed a dense run without a word (and was read as unset), and a
/// tiled sweep planned its points, then recorded each one's failure; both are refused
/// before any work, naming the variable.
#[test]
fn eighty_second_review_paths_and_the_phase_variable() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "c.toml", TINY);
    let fifo = d.join("f.fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for (path, says) in [
        (d.join("nonexist"), "no such directory"),
        (fifo.clone(), "not a directory"),
        (cfg.clone(), "not a directory"),
    ] {
        let mut v = os(&["collect"]);
        v.push(path.clone().into());
        assert_clean_error("collect", &run(&v), &[&path.display().to_string(), says]);
        let mut v = os(&["plot"]);
        v.push(path.clone().into());
        v.extend(os(&["--out"]));
        v.push(d.join("figs").into());
        assert_clean_error("plot", &run(&v), &[&path.display().to_string(), says]);
    }
    let with_yes = |args: Vec<OsString>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ntk-probe"));
        c.args(args).env("NTK_PHASE_FILES", "yes");
        c.output().unwrap()
    };
    for extra in [&["--dry-run"][..], &[][..]] {
        assert_clean_error(
            "a dense run",
            &with_yes(ntk_args(&cfg, &d.join("dense"), extra)),
            &["NTK_PHASE_FILES", "yes"],
        );
    }
    assert!(!d.join("dense").exists());
    let sweep = write(d, "s.toml", TINY_SWEEP);
    let out = d.join("sweep");
    for extra in [&["--dry-run"][..], &[][..]] {
        assert_clean_error(
            "a sweep",
            &with_yes(sweep_args(&sweep, &out, extra)),
            &["NTK_PHASE_FILES", "yes"],
        );
    }
    assert!(!out.join("runs").exists(), "no point made or recorded");
}

/// The eighty-second hostile review, D11: a sweep point whose directory this user cannot
/// write in (another user's; here an immutable directory, which root cannot write in
/// either) was planned `stale` by the dry run without a word, and the run said it "was being
/// written by another process". The dry run now foresees its failure, naming the directory,
/// and the run fails it as a failure (not a busy point), the other points made.
#[test]
fn eighty_second_review_a_point_that_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = write(d, "s.toml", TINY_SWEEP);
    let out = d.join("sweep");
    assert_ok("the sweep", &run(&sweep_args(&sweep, &out, &[])));
    let summary = summaries_under(&out.join("runs"))
        .into_iter()
        .min()
        .unwrap();
    // The point's set is made (and locked) in the directory above the point's own.
    let point = summary.parent().unwrap().parent().unwrap().to_path_buf();
    let held = point.parent().unwrap().to_path_buf();
    let chattr = |flag: &str| {
        Command::new("chattr")
            .arg(flag)
            .arg(&held)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    assert!(chattr("+i"), "chattr +i is needed for this test");
    let again = ["--recompute", "--set", "data.seed=3"];
    let dry = run(&sweep_args(
        &sweep,
        &out,
        &[&again[..], &["--dry-run"]].concat(),
    ));
    let o = run(&sweep_args(&sweep, &out, &again));
    assert!(chattr("-i"));
    let plan =
        String::from_utf8_lossy(&dry.stdout).into_owned() + &String::from_utf8_lossy(&dry.stderr);
    assert!(
        plan.contains("would fail") && plan.contains(&held.display().to_string()),
        "{plan}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("another process"), "{err}");
    // Eighty-third hostile round, D7: the failure could not be recorded (its failed.json is
    // written where the set is made), and the summary line said "each recorded in its
    // failed.json".
    let all = String::from_utf8_lossy(&o.stdout).into_owned() + &err;
    assert!(
        all.contains("the failure could not be recorded")
            && err.contains("not recorded: no failed.json could be written")
            && !all.contains("each recorded"),
        "{all}"
    );
    assert!(
        summaries_under(&out.join("runs")).len() > 1,
        "the points kept"
    );
}

/// The eighty-fourth hostile review (experiments/hostile/round84.md). D4: a sweep
/// recomputed without a protocol it had kept that protocol's `kappa_vs_depth_blocks.*`
/// without a word; the sweep, `collect` and `plot` said it and left it (eighty-eighth, D5:
/// stale beside the new results). Now the sweep's collect, which recorded writing them,
/// removes them and says so; a file at that name the record does not prove the tools' (a
/// user's) is said by `collect` and `plot` and left. D5: a file
/// where a point's directory goes was labelled `failed` by the dry run, where the point never
/// ran; it is `blocked`, with why. A user's file in a point's directory above its protocol's
/// result was "not collected" of a point that was.
#[test]
fn eighty_fourth_review_stale_figures_and_blocked_points() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let both = TINY_SWEEP.replace(
        "protocols = [\"whole\"]",
        "protocols = [\"whole\", \"blocks\"]",
    ) + "block_size = 4\n";
    let cfg = write(d, "both.toml", &both);
    let out = d.join("out");
    assert_ok("both protocols", &run(&sweep_args(&cfg, &out, &[])));
    let blocks_png = out.join("kappa_vs_depth_blocks.png");
    assert!(blocks_png.is_file());
    let whole = write(d, "whole.toml", TINY_SWEEP);
    let stale = |o: &std::process::Output, fate: &str| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("kappa_vs_depth_blocks.png")
                && err.contains("no point here is of the blocks protocol now")
                && err.contains(fate),
            "{err}"
        );
    };
    // Eighty-ninth, D1: made again under the whole protocol alone, each point's directory
    // (replaced whole) would lose its blocks protocol's results: refused, dry run and run,
    // before any work, naming them; nothing changed.
    let before = tree_bytes(&out);
    for extra in [&["--recompute", "--dry-run"][..], &["--recompute"]] {
        let o = run(&sweep_args(&whole, &out, extra));
        assert_clean_error("fewer protocols", &o, &["blocks", "sweep.protocols"]);
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("holds results of the blocks protocol"),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(tree_bytes(&out), before, "{extra:?}: nothing changed");
    }
    // Moved out by hand, the sweep makes them again; its dry run says which figures its
    // collect will remove (D2), and the run removes them.
    // (An empty `blocks/` left holds no results: not refused; round 90, N6.)
    for blocks in find_dirs(&out.join("runs"), "blocks") {
        std::fs::remove_dir_all(&blocks).unwrap();
        std::fs::create_dir(&blocks).unwrap();
    }
    let o = run(&sweep_args(&whole, &out, &["--recompute", "--dry-run"]));
    assert_ok("the dry run", &o);
    let said = String::from_utf8_lossy(&o.stdout);
    // Results made again: the report files of those they replace are retired before the
    // first step (the hundred-and-fifty-third hostile round, second review, D1), said once.
    assert!(
        said.contains("kappa_vs_depth_blocks.pdf, kappa_vs_depth_blocks.png")
            && said.contains("the run would remove them before its first step")
            && !said.contains("the collect that ends the run or sweep would remove them"),
        "{said}"
    );
    assert!(blocks_png.is_file(), "a dry run removes nothing");
    let o = run(&sweep_args(&whole, &out, &["--recompute"]));
    assert_ok("the whole protocol alone", &o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("kappa_vs_depth_blocks.png") && err.contains("removed before the first step"),
        "{err}"
    );
    for ext in ["png", "svg", "pdf"] {
        assert!(
            !out.join(format!("kappa_vs_depth_blocks.{ext}")).exists(),
            "{ext}"
        );
    }
    assert!(out.join("kappa_vs_depth_whole.png").is_file());
    std::fs::write(&blocks_png, "mine").unwrap();
    let o = run(&os(&["collect", out.to_str().unwrap()]));
    assert_ok("collect", &o);
    stale(&o, "left as they are");
    let o = run(&os(&["plot", out.to_str().unwrap()]));
    assert_ok("plot", &o);
    stale(&o, "left as they are");
    assert_eq!(
        std::fs::read_to_string(&blocks_png).unwrap(),
        "mine",
        "left"
    );
    // D5 (b): a user's file beside a point's protocol directory.
    let point = summaries_under(&out.join("runs"))
        .into_iter()
        .min()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::write(point.join("notes.txt"), "mine").unwrap();
    let o = run(&os(&["collect", out.to_str().unwrap()]));
    assert_ok("collect beside notes", &o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("not collected"), "{err}");
    // D5 (a): a file where a point's directory goes.
    let fresh = d.join("fresh");
    let seed_dir = fresh.join("runs/relu/depth01/seed1");
    std::fs::create_dir_all(seed_dir.parent().unwrap()).unwrap();
    std::fs::write(&seed_dir, "mine").unwrap();
    let o = run(&sweep_args(&whole, &fresh, &["--dry-run"]));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(
        plan.contains("blocked") && !plan.contains(" failed "),
        "{plan}"
    );
    assert_eq!(std::fs::read_to_string(&seed_dir).unwrap(), "mine");
}

/// Asserts that `d` holds no lock (`*.ntk-lock`) and no temporary (`*.ntk-tmp-*`): what a
/// run that ended leaves behind only when it died mid-way.
fn assert_no_lock_or_temporary(d: &Path) {
    let left: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("ntk-lock") || n.contains("ntk-tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The `ntk --json` summary of a probe of the config `text` (written to `d/name.toml`) into
/// `d/name`; the run must succeed.
fn ntk_json(d: &Path, name: &str, text: &str) -> serde_json::Value {
    let cfg = write(d, &format!("{name}.toml"), text);
    let mut a = os(&["ntk", "--json", "--config", cfg.to_str().unwrap(), "--out"]);
    a.push(d.join(name).into());
    let o = run(&a);
    assert_ok(name, &o);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The interval `kappa between LOW and HIGH` a summary's note gives.
fn kappa_between(note: &str) -> (f64, f64) {
    let i = note.find("kappa between ").expect(note) + "kappa between ".len();
    let mut words = note[i..].split_whitespace();
    let low = words.next().unwrap().parse().unwrap();
    let high = words.nth(1).unwrap().parse().unwrap();
    (low, high)
}

/// Eighty-fourth hostile round, D3: the whole protocol in f32 called a kernel singular
/// (rank 7 of 8, κ null) by the worst-case bound, where the blocks protocol of the same
/// inputs as one block measured its error and resolved it. The whole set's f32 kernel is
/// now decided the same way: regular, the f32 κ within the interval the note gives, and
/// f64's κ inside it; equal to the blocks protocol's row.
#[test]
fn eighty_fourth_review_a_whole_f32_kernel_is_decided_by_its_measured_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = "[data]\ndataset = \"synthetic\"\nn = 8\ninput_dim = 5\nseed = 0\n\
                [model]\nwidth = 16\ndepth = 1\nactivation = \"leaky_relu\"\n\
                activation_param = 0.99\nseed = 1\n[probe]\nprecision = \"f32\"\n";
    let json = |name: &str, text: &str| ntk_json(d, name, text);
    let f32 = json("f32", text);
    let f64 = json("f64", &text.replace("\"f32\"", "\"f64\""));
    assert_eq!(f32["singular"], false, "{f32}");
    assert_eq!(f32["rank"], 8);
    let note = f32["note"].as_str().unwrap();
    assert!(
        note.contains("||K_f32 - K_f64||_2 = ") && note.contains("resolves it"),
        "{note}"
    );
    let (low, high) = kappa_between(note);
    let (k32, k64) = (
        f32["kappa"].as_f64().unwrap(),
        f64["kappa"].as_f64().unwrap(),
    );
    assert!(low <= k32 && k32 <= high, "{low} {k32} {high}");
    assert!(
        low <= k64 && k64 <= high,
        "f64's kappa {k64} outside [{low}, {high}]"
    );
    assert_eq!(f64["singular"], false);
    // Eighty-fifth hostile round, D4: the summary was held to the bound's rank by every
    // reader and called edited: its --resume refused, a sweep of it never collected. It
    // records the measured error, and is held to the tolerance that gives.
    assert!(
        f32["measured_error"].as_f64().is_some_and(|e| e > 0.0),
        "{f32}"
    );
    let cfg = d.join("f32.toml");
    let mut a = os(&[
        "ntk",
        "--resume",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
    ]);
    a.push(d.join("f32").into());
    assert_ok("--resume keeps it", &run(&a));
    let sweep = write(
        d,
        "sweep.toml",
        &format!(
            "[sweep]\ndepths = [1]\nactivations = [\"leaky_relu\"]\nseeds = [1, 2]\n\
             protocols = [\"whole\"]\nout = \"unused\"\ntheory = false\n{}",
            text.replace("depth = 1\nactivation = \"leaky_relu\"\n", "")
                .replace("seed = 1\n[probe]", "[probe]")
        ),
    );
    let out = d.join("sweep");
    assert_ok("the sweep", &run(&sweep_args(&sweep, &out, &[])));
    assert!(out.join("results.csv").is_file());
    assert_ok(
        "its collect",
        &run(&os(&["collect", out.to_str().unwrap()])),
    );
    // Eighty-fifth, D3: the extreme route, which has no full spectrum, says its verdict is
    // the bound's.
    let extreme = json("extreme", &format!("{text}eigen = \"extreme\"\n"));
    assert_eq!(extreme["singular"], true, "{extreme}");
    let note = extreme["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("singular by the worst-case bound"),
        "{extreme}"
    );
    // Ninety-third, D3: with the least kappa the bound allows, as the full route gives it,
    // below f64's kappa; `kappa_high` absent (unbounded), and a sweep's tables carry it.
    let least = extreme["kappa_low"].as_f64().expect("kappa_low");
    assert!(extreme["kappa_high"].is_null(), "{extreme}");
    assert!(least > 0.0 && least <= k64, "{least} against f64's {k64}");
    assert!(
        note.contains(&format!("kappa at least {least:.6e} (Weyl)")),
        "{note}"
    );
}

/// Eighty-fifth hostile round, D8: a probe sweep's dry run listed as `new` a point another
/// live process was making, where the run calls it busy and ends with an error. The dry run
/// now says it fails as busy (this test's process holds the point's lock).
#[test]
fn eighty_fifth_review_a_busy_point_is_foreseen() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "s.toml", TINY_SWEEP);
    let out = d.join("out");
    let point = out.join("runs/relu/depth01/seed1");
    std::fs::create_dir_all(point.parent().unwrap()).unwrap();
    let lock = ntk_files::lock::DirLock::acquire_beside(&point).unwrap();
    let o = run(&sweep_args(&cfg, &out, &["--dry-run"]));
    drop(lock);
    let all = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(
        all.contains("busy: another process is writing here"),
        "{all}"
    );
    assert_ok("free again", &run(&sweep_args(&cfg, &out, &["--dry-run"])));
}

/// Eighty-sixth hostile round, D1: a singular kernel of several outputs (`probe.output =
/// "full"`) was printed "rank R of R", the rank standing for the kernel's size; it is the
/// size, n times the outputs.
#[test]
fn eighty_sixth_review_a_full_kernels_size_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "full.toml",
        "[data]\ndataset = \"synthetic\"\nn = 15\ninput_dim = 3\n\
         [model]\nwidth = 8\ndepth = 1\nactivation = \"linear\"\noutput_dim = 2\nseed = 1\n\
         [probe]\nprecision = \"f64\"\noutput = \"full\"\n",
    );
    let mut a = os(&["ntk", "--config", cfg.to_str().unwrap(), "--out"]);
    a.push(d.join("out").into());
    let o = run(&a);
    assert_ok("the run", &o);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("singular: rank") && table.contains(" of 30)"),
        "{table}"
    );
}

/// Eighty-fifth hostile round, N7: a probe config with `[onnx]` and `[sweep]` (in the file,
/// or the sweep by `--set`) is refused in words, naming `ntk-probe onnx`, by `sweep` and
/// `run` alike, not read as a TOML error (`unknown field onnx`).
#[test]
fn eighty_fifth_review_an_onnx_sweep_is_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let both = write(
        d,
        "both.toml",
        "[onnx]\nfile = \"m.onnx\"\n[data]\ndataset = \"synthetic\"\nn = 8\n\
         [sweep]\nseeds = [1, 2]\n",
    );
    let only = write(
        d,
        "only.toml",
        "[onnx]\nfile = \"m.onnx\"\n[data]\ndataset = \"synthetic\"\nn = 8\n",
    );
    for (cfg, extra) in [(&both, None), (&only, Some("sweep={seeds=[1,2]}"))] {
        for cmd in ["sweep", "run"] {
            let mut a = os(&[cmd, "--config", cfg.to_str().unwrap(), "--dry-run"]);
            if let Some(set) = extra {
                a.extend(os(&["--set", set]));
            }
            a.extend(os(&["--out"]));
            a.push(d.join("o").into());
            let o = run(&a);
            assert_clean_error(
                &format!("{cmd} {}", cfg.display()),
                &o,
                &["[onnx] with [sweep]", "ntk-probe onnx", "ntk-train sweep"],
            );
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert!(!stderr.contains("TOML parse error"), "{stderr}");
            assert_eq!(
                stderr.contains("with overrides"),
                extra.is_some(),
                "{stderr}"
            );
        }
    }
}

/// Eighty-sixth hostile round, N5: a sweep's printed table marks a kappa that is the mean
/// over part of its seeds (the others' kernels singular) with their count, and says so
/// below the table; a group of no singular seed is printed as before.
#[test]
fn eighty_sixth_review_a_mean_over_part_of_the_seeds_is_marked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Width 2 on 4 inputs: four of the six seeds leave two inputs with every unit dead.
    let cfg = write(
        d,
        "sw.toml",
        "[data]\ndataset = \"synthetic\"\nn = 4\ninput_dim = 3\n\
         [model]\nwidth = 2\n[probe]\nprecision = \"f64\"\n\
         [sweep]\ndepths = [1]\nactivations = [\"relu\", \"linear\"]\n\
         seeds = [1, 2, 3, 4, 5, 6]\nprotocols = [\"whole\"]\n",
    );
    let mut a = os(&["sweep", "--config", cfg.to_str().unwrap(), "--out"]);
    a.push(d.join("o").into());
    let o = run(&a);
    assert_ok("the sweep", &o);
    let table = String::from_utf8_lossy(&o.stdout);
    let results = std::fs::read_to_string(d.join("o/results.csv")).unwrap();
    let singular = results
        .lines()
        .filter(|l| l.contains(",relu,") && l.contains(",true,"))
        .count();
    assert!((1..6).contains(&singular), "{results}");
    let row = |a: &str| {
        let a = format!(" {a} ");
        table
            .lines()
            .find(|l| l.trim_start().starts_with("whole") && l.contains(&a))
            .unwrap()
    };
    let relu = row("relu");
    assert!(relu.contains(&format!("*{singular} ")), "{table}");
    let linear = row("linear");
    assert!(!linear.contains('*'), "{table}");
    assert!(
        table.contains("*S: kappa is the mean over the seeds whose kernel is not singular"),
        "{table}"
    );
}

/// Eighty-fifth hostile round, N6: a run whose `--out` lies in a directory it cannot write
/// (here immutable) is refused naming that directory as the one `--out` lies in, not as
/// "the output directory", by `--resume` of a finished set and its dry run alike; where the
/// directory `--out` lies in does not exist, the one that cannot take it is named.
#[test]
fn eighty_fifth_review_the_directory_out_lies_in_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let parent = d.join("p");
    std::fs::create_dir(&parent).unwrap();
    let cfg = write(d, "tiny.toml", TINY);
    let out = parent.join("done");
    let args = |extra: &[&str]| {
        let mut a = os(&["run", "--config", cfg.to_str().unwrap()]);
        a.extend(os(extra));
        a.push("--out".into());
        a.push(out.clone().into());
        a
    };
    assert_ok("the first run", &run(&args(&[])));
    let _frozen = crate::phases::Immutable::set(&parent);
    for extra in [&["--resume"][..], &["--resume", "--dry-run"]] {
        let o = run(&args(extra));
        assert_clean_error(
            &format!("{extra:?}"),
            &o,
            &[&format!(
                "{}: the directory --out lies in is not writable",
                parent.display()
            )],
        );
    }
    let deeper = parent.join("q/r");
    let mut a = os(&[
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--dry-run",
        "--out",
    ]);
    a.push(deeper.into());
    let o = run(&a);
    assert_clean_error(
        "a missing parent",
        &o,
        &[&format!(
            "{}: not writable, so {}, the directory --out lies in, cannot be made",
            parent.display(),
            parent.join("q").display()
        )],
    );
}

/// Eighty-sixth hostile round, N4: `ntk-probe collect` of a sweep whose `runs` is a symbolic
/// link to a directory beside it is refused, as the sweep refuses it, naming the link (it
/// read through the link, exit 0).
#[test]
fn eighty_sixth_review_a_linked_runs_is_refused_by_collect() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "sw.toml", TINY_SWEEP);
    let out = d.join("s");
    let mut a = os(&["sweep", "--config", cfg.to_str().unwrap(), "--out"]);
    a.push(out.clone().into());
    assert_ok("the sweep", &run(&a));
    std::fs::rename(out.join("runs"), d.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", out.join("runs")).unwrap();
    let o = collect_out(&out);
    assert_clean_error(
        "collect",
        &o,
        &["runs: a symbolic link, never followed", "the sweep refuses"],
    );
    assert!(d.join("elsewhere").is_dir());
}

/// Eighty-fifth hostile round, N3: a shard's own collect says its tables hold the points
/// finished so far and how many of the other shards' have no result yet; the last shard,
/// which finds every point made, says nothing of the kind.
#[test]
fn eighty_fifth_review_a_shards_collect_says_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "sw.toml", TINY_SWEEP);
    let out = d.join("s");
    let shard = |s: &str| {
        let mut a = os(&[
            "sweep",
            "--config",
            cfg.to_str().unwrap(),
            "--shard",
            s,
            "--out",
        ]);
        a.push(out.clone().into());
        let o = run(&a);
        assert_ok(s, &o);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let first = shard("0/2");
    assert!(
        first.contains("the tables and figures hold the points finished so far: 1 point(s) of the other shards have no result yet"),
        "{first}"
    );
    let last = shard("1/2");
    assert!(!last.contains("finished so far"), "{last}");
}

/// Eighty-seventh hostile round, D6: standard error that cannot be written (`2>/dev/full`,
/// a log on a full disk) ends nothing: a refusal exits 2, a run and a sweep that print
/// progress and warnings there finish with their results (they panicked at the first line,
/// exit 101 or 134, leaving the lock and the temporary set).
#[test]
fn eighty_seventh_review_a_full_stderr_ends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let full = || {
        std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let with_full = |args: Vec<OsString>| probe().args(args).stderr(full()).output().unwrap();
    let refused = with_full(os(&["run", "--config", "/no/such.toml", "--out", "x"]));
    assert_eq!(refused.status.code(), Some(2));
    let cfg = write(d, "tiny.toml", TINY);
    let out = d.join("one");
    let mut a = os(&["run", "--config", cfg.to_str().unwrap(), "--out"]);
    a.push(out.clone().into());
    let o = with_full(a);
    assert!(o.status.success(), "{o:?}");
    assert!(out.join("summary.json").is_file());
    let sweep = write(d, "sw.toml", TINY_SWEEP);
    let s = d.join("s");
    let mut a = os(&["sweep", "--config", sweep.to_str().unwrap(), "--out"]);
    a.push(s.clone().into());
    let o = with_full(a);
    assert!(o.status.success(), "{o:?}");
    assert!(s.join("summary.csv").is_file());
    assert_no_lock_or_temporary(d);
}

/// Eighty-seventh hostile round, D5, and eighty-eighth, D2: a probe sweep that leaves
/// `model.depth` to its axis is told only what helps: given the axis empty, to give it a
/// non-empty list, not also "or give model.depth", which its empty axis refuses anyway
/// (ntk-train, whose empty axis keeps the base value, keeps that advice); with the axis
/// removed (`--set sweep.depths=`), to keep it, not to give model.depth, which the probe's
/// required axis refuses anyway.
#[test]
fn a_probe_sweeps_unfilled_axis_is_advised_what_helps() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "nod.toml",
        "[sweep]\ndepths = [1, 2]\nactivations = [\"relu\"]\nseeds = [1]\n\
         [data]\ndataset = \"synthetic\"\nn = 8\ninput_dim = 3\n[model]\nwidth = 8\n",
    );
    for (set, said, unsaid) in [
        (
            "sweep.depths=[]",
            &["model.depth", "give sweep.depths a non-empty list"][..],
            "or give model.depth",
        ),
        (
            "sweep.depths=",
            &["removes what sets model.depth", "keep sweep.depths"][..],
            "give model.depth a value",
        ),
    ] {
        let mut a = os(&["sweep", "--config", cfg.to_str().unwrap(), "--dry-run"]);
        a.extend(os(&["--set", set, "--out"]));
        a.push(d.join("o").into());
        let o = run(&a);
        assert_clean_error(set, &o, said);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains(unsaid), "{set}: {err}");
    }
}

/// Eighty-seventh hostile round, N9: a whole-set f32 kernel whose measured error does not
/// resolve lambda_min (a network of fewer parameters than inputs: singular in any precision)
/// is said singular with the least kappa the error allows, as an unresolved block's
/// `kappa_low`; that bound is below the bound's own ratio (lambda_max - t) / (lambda_min + t).
#[test]
fn eighty_seventh_review_an_unresolved_whole_kernel_gives_its_least_kappa() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "low.toml",
        "[data]\ndataset = \"synthetic\"\nn = 20\ninput_dim = 3\n\
         [model]\nwidth = 2\ndepth = 1\nactivation = \"relu\"\nseed = 1\n\
         [probe]\nprecision = \"f32\"\n",
    );
    let mut a = os(&["run", "--json", "--config", cfg.to_str().unwrap(), "--out"]);
    a.push(d.join("o").into());
    let o = run(&a);
    assert_ok("the run", &o);
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["singular"], true, "{s}");
    let note = s["note"].as_str().unwrap();
    assert!(note.contains("does not resolve lambda_min"), "{note}");
    let least: f64 = note
        .split("kappa at least ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let t = s["measured_error"].as_f64().unwrap();
    let (lmin, lmax) = (
        s["lambda_min"].as_f64().unwrap(),
        s["lambda_max"].as_f64().unwrap(),
    );
    assert!(
        least > 1.0 && least <= (lmax - t) / (lmin + t) * (1.0 + 1e-6),
        "{note}"
    );
}

/// Eighty-seventh hostile round, N6: `plot` and `collect` of a single run's output set say it
/// is no sweep (plot said "summary.csv: missing (run ntk-probe collect first)", whose
/// collect then found no points).
#[test]
fn eighty_seventh_review_a_single_runs_set_is_no_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "tiny.toml", TINY);
    let out = d.join("one");
    let mut a = os(&["run", "--config", cfg.to_str().unwrap(), "--out"]);
    a.push(out.clone().into());
    assert_ok("the run", &run(&a));
    for cmd in ["plot", "collect"] {
        let mut a = os(&[cmd]);
        a.push(out.clone().into());
        assert_clean_error(
            cmd,
            &run(&a),
            &["a single run's output set", "not a sweep's directory"],
        );
    }
}

/// Eighty-seventh hostile round, N7: where `probe.block_size` is at least n the blocks
/// protocol is one block of the whole set: a sweep says so before its points, and a single
/// run's table says "one block" (it said "mean over 1 blocks").
#[test]
fn eighty_seventh_review_one_block_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "sw.toml",
        &TINY_SWEEP.replace(
            "protocols = [\"whole\"]",
            "protocols = [\"whole\", \"blocks\"]",
        ),
    );
    let mut a = os(&[
        "sweep",
        "--config",
        cfg.to_str().unwrap(),
        "--dry-run",
        "--out",
    ]);
    a.push(d.join("s").into());
    let o = run(&a);
    assert_ok("the dry run", &o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "probe.block_size = 512 is at least n = 12: each blocks point there is one block"
        ),
        "{err}"
    );
    let one = write(d, "one.toml", &format!("{TINY}protocol = \"blocks\"\n"));
    let mut a = os(&["run", "--config", one.to_str().unwrap(), "--out"]);
    a.push(d.join("one").into());
    let o = run(&a);
    assert_ok("the run", &o);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("(one block: the whole set") && !table.contains("1 blocks"),
        "{table}"
    );
}

/// Eighty-eighth hostile round, D6: an f32 kernel whose λ_min lay just above the worst-case
/// bound `n eps λ_max` was reported as exact (no measured error, no interval), 5.5% off f64's
/// κ on a block, where one just below it got its measured error and an honest interval. A
/// kernel within a factor 10 of the bound is now measured too: its error recorded, and the
/// note's interval holds the f32 and the f64 κ. Here a near-linear leaky ReLU network's
/// whole kernel on 8 points, its slope chosen from an f64 run to put κ near 3e5 (the bound
/// resolves κ up to 1 / (8 eps_f32), about 1.05e6).
#[test]
fn eighty_eighth_review_an_f32_kernel_near_the_bound_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = |slope: f64, precision: &str| {
        format!(
            "[data]\ndataset = \"synthetic\"\nn = 8\ninput_dim = 5\nseed = 0\n[model]\n\
             width = 16\ndepth = 1\nactivation = \"leaky_relu\"\nactivation_param = {slope:?}\n\
             seed = 1\n[probe]\nprecision = \"{precision}\"\n"
        )
    };
    let json = |name: &str, text: &str| ntk_json(d, name, text);
    // λ_min grows as (1 - slope)^2 for a near-linear network: κ as its inverse.
    let k0 = json("probe", &text(0.99, "f64"))["kappa"].as_f64().unwrap();
    let slope = 1.0 - 0.01 * (k0 / 3e5).sqrt();
    let f32 = json("f32", &text(slope, "f32"));
    let f64 = json("f64", &text(slope, "f64"));
    let (lmin, lmax) = (
        f32["lambda_min"].as_f64().unwrap(),
        f32["lambda_max"].as_f64().unwrap(),
    );
    let bound = 8.0 * f64::from(f32::EPSILON) * lmax;
    assert!(
        bound < lmin && lmin < 10.0 * bound,
        "slope {slope}: lambda_min {lmin} against the bound {bound}"
    );
    assert_eq!(f32["singular"], false, "{f32}");
    assert!(
        f32["measured_error"].as_f64().is_some_and(|e| e > 0.0),
        "{f32}"
    );
    let note = f32["note"].as_str().unwrap();
    assert!(
        note.contains("lay within a factor 10 of lambda_min") && note.contains("resolves it"),
        "{note}"
    );
    let (low, high) = kappa_between(note);
    let (k32, k64) = (
        f32["kappa"].as_f64().unwrap(),
        f64["kappa"].as_f64().unwrap(),
    );
    assert!(low <= k32 && k32 <= high, "{low} {k32} {high}");
    assert!(
        low <= k64 && k64 <= high,
        "f64's {k64} outside [{low}, {high}]"
    );
    assert!(
        f64["measured_error"].is_null(),
        "f64 kernels are not measured"
    );
    // The extreme route measures nothing: its note gives the interval the bound allows.
    let extreme = json("extreme", &(text(slope, "f32") + "eigen = \"extreme\"\n"));
    let note = extreme["note"].as_str().unwrap();
    assert!(
        note.contains("within a factor 10 of the worst-case bound")
            && note.contains("by that bound"),
        "{note}"
    );
    let (low, high) = kappa_between(note);
    assert!(
        low <= k64 && k64 <= high,
        "f64's {k64} outside [{low}, {high}]"
    );
}

/// Eighty-eighth hostile round, N4: the extreme route's rank of a singular kernel is a lower
/// bound (the Ritz values above the tolerance), printed "rank 13 of 20" where 18 eigenvalues
/// were above it; it says "at least" now. The full route's rank is exact and says none.
#[test]
fn eighty_eighth_review_an_extreme_rank_is_said_at_least() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = "[data]\ndataset = \"synthetic\"\nn = 20\ninput_dim = 3\n\
                [model]\nwidth = 2\ndepth = 1\nactivation = \"relu\"\nseed = 1\n\
                [probe]\nprecision = \"f64\"\n";
    for (name, eigen, says) in [
        (
            "extreme",
            "eigen = \"extreme\"\n",
            "(singular: rank at least ",
        ),
        ("full", "", "(singular: rank "),
    ] {
        let cfg = write(d, &format!("{name}.toml"), &format!("{text}{eigen}"));
        let mut a = os(&["ntk", "--config", cfg.to_str().unwrap(), "--out"]);
        a.push(d.join(name).into());
        let o = run(&a);
        assert_ok(name, &o);
        let table = String::from_utf8_lossy(&o.stdout);
        assert!(table.contains(says), "{name}: {table}");
        assert_eq!(table.contains("at least"), name == "extreme", "{table}");
    }
}

/// Eighty-eighth hostile round, N6: an `--out` holding a newline was printed raw (`a` and
/// `b: new (...)` on two lines). A control character in `--out` is refused, the path
/// quoted, dry run and run alike, and nothing is made.
#[test]
fn eighty_eighth_review_a_control_character_in_out_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "p.toml",
        "[data]\ndataset = \"synthetic\"\nn = 8\ninput_dim = 3\n\
         [model]\nwidth = 8\ndepth = 1\nactivation = \"relu\"\n",
    );
    for name in ["a\nb", "a\tb", "a\u{1b}[2Jb"] {
        for extra in [&["--dry-run"][..], &[][..]] {
            let mut a = os(&["ntk", "--config", cfg.to_str().unwrap()]);
            a.extend(os(extra));
            a.extend(os(&["--out"]));
            a.push(d.join(name).into());
            let o = run(&a);
            assert_clean_error(
                name,
                &o,
                &["control character", "choose a name without one"],
            );
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!err.contains(name), "{name:?} printed raw: {err}");
        }
        assert!(!d.join(name).exists(), "{name:?}");
    }
}

/// Eighty-ninth hostile round, D6: with SIGPIPE's default restored, a tiled run whose standard
/// error went to a pipe whose reader had gone (`2>&1 >/dev/null | true`) died by SIGPIPE at its
/// first progress line, leaving its lock and temporary set and no results. Its lines are now
/// lost and the run finishes; its results are complete.
#[test]
fn eighty_ninth_review_a_closed_stderr_pipe_loses_lines_not_the_run() {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "tiled.toml",
        "[data]\ndataset = \"synthetic\"\nn = 40\ninput_dim = 5\n\
         [model]\nwidth = 16\ndepth = 2\nactivation = \"relu\"\n\
         [probe]\nprecision = \"f64\"\neigen = \"tiled\"\n",
    );
    let out = d.join("o");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ntk-probe"))
        .args([
            "ntk",
            "--config",
            cfg.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader is gone before the run writes its first line.
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(out.join("summary.json").is_file());
    assert_no_lock_or_temporary(d);
}

/// Eighty-ninth hostile round, D5: a screen `plot` or `collect` removed `<figure>.caption.txt`
/// beside every figure it drew, whatever wrote it: a column plot's, one edited since for a
/// paper, a user's own. A caption a column plot recorded, as written, is removed and said;
/// an edited one and a user's are said and left.
#[test]
fn eighty_ninth_review_a_users_caption_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "s.toml", TINY_SWEEP);
    let out = d.join("out");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    let plot = |extra: &[&str]| {
        let mut a = os(&["plot", out.to_str().unwrap()]);
        a.extend(os(extra));
        let o = run(&a);
        assert_ok("plot", &o);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    plot(&["--layout", "column"]);
    let captions: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".caption.txt"))
        .collect();
    assert!(!captions.is_empty(), "a column plot writes captions");
    // As written: removed by the screen plot, said.
    let said = plot(&[]);
    assert!(
        said.contains("caption.txt") && said.contains("removed"),
        "{said}"
    );
    assert!(captions.iter().all(|c| !c.exists()), "{said}");
    // Edited since, and a user's own: said and left, by plot and collect.
    plot(&["--layout", "column"]);
    let edited = &captions[0];
    let mut text = std::fs::read_to_string(edited).unwrap();
    text.push_str("My edit for the paper.\n");
    std::fs::write(edited, &text).unwrap();
    let said = plot(&[]);
    assert!(said.contains("left as they are"), "{said}");
    assert_eq!(std::fs::read_to_string(edited).unwrap(), text);
    std::fs::write(edited, "mine\n").unwrap();
    let o = run(&os(&["collect", out.to_str().unwrap()]));
    assert_ok("collect", &o);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("left as they are"), "{said}");
    assert_eq!(std::fs::read_to_string(edited).unwrap(), "mine\n");
}

/// Eighty-ninth hostile round, D3: the blocks protocol's headline κ (the blocks' mean) was
/// printed to 7 digits, `note` null, where a block near the worst-case bound had a measured
/// error and an interval in blocks.csv. The note now gives the mean's interval from the
/// blocks' own, holding f64's κ. Here the near-linear network of the whole-set case above as
/// one block of its 8 points.
#[test]
fn eighty_ninth_review_a_blocks_mean_near_the_bound_has_its_interval() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = |slope: f64, precision: &str| {
        format!(
            "[data]\ndataset = \"synthetic\"\nn = 8\ninput_dim = 5\nseed = 0\n[model]\n\
             width = 16\ndepth = 1\nactivation = \"leaky_relu\"\nactivation_param = {slope:?}\n\
             seed = 1\n[probe]\nprecision = \"{precision}\"\nprotocol = \"blocks\"\n\
             block_size = 8\n"
        )
    };
    let k0 = ntk_json(d, "probe", &text(0.99, "f64"))["kappa"]
        .as_f64()
        .unwrap();
    let slope = 1.0 - 0.01 * (k0 / 3e5).sqrt();
    let f32 = ntk_json(d, "f32", &text(slope, "f32"));
    let f64 = ntk_json(d, "f64", &text(slope, "f64"));
    let note = f32["note"].as_str().unwrap_or_default();
    assert!(note.contains("1 of 1 blocks measured against f64"), "{f32}");
    let i = note.find("lies between ").unwrap() + "lies between ".len();
    let mut words = note[i..].split_whitespace();
    let low: f64 = words.next().unwrap().parse().unwrap();
    let high: f64 = words.nth(1).unwrap().parse().unwrap();
    let k64 = f64["kappa"].as_f64().unwrap();
    assert!(
        low <= k64 && k64 <= high,
        "f64's {k64} outside [{low}, {high}]"
    );
    assert!(f64["note"].is_null() || !f64["note"].as_str().unwrap().contains("measured"));
    // The summary carries the interval as numbers, and a sweep's tables carry it (the sweep
    // half of D3: results.csv and summary.csv showed the mean as exact).
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b;
    let (kl, kh) = (f32["kappa_low"].as_f64(), f32["kappa_high"].as_f64());
    assert!(near(kl.unwrap(), low) && near(kh.unwrap(), high), "{f32}");
    assert!(
        f64["kappa_low"].is_null() && f64["kappa_high"].is_null(),
        "{f64}"
    );
    let sweep = "[sweep]\ndepths = [1]\nactivations = [\"leaky_relu\"]\nseeds = [1]\n\
                 protocols = [\"blocks\"]\nout = \"unused\"\ntheory = false\n"
        .to_string()
        + &text(slope, "f32").replace("seed = 1\n[probe]", "[probe]");
    let cfg = write(d, "sw.toml", &sweep);
    let out = d.join("sw");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    let column = |file: &str, name: &str| -> f64 {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let at = head.iter().position(|h| *h == name).expect(name);
        // Counted from the end: the data's description holds commas, in quotes.
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        row[row.len() - (head.len() - at)]
            .parse()
            .unwrap_or_else(|_| panic!("{name}: {text}"))
    };
    assert!(near(column("results.csv", "kappa_low"), low));
    assert!(near(column("results.csv", "kappa_high"), high));
    let (ml, mh) = (
        column("summary.csv", "kappa_mean_low"),
        column("summary.csv", "kappa_mean_high"),
    );
    assert!(ml <= k64 && k64 <= mh, "f64's {k64} outside [{ml}, {mh}]");
    // plot redraws them, and refuses an interval that does not hold the mean.
    assert_ok("plot", &run(&os(&["plot", out.to_str().unwrap()])));
    let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let edited = table.replacen(&format!(",{ml}"), ",1e300", 1);
    assert_ne!(edited, table);
    std::fs::write(out.join("summary.csv"), edited).unwrap();
    let o = run(&os(&["plot", out.to_str().unwrap()]));
    assert_clean_error("an interval beside the mean", &o, &["kappa_mean_low"]);
    // Round 90, D1: an interval edited but still holding the mean, or a NaN bound, is held to
    // the rows of results.csv; a row's own interval to its kappa.
    for edit in [format!(",{}", ml * 0.99), ",NaN".to_string()] {
        let edited = table.replacen(&format!(",{ml}"), &edit, 1);
        std::fs::write(out.join("summary.csv"), edited).unwrap();
        let o = run(&os(&["plot", out.to_str().unwrap()]));
        assert_clean_error("an edited interval", &o, &["kappa_mean_low"]);
    }
    // A row repeated is refused (hundred-and-forty-sixth hostile round, second review, N2:
    // drawn twice without a word).
    let row = table.lines().nth(1).unwrap();
    std::fs::write(out.join("summary.csv"), format!("{table}{row}\n")).unwrap();
    let o = run(&os(&["plot", out.to_str().unwrap()]));
    assert_clean_error("a repeated row", &o, &["rows 1 and 2", "twice"]);
    std::fs::write(out.join("summary.csv"), &table).unwrap();
    assert_ok("plot again", &run(&os(&["plot", out.to_str().unwrap()])));
    let results = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let low_text = format!("{:.10e}", column("results.csv", "kappa_low"));
    let edited = results.replacen(&low_text, "9.9e9", 1);
    assert_ne!(edited, results);
    std::fs::write(out.join("results.csv"), edited).unwrap();
    let o = run(&os(&["plot", out.to_str().unwrap()]));
    assert_clean_error(
        "a row's interval above its kappa",
        &o,
        &["kappa_low", "row 1"],
    );
    // A point's summary.json with its interval edited and its checksum removed is not
    // reported by collect (its interval was taken into both tables).
    let point = summaries_under(&out.join("runs")).remove(0);
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&point).unwrap()).unwrap();
    json["kappa_low"] = serde_json::json!(9.9e9);
    json.as_object_mut().unwrap().remove("checksum");
    std::fs::write(&point, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    let o = run(&os(&["collect", out.to_str().unwrap()]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("in a summary without a checksum") && err.contains("not reported"),
        "{err}"
    );
    if o.status.success() {
        let table = std::fs::read_to_string(out.join("summary.csv")).unwrap_or_default();
        assert!(!table.contains("9900000000"), "{table}");
    }
    // Round 91, N1: a summary with no interval nor checksum (as an older build wrote it)
    // whose note gives an interval is collected with a word: its kappa is taken as exact.
    json.as_object_mut().unwrap().remove("kappa_low");
    json.as_object_mut().unwrap().remove("kappa_high");
    std::fs::write(&point, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    let o = run(&os(&["collect", out.to_str().unwrap()]));
    assert_ok("collect of an older summary", &o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "warning: {}: records no interval of kappa",
            point.display()
        )) && err.contains("the tables take its kappa as exact"),
        "{err}"
    );
    // Ninety-second, D1: the advice works: the point's directory removed, the sweep makes
    // it again, with its interval, and collect says nothing more.
    let dir = point.parent().unwrap();
    assert!(
        err.contains(&format!("remove {} and run the sweep again", dir.display())),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
    let o = run(&sweep_args(&cfg, &out, &[]));
    assert_ok("the sweep again", &o);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("records no interval"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&point).unwrap()).unwrap();
    assert!(json["kappa_low"].as_f64().is_some(), "{json}");
}

/// The eighty-ninth hostile review's notes. N2: `plot A --out F` then `plot B --out F` (a
/// folder of figures alone) told F that A's blocks figure showed "points that are gone"; it
/// now says they are not of B's points, which the plot draws. N4: given blocks that are one
/// block of all rows printed `probe.block_size >= n`, a key refused beside them. N8: fig1's
/// printed table rounded θ to one decimal (1e-6 read 0.0).
#[test]
fn eighty_ninth_review_notes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let both = TINY_SWEEP.replace(
        "protocols = [\"whole\"]",
        "protocols = [\"whole\", \"blocks\"]",
    ) + "block_size = 4\n";
    let (a, b, figs) = (d.join("a"), d.join("b"), d.join("figs"));
    assert_ok("a", &run(&sweep_args(&write(d, "a.toml", &both), &a, &[])));
    assert_ok(
        "b",
        &run(&sweep_args(&write(d, "b.toml", TINY_SWEEP), &b, &[])),
    );
    let plot = |from: &Path| run(&os(&["plot", &path(from), "--out", &path(&figs)]));
    assert_ok("plot a", &plot(&a));
    let o = plot(&b);
    assert_ok("plot b", &o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("kappa_vs_depth_blocks.png")
            && err.contains(&format!(
                "no point of {} is of the blocks protocol",
                b.display()
            ))
            && err.contains(&format!("are not of {}'s points", b.display()))
            && !err.contains("gone"),
        "{err}"
    );
    // N5: a sweep of fewer depths than the points in its directory says that its tables
    // take the others in, dry run and run.
    let fewer = ["--set", "sweep.depths=[1]"];
    let bcfg = d.join("b.toml");
    let dry: Vec<&str> = fewer.iter().copied().chain(["--dry-run"]).collect();
    let o = run(&sweep_args(&bcfg, &b, &dry));
    assert_ok("the dry run of fewer depths", &o);
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains("beyond: ")
            && said.contains("1 result(s) found are of no point of this config"),
        "{said}"
    );
    let o = run(&sweep_args(&bcfg, &b, &fewer));
    assert_ok("fewer depths", &o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("1 result(s) found are of no point of this config") && err.contains("depth02"),
        "{err}"
    );
    // N4: one given block of all 12 rows.
    let blocks = write(d, "one.txt", "0 1 2 3 4 5 6 7 8 9 10 11\n");
    let cfg = write(d, "tiny.toml", TINY);
    let o = run(&os(&[
        "run",
        "--config",
        &path(&cfg),
        "--out",
        &path(&d.join("one")),
        "--set",
        "probe.protocol=\"blocks\"",
        "--set",
        &format!("probe.blocks={:?}", path(&blocks)),
    ]));
    assert_ok("one given block", &o);
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains("one block: the whole set, probe.blocks gives one block of all rows")
            && !said.contains("block_size"),
        "{said}"
    );
    // N8: θ as given.
    let o = run(&os(&[
        "fig1",
        "--out",
        &path(&d.join("f1")),
        "--depths",
        "1",
        "--widths",
        "16",
        "--seeds",
        "1",
        "--thetas",
        "0.000001,179.9999",
    ]));
    assert_ok("fig1", &o);
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains("0.000001") && said.contains("179.9999"),
        "{said}"
    );
}

/// Ninety-second hostile round, D5: collect passed over, without a word and with status 0,
/// every result under a directory it could not list (another user's point directory dropped
/// its seed from the mean), where the sweep refuses it. Now refused, naming the directory.
/// Root lists everything by its capabilities: as root the collect runs without them
/// (`setpriv`), the directory's mode 000 as for any user.
#[test]
fn ninety_second_review_a_directory_collect_cannot_list_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "sw.toml", TINY_SWEEP);
    let out = d.join("sw");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    let uid = Command::new("id").arg("-u").output().unwrap();
    let root = String::from_utf8_lossy(&uid.stdout).trim() == "0";
    // The command with `hidden` at mode 000, as this user (root without its capabilities).
    let hidden_run = |hidden: &Path, args: &[OsString]| -> Output {
        std::fs::set_permissions(hidden, std::fs::Permissions::from_mode(0o000)).unwrap();
        let o = if root {
            Command::new("setpriv")
                .args(["--bounding-set=-all", "--inh-caps=-all"])
                .arg(env!("CARGO_BIN_EXE_ntk-probe"))
                .args(args)
                .output()
                .expect("setpriv, to run without root's capabilities")
        } else {
            run(args)
        };
        std::fs::set_permissions(hidden, std::fs::Permissions::from_mode(0o755)).unwrap();
        o
    };
    let hidden = out.join("runs/relu/depth01");
    assert!(hidden.is_dir());
    let o = hidden_run(&hidden, &os(&["collect", out.to_str().unwrap()]));
    let culprit = format!("{}: cannot be listed or entered", hidden.display());
    assert_clean_error(
        "an unlistable directory",
        &o,
        &[&culprit, "left out of the tables"],
    );
    // Ninety-third hostile round, D1 and D2: the sweep's dry run and run refuse it too (an
    // empty one as well), before any point's state is read, with the remedy that works.
    for args in [
        sweep_args(&cfg, &out, &["--dry-run"]),
        sweep_args(&cfg, &out, &["--recompute"]),
    ] {
        let o = hidden_run(&hidden, &args);
        assert_clean_error("the sweep", &o, &[&culprit, "make it readable"]);
        assert!(!String::from_utf8_lossy(&o.stderr).contains("--recompute to"));
    }
    let junk = out.join("runs/junk");
    std::fs::create_dir(&junk).unwrap();
    let o = hidden_run(&junk, &sweep_args(&cfg, &out, &["--dry-run"]));
    assert_clean_error(
        "an empty one",
        &o,
        &[&format!("{}: cannot be listed or entered", junk.display())],
    );
    std::fs::remove_dir(&junk).unwrap();
    assert_ok("collect", &run(&os(&["collect", out.to_str().unwrap()])));
}

/// Ninety-fourth hostile round, N4: a collect whose tables are written but whose figures
/// fail (a full disk; here an immutable figure, which root cannot replace either) says the
/// tables are this collect's, the figures perhaps an earlier one's, and `ntk-probe plot` as
/// the remedy; `theory --theta-deg` and `--depth` refuse a value given twice (N5).
#[test]
fn ninety_fourth_review_figures_that_fail_after_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = write(d, "s.toml", TINY_SWEEP);
    let out = d.join("sweep");
    assert_ok("the sweep", &run(&sweep_args(&sweep, &out, &[])));
    let figure = out.join("kappa_vs_depth_whole.png");
    let chattr = |flag: &str| {
        Command::new("chattr")
            .arg(flag)
            .arg(&figure)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    assert!(chattr("+i"), "chattr +i is needed for this test");
    let o = run(&os(&["collect", out.to_str().unwrap()]));
    assert!(chattr("-i"));
    let plot = format!("`ntk-probe plot {}`", out.display());
    assert_clean_error(
        "figures after the tables",
        &o,
        &[
            "kappa_vs_depth_whole.png",
            "results.csv and summary.csv were written now",
            "may be an earlier collect's",
            &plot,
        ],
    );
    assert_ok("the remedy", &run(&os(&["plot", out.to_str().unwrap()])));
    for (flag, values) in [("--theta-deg", "30,30"), ("--depth", "1,2,1")] {
        let mut args = os(&["theory", "--theta-deg", "30", "--depth", "1"]);
        let at = args.iter().position(|a| a == flag).unwrap();
        args[at + 1] = values.into();
        assert_clean_error(
            "a value given twice",
            &run(&args),
            &[flag, "is given twice"],
        );
    }
}

/// Ninety-fifth hostile round, D4: a point whose file this user could not read was "stale"
/// with the remedy `--recompute`, which then replaced the other user's point. A file of
/// another user in a point the sweep would make (again) is refused before any work, dry run
/// and run alike, `--recompute` or not; a file this user may not read is to be made
/// readable, or moved. As root: the file given to user 65534; the unreadable one read
/// without root's capabilities (`setpriv`).
#[test]
fn ninety_fifth_review_another_users_point_is_never_made_again() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "sw.toml", TINY_SWEEP);
    let out = d.join("sw");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    let summary = summaries_under(&out.join("runs"))
        .into_iter()
        .min()
        .unwrap();
    let before = std::fs::read(&summary).unwrap();
    let uid = Command::new("id").arg("-u").output().unwrap();
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return; // giving a file to another user needs root
    }
    std::os::unix::fs::chown(&summary, Some(65534), None).unwrap();
    let other = ["--set", "data.seed=3"];
    for extra in [
        &[&other[..], &["--dry-run"]].concat()[..],
        &[&other[..], &["--recompute", "--dry-run"]].concat(),
        &[&other[..], &["--recompute"]].concat(),
    ] {
        let o = run(&sweep_args(&cfg, &out, extra));
        assert_clean_error(
            "another user's point",
            &o,
            &[
                &summary.display().to_string(),
                "a file of user 65534",
                "move the point out of runs/",
            ],
        );
        assert!(!String::from_utf8_lossy(&o.stderr).contains("pass --recompute"));
    }
    assert_eq!(std::fs::read(&summary).unwrap(), before, "the file is kept");
    std::os::unix::fs::chown(&summary, Some(0), None).unwrap();
    // A file this user may not read: made readable, or moved. One remedy for one state: a
    // file of its set this user may not read is said as the summary is (ninety-sixth
    // hostile round, N2: "pass --recompute").
    let eigen = summary.with_file_name("eigenvalues.npy");
    for (locked, said_of_it) in [
        (&summary, String::new()),
        (
            &eigen,
            format!("{}: this user may not read it; ", eigen.display()),
        ),
    ] {
        std::fs::set_permissions(locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        let o = Command::new("setpriv")
            .args(["--bounding-set=-all", "--inh-caps=-all"])
            .arg(env!("CARGO_BIN_EXE_ntk-probe"))
            .args(sweep_args(&cfg, &out, &["--dry-run"]))
            .output()
            .expect("setpriv, to run without root's capabilities");
        std::fs::set_permissions(locked, std::fs::Permissions::from_mode(0o644)).unwrap();
        let said =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        assert!(
            said.contains(&format!(
                "{said_of_it}make it readable to this user, or move the point out of runs/"
            )),
            "{said}"
        );
    }
    // Collect, without root's capabilities, of the sweep with `locked` at mode 000.
    let collect_locked = |locked: &Path| {
        std::fs::set_permissions(locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        let o = Command::new("setpriv")
            .args(["--bounding-set=-all", "--inh-caps=-all"])
            .arg(env!("CARGO_BIN_EXE_ntk-probe"))
            .args(["collect", out.to_str().unwrap()])
            .output()
            .expect("setpriv, to run without root's capabilities");
        std::fs::set_permissions(locked, std::fs::Permissions::from_mode(0o644)).unwrap();
        o
    };
    // Collect says the same state as the same: a set file this user may not read leaves the
    // set unchecked, not "not as its run wrote it" (ninety-eighth hostile round, D2).
    let o = collect_locked(&eigen);
    assert_clean_error(
        "collect of a set file this user may not read",
        &o,
        &[
            &format!("{}: this user may not read it", eigen.display()),
            "so the set cannot be checked against",
            "until the file is made readable to this user",
        ],
    );
    assert!(!String::from_utf8_lossy(&o.stderr).contains("not as its run wrote it"));
    // And a summary this user may not read gets the remedy (ninety-ninth hostile round, N2:
    // "cannot read: Permission denied (os error 13)" alone).
    let o = collect_locked(&summary);
    assert_clean_error(
        "collect of a summary this user may not read",
        &o,
        &[
            &summary.display().to_string(),
            "cannot read",
            "make it readable to this user",
        ],
    );
    assert_ok("collect", &run(&os(&["collect", out.to_str().unwrap()])));
}

/// A long value or key of the user's is quoted back by its start and length, in a
/// `--set` and in a config file: a 100,000-character activation made a 200,169-byte error,
/// quoted twice (ninety-seventh hostile round, N5). The names expected stay whole.
#[test]
fn a_long_value_or_key_is_quoted_by_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "c.toml", TINY);
    let long = "r".repeat(100_000);
    let set = format!("model.activation=\"{long}\"");
    let o = run(&ntk_args(
        &cfg,
        &d.join("o1"),
        &["--dry-run", "--set", &set],
    ));
    assert_clean_error(
        "a long --set value",
        &o,
        &["unknown variant", "`erf`, `leaky_relu`"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.len() < 2000, "{} bytes: {}", err.len(), &err[..300]);
    assert!(
        err.contains("(100019 bytes)") && err.contains("(100000 bytes)"),
        "{err}"
    );
    let file = write(
        d,
        "long.toml",
        &TINY.replace("activation = \"relu\"", &format!("activation = \"{long}\"")),
    );
    let o = run(&ntk_args(&file, &d.join("o2"), &["--dry-run"]));
    assert_clean_error(
        "a long value in a file",
        &o,
        &["long.toml", "unknown variant"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.len() < 2000, "{} bytes: {}", err.len(), &err[..300]);
    let key = format!("model.{}=1", "k".repeat(100_000));
    let o = run(&ntk_args(
        &cfg,
        &d.join("o3"),
        &["--dry-run", "--set", &key],
    ));
    assert_clean_error("a long --set key", &o, &["model.kkk"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.len() < 2000, "{} bytes: {}", err.len(), &err[..300]);
}

/// Ninety-eighth hostile round, D5: a file of the user's at a name a figure command writes
/// (a `gmap.csv` of other text, a `.png` that is no PNG, an `.svg` without `<svg`) is refused
/// by name before any work, and kept; the command's own files of an earlier call are
/// replaced.
#[test]
fn a_figure_command_never_replaces_a_users_file_of_its_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (cmd, name) in [
        (&["gmap", "--depths", "1"][..], "gmap.csv"),
        (
            &["transfer", "--activations", "relu", "--points", "3"][..],
            "transfer_norm.png",
        ),
        (
            &["activations", "--activations", "relu"][..],
            "activations.svg",
        ),
    ] {
        let out = d.join(cmd[0]);
        std::fs::create_dir(&out).unwrap();
        let mine = out.join(name);
        std::fs::write(&mine, "my own\n").unwrap();
        let mut args = cmd.to_vec();
        args.extend(["--out", out.to_str().unwrap()]);
        assert_clean_error(
            cmd[0],
            &run(&os(&args)),
            &[
                &mine.display().to_string(),
                "so not a file this command wrote",
            ],
        );
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my own\n");
        std::fs::remove_file(&mine).unwrap();
        assert_ok(cmd[0], &run(&os(&args)));
        assert_ok("the same again", &run(&os(&args)));
    }
}

/// Ninety-eighth hostile round, D6 and N4: `collect` and `plot` of a sweep's directory this
/// user may not read say so, not "no runs/, summary.csv missing" (both are there); a path
/// that does not exist is "no such directory", without an os error. The unreadable directory
/// read without root's capabilities.
#[test]
fn collect_of_a_directory_this_user_may_not_read_says_so() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "sw.toml", TINY_SWEEP);
    let out = d.join("sw");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o000)).unwrap();
    let said: Vec<Output> = ["collect", "plot"]
        .iter()
        .map(|c| {
            Command::new("setpriv")
                .args(["--bounding-set=-all", "--inh-caps=-all"])
                .arg(env!("CARGO_BIN_EXE_ntk-probe"))
                .args([c, out.to_str().unwrap()])
                .output()
                .expect("setpriv, to run without root's capabilities")
        })
        .collect();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o755)).unwrap();
    for o in &said {
        assert_clean_error(
            "an unreadable sweep directory",
            o,
            &[&format!(
                "{}: this user may not read the directory",
                out.display()
            )],
        );
        assert!(!String::from_utf8_lossy(&o.stderr).contains("summary.csv missing"));
    }
    let missing = d.join("nowhere");
    let o = run(&os(&["collect", missing.to_str().unwrap()]));
    assert_clean_error("a missing directory", &o, &["nowhere: no such directory"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("os error"));
    assert_ok("collect", &run(&os(&["collect", out.to_str().unwrap()])));
    // `plot --out` judges a figure there by its format's first bytes too (ninety-eighth
    // hostile round, R31: a text file named as a figure was replaced).
    let figs = d.join("figs");
    std::fs::create_dir(&figs).unwrap();
    let mine = figs.join("kappa_vs_depth_whole.png");
    std::fs::write(&mine, "my own picture\n").unwrap();
    let mut v = os(&["plot", out.to_str().unwrap(), "--out"]);
    v.push(figs.clone().into());
    assert_clean_error("plot --out", &run(&v), &["kappa_vs_depth_whole.png"]);
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my own picture\n");
    std::fs::remove_file(&mine).unwrap();
    assert_ok("plot --out", &run(&v));
    assert_ok("plot --out again", &run(&v));
}

/// Ninety-ninth hostile round, D2: a user's file at one of a set's names that its summary
/// does not record (`outputs.npy` or `weights.safetensors` beside a set made without
/// `--save-weights`, `ntk.npy` beside a tiled set or in a sweep's point) is not the tools':
/// refused by name in the dry run and the run, with `--recompute` too (which removed or
/// overwrote it), and never touched.
#[test]
fn a_users_file_at_a_sets_name_is_refused_even_with_recompute() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "p.toml", TINY);
    let out = d.join("o");
    assert_ok("the set", &run(&ntk_args(&cfg, &out, &[])));
    let refused = |name: &str, extra: &[&str], file: &Path, text: &str| {
        let o = run(&ntk_args(&cfg, &out, extra));
        assert_clean_error(
            name,
            &o,
            &[
                &file.display().to_string(),
                "does not record (its run did not write it)",
                "not the run's: move it away",
            ],
        );
        assert!(!String::from_utf8_lossy(&o.stderr).contains("--recompute"));
        assert_eq!(std::fs::read_to_string(file).unwrap(), text, "{name}");
    };
    for (name, text) in [
        ("outputs.npy", "my own outputs\n"),
        ("weights.safetensors", "my weights\n"),
    ] {
        let file = write(&out, name, text);
        for extra in [
            &[][..],
            &["--dry-run"],
            &["--recompute", "--dry-run"],
            &["--recompute"],
            &["--save-weights", "--recompute"],
            &["--resume"],
        ] {
            refused(&format!("{name} {extra:?}"), extra, &file, text);
        }
        std::fs::remove_file(&file).unwrap();
    }
    assert_ok("kept as it is", &run(&ntk_args(&cfg, &out, &["--resume"])));

    // A tiled set writes no ntk.npy.
    let tiled = d.join("t");
    let args = |extra: &[&str]| {
        let mut v = vec!["--set", "probe.eigen=tiled"];
        v.extend(extra);
        ntk_args(&cfg, &tiled, &v)
    };
    assert_ok("the tiled set", &run(&args(&[])));
    let mine = write(&tiled, "ntk.npy", "my kernel\n");
    for extra in [&["--recompute"][..], &["--recompute", "--dry-run"]] {
        let o = run(&args(extra));
        assert_clean_error("tiled", &o, &["ntk.npy", "not the run's: move it away"]);
    }
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my kernel\n");

    // A sweep's point: refused before any work, dry run and run, with --recompute.
    let sweep_cfg = write(d, "s.toml", TINY_SWEEP);
    let s = d.join("s");
    assert_ok("the sweep", &run(&sweep_args(&sweep_cfg, &s, &[])));
    let point = summaries_under(&s)
        .into_iter()
        .find(|p| {
            serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(p).unwrap()).unwrap()
                ["files"]
                .get("ntk.npy")
                .is_none()
        })
        .expect("a point that wrote no ntk.npy");
    let mine = write(point.parent().unwrap(), "ntk.npy", "my kernel\n");
    for extra in [&["--recompute"][..], &["--recompute", "--dry-run"], &[]] {
        let o = run(&sweep_args(&sweep_cfg, &s, extra));
        assert_clean_error(
            &format!("sweep {extra:?}"),
            &o,
            &["ntk.npy", "does not record", "not the run's: move it away"],
        );
    }
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my kernel\n");
}

/// Ninety-ninth hostile round, D1: no control character of the user's reaches the terminal
/// raw: a `--set` key holding ESC (quoted twice in its error), a TOML escape decoded into a
/// value or a key serde names back, and a `--config` path holding ESC are each written
/// escaped (`\u{1b}`), in every error.
#[test]
fn control_characters_of_the_users_are_never_printed_raw() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "p.toml", TINY);
    let out = d.join("o");
    let no_raw = |name: &str, o: &Output| {
        assert_eq!(o.status.code(), Some(2), "{name}");
        assert!(
            !o.stderr
                .iter()
                .any(|&b| b < 0x20 && b != b'\n' || b == 0x7f),
            "{name}: {:?}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("\\u{1b}")
                || String::from_utf8_lossy(&o.stderr).contains("\\u{7f}"),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    for set in [
        "mo\x1b[31mdel.width=8",
        "model.wi\x7fdth=8",
        "model.activation=\"re\\u001b[31mlu\"",
    ] {
        no_raw(
            set,
            &run(&ntk_args(&cfg, &out, &["--dry-run", "--set", set])),
        );
    }
    let value = write(
        d,
        "v.toml",
        &TINY.replace("activation = \"relu\"", "activation = \"re\\u001b[31mlu\""),
    );
    no_raw(
        "a decoded value",
        &run(&ntk_args(&value, &out, &["--dry-run"])),
    );
    let key = write(
        d,
        "k.toml",
        &TINY.replace("width = 8", "\"wi\\u001b[31mdth\" = 8"),
    );
    no_raw("a decoded key", &run(&ntk_args(&key, &out, &["--dry-run"])));
    let path = d.join("no\x1b[31mne.toml");
    no_raw(
        "a --config path",
        &run(&ntk_args(&path, &out, &["--dry-run"])),
    );
    assert!(!out.exists());
    // Nor in the lines that are not errors: the run's banner names a data file whose name a
    // TOML escape gave an ESC (hundredth hostile round, N2).
    let x = d.join("x\x1b[31m.npy");
    ntk_files::npy::write_f64(&x, &[0.5, -1.0, 2.0, 1.0, 0.25, -0.5], &[3, 2]).unwrap();
    let file = write(
        d,
        "f.toml",
        "[data]\ndataset = \"file\"\nx = \"x\\u001b[31m.npy\"\n[model]\nwidth = 8\n\
         depth = 1\nactivation = \"relu\"\n",
    );
    let o = probe()
        .args(ntk_args(&file, &out, &[]))
        .current_dir(d)
        .output()
        .unwrap();
    assert_ok("a data file named with ESC", &o);
    let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
    let said = String::from_utf8_lossy(&all);
    assert!(
        !all.contains(&0x1b) && said.contains("x\\u{1b}[31m.npy"),
        "{said}"
    );
    std::fs::remove_dir_all(&out).unwrap();
    // Nor an ONNX file's name in `onnx`'s dry-run line (hundred-and-first hostile round,
    // D1: only the run's banner was escaped).
    let model =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/onnx_mlp.onnx");
    std::fs::copy(model, d.join("m\x1b[31m.onnx")).unwrap();
    let onnx = write(
        d,
        "on.toml",
        "[onnx]\nfile = \"m\\u001b[31m.onnx\"\n[data]\ndataset = \"synthetic\"\nn = 6\n",
    );
    for flags in [&["--dry-run"][..], &[]] {
        let mut v = os(&["onnx", "--config"]);
        v.push(onnx.clone().into());
        v.push("--out".into());
        v.push(out.clone().into());
        v.extend(os(flags));
        let o = probe().args(v).current_dir(d).output().unwrap();
        assert_ok("an ONNX file named with ESC", &o);
        let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
        let said = String::from_utf8_lossy(&all);
        assert!(
            !all.contains(&0x1b) && said.contains("m\\u{1b}[31m.onnx"),
            "{said}"
        );
    }
    std::fs::remove_dir_all(&out).unwrap();
    // A value that is not UTF-8 is refused naming its flag (N7: clap's words named none).
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"o\xff");
    let mut v = ntk_args(&cfg, Path::new(bad), &["--dry-run"]);
    let o = run(&v);
    assert_clean_error(
        "a --out not UTF-8",
        &o,
        &["--out o\u{fffd}: not UTF-8 text"],
    );
    v = ntk_args(&cfg, &out, &["--dry-run", "--set"]);
    v.push(std::ffi::OsStr::from_bytes(b"model.width=\xff").into());
    let o = run(&v);
    assert_clean_error(
        "a --set not UTF-8",
        &o,
        &["--set model.width=\u{fffd}: not UTF-8"],
    );
}

/// Ninety-eighth hostile round, N6: a single run's file this user may not read gets the
/// remedy of a set (a new `--out`), not a sweep point's ("move the point out of runs/").
#[test]
fn a_single_runs_unreadable_file_gets_the_remedy_of_a_set() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "p.toml", TINY);
    let out = d.join("o");
    assert_ok("the set", &run(&ntk_args(&cfg, &out, &[])));
    let eigen = out.join("eigenvalues.npy");
    std::fs::set_permissions(&eigen, std::fs::Permissions::from_mode(0o000)).unwrap();
    let o = Command::new("setpriv")
        .args(["--bounding-set=-all", "--inh-caps=-all"])
        .arg(env!("CARGO_BIN_EXE_ntk-probe"))
        .args(ntk_args(&cfg, &out, &["--resume", "--dry-run"]))
        .output()
        .expect("setpriv, to run without root's capabilities");
    std::fs::set_permissions(&eigen, std::fs::Permissions::from_mode(0o644)).unwrap();
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains(
            "this user may not read it; make it readable to this user, or write to a new --out"
        ),
        "{said}"
    );
    assert!(!said.contains("runs/"), "{said}");
}

/// The hundredth hostile round, D3: a bias-free ReLU^2 network is homogeneous in its input
/// (`K(s x) = s^8 K(x)` at depth 2), so its kernel at inputs of norm 1e-60 is about 1e-480:
/// exactly 0 in f64. Scaling each layer's weights into `[1, 2)` left the input's scale, so
/// the 0 was taken for the network's own and reported "singular: rank 0", rc 0, dry run and
/// run, on every method. Now the first layer is scaled by the input's power of two as well,
/// and the 0 is refused as the underflow it is; the theory's 0 (no dead unit at infinite
/// width) likewise. At norm 1e-20 (a kernel of about 1e-160) the run answers as before.
#[test]
fn a_kernel_that_underflows_to_zero_is_refused_not_called_singular() {
    let d = tempfile::tempdir().unwrap();
    let rows: Vec<f64> = (0..24)
        .map(|k| (((k * 7919) % 101) as f64 / 101.0) - 0.45)
        .collect();
    for scale in [1e-60, 1e-20] {
        let scaled: Vec<f64> = rows.iter().map(|v| v * scale).collect();
        let x = d.path().join(format!("x{scale:e}.npy"));
        ntk_files::npy::write_f64(&x, &scaled, &[6, 4]).unwrap();
        for method in ["auto", "autodiff", "theory"] {
            let cfg = write(
                d.path(),
                "rs.toml",
                &format!(
                    "[data]\ndataset = \"file\"\nx = \"{}\"\n[model]\nwidth = 16\ndepth = 2\n\
                     activation = \"relu_squared\"\n[probe]\nprecision = \"f64\"\n\
                     method = \"{method}\"\n",
                    x.display()
                ),
            );
            let out = d.path().join(format!("o{scale:e}{method}"));
            for dry in [true, false] {
                let flags: &[&str] = if dry { &["--dry-run"] } else { &[] };
                let o = run(&ntk_args(&cfg, &out, flags));
                let name = format!("{scale:e} {method} dry {dry}");
                if scale < 1e-50 {
                    assert_clean_error(&name, &o, &["underflow", "K(x, x) = 0.000e0"]);
                    assert!(!out.exists(), "{name}");
                } else {
                    assert_ok(&name, &o);
                    let said = String::from_utf8_lossy(&o.stdout);
                    assert!(!said.contains("rank 0"), "{name}: {said}");
                }
            }
        }
    }
}

/// The hundredth hostile round, D4: `theory --theta-deg 1e-400` answered the angle 0 (and
/// `fig1 --thetas 1e-400` measured it), where columns.md refuses every angle between 0 and
/// 1e-300 degrees; `transfer --q-min 1e-400` was quoted back as 0. Every number flag is now
/// read as `--lr` is: refused in the words of the value typed. A negative number in exponent
/// form (`-1e-3`, which clap does not take for a number) is read as a value, then refused by
/// the flag's own range check (N6).
#[test]
fn number_flags_refuse_what_reads_as_zero_in_the_words_typed() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o");
    let out = out.to_str().unwrap();
    for (args, said) in [
        (
            vec!["theory", "--theta-deg", "1e-400", "--depth", "2"],
            "1e-400 is a nonzero number that reads as 0",
        ),
        (
            vec!["theory", "--theta-deg", "5,1e-400", "--depth", "2"],
            "1e-400 is a nonzero number that reads as 0",
        ),
        (
            vec!["fig1", "--out", out, "--thetas", "5,1e-400"],
            "1e-400 is a nonzero number that reads as 0",
        ),
        (
            vec!["transfer", "--out", out, "--q-min", "1e-400"],
            "1e-400 is a nonzero number that reads as 0",
        ),
        (
            vec!["activations", "--out", out, "--x-max", "1e400"],
            "1e400 is beyond f64's range",
        ),
        (
            vec!["theory", "--theta-deg", "-1e-3", "--depth", "2"],
            "must be in [0, 180]",
        ),
        (
            vec![
                "activations",
                "--out",
                out,
                "--x-min",
                "-1e-3",
                "--x-max",
                "-1e-2",
            ],
            "x-min",
        ),
    ] {
        let o = run(&os(&args));
        assert_clean_error(&args.join(" "), &o, &[said]);
        assert!(!d.path().join("o").exists(), "{args:?}");
    }
}

/// The ninety-eighth hostile round, N5: an activation given as a TOML table was refused in
/// serde's words for an externally tagged variant ("unknown variant `name`", "wanted exactly
/// 1 element", "expected empty table"), none of which says that a name belongs there. Each is
/// said as `3` is: a name in quotes expected, the table quoted back. In the file and in a
/// `--set` alike.
#[test]
fn an_activation_given_as_a_table_is_asked_for_as_a_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "c.toml", TINY);
    for table in [
        "{name=\"erf\"}",
        "{name=\"leaky_relu\",alpha=0.2}",
        "{}",
        "{leaky_relu={alpha=0.2}}",
    ] {
        let set = format!("model.activation={table}");
        let o = run(&ntk_args(&cfg, &d.join("o"), &["--dry-run", "--set", &set]));
        assert_clean_error(&set, &o, &["expected a name in quotes", "found the table"]);
        let file = write(
            d,
            "t.toml",
            &TINY.replace("activation = \"relu\"", &format!("activation = {table}")),
        );
        let o = run(&ntk_args(&file, &d.join("o"), &["--dry-run"]));
        assert_clean_error(
            table,
            &o,
            &[
                "line 10: activation = {",
                "expected a name in quotes",
                "found a table",
            ],
        );
    }
}

/// The hundred-and-first hostile round, D2: `theory` for an odd activation near 180 degrees
/// printed 180.000000 at 179.999999 (mpmath: 179.9999985), the distance from 180 lost in a
/// correlation within an ulp of -1, where the same distance from 0 is refused. Beyond 90
/// degrees phi is now 180 minus phi at the supplement: answered where its six decimals hold
/// (179.99999 gives 179.999985, mpmath 179.999985003747), refused by name where they do not,
/// and exactly 180 at 180.
#[test]
fn an_odd_activation_near_180_degrees_keeps_its_decimals_or_is_refused() {
    let theory = |theta: &str| {
        run(&os(&[
            "theory",
            "--activation",
            "erf",
            "--theta-deg",
            theta,
            "--depth",
            "2",
        ]))
    };
    let o = theory("179.999999");
    assert_clean_error("179.999999", &o, &["too near 180 degrees", "erf is odd"]);
    // The hundred-and-fifteenth round, N2: the error with two digits ("known to about 1e-7
    // degrees, more than the 1e-7 ..." read as equal).
    let err = String::from_utf8_lossy(&o.stderr);
    if let Some((_, rest)) = err.split_once("known to about ") {
        let error = rest.split(' ').next().unwrap_or("");
        assert!(error.contains('.'), "{err}");
    }
    for (theta, phi) in [
        // mpmath 179.9999250187 (the same depth's slope from 179.999985003747 at 179.99999,
        // which the hundred-and-third round's bound refuses now: its error about 2e-7).
        ("179.99995", "179.999925"),
        ("179.999", "179.998500"),
        ("150", "139.166063"),
        ("180", "180.000000"),
    ] {
        let o = theory(theta);
        assert_ok(theta, &o);
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), phi, "{theta}");
    }
}

/// The hundred-and-second hostile round, D1: tanh at 179.999999 degrees (depths 1 to 8) and
/// 179.999998 (depths 4, 8) printed 180.000000, where mpmath gives 179.9999988 at depth 1:
/// the quadrature put the supplement's correlation past 1, and the error bound formed from
/// it was NaN, which passed the check. Refused by name now, like erf's; its answered
/// neighbours keep their digits.
#[test]
fn tanh_just_short_of_180_degrees_is_refused_not_rounded_to_180() {
    let theory = |theta: &str, depth: &str| {
        run(&os(&[
            "theory",
            "--activation",
            "tanh",
            "--theta-deg",
            theta,
            "--depth",
            depth,
        ]))
    };
    // And the hundred-and-third round's D1: answers off in the sixth decimal (depth 4 at
    // 179.99999 gave 179.999982 for mpmath's 179.9999814629; depths 2-5 at 179.999991 each
    // one too high) are refused now, their error bound above 1e-7 degrees.
    for depth in ["1", "2", "4", "5", "8"] {
        for theta in ["179.999999", "179.999998", "179.99999", "179.999991"] {
            let o = theory(theta, depth);
            if o.status.success() {
                let phi = String::from_utf8_lossy(&o.stdout).trim().to_string();
                assert_ne!(phi, "180.000000", "tanh depth {depth} at {theta}");
            } else {
                assert_clean_error(theta, &o, &["too near 180 degrees", "tanh is odd"]);
            }
        }
    }
    // mpmath (the small-angle slope 1.19634811174 at depth 1, 2.96945761252 at depth 8):
    // 179.999880365 and 179.997030542.
    for (theta, depth, phi) in [
        ("179.9999", "1", "179.999880"),
        ("179.999", "8", "179.997031"),
    ] {
        let o = theory(theta, depth);
        assert_ok(theta, &o);
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            phi,
            "{theta} {depth}"
        );
    }
}

/// The hundred-and-second hostile round, D3: a sweep's lines that print a point's failure
/// reason (the dry run's `fails:` line, the run's `failed:` and `warning: ...: failed:`
/// lines, `collect`'s warning) wrote the data file's control characters raw, where the
/// final `error:` line escapes them.
#[test]
fn a_sweep_s_failure_reasons_are_printed_with_control_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Bias-free ReLU^2 at inputs of norm about 1e-60: a kernel of about 1e-480, refused as
    // an underflow.
    let x: Vec<f64> = (0..24)
        .map(|k| 1e-60 * ((((k * 7919) % 101) as f64 / 101.0) - 0.45))
        .collect();
    ntk_files::npy::write_f64(&d.join("x\x1b[31m\t\n.npy"), &x, &[6, 4]).unwrap();
    let cfg = write(
        d,
        "s.toml",
        "[data]\ndataset = \"file\"\nx = \"x\\u001b[31m\\t\\n.npy\"\n[model]\nwidth = 8\n\
         activation = \"relu_squared\"\nbias = false\n[probe]\nprecision = \"f64\"\n\
         [sweep]\ndepths = [2]\nactivations = [\"relu_squared\"]\nseeds = [1]\n\
         protocols = [\"whole\"]\ntheory = false\n",
    );
    let out = d.join("o");
    let sweep = |flags: &[&str]| {
        let mut a = vec![
            "sweep".to_string(),
            "--config".into(),
            cfg.display().to_string(),
            "--out".into(),
            out.display().to_string(),
        ];
        a.extend(flags.iter().map(|s| s.to_string()));
        probe().args(a).current_dir(d).output().unwrap()
    };
    let clean = |what: &str, o: &Output, words: &[&str]| {
        let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
        let said = String::from_utf8_lossy(&all);
        for w in words {
            assert!(said.contains(w), "{what}: {w}: {said}");
        }
        assert!(
            !all.contains(&0x1b)
                && !all.contains(&b'\t')
                && !said.contains("\n.npy")
                && said.contains("x\\u{1b}[31m\\t\\n.npy"),
            "{what}: {said:?}"
        );
    };
    // The tool's own weights: the inputs are what to rescale.
    let words = [
        "fails: point 0",
        "so the 0 is an underflow; rescale the inputs",
    ];
    clean("the dry run", &sweep(&["--dry-run"]), &words);
    clean("the run", &sweep(&[]), &["failed: "]);
    let o = probe()
        .args(["collect", &out.display().to_string()])
        .current_dir(d)
        .output()
        .unwrap();
    clean("collect", &o, &["failed: "]);
}

/// The hundred-and-second hostile round, N4: `theory` with a list of angles stopped at its
/// first refused value, so a list had to be given one value at a time to see which are
/// answered. Every refused value is named now, with how many the list had.
#[test]
fn a_theory_list_names_every_refused_value() {
    let o = run(&os(&[
        "theory",
        "--activation",
        "tanh",
        "--depth",
        "1,8",
        "--theta-deg",
        "179.999,179.99999,179.999999",
    ]));
    assert_clean_error(
        "a list",
        &o,
        &[
            "4 of the 6 values refused (179.99999 at depth 1, 179.999999 at depth 1, \
             179.99999 at depth 8, 179.999999 at depth 8)",
            "the other 2 answered but not printed",
            "the first refusal: --theta-deg = 179.99999: too near 180 degrees",
        ],
    );
    assert!(o.stdout.is_empty());
}

/// The hundred-and-third hostile round, D2: `probe.pair`'s gradient angle under
/// `probe.method = "theory"` was 180.0 for a pair 179.9999999 degrees apart, 0.0 for 1e-7
/// and wrong in its second digit at 1e-5, where `ntk-probe theory` refuses those angles.
/// Written null with a note naming the reason now, by the same bound as `theory`'s; an
/// angle it resolves (179.99 degrees: 180 minus mpmath's 1.8537112152e-2 at depth 4) is
/// written as before.
#[test]
fn a_pair_angle_the_kernel_cannot_resolve_is_null_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "th.toml",
        "[data]\ndataset = \"file\"\nx = \"x.npy\"\n[model]\nwidth = 16\ndepth = 4\n\
         activation = \"tanh\"\nbias = false\n[probe]\nprecision = \"f64\"\n\
         method = \"theory\"\npair = [0, 1]\n",
    );
    for (theta, expected) in [
        (179.9999999_f64, None),
        (1e-7, None),
        (1e-5, None),
        // The hundred-and-fourth round's D1: refused by `theory` (fewer than six significant
        // digits), so null here too, where 1.196228e-4 was written for mpmath's 1.196348e-4.
        (1e-4, None),
        (179.99, Some(180.0 - 1.8537112152e-2)),
        // mpmath's 2-D quadrature (the hundred-and-third round's independent numbers).
        (1.0, Some(1.8532715668077)),
        // The hundred-and-fifth round's D2: `theory` refuses 179.9999 at depth 4 (its bound
        // about 1e-7 degrees), so the run writes null, not 179.99981464851393.
        (179.9999, None),
    ] {
        let r = theta.to_radians();
        ntk_files::npy::write_f64(&d.join("x.npy"), &[1.0, 0.0, r.cos(), r.sin()], &[2, 2])
            .unwrap();
        let out = d.join("o");
        let o = probe()
            .args(ntk_args(&cfg, &out, &[]))
            .args(["--recompute"])
            .current_dir(d)
            .output()
            .unwrap();
        assert_ok(&format!("{theta}"), &o);
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        let angle = s["pair_grad_angle_deg"].as_f64();
        match expected {
            Some(phi) => assert!((angle.unwrap() - phi).abs() < 1e-7, "{theta}: {s}"),
            None => {
                assert_eq!(angle, None, "{theta}: {s}");
                assert!(
                    s["note"].to_string().contains("the gradient angle is null"),
                    "{s}"
                );
            }
        }
    }
    // The hundred-and-fifth round's D1: ReLU's angle is exact at every angle (`theory`
    // answers 1e-4 degrees: 0.04270587067362872 by mpmath at depth 1), so it is written.
    let r = 1e-4_f64.to_radians();
    ntk_files::npy::write_f64(&d.join("x.npy"), &[1.0, 0.0, r.cos(), r.sin()], &[2, 2]).unwrap();
    let out = d.join("relu");
    let o = probe()
        .args(ntk_args(
            &cfg,
            &out,
            &[
                "--set",
                "model.activation=\"relu\"",
                "--set",
                "model.depth=1",
            ],
        ))
        .current_dir(d)
        .output()
        .unwrap();
    assert_ok("relu", &o);
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let angle = s["pair_grad_angle_deg"].as_f64().unwrap();
    assert!((angle - 0.04270587067362872).abs() < 1e-9, "{s}");
}

/// The hundred-and-fourth hostile round, D3: a newline in a path was printed raw (the line
/// broken at the path) where the ONNX model's input shape or its bytes were refused, where
/// `probe.weights` could not be read or was not a safetensors file, and where `probe.blocks`
/// was refused; ESC was escaped on those lines. Every error names such a path as `\n` now.
#[test]
fn a_newline_in_a_path_never_breaks_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/onnx_mlp.onnx");
    std::fs::copy(&model, d.join("m\n.onnx")).unwrap();
    std::fs::write(d.join("g\n.onnx"), b"not a model").unwrap();
    std::fs::write(d.join("w\n.safetensors"), b"not safetensors").unwrap();
    std::fs::write(d.join("b\n.csv"), b"x,y\n").unwrap();
    let no_break = |what: &str, o: &Output, name: &str| {
        let said = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {said}");
        assert!(
            said.contains(&format!("{name}\\n.")) && !said.contains(&format!("{name}\n.")),
            "{what}: {said:?}"
        );
    };
    let cmd = |args: &[&str]| probe().args(args).current_dir(d).output().unwrap();
    for (file, name) in [("m\\n.onnx", "m"), ("g\\n.onnx", "g")] {
        let cfg = write(
            d,
            "on.toml",
            &format!(
                "[onnx]\nfile = \"{file}\"\n[data]\ndataset = \"synthetic\"\nn = 4\n\
                 input_dim = 7\n"
            ),
        );
        let o = cmd(&["onnx", "--config", cfg.to_str().unwrap(), "--out", "on"]);
        no_break(file, &o, name);
    }
    let mlp = "[data]\ndataset = \"synthetic\"\nn = 6\ninput_dim = 3\n[model]\nwidth = 8\n\
               depth = 1\nactivation = \"relu\"\n[probe]\n";
    for (key, file, name) in [
        ("weights", "w\\n.safetensors", "w"),
        ("weights", "missing\\n.safetensors", "missing"),
        ("blocks", "b\\n.csv", "b"),
    ] {
        let cfg = write(d, "p.toml", &format!("{mlp}{key} = \"{file}\"\n"));
        for flags in [&["--dry-run"][..], &[]] {
            let mut a = vec!["run", "--config", cfg.to_str().unwrap(), "--out", "po"];
            a.extend(flags);
            no_break(&format!("probe.{key} {file} {flags:?}"), &cmd(&a), name);
        }
    }
}

/// The hundred-and-fifth hostile round, D3: a newline stayed raw in `plot`'s refusals of a
/// directory, in serde's "unknown variant" for a `--set` value, in a bad `--set` key and in
/// `theory --activation`'s refusal.
#[test]
fn a_newline_in_a_directory_value_or_key_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("d\nq")).unwrap();
    let cfg = write(
        d,
        "c.toml",
        "[data]\ndataset = \"synthetic\"\nn = 6\ninput_dim = 3\n[model]\nwidth = 8\n",
    );
    let out = d.join("o");
    let cases: Vec<(&str, Vec<OsString>, &str)> = vec![
        (
            "plot",
            os(&["plot", d.join("d\nq").to_str().unwrap()]),
            "d\\nq",
        ),
        (
            "a value",
            ntk_args(&cfg, &out, &["--set", "model.activation=\"re\\nlu\""]),
            "re\\nlu",
        ),
        (
            "a key",
            ntk_args(&cfg, &out, &["--set", "model.wi\ndth=3"]),
            "wi\\ndth",
        ),
        (
            "theory",
            os(&["theory", "--activation", "re\nlu", "--theta-deg", "1"]),
            "re\\nlu",
        ),
    ];
    for (what, args, shown) in cases {
        let o = run(&args);
        let said = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {said}");
        assert!(said.contains(shown), "{what}: {said:?}");
        assert_eq!(said.trim_end().lines().count(), 1, "{what}: {said:?}");
    }
}

/// The hundred-and-sixth hostile round, D1 and D2: a theory run nulled `probe.pair`'s angle
/// where `ntk-probe theory` answers it exactly (ReLU at 179.99999 degrees, 90.0000016, with a
/// note "too near 180"; the identity at 1e-6; GELU at 179.9999, 87.3), and a pair of equal
/// inputs was 1.2e-6 degrees (`min_grad_angle_deg` too), on the theory route and the
/// measured ones. Each is `theory`'s answer now (mpmath at the rows' angle), equal inputs 0
/// exactly, and tanh at 179.9999, depth 4, still null with a note naming 180.
#[test]
fn a_pair_angle_is_written_as_theory_answers_it_and_equal_inputs_are_0() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "th.toml",
        "[data]\ndataset = \"file\"\nx = \"x.npy\"\n[model]\nwidth = 16\ndepth = 1\n\
         activation = \"relu\"\nbias = false\n[probe]\nprecision = \"f64\"\n\
         method = \"theory\"\npair = [0, 1]\n",
    );
    #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
    let cases: [(&str, &str, f64, &str, Option<f64>); 8] = [
        ("relu", "1", 179.99999, "theory", Some(90.00000159154943)),
        ("linear", "2", 1e-6, "theory", Some(1e-6)),
        ("gelu", "3", 179.9999, "theory", Some(87.316181718308494)),
        ("tanh", "4", 179.9999, "theory", None),
        ("linear", "1", 0.0, "theory", Some(0.0)),
        ("erf", "2", 0.0, "theory", Some(0.0)),
        ("linear", "1", 0.0, "structured", Some(0.0)),
        ("tanh", "1", 0.0, "autodiff", Some(0.0)),
    ];
    for (activation, depth, theta, method, expected) in cases {
        let case = format!("{activation} {depth} {theta} {method}");
        let r = theta.to_radians();
        let s = pair_summary(
            d,
            &cfg,
            &[1.0, 0.0, r.cos(), r.sin()],
            &[
                format!("model.activation=\"{activation}\""),
                format!("model.depth={depth}"),
                format!("probe.method=\"{method}\""),
            ],
        );
        let angle = s["pair_grad_angle_deg"].as_f64();
        match expected {
            Some(0.0) => {
                assert_eq!(angle, Some(0.0), "{case}: {s}");
                assert_eq!(s["min_grad_angle_deg"].as_f64(), Some(0.0), "{case}: {s}");
            }
            Some(phi) => assert!((angle.unwrap() - phi).abs() < 1e-9, "{case}: {s}"),
            None => {
                assert_eq!(angle, None, "{case}: {s}");
                assert!(
                    s["note"].to_string().contains("too near 180 degrees"),
                    "{s}"
                );
            }
        }
    }
}

/// The hundred-and-sixth hostile round, D3: a newline stayed raw in `theory`'s list
/// refusals, in `--set` without `=` and in clap's own refusals (a value of `fig1 --thetas`,
/// an unknown subcommand), where clap printed TAB raw too.
#[test]
fn a_newline_in_a_list_a_set_or_a_clap_refusal_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "c.toml",
        "[data]\ndataset = \"synthetic\"\nn = 6\ninput_dim = 3\n[model]\nwidth = 8\ndepth = 1\n\
         activation = \"relu\"\n",
    );
    let out = dir.path().join("o");
    let f = "f\x1b[1m\tg\x7f\nh";
    let cases: Vec<(&str, Vec<OsString>)> = vec![
        (
            "theta list",
            os(&[
                "theory",
                "--activation",
                "tanh",
                "--theta-deg",
                &format!("5,{f}"),
            ]),
        ),
        (
            "depth range",
            os(&[
                "theory",
                "--activation",
                "tanh",
                "--theta-deg",
                "5",
                "--depth",
                &format!("1:{f}"),
            ]),
        ),
        ("--set without =", ntk_args(&cfg, &out, &["--set", f])),
        (
            "fig1 --thetas",
            os(&[
                "fig1",
                "--out",
                "f1",
                "--thetas",
                &format!("1,{f}"),
                "--depths",
                "1",
            ]),
        ),
        ("a subcommand", os(&[f])),
        // The hundred-and-seventh round's D2: the flags whose value is a word.
        ("--precision", ntk_args(&cfg, &out, &["--precision", f])),
        ("--backend", ntk_args(&cfg, &out, &["--backend", f])),
        ("--activation", ntk_args(&cfg, &out, &["--activation", f])),
        (
            "--max-memory",
            os(&["fig1", "--out", "f1", "--max-memory", f]),
        ),
        // The hundred-and-eighth round's D2: bench's own list flags.
        (
            "bench --precisions",
            os(&[
                "bench",
                "--n",
                "10",
                "--width",
                "8",
                "--depths",
                "1",
                "--precisions",
                f,
            ]),
        ),
        (
            "bench --eigen",
            os(&[
                "bench", "--n", "10", "--width", "8", "--depths", "1", "--eigen", f,
            ]),
        ),
    ];
    for (what, args) in cases {
        let o = run(&args);
        let said = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {said}");
        assert!(said.contains("g\\u{7f}\\nh"), "{what}: {said:?}");
        assert!(
            !said.contains('\t')
                && !said.contains('\x1b')
                && !said.lines().any(|l| l.starts_with('h')),
            "{what}: {said:?}"
        );
    }
}

/// The hundred-and-sixth hostile round, N3: a user's directory under `runs/` holding a
/// `summary.json` that is not a probe's made `sweep --resume` fail at the collect after its
/// work, where its dry run said rc 0. The dry run reads the summaries no point makes as that
/// collect does and refuses, naming the file; nothing is removed.
#[test]
fn a_foreign_summary_under_runs_is_refused_by_the_dry_run_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    let cfg = write(d, "s.toml", TINY_SWEEP);
    assert!(run(&sweep_args(&cfg, &out, &[])).status.success());
    // The hundred-and-eighth round's D5: inside a point's own directory too (a protocol
    // the sweep does not run, a subdirectory of its protocol's).
    let point = out.join("runs").join("relu").join("depth01").join("seed1");
    for foreign in [
        out.join("runs").join("mine"),
        point.join("blocks"),
        point.join("whole").join("sub"),
    ] {
        std::fs::create_dir_all(&foreign).unwrap();
        std::fs::write(foreign.join("summary.json"), "{\"my\": \"notes\"}").unwrap();
        let dry = run(&sweep_args(&cfg, &out, &["--resume", "--dry-run"]));
        let o = run(&sweep_args(&cfg, &out, &["--resume"]));
        let name = foreign.file_name().unwrap().to_str().unwrap();
        for (what, o) in [("dry run", &dry), ("run", &o)] {
            assert_clean_error(&format!("{name} {what}"), o, &[name, "summary.json"]);
        }
        assert_eq!(
            std::fs::read_to_string(foreign.join("summary.json")).unwrap(),
            "{\"my\": \"notes\"}"
        );
        std::fs::remove_dir_all(&foreign).unwrap();
    }
}

/// The hundred-and-seventh hostile round, D1, D4 and D5 (a theory run): `min_grad_angle_deg`
/// was the kernel's arccos where the pair's rule refuses its pair (0.0 for inputs 1e-6
/// degrees apart under GELU), now null with a note; two zero rows were `pair_grad_angle_deg`
/// 0.0 beside a note saying null, now null; exactly proportional (or opposite) rows of
/// different norms under tanh were refused "too near 0 (180) degrees" where the angle is
/// 30.2 (160.7) degrees, now answered (a 3001-point trapezoid's 30.2040820053 and
/// 160.6853261758, the round's independent numbers).
#[test]
fn a_theory_run_s_min_angle_follows_the_pair_rule_and_zero_rows_have_none() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "th.toml",
        "[data]\ndataset = \"file\"\nx = \"x.npy\"\n[model]\nwidth = 16\ndepth = 2\n\
         activation = \"tanh\"\nbias = false\n[probe]\nprecision = \"f64\"\n\
         method = \"theory\"\npair = [0, 1]\n",
    );
    let t = 1e-6f64.to_radians();
    let cases: [(&str, [f64; 4], Option<f64>); 4] = [
        ("gelu", [1.0, 0.0, t.cos(), t.sin()], None),
        ("tanh", [0.0, 0.0, 0.0, 0.0], None),
        ("tanh", [1.0, 0.0, 3.0, 0.0], Some(30.2040820053)),
        ("tanh", [1.0, 0.0, -2.0, 0.0], Some(160.6853261758)),
    ];
    for (activation, x, expected) in cases {
        let case = format!("{activation} {x:?}");
        let s = pair_summary(d, &cfg, &x, &[format!("model.activation=\"{activation}\"")]);
        let (min, pair) = (
            s["min_grad_angle_deg"].as_f64(),
            s["pair_grad_angle_deg"].as_f64(),
        );
        match expected {
            Some(phi) => {
                assert!((min.unwrap() - phi).abs() < 1e-8, "{case}: {s}");
                assert!((pair.unwrap() - phi).abs() < 1e-8, "{case}: {s}");
            }
            None => assert_eq!((min, pair), (None, None), "{case}: {s}"),
        }
    }
    // The first case's note says why the smallest angle is null.
    let s = pair_summary(
        d,
        &cfg,
        &[1.0, 0.0, t.cos(), t.sin()],
        &["model.activation=\"gelu\"".to_string()],
    )
    .to_string();
    assert!(s.contains("min_grad_angle_deg is null"), "{s}");
}

/// The hundred-and-seventh hostile round, D3: a dead ReLU network's own zero `K(x, x)` at a
/// row of 1e-200 was refused as an underflow (the input's own square underflows, and that
/// alone refused it), where ntk-train keeps it. The network is linear in its input's scale,
/// so it is proved on the input scaled by a power of two, which keeps its 0: accepted; a
/// live network at the same rows is still refused.
#[test]
fn a_dead_relu_network_s_own_zero_at_a_tiny_row_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let unit: Vec<f64> = (0..24)
        .map(|k| (((k * 7919) % 101) as f64 / 101.0) - 0.45)
        .collect();
    let tiny: Vec<f64> = unit.iter().map(|v| v * 1e-200).collect();
    ntk_files::npy::write_f64(&d.join("u.npy"), &unit, &[6, 4]).unwrap();
    ntk_files::npy::write_f64(&d.join("t.npy"), &tiny, &[6, 4]).unwrap();
    let cfg = write(
        d,
        "p.toml",
        "[data]\ndataset = \"file\"\nx = \"u.npy\"\n[model]\nwidth = 1\ndepth = 3\n\
         activation = \"relu\"\nbias = false\n[probe]\nprecision = \"f64\"\n",
    );
    let rank = |out: &Path| -> u64 {
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        s["rank"].as_u64().unwrap()
    };
    // A seed whose width-1 network is dead at every unit row (rank 0).
    let dead = (1..40u64)
        .find(|seed| {
            let out = d.join(format!("u{seed}"));
            let o = probe()
                .args(ntk_args(
                    &cfg,
                    &out,
                    &["--set", &format!("model.seed={seed}")],
                ))
                .current_dir(d)
                .output()
                .unwrap();
            o.status.success() && rank(&out) == 0
        })
        .expect("a dead seed among 40");
    let out = d.join("dead");
    let o = probe()
        .args(ntk_args(
            &cfg,
            &out,
            &[
                "--set",
                &format!("model.seed={dead}"),
                "--set",
                "data.x=\"t.npy\"",
            ],
        ))
        .current_dir(d)
        .output()
        .unwrap();
    assert_ok("dead at 1e-200", &o);
    assert_eq!(rank(&out), 0);
    let o = probe()
        .args(ntk_args(
            &cfg,
            &d.join("live"),
            &["--set", "model.width=16", "--set", "data.x=\"t.npy\""],
        ))
        .current_dir(d)
        .output()
        .unwrap();
    assert_clean_error(
        "live at 1e-200",
        &o,
        &["underflow", "linear in its input's scale"],
    );
}

/// A theory-pair run (`cfg`, `probe.pair = [0, 1]`) on the two rows `x` (2 x 2), its
/// `--set` flags `sets` added: the summary it writes at `d/o`, the run asserted clean.
fn pair_summary(d: &Path, cfg: &Path, x: &[f64; 4], sets: &[String]) -> serde_json::Value {
    ntk_files::npy::write_f64(&d.join("x.npy"), x, &[2, 2]).unwrap();
    let out = d.join("o");
    let mut extra = vec!["--recompute"];
    for set in sets {
        extra.extend(["--set", set.as_str()]);
    }
    let o = probe()
        .args(ntk_args(cfg, &out, &extra))
        .current_dir(d)
        .output()
        .unwrap();
    assert_ok(&format!("{x:?} {sets:?}"), &o);
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// The hundred-and-eighth hostile round, D3: only the smallest and the largest input were
/// checked for an underflowing `K(x, x)`, so where the smallest was dead (its 0 the network's
/// own) a live input of the same tiny norm kept its underflowed 0, rc 0. Every input whose
/// diagonal is subnormal or 0 is checked now: a width-1 ReLU network is dead at exactly one
/// of `v` and `-v`, and whichever comes first, the live one is refused.
#[test]
fn a_live_tiny_row_beside_a_dead_smallest_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "p.toml",
        "[data]\ndataset = \"file\"\nx = \"x.npy\"\n[model]\nwidth = 1\ndepth = 1\n\
         activation = \"relu\"\nbias = false\n[probe]\nprecision = \"f64\"\n",
    );
    let v = [0.6, -0.8];
    for sign in [1.0, -1.0] {
        let t = 1e-200 * sign;
        let x = [
            t * v[0],
            t * v[1],
            -t * v[0],
            -t * v[1],
            1.0,
            0.5,
            -0.3,
            1.0,
        ];
        ntk_files::npy::write_f64(&d.join("x.npy"), &x, &[4, 2]).unwrap();
        for extra in [&["--dry-run"][..], &[]] {
            let o = probe()
                .args(ntk_args(&cfg, &d.join("o"), extra))
                .current_dir(d)
                .output()
                .unwrap();
            assert_clean_error(
                &format!("{sign} {extra:?}"),
                &o,
                &["K(x, x) = 0.000e0", "underflows"],
            );
        }
    }
}

/// A width-1 ReLU network without biases, `output_dim` outputs, in f64: `probe.toml` in `d`
/// reading `x.npy`.
fn width_one_relu(d: &Path, output_dim: usize) -> PathBuf {
    write(
        d,
        "p.toml",
        &format!(
            "[data]\ndataset = \"file\"\nx = \"x.npy\"\n[model]\nwidth = 1\ndepth = 1\n\
             activation = \"relu\"\nbias = false\noutput_dim = {output_dim}\n[probe]\n\
             precision = \"f64\"\n"
        ),
    )
}

/// The hundred-and-ninth hostile round, D1: with `probe.output = "full"` a row was judged by
/// its largest entry over the outputs, so one output's subnormal `K(x, x)` at a row that is
/// neither the smallest nor the largest was kept (rc 0) where `probe.output = 0` refused it.
/// Here the live row is scaled so that its smallest output's entry is subnormal and the sum's
/// normal, beside a dead row of half its norm: `"full"` is refused naming the row, the sum
/// accepted.
#[test]
fn one_output_s_subnormal_entry_is_refused_with_the_full_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = width_one_relu(d, 3);
    let v = [0.6, -0.8];
    let unit = [v[0], v[1], -v[0], -v[1], 1.0, 0.5, -0.3, 1.0];
    ntk_files::npy::write_f64(&d.join("x.npy"), &unit, &[4, 2]).unwrap();
    let full = ["--set", "probe.output=\"full\""];
    let o = probe()
        .args(ntk_args(&cfg, &d.join("u"), &full))
        .current_dir(d)
        .output()
        .unwrap();
    assert_ok("unit rows", &o);
    let (k, _) = ntk_files::npy::read(&d.join("u/ntk.npy")).unwrap();
    let entries = |s: usize| {
        (0..3)
            .map(|o| k[(3 * s + o) * 12 + 3 * s + o])
            .collect::<Vec<_>>()
    };
    // The network is dead at exactly one of v and -v.
    let (live, dead) = if entries(0)[0] > 0.0 { (0, 1) } else { (1, 0) };
    let kmin = entries(live).iter().copied().fold(f64::INFINITY, f64::min);
    let ksum: f64 = entries(live).iter().sum();
    assert!(entries(dead).iter().all(|e| *e == 0.0) && ksum >= 3.0 * kmin);
    // K(s x, s x) = s^2 K(x, x): the smallest entry at 2/3 of f64's smallest normal number.
    let s = (f64::MIN_POSITIVE / (1.5 * kmin)).sqrt();
    let mut x = unit;
    x[2 * live..2 * live + 2].iter_mut().for_each(|e| *e *= s);
    x[2 * dead..2 * dead + 2]
        .iter_mut()
        .for_each(|e| *e *= s / 2.0);
    ntk_files::npy::write_f64(&d.join("x.npy"), &x, &[4, 2]).unwrap();
    for extra in [&["--dry-run"][..], &[]] {
        let args: Vec<&str> = full.iter().chain(extra).copied().collect();
        let o = probe()
            .args(ntk_args(&cfg, &d.join("o"), &args))
            .current_dir(d)
            .output()
            .unwrap();
        assert_clean_error(
            &format!("{extra:?}"),
            &o,
            &[
                &format!("row {live} "),
                "below the smallest normal f64 number",
            ],
        );
        let o = probe()
            .args(ntk_args(&cfg, &d.join("sum"), extra))
            .current_dir(d)
            .output()
            .unwrap();
        assert_ok(&format!("sum {extra:?}"), &o);
    }
}

/// The hundred-and-ninth hostile round, D2: only the first 256 inputs whose `K(x, x)` is 0
/// were proved, so a live row's underflowed 0 after 300 dead tiny rows was kept (rc 0). Every
/// zero is proved now (by the diagonal of the network scaled by powers of two): the live
/// row, the 301st zero, is refused by the dry run and the run.
#[test]
fn a_live_row_s_zero_after_hundreds_of_dead_ones_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = width_one_relu(d, 1);
    let v = [0.6, -0.8];
    let unit = [v[0], v[1], -v[0], -v[1]];
    ntk_files::npy::write_f64(&d.join("x.npy"), &unit, &[2, 2]).unwrap();
    let o = probe()
        .args(ntk_args(&cfg, &d.join("u"), &[]))
        .current_dir(d)
        .output()
        .unwrap();
    assert_ok("unit rows", &o);
    let (k, _) = ntk_files::npy::read(&d.join("u/ntk.npy")).unwrap();
    let (live, dead) = if k[0] > 0.0 { (0, 1) } else { (1, 0) };
    let mut x = Vec::new();
    for i in 0..300 {
        let t = 1e-200 * (1.0 + i as f64 / 1000.0);
        x.extend([t * unit[2 * dead], t * unit[2 * dead + 1]]);
    }
    // K about 1e-340 at 1e-170: exactly 0 in f64.
    x.extend([1e-170 * unit[2 * live], 1e-170 * unit[2 * live + 1]]);
    x.extend([1.0, 0.5, -0.3, 1.0]);
    ntk_files::npy::write_f64(&d.join("x.npy"), &x, &[303, 2]).unwrap();
    for extra in [&["--dry-run"][..], &[]] {
        let o = probe()
            .args(ntk_args(&cfg, &d.join("o"), extra))
            .current_dir(d)
            .output()
            .unwrap();
        assert_clean_error(
            &format!("{extra:?}"),
            &o,
            &["row 300 ", "K(x, x) = 0.000e0", "underflows"],
        );
    }
}

/// The hundred-and-ninth hostile round, D3 and N1: `bench --out` printed a newline of its
/// path raw (the refusal of a missing directory broke over three lines) and wrote a file of
/// such a name: refused up front, one line, escaped, nothing written, as `plot --out` refuses
/// one.
#[test]
fn bench_out_with_a_control_character_is_refused_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for name in [
        "nodir/f\u{1b}[1m\tg\u{7f}\nh",
        "f\u{1b}[1m\tg\u{7f}\nh",
        "f\nh/x.json",
        // The hundred-and-eleventh round's D3: a bidirectional control too; the
        // hundred-and-twelfth's D1: a zero-width space and a line separator.
        "a\u{202e}b\u{2066}c\n.json",
        "b\u{200b}.json",
        "b\u{2028}.json",
    ] {
        let o = probe()
            .args([
                "bench",
                "--n",
                "4",
                "--depths",
                "1",
                "--repeats",
                "1",
                "--out",
                name,
            ])
            .current_dir(d)
            .output()
            .unwrap();
        assert_clean_error(name, &o, &["--out", "holds a control character"]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            stderr.contains("\\n") || stderr.contains("\\u{"),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(
            !stderr.contains([
                '\u{1b}', '\t', '\u{7f}', '\u{202e}', '\u{2066}', '\u{200b}', '\u{2028}'
            ]),
            "{stderr:?}"
        );
        assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "{name}");
    }
}

/// The hundred-and-ninth hostile round, N2 (and the hundred-and-eighth's N3): a user's files
/// under `runs/` or in a protocol directory the sweep does not run were warned of ("holds
/// files ... not collected") by the run's closing collect alone. The dry run warns of them
/// the same, and of nothing where the points it would make lie.
#[test]
fn the_dry_run_warns_of_what_the_collect_leaves_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    let cfg = write(d, "s.toml", TINY_SWEEP);
    let dry = run(&sweep_args(&cfg, &out, &["--dry-run"]));
    assert_ok("fresh dry run", &dry);
    assert!(!String::from_utf8_lossy(&dry.stderr).contains("not collected"));
    assert!(run(&sweep_args(&cfg, &out, &[])).status.success());
    let point = out.join("runs").join("relu").join("depth01").join("seed1");
    for mine in [out.join("runs").join("mine"), point.join("blocks")] {
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::write(mine.join("notes.txt"), "mine").unwrap();
        let dry = run(&sweep_args(&cfg, &out, &["--resume", "--dry-run"]));
        let o = run(&sweep_args(&cfg, &out, &["--resume"]));
        let line = format!(
            "warning: {}: holds files (notes.txt) but no readable summary.json: not collected",
            mine.display()
        );
        for (what, o) in [("dry run", &dry), ("run", &o)] {
            assert_ok(what, o);
            assert!(
                String::from_utf8_lossy(&o.stderr).contains(&line),
                "{what}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        assert_eq!(
            std::fs::read_to_string(mine.join("notes.txt")).unwrap(),
            "mine"
        );
        std::fs::remove_dir_all(&mine).unwrap();
    }
}

/// The hundred-and-eighth hostile round, N1: `bench --backend` and `sweep --backend`
/// refused an unknown backend without naming the flag, as `run` names it.
#[test]
fn an_unknown_backend_flag_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "s.toml", TINY_SWEEP);
    let bench = run(&os(&[
        "bench",
        "--n",
        "4",
        "--depths",
        "1",
        "--backend",
        "bogus",
    ]));
    let sweep = run(&sweep_args(&cfg, &d.join("out"), &["--backend", "bogus"]));
    for (what, o) in [("bench", &bench), ("sweep", &sweep)] {
        assert_clean_error(what, o, &["--backend bogus: unknown backend `bogus`"]);
    }
}

/// The hundred-and-tenth hostile round, D2 and D3: `theory` refused tanh beyond 90 degrees
/// naming the supplement it formed ("theta_in 60 deg" for 120), and a theory run's overflow
/// was told as a seeded network's ("the seeded network's weights", "1/fan_in"). The angle
/// given is named, and the theory's overflow is said as the recursion's, with its layer.
#[test]
fn the_theory_s_overflow_is_said_as_the_recursion_s() {
    let o = run(&os(&[
        "theory",
        "--activation",
        "tanh",
        "--depth",
        "4400",
        "--theta-deg",
        "120",
    ]));
    assert_clean_error(
        "theory 120",
        &o,
        &["at layer 4326", "theta_in 120 deg", "supplement 60 deg"],
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "t.toml",
        "[data]\ndataset = \"file\"\nx = \"x.npy\"\n[model]\nwidth = 16\ndepth = 4400\n\
         activation = \"tanh\"\nbias = false\n[probe]\nprecision = \"f64\"\n\
         method = \"theory\"\n",
    );
    ntk_files::npy::write_f64(&d.join("x.npy"), &[1.0, 0.0, 0.0, 1.0], &[2, 2]).unwrap();
    for extra in [&["--dry-run"][..], &[]] {
        let o = probe()
            .args(ntk_args(&cfg, &d.join("o"), extra))
            .current_dir(d)
            .output()
            .unwrap();
        assert_clean_error(
            &format!("{extra:?}"),
            &o,
            &[
                "model.depth = 4400",
                "infinite-width recursion of tanh",
                "layer 4326 of 4400",
            ],
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            !stderr.contains("weights") && !stderr.contains("fan_in"),
            "{stderr}"
        );
    }
}

/// The hundred-and-eleventh hostile round, D3: `--out` with a bidirectional control (U+202E,
/// U+2066) was taken by `run`, its dry run and `sweep`, and printed raw in every line that
/// names it, reordering the rest of the line; refused as a control character is. The
/// hundred-and-twelfth, D1: the other characters that do not show (a zero-width space, a
/// byte order mark, a line separator, a Hangul filler) were taken too (`e/s\u{200b}l` wrote a
/// sweep that reads as `e/sl`), and a config's or data file's name holding one was printed
/// raw, "No such file" beside the file of the name the user sees: refused and escaped alike.
#[test]
fn an_out_with_a_character_that_does_not_show_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "s.toml", TINY_SWEEP);
    for (raw, shown) in [
        ("a\u{202e}b\u{2066}c", "a\\u{202e}b\\u{2066}c"),
        ("s\u{200b}l", "s\\u{200b}l"),
        ("l\u{2028}x", "l\\u{2028}x"),
        ("\u{feff}o\u{3164}", "\\u{feff}o\\u{3164}"),
    ] {
        let name = d.join(raw);
        for extra in [&["--dry-run"][..], &[]] {
            let o = run(&sweep_args(&cfg, &name, extra));
            assert_clean_error(
                &format!("sweep {raw:?} {extra:?}"),
                &o,
                &["does not show itself", shown],
            );
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert!(!stderr.contains(raw), "{stderr}");
        }
        assert!(!name.exists());
    }
    // A config's name and a data file's name with a zero-width space: "not found", the
    // character shown.
    let hidden_cfg = d.join("s\u{200b}.toml");
    let o = run(&sweep_args(&hidden_cfg, &d.join("o"), &[]));
    assert_clean_error("config", &o, &["s\\u{200b}.toml"]);
    let file = write(
        d,
        "f.toml",
        "[data]\ndataset = \"file\"\nx = \"x\u{200b}.npy\"\n[model]\nwidth = 4\ndepth = 1\n\
         activation = \"relu\"\n[probe]\nprecision = \"f64\"\n",
    );
    let o = run(&ntk_args(&file, &d.join("o"), &[]));
    assert_clean_error("data.x", &o, &["x\\u{200b}.npy"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains('\u{200b}'));
}

/// The hundred-and-twelfth hostile round, D3: `probe.method = "theory"` with ReLU^2 on `(1, 0,
/// 0)`, `(cos 120, sin 120, 0)` (square norm one rounding below 1 in f64) and `(0, 0, 1)` wrote
/// the second row's K(x, x) 41 times off at depth 60 (against a reference that took the
/// rows' decimal forms; 660 times off against the f64 rows' own, 4.8808967362452392e-51 by
/// mpmath at 80 digits) and an exact 0 from depth 63, rank 2, rc 0. Now within 1e-12 at 60,
/// and at 63 (exactly 1.6e-459) refused as an underflow by the dry run and the run alike.
#[test]
#[allow(clippy::excessive_precision)] // mpmath's digits, as printed
fn relu_squared_theory_keeps_a_row_one_rounding_off_unit_norm() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = 120f64.to_radians();
    let x = [1.0, 0.0, 0.0, t.cos(), t.sin(), 0.0, 0.0, 0.0, 1.0];
    ntk_files::npy::write_f64(&d.join("x.npy"), &x, &[3, 3]).unwrap();
    let cfg = write(
        d,
        "t.toml",
        "[data]\ndataset = \"file\"\nx = \"x.npy\"\n[model]\nwidth = 16\ndepth = 60\n\
         activation = \"relu_squared\"\nbias = false\n[probe]\nprecision = \"f64\"\n\
         method = \"theory\"\n",
    );
    let o = probe()
        .args(ntk_args(&cfg, &d.join("k60"), &[]))
        .current_dir(d)
        .output()
        .unwrap();
    assert_ok("depth 60", &o);
    let (k, _) = ntk_files::npy::read(&d.join("k60/ntk.npy")).unwrap();
    for (got, want) in [
        (k[4], 4.8808967362452392e-51),
        (k[1], 8.1378380044354681e-30),
        (k[0], 125425019.56297563),
    ] {
        assert!((got / want - 1.0).abs() < 1e-12, "{got:e} vs {want:e}");
    }
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec!["--set", "model.depth=63"];
        args.extend(extra);
        let o = probe()
            .args(ntk_args(&cfg, &d.join("k63"), &args))
            .current_dir(d)
            .output()
            .unwrap();
        assert_clean_error(
            &format!("depth 63 {extra:?}"),
            &o,
            &["row 1", "K(x, x) = 0.000e0", "so the 0 is an underflow"],
        );
    }
    assert!(!d.join("k63").exists());
    // The hundred-and-thirteenth round, D1 and D2: one rounding above unit norm the kernel
    // leaves f64's range at layer 61, one below it underflows from 62, at every depth past
    // (from 114 the scale's exponent passed 2^63: the overflow read as "K(x, x) = 0 ... an
    // underflow", the underflow passed the dry run and failed the run naming a "seeded
    // network").
    for (row, words, name) in [
        (1.0 + f64::EPSILON, "leaves f64's range at layer 61", "up"),
        (1.0 - f64::EPSILON / 2.0, "so the 0 is an underflow", "down"),
    ] {
        let file = format!("{name}.npy");
        ntk_files::npy::write_f64(&d.join(&file), &[row, 0.0, 0.0, 0.0, 1.0, 0.0], &[2, 3])
            .unwrap();
        for depth in [100, 114, 115, 200] {
            for extra in [&["--dry-run"][..], &[]] {
                let depth_set = format!("model.depth={depth}");
                let data_set = format!("data.x=\"{file}\"");
                let mut args = vec!["--set", depth_set.as_str(), "--set", data_set.as_str()];
                args.extend(extra);
                let o = probe()
                    .args(ntk_args(&cfg, &d.join("k"), &args))
                    .current_dir(d)
                    .output()
                    .unwrap();
                assert_clean_error(&format!("{name} {depth} {extra:?}"), &o, &[words]);
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(!err.contains("seeded network"), "{err}");
            }
        }
    }
}

/// The hundred-and-twelfth hostile round, D2: rows of norm 1e154, whose Gram matrix X X^T has
/// its entries in range and its largest eigenvalue (2e308) not, were refused for erf and
/// tanh as "the kernel's largest eigenvalue lambda_max = 2.000e308", the inputs' number,
/// though their kernels are about 1.37e154 (theory) and 13 (the network). The Gram matrix's
/// kappa is taken on the rows scaled by a power of two now, and each kernel is checked on
/// its own: erf's theory equals mpmath's (Williams' arcsin at 800 digits), the network's
/// kernel is formed, rc 0.
#[test]
fn a_gram_matrix_past_f64_s_spectrum_does_not_refuse_a_kernel_in_range() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = [1e154, 0.0, 0.0, 1e154, 1e146, 0.0, 0.0, 0.0, 1.0];
    ntk_files::npy::write_f64(&d.join("g2.npy"), &x, &[3, 3]).unwrap();
    let cfg = write(
        d,
        "t.toml",
        "[data]\ndataset = \"file\"\nx = \"g2.npy\"\n[model]\nwidth = 16\ndepth = 1\n\
         activation = \"erf\"\nbias = false\n[probe]\nprecision = \"f64\"\n",
    );
    for method in ["theory", "structured"] {
        let set = format!("probe.method=\"{method}\"");
        let out = d.join(method);
        let o = probe()
            .args(ntk_args(&cfg, &out, &["--set", &set]))
            .current_dir(d)
            .output()
            .unwrap();
        assert_ok(method, &o);
        let (k, _) = ntk_files::npy::read(&out.join("ntk.npy")).unwrap();
        assert!(k.iter().all(|v| v.is_finite()), "{method}: {k:?}");
        if method == "theory" {
            for (got, want) in [(k[0], 1.370374264243277e154), (k[8], 2.2257000037856907)] {
                assert!((got / want - 1.0).abs() < 1e-13, "{got:e} vs {want:e}");
            }
        }
    }
}

/// The hundred-and-thirteenth hostile round, D3 and D4: SELU's infinite-width kernel on rows of
/// norm about 1e154 has every entry finite and its largest eigenvalue past f64's: the theory
/// run's dry run said nothing (rc 0) where the run refuses, and a sweep's collect stopped on
/// the theory column's eigensolve, naming no activation, with no summary.csv for the finished
/// erf point. Now the dry run notes it as the other routes do, and the collect writes the
/// finished point's tables (the theory column of such a kernel is a null with a note:
/// `on_inputs`' tests).
#[test]
fn a_theory_kernel_whose_spectrum_leaves_f64_is_noted_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = [1e154, 0.0, 0.0, 9e153, 4.5e153, 0.0, 5e153, 3e153, 8e153];
    ntk_files::npy::write_f64(&d.join("h3.npy"), &x, &[3, 3]).unwrap();
    let cfg = write(
        d,
        "t.toml",
        "[data]\ndataset = \"file\"\nx = \"h3.npy\"\n[model]\nwidth = 16\ndepth = 1\n\
         activation = \"selu\"\nbias = false\n[probe]\nprecision = \"f64\"\n\
         method = \"theory\"\n",
    );
    let o = probe()
        .args(ntk_args(&cfg, &d.join("t"), &["--dry-run"]))
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("so its lambda_max, may too"), "{err}");
    let sweep = write(
        d,
        "s.toml",
        "[data]\ndataset = \"file\"\nx = \"h3.npy\"\n[model]\nwidth = 16\nbias = false\n\
         [probe]\nprecision = \"f64\"\n[sweep]\ndepths = [1]\nactivations = [\"erf\", \"selu\"]\n\
         seeds = [1]\nprotocols = [\"whole\"]\n",
    );
    let out = d.join("sw");
    let o = probe()
        .args(sweep_args(&sweep, &out, &[]))
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(out.join("summary.csv").exists(), "{err}");
    let table = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(table.contains("whole,erf,1,1,0,"), "{table}");
}

/// The hundred-and-fourteenth hostile round, D4: a bias-free ReLU^2 network of width 16 whose
/// kernel underflows to exactly 0 at depth 12 (seed 1, unit variance: its activations square
/// down to about 2^(-2^L)) was written "lambda_max 0, rank 0", rc 0, as the network's own 0,
/// by run, dry run and sweep alike. Refused now by each as the underflow it is; its depth-2
/// kernel is answered.
#[test]
fn a_relu_squared_kernel_that_squares_down_to_zero_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = [1.0, 1.0, 1.0 + f64::EPSILON, 1.0, -1.0, 1.0];
    ntk_files::npy::write_f64(&d.join("x.npy"), &x, &[2, 3]).unwrap();
    let base = format!(
        "[data]\ndataset = \"file\"\nx = {:?}\n\n[model]\nwidth = 16\ndepth = 12\n\
         activation = \"relu_squared\"\nconvention = \"unit_variance\"\nbias = false\n\n\
         [probe]\nprecision = \"f64\"\nmethod = \"structured\"\n",
        d.join("x.npy").display().to_string()
    );
    let cfg = write(
        d,
        "p.toml",
        &base.replace("bias = false\n", "bias = false\nseed = 1\n"),
    );
    for extra in [&["--dry-run"][..], &[]] {
        let o = run(&ntk_args(&cfg, &d.join("o"), extra));
        assert_clean_error(
            &format!("run {extra:?}"),
            &o,
            &["K(x, x) = 0.000e0", "so the 0 is an underflow"],
        );
    }
    let o = run(&ntk_args(&cfg, &d.join("o2"), &["--set", "model.depth=2"]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sweep = write(
        d,
        "s.toml",
        &format!(
            "{base}\n[sweep]\ndepths = [12]\nactivations = [\"relu_squared\"]\nseeds = [1]\n\
             protocols = [\"whole\"]\ntheory = false\n"
        ),
    );
    let o = run(&sweep_args(&sweep, &d.join("s"), &[]));
    assert_clean_error("sweep", &o, &["so the 0 is an underflow"]);
}

/// Hundred-and-thirty-second hostile round, D1: in a random subset, the f32 range refusals
/// named the row's place among the samples drawn ("row 52" of 59 for the file's row 40), and
/// no counting base. Now the file's row, counted from 0 as numpy counts it, with its place
/// among those drawn; overflow and underflow alike, run and dry run.
#[test]
fn an_f32_refusal_in_a_random_subset_names_the_files_row() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "t.toml",
        "[data]\ndataset = \"file\"\nx = \"x.csv\"\nn = 29\nsubset = \"random\"\n\
         [model]\nwidth = 8\ndepth = 1\nactivation = \"relu\"\n[probe]\nprecision = \"f32\"\n",
    );
    for (bad, words) in [
        ("0.5,1e39,0.25", "column 1 is 1e39, beyond f32's range"),
        ("2e-41,-1e-40,0", "of norm 1.020e-40 (the smallest nonzero)"),
    ] {
        let rows: String = (0..30)
            .map(|i| match i {
                7 => format!("{bad}\n"),
                _ => format!("{}.5,0.{i},-1\n", i % 4),
            })
            .collect();
        write(d, "x.csv", &rows);
        for extra in [&["--dry-run"][..], &[]] {
            let o = probe()
                .args(ntk_args(&cfg, &d.join("o"), extra))
                .current_dir(d)
                .output()
                .unwrap();
            assert_clean_error(
                &format!("{bad} {extra:?}"),
                &o,
                &[
                    "x.csv (30 x 3), random:29:",
                    "row 7 (counted from 0, as numpy indexes them; sample ",
                    " of those drawn)",
                    words,
                ],
            );
        }
        assert!(!d.join("o").exists());
    }
}

/// Hundred-and-thirty-second hostile round, D2: a first layer of 3072 x 8192 was estimated at
/// about half its peak (the host engine's copy and Burn's copies as a layer is read went
/// uncounted), so the advised `ulimit -v`, followed, ended in an out-of-memory error naming
/// nothing. One refusal, then the advised limit runs: f64 and f32, dry run and run.
#[test]
fn a_wide_first_layer_under_ulimit_is_advised_a_limit_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for precision in ["f64", "f32"] {
        let cfg = write(
            d,
            &format!("{precision}.toml"),
            &shaped(3072, 8192, 1, precision),
        );
        for extra in [&["--dry-run"][..], &[]] {
            let out = d.join(format!("o-{precision}"));
            let mut kib = 800_000u64;
            let mut refusals = 0;
            loop {
                let o = under_ulimit(kib, &[], &ntk_args(&cfg, &out, extra));
                if o.status.success() {
                    break;
                }
                let (next, stderr) = advised(kib, &o);
                assert!(stderr.contains("the host engine's copy"), "{stderr}");
                kib = next;
                refusals += 1;
                assert!(
                    refusals <= 1,
                    "{precision} {extra:?}: the advice was not enough:\n{stderr}"
                );
            }
            assert_eq!(
                refusals, 1,
                "{precision} {extra:?}: 800000 KiB was meant to refuse"
            );
        }
        assert!(d.join(format!("o-{precision}/ntk.npy")).is_file());
    }
}

/// Hundred-and-forty-eighth hostile round, second review, D1: a point's summary.json (or its
/// protocol's directory) linked to another point's was read through by the plans: "made by
/// a different config" to be made again, or `done`. The plans say the link, as `collect`
/// never follows one.
#[test]
fn a_linked_point_is_said_as_a_link_by_the_plans() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "sweep.toml", TINY_SWEEP);
    let out = d.join("out");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    let mut points = summaries_under(&out.join("runs"));
    points.sort();
    assert!(points.len() >= 2, "{points:?}");
    std::fs::remove_file(&points[1]).unwrap();
    std::os::unix::fs::symlink(&points[0], &points[1]).unwrap();
    let o = run(&sweep_args(&cfg, &out, &["--dry-run"]));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        said.contains("summary.json: a symbolic link, never followed")
            && !said.contains("made by a different config"),
        "{said}"
    );
    // collect warns of it once, as a link (round 149, N10: also as "no readable
    // summary.json").
    let o = run(&[OsString::from("collect"), out.clone().into()]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.matches("a symbolic link, never followed").count() == 1
            && !said.contains("no readable summary.json"),
        "{said}"
    );
}

/// Hundred-and-forty-eighth hostile round, D2: a point's summary.json replaced by another
/// point's made `collect` blame the intact eigenvalues.npy beside it, and the plans call it
/// "made by a different config"; the hundred-and-forty-ninth, N9: two point directories
/// swapped were taken by `collect` and made again by the plans. A point's summary is held to
/// the point its directory names: a copied one is said as copied, a swap as renamed, by
/// `collect`, the dry run and `collect --config` alike.
#[test]
fn a_summary_in_another_points_directory_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "sweep.toml", TINY_SWEEP);
    let out = d.join("out");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    let one = out.join("runs/relu/depth01/seed1");
    let two = out.join("runs/relu/depth02/seed1");
    let surfaces = |out: &Path| {
        let mut collect_config = os(&["collect"]);
        collect_config.extend([out.into(), "--config".into(), cfg.clone().into()]);
        [
            ("collect", run(&[OsString::from("collect"), out.into()])),
            ("dry run", run(&sweep_args(&cfg, out, &["--dry-run"]))),
            ("collect --config", run(&collect_config)),
        ]
    };
    let said = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    let original = std::fs::read(one.join("whole/summary.json")).unwrap();
    std::fs::copy(
        two.join("whole/summary.json"),
        one.join("whole/summary.json"),
    )
    .unwrap();
    for (what, o) in surfaces(&out) {
        let said = said(&o);
        assert!(
            said.contains(&format!(
                "{}: records another point (depth 2 where its directory says depth01",
                one.join("whole/summary.json").display()
            )) && said.contains("summary.json was copied from that point")
                && !said.contains("eigenvalues.npy")
                && !said.contains("made by a different config"),
            "{what}: {said}"
        );
    }
    // The two point directories swapped: renamed, with their files.
    std::fs::write(one.join("whole/summary.json"), original).unwrap();
    assert_ok(
        "the restored sweep",
        &run(&[OsString::from("collect"), out.clone().into()]),
    );
    let aside = out.join("runs/relu/aside");
    std::fs::rename(&one, &aside).unwrap();
    std::fs::rename(&two, &one).unwrap();
    std::fs::rename(&aside, &two).unwrap();
    for (what, o) in surfaces(&out) {
        let said = said(&o);
        assert!(
            said.contains("records another point (depth")
                && said.contains("the point's directory was renamed (its files with it), or copied")
                && said.contains(&format!(
                    "its set belongs in {}, which another set holds now: move that one out of runs/ first",
                    two.join("whole").display()
                ))
                && !said.contains("made by a different config"),
            "{what}: {said}"
        );
    }
    // A set copied, not moved, to another point's place: a copy of the one there (round
    // 150b, N1: the identical original was to be moved aside).
    for entry in std::fs::read_dir(one.join("whole")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), two.join("whole").join(entry.file_name())).unwrap();
    }
    let o = run(&[OsString::from("collect"), out.clone().into()]);
    assert_clean_error(
        "a copied set",
        &o,
        &[&format!(
            "it is a copy of {} (the same summary.json): remove this copy",
            two.join("whole").display()
        )],
    );
}

/// Hundred-and-fiftieth hostile round, D3: a point's set under another directory's name
/// (`runs/mine`, or its depth directory renamed) was planned `new` by the dry run with rc 0,
/// or refused by the dry run alone; the run computed the point, then refused at its collect.
/// D2: `collect --config` called it no point of the config. Now the run, its dry run and
/// `collect --config` say where it belongs, before any work.
#[test]
fn a_points_set_under_another_name_is_said_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "sweep.toml", TINY_SWEEP);
    let out = d.join("out");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    let whole = out.join("runs/relu/depth01/seed1/whole");
    let mine = out.join("runs/mine");
    std::fs::rename(&whole, &mine).unwrap();
    let mut collect_config = os(&["collect"]);
    collect_config.extend([out.clone().into(), "--config".into(), cfg.clone().into()]);
    for (what, o) in [
        ("dry run", run(&sweep_args(&cfg, &out, &["--dry-run"]))),
        ("run", run(&sweep_args(&cfg, &out, &[]))),
        ("collect --config", run(&collect_config)),
    ] {
        assert_clean_error(
            what,
            &o,
            &[
                &format!("{}: records the point", mine.join("summary.json").display()),
                &format!(
                    "under another directory's name: move its directory to {} and the sweep keeps it",
                    whole.display()
                ),
            ],
        );
    }
    assert!(!whole.exists(), "the run computed the point");
    std::fs::rename(&mine, &whole).unwrap();
    assert_ok(
        "moved back",
        &run(&[OsString::from("collect"), out.clone().into()]),
    );
    // A depth directory renamed into the point form: refused by the run before any work.
    let depth01 = out.join("runs/relu/depth01");
    std::fs::rename(&depth01, out.join("runs/relu/depth03")).unwrap();
    for (what, o) in [
        ("dry run", run(&sweep_args(&cfg, &out, &["--dry-run"]))),
        ("run", run(&sweep_args(&cfg, &out, &[]))),
    ] {
        assert_clean_error(
            what,
            &o,
            &[
                "depth03/seed1/whole/summary.json: records another point",
                "its parent directory is not there",
            ],
        );
    }
    assert!(!depth01.exists(), "the run computed the point");
}

/// Hundred-and-fiftieth hostile round, second review, D1: a summary.json edited (copied in
/// from another seed first, or not) beside a changed eigenvalues.npy made `collect` blame
/// the table, where the plans said the summary was edited: the summary is held to its own
/// checksum first on every surface.
#[test]
fn an_edited_summary_is_named_before_the_files_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "sweep.toml",
        &TINY_SWEEP.replace("seeds = [1]", "seeds = [1, 2]"),
    );
    let out = d.join("out");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    let depth = out.join("runs/relu/depth01");
    let summary = depth.join("seed2/whole/summary.json");
    let text = std::fs::read_to_string(depth.join("seed1/whole/summary.json")).unwrap();
    let at = text.find("\"kappa\": ").unwrap() + "\"kappa\": ".len();
    let end = at + text[at..].find([',', '\n']).unwrap();
    std::fs::write(&summary, format!("{}1000.0{}", &text[..at], &text[end..])).unwrap();
    let mut collect_config = os(&["collect"]);
    collect_config.extend([out.clone().into(), "--config".into(), cfg.clone().into()]);
    for (what, o) in [
        (
            "collect",
            run(&[OsString::from("collect"), out.clone().into()]),
        ),
        ("dry run", run(&sweep_args(&cfg, &out, &["--dry-run"]))),
        ("collect --config", run(&collect_config)),
    ] {
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(
            said.contains(&format!(
                "{}: its fields do not match the checksum it was written with",
                summary.display()
            )) && !said.contains("eigenvalues.npy"),
            "{what}: {said}"
        );
    }
}

/// Hundred-and-fifty-first hostile round, D3 and D4: a point's set renamed within its point
/// (`whole.aside`) was "no result" to `collect --config`, whose table held it, and "not an
/// ntk-probe output set" to the plans. Both say where it belongs.
#[test]
fn a_set_renamed_within_its_point_is_said_where_it_belongs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "sweep.toml", TINY_SWEEP);
    let out = d.join("out");
    assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
    let whole = out.join("runs/relu/depth01/seed1/whole");
    let aside = out.join("runs/relu/depth01/seed1/whole.aside");
    std::fs::rename(&whole, &aside).unwrap();
    let mut collect_config = os(&["collect"]);
    collect_config.extend([out.clone().into(), "--config".into(), cfg.clone().into()]);
    for (what, o) in [
        ("dry run", run(&sweep_args(&cfg, &out, &["--dry-run"]))),
        ("run", run(&sweep_args(&cfg, &out, &[]))),
        ("collect --config", run(&collect_config)),
    ] {
        assert_clean_error(
            what,
            &o,
            &[&format!(
                "{}: records the point relu depth 1 seed 1 (whole) of this config, under another directory's name: move its directory to {}",
                aside.join("summary.json").display(),
                whole.display()
            )],
        );
    }
    assert!(!whole.exists(), "the run computed the point");
}

/// The hundred-and-fifty-second hostile round, N5: a set copied inside another set's
/// directory (`whole/whole/`, `whole/keep/seed1/whole/`) was taken by plain `collect`, whose
/// results.csv counted the depth with two seeds; ntk-train's collect refuses a run inside
/// another's. Refused now, naming both, by collect and the plans alike.
#[test]
fn a_set_inside_another_sets_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(d, "sweep.toml", TINY_SWEEP);
    for (name, inside) in [
        ("direct", "whole"),
        ("deeper", "keep/seed1/whole"),
        // Round 155b, N1: a `runs/` inside the set's directory hid it.
        ("under-runs", "runs/x/y"),
    ] {
        let out = d.join(name);
        assert_ok("the sweep", &run(&sweep_args(&cfg, &out, &[])));
        let whole = out.join("runs/relu/depth01/seed1/whole");
        let copy = d.join(format!("{name}-copy"));
        let o = std::process::Command::new("cp")
            .arg("-a")
            .arg(&whole)
            .arg(&copy)
            .status()
            .unwrap();
        assert!(o.success());
        let nested = whole.join(inside);
        std::fs::create_dir_all(nested.parent().unwrap()).unwrap();
        std::fs::rename(&copy, &nested).unwrap();
        let said = format!(
            "{}: a point's set inside the set directory {}",
            nested.display(),
            whole.display()
        );
        assert_clean_error(&format!("{name}: collect"), &collect_out(&out), &[&said]);
        assert_clean_error(
            &format!("{name}: dry run"),
            &run(&sweep_args(&cfg, &out, &["--dry-run"])),
            &[&said],
        );
    }
}
