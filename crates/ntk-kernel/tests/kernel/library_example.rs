//! The library's promise to a crate of its own (README, "As a library"): the dependency lines
//! README gives are the ones the example crate `examples/ntk-of-my-model` builds with (CI
//! builds and runs it), and that crate's lock pins the workspace's versions, so CI shares one
//! build of Burn between them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The trimmed, non-empty lines strictly between the first line containing `start` and the
/// next line containing `end`.
fn between(text: &str, start: &str, end: &str) -> Vec<String> {
    let block: Vec<String> = text
        .lines()
        .skip_while(|l| !l.contains(start))
        .skip(1)
        .take_while(|l| !l.contains(end))
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    assert!(!block.is_empty(), "no block after {start:?}");
    block
}

#[test]
fn readme_gives_the_example_crates_dependency_lines() {
    let readme = read("README.md");
    let after_marker = &readme[readme
        .find("<!-- the dependency lines")
        .expect("README marks the dependency lines")..];
    let readme_lines = between(after_marker, "```toml", "```");
    let manifest = read("examples/ntk-of-my-model/Cargo.toml");
    let example = between(&manifest, "# --- the dependency lines", "# --- end");
    assert_eq!(readme_lines, example);
}

/// `name -> versions` of a Cargo.lock.
fn locked(path: &str) -> BTreeMap<String, BTreeSet<String>> {
    let lock: toml::Value = toml::from_str(&read(path)).unwrap();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in lock["package"].as_array().unwrap() {
        let (name, version) = (p["name"].as_str().unwrap(), p["version"].as_str().unwrap());
        out.entry(name.into()).or_default().insert(version.into());
    }
    out
}

#[test]
fn the_example_crate_locks_the_workspaces_versions() {
    let workspace = locked("Cargo.lock");
    let example = locked("examples/ntk-of-my-model/Cargo.lock");
    let drift: Vec<String> = example
        .iter()
        .filter_map(|(name, versions)| {
            let ours = workspace.get(name)?;
            (!versions.is_subset(ours)).then(|| format!("{name}: {versions:?} vs {ours:?}"))
        })
        .collect();
    assert!(
        drift.is_empty(),
        "examples/ntk-of-my-model/Cargo.lock differs from Cargo.lock (copy the workspace's \
         lock over it and run `cargo update -w` there): {drift:?}"
    );
}

/// README's library examples, and the book's chapter "As a library" (docs/book/src/library.md),
/// are the example crate's `src/bin` files, byte for byte, so the crate CI builds with README's
/// dependency lines is the code they show: every block so marked is checked, and each file's
/// block is shown somewhere (`own_model.rs` on README's front page).
#[test]
fn readme_shows_the_example_crates_library_examples() {
    let docs = ["README.md", "docs/book/src/library.md"].map(|d| (d, read(d)));
    for file in ["own_model.rs", "mlp.rs"] {
        let path = format!("examples/ntk-of-my-model/src/bin/{file}");
        let marker = format!("<!-- {path} holds this block");
        let mut shown = 0;
        for (doc, text) in &docs {
            for (at, _) in text.match_indices(&marker) {
                let after = &text[at..];
                let open = after
                    .find("```rust")
                    .expect("a rust block after the marker");
                let body = &after[open..];
                let start = body.find('\n').expect("a fence line") + 1;
                let end = body[start..].find("```").expect("a closing fence") + start;
                assert_eq!(&body[start..end], read(&path), "{doc}'s block for {path}");
                shown += 1;
            }
        }
        assert!(shown > 0, "no document marks the block of {path}");
    }
    assert!(
        docs[0]
            .1
            .contains("<!-- examples/ntk-of-my-model/src/bin/own_model.rs holds this block"),
        "README's front page shows own_model.rs"
    );
}

/// The book's chapter "As a library" gives the same dependency lines as README.
#[test]
fn the_book_gives_the_example_crates_dependency_lines() {
    let book = read("docs/book/src/library.md");
    let after_marker = &book[book
        .find("<!-- the dependency lines")
        .expect("the book marks the dependency lines")..];
    let manifest = read("examples/ntk-of-my-model/Cargo.toml");
    assert_eq!(
        between(after_marker, "```toml", "```"),
        between(&manifest, "# --- the dependency lines", "# --- end")
    );
}
