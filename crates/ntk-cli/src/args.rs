//! The command-line vocabulary both tools speak, defined once (clap): the flags of one run
//! ([`RunFlags`]) and of a sweep ([`SweepFlags`]), the short flags that stand for config keys
//! both tools have ([`KeyFlags`]), and the arguments of `collect` ([`CollectArgs`]) and
//! `plot` ([`PlotArgs`]). Each tool adds the short flags of its own keys beside these.
//!
//! | subcommand | ntk-probe | ntk-train |
//! |---|---|---|
//! | `run --config F` | the NTK of one network (alias `ntk`) | one training run |
//! | `sweep --config F` | a grid of networks (`[sweep]`) | a grid of runs (`[sweep]`) |
//! | `collect DIR` | tables and figures of a sweep | the same |
//! | `plot DIR` | the figures again from the tables | the same |
//! | `bench` | the NTK's and eigensolver's speed | an SGD step's speed |
//!
//! `ntk-train --config F` (no subcommand) is `run` or `sweep` as the config says.

use std::path::PathBuf;

use clap::Args;
use clap::builder::TypedValueParser;

pub use ntk_plot::layout::Layout;

use ntk_runs::overrides::{Assignment, Flags};

/// The help of `--set`, the same in both tools.
pub const SET_HELP: &str = "Override a config key: KEY=VALUE at a dotted key, typed and \
    checked as in the file (repeatable; applied after the short flags, whose keys it may not set \
    to another value). VALUE is TOML, other \
    text a string: --set model.depth=5 --set data.dataset=mnist --set optim.lr=0.1; \
    KEY= (nothing after =) removes the key, back to its default: --set data.input_dim=";

/// `--out` as given with its `.` components dropped: `DIR/.` names `DIR` (round 23's D3: the
/// dry run took `DIR/.`, and the run, having computed, failed to move its set there).
pub fn out_path(s: &str) -> Result<PathBuf, String> {
    Ok(std::path::Path::new(s).components().collect())
}

/// A flag's value that must be UTF-8 text (`--out`, `--set`): one that is not is refused
/// naming the flag and the value as far as it reads (ninety-ninth hostile round, N7: clap's
/// "invalid UTF-8 was detected in one or more arguments" named neither). The tools name
/// their paths in text (messages, recorded provenance), so a path must be text too.
#[derive(Clone, Copy, Debug)]
pub struct Text;

impl clap::builder::TypedValueParser for Text {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        match value.to_str() {
            Some(s) => Ok(s.to_string()),
            None => {
                let flag = arg.and_then(|a| a.get_long()).unwrap_or("a flag");
                Err(clap::Error::raw(
                    clap::error::ErrorKind::InvalidUtf8,
                    format!(
                        "--{flag} {}: not UTF-8 text (shown with U+FFFD where it is not); give \
                         it in UTF-8\n",
                        ntk_runs::quote::controls_escaped(&ntk_runs::quote::cut_long(
                            &value.to_string_lossy()
                        ))
                    ),
                )
                .with_cmd(cmd))
            }
        }
    }
}

/// The flags of one run: the config, where it writes, overrides, and what to do with what
/// is already there.
#[derive(Args, Clone, Debug, Default)]
pub struct RunFlags {
    /// The TOML config (see configs/; keys: README).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output directory (default: the config's `out`, where it has one).
    #[arg(long, value_parser = Text.try_map(|s| out_path(&s)))]
    pub out: Option<PathBuf>,
    #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP, value_parser = Text)]
    pub set: Vec<String>,
    /// Check the config and the output directory, print what would be computed (each
    /// point's state: new, partial, done, failed, stale or blocked) and exit; fails exactly
    /// when the run would, before any work.
    #[arg(long)]
    pub dry_run: bool,
    /// Keep what this very config finished and continue what was interrupted (a training
    /// run from its last checkpoint); without it ntk-probe's `run` replaces its own earlier
    /// output. Both tools' sweeps (ntk-train's every command is one) always skip what this
    /// config finished.
    #[arg(long)]
    pub resume: bool,
    /// Compute again the results whose recorded config fingerprint differs from this config
    /// (their old files are replaced, and the report files that show them removed before
    /// the first step); without it such results are an error naming the keys.
    #[arg(long)]
    pub recompute: bool,
    /// The memory the work may plan for (e.g. 64G; default: the smallest of the available
    /// memory, the cgroup's limit and RLIMIT_AS; also NTK_MAX_MEMORY).
    #[arg(long)]
    pub max_memory: Option<String>,
    #[command(flatten)]
    pub keys: KeyFlags,
}

impl RunFlags {
    /// `--config`, or an error saying it is required.
    pub fn config(&self) -> ntk_runs::Result<&std::path::Path> {
        self.config
            .as_deref()
            .ok_or(ntk_runs::Error::ConfigRequired)
    }
}

/// The flags of a sweep: those of a run, and how the points are split and merged.
#[derive(Args, Clone, Debug, Default)]
pub struct SweepFlags {
    #[command(flatten)]
    pub run: RunFlags,
    /// Run only the i-th of N disjoint parts of the sweep (i/N, 0-based), for job arrays;
    /// `slurm`: the part of this Slurm array task (SLURM_ARRAY_TASK_ID of the array's task
    /// count).
    #[arg(long)]
    pub shard: Option<String>,
    /// Merge into tables points whose configs differ beyond the sweep axes (refused by
    /// default: the directory would mix two sweeps).
    #[arg(long)]
    pub allow_mixed: bool,
}

/// Short flags for the config keys both tools have, each an alias of a `--set`; the keys of
/// the network go to `[resnet]` when the config has that table, else to `[model]`.
#[derive(Args, Clone, Debug, Default)]
pub struct KeyFlags {
    /// data.dataset: synthetic, mnist, fashion-mnist, cifar-10, digits, file (your own arrays: data.x).
    #[arg(long)]
    pub dataset: Option<String>,
    /// data.n.
    #[arg(long)]
    pub n: Option<usize>,
    /// data.input_dim (synthetic data).
    #[arg(long)]
    pub input_dim: Option<usize>,
    /// model.depth (resnet.depth).
    #[arg(long)]
    pub depth: Option<usize>,
    /// model.width (resnet.base_width).
    #[arg(long)]
    pub width: Option<usize>,
    /// model.activation (resnet.activation).
    #[arg(long)]
    pub activation: Option<String>,
    /// model.seed (resnet.seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// probe.precision / train.precision: f32 or f64.
    #[arg(long)]
    pub precision: Option<String>,
    /// probe.backend / train.backend: Burn's backend, one of those built in (also
    /// BURN_DEVICE; `--device`, its name before 2026-11-29, is the same flag).
    #[arg(long, visible_alias = "device", env = "BURN_DEVICE")]
    pub backend: Option<String>,
}

impl KeyFlags {
    /// Pushes the assignments these flags stand for; `section` is the tool's own table
    /// (`probe`, `train`) that holds the precision and the device.
    pub fn push(&self, f: &mut Flags, section: &str) -> ntk_runs::Result<()> {
        let wide = |v: Option<usize>| v.map(|x| x as u64);
        f.text("data.dataset", "dataset", self.dataset.as_deref());
        f.int("data.n", "n", wide(self.n))?;
        f.int("data.input_dim", "input-dim", wide(self.input_dim))?;
        f.network(
            wide(self.depth),
            wide(self.width),
            self.seed,
            self.activation.as_deref(),
        )?;
        f.text(
            &format!("{section}.precision"),
            "precision",
            self.precision.as_deref(),
        );
        if self.backend.is_some() {
            // The key's name before 2026-11-29, read as the same key: a file that still says
            // `device` is overridden by the flag, not given the key twice.
            f.push(Assignment::remove(
                &format!("{section}.device"),
                "--backend",
            ));
        }
        if let Some(name) = &self.backend {
            // The flag, or BURN_DEVICE through it: the error of a backend that cannot be
            // used names which (eighth hostile round: BURN_DEVICE=bogus read "--backend").
            let origin = if backend_on_command_line() {
                format!("--backend {name}")
            } else {
                format!("BURN_DEVICE={name} (the environment)")
            };
            f.push(Assignment::set(
                &format!("{section}.backend"),
                toml::Value::String(name.clone()),
                origin,
            ));
        }
        Ok(())
    }
}

/// The parser of a count flag (`--n`, `--width`, `--batch`, ...): at least `min`, at most
/// the integers a config holds (`i64::MAX`, as `--set` and the config file's): a larger
/// value is named by clap with its flag, where `ntk-probe bench --width 2^64-1` read "TOML
/// parse error at line 7" of a config the user never wrote and `ntk-train bench --batch
/// 2^64-1` overflowed (ninth hostile round).
pub fn count(min: u64) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(min..=i64::MAX as u64)
}

/// A flag's number (`--lr`): as Rust reads an f64, but a number past f64's range or a
/// nonzero one that reads as 0 is refused in the words of the value typed (ninety-ninth
/// hostile round, N5: `--lr 1e-400` was refused as "optim.lr = 0", the value clap read, where
/// `--set optim.lr=1e-400` is named as typed).
pub fn float(text: &str) -> Result<f64, String> {
    let v: f64 = text.trim().parse().map_err(|e| {
        format!(
            "\"{}\" is not a number: {e}",
            ntk_runs::quote::controls_escaped(text)
        )
    })?;
    let mantissa = text.split(['e', 'E']).next().unwrap_or("");
    let finite_word = !text.to_ascii_lowercase().contains("inf");
    if v.is_infinite() && finite_word {
        return Err(format!("{text} is beyond f64's range (about 1.8e308)"));
    }
    if v == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        return Err(format!(
            "{text} is a nonzero number that reads as 0 in f64 (below about 4.9e-324)"
        ));
    }
    Ok(v)
}

/// The items of a comma-separated list whose items may hold commas inside parentheses
/// (`relu,leaky_relu(alpha=0.1,alpha=0.2)` is two items): cut at the commas outside any
/// parentheses, each item trimmed. Lists of activations are read so (twenty-fourth hostile
/// round, N6: clap's delimiter cut inside the parentheses, and the error named half a
/// value).
pub fn list_items(lists: &[String]) -> Vec<String> {
    let mut items = Vec::new();
    for list in lists {
        let mut depth = 0usize;
        let mut item = String::new();
        for c in list.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    items.push(item.trim().to_string());
                    item.clear();
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
        items.push(item.trim().to_string());
    }
    items
}

/// A list flag's values each given once: `flag` (`--depths`) and the first value given twice
/// named, or `Ok`. A value given twice would be computed, timed or drawn twice, its rows
/// doubled (eleventh hostile round, B02: `ntk-probe bench --depths 1,1`).
pub fn distinct<T: PartialEq + std::fmt::Display>(flag: &str, values: &[T]) -> Result<(), String> {
    match values
        .iter()
        .enumerate()
        .find(|&(i, v)| values[..i].contains(v))
    {
        Some((_, v)) => Err(format!(
            "{flag}: {} is given twice; give each value once",
            ntk_runs::quote::controls_escaped(&v.to_string())
        )),
        None => Ok(()),
    }
}

/// Whether `--backend` (or `--device`) is on this process's command line, not only in the
/// `BURN_DEVICE` environment variable that clap reads for it.
pub fn backend_on_command_line() -> bool {
    std::env::args().any(|a| {
        ["--backend", "--device"]
            .iter()
            .any(|f| a == *f || a.starts_with(&format!("{f}=")))
    })
}

/// `collect DIR`: merge the finished points or runs of a sweep directory into its tables and
/// figures.
#[derive(Args, Clone, Debug)]
pub struct CollectArgs {
    /// The sweep's output directory.
    pub dir: PathBuf,
    /// The sweep's config: checked against what the points recorded (ntk-probe also draws
    /// the infinite-width theory from it).
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP, requires = "config", value_parser = Text)]
    pub set: Vec<String>,
    /// Merge points whose configs differ beyond the sweep axes (refused by default).
    #[arg(long)]
    pub allow_mixed: bool,
    #[command(flatten)]
    pub style: FigureFlags,
}

/// `plot DIR`: redraw the figures from the tables alone.
#[derive(Args, Clone, Debug)]
pub struct PlotArgs {
    /// A collected sweep's (or a training run's) output directory.
    pub dir: PathBuf,
    /// Where the figures go (default: DIR itself, whose figures are then replaced): a new
    /// or empty directory, or one holding only figures, of which those at the names this
    /// plot writes are replaced only where an earlier plot's record proves them the tools'
    /// as written (another run's directory, and a user's image at a figure's name, are
    /// refused).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub style: FigureFlags,
}

/// What the figures of `collect` and `plot` may change.
#[derive(Args, Clone, Debug, Default)]
pub struct FigureFlags {
    /// Each figure's title in place of its own (which names the data set and what the figure
    /// shows); `{what}` in it stands for what the figure shows (`--title "{what}, 3
    /// seeds"`), and `--title ""` draws no title (for a paper whose caption says it).
    #[arg(long)]
    pub title: Option<String>,
    /// Loss axes on a log scale (ntk-train's training loss; the probe's kappa axes are
    /// always logarithmic, so there it is refused).
    #[arg(long)]
    pub log: bool,
    /// `screen`: 900 x 600, the legend right of the axes; `column`: one column of a
    /// two-column paper (3.4 in wide; every text at least 8 pt at that width, the legend
    /// under the axes, the figure as tall as it needs), each figure's note written into
    /// `<figure>.caption.txt` beside it (a caption edited since it was written is kept).
    #[arg(long, value_enum, default_value_t = Layout::Screen)]
    pub layout: Layout,
}

/// The assignments of `keys` and a tool's own short flags (pushed by `own`), then the
/// `--set`s, in order (a `--set` wins).
pub fn assignments(
    table: &toml::Table,
    keys: &KeyFlags,
    section: &str,
    sets: &[String],
    own: impl FnOnce(&mut Flags) -> ntk_runs::Result<()>,
) -> ntk_runs::Result<Vec<Assignment>> {
    let mut f = Flags::for_table(table);
    keys.push(&mut f, section)?;
    own(&mut f)?;
    f.finish(sets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flags_number_past_f64s_range_is_refused_as_typed() {
        assert_eq!(float("0.1"), Ok(0.1));
        assert_eq!(float("-0.5"), Ok(-0.5));
        assert_eq!(float("0e5"), Ok(0.0));
        assert_eq!(float("0.000"), Ok(0.0));
        assert!(float("nan").unwrap().is_nan());
        assert_eq!(float("inf"), Ok(f64::INFINITY));
        let e = float("1e-400").unwrap_err();
        assert!(
            e.contains("1e-400 is a nonzero number that reads as 0"),
            "{e}"
        );
        let e = float("2.5E400").unwrap_err();
        assert!(e.contains("2.5E400 is beyond f64's range"), "{e}");
        assert!(float("x").unwrap_err().contains("\"x\" is not a number"));
    }

    /// Twenty-fourth hostile round, N6: a list's items are cut outside parentheses only.
    #[test]
    fn list_items_keep_the_commas_of_a_parameter() {
        let given = [
            "relu, leaky_relu(alpha=0.1,alpha=0.2)".to_string(),
            "selu".into(),
        ];
        assert_eq!(
            list_items(&given),
            ["relu", "leaky_relu(alpha=0.1,alpha=0.2)", "selu"]
        );
        assert_eq!(list_items(&["a,".to_string()]), ["a", ""]);
    }
    use clap::Parser;

    #[derive(Parser)]
    struct Tool {
        #[command(flatten)]
        sweep: SweepFlags,
    }

    #[test]
    fn distinct_names_the_first_value_given_twice() {
        assert_eq!(distinct("--depths", &[1, 5, 10]), Ok(()));
        assert_eq!(distinct::<u8>("--depths", &[]), Ok(()));
        assert_eq!(
            distinct("--depths", &[1, 5, 1, 5]),
            Err("--depths: 1 is given twice; give each value once".to_string())
        );
        assert!(distinct("--thetas", &[30.0, 60.0, 30.0]).is_err());
    }

    fn parse(args: &[&str]) -> Tool {
        Tool::try_parse_from(std::iter::once("tool").chain(args.iter().copied())).unwrap()
    }

    /// The short flags become the `--set`s they stand for, in the tool's section and the
    /// network's table, before the `--set`s themselves.
    #[test]
    fn short_flags_are_assignments_in_the_right_tables() {
        let t = parse(&[
            "--config",
            "c.toml",
            "--n",
            "100",
            "--depth",
            "3",
            "--precision",
            "f64",
            "--device",
            "flex",
            "--set",
            "data.n=100",
            "--shard",
            "1/2",
        ]);
        let mlp: toml::Table = "[model]\nwidth = 8".parse().unwrap();
        // A flag and a --set of its key with another value: refused, naming both.
        let other = parse(&["--config", "c.toml", "--n", "100", "--set", "data.n=7"]);
        let e = assignments(
            &mlp,
            &other.sweep.run.keys,
            "probe",
            &other.sweep.run.set,
            |_| Ok(()),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(e, "--n 100 and --set data.n=7 both set data.n: give one");
        let a = assignments(&mlp, &t.sweep.run.keys, "probe", &t.sweep.run.set, |_| {
            Ok(())
        })
        .unwrap();
        let keys: Vec<&str> = a.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "data.n",
                "model.depth",
                "probe.precision",
                "probe.device",
                "probe.backend",
                "data.n"
            ]
        );
        assert_eq!(t.sweep.shard.as_deref(), Some("1/2"));
        let resnet: toml::Table = "[resnet]\ndepth = 20".parse().unwrap();
        let a = assignments(&resnet, &t.sweep.run.keys, "train", &[], |f| {
            f.text("optim.lr", "lr", Some("0.1"));
            Ok(())
        })
        .unwrap();
        let keys: Vec<&str> = a.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "data.n",
                "resnet.depth",
                "train.precision",
                "train.device",
                "train.backend",
                "optim.lr"
            ]
        );
        // A ResNet's `resnet.activation`, which its config judges against the variant
        // (sixty-fifth hostile round, D2: the flag was refused for every variant).
        let t = parse(&["--activation", "tanh"]);
        let a = assignments(&resnet, &t.sweep.run.keys, "train", &[], |_| Ok(())).unwrap();
        assert!(a.iter().any(|a| a.key == "resnet.activation"));
    }

    /// `--device` (the flag's name before 2026-11-29) is `--backend`, the word the glossary
    /// gives Burn's backend.
    #[test]
    fn device_is_the_backend_flag() {
        for flag in ["--backend", "--device"] {
            let t = parse(&[flag, "flex"]);
            assert_eq!(t.sweep.run.keys.backend.as_deref(), Some("flex"));
        }
    }

    #[test]
    fn config_is_required_with_a_clear_error() {
        let t = parse(&[]);
        assert_eq!(
            t.sweep.run.config().unwrap_err().to_string(),
            "--config FILE is required"
        );
    }
}
