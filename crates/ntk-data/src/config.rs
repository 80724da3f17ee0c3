//! The `[data]` table both tools read: which data set, how many samples, which subset and
//! scaling.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{Scaling, Split};

/// Where the inputs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dataset {
    /// n samples of N(0, I_d) (`input_dim`, default 5 as in the paper's text).
    Synthetic,
    Mnist,
    FashionMnist,
    #[serde(rename = "cifar-10", alias = "cifar10")]
    Cifar10,
    Digits,
    /// The user's own arrays: `data.x` (and `data.labels`, `data.test_x`,
    /// `data.test_labels`) as `.npy`, `.npz` or CSV (see [`crate::arrays`]).
    File,
}

impl Dataset {
    pub fn parse(s: &str) -> Option<Self> {
        ntk_names::parse(s)
    }
    /// The config's name (the serde name: [`ntk_names`]).
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }

    /// The name as the papers write it, for figures: `MNIST`, `Fashion-MNIST`, `CIFAR-10`.
    pub fn paper_name(self) -> &'static str {
        match self {
            Self::Synthetic => "Synthetic",
            Self::Mnist => "MNIST",
            Self::FashionMnist => "Fashion-MNIST",
            Self::Cifar10 => "CIFAR-10",
            Self::Digits => "8x8 digits",
            Self::File => "Own data",
        }
    }
}

/// How `n` samples are picked from an image set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubsetRule {
    First,
    /// `n / classes` per class (the default for image sets).
    #[default]
    Balanced,
    /// Uniformly at random by `data.seed`.
    Random,
}

fn default_split() -> Split {
    Split::Train
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataConfig {
    pub dataset: Dataset,
    /// How many samples (for `dataset = "file"`, by default every row of `data.x`, in file
    /// order: [`fill_file_n`]).
    pub n: usize,
    /// Synthetic only: the dimension d (default 5; the official code used 10).
    #[serde(default)]
    pub input_dim: Option<usize>,
    #[serde(default = "default_split")]
    pub split: Split,
    #[serde(default)]
    pub subset: SubsetRule,
    /// Pixel scaling (default: the official code's, `minus-one-one` or `cifar-per-channel`).
    #[serde(default)]
    pub scaling: Option<Scaling>,
    /// Scale every input to unit norm (Agarwal et al.'s assumption).
    #[serde(default)]
    pub unit_norm: bool,
    /// Seed of the synthetic draw or the random subset.
    #[serde(default)]
    pub seed: u64,
    /// Directory of the data set's files (default `datasets/data/<name>`).
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// `dataset = "file"`: the inputs, `n x d` (or images `n x h x w`, `n x c x h x w`) in
    /// `.npy`, `.npz` (`FILE.npz:MEMBER`, member `x` by default) or CSV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<PathBuf>,
    /// `dataset = "file"`: one integer label per row of `x` (member `y` of an `.npz` by
    /// default); optional for the probe, required for training.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<PathBuf>,
    /// `dataset = "file"`, training: the held-out inputs (member `x_test` by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_x: Option<PathBuf>,
    /// `dataset = "file"`, training: the held-out labels (member `y_test` by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_labels: Option<PathBuf>,
}

impl DataConfig {
    /// The files and directory it reads, under their keys (`None`: not given): what a run
    /// keeps outside its output ([`ntk_files::apart::check_outside`]).
    pub fn files(&self) -> [(&'static str, Option<&std::path::Path>); 5] {
        [
            ("data.x", self.x.as_deref()),
            ("data.labels", self.labels.as_deref()),
            ("data.test_x", self.test_x.as_deref()),
            ("data.test_labels", self.test_labels.as_deref()),
            ("data.dir", self.dir.as_deref()),
        ]
    }

    /// The same table with its file locations left out (`dir`, `x`, `labels`, `test_x`,
    /// `test_labels`): what a result's provenance records, beside the digest of the data
    /// read, so that moving the files does not make results stale and changing their
    /// content does.
    pub fn without_locations(&self) -> Self {
        Self {
            dir: None,
            x: None,
            labels: None,
            test_x: None,
            test_labels: None,
            ..self.clone()
        }
    }
}

/// The defaults of `data.n` and `data.subset` for the user's own arrays: `dataset = "file"`
/// without `n` takes every row of `data.x` (read from its header; a CSV is parsed, its values counted), and
/// a file set whose `n` covers every row, given or so filled, takes them in file order
/// (`subset = "first"`) unless `subset` is given: a balanced pick of every row would need
/// exactly `n / classes` rows of each class (issue 66: 1,500 rows with 749 of one class were
/// refused). Written into the config's table before it is typed
/// (`ntk_runs::overrides::load_filled`) so that the saved config and its fingerprint
/// state what was used. Returns whether it added a key; a config that is not a file set,
/// gives both keys, or names no `data.x` (an error of its own later) is left as it is.
pub fn fill_file_n(table: &mut toml::Table) -> Result<bool, crate::MissingDefault> {
    let Some(data) = table.get_mut("data").and_then(|d| d.as_table_mut()) else {
        return Ok(false);
    };
    let is_file = data.get("dataset").and_then(|v| v.as_str()) == Some(Dataset::File.name());
    if !is_file || (data.contains_key("n") && data.contains_key("subset")) {
        return Ok(false);
    }
    // No data.x and no n: the key missing is data.x, which the default is read from, not
    // the n serde would name (hundred-and-thirty-fifth hostile round, second review, D1:
    // "TOML parse error at line 1 ... missing field `n`").
    let Some(x) = data.get("x").and_then(|v| v.as_str()) else {
        if data.contains_key("x") || data.contains_key("n") {
            return Ok(false);
        }
        return Err(crate::MissingDefault {
            key: "data.x".into(),
            message: format!(
                "required with data.dataset = \"{}\" (data.n, left out, is its every row)",
                Dataset::File.name()
            ),
        });
    };
    let rows = match crate::arrays::peek_inputs(std::path::Path::new(x), crate::arrays::Role::X) {
        Ok(peek) => peek.rows,
        // A given n with an unreadable file: the load names the file.
        Err(_) if data.contains_key("n") => return Ok(false),
        Err(e) => {
            return Err(crate::MissingDefault {
                key: "data.n".into(),
                message: format!("all rows of data.x by default, which cannot be read: {e}"),
            });
        }
    };
    let rows = i64::try_from(rows).map_err(|_| crate::MissingDefault {
        key: "data.n".into(),
        message: format!("data.x has {rows} rows, too many"),
    })?;
    let mut added = false;
    if !data.contains_key("n") {
        data.insert("n".into(), toml::Value::Integer(rows));
        added = true;
    }
    let every_row = data.get("n").and_then(toml::Value::as_integer) == Some(rows);
    if every_row && !data.contains_key("subset") {
        data.insert("subset".into(), toml::Value::String("first".into()));
        added = true;
    }
    Ok(added)
}
