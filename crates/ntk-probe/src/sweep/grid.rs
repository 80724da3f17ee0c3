//! A probe sweep's config and its grid: the `[sweep]` table ([`SweepSection`]) beside the
//! probe's own ([`SweepConfig`]), the settings it lists ([`Setting`]: data set, n, width,
//! convention) and its points ([`Point`]: a setting, an activation, a depth and a seed).

use super::*;
use ntk_runs::sweep::AxisFill;

fn default_protocols() -> Vec<Protocol> {
    vec![Protocol::Whole, Protocol::Blocks]
}
fn default_true() -> bool {
    true
}

/// The `[sweep]` table: the axes (activations, depths and seeds always; widths, ns,
/// datasets and conventions when listed, else the base config's value), the protocols
/// each point is summarized under, the output directory and the theory overlay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSection {
    pub depths: Vec<usize>,
    pub activations: Vec<ActivationKind>,
    pub seeds: Vec<u64>,
    /// `model.width` values (finite-width studies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub widths: Vec<usize>,
    /// `data.n` values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ns: Vec<usize>,
    /// `data.dataset` values (the synthetic set keeps `data.input_dim`; image sets have
    /// their own dimension).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub datasets: Vec<Dataset>,
    /// `model.convention` values (paper, official, unit_variance).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conventions: Vec<NtkConvention>,
    #[serde(default = "default_protocols")]
    pub protocols: Vec<Protocol>,
    /// Output directory (`--out` overrides; one of the two is required: empty when the
    /// config leaves it to `--out`, twenty-ninth hostile round N5).
    #[serde(default)]
    pub out: PathBuf,
    /// Overlay the infinite-width theory of each setting's own convention (none for the
    /// `official` one with a non-homogeneous activation at depth >= 2: no limit), on
    /// the inputs as fed to the network (closed forms for relu and linear; for other
    /// activations the whole kernel when n <= 200, or n <= 2000 with equal input norms,
    /// else the min angle alone with equal norms, else nothing: `summary.csv`'s
    /// `theory_note` says why a value is absent). With `ns` or `datasets` axes the theory
    /// is left out of the tables, and `collect` says why (it is of one input set).
    #[serde(default = "default_true")]
    pub theory: bool,
}

/// A sweep file: `[sweep]`, and the `[data]`, `[model]`, `[probe]` of a probe config whose
/// keys the sweep axes override.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepConfig {
    pub sweep: SweepSection,
    pub data: DataConfig,
    pub model: MlpConfig,
    #[serde(default)]
    pub probe: ProbeSection,
}

/// The keys of the always-present axes: `collect` requires the rest of the recorded
/// configs to agree ([`provenance::check_one_base`]); [`SweepConfig::axes`] adds the keys
/// of the optional axes a sweep lists.
pub const AXES: [&str; 6] = [
    "model.activation",
    "model.depth",
    "model.seed",
    "model.kink",
    "model.activation_param",
    "probe.protocol",
];

/// The required keys of the base config an axis sets at every point, filled from the axis
/// where the config leaves them out ([`ntk_runs::sweep::fill`]).
const FILLS: [AxisFill; 5] = [
    AxisFill {
        axis: "depths",
        field: None,
        keys: &["model.depth"],
        empty_keeps_base: false,
    },
    AxisFill {
        axis: "activations",
        field: None,
        keys: &["model.activation"],
        empty_keeps_base: false,
    },
    AxisFill {
        axis: "widths",
        field: None,
        keys: &["model.width"],
        empty_keeps_base: true,
    },
    AxisFill {
        axis: "ns",
        field: None,
        keys: &["data.n"],
        empty_keeps_base: true,
    },
    AxisFill {
        axis: "datasets",
        field: None,
        keys: &["data.dataset"],
        empty_keeps_base: true,
    },
];

impl SweepConfig {
    pub fn load(path: &Path) -> crate::Result<Self> {
        Self::load_from(&overrides::Source::read(path)?, &[])
    }

    /// [`Self::load`] with `--set` overrides ([`ntk_runs::overrides`]), validated as the
    /// file is. A key that one of the sweep's axes sets is refused (the override would be
    /// ignored), naming the axis.
    pub fn load_with(path: &Path, sets: &[Assignment]) -> crate::Result<Self> {
        Self::load_from(&overrides::Source::read(path)?, sets)
    }

    /// [`Self::load_with`] of a file already read: every check and the load see this one
    /// reading.
    pub fn load_from(src: &overrides::Source, sets: &[Assignment]) -> crate::Result<Self> {
        // Sweeps vary an MLP's activation and depth; a [resnet] table would otherwise be
        // refused as an unknown key, which does not say why. Judged with the overrides
        // applied, as the command is (fifty-eighth hostile round, D3).
        if let Ok(table) = src.applied(sets)
            && table.contains_key("resnet")
        {
            return Err(Error::SweepResNet {
                name: src.name_for(sets, "resnet"),
            });
        }
        crate::config::check_command(src, sets, true)?;
        let cfg: Self = src.load_filled(sets, |t| {
            let axes = ntk_runs::sweep::fill_from_axes(t, &FILLS)
                .map_err(|(key, message)| ntk_data::MissingDefault { key, message })?;
            ntk_data::config::fill_file_n(t).map(|file| file || axes)
        })?;
        for a in sets {
            // A table's `--set` sets each key in it (ninety-seventh hostile round, D1).
            if let Some(axis) = a.leaves().iter().find_map(|k| cfg.axis_of(k)) {
                // The file named alone only where it sets the axis (fifty-eighth hostile
                // round, D4: an axis made by `--set` was blamed on the file).
                return Err(Error::AxisOverride {
                    origin: a.origin.clone(),
                    name: src.name_for(sets, axis),
                    axis,
                });
            }
        }
        cfg.validate().map_err(|e| Error::Named {
            name: src.name(sets),
            source: Box::new(e),
        })?;
        Ok(cfg)
    }

    /// The `[sweep]` list that sets `key` at every point, if one does.
    fn axis_of(&self, key: &str) -> Option<&'static str> {
        let s = &self.sweep;
        let axes = [
            ("model.depth", "sweep.depths", true),
            ("model.activation", "sweep.activations", true),
            ("model.seed", "sweep.seeds", true),
            ("probe.protocol", "sweep.protocols", true),
            ("model.width", "sweep.widths", !s.widths.is_empty()),
            ("data.n", "sweep.ns", !s.ns.is_empty()),
            ("data.dataset", "sweep.datasets", !s.datasets.is_empty()),
            (
                "model.convention",
                "sweep.conventions",
                !s.conventions.is_empty(),
            ),
        ];
        axes.iter()
            .find(|(k, _, listed)| *k == key && *listed)
            .map(|(_, axis, _)| *axis)
    }

    /// Parses and validates a sweep config's text.
    pub fn parse(text: &str) -> crate::Result<Self> {
        let cfg: Self = toml::from_str(text)?;
        cfg.validate()?;
        Ok(cfg)
    }

    fn validate(&self) -> crate::Result<()> {
        let s = &self.sweep;
        if s.depths.is_empty() || s.activations.is_empty() || s.seeds.is_empty() {
            return Err(Error::Invalid(
                "sweep.depths, sweep.activations and sweep.seeds must not be empty",
            ));
        }
        if s.protocols.is_empty() {
            return Err(Error::Invalid("sweep.protocols must not be empty"));
        }
        // A value listed twice is one point made twice under one directory, counted twice
        // in the plan (eighth hostile round: `seeds = [1, 1]` read "8 point(s)" of 4, each
        // computed twice; ntk-train refuses it).
        fn twice<T: PartialEq + Serialize>(key: &'static str, values: &[T]) -> crate::Result<()> {
            match values
                .iter()
                .enumerate()
                .find(|(i, v)| values[..*i].contains(v))
            {
                Some((_, v)) => Err(Error::Config {
                    key,
                    value: toml::Value::try_from(v).map_or_else(|_| "?".into(), |t| t.to_string()),
                    reason: "listed twice: each value is one point of the sweep; list it once"
                        .into(),
                }),
                None => Ok(()),
            }
        }
        twice("sweep.depths", &s.depths)?;
        twice("sweep.activations", &s.activations)?;
        twice("sweep.seeds", &s.seeds)?;
        twice("sweep.widths", &s.widths)?;
        twice("sweep.ns", &s.ns)?;
        twice("sweep.datasets", &s.datasets)?;
        twice("sweep.conventions", &s.conventions)?;
        twice("sweep.protocols", &s.protocols)?;
        if self.probe.weights.is_some() || self.probe.blocks.is_some() {
            return Err(Error::Invalid(
                "probe.weights and probe.blocks give one network's weights and one set's \
                 blocks; a sweep draws a network per point: probe each with `ntk-probe run`",
            ));
        }
        // The infinite-width kernel has no width and draws no network: a widths axis, or
        // seeds over the whole protocol, would give one number per setting several times,
        // shown as a spread of zero (nineteenth hostile round, D2). The blocks protocol's
        // seeds permute the samples.
        if self.probe.method == crate::config::Method::Theory {
            if !s.widths.is_empty() {
                return Err(Error::Config {
                    key: "sweep.widths",
                    value: format!("{:?}", s.widths),
                    reason: "probe.method = \"theory\" is the infinite-width kernel, which has \
                             no width: leave sweep.widths out"
                        .into(),
                });
            }
            if s.seeds.len() > 1 && s.protocols.contains(&Protocol::Whole) {
                return Err(Error::Config {
                    key: "sweep.seeds",
                    value: format!("{:?}", s.seeds),
                    reason: "probe.method = \"theory\" with the whole protocol draws no \
                             network, so every seed gives the same kernel: list one seed, or \
                             sweep the blocks protocol alone"
                        .into(),
                });
            }
            // One seed over the whole protocol alone seeds nothing either: a seed other than
            // the default would give the one kernel another fingerprint, as a single run's
            // `model.seed` would (`ProbeConfig::check_seed_applies`; twentieth round, N1).
            if s.protocols.iter().all(|p| *p == Protocol::Whole)
                && let Some(&seed) = s.seeds.iter().find(|&&seed| seed != 0)
            {
                return Err(Error::Config {
                    key: "sweep.seeds",
                    value: format!("{:?}", s.seeds),
                    reason: format!(
                        "probe.method = \"theory\" with the whole protocol draws no network, \
                         so seed {seed} would change nothing: list sweep.seeds = [0]"
                    ),
                });
            }
        }
        if self.probe.batch_norm_statistics == Some(crate::config::BnStatistics::Batch)
            && s.protocols.contains(&Protocol::Blocks)
        {
            return Err(Error::Invalid(
                "probe.batch_norm_statistics = \"batch\" with the blocks protocol: a block's \
                 kernel would be cut from the whole batch's, not its own batch's; sweep the \
                 whole protocol only",
            ));
        }
        if self.probe.eigen == Eigen::Extreme && !s.protocols.contains(&Protocol::Whole) {
            return Err(Error::Invalid(
                "probe.eigen = \"extreme\" applies to the whole protocol only, and \
                 sweep.protocols has none: the blocks' small kernels always get every \
                 eigenvalue (leave probe.eigen out)",
            ));
        }
        if self.probe.eigen == Eigen::Tiled && s.protocols.contains(&Protocol::Blocks) {
            return Err(Error::Invalid(
                "probe.eigen = \"tiled\" applies to the whole protocol only: sweep.protocols \
                 = [\"whole\"]",
            ));
        }
        // A parameter is dropped at the points whose activation has none; one that no
        // point takes would be ignored by the whole sweep (a key that does not apply).
        let takes_param = s.activations.iter().any(|a| a.param().is_some());
        let takes_kink = s.activations.contains(&ActivationKind::NormRelu);
        for (key, value, applies, who) in [
            (
                "model.activation_param",
                self.model.activation_param,
                takes_param,
                "norm_relu's kink, leaky_relu's slope",
            ),
            ("model.kink", self.model.kink, takes_kink, "norm_relu's"),
        ] {
            if let Some(v) = value
                && !applies
            {
                return Err(Error::Config {
                    key,
                    value: v.to_string(),
                    reason: format!(
                        "no activation of sweep.activations ({}) takes it ({who}): every \
                         point would leave it out; add such an activation or leave the key out",
                        s.activations
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
        }
        // The synthetic set's dimension, dropped at every other data set's points: with no
        // synthetic point it applies to none (seventeenth hostile round, D3).
        if let Some(d) = self.data.input_dim
            && !s.datasets.is_empty()
            && !s.datasets.contains(&Dataset::Synthetic)
        {
            return Err(Error::Config {
                key: "data.input_dim",
                value: d.to_string(),
                reason: format!(
                    "only the synthetic set takes it, and sweep.datasets ({}) has none: every \
                     point would leave it out; leave the key out",
                    s.datasets
                        .iter()
                        .map(|d| d.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        // Its seed likewise (unless a random subset draws with it).
        if self.data.seed != 0
            && self.data.subset != ntk_data::SubsetRule::Random
            && !s.datasets.is_empty()
            && !s.datasets.contains(&Dataset::Synthetic)
        {
            return Err(Error::Config {
                key: "data.seed",
                value: self.data.seed.to_string(),
                reason: "seeds the synthetic draw (or a random subset) only, and \
                         sweep.datasets has no synthetic set: every point would leave it out; \
                         leave the key out"
                    .into(),
            });
        }
        if !s.datasets.is_empty() && self.data.dir.is_some() {
            return Err(Error::Invalid(
                "sweep.datasets with data.dir: one directory cannot hold several data sets; \
                 leave data.dir out (each set is read from datasets/data/<name>)",
            ));
        }
        sweep::check_size(
            &[
                s.depths.len(),
                s.activations.len(),
                s.seeds.len(),
                s.widths.len().max(1),
                s.ns.len().max(1),
                s.datasets.len().max(1),
                s.conventions.len().max(1),
            ],
            "the product of its axes",
        )?;
        self.probe.check_block_size_applies(&s.protocols)?;
        for setting in self.settings() {
            for &activation in &s.activations {
                let point = Point {
                    setting,
                    activation,
                    depth: 1,
                    seed: 0,
                };
                // Checked under the whole protocol when the sweep has it (where every key
                // applies), else under its first.
                let protocol = if s.protocols.contains(&Protocol::Whole) {
                    Protocol::Whole
                } else {
                    s.protocols[0]
                };
                self.point_config(&point, protocol)
                    .validate()
                    .map_err(|e| Error::Setting {
                        setting: setting.describe(),
                        source: Box::new(e),
                    })?;
            }
        }
        Ok(())
    }

    /// The sweep's axis keys ([`AXES`] and those of the optional axes it lists).
    pub fn axes(&self) -> Vec<&'static str> {
        let s = &self.sweep;
        let mut axes = AXES.to_vec();
        let optional = [
            (!s.widths.is_empty(), &["model.width"][..]),
            (!s.conventions.is_empty(), &["model.convention"][..]),
            (!s.ns.is_empty(), &["data.n", "data.digest"][..]),
            (
                !s.datasets.is_empty(),
                &[
                    "data.dataset",
                    "data.digest",
                    "data.input_dim",
                    "data.seed",
                    "model.input_dim",
                ][..],
            ),
        ];
        for (listed, keys) in optional {
            if listed {
                axes.extend(
                    keys.iter()
                        .filter(|k| !axes.contains(k))
                        .collect::<Vec<_>>(),
                );
            }
        }
        axes
    }

    /// The (dataset, n, width, convention) settings, in sweep order.
    pub fn settings(&self) -> Vec<Setting> {
        let s = &self.sweep;
        let (datasets, ns) = (sweep::listed(&s.datasets), sweep::listed(&s.ns));
        let (widths, conventions) = (sweep::listed(&s.widths), sweep::listed(&s.conventions));
        let mut v = Vec::new();
        for &dataset in &datasets {
            for &n in &ns {
                for &width in &widths {
                    for &convention in &conventions {
                        v.push(Setting {
                            dataset,
                            n,
                            width,
                            convention,
                        });
                    }
                }
            }
        }
        v
    }

    /// The `[data]` of a setting.
    pub fn data_config(&self, setting: &Setting) -> DataConfig {
        let mut data = self.data.clone();
        if let Some(d) = setting.dataset {
            data.dataset = d;
            if d != Dataset::Synthetic {
                data.input_dim = None;
                // The synthetic draw's seed as its dimension: it applies to the synthetic
                // points only (nineteenth hostile round, N3: a mixed sweep refused it at its
                // image points); a random subset draws with it.
                if data.subset != ntk_data::SubsetRule::Random {
                    data.seed = 0;
                }
            }
        }
        if let Some(n) = setting.n {
            data.n = n;
        }
        data
    }

    /// The probe config of one point (its protocol is `probe.protocol` of the file).
    pub fn probe_config(&self, point: &Point) -> ProbeConfig {
        let mut model = self.model.clone();
        model.activation = point.activation;
        model.depth = point.depth;
        model.seed = point.seed;
        if point.activation.param().is_none() {
            model.kink = None;
            model.activation_param = None;
        }
        if let Some(w) = point.setting.width {
            model.width = w;
        }
        if let Some(c) = point.setting.convention {
            model.convention = c;
        }
        ProbeConfig {
            data: self.data_config(&point.setting),
            model: Some(model),
            resnet: None,
            probe: self.probe.clone(),
        }
    }

    /// The probe config of one point under one protocol (what its summary records).
    pub fn point_config(&self, point: &Point, protocol: Protocol) -> ProbeConfig {
        let mut c = self.probe_config(point);
        c.probe.protocol = protocol;
        c
    }

    /// Every point, in the fixed order that sharding uses: settings, then activations,
    /// depths, seeds.
    pub fn points(&self) -> Vec<Point> {
        let mut v = Vec::new();
        for setting in self.settings() {
            for &activation in &self.sweep.activations {
                for &depth in &self.sweep.depths {
                    for &seed in &self.sweep.seeds {
                        v.push(Point {
                            setting,
                            activation,
                            depth,
                            seed,
                        });
                    }
                }
            }
        }
        v
    }
}

/// The values of the optional axes at one point; `None`: the base config's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Setting {
    pub dataset: Option<Dataset>,
    pub n: Option<usize>,
    pub width: Option<usize>,
    pub convention: Option<NtkConvention>,
}

impl Setting {
    /// The directory levels of the listed axes (`mnist/n1000/width256/official`).
    fn dir_parts(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(d) = self.dataset {
            v.push(d.name().to_string());
        }
        if let Some(n) = self.n {
            v.push(format!("n{n}"));
        }
        if let Some(w) = self.width {
            v.push(format!("width{w}"));
        }
        if let Some(c) = self.convention {
            v.push(convention_name(c));
        }
        v
    }

    /// `mnist n=1000 width=256 official`; `None` without optional axes.
    pub fn describe(&self) -> Option<String> {
        let mut v = Vec::new();
        if let Some(d) = self.dataset {
            v.push(d.name().to_string());
        }
        if let Some(n) = self.n {
            v.push(format!("n={n}"));
        }
        if let Some(w) = self.width {
            v.push(format!("width={w}"));
        }
        if let Some(c) = self.convention {
            v.push(convention_name(c));
        }
        (!v.is_empty()).then(|| v.join(" "))
    }
}

pub(super) fn convention_name(c: NtkConvention) -> String {
    crate::config::spelled(&c)
}

/// One grid point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub setting: Setting,
    pub activation: ActivationKind,
    pub depth: usize,
    pub seed: u64,
}

impl Point {
    pub fn dir(&self, out: &Path) -> PathBuf {
        let mut dir = out.join("runs");
        for part in self.setting.dir_parts() {
            dir.push(part);
        }
        dir.join(self.activation.name())
            .join(format!("depth{:02}", self.depth))
            .join(format!("seed{}", self.seed))
    }
}

#[cfg(test)]
mod duplicate_tests {
    use super::*;

    /// Eighth hostile round: a value listed twice on an axis is refused, naming the axis and
    /// the value (it made one point twice and counted it twice).
    #[test]
    fn an_axis_listing_a_value_twice_is_refused() {
        let base = "[data]\ndataset = \"synthetic\"\nn = 10\n[model]\nwidth = 8\ndepth = 1\n\
                    activation = \"relu\"\n[probe]\n[sweep]\nout = \"x\"\nprotocols = [\"whole\"]\n";
        let ok = format!("{base}depths = [1, 2]\nactivations = [\"relu\"]\nseeds = [1]\n");
        SweepConfig::parse(&ok).unwrap();
        for (axes, key, value) in [
            (
                "depths = [1]\nactivations = [\"relu\"]\nseeds = [1, 1]",
                "sweep.seeds",
                "1",
            ),
            (
                "depths = [1]\nactivations = [\"relu\", \"erf\", \"relu\"]\nseeds = [1]",
                "sweep.activations",
                "\"relu\"",
            ),
            (
                "depths = [2, 2]\nactivations = [\"relu\"]\nseeds = [1]",
                "sweep.depths",
                "2",
            ),
        ] {
            let e = SweepConfig::parse(&format!("{base}{axes}\n"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("{key} = {value}")) && e.contains("twice"),
                "{e}"
            );
        }
    }
}
