//! Probe sweeps (Liu & Hui, Fig. 2, and the finite-width studies around it): every point of
//! a grid of (dataset, n, width, convention) settings x activations x depths x seeds, each
//! under the listed kernel protocols, on the shared sweep framework
//! ([`ntk_runs::sweep`]): resume (finished points are skipped), sharding for job arrays
//! (`--shard i/N`: point p belongs to shard p mod N), `--dry-run`, and `collect`, which
//! merges the finished points into `results.csv` (one row per point and protocol, every
//! summary field), `summary.csv` (means and spreads over seeds, with the infinite-width
//! theory beside them) and the figures.
//!
//! A point counts as finished only when the summaries of all its protocols record the
//! fingerprint of the config about to compute it ([`ntk_runs::provenance`]); a point made by
//! another config is an error naming the keys that differ (or, with `recompute`, is
//! computed again). Each point's directory is written as one output set
//! ([`ntk_files::outset`]): all its protocols or none.
//!
//! Layout of `out/`: `runs/[<dataset>/][n<N>/][width<W>/][<convention>/]<activation>/
//! depth<LL>/seed<S>/<protocol>/{summary.json, eigenvalues.npy}` (the bracketed levels only
//! for the axes a sweep lists), `theory.json` (cached theory values), `results.csv`,
//! `summary.csv`, `min_grad_angle_vs_depth.{png,svg,pdf}`, `kappa_vs_depth_<protocol>.{png,svg,pdf}`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ntk_model::{ActivationKind, MlpConfig, Net, NtkConvention};
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::config::{Eigen, ProbeConfig, ProbeSection, Protocol};
use crate::run::{self, Summary};
use ntk_data::inputs::{self, Inputs};
use ntk_data::{DataConfig, Dataset};
use ntk_files::outset::{self, OutputSet};
use ntk_kernel::host::{HostCache, Reuse};
use ntk_numerics::backend::{self, Compute, Precision};
use ntk_numerics::spectrum::Spectrum;
use ntk_runs::overrides::{self, Assignment, ConfigName};
use ntk_runs::progress::Reporter;
use ntk_runs::provenance::{self, Provenance};
use ntk_runs::sweep::{self, Planned, Recompute, Shard, State, Sweep};

/// How a sweep runs.
#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// Burn's backend (overrides `probe.backend`).
    pub backend: Option<String>,
    /// Recompute points made by another config instead of refusing them.
    pub recompute: bool,
    /// The memory the work may plan for (`--max-memory`).
    pub max_memory: Option<String>,
    /// Add points to a directory whose points were made by a config that differs beyond
    /// the sweep axes (refused by default: the directory would mix two sweeps).
    pub allow_mixed: bool,
    /// The config as messages name it; an error of reading a setting's data names it and
    /// the setting (sixty-fourth hostile round, N2: such errors named neither).
    pub config: Option<ConfigName>,
}

impl sweep::Recorded for Summary {
    const WHAT: &'static str = "an ntk-probe summary";
    fn provenance(&self) -> Option<&Provenance> {
        self.provenance.as_ref()
    }
    const SET_FILES: &'static [&'static str] = &[
        run::OUTPUT_FILES[1],
        run::OUTPUT_FILES[2],
        run::OUTPUT_FILES[3],
        run::OUTPUT_FILES[4],
        run::OUTPUT_FILES[5],
        run::OUTPUT_FILES[6],
    ];
    fn files(&self) -> Option<&ntk_runs::manifest::Files> {
        self.files.as_ref()
    }
    /// Its own checksum, its recorded config included ([`crate::sweep::summary_edited`]),
    /// then the point its directory names ([`named::misplaced`]).
    fn not_its_own(&self, path: &Path) -> Option<String> {
        crate::sweep::summary_edited(self, path).or_else(|| named::misplaced(self, path))
    }
    /// Its checksum and its numbers against its eigenvalues and blocks ([`check_numbers`]).
    fn check(&self, path: &Path) -> Option<String> {
        check_numbers(path, self).err().map(|e| e.to_string())
    }
}

/// Why the summary at `path` is not as its run wrote it by its own checksum, its recorded
/// config included (`SelfChecksum::sealed`), said before it is held to the config about to
/// run (hundred-and-forty-fourth hostile round, N3: an edited recorded config was called
/// another config's); `None` where it is, or records no checksum.
pub(crate) fn summary_edited<S: ntk_runs::provenance::SelfChecksum>(
    s: &S,
    path: &Path,
) -> Option<String> {
    (!s.sealed()).then(|| {
        Error::SummaryEdited {
            path: path.to_path_buf(),
            what: "its fields do not match the checksum it was written with".into(),
        }
        .to_string()
    })
}

/// The first symbolic link on the way from `out/runs` to the summaries `expected` (each
/// directory below `runs/`, the summary itself) or among the files of their sets.
fn linked_on_the_way(out: &Path, expected: &[(PathBuf, &Provenance)]) -> Option<PathBuf> {
    let runs = out.join("runs");
    let is_link = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    expected.iter().find_map(|(summary, _)| {
        let on_the_way = summary
            .ancestors()
            .take_while(|a| a.starts_with(&runs) && *a != runs)
            .find(|a| is_link(a))
            .map(Path::to_path_buf);
        on_the_way.or_else(|| {
            let dir = summary.parent()?;
            <Summary as sweep::Recorded>::SET_FILES
                .iter()
                .map(|n| dir.join(n))
                .find(|p| is_link(p))
        })
    })
}

/// Reads a summary.json; `None` when absent, an error naming the file when unreadable.
pub fn read_summary(path: &Path) -> crate::Result<Option<Summary>> {
    Ok(sweep::read(path)?)
}

/// The remedy every stale point's message ends with.
const REDO: &str = "pass --recompute to the sweep to compute the point again";

/// One input set of a sweep (a setting's dataset and n), loaded once.
struct Data {
    inputs: Inputs,
    digest: String,
    /// The Gram matrix's spectrum, computed when the first point is.
    gram: Option<Spectrum>,
}

/// A probe sweep as the shared machinery sees it ([`ntk_runs::sweep::Sweep`]).
struct ProbeSweep<'a> {
    cfg: &'a SweepConfig,
    out: &'a Path,
    compute: Compute,
    /// The input sets, by their `[data]` table.
    data: Vec<(DataConfig, Data)>,
    reporter: Reporter,
    /// The host engine's forwards, reused down a family's depths.
    cache: HostCache,
    /// The last network built from scratch: the shallower ones of its family truncate it.
    deepest: Option<Net>,
    /// Points of another sweep config may share the directory ([`SweepOptions::allow_mixed`]).
    allow_mixed: bool,
    /// Where a dry run checks the points' kernel range ([`Sweep::foresee`]): the planned
    /// backend when it runs on the host, else the first host backend built in, in the sweep's
    /// precision; `None` for the run, which checks each point as it makes it.
    foresight: Option<Compute>,
    /// A `collect --config`, which makes nothing: another run's phase files beside a point
    /// do not make it stale there.
    collecting: bool,
}

impl<'a> ProbeSweep<'a> {
    /// The backend, the memory check and the inputs of every setting. With `open` false the
    /// device is named but not opened ([`backend::plan`]): a dry run or `collect` only
    /// compares what the points recorded, so it runs where the GPU is not (a login node).
    fn new(
        cfg: &'a SweepConfig,
        out: &'a Path,
        opts: &SweepOptions,
        open: bool,
    ) -> crate::Result<Self> {
        let device = opts.backend.as_deref().or(cfg.probe.backend.as_deref());
        let chosen = if open {
            backend::select(device, cfg.probe.precision)
        } else {
            backend::plan(device, cfg.probe.precision)
        };
        // The flag named, as a run names it (hundred-and-eighth hostile round, N1: "error:
        // unknown backend ..." alone); the config's key names itself when it is read.
        let compute = chosen.map_err(|e| match &opts.backend {
            Some(flag) => Error::Setting {
                setting: Some(format!(
                    "--backend {}",
                    ntk_runs::quote::controls_escaped(flag)
                )),
                source: Box::new(e.into()),
            },
            None => e.into(),
        })?;
        let foresight = (!open)
            .then(|| {
                let on_host = std::iter::once(compute.backend)
                    .chain(backend::available())
                    .find(|b| b.on_host())?;
                backend::select(Some(on_host.name()), cfg.probe.precision).ok()
            })
            .flatten();
        let mut data: Vec<(DataConfig, Data)> = Vec::new();
        for setting in cfg.settings() {
            check_memory(cfg, &setting, opts)?;
            let dc = cfg.data_config(&setting);
            if data.iter().all(|(d, _)| *d != dc) {
                let inputs = inputs::load(&dc).map_err(|e| data_error(opts, &setting, e))?;
                run::check_inputs(cfg.probe.precision, &inputs)?;
                let digest = inputs.digest();
                let gram = None;
                data.push((
                    dc,
                    Data {
                        inputs,
                        digest,
                        gram,
                    },
                ));
            }
        }
        Ok(Self {
            cfg,
            out,
            compute,
            data,
            reporter: Reporter::default(),
            cache: if reuse(cfg) == Reuse::DepthSweep {
                HostCache::for_depth_sweep()
            } else {
                HostCache::default()
            },
            deepest: None,
            allow_mixed: opts.allow_mixed,
            foresight,
            collecting: false,
        })
    }

    fn data(&self, point: &Point) -> &Data {
        let dc = self.cfg.data_config(&point.setting);
        &self
            .data
            .iter()
            .find(|(d, _)| *d == dc)
            .expect("loaded in new")
            .1
    }

    /// What each protocol's summary of the point will record.
    fn provenances(&self, point: &Point) -> Vec<(Protocol, Provenance)> {
        let data = self.data(point);
        self.cfg
            .sweep
            .protocols
            .iter()
            .map(|&protocol| {
                let pcfg = self.cfg.point_config(point, protocol);
                let prov = run::provenance(&pcfg, &data.inputs, &data.digest, &self.compute, None);
                (protocol, prov)
            })
            .collect()
    }

    /// The point's network: a truncation of the family's deepest when it is one, else new.
    fn network(&mut self, pcfg: &ProbeConfig, inputs: &Inputs) -> crate::Result<Net> {
        let truncated = match &self.deepest {
            Some(d) => run::truncate_net(pcfg, inputs, &self.compute, d)?,
            None => None,
        };
        match truncated {
            Some(net) => Ok(net),
            None => {
                let net = run::build_net(pcfg, inputs, &self.compute)?;
                self.deepest = Some(net.clone());
                Ok(net)
            }
        }
    }

    /// The point's Gram spectrum (computed once per input set).
    fn gram(&mut self, point: &Point) -> crate::Result<Spectrum> {
        let dc = self.cfg.data_config(&point.setting);
        let data = &mut self
            .data
            .iter_mut()
            .find(|(d, _)| *d == dc)
            .expect("loaded")
            .1;
        if data.gram.is_none() {
            data.gram = Some(run::gram_spectrum(&data.inputs)?);
        }
        Ok(data.gram.clone().expect("set above"))
    }
}

/// The deepest network of a setting under each protocol bounds the memory of its points.
/// What the host engine's forward keeps: the Grams of a sweep over several depths (its
/// shallower networks reuse them), nothing for one depth (round 23's N3: a one-depth sweep
/// kept every layer's Gram, 1.0 GB against the single run's 436 MB).
fn reuse(cfg: &SweepConfig) -> Reuse {
    if cfg.sweep.depths.len() > 1 {
        Reuse::DepthSweep
    } else {
        Reuse::OneKernel
    }
}

/// An error of reading `setting`'s data, as the config's validation errors read: `F (with
/// overrides): SETTING: ...`.
fn data_error(opts: &SweepOptions, setting: &Setting, e: ntk_data::DataError) -> Error {
    let e = Error::Setting {
        setting: setting.describe(),
        source: Box::new(e.into()),
    };
    match &opts.config {
        Some(name) => Error::Named {
            name: name.clone(),
            source: Box::new(e),
        },
        None => e,
    }
}

fn check_memory(cfg: &SweepConfig, setting: &Setting, opts: &SweepOptions) -> crate::Result<()> {
    let point = Point {
        setting: *setting,
        activation: cfg.sweep.activations[0],
        depth: cfg.sweep.depths.iter().copied().max().unwrap_or(0),
        seed: cfg.sweep.seeds[0],
    };
    for &protocol in &cfg.sweep.protocols {
        let pcfg = cfg.point_config(&point, protocol);
        run::check_memory(
            &pcfg,
            inputs::expected_dim(&pcfg.data)?,
            reuse(cfg),
            opts.max_memory.as_deref(),
        )?;
    }
    Ok(())
}

impl Sweep for ProbeSweep<'_> {
    type Point = Point;
    type Made = f64;
    type Error = Error;

    fn label(&self, p: &Point) -> String {
        let setting = p.setting.describe().map_or(String::new(), |d| d + " ");
        format!(
            "{setting}{:>12} depth {:3} seed {:<6} {}",
            p.activation.name(),
            p.depth,
            p.seed,
            p.dir(self.out).display()
        )
    }

    fn state(&self, point: &Point) -> crate::Result<State> {
        let dir = point.dir(self.out);
        let provs = self.provenances(point);
        let expected: Vec<(PathBuf, &Provenance)> = provs
            .iter()
            .map(|(protocol, prov)| (dir.join(protocol.name()).join("summary.json"), prov))
            .collect();
        let redo = REDO;
        // A link on the way to the point's files, or among them, is never read through, as
        // `collect` never follows one (hundred-and-forty-eighth hostile round, second
        // review, D1: the plans read a linked summary.json or whole/ as another config's,
        // or as done).
        if let Some(link) = linked_on_the_way(self.out, &expected) {
            return Ok(State::Blocked(format!(
                "{}: a symbolic link, never followed: a point's files are the ones its run \
                 wrote; move the link away",
                link.display()
            )));
        }
        // A point whose summary is not as written (its checksum, its numbers against its
        // eigenvalues and blocks: `Recorded::check`) is stale, as `collect` refuses it
        // (seventy-sixth hostile round, D3: the dry run said `done`, and the sweep refused).
        let state = sweep::state::<Summary>(&expected, redo, sweep::Holder::Point);
        // A tiled point's own phase files (a sweep always continues from them) make it
        // partial (issue 65 item 14: a dry run says so).
        let n = self.data(point).inputs.n;
        let kept = |prov: &Provenance| {
            let place = crate::phases::Place::of_run(&dir, true, prov);
            crate::phases::kept(&place, (n, run::TILE)).is_some()
        };
        let tiled = self.cfg.probe_config(point).probe.eigen == Eigen::Tiled;
        if state == State::New && tiled && provs.iter().any(|(_, prov)| kept(prov)) {
            return Ok(State::Partial);
        }
        // Another run's phase files beside the point, which making it would remove: a
        // point of another config, refused without --recompute as its results would be
        // (eighty-eighth hostile round, D1); a collect makes nothing, and reads no phases.
        let another = || {
            let mut each = provs
                .iter()
                .map(|(_, prov)| run::another_phases(&dir, prov, n));
            let first = each.next().flatten()?;
            each.all(|a| a.is_some()).then_some(first)
        };
        if state == State::New
            && !self.collecting
            && let Some(another) = another()
        {
            return Ok(State::Stale(format!(
                "{another}, and which making the point would remove; {redo}"
            )));
        }
        Ok(state)
    }

    /// Nothing to clear: a point's output set replaces its directory whole.
    fn clear(&self, _: &Point) -> crate::Result<()> {
        Ok(())
    }

    fn dir(&self, point: &Point) -> PathBuf {
        point.dir(self.out)
    }

    fn record_failure(&self, point: &Point, error: &Error) -> crate::Result<()> {
        let dir = point.dir(self.out);
        // Only while no one else writes the point.
        let _lock = ntk_files::lock::DirLock::acquire_beside(&dir)?;
        let prov = self.provenances(point).into_iter().next().map(|(_, p)| p);
        let failure = sweep::Failure {
            reason: error.to_string(),
            fingerprint: prov
                .as_ref()
                .map_or(String::new(), |p| p.fingerprint.clone()),
            tool: prov.map_or(String::new(), |p| p.tool),
        };
        Ok(failure.write(&dir)?)
    }

    fn busy(error: &Error) -> bool {
        match error {
            Error::Setting { source, .. } => Self::busy(source),
            Error::Io(e) => e.kind() == std::io::ErrorKind::ResourceBusy,
            _ => false,
        }
    }

    const UNIT: &'static str = "point";

    fn out(&self) -> &Path {
        self.out
    }

    fn counted(&self) -> String {
        format!("point(s) x {} protocol(s)", self.cfg.sweep.protocols.len())
    }

    fn computes(&self, _made: &[usize]) -> String {
        let c = &self.compute;
        format!("backend: {} {} (the run opens it)", c.backend, c.precision)
    }

    /// Every place the sweep writes or removes checked ([`places`]), then points of another
    /// sweep config in the directory, unless `allow_mixed`.
    fn refuse(
        &self,
        points: &[Point],
        planned: &[Planned],
        recompute: &Recompute,
    ) -> crate::Result<()> {
        let fingerprint = fingerprint(self.cfg);
        // The collect at the end draws the protocols of every point it finds: with
        // --allow-mixed, other configs' too.
        let protocols: Vec<&str> = if self.allow_mixed {
            vec![Protocol::Whole.name(), Protocol::Blocks.name()]
        } else {
            self.cfg.sweep.protocols.iter().map(|p| p.name()).collect()
        };
        // A point's set under another name is said with where it belongs before the places
        // check calls it no output set (hundred-and-fifty-first hostile round, D4).
        check_others_summaries(self, points)?;
        let (theory, angles) = self.writes_theory_and_angles(points);
        ntk_files::places::check(&places::planned(
            self.out,
            fingerprint,
            (points, planned),
            recompute.given,
            &|name: &str| writes_file_of(name, &protocols, theory, angles),
        ))?;
        places::check_unlisted_protocols(
            self.out,
            (points, planned),
            recompute.given,
            &self.cfg.sweep.protocols,
        )?;
        check_same_sweep(self, points, planned, recompute)
    }

    /// A point the run would fail by the kernel range check it makes before any work
    /// ([`run::given::check_kernel_range`]: the kernel of the largest-norm input alone
    /// overflows, or that of the smallest nonzero norm underflows, or in f32 either differs
    /// from f64's beyond rounding, or an MLP's diagonal overflows at any input), found as the
    /// run finds it
    /// but on the host ([`ProbeSweep::foresight`]: a dry run opens no GPU), in the sweep's
    /// precision; an error building the point's network is foreseen alike. And a tiled
    /// point's phase place as the run asks it ([`run::check_phase_place`]): the refusal of
    /// `NTK_PHASE_FILES=1`, or the warning of a point that will go on without phase files,
    /// said on stderr as the run says it (seventy-fourth hostile round, D5: a file at
    /// `<point>/.seed0.phases` was not said, and under `=1` the point read `new`).
    fn foresee(&self, point: &Point) -> crate::Result<Option<String>> {
        // A point another process is making now: the run skips it as busy and ends with that
        // error, so its dry run says so, as ntk-train's does (eighty-fifth hostile round, D8).
        let dir = point.dir(self.out);
        if let Some(holder) = ntk_files::lock::DirLock::holder_beside(&dir) {
            return Ok(Some(format!(
                "busy: another process is writing here ({holder})"
            )));
        }
        // A point whose set its filesystem keeps from being replaced (`chattr +i`): the run
        // fails it at its end (eighty-fifth hostile round, D6: the dry run said "made again").
        if let Err(e) = ntk_files::outset::check_replaceable_target(&dir) {
            return Ok(Some(format!("{}: {e}", dir.display())));
        }
        // Its set is made and locked in the point's parent directory: one this user cannot
        // write fails the point, said by the dry run (eighty-second hostile round, D11).
        if let Some(parent) = dir.parent()
            && let Err(e) = ntk_files::outset::check_writable_unmade(parent)
        {
            return Ok(Some(e.to_string()));
        }
        let Some(compute) = &self.foresight else {
            return Ok(None);
        };
        let pcfg = self.cfg.probe_config(point);
        if pcfg.probe.weights.is_some() {
            return Ok(None);
        }
        let inputs = &self.data(point).inputs;
        let check = || -> crate::Result<()> {
            let net = run::build_net(&pcfg, inputs, compute)?;
            run::given::check_kernel_range(&pcfg, inputs, compute, &net)
        };
        if let Err(e) = check() {
            return Ok(Some(e.to_string()));
        }
        for (protocol, prov) in self.provenances(point) {
            if protocol != Protocol::Whole {
                continue;
            }
            let whole = self.cfg.point_config(point, protocol);
            match run::check_phase_place(&whole, inputs, &self.compute, &dir, &prov, true) {
                Err(e) => return Ok(Some(e.to_string())),
                Ok(Some(said)) => eprintln!("{said}"),
                Ok(None) => {}
            }
        }
        Ok(None)
    }

    /// The figures the collect at the sweep's end no longer draws: those of a protocol that
    /// neither this config lists nor a point kept beside its own holds, and the angle's where
    /// no point of it may have an angle ([`Self::writes_theory_and_angles`]).
    fn foreseen(&self, points: &[Point], _planned: &[Planned]) -> Vec<String> {
        let mut protocols: Vec<&str> = if self.allow_mixed {
            vec![Protocol::Whole.name(), Protocol::Blocks.name()]
        } else {
            self.cfg.sweep.protocols.iter().map(|p| p.name()).collect()
        };
        // A point of this config holding another protocol's results beside (made before that
        // protocol left the list): its figure is drawn still.
        for (_, s) in read_summaries_at(self.out).unwrap_or_default() {
            if !protocols.contains(&s.protocol.name()) {
                protocols.push(s.protocol.name());
            }
        }
        let (_, angles) = self.writes_theory_and_angles(points);
        let draws = |name: &str| {
            writes_figure_of(name, &protocols)
                && (angles || !ntk_plot::is_figure_file(name, ANGLE_FIGURE))
        };
        let mut lines = sweep::foresee_stale_reports(self.out, "points", &|name| {
            stale_figure_why(name, &draws, "here")
        });
        lines.extend(sweep::foresee_captions(self.out, &|stem| {
            draws(&format!("{stem}.png"))
        }));
        lines
    }

    /// Per (setting, activation, seed), deepest first: the shallower networks share the
    /// deeper one's hidden layers, whose forward and Grams the host engine then reuses
    /// (host::Forward).
    fn order(&self, points: &[Point], planned: &mut [Planned]) {
        let (cfg, settings) = (self.cfg, self.cfg.settings());
        planned.sort_by_key(|p| {
            let point = &points[p.index];
            (
                settings.iter().position(|s| *s == point.setting),
                cfg.sweep
                    .activations
                    .iter()
                    .position(|a| *a == point.activation),
                point.seed,
                std::cmp::Reverse(point.depth),
                p.index,
            )
        });
    }

    fn found(&self) -> crate::Result<Vec<PathBuf>> {
        Ok(read_summaries_at(self.out)?
            .into_iter()
            .map(|(p, _)| p)
            .collect())
    }

    /// A summary is its point's in a protocol's directory of the point's, not nested below
    /// (`whole.aside/`, `seed1/mine/`).
    fn owns(&self, point: &Point, found: &Path) -> bool {
        let protocol_dir = found.parent();
        protocol_dir.and_then(Path::parent) == Some(point.dir(self.out).as_path())
            && protocol_dir
                .and_then(|d| d.file_name())
                .and_then(|n| n.to_str())
                .and_then(ntk_names::parse::<Protocol>)
                .is_some()
    }

    /// A summary of no point's directory that records a point of this config
    /// ([`named::elsewhere`]) is said so, not as no point of the config.
    fn check_found(&self, points: &[Point], found: &Path) -> crate::Result<()> {
        match read_checked_summary(found, &self.out.join("runs"))? {
            Some(s) => match named::elsewhere(self, points, found, &s) {
                Some(why) => Err(Error::NotItsPoint(why)),
                None => Ok(()),
            },
            None => Ok(()),
        }
    }

    /// Computes the point's kernel once and writes its summary under each protocol, as one
    /// output set; returns the kernel's seconds.
    fn make(&mut self, point: &Point) -> crate::Result<f64> {
        // An error names the point it stopped at (a network that overflows at depth 10).
        self.make_point(point).map_err(|e| Error::Setting {
            setting: Some(format!(
                "point {}{} depth {} seed {}",
                point.setting.describe().map_or(String::new(), |d| d + " "),
                point.activation,
                point.depth,
                point.seed
            )),
            source: Box::new(e),
        })
    }
}

impl ProbeSweep<'_> {
    /// Whether the collect at the end of this sweep writes `theory.json` (the theory asked
    /// for, of one input set, not blocks alone over a large set: as `collect` decides it)
    /// and may draw the angle's figure (some point measures an angle: not with
    /// `probe.output = "full"` nor block by block, or the theory may give one by its own
    /// rules, [`collect::theory_may_draw_angle`]). With `--allow-mixed` other configs'
    /// points may draw it. Forty-sixth hostile round, D1; forty-seventh, D1.
    fn writes_theory_and_angles(&self, points: &[Point]) -> (bool, bool) {
        let cfg = self.cfg;
        let protocols = &cfg.sweep.protocols;
        let data: Vec<DataConfig> = points.iter().map(|p| cfg.data_config(&p.setting)).collect();
        let one_set = data
            .iter()
            .all(|d| d.dataset == data[0].dataset && d.n == data[0].n);
        let blocks_only = protocols.iter().all(|&p| p == Protocol::Blocks);
        let theory = cfg.sweep.theory
            && collect::theory_rule(one_set, blocks_only, data.first().map(|d| d.n));
        // The theory is of the first setting's data, loaded with the points' (where no point
        // has it, its angle is taken as possible).
        let first = cfg.data_config(&cfg.settings()[0]);
        let theory_angles = theory
            && self
                .data
                .iter()
                .find(|(d, _)| *d == first)
                .is_none_or(|(_, loaded)| collect::theory_may_draw_angle(cfg, &loaded.inputs));
        let measured = points.iter().any(|p| {
            let pcfg = cfg.probe_config(p);
            pcfg.probe.output != ntk_numerics::kernel::OutputMode::Full
                && !run::per_block(&pcfg, protocols, pcfg.data.n)
        });
        (theory, theory_angles || measured || self.allow_mixed)
    }

    /// The point's kernel, formed once for all its protocols, or block by block for a
    /// blocks-only sweep over more than [`run::PER_BLOCK_ROWS`] rows; its summary under each
    /// protocol, as one output set. Returns the seconds spent in kernels.
    fn make_point(&mut self, point: &Point) -> crate::Result<f64> {
        // The point is claimed before any work (a second writer is refused at once).
        let set = OutputSet::begin(&point.dir(self.out)).map_err(Error::Io)?;
        let pcfg = self.cfg.probe_config(point);
        let provs = self.provenances(point);
        let gram = self.gram(point)?;
        let inputs = self.data(point).inputs.clone();
        let net = self.network(&pcfg, &inputs)?;
        // Its kernel within the precision's range, as a run checks it (given weights were
        // checked as they were read): an overflow or underflow fails the point, saying why.
        if pcfg.probe.weights.is_none() {
            run::given::check_kernel_range(&pcfg, &inputs, &self.compute, &net)?;
        }
        // The tiled route and the blocks protocol block by block never form the whole kernel.
        let tiled = pcfg.probe.eigen == Eigen::Tiled;
        let whole = if tiled || run::per_block(&pcfg, &self.cfg.sweep.protocols, inputs.n) {
            None
        } else {
            let t = Instant::now();
            let result = ntk_kernel::batch_norm::compute_kernel_net_stats(
                &net,
                &inputs,
                &self.compute,
                (pcfg.probe.method, pcfg.probe.output),
                pcfg.probe.batch_norm_statistics.unwrap_or_default(),
                &mut self.cache,
            )?;
            Some((result, t.elapsed().as_secs_f64()))
        };
        let mut kernel_seconds = whole.as_ref().map_or(0.0, |w| w.1);
        let probed = run::Probed {
            cfg: &pcfg,
            inputs: &inputs,
            compute: &self.compute,
            net: &net,
            gram: &gram,
        };
        // The tiled points' phase files, removed once the point's results are in place.
        let mut phase_places = Vec::new();
        for (protocol, prov) in provs {
            let mut done = match &whole {
                Some((result, seconds)) => run::summarize(probed, protocol, result, *seconds)?,
                None if tiled => {
                    // A sweep continues what was interrupted: from the point's phase files.
                    let dir = point.dir(self.out);
                    let phases = crate::phases::Place::of_run(&dir, true, &prov);
                    let done = run::summarize_tiled(probed, Some(&phases))?;
                    kernel_seconds += done.summary.kernel_seconds;
                    phase_places.push(phases);
                    done
                }
                None => {
                    // Per block: the protocol's own config.
                    let pcfg = self.cfg.point_config(point, protocol);
                    let probed = run::Probed {
                        cfg: &pcfg,
                        ..probed
                    };
                    let done = run::summarize_per_block(probed, &mut self.cache)?;
                    kernel_seconds += done.summary.kernel_seconds;
                    done
                }
            };
            done.summary.provenance = Some(prov);
            let dir = set.path().join(protocol.name());
            run::write_outputs(
                &dir,
                &mut done.summary,
                None,
                None,
                &done.eigenvalues,
                done.blocks.as_deref(),
                None,
            )
            .map_err(|e| e.in_set(&set))?;
        }
        if let Some(warning) = set.commit().map_err(Error::Io)? {
            eprintln!("warning: {warning}");
        }
        // Only now, so that a failed commit leaves them to resume from (eighty-first hostile
        // round, D1); a point of another route says and removes a tiled run's (D5).
        for place in &phase_places {
            crate::phases::finish(place, (inputs.n, run::TILE));
        }
        if !tiled && let Some(note) = crate::phases::unused(&point.dir(self.out), true) {
            self.reporter.log(&note);
        }
        self.reporter.log(&format!(
            "[sweep] {}{} depth {} seed {}: {kernel_seconds:.1} s{}",
            point.setting.describe().map_or(String::new(), |d| d + " "),
            point.activation,
            point.depth,
            point.seed,
            match (&whole, tiled) {
                (None, true) => " in kernels, in tiles",
                (None, false) => " in kernels, block by block",
                _ => "",
            }
        ));
        Ok(kernel_seconds)
    }
}

/// Refuses to add points to a directory holding two points of one config (a copy) or,
/// unless `--allow-mixed`, points of another sweep config (differing beyond the sweep's
/// axes); points about to be recomputed do not count, by this shard or, with
/// `--recompute`, by the others ([`Recompute::elsewhere`]).
fn check_same_sweep(
    sweep: &ProbeSweep,
    points: &[Point],
    planned: &[Planned],
    recompute: &Recompute,
) -> crate::Result<()> {
    let Some(first) = planned.first() else {
        return Ok(());
    };
    let Some((_, new)) = sweep.provenances(&points[first.index]).into_iter().next() else {
        return Ok(());
    };
    let replaced: Vec<PathBuf> = planned
        .iter()
        .filter(|p| recompute.given && matches!(p.state, State::Stale(_)))
        .map(|p| p.index)
        .chain(recompute.elsewhere.iter().copied())
        .map(|index| points[index].dir(sweep.out))
        .collect();
    let mut entries = vec![(PathBuf::from("this config"), Some(new))];
    for path in sweep::find_files(&sweep.out.join("runs"), "summary.json") {
        if let Ok(Some(s)) = read_summary(&path)
            && !replaced.iter().any(|r| path.starts_with(r))
        {
            entries.push((path, s.provenance));
        }
    }
    let refs: Vec<(PathBuf, Option<&Provenance>)> = entries
        .iter()
        .map(|(p, v)| (p.clone(), v.as_ref()))
        .collect();
    // Two points it keeps that record one config (a copy of a point's directory) make its
    // collect refuse the sweep: refused before any work, and by the dry run (eighty-third
    // hostile round, D5: the dry run said `done`, the sweep computed, then its collect
    // refused), as ntk-train's sweep refuses a copied run.
    // `--allow-mixed` lets other configs' points stand beside its own, as collect does.
    provenance::check_each(&refs[1..], crate::run::ONE_FORM)
        .and_then(|()| {
            if sweep.allow_mixed {
                return Ok(0);
            }
            provenance::check_one_base(&refs, &sweep.cfg.axes(), crate::run::ONE_FORM)
        })
        .map(|_| ())
        .map_err(|e| Error::At {
            path: sweep.out.to_path_buf(),
            source: Box::new(e.into()),
        })
}

/// Prints every point of this shard with its state (`--dry-run`) and refuses as the sweep
/// would; opens no GPU (the points' states depend on the backend's name alone) and computes
/// only the kernel range check each point the run would make begins with, on the host
/// ([`Sweep::foresee`]): a point that would fail it is listed as `fails`, saying why, and the
/// dry run ends with an error naming the first.
pub fn dry_run(
    cfg: &SweepConfig,
    out: &Path,
    shard: Shard,
    opts: &SweepOptions,
) -> crate::Result<()> {
    let sweep = ProbeSweep::new(cfg, out, opts, false)?;
    sweep::dry_run(&sweep, &cfg.points(), shard, opts.recompute)?;
    kept_points_phases(&sweep, &cfg.points(), shard, false);
    // What the run's closing collect warns of beside the points it makes.
    let made: std::collections::HashSet<PathBuf> = cfg
        .points()
        .iter()
        .flat_map(|p| {
            let dir = p.dir(out);
            cfg.sweep
                .protocols
                .iter()
                .map(move |proto| dir.join(proto.name()))
        })
        .collect();
    ntk_runs::sweep::warn_unreadable_but(&out.join("runs"), "summary.json", |d| made.contains(d));
    Ok(())
}

/// This config's phase files beside the points of this shard whose results are kept
/// (`done`): an interrupted computation's (a run killed, then finished under
/// `NTK_PHASE_FILES=0`), which no point resumes from. Removed and said by the sweep, said by
/// its dry run (`remove` false), as a single run's `--resume` does (eighty-fifth hostile
/// round, D10: 14.7 GB at 60,000 images stayed beside a point reported `done`).
fn kept_points_phases(sweep: &ProbeSweep, points: &[Point], shard: Shard, remove: bool) {
    for (index, point) in points.iter().enumerate() {
        let dir = point.dir(sweep.out);
        if !shard.owns(index)
            || std::fs::symlink_metadata(crate::phases::dir_beside(&dir)).is_err()
            || !matches!(sweep.state(point), Ok(State::Done))
        {
            continue;
        }
        for (protocol, prov) in sweep.provenances(point) {
            let place = crate::phases::Place::of_run(&dir, true, &prov);
            if protocol == Protocol::Whole
                && let Some(words) = crate::phases::drop_when_kept(&place, remove)
            {
                sweep.reporter.log(&format!("note: {words}"));
            }
        }
    }
}

/// `collect DIR --config FILE`: every point of `cfg` found in `out` was made by `cfg` (its
/// recorded fingerprint); a point of another config is an error naming the keys that
/// differ. Points not yet made are left to the tables, which name them.
pub fn check_collect(
    cfg: &SweepConfig,
    config: &ConfigName,
    out: &Path,
    allow_mixed: bool,
) -> crate::Result<()> {
    collect::refuse_training_runs(out)?;
    let opts = SweepOptions {
        backend: None,
        recompute: false,
        max_memory: None,
        allow_mixed,
        config: Some(config.clone()),
    };
    let sweep = ProbeSweep {
        collecting: true,
        ..ProbeSweep::new(cfg, out, &opts, false)?
    };
    sweep::check_collect(&sweep, &cfg.points())
}

/// True for a file a sweep writes at its top level (tables, theory, figures and, in a
/// column layout, their captions).
fn is_sweep_file(name: &str) -> bool {
    [".csv", ".json", ".png", ".svg", ".pdf", ".caption.txt"]
        .iter()
        .any(|e| name.ends_with(e))
}

/// The files a sweep itself writes at the top of its directory: its tables, the theory's
/// cache and each figure's files. Only leftovers of these are a dead writer's to remove
/// (twenty-eighth hostile round, D3: `notes.png.ntk-tmp-99999.png`, a name no tool writes,
/// was removed as one).
fn writes_file(name: &str) -> bool {
    TABLES.contains(&name) || writes_figure(name)
}

/// The tables and the theory's cache a sweep writes at the top of its directory.
const TABLES: [&str; 3] = ["results.csv", "summary.csv", "theory.json"];

/// The stem of the minimum gradient angle's figure.
const ANGLE_FIGURE: &str = "min_grad_angle_vs_depth";

/// The files of the figures a sweep of any protocol draws: the leftovers a dead writer's
/// clean may remove.
fn writes_figure(name: &str) -> bool {
    writes_figure_of(name, &[Protocol::Whole.name(), Protocol::Blocks.name()])
}

/// The files of the figures a sweep of the protocols named `protocols` draws (what `plot`
/// writes): the angle's and each protocol's kappa. Forty-fourth hostile round, D1: `plot`
/// refused the tables it only reads; forty-fifth, D1: a sweep of the whole protocol refused
/// what stood at the blocks protocol's figure, which it never draws.
fn writes_figure_of(name: &str, protocols: &[&str]) -> bool {
    std::iter::once(ANGLE_FIGURE.to_string())
        .chain(protocols.iter().map(|p| format!("kappa_vs_depth_{p}")))
        .any(|stem| ntk_plot::is_figure_file(name, &stem))
}

/// Says the figures that stand in `out` but that this collect or plot does not draw
/// (`draws`): an earlier collect's, they show points that are gone (eighty-fourth hostile
/// round, D4: a sweep recomputed without the blocks protocol kept `kappa_vs_depth_blocks.*`
/// without a word). Left as they are: nothing shows them to be the tools' and not a user's.
/// `from`: the sweep whose figures a plot draws into `out`.
pub(crate) fn say_stale_figures(out: &Path, from: &Path, draws: &dyn Fn(&str) -> bool) {
    let here = match sweep::reports::same_dir(out, from) {
        true => "here".to_string(),
        false => format!("of {}", from.display()),
    };
    sweep::say_stale_figures_of(out, ("points", from), &|name| {
        stale_figure_why(name, draws, &here)
    });
}

/// Why the figure file `name` is not drawn by a collect or plot that `draws` what it draws;
/// `None` where it is drawn, or is not a sweep's figure.
/// `here`: where the points are, as the words say it (`here`, `of DIR`).
fn stale_figure_why(name: &str, draws: &dyn Fn(&str) -> bool, here: &str) -> Option<String> {
    (writes_figure(name) && !draws(name)).then(|| {
        if ntk_plot::is_figure_file(name, ANGLE_FIGURE) {
            return format!(
                "no point {here} has a gradient angle (measured, or the theory's) to draw now"
            );
        }
        let protocol = [Protocol::Whole, Protocol::Blocks]
            .into_iter()
            .map(|p| p.name())
            .find(|p| ntk_plot::is_figure_file(name, &format!("kappa_vs_depth_{p}")))
            .unwrap_or("its");
        format!("no point {here} is of the {protocol} protocol now")
    })
}

/// The files a collect of points of `protocols` writes at the sweep's top: the tables,
/// `theory.json` only where it computes the theory (`theory`), the figures, the angle's only
/// where an angle was measured or the theory may draw one (`angles`; forty-sixth hostile
/// round, D1).
fn writes_file_of(name: &str, protocols: &[&str], theory: bool, angles: bool) -> bool {
    let figure = writes_figure_of(name, protocols)
        && (angles || !ntk_plot::is_figure_file(name, ANGLE_FIGURE));
    (TABLES.contains(&name) && (name != "theory.json" || theory)) || figure
}

/// The files under a sweep's `runs/` that a sweep or its points write: each point's output
/// set, its failure record and its phase files' state and tiles.
fn writes_point_file(name: &str) -> bool {
    run::OUTPUT_FILES.contains(&name)
        || [ntk_runs::sweep::FAILED_FILE, "phases.json", "tiles.f64"].contains(&name)
}

/// Refuses an `--out` holding entries a sweep does not write (`runs/`, its tables, theory
/// and figures), or ntk-train's runs (whose directory has the same names: a probe sweep
/// there computed every point, then refused the mix; fourteenth hostile round, D8), before
/// any work.
pub fn check_out(out: &Path) -> crate::Result<()> {
    outset::check_owned(out, &|n: &str| n == "runs" || is_sweep_file(n))?;
    collect::refuse_training_runs(out)
}

/// Refuses, before any work (after [`check_out`] and the data's own check, whose refusals
/// say more of what they find), a `runs/` in `out` that holds entries other than `cfg`'s
/// points' places and is no sweep's ([`ntk_runs::sweep::check_runs`]), or a table or figure
/// with no sweep's `runs/` beside it (a user's `results.csv` alone was replaced without a
/// word: seventy-third hostile round, D5; an empty `runs/` beside it is no sweep's:
/// hundred-and-twenty-sixth, D3).
pub fn check_proven(out: &Path, cfg: &SweepConfig) -> crate::Result<()> {
    let planned: Vec<PathBuf> = cfg.points().iter().map(|p| p.dir(out)).collect();
    let runs = ntk_runs::sweep::SweepRuns {
        is_run: &is_point_result,
        planned: &planned,
    };
    ntk_runs::sweep::check_sweep_out(out, &runs, &writes_file)?;
    Ok(())
}

/// Whether `dir` holds a sweep point's result: a protocol's directory of a point
/// (`.../depthNN/seedN/<protocol>`) whose `summary.json` reads as an ntk-probe summary (a
/// user's own `summary.json`, or a single run's output set, is none).
fn is_point_result(dir: &Path) -> bool {
    let named = |p: Option<&Path>, prefix: &str| {
        p.and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(prefix))
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    };
    let seed = dir.parent();
    [Protocol::Whole, Protocol::Blocks]
        .iter()
        .any(|p| dir.file_name().is_some_and(|n| n == p.name()))
        && named(seed, "seed")
        && named(seed.and_then(Path::parent), "depth")
        && matches!(read_summary(&dir.join("summary.json")), Ok(Some(_)))
}

/// The fingerprint of a sweep's config, whichever shard or output directory runs it: the
/// writers of one sweep directory must share it (`ntk_files::lock::SweepClaim`). In the one
/// recorded form of its network ([`crate::run::ONE_FORM`]), as its points are: two spellings
/// of one network are one sweep. The base activation, which the sweep's axis overrides, is
/// the one the parameter is for (sixty-second hostile round, D3: with the examples' base
/// `relu`, NormReLU's default kink given and left out were two sweeps' writers).
pub fn fingerprint(cfg: &SweepConfig) -> String {
    let mut c = cfg.clone();
    c.sweep.out = PathBuf::new();
    // The parameter as each swept family takes it (sixty-third hostile round, N1: judged
    // against the first family alone, LeakyReLU's default given and left out beside NormReLU
    // were one sweep's writers).
    c.model.activation = collect::parameter_activation(cfg);
    c.model.kink = None;
    c.model.activation_param = collect::sweep_parameter(cfg);
    provenance::fingerprint(&provenance::flatten_config(&c))
}

/// Runs this shard's unfinished points; a point that fails is recorded and the rest go on.
pub fn run_sweep(
    cfg: &SweepConfig,
    out: &Path,
    shard: Shard,
    opts: &SweepOptions,
) -> crate::Result<Ran> {
    ntk_files::outset::check_writable(out)?;
    outset::clean_tree(&out.join("runs"), &writes_point_file);
    outset::clean_dir(out, None, &writes_file);
    let mut sweep = ProbeSweep::new(cfg, out, opts, true)?;
    let reporter = sweep.reporter.clone();
    let done = sweep::execute(&mut sweep, &cfg.points(), shard, opts.recompute, &reporter)?;
    kept_points_phases(&sweep, &cfg.points(), shard, true);
    Ok(Ran {
        made: done.made.len(),
        skipped: done.skipped,
        left_to_other_shards: done.left_to_other_shards,
        unfinished_elsewhere: done.unfinished_elsewhere,
        check: done.check().err(),
    })
}

/// What [`run_sweep`] did.
pub struct Ran {
    pub made: usize,
    pub skipped: usize,
    /// [`ntk_runs::sweep::Outcome::left_to_other_shards`].
    pub left_to_other_shards: usize,
    /// [`ntk_runs::sweep::Outcome::unfinished_elsewhere`].
    pub unfinished_elsewhere: usize,
    /// The error the sweep ends with once it has been collected: points that failed (each
    /// recorded in its `failed.json`) or were busy.
    pub check: Option<ntk_runs::Error>,
}

impl Ran {
    /// (points made, points skipped as done).
    pub fn counts(&self) -> (usize, usize) {
        (self.made, self.skipped)
    }
}

/// The failures recorded under `out/runs` (`failed.json`): (point directory, reason).
pub fn failures(out: &Path) -> Vec<(PathBuf, String)> {
    sweep::find_files(&out.join("runs"), sweep::FAILED_FILE)
        .into_iter()
        .filter_map(|f| {
            let dir = f.parent()?.to_path_buf();
            let failure = sweep::Failure::read(&dir)?;
            Some((dir, failure.reason))
        })
        .collect()
}

/// Every finished summary under `out/runs`, sorted.
pub fn read_summaries(out: &Path) -> crate::Result<Vec<Summary>> {
    Ok(read_summaries_at(out)?
        .into_iter()
        .map(|(_, s)| s)
        .collect())
}

/// [`read_summaries`] with each summary's path. Hidden entries (output sets still being
/// written, see [`ntk_files::outset`]) are not read.
pub fn read_summaries_at(out: &Path) -> crate::Result<Vec<(PathBuf, Summary)>> {
    let mut found = Vec::new();
    for path in sweep::find_files(&out.join("runs"), "summary.json") {
        if let Some(s) = read_checked_summary(&path, &out.join("runs"))? {
            found.push((path, s));
        }
    }
    found.sort_by(|(_, a), (_, b)| {
        (a.protocol.name(), a.activation.as_str(), a.depth, a.seed).cmp(&(
            b.protocol.name(),
            b.activation.as_str(),
            b.depth,
            b.seed,
        ))
    });
    Ok(found)
}

/// The summary at `path` (under `root`, the sweep's `runs/`) as [`read_summaries_at`] takes
/// it: held to the files beside it and
/// its numbers to them, its convention in the config's spelling; `None` where it is not a
/// finished summary.
fn read_checked_summary(path: &Path, root: &Path) -> crate::Result<Option<Summary>> {
    let Some(mut s) = read_summary(path)? else {
        return Ok(None);
    };
    // A set inside another set's directory, at any depth below it up to runs/, is refused,
    // as ntk-train's collect refuses a run inside another's (hundred-and-fifty-second
    // hostile round, N5: results.csv counted a depth with a nested copy as two seeds).
    if let Some(why) = named::nested(path, root) {
        return Err(Error::NotItsPoint(why));
    }
    // The point its directory names, before the files beside it are held to it: a summary
    // copied from another point is named, not the intact files (hundred-and-forty-eighth
    // hostile round, D2).
    if let Some(why) = named::misplaced(&s, path) {
        return Err(Error::NotItsPoint(why));
    }
    // The files beside it as its run wrote them (the sweep's state checks the same), before
    // its numbers are held to them: an edited `eigenvalues.npy` is named, not the intact
    // summary (eighty-first hostile round, D4), and a missing one or a FIFO in its place is
    // refused, not merged (N5).
    if let (Some(files), Some(dir)) = (&s.files, path.parent()) {
        let names = <Summary as sweep::Recorded>::SET_FILES;
        if let Err(e) = ntk_runs::manifest::verify(dir, files, names, path) {
            // A file unlike the record of an edited summary: the summary is named, as the
            // plans name it (hundred-and-fiftieth hostile round, second review, D1: the
            // intact eigenvalues.npy was blamed), unless the record itself is the fault.
            if !ntk_runs::provenance::SelfChecksum::sealed(&s)
                && e.fault != ntk_runs::manifest::Fault::Record
            {
                return Err(Error::SummaryEdited {
                    path: path.to_path_buf(),
                    what: "its fields do not match the checksum it was written with".into(),
                });
            }
            return Err(Error::SetNotAsWritten(e));
        }
    }
    check_numbers(path, &s)?;
    // Summaries written before conventions were spelled as the config spells them hold
    // `unitvariance`: read as `unit_variance`, so that they group with new ones.
    if let Some(c) = crate::config::parse_convention(&s.convention) {
        s.convention = convention_name(c);
    }
    Ok(Some(s))
}

/// Refuses, as the collect at the sweep's end would after the sweep's work, a summary under
/// `out/runs` that no point of `points` makes (a user's directory, a point of another
/// config, another protocol's or a file in a subdirectory of a point's) and that
/// [`read_checked_summary`] refuses: the run does not touch it, so the dry run can say its
/// failure first (hundred-and-sixth hostile round, N3: the dry run said rc 0 where the run
/// computed nothing and failed there), and the run before its work (hundred-and-fiftieth,
/// D3: it computed a point, then refused a renamed one at its collect); and one that records
/// a point of `points` under another directory's name ([`named::elsewhere`]). A point's own
/// summary under each of the sweep's protocols is the state check's, which the run may make
/// again.
fn check_others_summaries(sweep: &ProbeSweep, points: &[Point]) -> crate::Result<()> {
    let (out, protocols) = (sweep.out, &sweep.cfg.sweep.protocols);
    // A point's own summaries: one per protocol of the config, in the protocol's directory
    // (hundred-and-eighth hostile round, D5: a foreign one inside a point's directory, under
    // `blocks/` of a whole-only sweep or `whole/sub/`, was passed over).
    let own: std::collections::HashSet<PathBuf> = points
        .iter()
        .flat_map(|p| {
            let dir = p.dir(out);
            protocols
                .iter()
                .map(move |proto| dir.join(proto.name()).join("summary.json"))
        })
        .collect();
    for path in sweep::find_files(&out.join("runs"), "summary.json") {
        if !own.contains(&path)
            && let Some(s) = read_checked_summary(&path, &out.join("runs"))?
            && let Some(why) = named::elsewhere(sweep, points, &path, &s)
        {
            return Err(Error::NotItsPoint(why));
        }
    }
    Ok(())
}

/// Holds a point's summary to the files beside it that its record of the set's files
/// vouches for (checked by the sweep's state, `ntk_runs::manifest`). Whole set: its
/// `lambda_min` and `lambda_max` are the least and greatest of `eigenvalues.npy`, its
/// `kappa` their ratio, and with every eigenvalue there (`probe.eigen = "full"`) its rank
/// and singular verdict are theirs (`spectrum::classify`: above `n eps lambda_max`). Blocks:
/// its means, rank and verdict are those of `blocks.csv`'s rows. Seventy-third hostile
/// round, D6: a summary's `kappa` x10 reached `results.csv` while its `eigenvalues.npy` gave
/// the run's; seventy-fourth, D4: a rank, a singular verdict and a blocks point's `kappa`
/// likewise. A summary that records no files (written before the record, 2026-12-01) is not
/// checked, nor the minimum gradient angle (no file beside a sweep point holds it).
pub(crate) fn check_numbers(path: &Path, s: &Summary) -> crate::Result<()> {
    if s.files.is_none() {
        return Ok(());
    }
    let what = interval_disagrees((s.kappa, s.kappa_low, s.kappa_high), s.checksum.is_some())
        .or_else(|| match s.protocol {
            Protocol::Whole => whole_disagrees(path, s),
            Protocol::Blocks => blocks_disagree(path, s),
        })
        .or_else(|| {
            // A recorded fingerprint that does not match its own config is left to the merge
            // check, which names it.
            ntk_runs::provenance::SelfChecksum::edited(s, s.provenance.as_ref())
                .then(|| "its fields do not match the checksum it was written with".into())
        });
    match what {
        Some(what) => Err(Error::SummaryEdited {
            path: path.to_path_buf(),
            what,
        }),
        None => Ok(()),
    }
}

/// Where a summary's interval of κ ([`Summary::kappa_low`], [`Summary::kappa_high`]) is not
/// as the run writes it: a high without a low, a low not positive and finite, a κ outside
/// it, a singular kernel's bounded; or an interval in a summary without a checksum, which
/// every summary written since intervals were (2026-12-04) has (ninetieth hostile round,
/// D1: an edited interval, its checksum removed, reached both tables and the figure).
/// An ONNX summary's interval is held alike (ninetieth hostile round, N3).
pub(crate) fn interval_disagrees(
    (kappa, low, high): (Option<f64>, Option<f64>, Option<f64>),
    sealed: bool,
) -> Option<String> {
    let (low, high) = match (low, high) {
        (None, None) => return None,
        (None, Some(h)) => return Some(format!("kappa_high {h} without a kappa_low")),
        (Some(l), h) => (l, h),
    };
    if !sealed {
        return Some(format!(
            "kappa_low {low} in a summary without a checksum (every summary that records an \
             interval is written with one)"
        ));
    }
    let holds = crate::blocks::interval_holds(low, kappa, high.unwrap_or(f64::INFINITY));
    (!(high.is_none_or(f64::is_finite) && holds)).then(|| {
        format!(
            "kappa_low {low}, kappa {}, kappa_high {}: the interval must hold kappa",
            kappa.map_or("inf".to_string(), |k| k.to_string()),
            high.map_or("(unbounded)".to_string(), |h| h.to_string())
        )
    })
}

/// Whether two numbers written once to two files differ beyond the rounding of a mean or a
/// ratio formed again (a few ulps); NaN differs from everything.
fn apart(a: f64, b: f64) -> bool {
    let d = (a - b).abs();
    d.is_nan() || d > 1e-13 * a.abs().max(b.abs())
}

/// The eigenvalues in the `eigenvalues.npy` beside `path`, with their least and greatest;
/// `None` where it is missing or unreadable (the set's record of its files names that).
pub(crate) fn recorded_eigenvalues(path: &Path) -> Option<(Vec<f64>, f64, f64)> {
    let (eigenvalues, _) = ntk_files::npy::read(&path.with_file_name("eigenvalues.npy")).ok()?;
    let least = eigenvalues.iter().copied().fold(f64::INFINITY, f64::min);
    let greatest = eigenvalues
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    Some((eigenvalues, least, greatest))
}

/// Where a summary's `lambda_min` and `lambda_max` are not the `least` and `greatest` of
/// its `eigenvalues.npy`, or its `kappa` (where it records one) not their ratio.
pub(crate) fn extremes_disagree(
    (lambda_min, lambda_max, kappa): (f64, f64, Option<f64>),
    least: f64,
    greatest: f64,
) -> Option<String> {
    if apart(lambda_min, least) {
        return Some(format!(
            "lambda_min {lambda_min} where eigenvalues.npy's least is {least}"
        ));
    }
    if apart(lambda_max, greatest) {
        return Some(format!(
            "lambda_max {lambda_max} where eigenvalues.npy's greatest is {greatest}"
        ));
    }
    match kappa {
        Some(k) if apart(k, greatest / least) => Some(format!(
            "kappa {k} where eigenvalues.npy gives {}",
            greatest / least
        )),
        _ => None,
    }
}

/// Where a kernel's recorded `(rank, singular)` is not what its full spectrum `eigenvalues`
/// (with their `least` and `greatest`, [`recorded_eigenvalues`]) gives at the tolerance it
/// was decided by: its measured error where one was measured (eighty-fifth hostile round,
/// D4), else the worst-case bound of its `precision`.
pub(crate) fn rank_disagrees(
    (eigenvalues, least, greatest): (&[f64], f64, f64),
    (precision, measured_error): (Precision, Option<f64>),
    recorded: (usize, bool),
) -> Option<String> {
    let n = eigenvalues.len() as f64;
    let tolerance = match measured_error {
        Some(error) => error + n * f64::EPSILON * greatest.abs(),
        None => n * precision.epsilon() * greatest.abs(),
    };
    let rank = eigenvalues.iter().filter(|&&v| v > tolerance).count();
    let singular = least <= tolerance;
    (recorded != (rank, singular)).then(|| {
        format!(
            "rank {} and singular {} where eigenvalues.npy gives rank {rank} and singular \
             {singular}",
            recorded.0, recorded.1
        )
    })
}

/// Where a whole-set summary disagrees with its `eigenvalues.npy` ([`check_numbers`]).
fn whole_disagrees(path: &Path, s: &Summary) -> Option<String> {
    // Missing or unreadable: the sweep's state names it against the record.
    let (eigenvalues, least, greatest) = recorded_eigenvalues(path)?;
    if let Some(what) = extremes_disagree((s.lambda_min, s.lambda_max, None), least, greatest) {
        return Some(what);
    }
    if s.eigen == Eigen::Full {
        let decided = (s.precision, s.measured_error);
        let spectrum = (eigenvalues.as_slice(), least, greatest);
        if let Some(what) = rank_disagrees(spectrum, decided, (s.rank, s.singular)) {
            return Some(what);
        }
    }
    match s.kappa {
        Some(_) if s.singular => Some("a kappa for a singular kernel".to_string()),
        None if !s.singular => Some("no kappa for a kernel that is not singular".to_string()),
        kappa => extremes_disagree((s.lambda_min, s.lambda_max, kappa), least, greatest),
    }
}

/// Where a blocks summary disagrees with its `blocks.csv` ([`check_numbers`]): the means of
/// the blocks' `lambda_min`, `lambda_max` and (none singular) `kappa`, the least rank, and
/// singular when any block is.
fn blocks_disagree(path: &Path, s: &Summary) -> Option<String> {
    let dir = path.parent()?;
    let rows = crate::blocks::read(dir).ok().filter(|r| !r.is_empty())?;
    let c = rows.len() as f64;
    let mean = |f: &dyn Fn(&crate::blocks::BlockRow) -> f64| rows.iter().map(f).sum::<f64>() / c;
    let (lambda_min, lambda_max) = (mean(&|r| r.lambda_min), mean(&|r| r.lambda_max));
    let singular = rows.iter().any(|r| r.singular);
    let rank = rows.iter().map(|r| r.rank).min().unwrap_or(0);
    let kappa = if singular {
        None
    } else {
        Some(mean(&|r| r.kappa.unwrap_or(f64::NAN)))
    };
    let differs = apart(s.lambda_min, lambda_min)
        || apart(s.lambda_max, lambda_max)
        || (s.rank, s.singular) != (rank, singular)
        || match (s.kappa, kappa) {
            (Some(a), Some(b)) => apart(a, b),
            (a, b) => a.is_some() != b.is_some(),
        };
    differs.then(|| {
        let show = |k: Option<f64>| k.map_or("none".to_string(), |k| k.to_string());
        format!(
            "lambda_min {}, lambda_max {}, kappa {}, rank {}, singular {} where blocks.csv's \
             {} blocks give {lambda_min}, {lambda_max}, {}, {rank}, {singular}",
            s.lambda_min,
            s.lambda_max,
            show(s.kappa),
            s.rank,
            s.singular,
            rows.len(),
            show(kappa)
        )
    })
}

mod collect;
mod figures;
mod grid;
mod named;
mod places;
mod redraw;

pub use collect::{
    GroupRow, TheoryCache, collect, collect_as, group, theory_key, write_results_csv,
};
pub use figures::{SeedValue, figures};
use grid::convention_name;
pub use grid::{AXES, Point, Setting, SweepConfig, SweepSection};
/// The theory's values of one (setting, activation, depth), as `theory.json` holds them.
pub use ntk_kernel::theory::TheoryValue;
pub use redraw::redraw;

#[cfg(test)]
mod tests {
    use super::{SweepConfig, fingerprint};

    /// One network in two spellings is one sweep to its writers' claim, as its points are one
    /// config (the one recorded form; sixty-first hostile round, D4's class).
    #[test]
    fn two_spellings_of_one_network_are_one_sweep() {
        let base = "[data]\ndataset = \"synthetic\"\nn = 10\n[model]\nwidth = 8\ndepth = 1\n\
                    activation = \"norm_relu\"\n";
        let axes = "[probe]\n[sweep]\nout = \"x\"\nprotocols = [\"whole\"]\ndepths = [1]\n\
                    activations = [\"norm_relu\"]\nseeds = [1]\n";
        let of = |param: &str| {
            fingerprint(&SweepConfig::parse(&format!("{base}{param}\n{axes}")).unwrap())
        };
        assert_eq!(of("kink = -1.5"), of("activation_param = -1.5"));
        // A family's default given or left out, whatever the base activation (the examples'
        // is relu, overridden by the axis).
        assert_eq!(of("activation_param = -1.5907658564"), of(""));
        let relu_base = |param: &str| {
            let base = base.replace("activation = \"norm_relu\"", "activation = \"relu\"");
            fingerprint(&SweepConfig::parse(&format!("{base}{param}\n{axes}")).unwrap())
        };
        assert_eq!(relu_base("activation_param = -1.5907658564"), relu_base(""));
        assert_eq!(relu_base("kink = -1.5907658564"), of(""));
        // One parameter for two families: LeakyReLU's default slope is not NormReLU's
        // default kink (sixty-third hostile round, N1).
        let both = |param: &str| {
            let axes = axes.replace("[\"norm_relu\"]", "[\"leaky_relu\", \"norm_relu\"]");
            fingerprint(&SweepConfig::parse(&format!("{base}{param}\n{axes}")).unwrap())
        };
        assert_ne!(both("activation_param = 0.01"), both(""));
        assert_ne!(of("kink = -1.5"), of("kink = -1.0"));
    }
}
