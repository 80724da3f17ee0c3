//! A sweep's runs read back from their directories (`config.toml`, `metrics.csv`,
//! `ntk.csv`, `representations.csv`, `summary.json`), checked against what each recorded.

use super::*;

/// A run directory read back.
pub struct RunRecord {
    pub id: String,
    /// The directory it was read from (a run nested deeper in `runs/` than its id says:
    /// hundred-and-forty-eighth hostile round, D1, a copy was named as `runs/<id>`).
    pub dir: PathBuf,
    pub depth: usize,
    pub activation: String,
    pub normalization: String,
    pub lr: f64,
    pub seed: u64,
    pub metrics: Vec<EpochMetrics>,
    pub ntk: Vec<NtkRow>,
    /// `representations.csv` when the run tracked them, else empty.
    pub representations: Vec<RepresentationRow>,
    /// The training loss the run minimized (`train.loss`).
    pub loss: ntk_engine::loss::Loss,
    /// `predicted.csv` and `predicted_spectrum.csv` when the run predicted itself
    /// (`[prediction]`), else empty.
    pub predicted: Vec<crate::predict::PredictedRow>,
    pub predicted_spectrum: Vec<crate::predict::SpectrumRow>,
    pub summary: Option<TrainSummary>,
    /// The recorded provenance: the summary's, else (a run still going) its checkpoint's.
    pub provenance: Option<Provenance>,
    /// The run's `config.toml`, flattened as a provenance records it (`data.dataset`): what
    /// a run written before provenance existed still says of itself.
    pub config: provenance::FlatConfig,
    /// The live writer of a run being trained now (its directory's lock holder).
    pub running: Option<String>,
    /// Why the run's last attempt failed (`failed.json`), if it did.
    pub failure: Option<String>,
}

impl RunRecord {
    pub(super) fn diverged(&self) -> bool {
        self.summary.as_ref().is_some_and(|s| s.diverged)
    }
    fn finished(&self) -> bool {
        self.summary.as_ref().is_some_and(|s| s.finished())
    }
    pub(super) fn key(&self) -> (usize, String, String) {
        (
            self.depth,
            self.activation.clone(),
            self.normalization.clone(),
        )
    }
}

impl crate::convergence::PredictedRun for RunRecord {
    fn id(&self) -> &str {
        &self.id
    }
    fn predicted(&self) -> &[crate::predict::PredictedRow] {
        &self.predicted
    }
    fn predicted_spectrum(&self) -> &[crate::predict::SpectrumRow] {
        &self.predicted_spectrum
    }
}

impl seeds::SeedRun for RunRecord {
    fn configuration(&self) -> (usize, &str, &str) {
        (self.depth, &self.activation, &self.normalization)
    }
    fn lr(&self) -> f64 {
        self.lr
    }
    fn seed(&self) -> u64 {
        self.seed
    }
    fn finished(&self) -> bool {
        RunRecord::finished(self)
    }
    fn diverged(&self) -> bool {
        RunRecord::diverged(self)
    }
    fn epochs(&self) -> &[EpochMetrics] {
        &self.metrics
    }
}

/// Reads one run directory (it must hold `config.toml`).
pub fn read_run(dir: &Path, id: String) -> crate::Result<RunRecord> {
    // Before config.toml is read: a linked one is said as a link (hundred-and-forty-sixth
    // hostile round, N3: "not a regular file").
    check_no_links(dir)?;
    // A run inside another run's directory, at any depth below it (its checkpoints/ too),
    // is refused, as the plans refuse it ([`crate::run_dir::check_run_dir`]; hundred-and-
    // fifty-first hostile round, N5; the hundred-and-fifty-second, D5).
    if let Some(parent) = dir
        .ancestors()
        .skip(1)
        .take_while(|a| a.file_name().is_some_and(|n| n != "runs"))
        .find(|a| {
            ["config.toml", "summary.json"]
                .iter()
                .any(|n| std::fs::symlink_metadata(a.join(n)).is_ok())
        })
    {
        return Err(crate::Error::NotItsRun(format!(
            "{}: a run's directory inside the run directory {}: each run has a directory of \
             its own, so neither is read as it is; move it out (a sweep's run to runs/, under \
             the name its summary.json records)",
            dir.display(),
            parent.display()
        )));
    }
    let cfg_path = dir.join("config.toml");
    let cfg: TrainConfig = ntk_runs::config_file::load_toml(&cfg_path)?;
    let (depth, activation, normalization, seed) = network_labels(&cfg)?;
    let summary = read_summary(dir)?;
    // The summary as the run wrote it, before anything is held to it (seventy-fifth hostile
    // round, D3: a `status` edited to `diverged` was reported; the hundred-and-forty-fourth,
    // D1: a summary whose recorded config or checksums were edited was held against
    // config.toml and the tables, which were blamed).
    if let Some(why) = summary
        .as_ref()
        .and_then(|s| crate::summary::edited(s, &dir.join("summary.json")))
    {
        return Err(crate::Error::NotAsWritten(why));
    }
    // A sweep's run directory is named by its run; names not of that form (a merged
    // experiment's own) are not held to it.
    if crate::sweep::in_run_id_form(&id) {
        check_named(
            dir,
            &id,
            cfg.spec()
                .ok()
                .map(|spec| crate::sweep::run_id(&spec, cfg.optim.lr, seed)),
            summary.as_ref(),
        )?;
    }
    let provenance = match &summary {
        Some(s) => s.provenance.clone(),
        None => checkpoint_provenance(dir),
    };
    let config = recorded_form(&cfg);
    if let Some(p) = &provenance
        && let Err(e) = held_to_record(&cfg_path, &config, p)
    {
        // Where the tables' checksums do not agree with summary.json either, which file is
        // not the run's cannot be told: both are said (hundred-and-forty-second hostile
        // round, second review, D1: a summary copied from another run blamed an untouched
        // config.toml; the hundred-and-forty-third's, D1: the first fix called an untouched
        // summary "another run's" where config.toml and a table were edited; the
        // hundred-and-forty-fifth, D1: a summary whose run has this directory's name is not
        // the directory's own for that, as another sweep's run of the same name shows).
        let path = dir.join("summary.json");
        if let Some(s) = &summary
            && let Err(tables) = crate::summary::check_recorded(dir, s, &path)
        {
            return Err(crate::Error::NotAsWritten(format!(
                "{}: does not agree with its run directory: the config it records is not \
                 config.toml's, and {tables}. Either summary.json is another run's (copied or \
                 linked), or config.toml was edited and the table changed after the run",
                path.display()
            )));
        }
        return Err(e);
    }
    let metrics: Vec<EpochMetrics> = match &summary {
        Some(s) => check_tables(dir, s)?,
        None => read_csv(&dir.join("metrics.csv"))?,
    };
    // A table the run's config does not write is not the run's (seventy-sixth hostile
    // round, D1: read into `sweep.csv` and `convergence.csv`).
    crate::run_dir::check_untracked(dir, &cfg)?;
    if summary.is_none() {
        check_interrupted(dir, &metrics)?;
    }
    Ok(RunRecord {
        id,
        dir: dir.to_path_buf(),
        depth,
        activation,
        normalization,
        lr: cfg.optim.lr,
        seed,
        metrics,
        ntk: read_csv(&dir.join("ntk.csv"))?,
        representations: match dir.join("representations.csv") {
            p if p.exists() => read_csv(&p)?,
            _ => Vec::new(),
        },
        loss: cfg.train.loss,
        predicted: match dir.join("predicted.csv") {
            p if p.exists() => read_csv(&p)?,
            _ => Vec::new(),
        },
        predicted_spectrum: match dir.join("predicted_spectrum.csv") {
            p if p.exists() => read_csv(&p)?,
            _ => Vec::new(),
        },
        summary,
        provenance,
        config,
        running: ntk_files::lock::DirLock::holder(dir),
        failure: ntk_runs::sweep::Failure::read(dir).map(|f| f.reason),
    })
}

/// A run a sweep's config plans (`collect --config`, a sweep's closing collect): where it
/// has no result in the directory, a rate choice or a row that would read it waits for it,
/// as for a run that has not ended (hundred-and-thirty-ninth hostile round, D2: best.csv
/// chose the other rate of two, called it `single_rate`, where the selection seed's run at
/// one was missing; hundred-and-fortieth, second review, N1: a shard's tables chose on
/// another seed than the sweep's).
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedRun {
    /// Its directory's name under `runs/` (empty for a single run).
    pub id: String,
    pub depth: usize,
    pub activation: String,
    pub normalization: String,
    pub lr: f64,
    pub seed: u64,
}

impl PlannedRun {
    /// The run `id` of `cfg`, labelled as its record would be ([`network_labels`]).
    pub fn of(id: &str, cfg: &TrainConfig) -> crate::Result<Self> {
        let (depth, activation, normalization, seed) = network_labels(cfg)?;
        Ok(Self {
            id: id.to_string(),
            depth,
            activation,
            normalization,
            lr: cfg.optim.lr,
            seed,
        })
    }

    pub(super) fn key(&self) -> (usize, String, String) {
        (
            self.depth,
            self.activation.clone(),
            self.normalization.clone(),
        )
    }
}

/// The run's tables in `dir` held to its summary `s`, in one order wherever a run is read
/// (`collect`, `plot`, the plans of `--dry-run`, `--resume` and `collect --config`): the
/// tables it records ([`crate::summary::RECORDED_FILES`]) as written, then `metrics.csv`:
/// there, its epochs, its values and its record (hundred-and-forty-ninth hostile round,
/// D1: collect named `metrics.csv` and the plans `ntk.csv` for one summary copied in; a
/// missing `metrics.csv` was "0 epoch row(s)" in the plans, N6). The run's epochs.
pub(crate) fn check_tables(dir: &Path, s: &TrainSummary) -> crate::Result<Vec<EpochMetrics>> {
    let summary = dir.join("summary.json");
    crate::summary::check_recorded_tables(dir, s, &summary).map_err(crate::Error::NotAsWritten)?;
    let metrics_path = dir.join(crate::summary::METRICS_FILE);
    let metrics: Vec<EpochMetrics> = read_csv(&metrics_path)?;
    if metrics.len() != s.epochs_completed {
        if std::fs::symlink_metadata(&metrics_path).is_err() {
            return Err(crate::Error::MetricsMissing {
                metrics: metrics_path,
                summary,
                epochs: s.epochs_completed,
            });
        }
        return Err(crate::Error::MetricsDisagree {
            metrics: metrics_path,
            rows: metrics.len(),
            summary,
            epochs: s.epochs_completed,
        });
    }
    if let Some(what) = metrics_disagree(&metrics, s) {
        return Err(metrics_changed(metrics_path, summary, s, what));
    }
    crate::summary::check_metrics_file(dir, s, &summary).map_err(crate::Error::NotAsWritten)?;
    Ok(metrics)
}

/// A run's `metrics.csv` whose values (`what`) disagree with its summary `s` (at `summary`):
/// where the summary holds its own checksum (checked before, by every reader), it was not
/// edited: the table changed, or the summary is another run's of the same config, copied in
/// with its own checksum (hundred-and-forty-fourth hostile round, second review, N2; the
/// hundred-and-forty-ninth, D1: "the table was changed" alone was said for a copied
/// summary); else either may have been edited.
pub(crate) fn metrics_changed(
    metrics: PathBuf,
    summary: PathBuf,
    s: &TrainSummary,
    what: String,
) -> crate::Error {
    if s.checksum.is_some() {
        return crate::Error::NotAsWritten(format!(
            "{}: {what}, where {} holds its own checksum: either the table was changed after \
             the run (edited, or copied from another run), or {} is another run's, copied in",
            metrics.display(),
            summary.display(),
            summary.display()
        ));
    }
    crate::Error::MetricsEdited {
        metrics,
        summary,
        what,
    }
}

/// Refuses a run whose files include a symbolic link ([`crate::run_dir::linked_file`]).
fn check_no_links(dir: &Path) -> crate::Result<()> {
    match crate::run_dir::linked_file(dir) {
        Some(why) => Err(crate::Error::NotAsWritten(why)),
        None => Ok(()),
    }
}

/// Holds a sweep's run directory `dir`, named `id`, to the run its `config.toml` describes
/// (`from_config`, its [`crate::sweep::run_id`]; `None` where it cannot be formed without
/// reading more, as an ONNX network's file) and the run its summary records: a directory
/// renamed, or a file of another run's copied in, is not the run its name says
/// (eighty-eighth hostile round, N3). A summary that records the run of this directory's
/// name passes: whether it is this directory's own is left to the config and the tables
/// (another sweep's run of the same name records the same name), and a `config.toml` that
/// says another run beside it is named by key ([`held_to_record`]; hundred-and-forty-third
/// hostile round, second review, N1: an edited rate was called a renamed or copied file).
fn check_named(
    dir: &Path,
    id: &str,
    from_config: Option<String>,
    summary: Option<&crate::summary::TrainSummary>,
) -> crate::Result<()> {
    const NAMING: &str = "a sweep names each run directory by its depth, activation, \
                          normalization, rate and seed";
    let recorded = summary.map(crate::sweep::recorded_run_id);
    let refused = |why: String| Err(crate::Error::NotItsRun(why));
    match (from_config, recorded) {
        (_, Some(r)) if r == id => Ok(()),
        (Some(c), Some(r)) if c == r => refused(format!(
            "{}: its config.toml and summary.json are the run {r}'s ({NAMING}): the directory \
             was renamed, or both files copied from that run, so its results are not \
             reported; {}",
            dir.display(),
            move_back(dir, &r)
        )),
        (Some(c), Some(r)) if c == id => refused(format!(
            "{}: records the run {r}, where config.toml records this directory's ({NAMING}): \
             copied or linked from another run, so its results are not reported; put the \
             run's own back, or {}",
            dir.join("summary.json").display(),
            crate::sweep::REDO
        )),
        // An ONNX config's run is not formed here (its file unread): the summary and the
        // name alone cannot tell a renamed directory from a copied summary (hundred-and-
        // forty-fifth hostile round, second review, D1: a renamed ONNX run was called a
        // copied summary, to be trained again).
        (_, Some(r)) => refused(format!(
            "{}: records the run {r}, not this directory's ({NAMING}): the directory was \
             renamed, or summary.json copied or linked from that run, so its results are not \
             reported; {}, or put the run's own summary.json back",
            dir.join("summary.json").display(),
            move_back(dir, &r)
        )),
        (Some(c), None) if c != id => refused(format!(
            "{}: its config.toml is the run {c}'s ({NAMING}): the directory was renamed, or \
             the file copied or edited, so its results are not reported; {}",
            dir.display(),
            move_back(dir, &c)
        )),
        _ => Ok(()),
    }
}

/// The remedy for the run directory `dir` renamed from `id`: move it back to its name, and
/// where another directory holds that name now, move that one aside first (the hundred-and-
/// forty-eighth hostile round, N6: "move it back", followed with `mv`, nested the directory
/// inside the intact run of that name).
/// Where that directory holds the same summary.json, this one is a copy of it, not a
/// renamed run (the hundred-and-forty-ninth hostile round, N2: a run directory copied whole
/// over another's was to be moved back onto the intact original).
fn move_back(dir: &Path, id: &str) -> String {
    let to = dir.with_file_name(id);
    if ntk_runs::manifest::same_summary(dir, &to) {
        // A copy only where the tables beside the summary are the ones it records: else the
        // summary (and config.toml) were copied in over this run's own tables (hundred-and-
        // fifty-second hostile round, D2: "remove this copy" of a run whose tables were
        // its own).
        let intact = read_summary(dir).ok().flatten().is_some_and(|s| {
            crate::summary::check_recorded(dir, &s, &dir.join("summary.json")).is_ok()
        });
        return if intact {
            format!(
                "it is a copy of {} (the same summary.json): remove this copy, or {}",
                to.display(),
                crate::sweep::REDO
            )
        } else {
            format!(
                "its files were copied from {} over this run's own tables (they are not the \
                 ones its summary.json records): put this run's own summary.json and \
                 config.toml back, or {}",
                to.display(),
                crate::sweep::REDO
            )
        };
    }
    if std::fs::symlink_metadata(&to).is_ok() {
        format!(
            "move it back to {}, which another directory holds now: move that one out of \
             runs/ first (a plain `mv` would put this one inside it, and a directory left \
             under runs/ is read as a run)",
            to.display()
        )
    } else {
        format!("move it back to {}", to.display())
    }
}

/// Why the sweep run directory `dir` is not the run its summary `s` records, as `collect`
/// says it ([`check_named`], its `config.toml` read to tell a renamed directory from a
/// summary copied in), for the plans (hundred-and-forty-ninth hostile round, N1: they said
/// "renamed" where config.toml showed the summary alone was copied). `None` where it is, or
/// where the directory's name is not of a run's form.
pub(crate) fn misnamed(dir: &Path, s: &crate::summary::TrainSummary) -> Option<String> {
    let id = dir.file_name()?.to_str()?;
    if !crate::sweep::in_run_id_form(id) {
        return None;
    }
    let from_config = ntk_runs::config_file::load_toml::<TrainConfig>(&dir.join("config.toml"))
        .ok()
        .and_then(|cfg| {
            let (_, _, _, seed) = network_labels(&cfg).ok()?;
            Some(crate::sweep::run_id(&cfg.spec().ok()?, cfg.optim.lr, seed))
        });
    check_named(dir, id, from_config, Some(s))
        .err()
        .map(|e| e.to_string())
}

/// A run's network as its tables group it: depth, activation, normalization and the seed
/// that makes its runs independent, from its recorded config: the initialization's seed,
/// or for an ONNX network (depth 0, `onnx`, `none`, as `ntk_model::NetSpec` says of it,
/// its file, which may have moved since the run, not read back) `train.seed`, the data
/// order, which its sweep's seed axis sets (its weights are the file's, its model seed
/// always 0): with 0 for every seed, a sweep over lrs and seeds had one seed in the rate
/// selection, `selection_seed_only` on the rates every seed trained (sixth hostile round).
fn network_labels(cfg: &TrainConfig) -> crate::Result<(usize, String, String, u64)> {
    if cfg.onnx.is_some() {
        return Ok((
            0,
            ntk_model::spec::ONNX.to_string(),
            "none".to_string(),
            cfg.train.seed,
        ));
    }
    let net = cfg.spec()?.labels();
    Ok((net.depth, net.activation, net.normalization, net.seed))
}

/// A run's config as its run records it, in the one form of its network
/// ([`ntk_model::spec::canonical_recorded`]): a spelling of the same value is no edit.
fn recorded_form(cfg: &TrainConfig) -> provenance::FlatConfig {
    let mut config = provenance::flatten_config(&crate::train::recorded_config(cfg));
    ntk_model::spec::canonical_recorded(&mut config);
    config
}

/// Refuses the run's `config.toml` at `path` (in [`recorded_form`]: `config`) where it says
/// other than the config its run recorded (`recorded`, in the same form).
fn held_to_record(
    path: &Path,
    config: &provenance::FlatConfig,
    recorded: &Provenance,
) -> crate::Result<()> {
    let rule = crate::run::ONE_FORM;
    check_config_file(path, config, &provenance::in_canonical_form(recorded, rule))
}

/// Why the `config.toml` in the run directory `dir` is not the config its run recorded
/// (`recorded`), as [`read_run`] refuses it, for the plan to hold the run stale so that
/// `--recompute` trains it again (eighty-first hostile round, D2: every plan said `done`
/// and the collect that ends it refused the run, `--recompute` included), or where it is
/// missing; `None` where it is, or where it cannot be read (`collect` names that).
pub(crate) fn config_edited(dir: &Path, recorded: &Provenance) -> Option<String> {
    let path = dir.join("config.toml");
    // A finished run without its config.toml is not collected: the plan holds it stale,
    // not done (hundred-and-forty-sixth hostile round, D2: every plan said "already
    // finished" and every collect "not collected", with no way out).
    if let Some(why) = crate::run_dir::missing_config(dir) {
        return Some(why);
    }
    let cfg: TrainConfig = ntk_runs::config_file::load_toml(&path).ok()?;
    held_to_record(&path, &recorded_form(&cfg), recorded)
        .err()
        .map(|e| e.to_string())
}

/// Refuses a `config.toml` that says other than the fingerprinted config its run recorded
/// (edited after the run): the tables would report the edit. Every key both hold is
/// compared, except those the run resolves from its data and command line.
pub(super) fn check_config_file(
    path: &Path,
    now: &provenance::FlatConfig,
    recorded: &Provenance,
) -> crate::Result<()> {
    let edited: Vec<String> = now
        .iter()
        .filter(|(k, _)| k.as_str() != "model.input_dim")
        .filter_map(|(k, v)| {
            let was = recorded.config.get(k)?;
            (was != v).then(|| format!("{k} = {v} there, {was} recorded"))
        })
        .collect();
    if edited.is_empty() {
        return Ok(());
    }
    Err(crate::Error::Edited {
        path: path.to_path_buf(),
        edits: edited,
    })
}

/// Holds an interrupted run (no summary, no live writer) to its checkpoint, as a resume
/// would: the checkpoint verified ([`crate::checkpoint::find`]: every file's SHA-256, the
/// run's prediction as it was written), and the run's `metrics.csv`, `representations.csv`
/// and `ntk.csv` the checkpoint's copies up to its epoch (rows after it are the epochs since). Seventy-fourth
/// hostile round, D3: an interrupted run's edited `metrics.csv` and `predicted.csv` reached
/// `sweep.csv` and `convergence.csv` without a word.
fn check_interrupted(dir: &Path, metrics: &[EpochMetrics]) -> crate::Result<()> {
    if ntk_files::lock::DirLock::holder(dir).is_some() {
        return Ok(());
    }
    match crate::checkpoint::find(dir)? {
        Some(loaded) => check_kept(dir, metrics, &loaded),
        None => Ok(()),
    }
}

/// The run's tables in `dir` (its `metrics` read) held to the verified checkpoint `loaded`:
/// each begins with the checkpoint's copy of it.
fn check_kept(
    dir: &Path,
    metrics: &[EpochMetrics],
    loaded: &crate::checkpoint::Loaded,
) -> crate::Result<()> {
    prefix_kept(
        dir,
        &loaded.dir,
        "metrics.csv",
        "epoch row(s)",
        metrics,
        &loaded.rows,
    )?;
    let reps: Vec<crate::metrics::RepresentationRow> = match dir.join("representations.csv") {
        p if p.exists() => read_csv(&p)?,
        _ => Vec::new(),
    };
    let kept = &loaded.tracked.representations;
    prefix_kept(
        dir,
        &loaded.dir,
        "representations.csv",
        "row(s)",
        &reps,
        kept,
    )?;
    let ntk: Vec<crate::metrics::NtkRow> = read_csv(&dir.join("ntk.csv"))?;
    // A run that tracks the NTK checkpoints its epoch-0 row at least: rows beside a
    // checkpoint that holds none are not the run's (seventy-fifth hostile round, D2).
    let kept = &loaded.tracked.ntk;
    if kept.is_empty() && !ntk.is_empty() {
        return Err(edited(dir, &loaded.dir, "ntk.csv", "0 row(s)"));
    }
    prefix_kept(dir, &loaded.dir, "ntk.csv", "row(s)", &ntk, kept)
}

/// [`check_interrupted`] of the interrupted run in `dir` against its checkpoint `loaded`,
/// verified by the caller, its `metrics.csv` read: what a resume's plan holds the run's
/// tables to, as collect does (hundred-and-fifty-fourth hostile round, N4: `--resume`
/// replaced a user's edited metrics.csv or replaced ntk.csv without a word, where collect
/// refused them).
pub(crate) fn check_as_kept(dir: &Path, loaded: &crate::checkpoint::Loaded) -> crate::Result<()> {
    let metrics: Vec<EpochMetrics> = read_csv(&dir.join("metrics.csv"))?;
    check_kept(dir, &metrics, loaded)
}

/// Refuses the run's table `name` in `dir` unless its first rows are the checkpoint's copy
/// of them (`kept`, from `checkpoint/name`); rows after those are the epochs since.
fn prefix_kept<T: PartialEq>(
    dir: &Path,
    checkpoint: &Path,
    name: &str,
    rows: &str,
    table: &[T],
    kept: &[T],
) -> crate::Result<()> {
    if table.get(..kept.len()) == Some(kept) {
        return Ok(());
    }
    // A table that is gone is said as gone, with the copy that restores it (hundred-and-
    // fifty-fifth hostile round, N3: "edited", and only --recompute offered).
    let path = dir.join(name);
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(crate::Error::NotAsWritten(format!(
            "{}: missing, where the run's checkpoint holds a copy of its first {} {rows} ({}: \
             copy it back to resume from the checkpoint)",
            path.display(),
            kept.len(),
            checkpoint.join(name).display()
        )));
    }
    Err(edited(
        dir,
        checkpoint,
        name,
        &format!("{} {rows}", kept.len()),
    ))
}

/// The table `name` in `dir` whose first `rows` are not the checkpoint's copy of them.
fn edited(dir: &Path, checkpoint: &Path, name: &str, rows: &str) -> crate::Error {
    crate::Error::MetricsEdited {
        metrics: dir.join(name),
        summary: checkpoint.join(name),
        what: format!("its first {rows} are not the checkpoint's copy of them"),
    }
}

/// Where a finished run's metrics table disagrees with the summary written from the same
/// rows (an edited `metrics.csv`): a value no run records (a train loss that is not finite,
/// as a run stops before such an epoch is recorded, or below 0, as both losses are sums of
/// squares or of negative log-probabilities; an accuracy outside 0 to 1, a test loss below
/// 0; a diverging network's test loss may be infinite: twenty-eighth hostile round, N4), or
/// a final or best value that is not the summary's.
pub(crate) fn metrics_disagree(rows: &[EpochMetrics], s: &TrainSummary) -> Option<String> {
    let accuracy = |a: f64| (0.0..=1.0).contains(&a);
    for r in rows {
        let why = if !r.train_loss.is_finite() {
            "a train loss that is not finite"
        } else if r.train_loss < 0.0 {
            "a train loss below 0"
        } else if r.test_loss.is_some_and(|l| l.is_nan() || l < 0.0) {
            "a test loss below 0 or not a number"
        } else if !accuracy(r.train_accuracy) || r.test_accuracy.is_some_and(|a| !accuracy(a)) {
            "an accuracy outside 0 to 1"
        } else {
            continue;
        };
        return Some(format!("epoch {} has {why}", r.epoch));
    }
    let last = rows.last();
    let checks = [
        (
            "final train loss",
            last.map(|r| r.train_loss),
            s.final_train_loss,
        ),
        (
            "final train accuracy",
            last.map(|r| r.train_accuracy),
            s.final_train_accuracy,
        ),
        (
            "final test accuracy",
            rows.iter().rev().find_map(|r| r.test_accuracy),
            s.final_test_accuracy,
        ),
        (
            "best test accuracy",
            rows.iter().filter_map(|r| r.test_accuracy).reduce(f64::max),
            s.best_test_accuracy,
        ),
    ];
    checks
        .into_iter()
        .find(|(_, table, summary)| table != summary)
        .map(|(what, table, summary)| {
            let show = |v: Option<f64>| v.map_or("none".to_string(), |v| v.to_string());
            format!(
                "{what} {} there, {} in the summary",
                show(table),
                show(summary)
            )
        })
}

/// The provenance a run's checkpoint pointer records (a run without a summary yet).
pub(super) fn checkpoint_provenance(dir: &Path) -> Option<Provenance> {
    let text = ntk_files::io::read_to_string(dir.join("checkpoint.json")).ok()?;
    serde_json::from_str::<crate::checkpoint::Pointer>(&text)
        .ok()?
        .provenance
}

/// Every run under `out`: `out` itself when it is a run directory, else `out/runs/*`.
pub fn read_runs(out: &Path) -> crate::Result<Vec<RunRecord>> {
    read_runs_except(out, &[])
}

/// [`read_runs`] without reading the run directories in `skip` (`out/runs/ID`): those a
/// sweep is about to train again, whose files may be what made them stale (seventy-eighth
/// hostile round: `--recompute` of a run with an edited summary was refused by the check
/// of the runs already there, which read the edited run too).
pub fn read_runs_except(out: &Path, skip: &[PathBuf]) -> crate::Result<Vec<RunRecord>> {
    if out.join("config.toml").exists() {
        return Ok(vec![read_run(out, String::new())?]);
    }
    if let Some(why) = crate::run_dir::missing_config(out) {
        return Err(crate::Error::NotItsRun(format!(
            "{why}, or {}",
            crate::sweep::REDO
        )));
    }
    ntk_runs::sweep::refuse_linked_runs(out)?;
    // Training runs beside an ntk-probe sweep's points are refused, as ntk-probe refuses
    // them (ninety-fourth hostile round, D1); a probe sweep alone is said below.
    if crate::files::training_run(out).is_some() {
        crate::files::refuse_probe_sweep(out)?;
    }
    let runs = out.join("runs");
    if let Err(source) = std::fs::read_dir(&runs) {
        return Err(crate::Error::NoRun {
            out: out.to_path_buf(),
            source,
        });
    }
    // A run's config.toml that is not a regular file (a FIFO, a directory) is named, not
    // passed over as no run (ninetieth hostile round, N2).
    for entry in std::fs::read_dir(&runs).into_iter().flatten().flatten() {
        let dir = entry.path();
        if !skip.contains(&dir) && entry.file_type().is_ok_and(|t| t.is_dir()) {
            if let Some(why) = crate::run_dir::missing_config(&dir) {
                return Err(crate::Error::NotItsRun(format!(
                    "{why}, or {}",
                    crate::sweep::REDO
                )));
            }
            check_no_links(&dir)?;
        }
        let config = dir.join("config.toml");
        if let Ok(m) = std::fs::symlink_metadata(&config)
            && !m.is_file()
        {
            return Err(ntk_files::Error::OutputPath {
                path: config,
                why: "is not a regular file (a FIFO, a device, a directory or a link): a run \
                      keeps the config it trained by there"
                    .into(),
            }
            .into());
        }
    }
    let dirs: Vec<PathBuf> = ntk_runs::sweep::find_files(&runs, "config.toml")
        .into_iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    if dirs.is_empty() {
        return Err(crate::Error::NoTrainingRuns {
            out: out.to_path_buf(),
            probe_sweep: crate::files::is_probe_sweep(out),
        });
    }
    let mut runs = Vec::new();
    for d in dirs.iter().filter(|d| !skip.contains(d)) {
        let id = d
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into());
        match read_run(d, id) {
            Ok(r) => runs.push(r),
            // A run that failed (`failed.json`) may have left files that cannot be read:
            // it is named, not read.
            Err(e) if ntk_runs::sweep::Failure::read(d).is_some() => {
                eprintln!(
                    "warning: {}: failed, and its files cannot be read: {}",
                    d.display(),
                    ntk_runs::quote::message_escaped(&e.to_string())
                );
            }
            Err(e) => return Err(e),
        }
    }
    Ok(runs)
}

/// Warns of each file under `out/runs` named as a run's directory: no run, where the run it
/// replaced went without a word and best.csv chose by another seed (hundred-and-thirty-eighth
/// hostile round, second review, N1).
pub(super) fn warn_files_at_run_names(out: &Path) {
    for entry in std::fs::read_dir(out.join("runs"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry
            .file_type()
            .is_ok_and(|t| t.is_dir() || t.is_symlink());
        if !is_dir && crate::sweep::in_run_id_form(&name) {
            eprintln!(
                "warning: {}: a file named as a run's directory, not a run: not collected",
                entry.path().display()
            );
        }
    }
}
