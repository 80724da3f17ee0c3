//! The documentation is whole (issue 66, item 4): README is a front page and the reference a
//! book in mdBook's layout under `docs/book/`, read as plain Markdown on GitHub, so nothing
//! renders it to find a broken link. Here, with no mdBook: every chapter `SUMMARY.md` lists
//! exists (and every chapter file is listed), and every relative link of `README.md` and
//! `docs/**/*.md` names a file or directory that exists and, into a Markdown file, a heading
//! it has (GitHub's anchor for it).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

mod common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The Markdown files checked: README.md and every `.md` under docs/.
fn documents() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md")];
    common::files_with(&root().join("docs"), "md", &mut out);
    out.sort();
    out
}

/// The lines of `text` outside fenced code blocks, with their line numbers (from 1).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let marker = if t.starts_with("```") {
            Some("```")
        } else if t.starts_with("~~~") {
            Some("~~~")
        } else {
            None
        };
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(f), Some(m)) if f == m => fence = None,
            (None, None) => out.push((i + 1, line)),
            _ => {}
        }
    }
    out
}

/// `line` without its inline code spans (a link inside backticks is not a link).
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in line.chars() {
        if c == '`' {
            inside = !inside;
        } else if !inside {
            out.push(c);
        }
    }
    out
}

/// The targets of the inline links `[text](target)` on a line (a title after a space is
/// dropped).
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let inner = &after[..end];
        let target = match inner.strip_prefix('<') {
            Some(bracketed) => bracketed.split('>').next().unwrap_or(""),
            None => inner.split_whitespace().next().unwrap_or(""),
        };
        if !target.is_empty() {
            out.push(target.to_string());
        }
        rest = &after[end..];
    }
    out
}

/// GitHub's anchor of a heading: lower case, letters, digits, `-` and `_` kept, spaces made
/// `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every anchor a Markdown file has: its headings' (a repeated one also as `-1`, `-2`, ...).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let t = line.trim_start();
        let hashes = t.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || hashes > 6 || !t[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&without_code(&t[hashes..]).replace('`', ""));
        let mut name = base.clone();
        let mut k = 0;
        while !out.insert(name.clone()) {
            k += 1;
            name = format!("{base}-{k}");
        }
    }
    out
}

/// What is wrong with one link of `doc` (None: it resolves).
fn broken(doc: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        doc.to_path_buf()
    } else {
        doc.parent().unwrap().join(path)
    };
    if !file.exists() {
        return Some(format!("{target}: no such file"));
    }
    if let Some(fragment) = fragment
        && file.extension().is_some_and(|x| x == "md")
        && !anchors(&read(&file)).contains(fragment)
    {
        return Some(format!("{target}: no heading #{fragment} there"));
    }
    None
}

#[test]
fn every_relative_link_resolves() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = read(&doc);
        for (n, line) in prose_lines(&text) {
            for target in link_targets(&without_code(line)) {
                checked += 1;
                if let Some(why) = broken(&doc, &target) {
                    let name = doc
                        .strip_prefix(root())
                        .unwrap_or(&doc)
                        .display()
                        .to_string();
                    bad.push(format!("{name}:{n}: {why}"));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links found");
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn the_book_has_every_chapter_its_summary_lists() {
    let book = root().join("docs/book");
    assert!(book.join("book.toml").is_file(), "docs/book/book.toml");
    let src = book.join("src");
    let summary = read(&src.join("SUMMARY.md"));
    let mut listed = BTreeSet::new();
    let mut missing = Vec::new();
    for (_, line) in prose_lines(&summary) {
        for target in link_targets(line) {
            let chapter = target.split('#').next().unwrap().to_string();
            if !src.join(&chapter).is_file() {
                missing.push(chapter.clone());
            }
            listed.insert(chapter);
        }
    }
    assert!(listed.len() > 5, "SUMMARY.md lists only {listed:?}");
    assert!(
        missing.is_empty(),
        "SUMMARY.md lists missing chapters: {missing:?}"
    );
    let unlisted: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".md") && f != "SUMMARY.md" && !listed.contains(f))
        .collect();
    assert!(
        unlisted.is_empty(),
        "chapters not in SUMMARY.md (mdBook would not render them): {unlisted:?}"
    );
}

#[test]
fn slugs_and_links_parse_as_github_does() {
    assert_eq!(
        slug("Provenance: results are what their config says"),
        "provenance-results-are-what-their-config-says"
    );
    assert_eq!(slug("1. One network's NTK"), "1-one-networks-ntk");
    assert_eq!(
        link_targets("see [a](b.md#c) and [d](<e f.md> \"t\")"),
        vec!["b.md#c", "e f.md"]
    );
    assert!(link_targets(&without_code("`[x](nowhere.md)`")).is_empty());
    let text = "# A\n```sh\n# not a heading\n```\n## A\n";
    assert_eq!(
        anchors(text),
        BTreeSet::from(["a".to_string(), "a-1".to_string()])
    );
}
