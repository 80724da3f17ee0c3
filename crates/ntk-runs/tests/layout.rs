//! The workspace's layout rule, checked: within every crate the modules form no import
//! cycle (a module that uses another is not used by it, directly or through others), so
//! each crate reads bottom up. A module's uses are its `crate::a::b` and `super::x` paths
//! outside comments and outside its `#[cfg(test)]` part; a path names the deepest module it
//! reaches. And README's Layout names every module of every crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod common;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    common::files_with(dir, "rs", out);
}

/// The module path of a source file relative to `src` (`sweep/collect`; `lib.rs`, `main.rs`
/// and `mod.rs` name their directory).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("/")
}

/// The identifier paths that follow `prefix` in `code` (`crate::sweep::Shard` gives
/// `["sweep", "Shard"]`).
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let segs: Vec<String> = rest[..end]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        found.push(segs);
    }
    found
}

/// The modules of the crate at `src` and the modules each uses.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mods: BTreeMap<String, PathBuf> = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let mut edges = BTreeMap::new();
    for (m, file) in &mods {
        let text = std::fs::read_to_string(file).unwrap();
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut uses = BTreeSet::new();
        let parent = m.rsplit_once('/').map_or("", |(p, _)| p);
        let mut add = |segs: &[String], base: &str| {
            for k in (1..=segs.len()).rev() {
                let name = segs[..k].join("/");
                let cand = if base.is_empty() {
                    name
                } else {
                    format!("{base}/{name}")
                };
                if mods.contains_key(&cand) {
                    // A module's own parents and children are its tree, not a use.
                    let related = cand == *m
                        || m.starts_with(&format!("{cand}/"))
                        || cand.starts_with(&format!("{m}/"));
                    if !related {
                        uses.insert(cand);
                    }
                    return;
                }
            }
        };
        for segs in paths_after(&code, "crate::") {
            add(&segs, "");
        }
        for segs in paths_after(&code, "super::") {
            add(&segs, parent);
        }
        edges.insert(m.clone(), uses);
    }
    edges
}

/// The strongly connected components of more than one module (Tarjan).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for w in &s.edges[v] {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_crate_has_an_import_cycle() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut checked = 0;
    for e in std::fs::read_dir(&crates).unwrap().flatten() {
        let src = e.path().join("src");
        if !src.is_dir() {
            continue;
        }
        checked += 1;
        let edges = graph(&src);
        for comp in cycles(&edges) {
            let uses: Vec<String> = comp
                .iter()
                .map(|m| {
                    let inside: Vec<&str> = edges[m]
                        .iter()
                        .filter(|w| comp.contains(w))
                        .map(String::as_str)
                        .collect();
                    format!("{m} -> {}", inside.join(", "))
                })
                .collect();
            found.push(format!("{}: {}", src.display(), uses.join("; ")));
        }
    }
    assert!(
        checked >= 8,
        "only {checked} crates found under {}",
        crates.display()
    );
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

/// The scan sees a cycle where there is one (and none in a chain).
#[test]
fn a_cycle_is_found_and_a_chain_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("lib.rs"), "pub mod a;\npub mod b;\npub mod c;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::X;\n").unwrap();
    std::fs::write(
        src.join("b.rs"),
        "// crate::a in a comment\npub struct X;\n",
    )
    .unwrap();
    std::fs::write(src.join("c.rs"), "use crate::a;\n").unwrap();
    assert!(cycles(&graph(src)).is_empty());
    std::fs::write(
        src.join("b.rs"),
        "pub struct X;\nfn f() { crate::a::g() }\n",
    )
    .unwrap();
    assert_eq!(
        cycles(&graph(src)),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
}

/// The words of each crate's entry in README's Layout section (`crates/ntk-x  words...`,
/// continued on the lines indented under it).
fn readme_layout() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme
        .find("## Layout")
        .expect("README has a Layout section");
    let end = readme[start..]
        .find("\n## ")
        .map_or(readme.len(), |e| start + e);
    let mut entries: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in readme[start..end].lines() {
        if let Some(rest) = line.strip_prefix("crates/") {
            let (name, words) = rest.split_once(' ').unwrap_or((rest, ""));
            entries.insert(name.to_string(), words.to_string());
            current = Some(name.to_string());
        } else if line.starts_with("                   ")
            && let Some(c) = &current
        {
            let e = entries.get_mut(c).unwrap();
            e.push(' ');
            e.push_str(line.trim());
        } else {
            current = None;
        }
    }
    entries
        .into_iter()
        .map(|(k, v)| {
            let words = v
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect();
            (k, words)
        })
        .collect()
}

/// README's Layout names every module of every crate (its file's or directory's name, in
/// the crate's entry): a module added without a word there fails here, naming it. Inline
/// test files (`tests.rs`) are the tests of their parent and need no entry.
#[test]
fn readme_layout_names_every_module() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let layout = readme_layout();
    let mut missing = Vec::new();
    let mut checked = 0;
    for e in std::fs::read_dir(&crates).unwrap().flatten() {
        let src = e.path().join("src");
        if !src.is_dir() {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(words) = layout.get(&name) else {
            missing.push(format!("{name}: no entry at all"));
            continue;
        };
        let mut files = Vec::new();
        sources(&src, &mut files);
        for f in files {
            let module = module_of(&src, &f);
            let Some(last) = module.rsplit('/').next().filter(|m| !m.is_empty()) else {
                continue;
            };
            if last == "tests" {
                continue;
            }
            checked += 1;
            if !words.contains(last) {
                missing.push(format!("{name}: {module}"));
            }
        }
    }
    assert!(checked > 100, "only {checked} modules found");
    assert!(
        missing.is_empty(),
        "README's Layout does not name these modules (add a word to the crate's entry): {}",
        missing.join(", ")
    );
}
