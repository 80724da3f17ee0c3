//! `probe.weights` and `probe.blocks`: a network's given weights replace the seeded draw
//! (the kernel is the saving run's, exactly, whatever `model.seed` says), given blocks replace
//! the seeded permutation (the blocks' kappa is the seeded run's when the file lists its
//! blocks), both recorded by content in the provenance, and every bad file is a clean error
//! naming the key, the file and the line.

use std::path::Path;
use std::process::Output;

use crate::common::{ntk_cli, probe, write_file};
use ntk_files::npy;

fn config(extra_model: &str, probe_keys: &str) -> String {
    format!(
        "[data]\ndataset = \"synthetic\"\nn = 30\ninput_dim = 4\n\
         [model]\nwidth = 24\ndepth = 2\nactivation = \"tanh\"\n{extra_model}\n\
         [probe]\nprecision = \"f64\"\n{probe_keys}\n"
    )
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn refused(o: &Output, words: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in words {
        assert!(err.contains(w), "{w:?} not in: {err}");
    }
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn given_weights_give_the_saving_networks_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("saved");
    let cfg = write_file(dir.path(), "a.toml", &config("seed = 5", ""));
    let o = probe()
        .args(["ntk", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&saved)
        .arg("--save-weights")
        .output()
        .unwrap();
    ok(&o);
    let weights = saved.join("weights.safetensors");
    let text = config(
        "seed = 9",
        &format!("weights = {:?}", weights.display().to_string()),
    );
    let given = dir.path().join("given");
    ok(&ntk_cli(write_file(dir.path(), "b.toml", &text), &given));
    let (a, _) = npy::read(&saved.join("ntk.npy")).unwrap();
    let (b, _) = npy::read(&given.join("ntk.npy")).unwrap();
    assert_eq!(a, b, "the kernel of the given weights is the saving run's");
    // Seed 9 without the weights is another network.
    let other = dir.path().join("other");
    ok(&ntk_cli(
        write_file(dir.path(), "c.toml", &config("seed = 9", "")),
        &other,
    ));
    let (c, _) = npy::read(&other.join("ntk.npy")).unwrap();
    assert_ne!(a, c);
    let s = summary(&given);
    let digest = s["provenance"]["config"]["probe.weights_digest"]
        .as_str()
        .unwrap();
    assert_eq!(digest.len(), 64, "a SHA-256: {digest}");
    assert!(
        s["provenance"]["config"].get("probe.weights").is_none(),
        "not the path"
    );
    // Weights of another architecture: the tensor and the shapes are named.
    let deeper = config(
        "seed = 9",
        &format!("weights = {:?}", weights.display().to_string()),
    )
    .replace("depth = 2", "depth = 3");
    let o = ntk_cli(
        write_file(dir.path(), "d.toml", &deeper),
        dir.path().join("d"),
    );
    refused(
        &o,
        &[
            "weights.safetensors",
            "layers.2.weight",
            "[1, 24]",
            "[24, 24]",
        ],
    );
    let missing = config("", "weights = \"no/such.safetensors\"");
    let o = ntk_cli(
        write_file(dir.path(), "e.toml", &missing),
        dir.path().join("e"),
    );
    refused(&o, &["no/such.safetensors"]);
    // An empty path names the key, not an empty file name.
    for (i, keys) in ["weights = \"\"", "blocks = \"\"\nprotocol = \"blocks\""]
        .into_iter()
        .enumerate()
    {
        let o = ntk_cli(
            write_file(dir.path(), &format!("empty{i}.toml"), &config("", keys)),
            dir.path().join(format!("empty{i}")),
        );
        refused(&o, &["an empty path"]);
    }
    // The infinite-width kernel has no weights: given ones are refused, not ignored.
    let theory = config(
        "",
        &format!(
            "weights = {:?}\nmethod = \"theory\"",
            weights.display().to_string()
        ),
    );
    let o = ntk_cli(
        write_file(dir.path(), "f.toml", &theory),
        dir.path().join("f"),
    );
    refused(&o, &["probe.weights", "theory"]);
}

#[test]
fn given_blocks_replace_the_seeded_permutation() {
    let dir = tempfile::tempdir().unwrap();
    let seeded = dir.path().join("seeded");
    let blocks = "protocol = \"blocks\"\nblock_size = 8";
    ok(&ntk_cli(
        write_file(dir.path(), "a.toml", &config("", blocks)),
        &seeded,
    ));
    // The seeded run's blocks, written as a file: the same kappas, block for block.
    let table = std::fs::read_to_string(seeded.join("blocks.csv")).unwrap();
    let mut rdr = csv::Reader::from_reader(table.as_bytes());
    let header = rdr.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    let lines: Vec<String> = rows
        .iter()
        .map(|r| r[col("samples")].replace(';', " "))
        .collect();
    let file = write_file(dir.path(), "blocks.txt", &(lines.join("\n") + "\n"));
    let given = dir.path().join("given");
    let keys = format!("{blocks}\nblocks = {:?}", file.display().to_string());
    ok(&ntk_cli(
        write_file(dir.path(), "b.toml", &config("", &keys)),
        &given,
    ));
    let again = std::fs::read_to_string(given.join("blocks.csv")).unwrap();
    assert_eq!(again, table, "the same blocks, the same rows");
    let s = summary(&given);
    assert!(s["provenance"]["config"]["probe.blocks_digest"].is_string());
    // Another partition (two blocks of 15): other numbers.
    let halves: Vec<String> = [0..15, 15..30]
        .into_iter()
        .map(|r| r.map(|i| i.to_string()).collect::<Vec<_>>().join(","))
        .collect();
    let file2 = write_file(dir.path(), "halves.txt", &(halves.join("\n") + "\n"));
    let halves_out = dir.path().join("halves");
    let keys2 = format!("{blocks}\nblocks = {:?}", file2.display().to_string());
    ok(&ntk_cli(
        write_file(dir.path(), "c.toml", &config("", &keys2)),
        &halves_out,
    ));
    let t2 = std::fs::read_to_string(halves_out.join("blocks.csv")).unwrap();
    assert_eq!(t2.lines().count(), 3, "two blocks: {t2}");
    // Bad files: each names probe.blocks, the file and what is wrong.
    let all: Vec<String> = (0..30).map(|i| i.to_string()).collect();
    for (name, text, words) in [
        (
            "dup",
            format!("{}\n0 1\n", all.join(" ")),
            vec!["line 2", "already in the block of line 1"],
        ),
        (
            "short",
            format!("{}\n", all[..29].join(" ")),
            vec!["1 of the 30 samples are in no block", "row 29"],
        ),
        (
            "beyond",
            format!("{} 30\n", all.join(" ")),
            vec!["line 1", "\"30\"", "beyond the 30 samples"],
        ),
        (
            "word",
            "0 1 x\n".to_string(),
            vec!["line 1", "\"x\"", "not a row index"],
        ),
        (
            "single",
            format!("{}\n29\n", all[..29].join(" ")),
            vec!["line 2", "1 sample"],
        ),
    ] {
        let f = write_file(dir.path(), &format!("{name}.txt"), &text);
        let keys = format!("{blocks}\nblocks = {:?}", f.display().to_string());
        let o = ntk_cli(
            write_file(dir.path(), &format!("{name}.toml"), &config("", &keys)),
            dir.path().join(name),
        );
        let mut want = vec!["probe.blocks", name];
        want.extend(words);
        refused(&o, &want);
    }
    // Blocks with the whole protocol do not apply.
    let keys = format!("blocks = {:?}", file.display().to_string());
    let o = ntk_cli(
        write_file(dir.path(), "w.toml", &config("", &keys)),
        dir.path().join("w"),
    );
    refused(&o, &["probe.blocks", "protocol = \"blocks\" only"]);
}

/// Issue 65 item 2: an `--out` that holds one of the run's inputs (given weights, given
/// blocks, the data's file; also reached through a symbolic link) is refused before any work,
/// naming the key and the file, by the run, `--resume` and `--dry-run` alike; the file stays.
#[test]
fn an_output_directory_holding_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("saved");
    let cfg = write_file(dir.path(), "a.toml", &config("seed = 5", ""));
    let o = probe()
        .args(["ntk", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&saved)
        .arg("--save-weights")
        .output()
        .unwrap();
    ok(&o);
    let weights = saved.join("weights.safetensors");
    let before = std::fs::read(&weights).unwrap();
    let all: Vec<String> = (0..30).map(|i| i.to_string()).collect();
    let blocks = write_file(&saved, "blocks.csv", &format!("{}\n", all.join(" ")));
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&saved, &link).unwrap();
    let cases = [
        (
            "probe.weights",
            config(
                "",
                &format!("weights = {:?}", weights.display().to_string()),
            ),
        ),
        (
            "probe.blocks",
            config(
                "",
                &format!(
                    "protocol = \"blocks\"\nblocks = {:?}",
                    blocks.display().to_string()
                ),
            ),
        ),
        (
            "data.x",
            config("", "").replace(
                "dataset = \"synthetic\"\nn = 30\ninput_dim = 4",
                &format!(
                    "dataset = \"file\"\nx = {:?}",
                    saved.join("inputs.npy").display().to_string()
                ),
            ),
        ),
    ];
    for (i, (key, text)) in cases.iter().enumerate() {
        let cfg = write_file(dir.path(), &format!("in{i}.toml"), text);
        for out in [&saved, &link] {
            for flag in [None, Some("--resume"), Some("--dry-run")] {
                let mut c = probe();
                c.args(["ntk", "--config"]).arg(&cfg).arg("--out").arg(out);
                c.args(flag);
                let o = c.output().unwrap();
                refused(&o, &[key, "inside", "saved"]);
            }
        }
    }
    assert_eq!(std::fs::read(&weights).unwrap(), before);
    assert!(blocks.exists() && saved.join("inputs.npy").exists());
}
