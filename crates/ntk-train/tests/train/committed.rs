//! The committed experiment tables are what the code makes of the committed runs: `collect`
//! over a copy of each experiment's `runs/` reproduces its `sweep.csv`, `best.csv` and
//! `compare.csv` byte for byte (a refactoring of the sweep or report code must not change a published number).

use std::path::{Path, PathBuf};

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn collect_reproduces_the_committed_tables() {
    let _serial = crate::common::serial();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    // The experiments and which of them merge with `--allow-mixed`: the list that
    // experiments/seeds/collect.sh collects (its comments give each merge's reason).
    let list = std::fs::read_to_string(root.join("seeds/collected.txt")).unwrap();
    let experiments: Vec<(&str, bool)> = list
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [e, "log" | "-", merge @ ("mixed" | "-")] => (e, merge == "mixed"),
            _ => panic!("seeds/collected.txt: malformed line {l:?}"),
        })
        .collect();
    // Every committed experiment with tables is on the list (none escapes this test).
    for group in std::fs::read_dir(&root).unwrap() {
        let group = group.unwrap().path();
        for dir in std::fs::read_dir(&group).into_iter().flatten() {
            let dir = dir.unwrap().path();
            if dir.join("sweep.csv").exists() {
                let name = dir
                    .strip_prefix(&root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned();
                assert!(
                    experiments.iter().any(|(e, _)| *e == name),
                    "experiments/{name} has a sweep.csv but is not in seeds/collected.txt"
                );
            }
        }
    }
    for (e, mixed) in experiments {
        let committed = root.join(e);
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&committed.join("runs"), &dir.path().join("runs"));
        ntk_train::report::collect(dir.path(), false, mixed, None).unwrap();
        for table in ["sweep.csv", "best.csv", "compare.csv", "convergence.csv"] {
            if !committed.join(table).exists() {
                assert!(
                    !dir.path().join(table).exists(),
                    "{e}/{table} is not committed"
                );
                continue;
            }
            let made = std::fs::read(dir.path().join(table)).unwrap();
            let kept = std::fs::read(committed.join(table)).unwrap();
            assert!(
                made == kept,
                "{e}/{table} differs from what collect makes of its runs"
            );
        }
        // Every figure's title names the data it trained on, also for runs written before
        // provenance was recorded (fig3/mnist's seed 6666: the title comes from config.toml).
        if e == "fig3/mnist" {
            let svg = std::fs::read_to_string(dir.path().join("train_loss.svg")).unwrap();
            assert!(svg.contains("MNIST, 10,000 images"), "{e}: {svg:.400}");
        }
    }
}

/// `sweep.csv` tells an empty `final_kappa` of a singular last kernel from one of a run
/// without NTK rows: MNIST-60k's depth-1 run at lr 100 ends singular, Agarwal Fig. 5's runs
/// track no NTK.
#[test]
fn an_empty_final_kappa_says_why() {
    let _serial = crate::common::serial();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let rows = |e: &str| -> Vec<std::collections::HashMap<String, String>> {
        let mut r = csv::Reader::from_path(root.join(e).join("sweep.csv")).unwrap();
        r.deserialize().map(Result::unwrap).collect()
    };
    let mnist = rows("fig3/mnist_60k");
    let singular = mnist
        .iter()
        .find(|r| r["id"] == "depth001_relu_none_lr1e2_seed6666")
        .unwrap();
    assert_eq!(
        (
            singular["final_kappa"].as_str(),
            singular["final_kappa_singular"].as_str()
        ),
        ("", "true")
    );
    assert!(
        mnist
            .iter()
            .any(|r| r["final_kappa_singular"] == "false" && !r["final_kappa"].is_empty())
    );
    for r in rows("agarwal_fig5/fmnist") {
        assert_eq!(
            (
                r["final_kappa"].as_str(),
                r["final_kappa_singular"].as_str()
            ),
            ("", "")
        );
    }
}
