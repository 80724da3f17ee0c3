//! Provenance of results: every `summary.json` (probe points and training runs) records the
//! fully resolved config that produced it, the SHA-256 *fingerprint* of that config, the
//! tool and version, the git commit the binary was built from, the command line and the
//! machine (CPU and host BLAS kernel: the same config rounds differently on another CPU,
//! and long training runs amplify that into a seed-like spread).
//!
//! The resolved config is a flat map of dotted keys (`model.width`, `data.n`, ...) with every
//! default filled in, plus what the config file does not say but the numbers depend on:
//! `backend` (the Burn backend that ran) and `data.digest` (SHA-256 of the selected inputs
//! and labels, `ntk_data::inputs::digest`, so the same keys over other data files do not
//! match). Output places
//! (`--out`, `sweep.out`, `train.out`), the device *request* and `data.dir` (the digest
//! covers it) are left out: they do not change the numbers.
//!
//! A sweep point or a training run counts as done only when the fingerprint recorded in its
//! summary equals the fingerprint of the config about to run it ([`check_reuse`]); a
//! mismatch is an error naming the keys that differ ([`diff`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The tool a `summary.json` in `dir` records as its writer (`provenance.tool`, e.g.
/// `ntk-probe 0.1.0`), where the file is a JSON object of at most
/// [`ntk_files::io::TEXT_LIMIT`] bytes that records one; `None` otherwise. Both tools ask
/// this before they treat a directory's files as a run's of their own.
pub fn recorded_tool(dir: &Path) -> Option<String> {
    let bytes =
        ntk_files::io::read_limited(dir.join("summary.json"), ntk_files::io::TEXT_LIMIT).ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    Some(value.get("provenance")?.get("tool")?.as_str()?.to_string())
}

/// A resolved config: dotted key -> value, sorted (canonical).
pub type FlatConfig = BTreeMap<String, Value>;

/// The git commit this crate was built from, `COMMIT+dirty` where the workspace's sources
/// differed from it (`build.rs`; `unknown` outside a git checkout).
pub const GIT_COMMIT: &str = env!("NTK_GIT_COMMIT");

/// What a result records about how it was made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// SHA-256 (hex) of `config` as canonical JSON (sorted keys, no spaces).
    pub fingerprint: String,
    /// The fully resolved config, dotted keys.
    pub config: FlatConfig,
    /// The tool and its version, e.g. `ntk-probe 0.1.0`.
    pub tool: String,
    /// The git commit the binary was built from.
    pub git_commit: String,
    /// The command line of the process that wrote the result.
    pub command_line: Vec<String>,
    /// The CPU and the host linear algebra that computed it ([`machine`]); not part of the
    /// fingerprint (results from two machines are both valid), absent in results written
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// How the tool that formed this provenance writes one config one way
    /// ([`Provenance::with_canonical`]); not recorded. A recorded result is compared with it
    /// in that form too, so that one written before in another spelling of the same config
    /// is that config ([`check_reuse`]).
    #[serde(skip)]
    pub canonical: Canonical,
    /// The tool's rule for the value a key its config leaves out (or records `null`) at its
    /// default takes ([`Provenance::with_defaults`]); not recorded. A diff says that value.
    #[serde(skip)]
    pub defaults: Defaults,
}

/// A tool's rule carried in a [`Provenance`] (a function pointer): shown by its name, and
/// every rule equal to every other (none among them), a provenance being its recorded
/// fields.
macro_rules! rule_is_no_field {
    ($rule:ident) => {
        impl std::fmt::Debug for $rule {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($rule))
            }
        }

        impl PartialEq for $rule {
            fn eq(&self, _: &Self) -> bool {
                true
            }
        }
    };
}

/// A tool's rule giving, for a config and a key it leaves out of its record (or records as
/// `null`) at its default, that default (`ntk_model::spec::recorded_default`: an
/// activation's parameter is its family's); `None`: no rule beyond [`LEFT_OUT_AT_DEFAULT`].
#[derive(Clone, Copy, Default)]
pub struct Defaults(pub Option<fn(&FlatConfig, &str) -> Option<Value>>);

rule_is_no_field!(Defaults);

/// A tool's rule that writes one config one way (one network, one set of dotted keys:
/// `ntk_model::spec::canonical_recorded`), as a [`Provenance`] carries it; `None`: the
/// config as it is.
#[derive(Clone, Copy, Default)]
pub struct Canonical(pub Option<fn(&mut FlatConfig)>);

rule_is_no_field!(Canonical);

impl Provenance {
    /// The provenance of a result of `tool` (`"ntk-probe 0.1.0"`) made by `config` with the
    /// host linear algebra `linalg` (`ntk_numerics::linalg::describe()`).
    pub fn new(tool: &str, config: FlatConfig, linalg: &str) -> Self {
        Self {
            fingerprint: fingerprint(&config),
            config,
            tool: tool.to_string(),
            git_commit: GIT_COMMIT.to_string(),
            command_line: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            machine: Some(machine(linalg)),
            canonical: Canonical::default(),
            defaults: Defaults::default(),
        }
    }

    /// This provenance with the rule that says the defaults of keys its config leaves out.
    pub fn with_defaults(mut self, rule: fn(&FlatConfig, &str) -> Option<Value>) -> Self {
        self.defaults = Defaults(Some(rule));
        self
    }

    /// This provenance with its config in the form `rule` writes it (and the fingerprint of
    /// that form); recorded results are compared with it in that form too.
    pub fn with_canonical(mut self, rule: fn(&mut FlatConfig)) -> Self {
        rule(&mut self.config);
        self.fingerprint = fingerprint(&self.config);
        self.canonical = Canonical(Some(rule));
        self
    }
}

/// `recorded` as this build would write it, with the fingerprint of that form: without the
/// [`RETIRED_KEYS`], and in the form `rule` writes a config (a result written before in
/// another spelling of the same config is that config). Only where the recorded fingerprint
/// is its config's own, so that an edited file stays an edit.
pub fn in_canonical_form(
    recorded: &Provenance,
    rule: Canonical,
) -> std::borrow::Cow<'_, Provenance> {
    let retired = RETIRED_KEYS
        .iter()
        .any(|k| recorded.config.contains_key(*k));
    if (rule.0.is_none() && !retired) || fingerprint(&recorded.config) != recorded.fingerprint {
        return std::borrow::Cow::Borrowed(recorded);
    }
    let mut p = recorded.clone();
    p.config.retain(|k, _| !RETIRED_KEYS.contains(&k.as_str()));
    if let Canonical(Some(rule)) = rule {
        rule(&mut p.config);
    }
    p.fingerprint = fingerprint(&p.config);
    if p.fingerprint == recorded.fingerprint {
        return std::borrow::Cow::Borrowed(recorded);
    }
    std::borrow::Cow::Owned(p)
}

/// This machine as a result records it: the CPU model and logical CPUs, and the host
/// linear algebra `linalg` with the kernel it selected for this CPU
/// (`AMD EPYC, 2 CPUs; OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64
/// (Zen)`, as this machine records it).
pub fn machine(linalg: &str) -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{cpu}, {cpus} CPUs; {linalg}")
}

/// Flattens nested objects into dotted keys; arrays and scalars are values. A negative zero
/// is recorded as zero: `-0.0` and `0.0` make the same run, so they are one config and one
/// fingerprint (fifty-eighth hostile round, D5: a run recorded with `0.0` was refused for
/// `-0.0` as "edited?").
pub fn flatten(value: &Value) -> FlatConfig {
    fn zero_signless(v: &Value) -> Value {
        match v {
            Value::Number(n) if n.as_f64() == Some(0.0) && n.is_f64() => {
                Value::Number(serde_json::Number::from_f64(0.0).expect("0 is finite"))
            }
            Value::Array(items) => Value::Array(items.iter().map(zero_signless).collect()),
            _ => v.clone(),
        }
    }
    fn walk(prefix: &str, v: &Value, out: &mut FlatConfig) {
        match v {
            Value::Object(map) if !map.is_empty() => {
                for (k, v) in map {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, v, out);
                }
            }
            _ => {
                out.insert(prefix.to_string(), zero_signless(v));
            }
        }
    }
    let mut out = FlatConfig::new();
    walk("", value, &mut out);
    out
}

/// The flat form of any serializable config.
pub fn flatten_config<T: Serialize>(config: &T) -> FlatConfig {
    flatten(&serde_json::to_value(config).expect("a config serializes to JSON"))
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// SHA-256 of `value`'s compact JSON: a record's checksum of itself, taken by the caller
/// with the record's own checksum field cleared (a summary edited after it was written no
/// longer matches it; serde_json's `float_roundtrip` keeps every f64 bit through a read).
pub fn json_sha256<T: serde::Serialize>(value: &T) -> String {
    sha256_hex(
        serde_json::to_string(value)
            .expect("a record serializes")
            .as_bytes(),
    )
}

/// A record that carries the SHA-256 of its own JSON with that field null ([`json_sha256`]):
/// a summary of either tool, so that one edited after it was written is not read as a
/// result (seventy-fifth hostile round, D3).
pub trait SelfChecksum: Clone + serde::Serialize {
    /// The record's checksum field.
    fn checksum_field(&mut self) -> &mut Option<String>;

    /// The checksum of the record's other fields.
    fn own_checksum(&self) -> String {
        let mut other = self.clone();
        *other.checksum_field() = None;
        json_sha256(&other)
    }

    /// False when the record carries a checksum its other fields do not match (one without
    /// a checksum, written before it was recorded, is read as it is).
    fn sealed(&self) -> bool {
        let mut other = self.clone();
        other
            .checksum_field()
            .take()
            .is_none_or(|recorded| recorded == json_sha256(&other))
    }

    /// True when the record was edited after it was written: its checksum fails while its
    /// provenance's fingerprint holds (a fingerprint that fails its own config is left to
    /// the checks that compare configs, which name the keys).
    fn edited(&self, provenance: Option<&Provenance>) -> bool {
        !self.sealed() && provenance.is_none_or(|p| fingerprint(&p.config) == p.fingerprint)
    }

    /// Records the checksum of the record's other fields.
    fn seal(&mut self) {
        let checksum = self.own_checksum();
        *self.checksum_field() = Some(checksum);
    }
}

/// SHA-256 of bytes that come in pieces (a file written or read through a buffer), the
/// same digest as [`sha256_hex`] of their concatenation.
#[derive(Clone, Default)]
pub struct Sha256Stream(Sha256);

impl Sha256Stream {
    /// Adds `bytes` to the digest.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of every piece so far, lowercase hex.
    pub fn hex(self) -> String {
        hex(&self.0.finalize())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The fingerprint of a resolved config: SHA-256 of its canonical JSON.
pub fn fingerprint(config: &FlatConfig) -> String {
    sha256_hex(
        serde_json::to_string(config)
            .expect("a map serializes")
            .as_bytes(),
    )
}

/// Keys a config leaves out of its record at their default, so that the fingerprints of
/// results recorded before the key existed still match, with that default as the diff says
/// it (eighty-ninth hostile round, N1: `probe.eigen: "tiled" -> (absent)` where the user had
/// set `probe.eigen = "full"`).
/// Ninety-second, D2: the others a tool's config leaves out at a fixed default.
pub const LEFT_OUT_AT_DEFAULT: &[(&str, &str)] = &[
    ("probe.eigen", "\"full\""),
    ("train.loss", "\"cross_entropy\""),
    ("train.fp32_precision", "\"ieee\""),
    ("train.divergence_factor", "10000.0"),
    ("optim.scalar_lr_scale", "1.0"),
];

/// A value of `key` in `config` as a diff says it: its default where the config leaves it
/// out (or records `null`) at that default ([`LEFT_OUT_AT_DEFAULT`], or the tool's rule
/// `defaults`: an activation's parameter, ninety-second hostile round, D2), else `(absent)`
/// where the config has no such key.
fn show(key: &str, config: &FlatConfig, defaults: Defaults) -> String {
    let v = config.get(key);
    if matches!(v, None | Some(Value::Null)) {
        let fixed = LEFT_OUT_AT_DEFAULT
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, d)| d.to_string());
        let ruled = || {
            defaults
                .0
                .and_then(|rule| rule(config, key))
                .map(|d| d.to_string())
        };
        if let Some(d) = fixed.or_else(ruled) {
            return format!("{d} (the default)");
        }
    }
    match v {
        None => "(absent)".into(),
        Some(Value::String(s)) if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) => {
            // A digest: its first 12 digits say enough.
            format!("{}..", &s[..12])
        }
        Some(v) => v.to_string(),
    }
}

/// The keys whose values differ, as `key: recorded -> now` lines, sorted by key. Values are
/// compared as the fingerprint sees them, as canonical JSON text (a `-0.0` recorded before
/// [`flatten`] made zeros signless differs from `0.0` there, though the two are equal as
/// numbers).
pub fn diff(recorded: &FlatConfig, now: &FlatConfig) -> Vec<String> {
    diff_with(recorded, now, Defaults::default())
}

/// [`diff`], each side's keys left out at a default said by `defaults` too.
pub fn diff_with(recorded: &FlatConfig, now: &FlatConfig, defaults: Defaults) -> Vec<String> {
    let mut keys: Vec<&String> = recorded.keys().chain(now.keys()).collect();
    keys.sort();
    keys.dedup();
    let text = |v: Option<&Value>| v.map(Value::to_string);
    // A table absent from one config is recorded as `KEY: null` there and as its keys
    // `KEY.x` in the other: the keys say the change, the table's own line only garbled it
    // (eighty-sixth hostile round, D6: `ntk: null -> (absent); ntk.every: (absent) -> 1`).
    let has_keys_under = |c: &FlatConfig, k: &str| {
        let under = format!("{k}.");
        c.keys().any(|x| x.starts_with(&under))
    };
    let table_line = |k: &str| match (recorded.get(k), now.get(k)) {
        (Some(Value::Null), None) => has_keys_under(now, k),
        (None, Some(Value::Null)) => has_keys_under(recorded, k),
        _ => false,
    };
    keys.into_iter()
        .filter(|k| text(recorded.get(*k)) != text(now.get(*k)) && !table_line(k))
        .map(|k| {
            format!(
                "{k}: {} -> {}",
                show(k, recorded, defaults),
                show(k, now, defaults)
            )
        })
        .collect()
}

/// `config` without `keys` (a sweep's axes): what every point of one sweep shares.
pub fn without(config: &FlatConfig, keys: &[&str]) -> FlatConfig {
    config
        .iter()
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod diff_tests {
    use super::*;

    /// Eighty-sixth hostile round, D6: a table added or removed is said by its keys alone.
    #[test]
    fn a_table_added_or_removed_is_said_by_its_keys() {
        let without: FlatConfig = [("ntk".to_string(), Value::Null)].into_iter().collect();
        let with: FlatConfig = [
            ("ntk.every".to_string(), Value::from(1)),
            ("ntk.n".to_string(), Value::from(10)),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            diff(&without, &with),
            ["ntk.every: (absent) -> 1", "ntk.n: (absent) -> 10"]
        );
        assert_eq!(
            diff(&with, &without),
            ["ntk.every: 1 -> (absent)", "ntk.n: 10 -> (absent)"]
        );
    }

    /// Eighty-ninth hostile round, N1: a key left out at its default is said as that default.
    #[test]
    fn a_key_left_out_at_its_default_is_said_as_it() {
        let tiled: FlatConfig = [("probe.eigen".to_string(), Value::from("tiled"))]
            .into_iter()
            .collect();
        assert_eq!(
            diff(&tiled, &FlatConfig::new()),
            ["probe.eigen: \"tiled\" -> \"full\" (the default)"]
        );
        // Ninety-second hostile round, D2: every key a config leaves out at its default, the
        // fixed ones and those the tool's rule gives from the config (here a parameter whose
        // default is its family's), on either side; `null` recorded at a default too.
        let factor: FlatConfig = [("train.divergence_factor".to_string(), Value::from(100.0))]
            .into_iter()
            .collect();
        assert_eq!(
            diff(&factor, &FlatConfig::new()),
            ["train.divergence_factor: 100.0 -> 10000.0 (the default)"]
        );
        let leaky = |param: Option<f64>| -> FlatConfig {
            let mut c: FlatConfig = [("a".to_string(), Value::from("leaky"))]
                .into_iter()
                .collect();
            if let Some(p) = param {
                c.insert("a_param".into(), Value::from(p));
            }
            c
        };
        let rule = Defaults(Some(|c: &FlatConfig, k: &str| {
            (k == "a_param" && c.get("a") == Some(&Value::from("leaky"))).then(|| 0.01.into())
        }));
        assert_eq!(
            diff_with(&leaky(Some(0.2)), &leaky(None), rule),
            ["a_param: 0.2 -> 0.01 (the default)"]
        );
        assert_eq!(
            diff_with(&leaky(None), &leaky(Some(0.2)), rule),
            ["a_param: 0.01 (the default) -> 0.2"]
        );
        let mut null = leaky(Some(0.2));
        null.insert("a_param".into(), Value::Null);
        assert_eq!(
            diff_with(&null, &leaky(Some(0.2)), rule),
            ["a_param: 0.01 (the default) -> 0.2"]
        );
        assert_eq!(
            diff(&leaky(Some(0.2)), &leaky(None)),
            ["a_param: 0.2 -> (absent)"]
        );
    }
}

/// A recorded result that this config may not reuse.
#[derive(Debug, thiserror::Error)]
pub enum ReuseError {
    /// The result was made by a config with other values.
    #[error(
        "{}: made by a different config ({}); write to a new --out, or pass --recompute to \
         replace it",
        .path.display(),
        .differences.join("; ")
    )]
    Stale {
        /// The recorded result (a summary.json or a checkpoint.json).
        path: PathBuf,
        /// `key: recorded -> now`.
        differences: Vec<String>,
    },
    /// The result records no fingerprint (written before results recorded one).
    #[error(
        "{}: records no config fingerprint (written by an older version), so it cannot be \
         matched to this config; write to a new --out, or pass --recompute to replace it",
        .path.display()
    )]
    Unverifiable {
        /// The recorded result.
        path: PathBuf,
    },
}

/// `Ok` when the result at `path`, recorded with `recorded`, was made by `now`'s config.
pub fn check_reuse(
    path: &Path,
    recorded: Option<&Provenance>,
    now: &Provenance,
) -> Result<(), ReuseError> {
    let Some(recorded) = recorded else {
        return Err(ReuseError::Unverifiable {
            path: path.to_path_buf(),
        });
    };
    let recorded = &*in_canonical_form(recorded, now.canonical);
    if recorded.fingerprint == now.fingerprint && fingerprint(&recorded.config) == now.fingerprint {
        return Ok(());
    }
    let mut differences = diff_with(&recorded.config, &now.config, now.defaults);
    if differences.is_empty() {
        // The recorded fingerprint does not match its own config: the file was edited.
        differences.push(format!(
            "the recorded fingerprint {} does not match its recorded config (edited?)",
            &recorded.fingerprint[..recorded.fingerprint.len().min(12)]
        ));
    }
    Err(ReuseError::Stale {
        path: path.to_path_buf(),
        differences,
    })
}

/// Keys that earlier builds recorded in a config that are no longer part of a result's
/// identity. `train.engine` (left out from 2026-11-26) says who computes the steps, not
/// what is computed. `probe.device` and `train.device` (renamed `backend` on 2026-11-29,
/// one word for Burn's backend) were recorded as `null` only: the request is cleared
/// before a config is recorded, and the backend that ran is recorded as `backend`.
pub const RETIRED_KEYS: &[&str] = &["train.engine", "probe.device", "train.device"];

/// Reads a recorded JSON result (a summary.json); `None` when the file is absent, an error
/// naming the file when it cannot be read or is not `what` (e.g. "an ntk-probe summary").
pub fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &str,
) -> crate::Result<Option<T>> {
    let text = match ntk_files::io::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ntk_files::Error::Read {
                path: path.to_path_buf(),
                source,
            }
            .into());
        }
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|source| crate::Error::Json {
            path: path.to_path_buf(),
            what: what.to_string(),
            source,
        })
}

/// Groups recorded configs by their sweep base (the config without `axes`) and, when more
/// than one base is present, describes how the others differ from the first: the merge of
/// a sweep directory must not mix configs. `entries` are (where, provenance) pairs;
/// returns `Ok(unverified)`, the number of results that record no provenance.
pub fn check_one_base(
    entries: &[(PathBuf, Option<&Provenance>)],
    axes: &[&str],
    rule: Canonical,
) -> crate::Result<usize> {
    let mut first: Option<(&PathBuf, FlatConfig)> = None;
    let mut unverified = 0;
    let mut problems = Vec::new();
    for (path, p) in entries {
        let Some(p) = p else {
            unverified += 1;
            continue;
        };
        // Results of one config recorded before and after a key retired, or in two spellings
        // of one network (`rule`: sixtieth hostile round, D1), share a base.
        let base = without(&in_canonical_form(p, rule).config, axes);
        match &first {
            None => first = Some((path, base)),
            Some((first_path, first_base)) => {
                if *first_base != base {
                    problems.push(format!(
                        "{} differs from {}: {}",
                        path.display(),
                        first_path.display(),
                        diff(first_base, &base).join("; ")
                    ));
                }
            }
        }
    }
    if problems.is_empty() {
        return Ok(unverified);
    }
    Err(mixed(axes, problems))
}

/// [`crate::Error::MixedConfigs`] of the differences `problems` beyond `axes`: the first three
/// named, the rest counted.
pub fn mixed(axes: &[&str], mut problems: Vec<String>) -> crate::Error {
    let more = problems.len().saturating_sub(3);
    problems.truncate(3);
    crate::Error::MixedConfigs {
        axes: axes.iter().map(|a| a.to_string()).collect(),
        problems,
        more,
    }
}

/// What [`Error::MixedConfigs`] found, without its advice: the warning of a merge that
/// `--allow-mixed` allowed says this alone (fifty-seventh hostile round, D1: it ended in
/// "merge them anyway with --allow-mixed" after the flag was passed).
pub fn mixed_configs(axes: &[String], problems: &[String], more: usize) -> String {
    format!(
        "the results were made by different configs (beyond the sweep axes {}): {}{}",
        axes.join(", "),
        problems.join(" | "),
        and_more(more)
    )
}

/// ` (and k more)` when `more > 0`: the tail of a message that lists a few of many.
pub(crate) fn and_more(more: usize) -> String {
    if more > 0 {
        format!(" (and {more} more)")
    } else {
        String::new()
    }
}

/// Before a merge, whatever `allow_mixed` says: each result's fingerprint is that of the
/// config it records (else the file was edited), and no two results record the same
/// config (a copy of a point, or a sweep nested in another's `runs/`, would count twice,
/// as two seeds).
pub fn check_each(
    entries: &[(PathBuf, Option<&Provenance>)],
    rule: Canonical,
) -> crate::Result<()> {
    let mut seen: std::collections::HashMap<String, &PathBuf> = std::collections::HashMap::new();
    for (path, p) in entries {
        let Some(p) = p else { continue };
        if fingerprint(&p.config) != p.fingerprint {
            return Err(crate::Error::EditedResult { path: path.clone() });
        }
        // One config recorded before and after a key retired is the same config.
        let one_form = in_canonical_form(p, rule).fingerprint.clone();
        if let Some(first) = seen.insert(one_form, path) {
            return Err(crate::Error::SameConfigTwice {
                first: first.clone(),
                second: path.clone(),
            });
        }
    }
    Ok(())
}

/// The check before the results under `out` are merged into one table: they must differ in
/// the sweep `axes` only ([`check_one_base`]), unless `allow_mixed` (then a warning);
/// results recording no provenance are merged with a warning.
pub fn check_merge(
    out: &Path,
    entries: &[(PathBuf, Option<&Provenance>)],
    axes: &[&str],
    allow_mixed: bool,
    rule: Canonical,
) -> crate::Result<()> {
    check_each(entries, rule)?;
    match check_one_base(entries, axes, rule) {
        Ok(0) => Ok(()),
        Ok(k) => {
            eprintln!(
                "warning: {k} of {} results under {} record no config fingerprint (written by \
                 an older version); merged without checking that they share one config",
                entries.len(),
                out.display()
            );
            Ok(())
        }
        Err(crate::Error::MixedConfigs {
            axes,
            problems,
            more,
        }) if allow_mixed => {
            eprintln!(
                "warning: {}: merged as --allow-mixed asks: {}",
                out.display(),
                mixed_configs(&axes, &problems, more)
            );
            Ok(())
        }
        Err(e) => Err(crate::Error::At {
            path: out.to_path_buf(),
            source: Box::new(e),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flatten_dots_nested_keys_and_keeps_arrays() {
        let f = flatten(&json!({"a": {"b": 1, "c": {"d": [1, 2]}}, "e": null, "f": {}}));
        let keys: Vec<&str> = f.keys().map(String::as_str).collect();
        assert_eq!(keys, ["a.b", "a.c.d", "e", "f"]);
        assert_eq!(f["a.c.d"], json!([1, 2]));
    }

    #[test]
    fn fingerprint_is_order_free_and_value_sensitive() {
        let a = flatten(&json!({"x": 1, "y": {"z": 0.1}}));
        let b = flatten(&json!({"y": {"z": 0.1}, "x": 1}));
        assert_eq!(fingerprint(&a), fingerprint(&b));
        let c = flatten(&json!({"y": {"z": 0.1000000000000001}, "x": 1}));
        assert_ne!(fingerprint(&a), fingerprint(&c));
        // An independent route: the SHA-256 of the canonical text, by sha256sum's answer.
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    /// Fifty-eighth hostile round, D5: `-0.0` is recorded as `0.0` (one config, one
    /// fingerprint), inside lists too; a record that holds `-0.0` (written before) differs
    /// from `0.0` by that key, named, not as an edited record.
    #[test]
    fn a_negative_zero_is_zero_and_a_recorded_one_is_named() {
        let a = flatten(&json!({"m": -0.0, "l": [0.1, -0.0], "i": 0}));
        let b = flatten(&json!({"m": 0.0, "l": [0.1, 0.0], "i": 0}));
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"i":0,"l":[0.1,0.0],"m":0.0}"#
        );
        let mut old: FlatConfig = b.clone();
        old.insert("m".into(), json!(-0.0));
        assert_eq!(diff(&old, &b), ["m: -0.0 -> 0.0"]);
        let recorded = Provenance {
            fingerprint: fingerprint(&old),
            config: old,
            ..Provenance::new("t 0", b.clone(), "faer")
        };
        let now = Provenance::new("t 0", b, "faer");
        let e = check_reuse(Path::new("s.json"), Some(&recorded), &now).unwrap_err();
        assert!(e.to_string().contains("m: -0.0 -> 0.0"), "{e}");
    }

    /// A result recorded in another spelling of the same config is that config where the
    /// provenance compared with it carries the tool's rule; an edited one stays an edit.
    #[test]
    fn a_record_in_another_spelling_is_the_same_config() {
        fn rule(c: &mut FlatConfig) {
            if c.get("k") == Some(&json!("default")) {
                c.remove("k");
            }
        }
        let old = Provenance::new("t 0", flatten(&json!({"k": "default", "w": 1})), "faer");
        let now = Provenance::new("t 0", flatten(&json!({"w": 1})), "faer").with_canonical(rule);
        let given = Provenance::new("t 0", flatten(&json!({"k": "default", "w": 1})), "faer")
            .with_canonical(rule);
        assert_eq!(given.fingerprint, now.fingerprint);
        assert!(check_reuse(Path::new("s.json"), Some(&old), &now).is_ok());
        // Without the rule, the spellings differ, by the key.
        let plain = Provenance::new("t 0", flatten(&json!({"w": 1})), "faer");
        let e = check_reuse(Path::new("s.json"), Some(&old), &plain).unwrap_err();
        assert!(e.to_string().contains("k: \"default\" -> (absent)"), "{e}");
        // Two results of one config in two spellings share one base, and are one config
        // twice where they are one point (sixtieth hostile round, D1).
        let a = PathBuf::from("a");
        let b = PathBuf::from("b");
        let both = [(a.clone(), Some(&old)), (b.clone(), Some(&now))];
        assert!(check_one_base(&both, &[], Canonical(Some(rule))).is_ok());
        assert!(check_one_base(&both, &[], Canonical::default()).is_err());
        assert!(check_each(&both, Canonical(Some(rule))).is_err());
        assert!(check_each(&both, Canonical::default()).is_ok());
        // An edited record is not made canonical.
        let mut edited = old.clone();
        edited.config.insert("w".into(), json!(2));
        assert!(check_reuse(Path::new("s.json"), Some(&edited), &now).is_err());
    }

    #[test]
    fn diff_names_changed_added_and_removed_keys() {
        let a = flatten(&json!({"model": {"width": 512}, "n": 3}));
        let b = flatten(&json!({"model": {"width": 64}, "m": 1}));
        assert_eq!(
            diff(&a, &b),
            [
                "m: (absent) -> 1",
                "model.width: 512 -> 64",
                "n: 3 -> (absent)"
            ]
        );
    }

    #[test]
    fn reuse_needs_an_equal_fingerprint() {
        let p = Provenance::new("t 0", flatten(&json!({"w": 1})), "faer");
        let q = Provenance::new("t 0", flatten(&json!({"w": 2})), "faer");
        assert!(check_reuse(Path::new("s.json"), Some(&p), &p).is_ok());
        let e = check_reuse(Path::new("s.json"), Some(&p), &q).unwrap_err();
        assert!(e.to_string().contains("w: 1 -> 2"), "{e}");
        let e = check_reuse(Path::new("s.json"), None, &q).unwrap_err();
        assert!(e.to_string().contains("no config fingerprint"), "{e}");
        // A recorded fingerprint edited to match, over another config, is still refused.
        let mut forged = q.clone();
        forged.config = p.config.clone();
        assert!(check_reuse(Path::new("s.json"), Some(&forged), &q).is_err());
    }

    #[test]
    fn a_retired_key_of_an_earlier_build_is_not_a_difference() {
        let now = Provenance::new("t 0", flatten(&json!({"train": {"lr": 0.1}})), "faer");
        let was = flatten(&json!({"train": {"lr": 0.1, "engine": "host"}}));
        let old = Provenance::new("t 0", was, "faer");
        assert!(check_reuse(Path::new("s.json"), Some(&old), &now).is_ok());
        // Another key still differs, and an edited record stays an edit.
        let other = Provenance::new("t 0", flatten(&json!({"train": {"lr": 0.2}})), "faer");
        let e = check_reuse(Path::new("s.json"), Some(&old), &other).unwrap_err();
        assert!(e.to_string().contains("train.lr: 0.1 -> 0.2"), "{e}");
        let mut edited = old.clone();
        edited.config.insert("train.lr".into(), json!(0.3));
        assert!(check_reuse(Path::new("s.json"), Some(&edited), &now).is_err());
    }

    /// `train.device: null`, recorded before the key was renamed `backend`, is not a
    /// difference in a resume, a merge's one base or its search for a config recorded twice.
    #[test]
    fn the_device_key_recorded_before_its_rename_is_not_a_difference() {
        let now = Provenance::new("t 0", flatten(&json!({"train": {"lr": 0.1}})), "faer");
        let was = flatten(&json!({"train": {"lr": 0.1, "device": null}}));
        let old = Provenance::new("t 0", was, "faer");
        assert!(check_reuse(Path::new("s.json"), Some(&old), &now).is_ok());
        let deeper = Provenance::new(
            "t 0",
            flatten(&json!({"train": {"lr": 0.1}, "depth": 2})),
            "faer",
        );
        let entries = [
            (PathBuf::from("old"), Some(&old)),
            (PathBuf::from("new"), Some(&deeper)),
        ];
        assert_eq!(
            check_one_base(&entries, &["depth"], Canonical::default()).map_err(|e| e.to_string()),
            Ok(0)
        );
        let twice = [
            (PathBuf::from("old"), Some(&old)),
            (PathBuf::from("new"), Some(&now)),
        ];
        let e = check_each(&twice, Canonical::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("old") && e.contains("new"), "{e}");
    }

    #[test]
    fn one_base_ignores_the_axes() {
        let p = Provenance::new("t", flatten(&json!({"depth": 1, "width": 8})), "faer");
        let q = Provenance::new("t", flatten(&json!({"depth": 2, "width": 8})), "faer");
        let r = Provenance::new("t", flatten(&json!({"depth": 2, "width": 9})), "faer");
        fn e<'a>(v: &[&'a Provenance]) -> Vec<(PathBuf, Option<&'a Provenance>)> {
            v.iter()
                .enumerate()
                .map(|(i, p)| (PathBuf::from(format!("p{i}")), Some(*p)))
                .collect()
        }
        assert_eq!(
            check_one_base(&e(&[&p, &q]), &["depth"], Canonical::default())
                .map_err(|e| e.to_string()),
            Ok(0)
        );
        let err = check_one_base(&e(&[&p, &q, &r]), &["depth"], Canonical::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("width: 8 -> 9"), "{err}");
        assert_eq!(
            check_one_base(
                &[(PathBuf::from("old"), None)],
                &["depth"],
                Canonical::default()
            )
            .map_err(|e| e.to_string()),
            Ok(1)
        );
    }

    /// The machine is recorded (the CPU and the BLAS kernel, read back from the running
    /// library), outside the fingerprint, and results written before it parse as `None`.
    #[test]
    fn the_machine_is_recorded_outside_the_fingerprint() {
        let p = Provenance::new("t", flatten(&json!({"w": 1})), "OpenBLAS 0.3.21 (Zen)");
        let m = p.machine.clone().unwrap();
        assert!(m.contains(" CPUs; OpenBLAS 0.3.21 (Zen)"), "{m}");
        let mut other = p.clone();
        other.machine = Some("another CPU".into());
        assert!(check_reuse(Path::new("s.json"), Some(&other), &p).is_ok());
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<Provenance>(&text).unwrap(), p);
        let mut old: Value = serde_json::from_str(&text).unwrap();
        old.as_object_mut().unwrap().remove("machine");
        let old: Provenance = serde_json::from_value(old).unwrap();
        assert_eq!(old.machine, None);
        assert_eq!(old.fingerprint, p.fingerprint);
    }
}
