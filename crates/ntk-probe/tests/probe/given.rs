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

/// The config `a.toml` (seed 5) in `dir`, run with `--save-weights`: its output directory
/// `dir/saved` (with `weights.safetensors`).
fn saved_weights(dir: &std::path::Path) -> std::path::PathBuf {
    let saved = dir.join("saved");
    let cfg = write_file(dir, "a.toml", &config("seed = 5", ""));
    let o = probe()
        .args(["ntk", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&saved)
        .arg("--save-weights")
        .output()
        .unwrap();
    ok(&o);
    saved
}

#[test]
fn given_weights_give_the_saving_networks_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let saved = saved_weights(dir.path());
    let weights = saved.join("weights.safetensors");
    // Given weights draw nothing: no seed with them (twenty-first hostile round, D3).
    let text = config(
        "",
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
        "",
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

/// Hundred-and-thirty-third hostile round, second review, D1: the indices of `probe.blocks`
/// count the samples drawn (the rows of `inputs.npy`); a random subset moved them off the
/// file's rows with no word. Now a note says so, run and dry run; with the file's own order
/// (`first`) nothing is said.
#[test]
fn given_blocks_on_a_moved_subset_say_what_they_count() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rows: String = (0..30)
        .map(|i| format!("{}.5,{},-1,0.{i}\n", i % 4, i % 7))
        .collect();
    let x = write_file(d, "x.csv", &rows);
    let halves: Vec<String> = [0..15, 15..30]
        .into_iter()
        .map(|r| r.map(|i| i.to_string()).collect::<Vec<_>>().join(","))
        .collect();
    let blocks = write_file(d, "halves.txt", &(halves.join("\n") + "\n"));
    for subset in ["first", "random"] {
        let text = config("", &format!("protocol = \"blocks\"\nblocks = {blocks:?}")).replace(
            "dataset = \"synthetic\"\nn = 30\ninput_dim = 4",
            &format!("dataset = \"file\"\nx = {x:?}\nn = 30\nsubset = \"{subset}\""),
        );
        let cfg = write_file(d, &format!("{subset}.toml"), &text);
        for extra in [&["--dry-run"][..], &[]] {
            let o = crate::common::command_cli("ntk", &cfg, d.join(subset), extra);
            ok(&o);
            let said = String::from_utf8_lossy(&o.stderr);
            assert_eq!(
                said.contains("its indices count the 30 samples drawn, in their drawn order"),
                subset == "random",
                "{subset} {extra:?}: {said}"
            );
        }
    }
    // A refusal of the file says it too, so that its index reads as a drawn sample's
    // (hundred-and-thirty-fourth hostile round, N2: "in no block (the first: row 29)" came
    // without the note).
    let short = write_file(d, "short.txt", &(halves[0].clone() + "\n"));
    let text = std::fs::read_to_string(d.join("random.toml"))
        .unwrap()
        .replace(&format!("{blocks:?}"), &format!("{short:?}"));
    let cfg = write_file(d, "short.toml", &text);
    for extra in [&["--dry-run"][..], &[]] {
        let o = crate::common::command_cli("ntk", &cfg, d.join("short"), extra);
        assert_eq!(o.status.code(), Some(2));
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(
            said.contains("its indices count the 30 samples drawn") && said.contains("in no block"),
            "{extra:?}: {said}"
        );
    }
}

#[test]
fn given_blocks_replace_the_seeded_permutation() {
    let dir = tempfile::tempdir().unwrap();
    let seeded = dir.path().join("seeded");
    let blocks = "protocol = \"blocks\"\nblock_size = 8";
    // Given blocks fix their own sizes: a block_size beside them is refused (below).
    let given_protocol = "protocol = \"blocks\"";
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
    let keys = format!(
        "{given_protocol}\nblocks = {:?}",
        file.display().to_string()
    );
    ok(&ntk_cli(
        write_file(dir.path(), "b.toml", &config("", &keys)),
        &given,
    ));
    let again = std::fs::read_to_string(given.join("blocks.csv")).unwrap();
    assert_eq!(again, table, "the same blocks, the same rows");
    let s = summary(&given);
    assert!(s["provenance"]["config"]["probe.blocks_digest"].is_string());
    // Given blocks record no block size, probe.block_size having made none of them
    // (ninety-fourth hostile round, N7: 512); the seeded run records its own.
    assert!(s["block_size"].is_null(), "{}", s["block_size"]);
    assert_eq!(summary(&seeded)["block_size"], 8);
    // Another partition (two blocks of 15): other numbers.
    let halves: Vec<String> = [0..15, 15..30]
        .into_iter()
        .map(|r| r.map(|i| i.to_string()).collect::<Vec<_>>().join(","))
        .collect();
    let file2 = write_file(dir.path(), "halves.txt", &(halves.join("\n") + "\n"));
    let halves_out = dir.path().join("halves");
    let keys2 = format!(
        "{given_protocol}\nblocks = {:?}",
        file2.display().to_string()
    );
    ok(&ntk_cli(
        write_file(dir.path(), "c.toml", &config("", &keys2)),
        &halves_out,
    ));
    let t2 = std::fs::read_to_string(halves_out.join("blocks.csv")).unwrap();
    assert_eq!(t2.lines().count(), 3, "two blocks: {t2}");
    // Issue 65, fifth hostile round: probe.block_size beside given blocks was silently
    // unused (a key that does not apply); refused naming both keys, in the run and the dry
    // run.
    let sized = format!("{blocks}\nblocks = {:?}", file2.display().to_string());
    let sized = write_file(dir.path(), "sized.toml", &config("", &sized));
    let o = ntk_cli(&sized, dir.path().join("sized"));
    refused(&o, &["probe.block_size", "8", "probe.blocks"]);
    assert!(!dir.path().join("sized").exists());
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
            vec!["1 of the 30 samples is in no block", "row 29"],
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
        let keys = format!("{given_protocol}\nblocks = {:?}", f.display().to_string());
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
    let saved = saved_weights(dir.path());
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

/// Issue 65 item 2 for hard links: an input that is the same file (a hard link) as one
/// inside the run's `--out` or its phase directory is refused as one inside it is, by the
/// run, `--resume` and `--dry-run` alike, naming the key, the input and the file there; a
/// sweep's data hard-linked into its `--out` likewise. A hard link whose twin lies elsewhere
/// is an input like any other.
#[test]
fn an_input_hard_linked_into_the_output_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let saved = saved_weights(d);
    let all: Vec<String> = (0..30).map(|i| i.to_string()).collect();
    let blocks = write_file(&saved, "blocks.csv", &format!("{}\n", all.join(" ")));
    let phases = d.join(".saved.phases");
    std::fs::create_dir(&phases).unwrap();
    let in_phases = write_file(&phases, "blocks.csv", &format!("{}\n", all.join(" ")));
    let link = |from: &Path, name: &str| {
        let to = d.join(name);
        std::fs::hard_link(from, &to).unwrap();
        to.display().to_string()
    };
    let weights = link(&saved.join("weights.safetensors"), "w.safetensors");
    let blocks_link = link(&blocks, "b.csv");
    let phases_link = link(&in_phases, "p.csv");
    let x = link(&saved.join("inputs.npy"), "x.npy");
    let blocks_keys = |f: &str| format!("protocol = \"blocks\"\nblocks = {f:?}");
    let cases = [
        (
            "probe.weights",
            config("", &format!("weights = {weights:?}")),
            "weights.safetensors",
        ),
        (
            "probe.blocks",
            config("", &blocks_keys(&blocks_link)),
            "saved/blocks.csv",
        ),
        (
            "probe.blocks",
            config("", &blocks_keys(&phases_link)),
            ".saved.phases/blocks.csv",
        ),
        (
            "data.x",
            config("", "").replace(
                "dataset = \"synthetic\"\nn = 30\ninput_dim = 4",
                &format!("dataset = \"file\"\nx = {x:?}"),
            ),
            "inputs.npy",
        ),
    ];
    for (i, (key, text, twin)) in cases.iter().enumerate() {
        let cfg = write_file(d, &format!("in{i}.toml"), text);
        for flag in [None, Some("--resume"), Some("--dry-run")] {
            let mut c = probe();
            c.args(["ntk", "--config"])
                .arg(&cfg)
                .arg("--out")
                .arg(&saved);
            c.args(flag);
            let o = c.output().unwrap();
            refused(&o, &[key, "the same file (a hard link)", twin]);
            // What would happen, not "lost": the rename parts the two names (ninety-third
            // hostile round, N1).
            let e = String::from_utf8_lossy(&o.stderr);
            assert!(
                e.contains("keep a copy, not a hard link") && !e.contains("lost"),
                "{e}"
            );
        }
    }
    assert!(saved.join("weights.safetensors").exists() && blocks.exists());

    // Twins outside the output directory: the run goes on.
    std::fs::copy(
        saved.join("weights.safetensors"),
        d.join("copy.safetensors"),
    )
    .unwrap();
    let twin = link(&d.join("copy.safetensors"), "twin.safetensors");
    let cfg = write_file(d, "twin.toml", &config("", &format!("weights = {twin:?}")));
    let o = probe()
        .args(["ntk", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(d.join("elsewhere"))
        .output()
        .unwrap();
    ok(&o);

    // A sweep's data hard-linked into its output directory.
    let out = d.join("sweep");
    std::fs::create_dir_all(out.join("runs")).unwrap();
    std::fs::copy(saved.join("inputs.npy"), out.join("runs/inputs.npy")).unwrap();
    let x = link(&out.join("runs/inputs.npy"), "sx.npy");
    let text = format!(
        "[sweep]\ndepths = [1]\nactivations = [\"relu\"]\nseeds = [1]\n\
         protocols = [\"whole\"]\nout = \"unused\"\ntheory = false\n[data]\n\
         dataset = \"file\"\nx = {x:?}\n[model]\nwidth = 16\ndepth = 1\n\
         activation = \"relu\"\n[probe]\nprecision = \"f64\"\n"
    );
    let cfg = write_file(d, "sweep.toml", &text);
    for extra in [&[][..], &["--dry-run"]] {
        let o = crate::common::command_cli("sweep", &cfg, &out, extra);
        refused(
            &o,
            &[
                "data.x",
                "the same file (a hard link)",
                "sweep/runs/inputs.npy",
            ],
        );
    }
}

/// Issue 65, hostile round: a safetensors file whose tensors share their bytes (equal
/// `data_offsets`) is refused naming the same tensor, the second of them in the header, on
/// every run and dry run (the safetensors crate's hash map named one at random).
#[test]
fn invalid_offsets_name_the_same_tensor_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let entries: Vec<String> = ["w", "x", "y", "z"]
        .iter()
        .map(|n| format!("\"{n}\":{{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]}}"))
        .collect();
    let header = format!("{{{}}}", entries.join(","));
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend(header.as_bytes());
    bytes.extend([0u8; 16]);
    let file = d.join("tied.safetensors");
    std::fs::write(&file, bytes).unwrap();
    let cfg = write_file(
        d,
        "tied.toml",
        &config("", &format!("weights = {:?}", file.display().to_string())),
    );
    let mut said = Vec::new();
    for flag in [None, Some("--dry-run"), None, Some("--dry-run")] {
        let mut c = probe();
        c.args(["ntk", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(d.join("out"));
        c.args(flag);
        let o = c.output().unwrap();
        refused(
            &o,
            &[
                "probe.weights",
                "invalid offset for tensor `x`",
                "overlap tensor `w`",
            ],
        );
        said.push(String::from_utf8_lossy(&o.stderr).into_owned());
    }
    assert!(said.iter().all(|s| *s == said[0]), "{said:#?}");
}

/// `ntk --config CFG --out OUT EXTRA...` with `env` set, killed after 60 s (a FIFO would
/// hang it): its output.
fn run_with(cfg: &Path, out: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = probe();
    c.args(["ntk", "--config"])
        .arg(cfg)
        .arg("--out")
        .arg(out)
        .args(extra)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            let _ = std::process::Command::new("kill")
                .args(["-9", &id.to_string()])
                .status();
            panic!("{extra:?}: hung (a FIFO waited on?)");
        }
    }
}

/// A copy of the safetensors file `src` at `dst` with `edit` applied to its header (JSON
/// text) and its data bytes.
fn edit_safetensors(src: &Path, dst: &Path, edit: impl FnOnce(&mut String, &mut [u8])) {
    let raw = std::fs::read(src).unwrap();
    let n = u64::from_le_bytes(raw[..8].try_into().unwrap()) as usize;
    let mut header = String::from_utf8(raw[8..8 + n].to_vec()).unwrap();
    let mut data = raw[8 + n..].to_vec();
    edit(&mut header, &mut data);
    assert_eq!(header.len(), n, "the header keeps its length");
    let mut out = raw[..8].to_vec();
    out.extend(header.as_bytes());
    out.extend(data);
    std::fs::write(dst, out).unwrap();
}

/// The byte offset in the data of entry `i` of tensor `name` (f64) of a safetensors header.
fn entry_offset(header: &str, name: &str, i: usize) -> usize {
    let h: serde_json::Value = serde_json::from_str(header).unwrap();
    assert_eq!(h[name]["dtype"], "F64");
    h[name]["data_offsets"][0].as_u64().unwrap() as usize + 8 * i
}

/// Issue 65 item 11: a FIFO, a directory, or a file larger than the run can use (a sparse
/// 1 TiB file) as `probe.weights` or `probe.blocks` is refused at once, by the run and the
/// dry run alike, naming the key and the file; the size limit is what the network (the
/// samples) needs, and is said.
#[test]
fn given_files_that_are_not_regular_or_too_large_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let huge = d.join("huge.bin");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let folder = d.join("folder");
    std::fs::create_dir(&folder).unwrap();
    for (i, (file, words)) in [
        (&fifo, "not a regular file"),
        (&folder, "not a regular file"),
        (&huge, "more than this run can use"),
    ]
    .into_iter()
    .enumerate()
    {
        let f = file.display().to_string();
        for (key, keys) in [
            ("probe.weights", format!("weights = {f:?}")),
            (
                "probe.blocks",
                format!("protocol = \"blocks\"\nblocks = {f:?}"),
            ),
        ] {
            let cfg = write_file(d, &format!("c{i}.toml"), &config("", &keys));
            for extra in [&[][..], &["--dry-run"]] {
                let o = run_with(&cfg, &d.join(format!("o{i}")), extra, &[]);
                refused(&o, &[key, &f, words]);
                if words.starts_with("more") {
                    let err = String::from_utf8_lossy(&o.stderr);
                    let what = if key == "probe.weights" {
                        "the network's 696 values in f64"
                    } else {
                        "the samples' indices"
                    };
                    assert!(
                        err.contains(what) && err.contains("1099511627776 bytes"),
                        "{err}"
                    );
                }
            }
        }
    }
}

/// A refused case: its name, its config, its environment, the words its error holds.
type Case<'a> = (&'a str, String, Vec<(&'a str, &'a str)>, Vec<&'a str>);

/// Issue 65 items 14 and 17: `--dry-run` refuses what the run refuses, with the same
/// message, before saying what would be computed: given weights missing, transposed, NaN,
/// with a negative BatchNorm variance, or beyond f32's range in an f32 run; given blocks
/// missing or listing a sample twice; `NTK_PHASE_FILES` other than 0 or 1 on the tiled
/// route; f32 inputs whose kernel overflows. Every non-finite value is traced to the file,
/// the tensor and the entry (or the data's row).
#[test]
fn a_dry_run_refuses_what_the_run_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let saved = d.join("saved");
    let bn = d.join("bn");
    let relu = d.join("relu");
    let relu_config = |keys: &str| config("", keys).replace("\"tanh\"", "\"relu\"");
    for (out, text) in [
        (&saved, config("", "")),
        (&bn, config("normalization = \"batch_norm\"", "")),
        (&relu, relu_config("")),
    ] {
        let cfg = write_file(d, "save.toml", &text);
        ok(&run_with(&cfg, out, &["--save-weights"], &[]));
    }
    let weights = saved.join("weights.safetensors");
    let edited = |name: &str, edit: &dyn Fn(&mut String, &mut [u8])| {
        let p = d.join(name);
        edit_safetensors(&weights, &p, |h, b| edit(h, b));
        p
    };
    let set =
        |data: &mut [u8], at: usize, v: f64| data[at..at + 8].copy_from_slice(&v.to_le_bytes());
    let transposed = edited("transposed.safetensors", &|h, _| {
        *h = h.replace("\"shape\":[24,4]", "\"shape\":[4,24]");
    });
    let nan = edited("nan.safetensors", &|h, b| {
        set(b, entry_offset(h, "layers.1.weight", 24 + 5), f64::NAN)
    });
    let big = edited("big.safetensors", &|h, b| {
        set(b, entry_offset(h, "layers.0.weight", 7), 1e300)
    });
    let negative = d.join("negative.safetensors");
    edit_safetensors(&bn.join("weights.safetensors"), &negative, |h, b| {
        set(b, entry_offset(h, "batch_norms.0.running_var", 2), -0.5)
    });
    // Finite weights whose kernel overflows f64: one layer scaled by 1e200 in a ReLU network.
    let overflowing = d.join("overflowing.safetensors");
    edit_safetensors(&relu.join("weights.safetensors"), &overflowing, |h, b| {
        for i in 0..24 * 24 {
            let at = entry_offset(h, "layers.1.weight", i);
            let v = f64::from_le_bytes(b[at..at + 8].try_into().unwrap());
            set(b, at, v * 1e200);
        }
    });
    let all: Vec<String> = (0..30).map(|i| i.to_string()).collect();
    let dup = write_file(d, "dup.txt", &format!("{}\n0 1\n", all.join(" ")));
    let mut x = Vec::new();
    for i in 0..30 {
        for j in 0..4 {
            x.push(((i * 4 + j) as f64 * 0.37).sin() * 1e19);
        }
    }
    ntk_files::npy::write_f64(&d.join("x.npy"), &x, &[30, 4]).unwrap();
    let w = |p: &Path| format!("weights = {:?}", p.display().to_string());
    let f32_file = config("", "")
        .replace("precision = \"f64\"", "precision = \"f32\"")
        .replace("\"tanh\"", "\"relu\"")
        .replace(
            "dataset = \"synthetic\"\nn = 30\ninput_dim = 4",
            &format!(
                "dataset = \"file\"\nx = {:?}",
                d.join("x.npy").display().to_string()
            ),
        );
    let cases: Vec<Case> = vec![
        (
            "missing",
            config("", "weights = \"no/such.safetensors\""),
            vec![],
            vec!["probe.weights", "no/such"],
        ),
        (
            "transposed",
            config("", &w(&transposed)),
            vec![],
            vec!["probe.weights", "layers.0.weight", "[4, 24]", "[24, 4]"],
        ),
        (
            "nan",
            config("", &w(&nan)),
            vec![],
            vec!["nan.safetensors", "`layers.1.weight`", "NaN", "[1, 5]"],
        ),
        (
            "big",
            config("", &w(&big)).replace("precision = \"f64\"", "precision = \"f32\""),
            vec![],
            vec![
                "big.safetensors",
                "`layers.0.weight`",
                "inf",
                "[1, 3]",
                "f32",
            ],
        ),
        (
            "negative",
            config("normalization = \"batch_norm\"", &w(&negative)),
            vec![],
            vec![
                "negative.safetensors",
                "batch_norms.0.running_var",
                "-0.5",
                "[2]",
            ],
        ),
        (
            "no blocks",
            config("", "protocol = \"blocks\"\nblocks = \"no/such.txt\""),
            vec![],
            vec!["probe.blocks", "no/such.txt"],
        ),
        (
            "dup",
            config(
                "",
                &format!(
                    "protocol = \"blocks\"\nblocks = {:?}",
                    dup.display().to_string()
                ),
            ),
            vec![],
            vec!["probe.blocks", "dup.txt", "line 2"],
        ),
        (
            "variable",
            config("", "eigen = \"tiled\""),
            vec![("NTK_PHASE_FILES", "yes")],
            vec!["NTK_PHASE_FILES", "yes"],
        ),
        (
            "overflow f64",
            relu_config(&w(&overflowing)),
            vec![],
            vec![
                "overflowing.safetensors",
                "probe.weights",
                "row",
                "not finite in f64",
                "non-finite entries",
            ],
        ),
        (
            "overflow",
            f32_file,
            vec![],
            vec!["probe.precision", "x.npy", "row", "not finite in f32"],
        ),
    ];
    for (i, (name, text, env, words)) in cases.into_iter().enumerate() {
        let cfg = write_file(d, &format!("case{i}.toml"), &text);
        let out = d.join(format!("case{i}"));
        let dry = run_with(&cfg, &out, &["--dry-run"], &env);
        let real = run_with(&cfg, &out, &[], &env);
        for o in [&dry, &real] {
            assert_eq!(
                o.status.code(),
                Some(2),
                "{name}: {}",
                String::from_utf8_lossy(&o.stdout)
            );
            refused(o, &words);
            assert!(
                !String::from_utf8_lossy(&o.stdout).contains("would be computed"),
                "{name}"
            );
        }
        let error = |o: &Output| {
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .filter(|l| l.starts_with("error"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(
            error(&dry),
            error(&real),
            "{name}: the dry run and the run differ"
        );
        assert!(
            !out.exists(),
            "{name}: the refused run wrote {}",
            out.display()
        );
    }
}

/// A config of a small ResNet of `variant` on 12 synthetic 2 x 4 x 4 images, in f64.
fn resnet_config(variant: &str, probe_keys: &str) -> String {
    format!(
        "[data]\ndataset = \"synthetic\"\nn = 12\ninput_dim = 32\n\
         [resnet]\ndepth = 8\nvariant = \"{variant}\"\nbase_width = 2\nimage_size = 4\n\
         in_channels = 2\nnum_classes = 3\nseed = 5\n\
         [probe]\nprecision = \"f64\"\n{probe_keys}\n"
    )
}

/// Issue 65 item 4: weights saved by the probe (`--save-weights`) load back into the same
/// config, giving the saving run's kernel exactly, for every kind of network (biases,
/// BatchNorm, LayerNorm, each ResNet variant); a file holding tensors the configured network
/// does not use (biases into `bias = false`, a BatchNorm MLP's file into a plain MLP, a
/// BatchNorm ResNet's into NormReLU, Fixup's into SELU) is refused by the run and the dry run
/// alike, naming the file, the first unused tensors and their count, before any output.
#[test]
fn weights_of_another_architecture_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let w = |p: &Path| format!("weights = {:?}", p.display().to_string());
    let nets = [
        ("bias", config("bias = true", "")),
        ("plain", config("", "")),
        ("bn", config("normalization = \"batch_norm\"", "")),
        (
            "ln",
            config("normalization = \"layer_norm\"\nbias = true", ""),
        ),
        ("resnet_bn", resnet_config("batch_norm", "")),
        ("resnet_nr", resnet_config("norm_relu", "")),
        ("resnet_fixup", resnet_config("fixup", "")),
        ("resnet_selu", resnet_config("selu", "")),
    ];
    let weights = |name: &str| d.join(name).join("weights.safetensors");
    // Given weights draw nothing: the ResNets' seed is left out with them (twenty-first
    // hostile round, D3).
    let given = |text: &str, from: &str| {
        text.replace("seed = 5\n", "")
            .replace("[probe]\n", &format!("[probe]\n{}\n", w(&weights(from))))
    };
    for (name, text) in &nets {
        let cfg = write_file(d, &format!("{name}.toml"), text);
        ok(&run_with(&cfg, &d.join(name), &["--save-weights"], &[]));
        // The saved weights into the same config: the same kernel.
        let with = given(text, name);
        let again = d.join(format!("{name}_again"));
        let cfg = write_file(d, &format!("{name}_again.toml"), &with);
        ok(&run_with(&cfg, &again, &[], &[]));
        let (a, _) = npy::read(&d.join(name).join("ntk.npy")).unwrap();
        let (b, _) = npy::read(&again.join("ntk.npy")).unwrap();
        assert_eq!(
            a, b,
            "{name}: the saved weights give the saving run's kernel"
        );
    }
    let text = |name: &str| nets.iter().find(|n| n.0 == name).unwrap().1.clone();
    for (from, into, words) in [
        (
            "bias",
            "plain",
            vec![
                "3 tensor(s)",
                "`layers.0.bias`, `layers.1.bias`, `layers.2.bias`",
            ],
        ),
        (
            "bn",
            "plain",
            vec!["8 tensor(s)", "`batch_norms.0.bias`", "and 3 more"],
        ),
        (
            "ln",
            "bias",
            vec![
                "4 tensor(s)",
                "`layer_norms.0.bias`",
                "`layer_norms.1.weight`",
            ],
        ),
        (
            "resnet_bn",
            "resnet_nr",
            vec!["28 tensor(s)", "`blocks.0.bn1.bias`", "and 23 more"],
        ),
        (
            "resnet_fixup",
            "resnet_selu",
            vec!["17 tensor(s)", "`blocks.0.bias1a`", "and 12 more"],
        ),
    ] {
        let with = given(&text(into), from);
        let cfg = write_file(d, &format!("{from}_into_{into}.toml"), &with);
        let out = d.join(format!("{from}_into_{into}"));
        let file = weights(from).display().to_string();
        let mut want = vec!["probe.weights", file.as_str(), "the network does not use"];
        want.extend(words);
        for extra in [&[][..], &["--dry-run"]] {
            let o = run_with(&cfg, &out, extra, &[]);
            refused(&o, &want);
        }
        assert!(!out.exists(), "{from} into {into}: the refused run wrote");
    }
}

/// `ntk --json` of `text` (a config in `d` named `name`) into `d/name`: its summary.
fn json_run(d: &Path, name: &str, text: &str) -> serde_json::Value {
    let cfg = write_file(d, &format!("{name}.toml"), text);
    let o = run_with(&cfg, &d.join(name), &["--json"], &[]);
    ok(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Issue 65 item 6: underflow is refused as overflow is. The kernel of the input of the
/// smallest nonzero norm alone, as the run computes it, must have its diagonal at or above the
/// precision's smallest normal number (f32::MIN_POSITIVE, f64::MIN_POSITIVE): unit rows
/// scaled by 1e-21 or 1e-30 in f32 (kappa 1.4% off, or "rank 0") and by 1e-170 in f64 are
/// refused by the run and the dry run alike, naming the row, its norm and the fix, before any
/// output; at 1e-18 in f32 the kernel is normal and the unit rows' scaled (to f32's
/// rounding). Routes that form the kernel in f64 are held to what underflows there: the
/// theory to f64's range, autodiff (f32 gradients, an f64 Gram) to its gradients' (`4 P
/// lambda^2`), so both pass at 1e-25 with the unit rows' kernel scaled, and autodiff is
/// refused at 1e-37. A zero row, and a nonzero row on which a ReLU network is dead (its kernel row
/// exactly 0 in f32 and f64), are the network's own and pass.
#[test]
fn a_kernel_that_underflows_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut x = Vec::new();
    for i in 0..30 {
        let row: Vec<f64> = (0..4).map(|j| ((i * 4 + j) as f64 * 0.37).sin()).collect();
        let n = row.iter().map(|v| v * v).sum::<f64>().sqrt();
        // Row 0 the smallest, at half the others' unit norm.
        let half = if i == 0 { 0.5 } else { 1.0 };
        x.extend(row.iter().map(|v| half * v / n));
    }
    let file_config = |x: &[f64], name: &str, scale: f64, precision: &str| {
        let p = d.join(format!("{name}.npy"));
        let scaled: Vec<f64> = x.iter().map(|v| v * scale).collect();
        npy::write_f64(&p, &scaled, &[30, 4]).unwrap();
        config("", "")
            .replace(
                "precision = \"f64\"",
                &format!("precision = \"{precision}\""),
            )
            .replace("\"tanh\"", "\"relu\"")
            .replace(
                "dataset = \"synthetic\"\nn = 30\ninput_dim = 4",
                &format!("dataset = \"file\"\nx = {:?}", p.display().to_string()),
            )
    };
    for (name, scale, precision, limit) in [
        ("tiny21", 1e-21, "f32", "f32::MIN_POSITIVE"),
        ("tiny30", 1e-30, "f32", "f32::MIN_POSITIVE"),
        ("tiny170", 1e-170, "f64", "f64::MIN_POSITIVE"),
    ] {
        let cfg = write_file(
            d,
            &format!("{name}.toml"),
            &file_config(&x, name, scale, precision),
        );
        let out = d.join(name);
        for extra in [&[][..], &["--dry-run"]] {
            let o = run_with(&cfg, &out, extra, &[]);
            let norm = format!("norm {:.3e}", 0.5 * scale);
            refused(
                &o,
                &[
                    "probe.precision",
                    &format!("{name}.npy"),
                    "row 0",
                    &norm,
                    "the smallest nonzero",
                    limit,
                    "underflows",
                    "rescale the inputs",
                ],
            );
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(err.contains("probe in f64"), precision == "f32", "{err}");
        }
        assert!(!out.exists(), "{name}: the refused run wrote");
    }
    // Normal kernels: at 1e-18 in f32 the ReLU network's kernel is the unit rows' in f32
    // times 1e-36 (it is homogeneous of degree 2), to f32's rounding, and of the same rank.
    let unit = json_run(d, "unit", &file_config(&x, "unit", 1.0, "f32"));
    let small = json_run(d, "small", &file_config(&x, "small", 1e-18, "f32"));
    let (a, b) = (
        unit["lambda_max"].as_f64().unwrap(),
        small["lambda_max"].as_f64().unwrap() / 1e-36,
    );
    assert!((a - b).abs() < 1e-5 * a, "{a} against {b}");
    assert_eq!(unit["rank"], small["rank"]);
    // The routes that form the kernel in f64 are held to f64's range (the theory, which
    // says f64: it is refused at f32) or to the gradients' (autodiff: f32 gradients, an f64
    // Gram): at 1e-25 both are exact, the structured route refuses (above).
    for (method, precision) in [("autodiff", "f32"), ("theory", "f64")] {
        let text = file_config(&x, "tiny25", 1e-25, precision)
            .replace("[probe]\n", &format!("[probe]\nmethod = \"{method}\"\n"));
        let s = json_run(d, &format!("tiny25_{method}"), &text);
        let at_unit = json_run(
            d,
            &format!("unit_{method}"),
            &file_config(&x, "unit", 1.0, "f64")
                .replace("[probe]\n", &format!("[probe]\nmethod = \"{method}\"\n")),
        );
        let (a, b) = (
            at_unit["lambda_max"].as_f64().unwrap(),
            s["lambda_max"].as_f64().unwrap() / 1e-50,
        );
        assert!((a - b).abs() < 1e-5 * a, "{method}: {a} against {b}");
    }
    let text = file_config(&x, "tiny37", 1e-37, "f32")
        .replace("[probe]\n", "[probe]\nmethod = \"autodiff\"\n");
    let cfg = write_file(d, "tiny37.toml", &text);
    let o = run_with(&cfg, &d.join("tiny37"), &[], &[]);
    refused(
        &o,
        &[
            "row 0",
            "4 P lambda^2",
            "696 parameters",
            "gradients in f32",
        ],
    );
    // A zero row is legitimate: its kernel row is 0.
    x[8..12].fill(0.0);
    for precision in ["f32", "f64"] {
        let name = format!("zero_{precision}");
        json_run(d, &name, &file_config(&x, "zero", 1.0, precision));
        let (k, _) = npy::read(&d.join(&name).join("ntk.npy")).unwrap();
        assert!(k[60..90].iter().all(|v| *v == 0.0), "{precision}");
    }
    // A ReLU network of width 1 is dead on the inputs its one unit turns off: the row of the
    // smallest norm made one of them, its kernel row exactly 0, is the network's own.
    let narrow = |x: &[f64], precision: &str, weights: Option<&Path>| {
        let mut t = file_config(x, "dead", 1.0, precision).replace("width = 24", "width = 1");
        if let Some(w) = weights {
            t = t.replace(
                "[probe]\n",
                &format!("[probe]\nweights = {:?}\n", w.display().to_string()),
            );
        }
        t
    };
    let cfg = write_file(d, "narrow.toml", &narrow(&x, "f64", None));
    ok(&run_with(&cfg, &d.join("narrow"), &["--save-weights"], &[]));
    let weights = d.join("narrow").join("weights.safetensors");
    let raw = std::fs::read(&weights).unwrap();
    let n = u64::from_le_bytes(raw[..8].try_into().unwrap()) as usize;
    let header = std::str::from_utf8(&raw[8..8 + n]).unwrap();
    let w: Vec<f64> = (0..4)
        .map(|i| {
            let at = 8 + n + entry_offset(header, "layers.0.weight", i);
            f64::from_le_bytes(raw[at..at + 8].try_into().unwrap())
        })
        .collect();
    let off: Vec<f64> = w.iter().map(|v| -0.01 * v).collect();
    x[0..4].copy_from_slice(&off);
    for precision in ["f32", "f64"] {
        let s = json_run(
            d,
            &format!("dead_{precision}"),
            &narrow(&x, precision, Some(&weights)),
        );
        let (k, _) = npy::read(&d.join(format!("dead_{precision}")).join("ntk.npy")).unwrap();
        assert_eq!(k[0], 0.0, "{precision}: row 0 is dead");
        assert!(s["rank"].as_u64().unwrap() < 30, "{precision}: {s}");
    }
    // Thirty-fifth hostile round, D2: the same weights scaled so far down that the kernel
    // underflows to exactly 0 in f64 were "rank 0", exit 0; the scaled network's 0 is told
    // from a dead one's by the network with its tensors scaled back by powers of two. Row 0
    // is still dead (its 0 kept); the largest row's 0 is an underflow.
    let scaled = |factor: f64, name: &str| {
        let mut bytes = raw.clone();
        for chunk in bytes[8 + n..].chunks_exact_mut(8) {
            let v = f64::from_le_bytes(chunk.try_into().unwrap()) * factor;
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        let path = d.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let tiny = scaled(1e-100, "tiny.safetensors");
    let cfg = write_file(d, "tiny_weights.toml", &narrow(&x, "f64", Some(&tiny)));
    refused_run_and_dry_run(
        &cfg,
        &d.join("tiny_weights"),
        &[
            "the largest",
            "K(x, x) = 0.000e0",
            "so the 0 is an underflow",
            "rescale the weights",
        ],
    );
    // In f32 the weights themselves vanish (1e-50 is below f32's smallest subnormal) or are
    // subnormal (1e-40): refused naming the tensor and the entry.
    for factor in [1e-50, 1e-40] {
        let file = scaled(factor, &format!("f32_{factor:e}.safetensors"));
        let cfg = write_file(d, "f32_weights.toml", &narrow(&x, "f32", Some(&file)));
        refused(
            &run_with(&cfg, &d.join("f32_weights"), &[], &[]),
            &[
                "tensor `layers.0.weight`",
                "in f32",
                "below its smallest normal number",
            ],
        );
    }
}

/// Issue 65 item 6, what the diagonal's range does not see: an intermediate that underflows
/// and is scaled up. A tanh network's first layer scaled by 1e-21, its second by 1e-24 and
/// its output layer by 1e18: the second layer's inputs (about 1e-21) have a Gram about 1e-42,
/// subnormal in f32, which the structured route multiplies by backpropagated factors whose
/// Gram is about 1e37, so every `K(x, x)` is normal (about 1e-5) and passed the range check
/// while carrying a relative error of about 3e-4 (f32's rounding: 6e-8): the f32 run
/// reported rank 16 for a kernel of rank 4. The run and the dry run refused it, comparing the
/// checked inputs' kernels with f64's; since the host route forms such a Gram at a power of
/// two the f32 run is right (rank 4, as f64's), and f32 with the saved weights unscaled runs.
#[test]
fn an_underflow_scaled_up_inside_the_kernel_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let saved = d.join("saved");
    let cfg = write_file(d, "save.toml", &config("", ""));
    ok(&run_with(&cfg, &saved, &["--save-weights"], &[]));
    let scaled = d.join("scaled.safetensors");
    edit_safetensors(&saved.join("weights.safetensors"), &scaled, |h, b| {
        for (name, count, scale) in [
            ("layers.0.weight", 24 * 4, 1e-21),
            ("layers.1.weight", 24 * 24, 1e-24),
            ("layers.2.weight", 24, 1e18),
        ] {
            for i in 0..count {
                let at = entry_offset(h, name, i);
                let v = f64::from_le_bytes(b[at..at + 8].try_into().unwrap());
                b[at..at + 8].copy_from_slice(&(v * scale).to_le_bytes());
            }
        }
    });
    let with = |precision: &str, weights: &Path| {
        config(
            "",
            &format!("weights = {:?}", weights.display().to_string()),
        )
        .replace(
            "precision = \"f64\"",
            &format!("precision = \"{precision}\""),
        )
    };
    // The host route forms a factor far from unit scale (the 1e-21 inputs' Gram) at a power
    // of two now (hundred-and-twentieth hostile round, D4): the f32 run keeps its digits and
    // has f64's rank; the comparison with f64's kernels stays the guard of the other routes.
    let f32_run = json_run(d, "f32", &with("f32", &scaled));
    let f64_run = json_run(d, "f64", &with("f64", &scaled));
    assert_eq!(f64_run["rank"], 4, "{f64_run}");
    assert_eq!(f32_run["rank"], 4, "{f32_run}");
    json_run(
        d,
        "unscaled",
        &with("f32", &saved.join("weights.safetensors")),
    );
}

/// Hundred-and-twenty-first hostile round, N1: a full kernel's refusal names the output whose
/// entry underflows. Two outputs of a tanh network whose middle layer is 0: output 0 reads
/// nothing (its `K(x, x)` is the network's own 0), output 1 reads every unit, by ones (a
/// normal kernel: the run passes) or by 1e-170 (its `K(x, x)`, about 1e-340, underflows to 0:
/// refused by the run and the dry run, naming output 1, not output 0's own 0).
#[test]
fn a_full_kernel_s_underflow_names_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let two = config("output_dim = 2", "output = \"full\"");
    let saved = d.join("saved");
    let cfg = write_file(d, "save.toml", &two);
    ok(&run_with(&cfg, &saved, &["--save-weights"], &[]));
    let with_readout = |name: &str, scale: f64| {
        let path = d.join(format!("{name}.safetensors"));
        edit_safetensors(&saved.join("weights.safetensors"), &path, |h, b| {
            let mut set = |name: &str, i: usize, v: f64| {
                let at = entry_offset(h, name, i);
                b[at..at + 8].copy_from_slice(&v.to_le_bytes());
            };
            for i in 0..24 * 24 {
                set("layers.1.weight", i, 0.0);
            }
            // `[out, in]`: row 0 is output 0's.
            for i in 0..24 {
                set("layers.2.weight", i, 0.0);
                set("layers.2.weight", 24 + i, scale);
            }
        });
        let text = config(
            "output_dim = 2",
            &format!(
                "output = \"full\"\nweights = {:?}",
                path.display().to_string()
            ),
        );
        write_file(d, &format!("{name}.toml"), &text)
    };
    let normal = json_run(
        d,
        "normal",
        &std::fs::read_to_string(with_readout("ones", 1.0)).unwrap(),
    );
    assert!(normal["rank"].as_u64().unwrap() > 0, "{normal}");
    let cfg = with_readout("tiny", 1e-170);
    let out = d.join("tiny");
    for extra in [&[][..], &["--dry-run"]] {
        let o = run_with(&cfg, &out, extra, &[]);
        refused(
            &o,
            &[
                "probe.precision",
                "K(x, x) of output 1 = 0.000e0",
                "underflow",
            ],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("output 0"), "{err}");
    }
    assert!(!out.exists(), "the refused run wrote");
}

/// Hundred-and-twenty-second hostile round, D2: a ReLU network whose hidden layer's inputs
/// are about 1e160 (their square norm `|a|^2` past f64) and whose signals there are about
/// 1e-165 has a kernel of about 1e-9; the range check formed `|a|^2` as it is and refused it
/// as "not finite" on every route. Kept now, with the same kappa on the structured, tiled and
/// autodiff routes and with `probe.output = "full"` (the device route, D1).
#[test]
fn a_hidden_square_norm_past_f64_is_no_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let relu = config("", "").replace("\"tanh\"", "\"relu\"");
    let saved = d.join("saved");
    let cfg = write_file(d, "save.toml", &relu);
    ok(&run_with(&cfg, &saved, &["--save-weights"], &[]));
    let far = d.join("far.safetensors");
    edit_safetensors(&saved.join("weights.safetensors"), &far, |h, b| {
        for (name, count, scale) in [
            ("layers.0.weight", 24 * 4, 1e160),
            ("layers.1.weight", 24 * 24, 1e-170),
            ("layers.2.weight", 24, 1e-165),
        ] {
            for i in 0..count {
                let at = entry_offset(h, name, i);
                let v = f64::from_le_bytes(b[at..at + 8].try_into().unwrap());
                // Positive hidden weights keep every unit live at positive inputs.
                let v = if name == "layers.2.weight" {
                    v
                } else {
                    v.abs()
                };
                b[at..at + 8].copy_from_slice(&(v * scale).to_le_bytes());
            }
        }
    });
    let mut x = Vec::new();
    for i in 0..30 {
        x.extend((0..4).map(|j| 0.5 + ((i * 4 + j) as f64 * 0.37).sin().abs()));
    }
    let data = d.join("x.npy");
    npy::write_f64(&data, &x, &[30, 4]).unwrap();
    let with = |keys: &str| {
        relu.replace(
            "dataset = \"synthetic\"\nn = 30\ninput_dim = 4",
            &format!("dataset = \"file\"\nx = {:?}", data.display().to_string()),
        )
        .replace(
            "precision = \"f64\"",
            &format!(
                "precision = \"f64\"\nweights = {:?}\n{keys}",
                far.display().to_string()
            ),
        )
    };
    // Positive hidden weights make the ReLU network linear on these inputs: its kernel has
    // the inputs' rank, 4, on every route, and one largest eigenvalue.
    let tops: Vec<f64> = [
        ("structured", "method = \"structured\""),
        ("tiled", "eigen = \"tiled\""),
        ("autodiff", "method = \"autodiff\""),
        ("full", "output = \"full\""),
    ]
    .iter()
    .map(|(name, keys)| {
        let s = json_run(d, name, &with(keys));
        assert_eq!(s["rank"], 4, "{name}: {s}");
        s["lambda_max"]
            .as_f64()
            .unwrap_or_else(|| panic!("{name}: {s}"))
    })
    .collect();
    assert!(tops[0] > 1e-12 && tops[0] < 1e-3, "{tops:?}");
    for t in &tops[1..] {
        assert!(((t - tops[0]) / tops[0]).abs() < 1e-10, "{tops:?}");
    }
}

/// Issue 65, fifth hostile round (the mirror of item 7): `--save-weights` with the theory
/// kernel wrote a seeded draw's weights.safetensors and outputs.npy beside a kernel no
/// weights made, exit 0. Refused before any work, in the run and the dry run.
#[test]
fn saved_weights_of_the_theory_kernel_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_file(dir.path(), "t.toml", &config("", "method = \"theory\""));
    let out = dir.path().join("t");
    for extra in [&["--save-weights"][..], &["--save-weights", "--dry-run"]] {
        let o = run_with(&cfg, &out, extra, &[]);
        refused(&o, &["--save-weights", "theory", "t.toml"]);
        assert!(!out.exists());
    }
    ok(&run_with(&cfg, &out, &[], &[]));
}

/// Thirty-sixth and thirty-seventh hostile rounds, D1: a BatchNorm or LayerNorm ReLU MLP's
/// saved weights, every tensor scaled by 1e-100 (BatchNorm) or 1e-170 (LayerNorm), have a
/// kernel that underflows to exactly 0 (its true values tiny, not 0): refused, run and dry
/// run (a normalized network's 0 cannot be told from an underflow, and is said so), with
/// running and with batch statistics; the same weights unscaled run.
#[test]
fn a_normalized_networks_underflow_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, normalization, factor) in
        [("bn", "batch_norm", 1e-100), ("ln", "layer_norm", 1e-170)]
    {
        let model = format!("normalization = \"{normalization}\"");
        // ReLU: the tanh network's kernel at these scales is tiny but normal (its
        // normalizations' biases dominate), not 0.
        let config = |model: &str, keys: &str| config(model, keys).replace("tanh", "relu");
        let cfg = write_file(d, &format!("{name}.toml"), &config(&model, ""));
        ok(&run_with(&cfg, &d.join(name), &["--save-weights"], &[]));
        let raw = std::fs::read(d.join(name).join("weights.safetensors")).unwrap();
        let n = u64::from_le_bytes(raw[..8].try_into().unwrap()) as usize;
        let header = std::str::from_utf8(&raw[8..8 + n]).unwrap();
        assert!(!header.contains("F32"), "{header}");
        let mut tiny = raw.clone();
        for chunk in tiny[8 + n..].chunks_exact_mut(8) {
            let v = f64::from_le_bytes(chunk.try_into().unwrap()) * factor;
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        let path = d.join(format!("{name}_tiny.safetensors"));
        std::fs::write(&path, tiny).unwrap();
        let given = |file: &Path| {
            let keys = format!("weights = {:?}", file.display().to_string());
            write_file(d, &format!("{name}_given.toml"), &config(&model, &keys))
        };
        let cfg = given(&path);
        refused_run_and_dry_run(
            &cfg,
            &d.join(format!("{name}_out")),
            &["K(x, x) = 0.000e0", "cannot be told from an underflow"],
        );
        // Thirty-seventh hostile round, D1: under batch statistics (where one input alone
        // has none) the largest and the smallest inputs are checked as one batch.
        if normalization == "batch_norm" {
            let keys = format!(
                "weights = {:?}\nbatch_norm_statistics = \"batch\"",
                path.display().to_string()
            );
            let cfg = write_file(d, "bn_batch.toml", &config(&model, &keys));
            refused_run_and_dry_run(
                &cfg,
                &d.join("bn_batch_out"),
                &[
                    "probe.batch_norm_statistics",
                    "as a batch",
                    "K(x, x) = 0.000e0",
                ],
            );
        }
        let cfg = given(&d.join(name).join("weights.safetensors"));
        ok(&run_with(&cfg, &d.join(format!("{name}_same")), &[], &[]));
    }
}

/// The run and its dry run of `cfg` into `out` both refused, with `words` in the message.
fn refused_run_and_dry_run(cfg: &Path, out: &Path, words: &[&str]) {
    for extra in [&[][..], &["--dry-run"][..]] {
        refused(&run_with(cfg, out, extra, &[]), words);
    }
}

/// Thirty-seventh hostile round, D3: given weights whose kernel overflows on inputs other
/// than the largest and the smallest (a first-layer unit of weight 1e200 on the first
/// feature, dead where it is negative, as it is at those two) are refused before any work,
/// run and dry run alike, naming the first such row (every input's diagonal is formed, for
/// an MLP without normalization); before, the dry run said "new" and the run refused after
/// its work. In f32 the same at 1e30.
#[test]
fn an_overflow_only_other_inputs_reach_is_refused_by_the_dry_run_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Row 0 has the largest norm, row 3 the smallest; both have a negative first feature.
    let x = write_file(
        d,
        "x.csv",
        "-3,0\n1,0.5\n0.5,-1\n-0.1,0.05\n-1,-1\n0.7,0.1\n",
    );
    let config = |keys: &str| {
        format!(
            "[data]\ndataset = \"file\"\nn = 6\nx = {:?}\n[model]\nwidth = 8\ndepth = 2\n\
             activation = \"relu\"\n[probe]\n{keys}\n",
            x.display().to_string()
        )
    };
    let cfg = write_file(d, "seeded.toml", &config("precision = \"f64\""));
    let saved = d.join("saved");
    ok(&run_with(&cfg, &saved, &["--save-weights"], &[]));
    for (precision, big) in [("f64", 1e200), ("f32", 1e30)] {
        let file = d.join(format!("big_{precision}.safetensors"));
        edit_safetensors(&saved.join("weights.safetensors"), &file, |header, data| {
            for (i, v) in [(0, big), (1, 0.0)] {
                let at = entry_offset(header, "layers.0.weight", i);
                data[at..at + 8].copy_from_slice(&f64::to_le_bytes(v));
            }
        });
        let keys = format!(
            "precision = \"{precision}\"\nweights = {:?}",
            file.display().to_string()
        );
        let cfg = write_file(d, &format!("{precision}.toml"), &config(&keys));
        refused_run_and_dry_run(
            &cfg,
            &d.join(format!("out_{precision}")),
            &[
                "row 1 (counted from 0, as numpy indexes them), of norm 1.118e0,",
                &format!("not finite in {precision} as the run forms it"),
                "big_",
            ],
        );
        assert!(!d.join(format!("out_{precision}")).exists());
    }
}

/// A copy, at `d/name`, of the weights a seeded run saves ([`saved_weights`]), every value
/// (f64) multiplied by `scale`; its path.
fn scaled_weights(d: &Path, scale: f64, name: &str) -> std::path::PathBuf {
    let saved = saved_weights(d).join("weights.safetensors");
    let mut bytes = std::fs::read(&saved).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    for chunk in bytes[8 + n..].chunks_exact_mut(8) {
        let v = f64::from_le_bytes(chunk.try_into().unwrap()) * scale;
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    let path = d.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Eighty-third hostile round, D3: given weights scaled far down make the f32 kernel of
/// unit-scale inputs underflow; the refusal named the inputs alone and advised rescaling
/// them. It names `probe.weights` and the weights first, as the overflow's refusal does;
/// the seeded network's refusal (above) names the inputs.
#[test]
fn an_underflow_of_given_weights_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Three layers of weights scaled by 1e-10, normal numbers in f32: each gradient carries
    // two of them, the kernel about 1e-40 of the unit weights', subnormal in f32.
    let tiny = scaled_weights(d, 1e-10, "tiny.safetensors");
    let text = config("", &format!("weights = {:?}", tiny.display().to_string()))
        .replace("precision = \"f64\"", "precision = \"f32\"");
    let cfg = write_file(d, "tiny.toml", &text);
    refused_run_and_dry_run(
        &cfg,
        &d.join("tiny"),
        &[
            "probe.precision",
            "underflows",
            "with the weights of probe.weights",
            "tiny.safetensors",
            "rescale the weights or the inputs",
            "probe in f64",
        ],
    );
}

/// The `ntk_model_config` metadata of a safetensors file's header, as JSON.
fn saved_config(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap();
    let len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + len]).unwrap();
    serde_json::from_str(header["__metadata__"]["ntk_model_config"].as_str().unwrap()).unwrap()
}

/// Eighty-sixth hostile round, N1: `--save-weights` of a run on given weights records in the
/// file's metadata no seed (the tensors are not a seed's draw) and the given file's SHA-256;
/// the tensors are the given ones, byte for byte. A seeded network's file keeps its seed.
#[test]
fn saved_given_weights_record_their_file_not_a_seed() {
    let dir = tempfile::tempdir().unwrap();
    let saved = saved_weights(dir.path());
    let weights = saved.join("weights.safetensors");
    assert_eq!(saved_config(&weights)["seed"], 5);
    assert!(saved_config(&weights).get("weights_digest").is_none());
    let text = config(
        "",
        &format!("weights = {:?}", weights.display().to_string()),
    );
    let again = dir.path().join("again");
    let cfg = write_file(dir.path(), "g.toml", &text);
    ok(&run_with(&cfg, &again, &["--save-weights"], &[]));
    let meta = saved_config(&again.join("weights.safetensors"));
    assert!(meta["seed"].is_null(), "{meta}");
    let digest = ntk_runs::provenance::sha256_hex(&std::fs::read(&weights).unwrap());
    assert_eq!(meta["weights_digest"], digest.as_str(), "{meta}");
    assert_eq!(meta["width"], 24, "{meta}");
    let tensors = |p: &Path| {
        let bytes = std::fs::read(p).unwrap();
        let len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        bytes[8 + len..].to_vec()
    };
    assert_eq!(
        tensors(&again.join("weights.safetensors")),
        tensors(&weights)
    );
}

/// Eighty-seventh hostile round, N5: the underflow refusal names the given weights in f64 as
/// in f32 (it named them in f32 only), here where the kernel underflows to exactly 0.
#[test]
fn an_f64_underflow_of_given_weights_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tiny = scaled_weights(d, 1e-110, "tiny64.safetensors");
    let text = config("", &format!("weights = {:?}", tiny.display().to_string()));
    let cfg = write_file(d, "tiny64.toml", &text);
    refused_run_and_dry_run(
        &cfg,
        &d.join("tiny64"),
        &["underflows", "probe.weights = ", "tiny64.safetensors"],
    );
}

/// The hundred-and-first hostile round, N3: weights saved from a network of another
/// activation (tanh's given to an erf config: the same names and shapes) were used without a
/// word. The file's recorded config is compared with the run's: the keys that differ are
/// said in a warning, dry run and run, and the weights used as they are; the saving config's
/// own file says nothing.
#[test]
fn weights_saved_from_another_config_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let weights = saved_weights(d).join("weights.safetensors");
    let given = format!("weights = \"{}\"", weights.display());
    for (activation, said) in [("tanh", false), ("erf", true)] {
        let text = config("", &given).replace("\"tanh\"", &format!("\"{activation}\""));
        let cfg = write_file(d, "b.toml", &text);
        for extra in [&["--dry-run"][..], &[]] {
            let o = run_with(&cfg, &d.join(format!("o_{activation}")), extra, &[]);
            ok(&o);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(
                err.contains("activation: \"tanh\" -> \"erf\""),
                said,
                "{activation} {extra:?}: {err}"
            );
        }
    }
}

/// The hundred-and-thirty-third hostile round, second review, N1: a file whose recorded config
/// cannot be read (`ntk_model_config` no JSON) was used without a word, so the user relying
/// on the comparison was not told it did not run. A warning says so, dry run and run, and
/// the weights are used as they are.
#[test]
fn weights_whose_recorded_config_cannot_be_read_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut bytes = std::fs::read(saved_weights(d).join("weights.safetensors")).unwrap();
    let key = b"\"ntk_model_config\":\"{";
    let at = bytes
        .windows(key.len())
        .position(|w| w == key)
        .expect("the saved file records its config");
    // The same length, so the header's size holds: the JSON opens with `(`.
    bytes[at + key.len() - 1] = b'(';
    let weights = d.join("damaged.safetensors");
    std::fs::write(&weights, bytes).unwrap();
    let cfg = write_file(
        d,
        "damaged.toml",
        &config("", &format!("weights = \"{}\"", weights.display())),
    );
    for extra in [&["--dry-run"][..], &[]] {
        let o = run_with(&cfg, &d.join("o_damaged"), extra, &[]);
        ok(&o);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("the config the file records")
                && err.contains("cannot be compared (it is no JSON")
                && err.contains("damaged.safetensors"),
            "{extra:?}: {err}"
        );
    }
}
