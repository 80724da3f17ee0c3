//! experiments/seeds/run.sh, the seed queue, on a queue of its own in a scratch tree with a
//! stand-in for ntk-train that records its calls (issue 65, fifth hostile round: a last line
//! without a newline was skipped, and a SEEDS_ONLY pattern that named no line ended in
//! "queue done", exit 0, as issue 65 item 10 found for collect.sh).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ntk_train::config::TrainConfig;
use ntk_train::metrics::{EpochMetrics, read_csv};
use ntk_train::train::RunOptions;

use crate::common::{digits_config, numbers, run as train, serial};

/// A scratch tree holding run.sh and a two-line queue whose last line has no newline, and a
/// stand-in binary that appends its arguments to `calls.log` (but for `--version`, which
/// run.sh asks first to learn whether the tool starts at all; `REFUSE_START` makes it refuse
/// as ntk-train refuses a RAYON_NUM_THREADS beyond its bound; and for a dry run, which
/// run.sh asks of each line before any trains; `REFUSE_DRY` makes it refuse).
fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("experiments/seeds");
    std::fs::create_dir_all(&seeds).unwrap();
    // The experiments the queues below list (run.sh refuses a line whose directory is not
    // there: eighty-second hostile round, D4).
    for e in ["experiments/x", "experiments/y"] {
        std::fs::create_dir_all(dir.path().join(e)).unwrap();
    }
    // And the configs (run.sh refuses a line whose config is not a file: ninety-sixth
    // hostile round, N1); the stub below reads none.
    for c in ["a.toml", "b.toml"] {
        std::fs::write(dir.path().join(c), "").unwrap();
    }
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/seeds");
    for script in ["run.sh", "park.sh", "links.sh"] {
        std::fs::copy(scripts.join(script), seeds.join(script)).unwrap();
    }
    std::fs::write(
        seeds.join("queue.txt"),
        "# a comment\nfirst | a.toml | experiments/x | sweep.seeds=[1]\n\
         last | b.toml | experiments/x | sweep.seeds=[2]",
    )
    .unwrap();
    let stub = dir.path().join("stub.sh");
    std::fs::write(
        &stub,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then\n  [ -z \"$REFUSE_START\" ] || {{ echo \"error: $REFUSE_START\" >&2; exit 2; }}\n  exit 0\nfi\ncase \" $* \" in *\" --dry-run \"*)\n  [ -z \"$REFUSE_DRY\" ] || {{ echo \"error: $REFUSE_DRY\" >&2; exit 2; }}\n  exit 0 ;;\nesac\necho \"$*\" >> {}\n",
            dir.path().join("calls.log").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, stub)
}

fn run(dir: &Path, stub: &Path, only: Option<&str>) -> (Output, String) {
    let mut cmd = Command::new("bash");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/data");
    cmd.arg("experiments/seeds/run.sh")
        .current_dir(dir)
        .env("NTK_TRAIN_BIN", stub)
        .env("NTK_DATA_DIR", data)
        .env_remove("SEEDS_ONLY")
        .env_remove("SEEDS_EXPORT_ONLY");
    if let Some(p) = only {
        cmd.env("SEEDS_ONLY", p);
    }
    let out = cmd.output().unwrap();
    let calls = std::fs::read_to_string(dir.join("calls.log")).unwrap_or_default();
    let _ = std::fs::remove_file(dir.join("calls.log"));
    (out, calls)
}

#[test]
fn the_queue_reads_its_last_line_and_refuses_a_pattern_naming_none() {
    let _guard = serial();
    let (dir, stub) = tree();
    let (o, calls) = run(dir.path(), &stub, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        calls.contains("--config a.toml --out runs/seeds/first"),
        "{calls}"
    );
    assert!(
        calls.contains("--config b.toml --out runs/seeds/last --resume --set sweep.seeds=[2]"),
        "the last line, without a newline: {calls}"
    );
    let (o, calls) = run(dir.path(), &stub, Some("l*"));
    assert!(o.status.success());
    assert_eq!(calls.lines().count(), 1, "{calls}");
    for pattern in ["nosuch", "first,nosuch"] {
        let (o, calls) = run(dir.path(), &stub, Some(pattern));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{pattern}: {err}");
        assert!(err.contains("'nosuch' names no line"), "{err}");
        assert!(
            calls.is_empty(),
            "nothing trained before the refusal: {calls}"
        );
    }
}

/// The `--set` column is read word by word with no glob expansion (sixth hostile round): a
/// file named like a glob's match in the working directory does not replace the value.
#[test]
fn the_set_column_is_not_glob_expanded() {
    let _guard = serial();
    let (dir, stub) = tree();
    std::fs::write(dir.path().join("sweep.seeds=2"), "").unwrap();
    let (o, calls) = run(dir.path(), &stub, Some("last"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(calls.contains("--set sweep.seeds=[2]"), "{calls}");
}

/// Ninth hostile round: two lines with one name trained two configs into one directory, and
/// the second, refused there, exported the first's runs into its own experiment; a name with
/// `..` trained outside runs/seeds. Names are plain and once each, checked before any
/// training; a line whose sweep fails exports nothing.
#[test]
fn names_are_plain_and_unique_and_a_failed_line_exports_nothing() {
    let _guard = serial();
    let (dir, stub) = tree();
    let queue = dir.path().join("experiments/seeds/queue.txt");
    for (text, says) in [
        (
            "a | a.toml | experiments/x | sweep.seeds=[1]\na | b.toml | experiments/y | sweep.seeds=[1]\n",
            "the name 'a' is given to two lines",
        ),
        (
            "../../out | a.toml | experiments/x | sweep.seeds=[1]\n",
            "line name '../../out': a plain name",
        ),
        // One experiment twice on a line, in two spellings (hundred-and-thirty-fifth hostile
        // round, second review, N2: its runs were exported twice).
        (
            "a | a.toml | experiments/x,experiments/./x | sweep.seeds=[1]\n",
            "line 'a': the experiment directory 'experiments/./x' is listed already on this \
             line (as 'experiments/x')",
        ),
    ] {
        std::fs::write(&queue, text).unwrap();
        let (o, calls) = run(dir.path(), &stub, None);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(calls.is_empty(), "nothing trained: {calls}");
    }
    // A sweep that fails (the stub exits 1) leaves its finished runs where they are.
    std::fs::write(&queue, "first | a.toml | experiments/x | sweep.seeds=[1]\n").unwrap();
    let run_dir = dir.path().join("runs/seeds/first/runs/r1");
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::write(run_dir.join("summary.json"), "{}").unwrap();
    let failing = dir.path().join("fail.sh");
    // It starts (--version, which run.sh asks first), then fails the sweep.
    std::fs::write(
        &failing,
        "#!/bin/sh\n[ \"$1\" = --version ] && exit 0\ncase \" $* \" in *\" --dry-run \"*) exit 0 ;; esac\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (o, _) = run(dir.path(), &failing, None);
    let err = String::from_utf8_lossy(&o.stderr);
    // The queue goes on past it and ends with status 1, counting it (twenty-first hostile
    // round, N2: it ended with status 0).
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("nothing exported") && err.contains("1 line(s) failed"),
        "{err}"
    );
    assert!(!dir.path().join("experiments/x/runs/r1").exists());
    // A run the tool refuses as a new entry of the experiment's runs/ (its dry run: here a
    // point and seed another run there holds) is not exported (twenty-second hostile round,
    // D2: exported, and collect.sh then refused the directory).
    let refusing = dir.path().join("refusing.sh");
    std::fs::write(
        &refusing,
        "#!/bin/sh
[ \"$1\" = run ] && { echo 'error: mine records this point and seed already' >&2; \
         exit 2; }
exit 0
",
    )
    .unwrap();
    std::fs::set_permissions(&refusing, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (o, _) = run(dir.path(), &refusing, None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("not exported: mine records this point and seed already"),
        "{err}"
    );
    assert!(!dir.path().join("experiments/x/runs/r1").exists());
    // A dry run that cannot run (the data set not on this machine, no tool built) does not
    // stop the export: it copies files and needs neither (twenty-third hostile round, D6).
    let unable = dir.path().join("unable.sh");
    std::fs::write(
        &unable,
        "#!/bin/sh
[ \"$1\" = run ] && { echo 'error: /nonexistent/digits/digits.csv: file not found' >&2; \
         exit 2; }
exit 0
",
    )
    .unwrap();
    std::fs::set_permissions(&unable, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (o, _) = run(dir.path(), &unable, None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("exported without the duplicate check")
            && err.contains("digits.csv: file not found"),
        "{err}"
    );
    let exported = dir.path().join("experiments/x/runs/r1");
    assert!(exported.join("summary.json").exists(), "{err}");
    std::fs::remove_dir_all(&exported).unwrap();
    // Once the line succeeds, its runs are exported.
    let (o, _) = run(dir.path(), &stub, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        dir.path()
            .join("experiments/x/runs/r1/summary.json")
            .exists()
    );
}

/// Ninth hostile round, Q06: a `SEEDS_THREADS` that is no count (it becomes
/// RAYON_NUM_THREADS and OPENBLAS_NUM_THREADS, which both ignore then) is refused by name
/// before any training.
#[test]
fn seeds_threads_is_a_count() {
    let _guard = serial();
    let (dir, stub) = tree();
    for bad in ["abc", "0", "-1", "1.5"] {
        let out = Command::new("bash")
            .arg("experiments/seeds/run.sh")
            .current_dir(dir.path())
            .env("NTK_TRAIN_BIN", &stub)
            .env("SEEDS_THREADS", bad)
            .env_remove("SEEDS_ONLY")
            .env_remove("SEEDS_EXPORT_ONLY")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {err}");
        assert!(
            err.contains(&format!("SEEDS_THREADS={bad}: expected a count")),
            "{err}"
        );
        assert!(
            !dir.path().join("calls.log").exists(),
            "{bad:?}: nothing trained"
        );
    }
}

/// Tenth hostile round: a SEEDS_THREADS that is a count but one ntk-train refuses (beyond 64
/// threads a CPU) failed every line of the queue, each naming RAYON_NUM_THREADS, and the
/// queue ended "queue done", exit 0. run.sh asks the tool to start first (`--version`, under
/// the thread counts it exports) and stops there, exit 2, naming SEEDS_THREADS and the
/// tool's reason; nothing trained.
#[test]
fn a_thread_count_the_tool_refuses_stops_the_queue_first() {
    let _guard = serial();
    let (dir, stub) = tree();
    let out = Command::new("bash")
        .arg("experiments/seeds/run.sh")
        .current_dir(dir.path())
        .env("NTK_TRAIN_BIN", &stub)
        .env("SEEDS_THREADS", "1000")
        .env(
            "REFUSE_START",
            "RAYON_NUM_THREADS=1000: more than 64 worker threads",
        )
        .env_remove("SEEDS_ONLY")
        .env_remove("SEEDS_EXPORT_ONLY")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refuses to start with SEEDS_THREADS=1000")
            && err.contains("RAYON_NUM_THREADS=1000: more than 64"),
        "{err}"
    );
    assert!(!err.contains("queue done"), "{err}");
    assert!(!dir.path().join("calls.log").exists(), "nothing trained");
    // The real tool refuses such a count first thing, --version included.
    let real = Command::new(env!("CARGO_BIN_EXE_ntk-train"))
        .arg("--version")
        .env("RAYON_NUM_THREADS", "100000")
        .output()
        .unwrap();
    assert_eq!(real.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&real.stderr).contains("RAYON_NUM_THREADS=100000"));
}

/// Eleventh hostile round, Q01: exporting a line's finished run into an experiment whose
/// `runs/` already held a run of the same id made otherwise (a committed 5-epoch run; the
/// queue's trained 2) overwrote its files without a word, exit 0. Such a run (or a symbolic
/// link in its place) is left as it is, said, and the queue ends with status 1; files equal
/// to the run's (an earlier export of it) are no clash, and a new id is exported.
#[test]
fn eleventh_review_an_export_never_replaces_a_run_it_did_not_make() {
    let _guard = serial();
    let (dir, stub) = tree();
    let d = dir.path();
    for (id, metrics) in [("taken", "queue's\n"), ("same", "same\n"), ("new", "new\n")] {
        let run = d.join("runs/seeds/first/runs").join(id);
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("summary.json"), "{}\n").unwrap();
        std::fs::write(run.join("metrics.csv"), metrics).unwrap();
    }
    let x = d.join("experiments/x/runs");
    for (id, metrics) in [("taken", "committed\n"), ("same", "same\n")] {
        std::fs::create_dir_all(x.join(id)).unwrap();
        std::fs::write(x.join(id).join("metrics.csv"), metrics).unwrap();
    }
    let export = |only: &str| {
        Command::new("bash")
            .arg("experiments/seeds/run.sh")
            .current_dir(d)
            .env("NTK_TRAIN_BIN", &stub)
            .env("SEEDS_EXPORT_ONLY", "1")
            .env("SEEDS_ONLY", only)
            .output()
            .unwrap()
    };
    let out = export("first");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("experiments/x/runs/taken holds a metrics.csv that is not")
            && err.contains("not replaced")
            && err.contains("1 run(s) not exported"),
        "{err}"
    );
    let read = |id: &str, f: &str| std::fs::read_to_string(x.join(id).join(f)).ok();
    assert_eq!(read("taken", "metrics.csv").as_deref(), Some("committed\n"));
    assert_eq!(read("taken", "summary.json"), None, "nothing mixed in");
    assert_eq!(read("same", "summary.json").as_deref(), Some("{}\n"));
    assert_eq!(read("new", "metrics.csv").as_deref(), Some("new\n"));
    // A symbolic link where the run would go is not written through.
    std::fs::remove_dir_all(x.join("taken")).unwrap();
    let elsewhere = d.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, x.join("taken")).unwrap();
    let out = export("first");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a symbolic link"));
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    // Without the clash, an export run again is idempotent and ends with 0.
    std::fs::remove_file(x.join("taken")).unwrap();
    for _ in 0..2 {
        let out = export("first");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(read("taken", "metrics.csv").as_deref(), Some("queue's\n"));
}

/// Issue 65, round 73 D2: a regular file where a line's run is exported
/// (`<experiment>/runs/<run id>`) ended the whole queue at `mkdir -p` (`set -e`): no later
/// line trained, no summary line, only mkdir's message. It is refused by name and counted in
/// "run(s) not exported"; the file is kept, the next line trains and exports, and the queue
/// ends with status 1.
#[test]
fn a_file_at_an_export_place_is_refused_and_the_queue_goes_on() {
    let _guard = serial();
    let (dir, stub) = tree();
    let d = dir.path();
    for (line, id) in [("first", "r1"), ("last", "r2")] {
        let run = d.join("runs/seeds").join(line).join("runs").join(id);
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("summary.json"), "{}\n").unwrap();
    }
    let x = d.join("experiments/x/runs");
    std::fs::create_dir_all(&x).unwrap();
    std::fs::write(x.join("r1"), "not a run\n").unwrap();
    let (o, calls) = run(d, &stub, None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("experiments/x/runs/r1 is a regular file")
            && err.contains("not replaced")
            && err.contains("1 run(s) not exported"),
        "{err}"
    );
    assert!(
        calls.contains("--out runs/seeds/last --resume"),
        "the next line: {calls}"
    );
    assert_eq!(
        std::fs::read_to_string(x.join("r1")).unwrap(),
        "not a run\n"
    );
    assert!(x.join("r2/summary.json").is_file(), "{err}");
}

/// Issue 65, round 73 D3: an export went through a symbolic link at `<experiment>/runs` into
/// the foreign directory it points to (the check of a link stopped at the run directory
/// itself). A link anywhere on the way, here at `runs/`, is refused by name and counted;
/// nothing is written into its target.
#[test]
fn an_export_is_never_written_through_a_linked_runs() {
    let _guard = serial();
    let (dir, stub) = tree();
    let d = dir.path();
    let run_dir = d.join("runs/seeds/first/runs/r1");
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::write(run_dir.join("summary.json"), "{}\n").unwrap();
    let foreign = d.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("keep.txt"), "keep\n").unwrap();
    std::fs::create_dir_all(d.join("experiments/x")).unwrap();
    std::os::unix::fs::symlink(&foreign, d.join("experiments/x/runs")).unwrap();
    let (o, _) = run(d, &stub, Some("first"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("experiments/x/runs is a symbolic link")
            && err.contains("not exported")
            && err.contains("1 run(s) not exported"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&foreign).unwrap().count(),
        1,
        "only keep.txt"
    );
    assert!(!foreign.join("r1").exists());
}

/// Issue 65, round 74 D1: an export copied each file through the fixed name
/// `<file>.seeds-tmp` beside it, so a user's file there was overwritten and moved in as the
/// run's file, without a word. Each copy now goes through a new temporary file of its own
/// (mktemp): a user's `summary.json.seeds-tmp` in an existing, equal export is kept as it
/// is, the export still succeeds, and no temporary file is left behind.
#[test]
fn a_users_file_at_the_old_copy_name_is_kept_by_an_export() {
    let _guard = serial();
    let (dir, stub) = tree();
    let d = dir.path();
    let run_dir = d.join("runs/seeds/first/runs/r1");
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::write(run_dir.join("summary.json"), "{}\n").unwrap();
    std::fs::write(run_dir.join("metrics.csv"), "queue's\n").unwrap();
    let (o, _) = run(d, &stub, Some("first"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let export = d.join("experiments/x/runs/r1");
    assert!(export.join("summary.json").is_file());
    std::fs::write(export.join("summary.json.seeds-tmp"), "user notes\n").unwrap();
    let (o, _) = run(d, &stub, Some("first"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("not replaced"), "{err}");
    let read = |f: &str| std::fs::read_to_string(export.join(f)).unwrap();
    assert_eq!(read("summary.json.seeds-tmp"), "user notes\n");
    assert_eq!(read("summary.json"), "{}\n");
    assert_eq!(read("metrics.csv"), "queue's\n");
    let hidden: Vec<_> = std::fs::read_dir(&export)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "temporary files left: {hidden:?}");
}

/// `bash experiments/seeds/park.sh ARG` in `dir`, whatever its status.
fn park_status(dir: &Path, arg: &str) -> Output {
    Command::new("bash")
        .arg("experiments/seeds/park.sh")
        .arg(arg)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// `bash experiments/seeds/park.sh ARG` in `dir`, which must succeed.
fn park(dir: &Path, arg: &str) -> Output {
    let out = park_status(dir, arg);
    assert!(
        out.status.success(),
        "park.sh {arg}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The queue's unfinished run: a 4-epoch digits run, stopped after epoch 2 at
/// runs/seeds/last/runs/r1 in `dir`. Its config and directory.
fn stopped_run(dir: &Path) -> (TrainConfig, PathBuf) {
    let mut cfg = digits_config();
    cfg.train.epochs = Some(4);
    cfg.data.n = 300;
    let run_dir = dir.join("runs/seeds/last/runs/r1");
    std::fs::create_dir_all(&run_dir).unwrap();
    train(
        &cfg,
        &run_dir,
        RunOptions {
            resume: false,
            stop_after: Some(2),
        },
    );
    assert!(!run_dir.join("summary.json").exists());
    (cfg, run_dir)
}

/// A tar of the directory `stage` at `tarball`.
fn tar(stage: &Path, tarball: &Path) {
    std::fs::create_dir_all(tarball.parent().unwrap()).unwrap();
    let ok = Command::new("tar")
        .arg("-cf")
        .arg(tarball)
        .arg("-C")
        .arg(stage)
        .arg(".")
        .status()
        .unwrap();
    assert!(ok.success());
}

/// A machine does not outlive its session, and runs/ is not committed: an unfinished run of
/// the queue is parked (its files and its current checkpoint) into experiments/seeds/parked,
/// restored on the next machine (by run.sh too) where the run is missing, never over a run
/// there, and resumes to the uninterrupted run's numbers bit for bit; once finished, `save`
/// drops it.
#[test]
fn a_parked_run_resumes_on_another_machine_bit_for_bit() {
    let _guard = serial();
    let (dir, stub) = tree();
    let (cfg, run_dir) = stopped_run(dir.path());
    let whole = tempfile::tempdir().unwrap();
    train(&cfg, whole.path(), RunOptions::default());
    let o = park(dir.path(), "save");
    let tarball = dir.path().join("experiments/seeds/parked/last/r1.tar");
    assert!(tarball.is_file(), "{}", String::from_utf8_lossy(&o.stdout));
    // The next machine: no runs/; run.sh restores before it trains.
    std::fs::remove_dir_all(dir.path().join("runs")).unwrap();
    // Ninetieth hostile round, N4: a tarball whose checkpoint was damaged (a byte of a
    // file's data changed, the archive still readable) is not restored: moved aside, said,
    // the status 1, no run made.
    let packed = std::fs::read(&tarball).unwrap();
    let at = {
        // The model file's header: its name, NUL-padded (in checkpoint.json's text the name
        // is followed by a quote); its data starts at the next 512-byte block.
        let name = packed
            .windows(10)
            .position(|w| w == b"model.bpk\0")
            .expect("the model file's header in the tarball");
        (name / 512 + 1) * 512 + 100
    };
    let mut damaged = packed.clone();
    damaged[at] ^= 0x55;
    std::fs::write(&tarball, &damaged).unwrap();
    // An earlier session's damaged copy is kept: this one goes to the next free name
    // (ninety-second hostile round, D3: "moved" was said where nothing moved).
    let earlier = dir
        .path()
        .join("experiments/seeds/parked/last/r1.tar.damaged");
    std::fs::write(&earlier, "an earlier session's").unwrap();
    let o = park_status(dir.path(), "restore");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("r1.tar: damaged") && err.contains("moved to") && err.contains(".damaged.2"),
        "{err}"
    );
    assert!(!run_dir.exists() && !tarball.exists());
    let aside = dir
        .path()
        .join("experiments/seeds/parked/last/r1.tar.damaged.2");
    assert_eq!(std::fs::read(&aside).unwrap(), damaged);
    assert_eq!(std::fs::read(&earlier).unwrap(), b"an earlier session's");
    std::fs::remove_file(&aside).unwrap();
    std::fs::remove_file(&earlier).unwrap();
    // A file its sums do not list is no part of the parked run (ninety-second, N3).
    let stage = tempfile::tempdir().unwrap();
    std::fs::write(&tarball, &packed).unwrap();
    let ok = Command::new("tar")
        .arg("-xf")
        .arg(&tarball)
        .arg("-C")
        .arg(stage.path())
        .status()
        .unwrap();
    assert!(ok.success());
    std::fs::write(stage.path().join("extra.bin"), "not parked").unwrap();
    tar(stage.path(), &tarball);
    let o = park_status(dir.path(), "restore");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("r1.tar: damaged"), "{err}");
    assert!(!run_dir.exists());
    std::fs::remove_file(
        dir.path()
            .join("experiments/seeds/parked/last/r1.tar.damaged"),
    )
    .unwrap();
    std::fs::write(&tarball, &packed).unwrap();
    let (o, calls) = run(dir.path(), &stub, Some("last"));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(said.contains("restored runs/seeds/last/runs/r1"), "{said}");
    assert!(calls.contains("--out runs/seeds/last --resume"), "{calls}");
    assert!(run_dir.join("checkpoint.json").is_file());
    // A run the machine has is kept: restore does not replace it.
    std::fs::write(run_dir.join("mine.txt"), "kept").unwrap();
    let said = String::from_utf8_lossy(&park(dir.path(), "restore").stdout).into_owned();
    assert!(said.contains("exists here: kept"), "{said}");
    assert!(run_dir.join("mine.txt").is_file());
    std::fs::remove_file(run_dir.join("mine.txt")).unwrap();
    // The restored run continues to the uninterrupted run's numbers.
    train(
        &cfg,
        &run_dir,
        RunOptions {
            resume: true,
            stop_after: None,
        },
    );
    let read = |d: &Path| -> Vec<_> {
        read_csv::<EpochMetrics>(&d.join("metrics.csv"))
            .unwrap()
            .iter()
            .map(numbers)
            .collect()
    };
    assert_eq!(read(&run_dir), read(whole.path()));
    // Finished here: the parked copy is dropped.
    let said = String::from_utf8_lossy(&park(dir.path(), "save").stdout).into_owned();
    assert!(said.contains("finished here, dropped"), "{said}");
    assert!(!tarball.exists());
    // A committed tarball holding a link (or `..`, or an absolute name) is not unpacked: it
    // could write outside its run. Said, the status 1, nothing created.
    let stage = dir.path().join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::write(stage.join("checkpoint.json"), "{}").unwrap();
    std::os::unix::fs::symlink("/etc", stage.join("checkpoints")).unwrap();
    tar(
        &stage,
        &dir.path().join("experiments/seeds/parked/other/r2.tar"),
    );
    let o = park_status(dir.path(), "restore");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("holds a link"), "{err}");
    assert!(!dir.path().join("runs/seeds/other/runs/r2").exists());
    // Moved aside, kept: the next restore goes on (ninety-third hostile round, N7).
    let aside = dir
        .path()
        .join("experiments/seeds/parked/other/r2.tar.damaged");
    assert!(err.contains("moved to") && aside.is_file(), "{err}");
    let o = park_status(dir.path(), "restore");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Thirty-first hostile round: D1, a machine holding an earlier copy of a parked run (kept
/// by `restore`, as documented) had its checkpoint parked over the later one by `save`,
/// without a word; D2, `restore` stopped at the first line it could not make a directory
/// for, and the tarballs after it were neither restored nor named.
#[test]
fn a_parked_checkpoint_is_never_replaced_by_an_earlier_one_and_restore_goes_on() {
    let _guard = serial();
    let (dir, _stub) = tree();
    stopped_run(dir.path());
    // The parked copy is further: epoch 150.
    let ahead = dir.path().join("ahead");
    std::fs::create_dir_all(ahead.join("checkpoints/epoch-00150")).unwrap();
    std::fs::write(
        ahead.join("checkpoint.json"),
        r#"{"epoch": 150, "dir": "checkpoints/epoch-00150"}"#,
    )
    .unwrap();
    let tarball = dir.path().join("experiments/seeds/parked/last/r1.tar");
    tar(&ahead, &tarball);
    let before = std::fs::read(&tarball).unwrap();
    let run_park = |arg: &str| park_status(dir.path(), arg);
    let o = run_park("restore");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("at epoch 2: kept") && err.contains("is ahead (epoch 150)"),
        "{err}"
    );
    let o = run_park("save");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("holds epoch 150") && err.contains("is at epoch 2"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&tarball).unwrap(),
        before,
        "the parked checkpoint kept"
    );
    // D2: a line whose directory cannot be made is said, and the next line is restored.
    std::fs::remove_dir_all(dir.path().join("runs")).unwrap();
    std::fs::create_dir_all(dir.path().join("runs/seeds")).unwrap();
    std::fs::write(dir.path().join("runs/seeds/first"), "a file in the way").unwrap();
    tar(
        &ahead,
        &dir.path().join("experiments/seeds/parked/first/r0.tar"),
    );
    let o = run_park("restore");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("parked/first/r0.tar: cannot make runs/seeds/first/runs"),
        "{err}"
    );
    assert!(
        dir.path()
            .join("runs/seeds/last/runs/r1/checkpoint.json")
            .is_file()
    );
}

/// Issue 65, round 73 D3: `park.sh restore` unpacked a parked run through a symbolic link at
/// `runs/seeds/<line>/runs` into the foreign directory it points to (the check of a link
/// stopped at the run directory itself). Refused by name, the status 1, nothing written into
/// the link's target; without the link the run is restored.
#[test]
fn a_parked_run_is_never_restored_through_a_linked_runs() {
    let _guard = serial();
    let (dir, _stub) = tree();
    let d = dir.path();
    let stage = d.join("stage");
    std::fs::create_dir_all(stage.join("checkpoints/epoch-00003")).unwrap();
    std::fs::write(
        stage.join("checkpoint.json"),
        r#"{"epoch": 3, "dir": "checkpoints/epoch-00003"}"#,
    )
    .unwrap();
    tar(&stage, &d.join("experiments/seeds/parked/last/r1.tar"));
    let foreign = d.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("keep.txt"), "keep\n").unwrap();
    std::fs::create_dir_all(d.join("runs/seeds/last")).unwrap();
    std::os::unix::fs::symlink(&foreign, d.join("runs/seeds/last/runs")).unwrap();
    let o = park_status(d, "restore");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("runs/seeds/last/runs is a symbolic link") && err.contains("not restored"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&foreign).unwrap().count(),
        1,
        "only keep.txt"
    );
    std::fs::remove_file(d.join("runs/seeds/last/runs")).unwrap();
    park(d, "restore");
    assert!(d.join("runs/seeds/last/runs/r1/checkpoint.json").is_file());
}

/// An unfinished run at runs/seeds/<line>/runs/<id> in `dir` with a checkpoint.json naming
/// checkpoints/epoch-00003 (the directory itself not made). Its directory.
fn unfinished_run(dir: &Path, line: &str, id: &str) -> PathBuf {
    let run_dir = dir.join("runs/seeds").join(line).join("runs").join(id);
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::write(
        run_dir.join("checkpoint.json"),
        r#"{"epoch": 3, "dir": "checkpoints/epoch-00003"}"#,
    )
    .unwrap();
    std::fs::write(run_dir.join("metrics.csv"), "m\n").unwrap();
    run_dir
}

/// Issue 65, round 74 D2: `park.sh save` followed a symbolic link at
/// `experiments/seeds/parked/<line>` that `restore` refuses: it wrote `<run id>.tar` into
/// the foreign directory the link points to, and removed a user's `<run id>.tar` there as
/// "finished here, dropped" when a run of that id had finished here. Nothing is written or
/// removed through a link anywhere in `parked/<line>/<run id>.tar`: said, the run not parked
/// (the finished one not dropped), the status 1; without the link the run is parked.
#[test]
fn save_never_writes_or_removes_through_a_linked_parked_line() {
    let _guard = serial();
    let (dir, _stub) = tree();
    let d = dir.path();
    let finished = d.join("runs/seeds/last/runs/r1");
    std::fs::create_dir_all(&finished).unwrap();
    std::fs::write(finished.join("summary.json"), "{}\n").unwrap();
    let unfinished = unfinished_run(d, "last", "r2");
    std::fs::create_dir_all(unfinished.join("checkpoints/epoch-00003")).unwrap();
    std::fs::write(unfinished.join("checkpoints/epoch-00003/w.bin"), "w").unwrap();
    let foreign = d.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("r1.tar"), "a user's archive\n").unwrap();
    let parked = d.join("experiments/seeds/parked");
    std::fs::create_dir_all(&parked).unwrap();
    std::os::unix::fs::symlink(&foreign, parked.join("last")).unwrap();
    let o = park_status(d, "save");
    let err = String::from_utf8_lossy(&o.stderr);
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{said}{err}");
    assert!(
        err.contains("experiments/seeds/parked/last is a symbolic link")
            && err.contains("runs/seeds/last/runs/r2")
            && err.contains("not parked")
            && err.contains("not dropped"),
        "{err}"
    );
    assert!(!said.contains("finished here, dropped"), "{said}");
    assert_eq!(
        std::fs::read_to_string(foreign.join("r1.tar")).unwrap(),
        "a user's archive\n",
        "the user's archive kept"
    );
    assert_eq!(
        std::fs::read_dir(&foreign).unwrap().count(),
        1,
        "only the user's r1.tar"
    );
    // Without the link the unfinished run is parked, in a directory of its own.
    std::fs::remove_file(parked.join("last")).unwrap();
    park(d, "save");
    assert!(parked.join("last/r2.tar").is_file());
    assert!(foreign.join("r1.tar").is_file());
}

/// Issue 65, round 74 D2: `park.sh save` of a run whose `checkpoints/` was a symbolic link
/// to a foreign directory packed that directory's files into the archive meant to be
/// committed (only the checkpoint directory itself was checked for a link). A link anywhere
/// in `runs/seeds/<line>/runs/<id>/checkpoints/epoch-NNNNN` below `runs/` is refused by
/// name, the status 1, no archive made; with a directory of its own the run is parked.
#[test]
fn save_never_packs_a_checkpoint_through_a_link() {
    let _guard = serial();
    let (dir, _stub) = tree();
    let d = dir.path();
    let run_dir = unfinished_run(d, "last", "r1");
    let foreign = d.join("foreign");
    std::fs::create_dir_all(foreign.join("epoch-00003")).unwrap();
    std::fs::write(foreign.join("epoch-00003/s.bin"), "secret").unwrap();
    std::os::unix::fs::symlink(&foreign, run_dir.join("checkpoints")).unwrap();
    let o = park_status(d, "save");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("runs/seeds/last/runs/r1/checkpoints is a symbolic link")
            && err.contains("not parked")
            && err.contains("1 run(s) not parked"),
        "{err}"
    );
    let tarball = d.join("experiments/seeds/parked/last/r1.tar");
    assert!(!tarball.exists(), "no archive of the foreign files");
    // A checkpoint directory of the run's own is parked.
    std::fs::remove_file(run_dir.join("checkpoints")).unwrap();
    std::fs::create_dir_all(run_dir.join("checkpoints/epoch-00003")).unwrap();
    std::fs::write(run_dir.join("checkpoints/epoch-00003/w.bin"), "w").unwrap();
    // Eighty-sixth hostile round, D4: a link inside it was packed and "saved", and restore
    // refused the tarball. Said, not parked.
    std::os::unix::fs::symlink(
        foreign.join("epoch-00003/s.bin"),
        run_dir.join("checkpoints/epoch-00003/s.bin"),
    )
    .unwrap();
    let o = park_status(d, "save");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("s.bin is a symbolic link, which restore refuses")
            && err.contains("not parked"),
        "{err}"
    );
    assert!(!tarball.exists());
    std::fs::remove_file(run_dir.join("checkpoints/epoch-00003/s.bin")).unwrap();
    // Eighty-seventh hostile round, D2: a FIFO there was packed and "saved" the same way.
    let fifo = run_dir.join("checkpoints/epoch-00003/ff");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let o = park_status(d, "save");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("ff is a FIFO, which restore refuses") && err.contains("not parked"),
        "{err}"
    );
    assert!(!tarball.exists());
    std::fs::remove_file(&fifo).unwrap();
    park(d, "save");
    assert!(tarball.is_file());
}

/// experiments/seeds/collect.sh takes each name asked for only as a whole line of its list,
/// and checks them all before it collects anything (thirty-sixth hostile round, D4: `""`
/// collected nothing with exit 0; `"fig3/mnist x"` collected fig3/mnist, then failed); a
/// last line without a newline is read.
#[test]
fn collect_takes_whole_names_and_checks_them_before_collecting() {
    let _guard = serial();
    let (dir, stub) = tree();
    let seeds = dir.path().join("experiments/seeds");
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/seeds");
    std::fs::copy(scripts.join("collect.sh"), seeds.join("collect.sh")).unwrap();
    for e in ["fig3/mnist", "fig3/mnist_60k"] {
        let run = dir.path().join("experiments").join(e).join("runs/a");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("config.toml"), "").unwrap();
    }
    // Hundred-and-twenty-ninth hostile round, N4: an empty runs/ and a linked one.
    std::fs::create_dir_all(dir.path().join("experiments/empty/runs")).unwrap();
    std::fs::create_dir_all(dir.path().join("experiments/linked_runs")).unwrap();
    std::os::unix::fs::symlink(
        "../fig3/mnist/runs",
        dir.path().join("experiments/linked_runs/runs"),
    )
    .unwrap();
    std::os::unix::fs::symlink("mnist", dir.path().join("experiments/fig3/linked")).unwrap();
    std::fs::write(
        seeds.join("collected.txt"),
        "# a comment\nfig3/mnist - -\nfig3/mnist_60k log mixed",
    )
    .unwrap();
    let collect = |args: &[&str]| {
        let out = Command::new("bash")
            .arg("experiments/seeds/collect.sh")
            .args(args)
            .current_dir(dir.path())
            .env("NTK_TRAIN_BIN", &stub)
            .output()
            .unwrap();
        let calls = std::fs::read_to_string(dir.path().join("calls.log")).unwrap_or_default();
        let _ = std::fs::remove_file(dir.path().join("calls.log"));
        (out, calls)
    };
    for bad in [
        &[""][..],
        &["fig3/mnist x"],
        &["fig3/mnist", "fig3"],
        &["fig3/mnist "],
    ] {
        let (o, calls) = collect(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("no experiment"),
            "{bad:?}: {o:?}"
        );
        assert!(
            calls.is_empty(),
            "{bad:?} collected before refusing: {calls}"
        );
    }
    let (o, calls) = collect(&["fig3/mnist_60k"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        calls,
        "collect experiments/fig3/mnist_60k --allow-mixed\n\
         collect experiments/fig3/mnist_60k --log --allow-mixed\n"
    );
    let (o, calls) = collect(&[]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(calls.lines().count(), 3, "{calls}");
    // Without a built ntk-train: said as run.sh says it, status 2 (eighty-first hostile
    // round, N7: bash's "No such file or directory", status 127).
    let o = Command::new("bash")
        .arg("experiments/seeds/collect.sh")
        .current_dir(dir.path())
        .env("NTK_TRAIN_BIN", dir.path().join("no-such-binary"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cargo build -p ntk-train first"),
        "{o:?}"
    );
    // A relative NTK_TRAIN_BIN is read from the caller's directory, not the tree's root the
    // script moves to (eighty-second hostile round, N4).
    let o = Command::new("bash")
        .arg(seeds.join("collect.sh"))
        .arg("fig3/mnist")
        .current_dir(dir.path().join("experiments"))
        .env("NTK_TRAIN_BIN", "../stub.sh")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let calls = std::fs::read_to_string(dir.path().join("calls.log")).unwrap_or_default();
    assert_eq!(calls, "collect experiments/fig3/mnist\n", "{o:?}");
    // Eighty-seventh hostile round, N2: CRLF line ends are named (the carriage return was
    // printed raw inside the message), and an experiment listed twice is refused (it was
    // collected twice with no word); a list of comments alone is refused; nothing collected
    // in any case.
    let _ = std::fs::remove_file(dir.path().join("calls.log"));
    for (list, says) in [
        (
            "fig3/mnist - -\r\n",
            "line 1 ends in a carriage return (CRLF line ends)",
        ),
        (
            "fig3/mnist - -\n# x\nfig3/mnist log -\n",
            "line 3: experiment 'fig3/mnist' is listed already (line 1)",
        ),
        // Hundred-and-thirty-fifth hostile round, second review, N4: a bad column is named
        // by its line's number, as every other refusal is.
        (
            "fig3/mnist loge -\n",
            "line 1 ('fig3/mnist loge -'): columns 2-3 must be log|- and mixed|-",
        ),
        // Eighty-eighth hostile round, N1: comments alone collected nothing, status 0.
        (
            "# nothing yet\n\n",
            "no experiment listed (only comments or blank lines)",
        ),
        // Hundred-and-twenty-fifth hostile round, N3: `fig3/mnist` and `./fig3/mnist` were
        // collected twice; every other spelling of a directory is refused too.
        (
            "fig3/mnist - -\n./fig3/mnist - -\n",
            "line 2: experiment './fig3/mnist' is not spelled as its directory",
        ),
        (
            "fig3/mnist/ - -\n",
            "line 1: experiment 'fig3/mnist/' is not spelled",
        ),
        (
            "fig3//mnist - -\n",
            "line 1: experiment 'fig3//mnist' is not spelled",
        ),
        // Hundred-and-twenty-sixth, N3: `/fig3/mnist` beside `fig3/mnist`.
        (
            "fig3/mnist - -\n/fig3/mnist - -\n",
            "line 2: experiment '/fig3/mnist' is not spelled as its directory",
        ),
        // Hundred-and-twenty-seventh, N1: the root-relative spelling and a name with no
        // directory were found only when reached, after the lines above were collected.
        (
            "fig3/mnist - -\nexperiments/fig3/mnist_60k - -\n",
            "line 2: experiment 'experiments/fig3/mnist_60k' is spelled from the repository's root",
        ),
        (
            "fig3/mnist - -\nFIG3/mnist - -\n",
            "line 2: experiment 'FIG3/mnist': experiments/FIG3/mnist is no directory",
        ),
        (
            "fig3/mnist - -\n\"fig3/mnist_60k\" - -\n",
            "line 2: experiment '\"fig3/mnist_60k\"': experiments/\"fig3/mnist_60k\" is no directory",
        ),
        // Hundred-and-twenty-eighth, N4: a directory that is no experiment's, and a link to a
        // listed one.
        (
            "fig3/mnist - -\nfig3 - -\n",
            "line 2: experiment 'fig3': experiments/fig3 has no runs/",
        ),
        (
            "fig3/mnist - -\nfig3/mnist/runs - -\n",
            "line 2: experiment 'fig3/mnist/runs': experiments/fig3/mnist/runs has no runs/",
        ),
        (
            "fig3/mnist - -\nempty - -\n",
            "line 2: experiment 'empty': experiments/empty has no runs/ holding a training run",
        ),
        (
            "fig3/mnist - -\nlinked_runs - -\n",
            "line 2: experiment 'linked_runs': experiments/linked_runs/runs is a symbolic link to ../fig3/mnist/runs",
        ),
        (
            "fig3/mnist - -\nfig3/linked - -\n",
            "line 2: experiment 'fig3/linked' is listed already (line 1)",
        ),
    ] {
        std::fs::write(seeds.join("collected.txt"), list).unwrap();
        let (o, calls) = collect(&[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says) && !err.contains('\r'), "{err}");
        assert!(calls.is_empty(), "{calls}");
    }
}

/// A new machine has a line's exported runs (committed under the experiment) but no runs/:
/// run.sh trained them again from epoch 0 (depth 8's two finished 500-epoch seeds, about two
/// hours each). Now each finished run the line plans comes back from its export and the
/// sweep keeps it; an export another config made is not taken: said, removed from runs/seeds
/// again, and trained there.
#[test]
fn finished_runs_come_back_from_their_export_on_a_new_machine() {
    let _guard = serial();
    let (dir, _stub) = tree();
    let d = dir.path();
    std::fs::write(
        d.join("tiny.toml"),
        "[data]\ndataset = \"digits\"\nn = 60\nsubset = \"first\"\n\n[model]\nwidth = 8\n\
         depth = 1\nactivation = \"relu\"\noutput_dim = 10\nseed = 1\n\n[optim]\nlr = 0.1\n\n\
         [train]\nbatch_size = 20\nepochs = 2\ntest_n = 0\n\n[sweep]\ndepths = [1]\n\
         lrs = [0.1]\nseeds = [1, 2]\nfamilies = [{ activation = \"relu\" }]\n",
    )
    .unwrap();
    let queue = d.join("experiments/seeds/queue.txt");
    std::fs::write(&queue, "tiny | tiny.toml | experiments/x |\n").unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_ntk-train"));
    let (o, _) = run(d, bin, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let exported: Vec<PathBuf> = std::fs::read_dir(d.join("experiments/x/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(exported.len(), 2, "{exported:?}");
    let summary = |p: &Path| std::fs::read(p.join("summary.json")).unwrap();
    let before: Vec<Vec<u8>> = exported.iter().map(|p| summary(p)).collect();
    // The next machine: no runs/.
    std::fs::remove_dir_all(d.join("runs")).unwrap();
    let (o, _) = run(d, bin, None);
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        said.matches("restored from its export").count(),
        2,
        "{said}"
    );
    assert!(
        said.contains("0 run(s) trained, 2 already finished"),
        "{said}"
    );
    for (p, b) in exported.iter().zip(&before) {
        let id = p.file_name().unwrap();
        assert_eq!(&summary(&d.join("runs/seeds/tiny/runs").join(id)), b);
        assert_eq!(&summary(p), b, "the export was written again");
    }
    // A line of another config (here lr 0.2 under the same ids, as a changed queue line
    // would make): its export is not taken; trained, and its export refused as before.
    std::fs::remove_dir_all(d.join("runs")).unwrap();
    std::fs::write(
        &queue,
        "tiny | tiny.toml | experiments/x | optim.momentum=0.5\n",
    )
    .unwrap();
    let (o, _) = run(d, bin, None);
    let (said, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(
        err.matches("is not this line's finished run: not restored")
            .count(),
        2,
        "{err}"
    );
    assert!(said.contains("2 run(s) trained"), "{said}");
    for (p, b) in exported.iter().zip(&before) {
        assert_eq!(&summary(p), b, "another config's run replaced the export");
    }
}

/// Eighty-second hostile round, D4: a queue line whose experiment directory was misspelt
/// (`experiments/el` for `experiments/e1`) trained, made that directory by its export, and
/// ended "queue done" with status 0: the experiment never got its seeds. Every listed
/// directory must be there before any training; the queue is refused naming the line.
#[test]
fn a_misspelt_experiment_directory_is_refused_before_training() {
    let _guard = serial();
    let (dir, stub) = tree();
    let queue = dir.path().join("experiments/seeds/queue.txt");
    std::fs::write(
        &queue,
        "first | a.toml | experiments/x | sweep.seeds=[1]\n\
         second | b.toml | experiments/x, experiments/el | sweep.seeds=[2]\n",
    )
    .unwrap();
    let (o, calls) = run(dir.path(), &stub, None);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("line 'second'") && err.contains("'experiments/el' does not exist"),
        "{err}"
    );
    assert!(calls.is_empty(), "trained before refusing: {calls}");
    assert!(!dir.path().join("experiments/el").exists());
    // Ninety-fifth hostile round, D3: a line without its directories (or its config)
    // trained and exported nothing, status 0.
    // The ninety-sixth's N1: a config that is not a file, and an empty name in the list.
    let no_field = "line 'first': no config or no experiment directory";
    for (line, said) in [
        ("first | a.toml", no_field),
        ("first | a.toml |", no_field),
        ("first", no_field),
        ("first |  | experiments/x", no_field),
        (
            "first | none.toml | experiments/x",
            "the config 'none.toml' is not a file",
        ),
        (
            "first | experiments | experiments/x",
            "the config 'experiments' is not a file",
        ),
        (
            "first | a.toml |  ,  ",
            "an empty name in the experiment directory list",
        ),
        // The ninety-seventh's N2: a trailing comma, which `read -a` drops.
        (
            "first | a.toml | experiments/x,",
            "an empty name in the experiment directory list",
        ),
        (
            "first | a.toml | experiments/x , | sweep.seeds=[1]",
            "an empty name in the experiment directory list",
        ),
    ] {
        std::fs::write(&queue, format!("{line}\n")).unwrap();
        let (o, calls) = run(dir.path(), &stub, None);
        assert_eq!(o.status.code(), Some(2), "{line}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(said), "{line}: {err}");
        assert!(calls.is_empty(), "{line}: trained before refusing: {calls}");
    }
    // Eighty-third hostile round, N3: an experiment's runs/ listed in its place exported
    // into runs/runs.
    std::fs::create_dir_all(dir.path().join("experiments/x/runs")).unwrap();
    std::fs::write(
        &queue,
        "first | a.toml | experiments/x/runs/ | sweep.seeds=[1]\n",
    )
    .unwrap();
    let (o, calls) = run(dir.path(), &stub, None);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("a runs/ directory or inside one") && err.contains("'experiments/x'"),
        "{err}"
    );
    assert!(calls.is_empty(), "trained before refusing: {calls}");
    // Eighty-fifth hostile round, N2: other spellings of it, and a directory inside it,
    // judged by the path resolved (through a link too).
    std::fs::create_dir_all(dir.path().join("experiments/x/runs/r1")).unwrap();
    std::os::unix::fs::symlink("x/runs", dir.path().join("experiments/xr")).unwrap();
    for listed in [
        "experiments/x/runs/.",
        "experiments/x/runs//",
        "experiments/x/runs/r1",
        "experiments/xr",
    ] {
        std::fs::write(
            &queue,
            format!("first | a.toml | {listed} | sweep.seeds=[1]\n"),
        )
        .unwrap();
        let (o, calls) = run(dir.path(), &stub, None);
        assert_eq!(o.status.code(), Some(2), "{listed}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("a runs/ directory or inside one") && err.contains("'experiments/x'"),
            "{listed}: {err}"
        );
        assert!(
            calls.is_empty(),
            "{listed}: trained before refusing: {calls}"
        );
    }
}

/// The eighty-ninth hostile review's N9: `park.sh save` passed over a run with epoch
/// checkpoints and no `checkpoint.json` (its first checkpoint cut off before its pointer)
/// with `0 saved` and no word. It is said, and not parked.
#[test]
fn save_says_a_run_whose_pointer_is_missing() {
    let _guard = serial();
    let (dir, _stub) = tree();
    let d = dir.path();
    let run_dir = unfinished_run(d, "last", "r1");
    std::fs::create_dir_all(run_dir.join("checkpoints/epoch-00003")).unwrap();
    std::fs::remove_file(run_dir.join("checkpoint.json")).unwrap();
    let o = park(d, "save");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("runs/seeds/last/runs/r1: epoch checkpoints but no checkpoint.json")
            && err.contains("not parked"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 saved"));
    assert!(!d.join("experiments/seeds/parked/last/r1.tar").exists());
}

/// A line whose config ntk-train refuses stops the queue before any line trains: it failed
/// only at its turn, after the earlier lines had trained and exported (ninety-seventh
/// hostile round, N2). Asked of the tool's dry run, with the line's --set words; only of the
/// lines SEEDS_ONLY selects.
#[test]
fn a_config_the_tool_refuses_stops_the_queue_before_training() {
    let _guard = serial();
    let (dir, stub) = tree();
    let d = dir.path();
    let refused = |only: Option<&str>| {
        let mut cmd = Command::new("bash");
        cmd.arg("experiments/seeds/run.sh")
            .current_dir(d)
            .env("NTK_TRAIN_BIN", &stub)
            .env("REFUSE_DRY", "unknown field `bogus`")
            .env_remove("SEEDS_ONLY")
            .env_remove("SEEDS_EXPORT_ONLY");
        if let Some(p) = only {
            cmd.env("SEEDS_ONLY", p);
        }
        cmd.output().unwrap()
    };
    let o = refused(None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("line 'first': ntk-train refuses it (its dry run): unknown field `bogus`; nothing trained"),
        "{err}"
    );
    assert!(!d.join("calls.log").exists(), "nothing trained");
    let o = refused(Some("last"));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("line 'last'"),
        "{o:?}"
    );
    // The real tool: a config that is not TOML, named with its line.
    std::fs::write(d.join("b.toml"), "[data\n").unwrap();
    let o = Command::new("bash")
        .arg("experiments/seeds/run.sh")
        .current_dir(d)
        .env("NTK_TRAIN_BIN", env!("CARGO_BIN_EXE_ntk-train"))
        .env("SEEDS_ONLY", "last")
        .env_remove("SEEDS_EXPORT_ONLY")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("line 'last': ntk-train refuses it (its dry run): b.toml")
            && err.contains("nothing trained"),
        "{err}"
    );
    assert!(!d.join("runs/seeds/last").exists(), "nothing made: {err}");
}

/// A line whose directory holds what its sweep refuses (here runs another config made; also
/// a point another process is training) fails at its turn, and the queue trains the others:
/// the check before training asks the tool of the config alone, planned into a new place,
/// which it leaves as it found it (ninety-eighth hostile round, D1: such a line stopped the
/// whole queue, nothing trained).
#[test]
fn a_line_whose_directory_its_sweep_refuses_fails_alone() {
    let _guard = serial();
    let (dir, _stub) = tree();
    let d = dir.path();
    let config = "[data]\ndataset = \"digits\"\nn = 60\nsubset = \"first\"\n\n[model]\nwidth = 8\n\
         depth = 1\nactivation = \"relu\"\noutput_dim = 10\nseed = 1\n\n[optim]\nlr = 0.1\n\n\
         [train]\nbatch_size = 20\nepochs = 1\ntest_n = 0\n\n[sweep]\ndepths = [1]\n\
         lrs = [0.1]\nseeds = [1]\nfamilies = [{ activation = \"relu\" }]\n";
    std::fs::write(d.join("a.toml"), config).unwrap();
    std::fs::write(d.join("b.toml"), config).unwrap();
    std::fs::write(
        d.join("experiments/seeds/queue.txt"),
        "la | a.toml | experiments/x | sweep.seeds=[1]\nlb | b.toml | experiments/y | sweep.seeds=[2]\n",
    )
    .unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_ntk-train"));
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/data");
    // la's directory: a run of width 4 under the id the line plans.
    let made = Command::new(bin)
        .args(["sweep", "--config", "a.toml", "--out", "runs/seeds/la"])
        .args(["--set", "sweep.seeds=[1]", "--set", "model.width=4"])
        .current_dir(d)
        .env("NTK_DATA_DIR", &data)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let o = Command::new("bash")
        .arg("experiments/seeds/run.sh")
        .current_dir(d)
        .env("NTK_TRAIN_BIN", bin)
        .env("NTK_DATA_DIR", &data)
        .env("TMPDIR", &tmp)
        .env_remove("SEEDS_ONLY")
        .env_remove("SEEDS_EXPORT_ONLY")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("made by a different config (model.width: 4 -> 8)")
            && err.contains(
                "seeds: la: the sweep ended with an error (see above); nothing exported; going on"
            )
            && err.contains("1 line(s) failed"),
        "{err}"
    );
    assert!(!d.join("experiments/x/runs").exists(), "{err}");
    let trained = std::fs::read_dir(d.join("experiments/y/runs"))
        .unwrap()
        .count();
    assert_eq!(trained, 1, "{err}");
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "the check's place is removed"
    );
}

/// Ninety-ninth hostile round, N4: a `TMPDIR` where the check's place cannot be made stops
/// the queue in the script's words with status 2 before any line trains; a check that
/// refuses a line leaves no place behind.
#[test]
fn a_check_place_that_cannot_be_made_is_said_and_none_is_left() {
    let _guard = serial();
    let (dir, stub) = tree();
    let d = dir.path();
    let queue = |env: &[(&str, &str)]| {
        let mut cmd = Command::new("bash");
        cmd.arg("experiments/seeds/run.sh")
            .current_dir(d)
            .env("NTK_TRAIN_BIN", &stub)
            .env_remove("SEEDS_ONLY")
            .env_remove("SEEDS_EXPORT_ONLY");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let o = cmd.output().unwrap();
        let calls = std::fs::read_to_string(d.join("calls.log")).unwrap_or_default();
        (o, calls)
    };
    let missing = d.join("no-such-dir");
    let (o, calls) = queue(&[("TMPDIR", missing.to_str().unwrap())]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("seeds: cannot make the place its check plans into")
            && err.contains("set TMPDIR to a directory this user may write; nothing trained"),
        "{err}"
    );
    assert!(calls.is_empty(), "{calls}");
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let (o, _) = queue(&[
        ("TMPDIR", tmp.to_str().unwrap()),
        ("REFUSE_DRY", "a key it does not know"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "no place left");
}
