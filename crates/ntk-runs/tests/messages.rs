//! The workspace's messages, checked in their sources: no string literal holds a run of
//! spaces between two words, which is what a line continuation written without its `\`
//! leaves (the next line's indentation kept inside the sentence: hundred-and-tenth hostile
//! round, D1, "which                  would break", and N5, "weights are          the
//! file's"). Aligned tables (a literal that opens with spaces, such as `"  kappa   {}"`)
//! are left alone.

use std::path::{Path, PathBuf};

mod common;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    common::files_with(dir, "rs", out);
}

/// The string literals of a source file, each as written between its quotes with its line
/// continuations (`\` at a line's end and the next line's indentation) taken out, as the
/// compiler takes them out: comments, character literals and lifetimes passed over; a raw
/// string (`r"..."`, `r#"..."#`) read to its closing quote and hashes.
fn literals(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '/' if c.get(i + 1) == Some(&'/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < c.len() && !(c[i] == '*' && c[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            '\'' => {
                // 'x', '\n', '\u{..}': a character; 'a (a lifetime) is not closed.
                let close = match c.get(i + 1) {
                    Some('\\') => (i + 2..c.len().min(i + 12)).find(|&j| c[j] == '\''),
                    Some(_) if c.get(i + 2) == Some(&'\'') => Some(i + 2),
                    _ => None,
                };
                i = close.map_or(i + 1, |j| j + 1);
            }
            'r' if matches!(c.get(i + 1), Some('"' | '#'))
                && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_')) =>
            {
                let hashes = c[i + 1..].iter().take_while(|&&x| x == '#').count();
                let start = i + 1 + hashes + 1;
                if c.get(i + 1 + hashes) != Some(&'"') {
                    i += 1;
                    continue;
                }
                let mut j = start;
                while j < c.len()
                    && !(c[j] == '"'
                        && c[j + 1..].iter().take_while(|&&x| x == '#').count() >= hashes)
                {
                    j += 1;
                }
                found.push(c[start..j.min(c.len())].iter().collect());
                i = j + 1 + hashes;
            }
            '"' => {
                let mut s = String::new();
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' && c.get(i + 1) == Some(&'\n') {
                        // A continuation: the newline and the next line's indentation go.
                        i += 2;
                        while i < c.len() && c[i].is_whitespace() {
                            i += 1;
                        }
                        continue;
                    }
                    if c[i] == '\\' {
                        s.push(c[i]);
                        i += 1;
                    }
                    if i < c.len() {
                        s.push(c[i]);
                    }
                    i += 1;
                }
                found.push(s);
                i += 1;
            }
            _ => i += 1,
        }
    }
    found
}

/// Whether `text` has a word, eight or more spaces, and a word, past its opening spaces.
fn gap_between_words(text: &str) -> bool {
    let body = text.trim_start();
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == ' ' {
            let start = i;
            while i < chars.len() && chars[i] == ' ' {
                i += 1;
            }
            let word = |c: char| c.is_alphanumeric() || ",.;:)'".contains(c);
            if i - start >= 8 && start > 0 && i < chars.len() {
                let (before, after) = (chars[start - 1], chars[i]);
                if word(before) && after.is_alphanumeric() && !text.starts_with("  ") {
                    return true;
                }
            }
        } else {
            i += 1;
        }
    }
    false
}

#[test]
fn no_message_holds_a_gap_between_its_words() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for e in std::fs::read_dir(&crates).unwrap().flatten() {
        let src = e.path().join("src");
        if src.is_dir() {
            sources(&src, &mut files);
        }
    }
    assert!(files.len() > 100, "{} sources", files.len());
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for lit in literals(&text) {
            if gap_between_words(&lit) {
                found.push(format!("{}: \"{lit}\"", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn a_gap_is_found_and_a_table_is_not() {
    assert!(gap_between_words("which                  would break"));
    assert!(gap_between_words("are          the file's"));
    assert!(!gap_between_words("  kappa               inf (a block"));
    assert!(!gap_between_words("{:>6} {:>4}"));
    assert!(!gap_between_words("one space, two  spaces"));
    assert_eq!(
        literals("format!(\"a \\\"b\\\"        c\", x) // \"gap        here\"\n"),
        ["a \\\"b\\\"        c"]
    );
    // A continuation taken out; a character literal and a lifetime passed over.
    let code = "let c = '\"'; fn f<'a>() {}\nlet s = \"which \\\n      would\";\n";
    assert_eq!(literals(code), ["which would"]);
    assert_eq!(
        literals("r#\"raw \"x\" in\"#, \"b\""),
        ["raw \"x\" in", "b"]
    );
}
