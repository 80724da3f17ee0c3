//! Command-line overrides of a TOML config: `--set KEY=VALUE` at a dotted key, typed by the
//! config's own schema.
//!
//! A config file is read into a [`toml::Table`], each [`Assignment`] is applied at its
//! dotted key (creating the tables on the way: `--set ntk.every=1` works on a file without
//! `[ntk]`), and the table is then deserialized into the config type, so an override goes
//! through the very checks a value in the file does: unknown keys are refused
//! (`deny_unknown_fields`), types are the schema's, and the caller validates the result as
//! it validates a file. Errors name the assignment (`--set model.depht=3: unknown key
//! model.depht ...`), not a line of a file the user never wrote.
//!
//! Values are TOML (`5`, `0.5`, `true`, `[0, 1]`, `"text"`); text that is not valid TOML
//! is taken as a string, so `--set data.dataset=mnist` needs no quotes.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use toml::{Table, Value};

use crate::Error;

/// A config as every message of both tools names it: its file, and ` (with overrides)` where
/// assignments (`--set`, or a flag that sets a key) changed what the file says, so that a
/// message about a value never sends the reader to a file that does not hold it (hostile
/// rounds 6, 57 and 58: warnings, `collect --config`, the sweep-axis and command refusals
/// named the file alone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigName {
    /// The file, as the user named it.
    pub path: PathBuf,
    /// Whether assignments changed it.
    pub overridden: bool,
}

impl ConfigName {
    /// `path` with `sets` applied (overridden when there is one).
    pub fn new(path: &Path, sets: &[Assignment]) -> Self {
        Self {
            path: path.to_path_buf(),
            overridden: !sets.is_empty(),
        }
    }
}

impl std::fmt::Display for ConfigName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Its control characters escaped, a newline too (hundred-and-fourth hostile round,
        // D3: a config at a path with a newline broke its refusals' line at the path).
        write!(f, "{}", ntk_files::shown::Shown::shown(self.path.as_path()))?;
        if self.overridden {
            f.write_str(" (with overrides)")?;
        }
        Ok(())
    }
}

/// One override: set (or remove) the value at a dotted key.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// The dotted key, e.g. `model.depth`.
    pub key: String,
    /// The new value; `None` removes the key (a no-op when it is absent).
    pub value: Option<Value>,
    /// What the user wrote, for errors: `--set model.depth=5`, or a short flag such as
    /// `--depth 5`.
    pub origin: String,
}

impl Assignment {
    /// Parses one `--set` argument, `KEY=VALUE`: the value as TOML, else as a bare string;
    /// `KEY=` (nothing after `=`) removes the key, so that it takes its default.
    pub fn parse(arg: &str) -> crate::Result<Self> {
        // A long argument is quoted by its start (ninety-seventh hostile round, N5).
        // Escaped too (hundred-and-sixth hostile round, D3: `--set` without `=` printed a
        // newline of it raw).
        let origin = format!(
            "--set {}",
            crate::quote::controls_escaped(&crate::quote::cut_long(arg))
        );
        let (key, value) = arg.split_once('=').ok_or_else(|| Error::Override {
            origin: origin.clone(),
            message: "expected key=value (e.g. model.depth=5)".to_string(),
            key: None,
        })?;
        let key = key.trim_ascii();
        check_key(key)
            .and_then(|()| check_value(value))
            .map_err(|e| Error::Assignment {
                // Cut, then escaped: the length said is of the text typed (ninety-ninth
                // hostile round, N3: a 318-byte `--set` ending in ESC was "(323 bytes)").
                origin: format!(
                    "--set {}",
                    crate::quote::controls_escaped(&crate::quote::cut_long(arg))
                ),
                source: Box::new(e),
            })?;
        Ok(Self {
            key: key.to_string(),
            value: (!value.trim_ascii().is_empty()).then(|| parse_value(value)),
            origin,
        })
    }

    /// The value this assignment gives the dotted `key` at or below its own (a table's
    /// member, `None` where it removes or leaves the key out); `None` outside: the
    /// assignment does not set `key`.
    fn value_at(&self, key: &str) -> Option<Option<&Value>> {
        let rest = if key == self.key {
            ""
        } else {
            key.strip_prefix(&self.key)?.strip_prefix('.')?
        };
        let mut value = self.value.as_ref();
        for part in rest.split('.').filter(|p| !p.is_empty()) {
            value = value.and_then(|v| v.as_table()).and_then(|t| t.get(part));
        }
        Some(value)
    }

    /// Whether this assignment and `other` give one key two values: the same key, or a
    /// table's (`model={...}`, which sets every key of it) and a key in it (ninety-seventh
    /// hostile round, D1: a table `--set` escaped the check of two values for one key).
    /// The key they share, with the two values, when they do.
    pub fn clashes_with(&self, other: &Assignment) -> Option<String> {
        let differ = |a: &Assignment, b: &Assignment| {
            a.value_at(&b.key)
                .is_some_and(|v| v != b.value.as_ref())
                .then(|| b.key.clone())
        };
        differ(self, other).or_else(|| differ(other, self))
    }

    /// The dotted keys this assignment sets: its key, and every key of a table it sets
    /// (`model={depth=3}` sets `model.depth`).
    pub fn leaves(&self) -> Vec<String> {
        fn walk(prefix: &str, v: &Value, out: &mut Vec<String>) {
            out.push(prefix.to_string());
            if let Some(t) = v.as_table() {
                for (k, v) in t {
                    walk(&format!("{prefix}.{k}"), v, out);
                }
            }
        }
        let mut out = Vec::new();
        match &self.value {
            Some(v) => walk(&self.key, v, &mut out),
            None => out.push(self.key.clone()),
        }
        out
    }

    /// Sets `key` to `value`; `origin` is what errors call it (a short flag: `--depth 5`).
    /// `origin` is shown with its control characters escaped (hundred-and-seventh hostile
    /// round, D2: `--precision` with a newline in its value broke its refusal's line).
    pub fn set(key: &str, value: impl Into<Value>, origin: impl Into<String>) -> Self {
        Self {
            key: key.to_string(),
            value: Some(value.into()),
            origin: crate::quote::controls_escaped(&origin.into()),
        }
    }

    /// Removes `key` (e.g. `train.iterations` when `--epochs` is given).
    pub fn remove(key: &str, origin: impl Into<String>) -> Self {
        Self {
            key: key.to_string(),
            value: None,
            origin: crate::quote::controls_escaped(&origin.into()),
        }
    }

    /// The key's parts.
    pub fn path(&self) -> impl Iterator<Item = &str> {
        self.key.split('.')
    }

    /// Applies this assignment to `table`, creating missing tables on the way.
    pub fn apply(&self, table: &mut Table) -> crate::Result<()> {
        let parts: Vec<&str> = self.path().collect();
        let (last, parents) = parts.split_last().expect("split yields at least one part");
        let mut t = table;
        for (i, part) in parents.iter().enumerate() {
            if self.value.is_none() && !t.contains_key(*part) {
                return Ok(());
            }
            let entry = t
                .entry(part.to_string())
                .or_insert_with(|| Value::Table(Table::new()));
            t = match entry {
                Value::Table(inner) => inner,
                other => {
                    return Err(Error::NotATable {
                        origin: self.origin.clone(),
                        key: parts[..=i].join("."),
                        found: other.type_str(),
                    });
                }
            };
        }
        match &self.value {
            Some(v) => {
                t.insert(last.to_string(), v.clone());
            }
            None => {
                t.remove(*last);
            }
        }
        Ok(())
    }
}

/// A key is dotted bare TOML keys: letters, digits, `_` and `-`.
fn check_key(key: &str) -> crate::Result<()> {
    if key.is_empty() {
        return Err(Error::EmptyKey);
    }
    for part in key.split('.') {
        if part.is_empty()
            || !part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(Error::BadKey {
                key: key.to_string(),
            });
        }
    }
    Ok(())
}

/// A value is one line: a line break (or any control character but a tab) would let TOML
/// read what follows as more keys and tables, which the value's key would silently drop.
fn check_value(value: &str) -> crate::Result<()> {
    if let Some(c) = value.chars().find(|c| c.is_control() && *c != '\t') {
        return Err(Error::ControlInValue {
            found: c.escape_debug().to_string(),
        });
    }
    // A whole number TOML cannot hold would be read as the string of its digits, and its key
    // then said to get "a string" (eighth hostile round: `schedule.step_size=2^64` read
    // 'invalid type: string "18446744073709551616", expected usize').
    if beyond_integers(value) {
        return Err(Error::IntegerRange {
            value: value.trim_ascii().to_string(),
        });
    }
    // A decimal number beyond f64's range likewise (eighty-third hostile round, N2:
    // `model.activation_param=1e400` read 'invalid type: string "1e400", expected f64').
    if beyond_floats(value) {
        return Err(Error::FloatRange {
            value: value.trim_ascii().to_string(),
        });
    }
    // Only a value TOML reads (text that is not TOML is the string it is: a path such as
    // `1e-400/x.npy`; ninety-seventh hostile round, D3).
    if !matches!(parse_value(value), Value::String(_))
        && let Some((_, literal)) = zero_by_underflow(&format!("v = {}", value.trim_ascii()))
    {
        return Err(Error::FloatUnderflow {
            at: String::new(),
            value: literal,
        });
    }
    // The same inside an array or an inline table, which TOML then cannot read as a whole
    // and which became the string of its text (ninth hostile round:
    // `sweep.depths=[18446744073709551615]` read 'invalid type: string "[...]", expected a
    // sequence'): the member beyond 64 bits is named.
    let trimmed = value.trim_ascii();
    let bracketed = (trimmed.starts_with('[') && trimmed.ends_with(']'))
        || (trimmed.starts_with('{') && trimmed.ends_with('}'));
    if bracketed
        && matches!(parse_value(value), Value::String(_))
        && let Some(member) = trimmed
            .split(|c: char| "[]{},=".contains(c) || c.is_whitespace())
            .find(|t| beyond_integers(t))
    {
        return Err(Error::IntegerRange {
            value: member.to_string(),
        });
    }
    Ok(())
}

/// The first float of the TOML document `text` written nonzero but read as 0 by f64, with
/// its line (from 1) and its text as written: `1e-400`, `-2.5E-999`. TOML's own parser
/// (toml_edit, which keeps each value's place in the text) finds the values, so a key, a
/// table's name, a string or a comment is never taken for a number (ninety-eighth hostile
/// round, D3: a hand-made scan read a table header `[1e-400]` as one). Text TOML does not
/// parse has none here: its parse error is said where it is read.
pub fn zero_by_underflow(text: &str) -> Option<(usize, String)> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut found = Vec::new();
    underflows_in_item(doc.as_item(), text, &mut found);
    let (start, literal) = found.into_iter().min_by_key(|(start, _)| *start)?;
    Some((text[..start].matches('\n').count() + 1, literal))
}

/// Every float under `item` written nonzero and read as 0, by its place in `text`.
fn underflows_in_item(item: &toml_edit::Item, text: &str, found: &mut Vec<(usize, String)>) {
    match item {
        toml_edit::Item::Value(value) => underflows_in_value(value, text, found),
        toml_edit::Item::Table(table) => {
            for (_, item) in table.iter() {
                underflows_in_item(item, text, found);
            }
        }
        toml_edit::Item::ArrayOfTables(tables) => {
            for (_, item) in tables.iter().flat_map(|t| t.iter()) {
                underflows_in_item(item, text, found);
            }
        }
        toml_edit::Item::None => {}
    }
}

/// [`underflows_in_item`] of a value: a float, or the members of an array or inline table.
fn underflows_in_value(value: &toml_edit::Value, text: &str, found: &mut Vec<(usize, String)>) {
    match value {
        toml_edit::Value::Float(f) if *f.value() == 0.0 => {
            if let Some((start, literal)) = f.span().and_then(|r| Some((r.start, text.get(r)?))) {
                let digits = literal.replace('_', "");
                let mantissa = digits.split(['e', 'E']).next().unwrap_or("");
                if mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
                    found.push((start, literal.to_string()));
                }
            }
        }
        toml_edit::Value::Array(array) => {
            for member in array.iter() {
                underflows_in_value(member, text, found);
            }
        }
        toml_edit::Value::InlineTable(table) => {
            for (_, member) in table.iter() {
                underflows_in_value(member, text, found);
            }
        }
        _ => {}
    }
}

/// Whether `text` is a decimal number (digits, a point, an exponent, a sign) whose
/// magnitude f64 cannot hold: TOML reads it as a string (`1e400`) or an infinity
/// (`-2.5e999`), neither of which the text says.
fn beyond_floats(text: &str) -> bool {
    let t = text.trim_ascii();
    let body = t.trim_start_matches(['+', '-']);
    body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || "._eE+-".contains(c))
        && t.replace('_', "")
            .parse::<f64>()
            .is_ok_and(f64::is_infinite)
        && !matches!(parse_value(text), Value::Float(f) if f.is_finite())
}

/// Whether `text` is a whole number (digits, `_`, a sign) that TOML's 64-bit integers
/// cannot hold.
fn beyond_integers(text: &str) -> bool {
    let digits = text.trim_ascii().trim_start_matches(['+', '-']);
    digits.starts_with(|c: char| ('1'..='9').contains(&c))
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
        && !matches!(parse_value(text), Value::Integer(_))
}

/// A value as TOML (`5`, `0.5`, `true`, `[0, 1]`, `"a b"`, `{ every = 1, n = 10 }`); text
/// that is not a TOML value is the string itself (`mnist`, `runs/x`). Text that TOML reads
/// as more than the one value (`8\n[data]\nn = 3`) is not a value either: the string.
pub fn parse_value(text: &str) -> Value {
    let trimmed = text.trim_ascii();
    format!("v = {trimmed}")
        .parse::<Table>()
        .ok()
        .filter(|t| t.len() == 1)
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(text.to_string()))
}

/// Parses every `--set` argument. Two `--set`s of one key with other values (or a value and a removal) are refused as a
/// flag and a `--set` are, by every command that takes them (run, sweep, collect): the last
/// held without a word (ninety-fifth hostile round, D2; the ninety-sixth's D1: `collect
/// --config`); the same value twice is one assignment.
pub fn parse_all(args: &[String]) -> crate::Result<Vec<Assignment>> {
    let sets: Vec<Assignment> = args
        .iter()
        .map(|a| Assignment::parse(a))
        .collect::<crate::Result<_>>()?;
    for (i, set) in sets.iter().enumerate() {
        if let Some((later, key)) = sets[i + 1..]
            .iter()
            .find_map(|later| set.clashes_with(later).map(|k| (later, k)))
        {
            // A table's `--set` that leaves the key out (so removes it) beside a `--set` of the
            // key: said as that, where "both set model.seed" named a key the table's `--set`
            // does not mention (hundred-and-thirty-fifth hostile round, second review, N6).
            let left_out = |a: &Assignment, b: &Assignment| {
                (a.value.as_ref().is_some_and(Value::is_table) && a.value_at(&key) == Some(None))
                    .then(|| (a.origin.clone(), a.key.clone(), b.origin.clone()))
            };
            if let Some((table, table_key, other)) =
                left_out(set, later).or_else(|| left_out(later, set))
            {
                return Err(Error::TableLeavesOut {
                    table,
                    table_key,
                    set: other,
                    key,
                });
            }
            return Err(Error::FlagAndSet {
                flag: set.origin.clone(),
                set: later.origin.clone(),
                key,
            });
        }
    }
    Ok(sets)
}

/// A config file read once: its text and table, which every check a tool makes of its config
/// and the load itself share, so that a file edited while a tool starts is never checked in
/// one version and loaded in another (a command read its config up to four times before).
#[derive(Clone, Debug)]
pub struct Source {
    path: std::path::PathBuf,
    text: String,
    table: Table,
}

impl Source {
    /// Reads and parses the file; errors name it (and the line of a syntax error).
    pub fn read(path: &Path) -> crate::Result<Self> {
        let text = crate::config_file::read_text(path)?;
        let table = text.parse::<Table>().map_err(|source| Error::Toml {
            path: path.to_path_buf(),
            source: Box::new(source),
        })?;
        if let Some((line, literal)) = zero_by_underflow(&text) {
            return Err(Error::FloatUnderflow {
                at: format!("{}: line {line}: ", path.display()),
                value: literal,
            });
        }
        crate::config_file::check_sections(path, &text)?;
        Ok(Self {
            path: path.to_path_buf(),
            text,
            table,
        })
    }

    /// The file, as the user named it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The config as messages name it once `sets` are applied ([`ConfigName`]).
    pub fn name(&self, sets: &[Assignment]) -> ConfigName {
        ConfigName::new(&self.path, sets)
    }

    /// The config as messages name it for the value at the dotted `key` alone: overridden
    /// where an assignment set that key or a table above it (a sweep axis made by `--set
    /// sweep.lrs=...`, an `[onnx]` removed by `--set onnx=`).
    pub fn name_for(&self, sets: &[Assignment], key: &str) -> ConfigName {
        let touched = sets.iter().any(|a| {
            key.strip_prefix(a.key.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        });
        ConfigName {
            path: self.path.clone(),
            overridden: touched,
        }
    }

    /// The file's table, before any override.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The table with `sets` applied in order (a `--set KEY=` removes the key).
    pub fn applied(&self, sets: &[Assignment]) -> crate::Result<Table> {
        let mut table = self.table.clone();
        for a in sets {
            a.apply(&mut table)?;
        }
        Ok(table)
    }

    /// The file with `sets` applied, deserialized. Without assignments this is exactly
    /// [`crate::config_file::load_toml`]. Errors in an override name it and the full dotted
    /// key; errors in the file name the file (and line). Validation beyond the types is the
    /// caller's, as for a file.
    pub fn load<T: DeserializeOwned>(&self, sets: &[Assignment]) -> crate::Result<T> {
        if sets.is_empty() {
            return crate::config_file::parse_toml(&self.path, &self.text);
        }
        from_table(self.applied(sets)?, sets, self)
    }

    /// [`Self::load`], with `fill` given the table (the file with `sets` applied) before it
    /// is typed: for a default that depends on more than the config's text (a file set's
    /// `data.n`, all rows of `data.x`). `fill` returns whether it added anything; when it
    /// did not, this is exactly [`Self::load`]. Its error is a default it could not find,
    /// taken apart as the key left out and why (what ntk-data's `MissingDefault` turns
    /// into), and is reported as [`Error::Default`] against the file.
    pub fn load_filled<T: DeserializeOwned, E: Into<(String, String)>>(
        &self,
        sets: &[Assignment],
        fill: impl Fn(&mut Table) -> Result<bool, E>,
    ) -> crate::Result<T> {
        let mut table = self.applied(sets)?;
        let filled = fill(&mut table).map_err(|e| {
            let (key, message) = e.into();
            // Named as the tools name a config's other errors: a `--set data.x=...` is not
            // the file's value (sixth hostile round: `F: data.n (not given) ...` for a --set
            // file).
            Error::Config {
                name: self.name(sets),
                source: Box::new(Error::Default { key, message }),
            }
        })?;
        let loaded = if filled {
            from_table(table.clone(), sets, self)
        } else {
            self.load(sets)
        };
        match loaded {
            Err(e) => {
                // Whether giving the key would load (the probe's required axes refuse their
                // own removal anyway: eighty-eighth hostile round, D2).
                let helps = |t: &Table| from_table::<T>(t.clone(), sets, self).is_ok();
                Err(self
                    .unfilled_by(sets, (&fill, &helps), &table, &e)
                    .unwrap_or(e))
            }
            ok => ok,
        }
    }

    /// Where a load fails: the assignment that removed what filled one of the file's left-out
    /// keys (a sweep axis, `--set sweep.depths=`), whose removal left the key missing
    /// (`table`, the applied and filled table, lacks it) while the file alone fills it. The
    /// error names the assignment and the key, where the load's own named neither
    /// (eighty-fourth hostile round, D2: "TOML parse error at line 12 ... missing field
    /// `depth`" for a file that parses).
    fn unfilled_by<E>(
        &self,
        sets: &[Assignment],
        (fill, helps): (
            &impl Fn(&mut Table) -> Result<bool, E>,
            &dyn Fn(&Table) -> bool,
        ),
        table: &Table,
        error: &Error,
    ) -> Option<Error> {
        let mut own = self.table.clone();
        fill(&mut own).ok()?;
        let lacks = |t: &Table, section: &str, name: &str| {
            t.get(section)
                .and_then(Value::as_table)
                .is_none_or(|s| !s.contains_key(name))
        };
        let said = error.to_string();
        let key = own.iter().find_map(|(section, v)| {
            v.as_table()?.keys().find_map(|name| {
                // The key missing, or its whole table where the config leaves the table out
                // (eighty-eighth hostile round, D4: `missing field optim` for `sweep.lrs=`).
                let missing = said.contains(&format!("missing field `{name}`"))
                    || (table.get(section).is_none()
                        && said.contains(&format!("missing field `{section}`")));
                (lacks(&self.table, section, name) && lacks(table, section, name) && missing)
                    .then(|| format!("{section}.{name}"))
            })
        })?;
        // The assignment of the sweep's table or one of its axes without which the key is
        // filled again (eighty-fifth hostile round, D1: the last removal was named, another
        // axis's; D2: a replacement of the table was not asked about).
        let culprit = sets.iter().enumerate().rev().find(|(i, a)| {
            (a.key == "sweep" || a.key.starts_with("sweep."))
                && self
                    .applied(&[&sets[..*i], &sets[i + 1..]].concat())
                    .ok()
                    .is_some_and(|mut t| {
                        fill(&mut t).is_ok() && {
                            let (section, name) = key.split_once('.').unwrap_or((&key, ""));
                            !lacks(&t, section, name)
                        }
                    })
        })?;
        let (_, a) = culprit;
        let (what, keep) = match &a.value {
            None => ("removes what sets", format!("keep {}", a.key)),
            // The axis itself given empty (eighty-eighth hostile round, D4).
            Some(Value::Array(v)) if v.is_empty() => (
                "empties the axis that sets",
                format!("give {} a non-empty list", a.key),
            ),
            Some(_) => (
                "leaves out the axis that sets",
                format!("give {} that axis", a.key),
            ),
        };
        // Giving the key is offered only where it would load (the filled value in place).
        let (section, name) = key.split_once('.').unwrap_or((&key, ""));
        let mut given = table.clone();
        let value = own
            .get(section)
            .and_then(Value::as_table)?
            .get(name)?
            .clone();
        // Its table made where the config leaves it out (`[optim]` for `optim.lr`).
        let t = given
            .entry(section)
            .or_insert_with(|| Value::Table(Table::new()));
        if let Some(t) = t.as_table_mut() {
            t.insert(name.to_string(), value);
        }
        let fix = match helps(&given) {
            true => format!("give {key} a value (--set {key}=...), or {keep}"),
            false => keep,
        };
        Some(Error::Override {
            origin: a.origin.clone(),
            message: format!(
                "{what} {key} (the config leaves {key} out; its sweep axis gives it at every \
                 point): {fix}"
            ),
            key: None,
        })
    }
}

/// Reads a TOML file into a table; errors name the file (and the line of a syntax error).
pub fn read_table(path: &Path) -> crate::Result<Table> {
    Source::read(path).map(|s| s.table)
}

/// Reads the TOML file `path`, applies `sets` in order and deserializes the result
/// ([`Source::load`] of one reading).
pub fn load<T: DeserializeOwned>(path: &Path, sets: &[Assignment]) -> crate::Result<T> {
    if sets.is_empty() {
        return crate::config_file::load_toml(path);
    }
    Source::read(path)?.load(sets)
}

/// [`Source::load_filled`] of one reading of `path`.
pub fn load_filled<T: DeserializeOwned, E: Into<(String, String)>>(
    path: &Path,
    sets: &[Assignment],
    fill: impl Fn(&mut Table) -> Result<bool, E>,
) -> crate::Result<T> {
    Source::read(path)?.load_filled(sets, fill)
}

/// Deserializes `table` (the file `src`'s, with `sets` applied) into `T`; errors are
/// attributed to the assignment whose key they concern, else to the file (whose text is
/// parsed alone to report the line).
fn from_table<T: DeserializeOwned>(
    table: Table,
    sets: &[Assignment],
    src: &Source,
) -> crate::Result<T> {
    let (path, file) = (src.path(), src.table());
    // A removal (`--set KEY=`) of a key the file does not hold and no config of `T` has is
    // refused as the same key with a value is (twenty-sixth hostile round, D4: `--set
    // data.input_dm=` was a silent no-op). Removing what the file holds is never a no-op.
    for a in sets
        .iter()
        .filter(|a| a.value.is_none() && a.origin.starts_with("--set") && !lookup(file, &a.key))
    {
        if let Some(e) = refused_removal::<T>(a) {
            return Err(e);
        }
    }
    // A section an override gives as no table (the file's own are refused as read).
    if let Some((key, message)) = crate::config_file::not_a_table(&table) {
        let culprit = sets.iter().rev().find(|a| {
            a.key == key || key.starts_with(&format!("{}.", a.key)) || a.key.starts_with(&key)
        });
        return Err(match culprit {
            Some(a) => Error::Override {
                origin: a.origin.clone(),
                message,
                key: None,
            },
            None => Error::ConfigWith {
                path: path.to_path_buf(),
                origins: origins_of(sets),
                message,
                key: None,
            },
        });
    }
    let err = match table.clone().try_into::<T>() {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let (message, at) = split_error(&err.to_string());
    // A key given beside its former name, which serde reads as the same key (an alias):
    // "duplicate field `backend`" named only the new one (seventh hostile round, for a
    // [probe] holding both device and backend).
    if let Some(message) = crate::config_file::former_name_given_twice(&message, &at) {
        return Err(Error::ConfigWith {
            path: path.to_path_buf(),
            origins: origins_of(sets),
            message,
            key: None,
        });
    }
    let key = error_key(&message, &at);
    let culprit = sets.iter().rev().find(|a| {
        !key.is_empty()
            && (a.key == key
                || key.starts_with(&format!("{}.", a.key))
                || a.key.starts_with(&format!("{key}.")))
    });
    // A required key missing from a table that only overrides created: the first of those.
    let created = || {
        let at = at.as_str();
        let in_file = lookup(file, at);
        let under = format!("{at}.");
        (message.starts_with("missing field") && !at.is_empty() && !in_file)
            .then(|| sets.iter().find(|a| a.key.starts_with(&under)))
            .flatten()
    };
    if let Some(a) = culprit.or_else(created) {
        // The value at the error's key, else the override's whole value.
        let message = name_message(message, value_at(&table, &key).or(a.value.as_ref()));
        let message = unread_bracket_message(message, a.value.as_ref());
        // A removal of a required key says so (seventy-eighth hostile round, N1: `--set
        // model.width=` answered only "missing field `width`").
        let message = if a.value.is_none() && a.key == key && message.starts_with("missing field") {
            format!("removes {key}, which the config requires ({message}): give it a value")
        } else {
            message
        };
        return Err(if message.starts_with("unknown field") {
            Error::UnknownKey {
                origin: a.origin.clone(),
                key: if a.key.starts_with(&format!("{key}.")) {
                    a.key.clone()
                } else {
                    key
                },
                message,
            }
        } else if a.key == key {
            Error::Override {
                origin: with_key(a),
                message,
                key: None,
            }
        } else {
            Error::Override {
                origin: with_key(a),
                message,
                key: Some(key),
            }
        });
    }
    // Not an override's: the file's own error, with its line when the file alone has this
    // very error. The file alone may fail first on another (a key the tool filled in, as a
    // file set's `data.n`: seventh hostile round, every error of such a config read
    // "line 1: missing field `n`", naming neither the key nor its table).
    // A table where a name belongs is said as the name it should be, in the file too
    // ([`name_message`]), rather than in serde's words at its line.
    let value = value_at(&table, &key);
    if matches!(value, Some(Value::Table(_))) && name_message(message.clone(), value) != message {
        return Err(Error::ConfigKey {
            path: path.to_path_buf(),
            message: name_message(message, value),
            key: (!key.is_empty()).then_some(key),
        });
    }
    if let Err(e) = toml::from_str::<T>(&src.text)
        && split_error(e.message()).0 == message
    {
        return Err(Error::Toml {
            path: path.to_path_buf(),
            source: Box::new(e),
        });
    }
    // A name given as a number in the file itself reads as an override's does (tenth
    // hostile round, P04: `activation = 1` in the file read toml's "unit variant").
    let message = name_message(message, value_at(&table, &key));
    if sets.is_empty() {
        return Err(Error::ConfigKey {
            path: path.to_path_buf(),
            message,
            key: (!key.is_empty()).then_some(key),
        });
    }
    Err(Error::ConfigWith {
        path: path.to_path_buf(),
        origins: origins_of(sets),
        message,
        key: (!key.is_empty()).then_some(key),
    })
}

/// The assignments' origins, each once, for a message's "(with ...)": a flag that also
/// removes its key's former name (`--backend` beside `--backend flex`) is named by its
/// setting alone (hundred-and-eleventh hostile round, D2: "(with --backend, --backend
/// flex)").
fn origins_of(sets: &[Assignment]) -> Vec<String> {
    let all: Vec<&str> = sets.iter().map(|a| a.origin.as_str()).collect();
    let mut origins: Vec<String> = Vec::new();
    for o in &all {
        let named_by_another = all.iter().any(|other| other.starts_with(&format!("{o} ")));
        if !named_by_another && !origins.iter().any(|seen| seen == o) {
            origins.push(o.to_string());
        }
    }
    origins
}

/// The table of the file `path` with `sets` applied (a `--set KEY=` removes the key): what
/// a tool whose default for a key depends on other keys asks with [`lookup`].
pub fn applied(path: &Path, sets: &[Assignment]) -> crate::Result<Table> {
    Source::read(path)?.applied(sets)
}

/// Whether the dotted `key` is present in `table`.
pub fn lookup(table: &Table, key: &str) -> bool {
    let mut t = table;
    let mut parts = key.split('.').peekable();
    while let Some(part) = parts.next() {
        match (t.get(part), parts.peek()) {
            (None, _) => return false,
            (Some(_), None) => return true,
            (Some(Value::Table(inner)), Some(_)) => t = inner,
            (Some(_), Some(_)) => return false,
        }
    }
    false
}

/// toml's "invalid type: unit variant, expected string only", for a `value` that is not a
/// string where a name (an enum variant) belongs, said plainly (eighth hostile round, P05:
/// `--set prediction.kernels=[1]`; tenth, P04: `activation = 1` in the file); any other
/// message, or one without the value, as it is.
///
/// A table where a name belongs is read by serde as an externally tagged variant, whose
/// words name no name ("unknown variant `name`" for `{name = "erf"}`, "wanted exactly 1
/// element", "expected empty table"): said as the name it should be too (ninety-eighth
/// hostile round, N5).
fn name_message(message: String, value: Option<&Value>) -> String {
    let variant_of_table = crate::config_file::variant_of_table(&message);
    match value {
        Some(v) if message == "invalid type: unit variant, expected string only" => {
            format!("expected a name in quotes (KEY = \"name\"), found {v}")
        }
        Some(v @ Value::Table(_)) if variant_of_table => {
            format!("expected a name in quotes (KEY = \"name\"), found the table {v}")
        }
        _ => message,
    }
}

/// toml's "invalid type: string ..." for an override whose text opens an array or an inline
/// table that TOML could not read (ninth hostile round, I02: `--set "sweep.depths=[1, 2"`
/// read 'invalid type: string "[1, 2", expected a sequence'): TOML's own reason is added;
/// any other message as it is.
fn unread_bracket_message(message: String, value: Option<&Value>) -> String {
    let Some(Value::String(text)) = value else {
        return message;
    };
    let trimmed = text.trim_ascii();
    let kind = match trimmed.chars().next() {
        Some('[') => "an array",
        Some('{') => "an inline table",
        _ => return message,
    };
    if !message.starts_with("invalid type: string") {
        return message;
    }
    match format!("v = {trimmed}").parse::<Table>() {
        Err(e) => {
            let reason: Vec<&str> = e.message().lines().map(str::trim).collect();
            let reason = reason.join(", ").trim_end_matches('.').to_string();
            format!("{message}; the text opens {kind} TOML cannot read: {reason}")
        }
        Ok(_) => message,
    }
}

/// The value at the dotted `key` of `table`, if any.
fn value_at<'a>(table: &'a Table, key: &str) -> Option<&'a Value> {
    let (head, rest) = key.split_once('.').unwrap_or((key, ""));
    let v = table.get(head)?;
    match (rest.is_empty(), v) {
        (true, v) => Some(v),
        (false, Value::Table(inner)) => value_at(inner, rest),
        (false, _) => None,
    }
}

/// The origin of an assignment with its key when the origin is a short flag
/// (`--depth 5 (model.depth)`); a `--set` names its key already.
fn with_key(a: &Assignment) -> String {
    if a.origin.starts_with("--set ") {
        a.origin.clone()
    } else {
        format!("{} ({})", a.origin, a.key)
    }
}

/// Why a removal (`--set KEY=`) of `a.key`, which the file does not hold, names nothing a
/// config of `T` can hold: a key `T` has no field for at one of its levels (serde's "unknown
/// field" message; `train.epochs` in a probe's config, or a key two levels under one it has,
/// round 27's D2), or a key under one of `T`'s values (`resnet.depth.x`: `resnet.depth` is a
/// number, twenty-eighth hostile round D2). `T` is read from a table holding only that key
/// (with a placeholder table under it), which fails there first, as a struct's unknown key
/// or mistyped value is met before its missing ones. `None` for a key `T` has, or where `T`
/// cannot tell (a flattened or untagged part).
fn refused_removal<T: DeserializeOwned>(a: &Assignment) -> Option<Error> {
    let parts: Vec<&str> = a.key.split('.').collect();
    let (leaf, parents) = parts.split_last()?;
    let placeholder = Value::Table(Table::new());
    let mut value = Value::Table(Table::from_iter([(leaf.to_string(), placeholder)]));
    for part in parents.iter().rev() {
        value = Value::Table(Table::from_iter([(part.to_string(), value)]));
    }
    let Value::Table(probe) = value else {
        return None;
    };
    let err = probe.try_into::<T>().err()?;
    let (message, at) = split_error(&err.to_string());
    if parts
        .iter()
        .any(|p| message.starts_with(&format!("unknown field `{p}`")))
    {
        return Some(Error::UnknownKey {
            origin: a.origin.clone(),
            key: a.key.clone(),
            message,
        });
    }
    // A value where the key needs a table: the probe failed at a key above the leaf, where
    // a table is no value of that key's type (`invalid type: map` for numbers, strings and
    // lists; `unknown variant` for an enum, which reads a one-key table as its tag,
    // twenty-ninth hostile round D1; a parser's own message for a key such as
    // `probe.output`). A table that lacks its required keys (`missing field`) is a table.
    let under_a_value = !at.is_empty() && a.key.starts_with(&format!("{at}."));
    if !under_a_value || message.starts_with("missing field") {
        return None;
    }
    let expected = message
        .split_once("expected ")
        .map_or(message.as_str(), |(_, e)| e);
    Some(Error::UnderAValue {
        origin: a.origin.clone(),
        key: at,
        expected: expected.to_string(),
    })
}

/// The message and the dotted table or key (`in `model.depth``) of a toml error without a
/// span.
fn split_error(display: &str) -> (String, String) {
    let display = display.trim_end();
    if let Some((msg, rest)) = display.rsplit_once("\nin `")
        && let Some(keys) = rest.strip_suffix('`')
        && !keys.contains('\n')
    {
        return (msg.trim_ascii().to_string(), keys.to_string());
    }
    (display.trim_ascii().to_string(), String::new())
}

/// The full dotted key an error concerns: `at` (the table or value), extended by the field
/// of an `unknown field` / `missing field` message.
fn error_key(message: &str, at: &str) -> String {
    let field = ["unknown field `", "missing field `"]
        .iter()
        .find_map(|p| message.strip_prefix(p))
        .and_then(|rest| rest.split_once('`'))
        .map(|(f, _)| f);
    match (at.is_empty(), field) {
        (true, Some(f)) => f.to_string(),
        (false, Some(f)) => format!("{at}.{f}"),
        (_, None) => at.to_string(),
    }
}

/// The assignments that a binary's short flags stand for, built flag by flag; keys of the
/// network's table go to `[resnet]` when the config file has one, else to `[model]`.
pub struct Flags {
    assignments: Vec<Assignment>,
    resnet: bool,
}

impl Flags {
    /// Flags for the config whose file holds `table`.
    pub fn for_table(table: &Table) -> Self {
        Self {
            assignments: Vec::new(),
            resnet: table.contains_key("resnet"),
        }
    }

    /// `--FLAG X` as `key = X`, an integer in the file.
    pub fn int(&mut self, key: &str, flag: &str, value: Option<u64>) -> crate::Result<()> {
        if let Some(x) = value {
            let i = i64::try_from(x).map_err(|_| Error::TooLarge {
                flag: flag.to_string(),
                value: x,
            })?;
            self.push(Assignment::set(key, i, format!("--{flag} {x}")));
        }
        Ok(())
    }

    /// `--FLAG S` as `key = "S"`, or as the TOML value `S` is (an integer output index).
    pub fn text(&mut self, key: &str, flag: &str, value: Option<&str>) {
        if let Some(s) = value {
            self.push(Assignment::set(
                key,
                parse_value(s),
                format!("--{flag} {s}"),
            ));
        }
    }

    pub fn push(&mut self, assignment: Assignment) {
        self.assignments.push(assignment);
    }

    /// The network flags both tools take: `--depth`, `--width` (a ResNet's `base_width`),
    /// `--seed` and `--activation`, each a key of `[model]` or of `[resnet]`.
    pub fn network(
        &mut self,
        depth: Option<u64>,
        width: Option<u64>,
        seed: Option<u64>,
        activation: Option<&str>,
    ) -> crate::Result<()> {
        let (table, width_key) = if self.resnet {
            ("resnet", "resnet.base_width")
        } else {
            ("model", "model.width")
        };
        self.int(&format!("{table}.depth"), "depth", depth)?;
        self.int(width_key, "width", width)?;
        self.int(&format!("{table}.seed"), "seed", seed)?;
        // A ResNet's `resnet.activation`, which its config then judges against its variant
        // (sixty-fifth hostile round, D2: the flag was refused for every ResNet, with a
        // reason false for `normalized`, which takes any activation, and silent on `selu`).
        if let Some(a) = activation {
            self.push(Assignment::set(
                &format!("{table}.activation"),
                a,
                format!("--activation {a}"),
            ));
        }
        Ok(())
    }

    /// The flags' assignments, then the `--set`s `sets`, in order; a `--set` of a flag's key
    /// with another value is refused ([`Error::FlagAndSet`]), the same value is one
    /// assignment said twice. A value from the environment (`BURN_DEVICE`, its origin
    /// marked `(the environment)`) and a flag's removal of a former key name are defaults
    /// that a `--set` overrides.
    pub fn finish(mut self, sets: &[String]) -> crate::Result<Vec<Assignment>> {
        let sets = parse_all(sets)?;
        for (i, set) in sets.iter().enumerate() {
            if sets[i + 1..].iter().any(|later| later.key == set.key) {
                continue;
            }
            if let Some((flag, key)) = self
                .assignments
                .iter()
                .filter(|f| f.value.is_some() && !f.origin.ends_with("(the environment)"))
                .find_map(|f| f.clashes_with(set).map(|k| (f, k)))
            {
                return Err(Error::FlagAndSet {
                    flag: flag.origin.clone(),
                    set: set.origin.clone(),
                    key,
                });
            }
        }
        self.assignments.extend(sets);
        Ok(self.assignments)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hundred-and-eleventh hostile round, D2: `--backend flex` sets its key and removes
    /// the key's former name, two assignments; a message names the flag once, with its value.
    #[test]
    fn a_flag_of_two_assignments_is_named_once() {
        let sets = [
            Assignment::remove("train.device", "--backend"),
            Assignment::set("train.backend", "flex", "--backend flex"),
            Assignment::set("model.depth", 2, "--set model.depth=2"),
            Assignment::set("model.width", 3, "--set model.depth=2"),
        ];
        assert_eq!(origins_of(&sets), ["--backend flex", "--set model.depth=2"]);
    }

    /// The hundred-and-fourteenth hostile round, N7: a key or value is trimmed of TOML's
    /// (ASCII) whitespace only: a key ending in U+3000 or U+00A0 is a bad key, shown escaped,
    /// as one ending in U+2800 was (it ran `model.depth` where it was shown as another key),
    /// and a value of U+3000 alone does not remove its key.
    #[test]
    fn only_ascii_whitespace_is_trimmed() {
        for blank in ['\u{3000}', '\u{a0}', '\u{2800}'] {
            let e = Assignment::parse(&format!("model.depth{blank}=3")).unwrap_err();
            assert!(e.to_string().contains("bad key"), "{e}");
            assert!(!e.to_string().contains(blank), "{e}");
        }
        assert_eq!(
            Assignment::parse(" model.depth \t=3").unwrap().key,
            "model.depth"
        );
        assert!(
            Assignment::parse("data.n=\u{3000}")
                .unwrap()
                .value
                .is_some()
        );
    }
    use serde::Deserialize;

    /// A number written nonzero that f64 reads as 0 is found, in a file's text and a
    /// `--set`'s value (ninety-sixth hostile round, D3); zeros, subnormals, strings,
    /// comments, dates and keys with digits are passed over.
    #[test]
    fn a_number_that_underflows_to_zero_is_found() {
        let found = |t: &str| zero_by_underflow(t).map(|(line, lit)| format!("{line}:{lit}"));
        assert_eq!(found("a = 1\nb = 1e-400\n").as_deref(), Some("2:1e-400"));
        assert_eq!(
            found("b = [0.5, -2.5E-999]").as_deref(),
            Some("1:-2.5E-999")
        );
        assert_eq!(found("b = {x = 1_0e-4_00}").as_deref(), Some("1:1_0e-4_00"));
        // The first by its place, in an array of tables and over lines.
        assert_eq!(
            found("[[t]]\nx = 1\n[[t]]\ny = [\n  [1e-400],\n]\nz = 2e-999").as_deref(),
            Some("5:1e-400")
        );
        assert_eq!(found("a = [\n0, # ]\n1e-400]").as_deref(), Some("3:1e-400"));
        for fine in [
            "a = 0\nb = 0.0e-400\nc = -0e5",
            "a = 1e-310",
            "s = \"1e-400\" # 1e-400",
            "s = 'x 1e-400'",
            "s = \"\"\"\n1e-400\n\"\"\"\nt = 2",
            "s = '''\n1e-400 '''",
            "d = 1979-05-27T07:32:00Z",
            "h = 0x1f",
            "w2e-400 = 1",
            "s = \"a\\\"1e-400\"",
            // Bare keys, named as the unknown keys they are (ninety-seventh round, N1).
            "1e-400 = 3",
            "[probe]\n1e-400\t= 3",
            "x = {1e-400 = 3}",
            "a.1e-400 = 3",
            // Table names (ninety-eighth hostile round, D3).
            "[1e-400]",
            "[ 1e-400 ] # c",
            "[[1e-400]]",
            "[probe.1e-400]\nx = 1",
            "a = 1\n[1e-400.x]",
        ] {
            assert_eq!(found(fine), None, "{fine}");
        }
        // Text that is not TOML is a string, never scanned (ninety-seventh hostile round, D3).
        for path in [
            "data.x=1e-400/x.npy",
            "data.x=1e-400 x.npy",
            "data.x=\"1e-400\"",
        ] {
            assert!(Assignment::parse(path).is_ok(), "{path}");
        }
        let e = Assignment::parse("model.activation_param=1e-400").unwrap_err();
        assert!(
            e.to_string()
                .contains("1e-400 is nonzero but reads as 0 in f64"),
            "{e}"
        );
    }

    /// A flag and a `--set` of its key with another value are refused, naming both (round
    /// 22's N1); the same value is one assignment; a value from the environment and a
    /// flag's removal of a former key name are defaults a `--set` overrides.
    #[test]
    fn a_flag_and_a_set_of_its_key_agree_or_are_refused() {
        let table = Table::new();
        let with = |origin: &str, set: &str| {
            let mut f = Flags::for_table(&table);
            f.push(Assignment::set("probe.backend", "flex", origin.to_string()));
            f.push(Assignment::remove("probe.device", "--backend"));
            f.finish(&[set.to_string()])
        };
        let e = with("--backend flex", "probe.backend=wgpu").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--backend flex and --set probe.backend=wgpu both set probe.backend: give one"
        );
        assert!(with("--backend flex", "probe.backend=flex").is_ok());
        assert!(with("BURN_DEVICE=flex (the environment)", "probe.backend=wgpu").is_ok());
        assert!(with("--backend flex", "probe.device=wgpu").is_ok());
        // Two `--set`s of one key with other values are refused, naming both (ninety-fifth
        // hostile round, D2: the last held without a word); the same value twice is one.
        let twice = |sets: &[&str]| {
            let mut f = Flags::for_table(&table);
            f.push(Assignment::set("probe.backend", "flex", "--backend flex"));
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            f.finish(&sets)
        };
        let e = twice(&["probe.backend=wgpu", "probe.backend=flex"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set probe.backend=wgpu and --set probe.backend=flex both set probe.backend: \
             give one"
        );
        assert!(twice(&["probe.backend=flex", "probe.backend=flex"]).is_ok());
        let e = twice(&["model.width=5", "model.width="]).unwrap_err();
        assert!(e.to_string().contains("both set model.width"), "{e}");
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Model {
        depth: usize,
        #[serde(default)]
        kink: Option<f64>,
        #[serde(default)]
        activation: Option<String>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Data {
        dataset: String,
        #[serde(default)]
        unit_norm: bool,
        #[serde(default)]
        scaling: Option<Scaling>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Scaling {
        Raw,
        Unit,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Track {
        every: usize,
        #[serde(default)]
        pair: Option<[usize; 2]>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Cfg {
        model: Model,
        data: Data,
        #[serde(default)]
        ntk: Option<Track>,
        #[serde(default)]
        epochs: Option<usize>,
        #[serde(default)]
        iterations: Option<usize>,
    }

    const FILE: &str = "iterations = 5\n\n[model]\ndepth = 3\n\n[data]\ndataset = \"synthetic\"\n";

    fn file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn sets(args: &[&str]) -> Vec<Assignment> {
        args.iter().map(|a| Assignment::parse(a).unwrap()).collect()
    }

    /// Seventy-eighth hostile round, N1: `--set KEY=` of a required key says that it
    /// removes it, naming the assignment and the key.
    #[test]
    fn removing_a_required_key_says_so() {
        let (_d, path) = file(FILE);
        let e = load::<Cfg>(&path, &sets(&["model.depth="]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--set model.depth="), "{e}");
        assert!(
            e.contains("removes model.depth, which the config requires (missing field `depth`)"),
            "{e}"
        );
    }

    /// Eighty-fourth hostile round, D2, and eighty-fifth, D1, D2, D5: a sweep config leaving
    /// out the keys its axes fill. An assignment that takes the filling axis away (removing
    /// it, or replacing the sweep's table) is named with the key it leaves unfilled, the
    /// axis's own and not the last removal; a table left out whole is filled.
    #[test]
    fn an_assignment_that_unfills_a_left_out_key_is_named() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Sweep {
            sweep: Option<Table>,
            model: SweepModel,
            optim: SweepOptim,
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct SweepModel {
            width: usize,
            depth: usize,
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct SweepOptim {
            lr: f64,
        }
        const FILLS: [crate::sweep::AxisFill; 2] = [
            crate::sweep::AxisFill {
                axis: "depths",
                field: None,
                keys: &["model.depth"],
                empty_keeps_base: true,
            },
            crate::sweep::AxisFill {
                axis: "lrs",
                field: None,
                keys: &["optim.lr"],
                empty_keeps_base: true,
            },
        ];
        let fill = |t: &mut Table| crate::sweep::fill_from_axes(t, &FILLS);
        let (_d, path) = file("[sweep]\ndepths = [1, 2]\nlrs = [0.1]\n[model]\nwidth = 8\n");
        let src = Source::read(&path).unwrap();
        assert!(
            src.load_filled::<Sweep, _>(&[], fill).is_ok(),
            "[optim] made"
        );
        for (set, origin, words) in [
            (
                &["sweep.depths=", "sweep.lrs="][..],
                "--set sweep.depths=",
                "removes what sets model.depth",
            ),
            (
                &["sweep.lrs=", "sweep.depths="][..],
                "--set sweep.depths=",
                "removes what sets model.depth",
            ),
            (
                &["sweep={lrs=[0.1]}"][..],
                "--set sweep={lrs=[0.1]}",
                "leaves out the axis that sets model.depth",
            ),
        ] {
            let e = src
                .load_filled::<Sweep, _>(&sets(set), fill)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(origin) && e.contains(words), "{set:?}: {e}");
            assert!(!e.contains("TOML parse error"), "{set:?}: {e}");
        }
    }

    /// Twenty-sixth hostile round, D4: `--set KEY=` of a key no config has is refused as
    /// `--set KEY=1` is; of a key the config has but the file leaves out, a no-op.
    #[test]
    fn removing_an_unknown_key_is_refused() {
        let (_d, path) = file(FILE);
        for bad in [
            "data.unit_nrom=",
            "model.dpeth=",
            "nothing=",
            "train.epochs=",
            "Model.seed=",
            "data.nosuch.x=",
        ] {
            let e = load::<Cfg>(&path, &sets(&[bad])).unwrap_err().to_string();
            assert!(e.contains("unknown field"), "{bad}: {e}");
            assert!(e.contains(bad.trim_end_matches('=')), "{bad}: {e}");
        }
        for fine in [
            "model.kink=",
            "data.unit_norm=",
            "ntk=",
            "epochs=",
            "ntk.every=",
        ] {
            assert!(load::<Cfg>(&path, &sets(&[fine])).is_ok(), "{fine}");
        }
        // A key under one a config holds as a value, which the file leaves out: refused as
        // the same key with a value is (twenty-eighth hostile round, D2), naming the value's
        // key; where the file holds it, the table it is not.
        for (bad, at) in [
            ("epochs.x=", "epochs"),
            ("ntk.every.x=", "ntk.every"),
            ("ntk.pair.x.y=", "ntk.pair"),
            ("model.kink.x=", "model.kink"),
            // An enum reads a one-key table as its tag (twenty-ninth hostile round, D1).
            ("model.activation.x=", "model.activation"),
            ("data.scaling.x.y=", "data.scaling"),
        ] {
            let e = load::<Cfg>(&path, &sets(&[bad])).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "--set {bad}: `{at}` is not a table (a config holds"
                )),
                "{bad}: {e}"
            );
            let with_value = bad.replace('=', "=1");
            assert!(load::<Cfg>(&path, &sets(&[&with_value])).is_err(), "{bad}");
        }
        let e = load::<Cfg>(&path, &sets(&["model.depth.x="])).unwrap_err();
        assert!(
            e.to_string()
                .contains("`model.depth` is not a table (it holds"),
            "{e}"
        );
    }

    /// An override whose text opens an array TOML cannot read (unclosed) adds TOML's reason
    /// to serde's "invalid type: string" (ninth hostile round, I02); a string that merely
    /// starts with a bracket where a string belongs is taken.
    #[test]
    fn an_unclosed_array_in_a_set_says_why_toml_could_not_read_it() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Sweep {
            depths: Vec<usize>,
        }
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct WithSweep {
            sweep: Sweep,
            #[serde(default)]
            name: Option<String>,
        }
        let (_d, path) = file("[sweep]\ndepths = [1]\n");
        let e = load::<WithSweep>(&path, &sets(&["sweep.depths=[1, 2"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("sweep.depths=[1, 2")
                && e.contains("invalid type: string")
                && e.contains("the text opens an array TOML cannot read: "),
            "{e}"
        );
        let e = load::<WithSweep>(&path, &sets(&["sweep.depths={ a = 1"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("opens an inline table TOML cannot read"), "{e}");
        let ok = load::<WithSweep>(&path, &sets(&["name=[x].npy"])).unwrap();
        assert_eq!(ok.name.as_deref(), Some("[x].npy"));
    }

    /// A key beside its former name (`device` for `backend`, a serde alias) is named by
    /// both names, in the file and from --set (seventh hostile round: "duplicate field
    /// `backend`" for a [probe] holding `device` and `backend`).
    #[test]
    fn a_key_beside_its_former_name_names_both() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Probe {
            #[serde(default, alias = "device")]
            backend: Option<String>,
        }
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct WithProbe {
            probe: Probe,
        }
        let (_d, path) = file("[probe]\ndevice = \"flex\"\nbackend = \"flex\"\n");
        let e = load::<WithProbe>(&path, &[]).unwrap_err().to_string();
        assert!(
            e.contains("device and backend both given") && e.contains("former name"),
            "{e}"
        );
        // The line of the [probe] table, 1-based.
        assert!(e.contains("line 1: "), "{e}");
        let (_d, path) = file("[probe]\ndevice = \"flex\"\n");
        let e = load::<WithProbe>(&path, &sets(&["probe.backend=flex"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("probe.device and probe.backend both given"),
            "{e}"
        );
    }

    /// A config whose `data.n` the tool fills in (a file set's rows): an error elsewhere in
    /// the file names its own key, not the `n` the file alone lacks (seventh hostile round:
    /// `sweep.out` in ntk-train's `[sweep]`, a typo `model.widht`, a string `optim.lr` all read
    /// "line 1, column 1: missing field `n`").
    #[test]
    fn an_error_beside_a_filled_key_names_its_own_key() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Sized {
            n: usize,
            dataset: String,
        }
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Filled {
            data: Sized,
            model: Model,
        }
        let fill = |t: &mut Table| -> Result<bool, (String, String)> {
            let data = t.get_mut("data").and_then(|d| d.as_table_mut()).unwrap();
            data.insert("n".into(), Value::Integer(40));
            Ok(true)
        };
        let (_d, path) = file("[data]\ndataset = \"file\"\n\n[model]\ndepth = 3\nwidht = 4\n");
        let e = load_filled::<Filled, _>(&path, &[], fill)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `widht`"), "{e}");
        assert!(e.contains("model.widht"), "{e}");
        assert!(!e.contains("missing field"), "{e}");
        assert!(!e.contains("(with"), "{e}");
        // With an override beside it, the file's error is still its own (with the overrides).
        let e = load_filled::<Filled, _>(&path, &sets(&["model.depth=2"]), fill)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("model.widht") && !e.contains("missing field"),
            "{e}"
        );
        // The file's own error with nothing filled keeps its line.
        let (_d, path) = file("[data]\nn = 3\ndataset = \"file\"\n\n[model]\ndepth = \"x\"\n");
        let e = load_filled::<Filled, _>(&path, &[], fill)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 6"), "{e}");
    }

    fn load_with(args: &[&str]) -> Result<Cfg, String> {
        let (_dir, path) = file(FILE);
        load(&path, &sets(args)).map_err(|e| e.to_string())
    }

    /// A config is read once: what a tool checks of it and what it loads are one reading,
    /// however the file changes in between (the tools read it up to four times before).
    #[test]
    fn a_source_is_one_reading_of_its_file() {
        let (_dir, path) = file(FILE);
        let src = Source::read(&path).unwrap();
        std::fs::write(&path, "[model]\ndepth = 9\n").unwrap();
        let c: Cfg = src.load(&[]).unwrap();
        assert_eq!((c.model.depth, c.iterations), (3, Some(5)));
        let c: Cfg = src.load(&sets(&["model.depth=4"])).unwrap();
        assert_eq!((c.model.depth, c.data.dataset.as_str()), (4, "synthetic"));
        let c: Cfg = src
            .load_filled(&[], |_| Ok::<_, (String, String)>(false))
            .unwrap();
        assert_eq!(c.model.depth, 3);
        assert!(lookup(&src.applied(&[]).unwrap(), "data.dataset"));
        // A new reading sees the new file.
        let e = Source::read(&path).unwrap().load::<Cfg>(&[]).unwrap_err();
        assert!(e.to_string().contains("missing field `data`"), "{e}");
    }

    #[test]
    fn values_are_toml_or_bare_strings() {
        assert_eq!(parse_value("5"), Value::Integer(5));
        assert_eq!(parse_value("0.5"), Value::Float(0.5));
        assert_eq!(parse_value("true"), Value::Boolean(true));
        assert_eq!(
            parse_value("[0,1]"),
            Value::Array(vec![Value::Integer(0), Value::Integer(1)])
        );
        assert_eq!(parse_value("\"a b\""), Value::String("a b".into()));
        assert_eq!(parse_value("mnist"), Value::String("mnist".into()));
        assert_eq!(parse_value("runs/x"), Value::String("runs/x".into()));
        // Eighth hostile round: a whole number beyond TOML's integers is named as such,
        // not read as a string.
        let e = Assignment::parse("schedule.step_size=18446744073709551616")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("18446744073709551616") && e.contains("integer") && !e.contains("string"),
            "{e}"
        );
        assert!(Assignment::parse("model.seed=9223372036854775807").is_ok());
        assert!(Assignment::parse("data.x=007").is_ok());
        // Eighty-third hostile round, N2: a number beyond f64's range likewise.
        for set in ["model.activation_param=1e400", "optim.lr=-2.5e999"] {
            let e = Assignment::parse(set).unwrap_err().to_string();
            assert!(
                e.contains("beyond the numbers a config holds") && !e.contains("string"),
                "{set}: {e}"
            );
        }
        assert!(Assignment::parse("optim.lr=1e308").is_ok());
        assert!(Assignment::parse("data.x=1e400.npy").is_ok());
        // Ninth hostile round: the same inside an array or an inline table (it read
        // 'invalid type: string "[...]", expected a sequence'); the member is named.
        for (set, member) in [
            (
                "sweep.depths=[18446744073709551615]",
                "18446744073709551615",
            ),
            (
                "sweep.seeds=[1, 18446744073709551616]",
                "18446744073709551616",
            ),
            (
                "ntk={ every = 1, n = 99999999999999999999 }",
                "99999999999999999999",
            ),
        ] {
            let e = Assignment::parse(set).unwrap_err().to_string();
            assert!(
                e.contains(member) && e.contains("beyond the integers") && !e.contains("string"),
                "{set}: {e}"
            );
        }
        assert!(Assignment::parse("sweep.seeds=[1, 9223372036854775807]").is_ok());
        assert_eq!(
            parse_value("[x].npy"),
            Value::String("[x].npy".into()),
            "text that is no array stays a string"
        );
        assert_eq!(parse_value("cifar-10"), Value::String("cifar-10".into()));
        assert_eq!(parse_value(""), Value::String(String::new()));
        let Value::Table(t) = parse_value("{ every = 1 }") else {
            panic!("an inline table")
        };
        assert_eq!(t["every"], Value::Integer(1));
    }

    #[test]
    fn assignments_parse_and_malformed_ones_are_named() {
        let a = Assignment::parse("model.depth=5").unwrap();
        assert_eq!(
            (a.key.as_str(), a.value, a.origin.as_str()),
            (
                "model.depth",
                Some(Value::Integer(5)),
                "--set model.depth=5"
            )
        );
        // Only the first `=` splits.
        let a = Assignment::parse("train.out=a=b").unwrap();
        assert_eq!(a.value, Some(Value::String("a=b".into())));
        let e = Assignment::parse("foo").unwrap_err().to_string();
        assert!(e.contains("--set foo: expected key=value"), "{e}");
        for bad in [
            "=3",
            "model..depth=3",
            ".depth=3",
            "model.de pth=3",
            "a.b.=1",
            "\"model\".width=8",
            "'model'.width=8",
        ] {
            let e = Assignment::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--set {bad}: ")), "{e}");
        }
        // Only a control character is escaped where the `--set` is quoted back (ninety-eighth
        // hostile round, N1).
        let e = Assignment::parse("model.de\npth=3")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--set model.de\\npth=3: "), "{e}");
        // A long one is cut, and its length said, as typed (ninety-ninth hostile round, N3).
        let long = format!("model.{}\x1b=1", "w".repeat(300));
        let e = Assignment::parse(&long).unwrap_err().to_string();
        assert!(e.contains(&format!("... ({} bytes)", long.len())), "{e}");
        assert!(!e.contains('\x1b'), "{e}");
        assert!(parse_all(&["a=1".into(), "b".into()]).is_err());
        // A table's `--set` sets each of its keys (ninety-seventh hostile round, D1).
        let e =
            parse_all(&["model.width=8".into(), "model={width=16,depth=2}".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set model.width=8 and --set model={width=16,depth=2} both set model.width: give one"
        );
        let e = parse_all(&["model={width=16}".into(), "model.depth=3".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set model={width=16} replaces the table model whole and so leaves model.depth \
             out, where --set model.depth=3 sets it: put model.depth in the table, or set the \
             table's keys one by one"
        );
        assert!(parse_all(&["model={width=16}".into(), "model.width=16".into()]).is_ok());
        let table = Assignment::parse("model={width=16,act={a=1}}").unwrap();
        assert_eq!(
            table.leaves(),
            ["model", "model.act", "model.act.a", "model.width"]
        );
        // Two values of one key, for every command (ninety-sixth hostile round, D1).
        let e = parse_all(&["a=1".into(), "a=2".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set a=1 and --set a=2 both set a: give one"
        );
        assert_eq!(parse_all(&["a=1".into(), "a=1".into()]).unwrap().len(), 2);
    }

    #[test]
    fn overrides_set_values_at_dotted_keys() {
        let c = load_with(&[
            "model.depth=5",
            "data.dataset=mnist",
            "model.kink=0.5",
            "model.activation=norm_relu",
            "data.unit_norm=true",
        ])
        .unwrap();
        assert_eq!(c.model.depth, 5);
        assert_eq!(c.model.kink, Some(0.5));
        assert_eq!(c.model.activation.as_deref(), Some("norm_relu"));
        assert_eq!(c.data.dataset, "mnist");
        assert!(c.data.unit_norm);
        // An integer where the schema has a float.
        assert_eq!(load_with(&["model.kink=1"]).unwrap().model.kink, Some(1.0));
        // Later assignments win.
        let c = load_with(&["model.depth=5", "model.depth=7"]).unwrap();
        assert_eq!(c.model.depth, 7);
    }

    #[test]
    fn missing_tables_are_created() {
        let c = load_with(&["ntk.every=2", "ntk.pair=[0,1]"]).unwrap();
        assert_eq!(
            c.ntk,
            Some(Track {
                every: 2,
                pair: Some([0, 1])
            })
        );
        // Or given whole, inline.
        let c = load_with(&["ntk={ every = 3 }"]).unwrap();
        assert_eq!(c.ntk.unwrap().every, 3);
    }

    #[test]
    fn an_empty_value_removes_the_key() {
        let a = Assignment::parse("data.input_dim=").unwrap();
        assert_eq!((a.key.as_str(), &a.value), ("data.input_dim", &None));
        let mut t: Table = "[data]\ninput_dim = 5\nn = 3\n".parse().unwrap();
        a.apply(&mut t).unwrap();
        assert_eq!(t.to_string(), "[data]\nn = 3\n");
    }

    #[test]
    fn keys_can_be_removed() {
        let (_dir, path) = file(FILE);
        let c: Cfg = load(
            &path,
            &[
                Assignment::set("epochs", 4i64, "--epochs 4"),
                Assignment::remove("iterations", "--epochs 4"),
                // Removing what is not there changes nothing.
                Assignment::remove("ntk.every", "--x"),
            ],
        )
        .unwrap();
        assert_eq!((c.epochs, c.iterations, c.ntk), (Some(4), None, None));
    }

    #[test]
    fn unknown_keys_name_the_assignment_and_the_full_key() {
        let e = load_with(&["model.depht=3"]).unwrap_err().to_string();
        assert!(
            e.starts_with("--set model.depht=3: unknown key `model.depht`"),
            "{e}"
        );
        assert!(e.contains("expected one of"), "{e}");
        assert!(!e.contains("line"), "{e}");
        // An unknown table: the whole key is named.
        let e = load_with(&["sweep.depths=[1,2]"]).unwrap_err().to_string();
        assert!(
            e.starts_with("--set sweep.depths=[1,2]: unknown key `sweep.depths`"),
            "{e}"
        );
        // A short flag's translation names the flag and the key.
        let (_dir, path) = file(FILE);
        let e = load::<Cfg>(&path, &[Assignment::set("model.width", 8i64, "--width 8")])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--width 8: unknown key `model.width`"), "{e}");
    }

    #[test]
    fn type_errors_name_the_key_and_the_value() {
        let e = load_with(&["model.depth=deep"]).unwrap_err().to_string();
        assert!(e.starts_with("--set model.depth=deep: "), "{e}");
        assert!(e.contains("invalid type: string \"deep\""), "{e}");
        let e = load_with(&["model.depth=-3"]).unwrap_err().to_string();
        assert!(e.starts_with("--set model.depth=-3: "), "{e}");
        let e = load_with(&["ntk.every=1", "ntk.pair=[1]"])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--set ntk.pair=[1]: "), "{e}");
        assert!(e.contains("length 1"), "{e}");
        // A missing required key of a created table is the assignment's.
        let e = load_with(&["ntk.pair=[0,1]"]).unwrap_err().to_string();
        assert!(
            e.starts_with("--set ntk.pair=[0,1]: missing field `every` (at `ntk.every`)"),
            "{e}"
        );
        // A value where a table is: named.
        let e = load_with(&["model.depth.x=1"]).unwrap_err().to_string();
        assert!(
            e.starts_with("--set model.depth.x=1: `model.depth` is not a table"),
            "{e}"
        );
        // A flag's translation names the key.
        let (_dir, path) = file(FILE);
        let e = load::<Cfg>(&path, &[Assignment::set("model.depth", "x", "--depth x")])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--depth x (model.depth): invalid type"),
            "{e}"
        );
    }

    #[test]
    fn errors_of_the_file_keep_its_name_and_line() {
        let (_dir, path) = file(&FILE.replace("depth = 3", "depth = 3\nwidht = 2"));
        for args in [&[][..], &["data.unit_norm=true"][..]] {
            let e = load::<Cfg>(&path, &sets(args)).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{}: ", path.display())), "{e}");
            assert!(e.contains("line 5") && e.contains("widht"), "{e}");
        }
        // An override may supply what the file lacks.
        let (_dir, path) = file("[data]\ndataset = \"x\"\n");
        let c: Cfg = load(&path, &sets(&["model.depth=2"])).unwrap();
        assert_eq!(c.model.depth, 2);
        let e = load::<Cfg>(&path, &sets(&["data.unit_norm=true"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("c.toml") && e.contains("missing field `model`"),
            "{e}"
        );
        // Syntax errors name the file.
        let (_dir, path) = file("[model\n");
        let e = load::<Cfg>(&path, &sets(&["model.depth=2"]))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&format!("{}: ", path.display())), "{e}");
        let e = load::<Cfg>(Path::new("/nonexistent.toml"), &sets(&["a=1"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read config"), "{e}");
    }

    #[test]
    fn a_value_is_one_line_and_never_more_of_the_config() {
        for arg in [
            "model.depth=8\n[data]\nn=3",
            "model.depth=8\r\niterations = 9",
            "data.dataset=mnist\u{0}",
        ] {
            let e = Assignment::parse(arg).unwrap_err().to_string();
            let key = arg.split_once('=').unwrap().0;
            assert!(
                e.contains("control character") && e.starts_with(&format!("--set {key}=")),
                "{e}"
            );
            // The argument is shown escaped, on one line.
            assert!(!e.contains('\n') && !e.contains('\r'), "{e}");
        }
        // Tabs are blanks, as in a file.
        assert_eq!(
            Assignment::parse("model.depth=\t8").unwrap().value,
            Some(Value::Integer(8))
        );
        // Text that TOML reads as more than one value is no value (the string itself).
        assert_eq!(
            parse_value("8\n[data]\nn = 3"),
            Value::String("8\n[data]\nn = 3".into())
        );
    }

    /// A fill's default it could not find (the key and why: what ntk-data's
    /// `MissingDefault` gives) is reported against the file in the words of
    /// `Error::Default`; a fill that adds a key is typed with it, one that adds none is
    /// exactly `load`.
    #[test]
    fn a_fills_missing_default_is_named_against_the_file() {
        let (_dir, path) = file(FILE);
        let e = load_filled::<Cfg, _>(&path, &[], |_| {
            Err(("data.n".to_string(), "data.x cannot be read".to_string()))
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: data.n (not given): data.x cannot be read",
                path.display()
            )
        );
        let filled: Cfg = load_filled(&path, &[], |t| {
            t["data"]
                .as_table_mut()
                .unwrap()
                .insert("unit_norm".into(), Value::Boolean(true));
            Ok::<_, (String, String)>(true)
        })
        .unwrap();
        assert!(filled.data.unit_norm);
        let same: Cfg = load_filled(&path, &[], |_| Ok::<_, (String, String)>(false)).unwrap();
        assert_eq!(same, load::<Cfg>(&path, &[]).unwrap());
    }
}
