//! The Slurm scripts without a cluster (scripts/slurm/test-cluster.sh runs them against a
//! real one): what `submit.sh --dry-run` says it would submit (the two sbatch command lines,
//! each task's command and points) with and without `--gpu`, the refusal of a build that
//! lacks what `--gpu` needs, and `sweep.sbatch` at its time limit where `scontrol requeue`
//! is allowed and where it is refused.
//!
//! This binary's own build decides the `--gpu` test of the trainer: with the `cudnn` feature
//! (`cargo test -p ntk-train --features cudnn --test slurm_scripts`, which CI runs) the dry
//! run plans the cuDNN engine on a machine without a GPU; without it the script refuses,
//! naming the build command. The probe's side runs on a stand-in binary that names the
//! features it was given.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `bash scripts/slurm/submit.sh ARGS`, its logs directory under `dir` (a dry run creates
/// nothing there).
fn submit(dir: &Path, args: &[&str]) -> Output {
    Command::new("bash")
        .arg(repo().join("scripts/slurm/submit.sh"))
        .args(args)
        .env("NTK_SLURM_LOGS", dir.join("logs"))
        .env_remove("BURN_DEVICE")
        .output()
        .unwrap()
}

/// A generated CIFAR-10 directory and a config over it: a ResNet-8 when `resnet`, else an
/// MLP on the flattened images.
fn config(dir: &Path, resnet: bool) -> PathBuf {
    let data = dir.join("cifar");
    ntk_data::cifar::write_cifar_like(&data, 16, 7).unwrap();
    let net = if resnet {
        "[resnet]\ndepth = 8\nvariant = \"batch_norm\""
    } else {
        "[model]\nwidth = 16\ndepth = 1\nactivation = \"relu\"\noutput_dim = 10"
    };
    let text = format!(
        r#"[data]
dataset = "cifar-10"
n = 64
subset = "first"
scaling = "cifar-per-channel"
dir = "{}"

{net}

[optim]
lr = 0.1
momentum = 0.9

[train]
batch_size = 32
epochs = 1
test_n = 16

[sweep]
lrs = [0.1, 0.05]
"#,
        data.display()
    );
    let path = dir.join(if resnet { "resnet.toml" } else { "mlp.toml" });
    std::fs::write(&path, text).unwrap();
    path
}

/// The line of `out` that starts with `prefix`.
fn line<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line `{prefix}...` in:\n{out}"))
}

#[test]
fn gpu_asks_for_one_gpu_per_task_and_trains_on_the_cudnn_engine() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), true);
    let out = dir.path().join("out");
    let bin = env!("CARGO_BIN_EXE_ntk-train");
    let o = submit(
        dir.path(),
        &[
            "train",
            cfg.to_str().unwrap(),
            "2",
            "--out",
            out.to_str().unwrap(),
            "--bin",
            bin,
            "--gpu",
            "--time",
            "00:30:00",
            "--dry-run",
        ],
    );
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    if !cfg!(feature = "cudnn") {
        // The default build: refused before anything is planned or submitted.
        assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
        assert!(
            stderr.contains("--gpu needs cudnn")
                && stderr.contains("run cargo build -p ntk-train --features cudnn"),
            "{stderr}"
        );
        assert!(stdout.is_empty(), "{stdout}");
        return;
    }
    assert!(o.status.success(), "{stdout}{stderr}");
    assert!(line(&stdout, "binary: ").contains("cudnn"), "{stdout}");
    let array = line(&stdout, "array: ");
    assert!(
        array.starts_with("array: sbatch --parsable --export=ALL --array=0-1 ")
            && array.contains(" --time 00:30:00 --gres=gpu:1 ")
            && array.ends_with(" scripts/slurm/sweep.sbatch"),
        "{array}"
    );
    assert!(
        line(&stdout, "collect: ").contains("--dependency=afterok:ARRAY_JOB_ID"),
        "{stdout}"
    );
    for task in 0..2 {
        assert!(
            stdout.contains(&format!("--- task {task} (shard {task}/2)\ncommand: ")),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("this shard ({task}/2) owns 1:")),
            "{stdout}"
        );
    }
    let command = line(&stdout, "command: ");
    assert!(
        command.ends_with("--shard slurm --resume --engine cudnn"),
        "{command}"
    );
    // The dry run of a cudnn build plans the cuDNN engine here, without a GPU.
    let engines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("engine: "))
        .collect();
    assert_eq!(engines.len(), 2, "{stdout}");
    assert!(
        engines
            .iter()
            .all(|l| l.starts_with("engine: cudnn: the cuDNN engine")),
        "{stdout}"
    );
    assert!(!out.exists() && !dir.path().join("logs").exists());

    // A run interrupted on the host engine (its checkpoint there, no summary) is planned
    // as the GPU task would resume it: the cuDNN engine keeps the host engine's
    // checkpoints, and the plan needs no GPU to say so.
    let cpu = Command::new(bin)
        .args([
            "--config",
            cfg.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["--shard", "0/2", "--engine", "host"])
        .output()
        .unwrap();
    assert!(cpu.status.success(), "{}", text(&cpu.stderr));
    let run = out.join("runs/depth008_relu_batch_norm_lr1e-1_seed0");
    std::fs::remove_file(run.join("summary.json")).unwrap();
    let o = submit(
        dir.path(),
        &[
            "train",
            cfg.to_str().unwrap(),
            "2",
            "--out",
            out.to_str().unwrap(),
            "--bin",
            bin,
            "--gpu",
            "--dry-run",
        ],
    );
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", text(&o.stderr));
    assert!(
        stdout.contains("   0 partial resnet-8 batch_norm"),
        "{stdout}"
    );

    // A network the cuDNN engine does not train is refused at submission, saying why.
    let mlp = config(dir.path(), false);
    let o = submit(
        dir.path(),
        &[
            "train",
            mlp.to_str().unwrap(),
            "2",
            "--out",
            out.to_str().unwrap(),
            "--bin",
            bin,
            "--gpu",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(
        text(&o.stderr).contains("the cuDNN engine trains CIFAR ResNets"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn without_gpu_the_tasks_run_the_config_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), true);
    let out = dir.path().join("out");
    let o = submit(
        dir.path(),
        &[
            "train",
            cfg.to_str().unwrap(),
            "1",
            "--out",
            out.to_str().unwrap(),
            "--bin",
            env!("CARGO_BIN_EXE_ntk-train"),
            "--any",
            "--dry-run",
        ],
    );
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", text(&o.stderr));
    // The features the binary's --version names.
    let binary = line(&stdout, "binary: ");
    assert!(binary.contains("(features: flex"), "{binary}");
    assert_eq!(
        binary.contains(" cudnn"),
        cfg!(feature = "cudnn"),
        "{binary}"
    );
    let array = line(&stdout, "array: ");
    assert!(!array.contains("--gres"), "{array}");
    assert!(
        line(&stdout, "collect: ").contains("--dependency=afterany:ARRAY_JOB_ID"),
        "{stdout}"
    );
    let command = line(&stdout, "command: ");
    assert!(command.ends_with("--shard slurm --resume"), "{command}");
    assert!(
        line(&stdout, "engine: ").starts_with("engine: auto: "),
        "{stdout}"
    );
    assert!(stdout.contains("this shard (0/1) owns 2:"), "{stdout}");
}

/// Ninth hostile round: without `--out`, submit.sh read the config's output directory with
/// a sed of `out = "..."` lines, so a literal string or an indented key sent every task to
/// runs/train instead: the directory is the one the tool itself resolves.
#[test]
fn without_out_the_tasks_write_where_the_config_says() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), false);
    let want = dir.path().join("lit out");
    let edited = std::fs::read_to_string(&cfg).unwrap().replace(
        "test_n = 16\n",
        &format!("test_n = 16\n  out = '{}'\n", want.display()),
    );
    std::fs::write(&cfg, edited).unwrap();
    let o = submit(
        dir.path(),
        &[
            "train",
            cfg.to_str().unwrap(),
            "1",
            "--bin",
            env!("CARGO_BIN_EXE_ntk-train"),
            "--dry-run",
        ],
    );
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", text(&o.stderr));
    assert!(
        stdout.contains(&format!("in {}; this shard (0/1) owns 2:", want.display())),
        "{stdout}"
    );
    assert!(!stdout.contains("runs/train"), "{stdout}");
}

/// 61st hostile round: submit.sh changed to the repository before reading its arguments, so
/// a relative `CONFIG` named like an example was the repository's example, a relative
/// `--out` went into the repository and a relative `--bin` was "not built". Run from a
/// directory of the user's own, each is read there, as the tools read them, and so is the
/// config's own relative `out`.
#[test]
fn relative_paths_are_read_where_the_script_is_run() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), false);
    // A config named as one of the repository's examples, with its own relative `out`.
    std::fs::create_dir(dir.path().join("configs")).unwrap();
    let mine = dir.path().join("configs/mnist_depth_sweep.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &mine,
        text.replace("test_n = 16\n", "test_n = 16\nout = \"mine_out\"\n"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("bin")).unwrap();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_ntk-train"),
        dir.path().join("bin/ntk-train"),
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let o = Command::new("bash")
            .arg(repo().join("scripts/slurm/submit.sh"))
            .args([
                "train",
                "configs/mnist_depth_sweep.toml",
                "1",
                "--bin",
                "bin/ntk-train",
            ])
            .args(extra)
            .arg("--dry-run")
            .current_dir(dir.path())
            .env("NTK_SLURM_LOGS", "logs")
            .env_remove("BURN_DEVICE")
            .output()
            .unwrap();
        let stdout = text_of(&o);
        assert!(o.status.success(), "{stdout}");
        stdout
    };
    let here = dir.path().canonicalize().unwrap();
    let binary = Path::new(env!("CARGO_BIN_EXE_ntk-train"))
        .canonicalize()
        .unwrap();
    let stdout = run(&["--out", "o1"]);
    for said in [
        format!("binary: {}", binary.display()),
        format!(
            "CONFIG={}",
            here.join("configs/mnist_depth_sweep.toml").display()
        ),
        format!("OUT={}", here.join("o1").display()),
        format!("--output={}/ntk-sweep-", here.join("logs").display()),
    ] {
        assert!(stdout.contains(&said), "{said}: {stdout}");
    }
    // The config's own `out`, as the tool resolves it in the caller's directory.
    let stdout = run(&[]);
    assert!(
        stdout.contains(&format!("OUT={}", here.join("mine_out").display())),
        "{stdout}"
    );
    assert!(!here.join("mine_out").exists() && !here.join("o1").exists());
}

/// Standard output and error of `o`, one after the other.
fn text_of(o: &Output) -> String {
    format!("{}{}", text(&o.stdout), text(&o.stderr))
}

/// A stand-in for a tool binary: `--version` names `features` (none at all when `None`,
/// as a build older than the scripts), any other call prints its arguments.
fn stand_in(dir: &Path, features: Option<&str>) -> PathBuf {
    let path = dir.join("ntk-probe");
    let version = match features {
        Some(f) => format!("echo 'ntk-probe 0.1.0'; echo 'features: {f}'"),
        None => "echo 'ntk-probe 0.1.0'".to_string(),
    };
    let script = format!(
        "#!/bin/bash\nif [ \"$1\" = --version ]; then {version}; exit 0; fi\necho \"stand-in: $*\"\n"
    );
    std::fs::write(&path, script).unwrap();
    Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    path
}

#[test]
fn gpu_runs_the_probe_on_wgpu_with_cusolver_or_refuses_naming_the_build() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = repo().join("configs/fig2_synthetic.toml");
    let out = dir.path().join("out");
    let probe = |features: Option<&str>, extra: &[&str]| {
        let bin = stand_in(dir.path(), features);
        let mut args = vec![
            "probe",
            cfg.to_str().unwrap(),
            "3",
            "--out",
            out.to_str().unwrap(),
        ];
        let bin = bin.to_str().unwrap().to_string();
        args.extend(["--bin", &bin, "--gpu", "--dry-run"]);
        args.extend(extra);
        let o = submit(dir.path(), &args);
        (o.status.code(), text(&o.stdout), text(&o.stderr))
    };
    let refusals = [
        (
            Some("flex"),
            "built with features: flex; --gpu needs cusolver",
        ),
        (Some("flex cusolver"), "--gpu needs wgpu"),
        (Some("flex wgpu"), "--gpu needs cusolver"),
        (None, "built with features: none named"),
    ];
    for (features, why) in refusals {
        let (code, stdout, stderr) = probe(features, &[]);
        assert_eq!(code, Some(2), "{features:?}: {stdout}{stderr}");
        assert!(
            stderr.contains(why)
                && stderr.contains("run cargo build -p ntk-probe --features wgpu,cusolver"),
            "{features:?}: {stderr}"
        );
        assert!(stdout.is_empty(), "{stdout}");
    }
    for (features, device) in [
        ("flex wgpu cusolver", "wgpu"),
        ("flex cuda cusolver", "cuda"),
    ] {
        let (code, stdout, stderr) = probe(Some(features), &[]);
        assert_eq!(code, Some(0), "{stdout}{stderr}");
        assert!(
            line(&stdout, "array: ").contains(" --gres=gpu:1 "),
            "{stdout}"
        );
        assert!(
            line(&stdout, "environment: ")
                .ends_with(&format!("EXTRA=--backend\\ {device} DEVICE={device}")),
            "{stdout}"
        );
        let command = line(&stdout, "command: ");
        assert!(
            command.contains(" sweep --config ")
                && command.ends_with(&format!("--shard slurm --backend {device}")),
            "{command}"
        );
        // The task's command, run with --dry-run (here by the stand-in).
        assert!(
            stdout.contains(&format!("--shard slurm --backend {device} --dry-run\n")),
            "{stdout}"
        );
        assert_eq!(stdout.matches("stand-in: sweep").count(), 3, "{stdout}");
    }
    // A GPU the user names is asked for as named, not twice.
    let (code, stdout, stderr) = probe(Some("flex wgpu cusolver"), &["--gres=gpu:a100:1"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let array = line(&stdout, "array: ");
    assert!(
        array.contains(" --gres=gpu:a100:1 ") && !array.contains("--gres=gpu:1"),
        "{array}"
    );
}

/// `sweep.sbatch` as Slurm runs it, with a stand-in tool that waits to be stopped and a
/// stand-in `scontrol` that exits with `scontrol_exit`; USR1 (the time limit near) is sent
/// once the tool runs. Returns the script's exit code, its output and scontrol's arguments.
fn at_time_limit(scontrol_exit: i32) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let calls = dir.path().join("scontrol-calls");
    let tool = dir.path().join("ntk-train");
    std::fs::write(
        &tool,
        format!("#!/bin/bash\ntouch {}\nexec sleep 60\n", started.display()),
    )
    .unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(
        bin.join("scontrol"),
        format!(
            "#!/bin/bash\necho \"$*\" >> {}\n[ {scontrol_exit} = 0 ] || \
             echo 'scontrol: error: Access/permission denied' >&2\nexit {scontrol_exit}\n",
            calls.display()
        ),
    )
    .unwrap();
    Command::new("chmod")
        .args(["+x"])
        .arg(&tool)
        .arg(bin.join("scontrol"))
        .status()
        .unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let child = Command::new("bash")
        .arg(repo().join("scripts/slurm/sweep.sbatch"))
        .env("PATH", path)
        .env("TOOL", "train")
        .env("BIN", &tool)
        .env("CONFIG", "unused.toml")
        .env("OUT", dir.path().join("out"))
        .env("SLURM_ARRAY_JOB_ID", "41")
        .env("SLURM_ARRAY_TASK_ID", "3")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the tool never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Command::new("kill")
        .args(["-USR1", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let said = text(&o.stdout) + &text(&o.stderr);
    let calls = std::fs::read_to_string(&calls).unwrap_or_default();
    (o.status.code(), said, calls)
}

#[test]
fn at_its_time_limit_a_task_requeues_itself_or_says_to_submit_again() {
    let (code, said, calls) = at_time_limit(0);
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(calls, "requeue 41_3\n");
    assert!(said.contains("stopping and requeueing"), "{said}");

    let (code, said, calls) = at_time_limit(1);
    assert_eq!(code, Some(1), "{said}");
    assert_eq!(calls, "requeue 41_3\n");
    assert!(
        said.contains("scontrol requeue was refused")
            && said.contains("submit the same command again"),
        "{said}"
    );
}

/// Sixty-second hostile round, D4: a `--bin` that is a directory, that cannot start here, or
/// whose `--version` fails ended submit.sh with no message (exit 126 or 1): each is refused
/// naming the binary and why, exit 2, dry run and run alike.
#[test]
fn a_binary_that_cannot_say_its_version_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), false);
    let fails = dir.path().join("fails");
    std::fs::write(&fails, "#!/bin/bash\necho 'no such option' >&2\nexit 1\n").unwrap();
    let garbled = dir.path().join("garbled");
    std::fs::write(&garbled, b"\x7fELF").unwrap();
    for path in [&fails, &garbled] {
        Command::new("chmod").arg("+x").arg(path).status().unwrap();
    }
    for (bin, why) in [
        (dir.path(), "a directory, not the binary"),
        (fails.as_path(), "cannot run --version here"),
        (garbled.as_path(), "cannot run --version here"),
    ] {
        for dry in [true, false] {
            let mut args = vec![
                "train",
                cfg.to_str().unwrap(),
                "1",
                "--bin",
                bin.to_str().unwrap(),
            ];
            if dry {
                args.push("--dry-run");
            }
            let o = submit(dir.path(), &args);
            let said = text(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{}: {said}", bin.display());
            assert!(
                said.contains(bin.to_str().unwrap()) && said.contains(why),
                "{said}"
            );
        }
    }
    let said = |args: &[&str]| {
        let mut all = vec!["train", cfg.to_str().unwrap(), "1"];
        all.extend(args);
        let o = submit(dir.path(), &all);
        assert_eq!(o.status.code(), Some(2));
        text(&o.stderr)
    };
    assert!(said(&["--bin", fails.to_str().unwrap()]).contains("no such option"));
    // The other tool's binary.
    let o = submit(
        dir.path(),
        &[
            "probe",
            cfg.to_str().unwrap(),
            "1",
            "--bin",
            env!("CARGO_BIN_EXE_ntk-train"),
            "--dry-run",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("not ntk-probe"),
        "{}",
        text(&o.stderr)
    );
    // Round 62's N1: a logs directory that is a file, and an empty --out, are refused
    // before the dry run passes (the run failed on them after it).
    let bin = env!("CARGO_BIN_EXE_ntk-train");
    std::fs::write(dir.path().join("logs"), "a file").unwrap();
    assert!(said(&["--bin", bin, "--dry-run"]).contains("NTK_SLURM_LOGS"));
    std::fs::remove_file(dir.path().join("logs")).unwrap();
    assert!(said(&["--bin", bin, "--out", "", "--dry-run"]).contains("--out: expected a value"));
}

/// Sixty-second hostile round, D5: after a `--recompute` array one of whose tasks did not
/// run, the collect job refused the sweep as two configs, never naming the points left (and
/// advised `--allow-mixed`). It now merges nothing, names each point that still holds
/// another config's results, and exits 1; once they are made it collects.
#[test]
fn the_collect_job_names_points_a_recompute_array_left() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), false);
    let out = dir.path().join("out");
    let bin = env!("CARGO_BIN_EXE_ntk-train");
    let train = |config: &Path, extra: &[&str]| {
        let o = Command::new(bin)
            .arg("--config")
            .arg(config)
            .arg("--out")
            .arg(&out)
            .args(extra)
            .env_remove("BURN_DEVICE")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
    };
    train(&cfg, &[]);
    let two = dir.path().join("two.toml");
    let text_of_cfg = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&two, text_of_cfg.replace("epochs = 1", "epochs = 2")).unwrap();
    // Task 0 of 2 ran; task 1 did not.
    train(&two, &["--recompute", "--shard", "0/2"]);
    let collect_job = || {
        Command::new("bash")
            .arg(repo().join("scripts/slurm/collect.sbatch"))
            .env("TOOL", "train")
            .env("BIN", bin)
            .env("CONFIG", &two)
            .env("OUT", &out)
            .env_remove("BURN_DEVICE")
            .output()
            .unwrap()
    };
    let o = collect_job();
    let said = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{said}{}", text(&o.stderr));
    assert!(
        said.contains("not collected: 1 point(s) still hold another config's results")
            && said.contains(" stale "),
        "{said}"
    );
    assert!(
        !text(&o.stderr).contains("--allow-mixed"),
        "{}",
        text(&o.stderr)
    );
    // The task run again: the job collects, every point done.
    train(&two, &["--recompute", "--shard", "1/2"]);
    let o = collect_job();
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("every point is done"));
}

/// Sixty-third hostile round, D2: after a task stopped at its time limit (its requeue
/// refused), the training collect job's plan ran without the tasks' `--resume` and printed
/// the refusal "pass --resume ... or choose another --out". It plans with the tasks' flags:
/// the run is listed as partial, exit 1, no refusal.
#[test]
fn the_collect_job_plans_an_interrupted_run_as_its_task_would_resume_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), false);
    let out = dir.path().join("out");
    let bin = env!("CARGO_BIN_EXE_ntk-train");
    let o = Command::new(bin)
        .arg("--config")
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .env_remove("BURN_DEVICE")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    // One run as a task stopped after its last checkpoint leaves it: no summary yet.
    let run = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("summary.json").is_file())
        .unwrap();
    std::fs::remove_file(run.join("summary.json")).unwrap();
    let o = Command::new("bash")
        .arg(repo().join("scripts/slurm/collect.sbatch"))
        .env("TOOL", "train")
        .env("BIN", bin)
        .env("CONFIG", &cfg)
        .env("OUT", &out)
        .env_remove("BURN_DEVICE")
        .output()
        .unwrap();
    let (said, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{said}{err}");
    assert!(
        said.contains("not done (1 point(s))") && said.contains(" partial "),
        "{said}"
    );
    assert!(!err.contains("pass --resume"), "{err}");
}
