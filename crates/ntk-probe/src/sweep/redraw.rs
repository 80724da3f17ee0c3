//! `ntk-probe plot DIR`: the figures of a collected sweep redrawn from its tables alone,
//! `summary.csv` (the means over seeds and the theory) and `results.csv` (every seed's κ
//! and minimum gradient angle, for the seed bands), without the per-point directories or
//! any computation. This is how the committed figures of `experiments/fig2` are redrawn.

use ntk_files::table::number as shown;
use ntk_plot::Layout;
use std::path::Path;

use serde::Deserialize;

use super::GroupRow;
use super::collect::{setting_keys, settings};
use super::figures::SeedValue;

/// The columns of a `results.csv` row that the figures need (older files have more or
/// fewer of the other columns).
#[derive(Deserialize)]
struct SeedRow {
    protocol: String,
    activation: String,
    depth: usize,
    width: usize,
    n: usize,
    kappa: String,
    singular: bool,
    min_grad_angle_deg: String,
    convention: String,
    data: String,
    /// The blocks protocol's block size (absent in older files, empty for whole).
    #[serde(default)]
    block_size: Option<usize>,
    /// The interval of an f32 κ near its bound (absent in files written before 2026-12-04).
    #[serde(default)]
    kappa_low: String,
    #[serde(default)]
    kappa_high: String,
}

/// What a seed's row of `results.csv` says beyond its [`SeedValue`]: whether its kernel was
/// singular, and the interval of its κ (`kappa_low`, `kappa_high`; `inf`: unbounded).
#[derive(Clone, Copy, Debug)]
struct SeedFacts {
    singular: bool,
    interval: Option<(f64, f64)>,
}

fn bad(path: &Path, reason: String) -> crate::Error {
    crate::Error::BadTable {
        path: path.to_path_buf(),
        reason,
    }
}

/// `text`, row `row`'s `column` (rows counted from 1 below the header, as the other
/// checks of this table count them), as a number (`inf` allowed), or `None` when empty; a
/// text that is not one is named by its row (ninety-eighth hostile round, N11: no row).
fn number(path: &Path, row: usize, column: &str, text: &str) -> crate::Result<Option<f64>> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    text.trim().parse::<f64>().map(Some).map_err(|_| {
        bad(
            path,
            format!("row {row}: {column} = {text:?} is not a number"),
        )
    })
}

/// The rows of the CSV at `path`; a missing or empty table is an error.
fn table<T: serde::de::DeserializeOwned>(path: &Path) -> crate::Result<Vec<T>> {
    // A directory or a FIFO there is named as such, not as missing.
    if path.exists() && !path.is_file() {
        return Err(bad(
            path,
            "is a directory, a FIFO or a device, not the table `ntk-probe collect` writes".into(),
        ));
    }
    if !path.is_file() {
        return Err(bad(path, "missing (run `ntk-probe collect` first)".into()));
    }
    let rows: Vec<T> = ntk_files::table::read_csv(path)?;
    if rows.is_empty() {
        return Err(bad(path, "no rows".into()));
    }
    Ok(rows)
}

/// A condition number read from a table: empty, `inf` (singular) or at least 1; anything
/// else (a negative κ, which a log axis cannot draw, or NaN, which no tool writes there) is
/// refused, naming the row and column.
fn check_kappa(path: &Path, row: usize, column: &str, v: Option<f64>) -> crate::Result<()> {
    match v {
        Some(k) if k.is_nan() || k < 1.0 => Err(bad(
            path,
            format!(
                "row {row}: {column} = {}: a condition number is at least 1",
                shown(k)
            ),
        )),
        _ => Ok(()),
    }
}

/// An angle read from a table: NaN (not measured: the blocks protocol at 60,000 rows) or
/// within 0..=180 degrees.
fn check_angle(path: &Path, row: usize, column: &str, v: Option<f64>) -> crate::Result<()> {
    match v {
        Some(a) if !a.is_nan() && !(0.0..=180.0).contains(&a) => Err(bad(
            path,
            format!(
                "row {row}: {column} = {}: an angle is within 0 and 180 degrees",
                shown(a)
            ),
        )),
        _ => Ok(()),
    }
}

/// Every value of `summary.csv`'s groups in its domain, as `collect` writes them, so that an
/// edited table is refused, not drawn in part (round 22's N3: a `kappa_min` of `inf` above
/// the mean, an angle of 400 degrees and a negative spread were drawn): κ a condition number
/// ([`check_kappa`]) with `kappa_min <= kappa_mean <= kappa_max` where the mean is finite
/// (to the 11 digits written; NaN: an older file without the range), spreads and standard errors non-negative or NaN (fewer than
/// two seeds), `log10_kappa_mean` finite where `kappa_mean` is, angles [`check_angle`].
fn check_groups(path: &Path, groups: &[GroupRow]) -> crate::Result<()> {
    // One row per group: a row repeated was drawn twice without a word (hundred-and-forty-
    // sixth hostile round, second review, N2).
    fn key(g: &GroupRow) -> (&str, &str, &str, usize) {
        (&g.protocol, &g.setting, &g.activation, g.depth)
    }
    for (i, g) in groups.iter().enumerate() {
        if let Some(j) = groups[..i].iter().position(|h| key(h) == key(g)) {
            return Err(bad(
                path,
                format!(
                    "rows {} and {}: the same group ({} {} depth {}) twice: collect writes one \
                     row per group (collect again)",
                    j + 1,
                    i + 1,
                    g.protocol,
                    g.activation,
                    g.depth
                ),
            ));
        }
    }
    for (i, g) in groups.iter().enumerate() {
        let row = i + 1;
        // The counts: a group is at least one seed, and its singular seeds are some of them
        // (twenty-fourth hostile round, D4: `seeds` 0 drew "mean over 0-2 seeds").
        if g.seeds == 0 || g.singular > g.seeds {
            return Err(bad(
                path,
                format!(
                    "row {row}: seeds = {}, singular = {}: a group holds at least one seed, \
                     and at most that many singular ones",
                    g.seeds, g.singular
                ),
            ));
        }
        for (column, v) in [
            ("kappa_mean", Some(g.kappa_mean)),
            ("kappa_min", Some(g.kappa_min)),
            ("kappa_max", Some(g.kappa_max)),
            ("theory_kappa", g.theory_kappa),
        ] {
            check_kappa(path, row, column, v)?;
        }
        let (lo, mean, hi) = (g.kappa_min, g.kappa_mean, g.kappa_max);
        let slack = 1e-9 * mean.abs();
        let outside = lo.is_infinite()
            || hi.is_infinite()
            || (!lo.is_nan() && lo > mean + slack)
            || (!hi.is_nan() && mean > hi + slack);
        if mean.is_finite() && outside {
            return Err(bad(
                path,
                format!(
                    "row {row}: kappa_min = {}, kappa_mean = {}, kappa_max = {}: the mean lies \
                     within the range",
                    shown(lo),
                    shown(mean),
                    shown(hi)
                ),
            ));
        }
        // The interval the seeds' measured errors allow holds the mean (eighty-ninth hostile
        // round, D3).
        if let Some(low) = g.kappa_mean_low {
            let high = g.kappa_mean_high.unwrap_or(f64::NAN);
            let holds = low.is_finite()
                && low > 0.0
                && !high.is_nan()
                && (mean.is_infinite() || (low <= mean + slack && mean <= high + slack));
            if !holds {
                return Err(bad(
                    path,
                    format!(
                        "row {row}: kappa_mean_low = {}, kappa_mean = {}, kappa_mean_high = {}: \
                         the low bound must be positive and finite, the high one a number (inf: \
                         unbounded), and the interval must hold the mean",
                        shown(low),
                        shown(mean),
                        g.kappa_mean_high.map_or("(empty)".to_string(), shown)
                    ),
                ));
            }
        }
        for (column, v) in [
            ("kappa_std", g.kappa_std),
            ("kappa_se", g.kappa_se),
            ("min_grad_angle_std_deg", g.min_grad_angle_std_deg),
            ("min_grad_angle_se_deg", g.min_grad_angle_se_deg),
        ] {
            if !(v.is_nan() || (v.is_finite() && v >= 0.0)) {
                return Err(bad(
                    path,
                    format!(
                        "row {row}: {column} = {}: a spread is finite and not negative",
                        shown(v)
                    ),
                ));
            }
        }
        if mean.is_finite() && !g.log10_kappa_mean.is_finite() {
            return Err(bad(
                path,
                format!(
                    "row {row}: log10_kappa_mean = {} where kappa_mean = {}",
                    shown(g.log10_kappa_mean),
                    shown(mean)
                ),
            ));
        }
        check_angle(
            path,
            row,
            "min_grad_angle_mean_deg",
            Some(g.min_grad_angle_mean_deg),
        )?;
        check_angle(
            path,
            row,
            "theory_min_grad_angle_deg",
            g.theory_min_grad_angle_deg,
        )?;
    }
    Ok(())
}

/// Every seed's values from `results.csv`, keyed as the groups of `summary.csv`, with
/// whether its kernel was singular.
fn seed_values(path: &Path) -> crate::Result<Vec<(SeedValue, SeedFacts)>> {
    let rows: Vec<SeedRow> = table(path)?;
    let keys: Vec<[String; 4]> = rows
        .iter()
        .map(|r| setting_keys(&r.data, r.n, r.width, &r.convention))
        .collect();
    rows.iter()
        .zip(settings(&keys))
        .enumerate()
        .map(|(i, (r, setting))| {
            let written = number(path, i + 1, "kappa", &r.kappa)?;
            // A singular kernel's kappa is written `inf` or empty (twenty-fifth hostile
            // round, D1: a finite one beside `singular = true` was drawn).
            if let Some(k) = written.filter(|k| r.singular && k.is_finite()) {
                return Err(bad(
                    path,
                    format!(
                        "row {}: kappa = {} with singular = true: a singular kernel's \
                         condition number is infinite",
                        i + 1,
                        shown(k)
                    ),
                ));
            }
            let kappa = written.filter(|_| !r.singular);
            check_kappa(path, i + 1, "kappa", kappa)?;
            // `inf` is written for a singular kernel only (twenty-fourth hostile round, D4).
            if let Some(k) = kappa.filter(|k| k.is_infinite()) {
                return Err(bad(
                    path,
                    format!(
                        "row {}: kappa = {k} with singular = false: an infinite condition \
                         number is a singular kernel's",
                        i + 1
                    ),
                ));
            }
            let angle = number(path, i + 1, "min_grad_angle_deg", &r.min_grad_angle_deg)?;
            check_angle(path, i + 1, "min_grad_angle_deg", angle)?;
            let interval = seed_interval(path, i + 1, r, kappa)?;
            let value = SeedValue {
                protocol: r.protocol.clone(),
                setting,
                activation: r.activation.clone(),
                depth: r.depth,
                kappa,
                min_grad_angle_deg: angle,
                blocks_of: r.block_size.map(|b| (b, r.n)),
            };
            let facts = SeedFacts {
                singular: r.singular,
                interval,
            };
            Ok((value, facts))
        })
        .collect()
}

/// The row `row`'s interval of κ (`r.kappa_low`, `r.kappa_high`), as collect writes it: both
/// or neither, `0 < kappa_low <= kappa <= kappa_high` (`inf`: unbounded) where κ is finite,
/// a singular kernel's `kappa_high` `inf` (eighty-ninth hostile round's round 90, D1: an
/// edited interval was drawn).
fn seed_interval(
    path: &Path,
    row: usize,
    r: &SeedRow,
    kappa: Option<f64>,
) -> crate::Result<Option<(f64, f64)>> {
    let low = number(path, row, "kappa_low", &r.kappa_low)?;
    let high = number(path, row, "kappa_high", &r.kappa_high)?;
    let (low, high) = match (low, high) {
        (None, None) => return Ok(None),
        (Some(low), Some(high)) => (low, high),
        _ => {
            return Err(bad(
                path,
                format!("row {row}: kappa_low and kappa_high are given together or not at all"),
            ));
        }
    };
    if !crate::blocks::interval_holds(low, kappa, high) {
        return Err(bad(
            path,
            format!(
                "row {row}: kappa_low = {}, kappa = {}, kappa_high = {}: the interval must \
                 hold kappa (a singular kernel's kappa_high is inf)",
                shown(low),
                kappa.map_or("inf".to_string(), shown),
                shown(high)
            ),
        ));
    }
    Ok(Some((low, high)))
}

/// `summary.csv`'s groups against `results.csv`'s rows, as `collect` wrote them from those
/// rows (twenty-fifth hostile round, D1: a `seeds` or `singular` count that the rows did not
/// give, and an infinite `kappa_mean` beside finite seeds, were drawn): each group's `seeds`
/// is its number of rows, its `singular` the number of those singular, and its `kappa_mean`
/// infinite exactly when every seed is singular.
/// Whether the seed's row `v` of `results.csv` belongs to the group `g` of `summary.csv`.
fn in_group(v: &SeedValue, g: &GroupRow) -> bool {
    v.protocol == g.protocol
        && v.setting == g.setting
        && v.activation == g.activation
        && v.depth == g.depth
}

fn check_agree(
    summary: &Path,
    groups: &[GroupRow],
    results: &Path,
    seeds: &[(SeedValue, SeedFacts)],
) -> crate::Result<()> {
    // Every group of the rows has its summary row (round 26's D1: a deleted one was drawn
    // without a word).
    if let Some((v, _)) = seeds
        .iter()
        .find(|(v, _)| !groups.iter().any(|g| in_group(v, g)))
    {
        return Err(bad(
            summary,
            format!(
                "no row for {} {} depth {}{} that {} holds: the tables do not agree (collect \
                 again)",
                v.protocol,
                v.activation,
                v.depth,
                if v.setting.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", v.setting)
                },
                results.display()
            ),
        ));
    }
    // The theory's angle of a setting, activation and depth is one value whatever the
    // protocol (round 27's D1: the blocks row's was drawn and the whole row's, edited,
    // ignored).
    let same = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(x), Some(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        (None, None) => true,
        _ => false,
    };
    for (i, g) in groups.iter().enumerate() {
        for (j, h) in groups.iter().enumerate().skip(i + 1) {
            let one = g.setting == h.setting && g.activation == h.activation && g.depth == h.depth;
            // The angle only: `theory_kappa` is the kernel of each protocol's own size.
            for (column, a, b) in [(
                "theory_min_grad_angle_deg",
                g.theory_min_grad_angle_deg,
                h.theory_min_grad_angle_deg,
            )] {
                if one && !same(a, b) {
                    return Err(bad(
                        summary,
                        format!(
                            "rows {} and {}: {column} = {} and {} for one activation and \
                             depth: the infinite-width theory does not depend on the protocol \
                             (collect again)",
                            i + 1,
                            j + 1,
                            a.map_or("empty".into(), shown),
                            b.map_or("empty".into(), shown)
                        ),
                    ));
                }
            }
        }
    }
    for (i, g) in groups.iter().enumerate() {
        let rows: Vec<bool> = seeds
            .iter()
            .filter(|(v, _)| in_group(v, g))
            .map(|(_, facts)| facts.singular)
            .collect();
        let singular = rows.iter().filter(|&&s| s).count();
        if (g.seeds, g.singular) != (rows.len(), singular) {
            return Err(bad(
                summary,
                format!(
                    "row {}: seeds = {}, singular = {}, where {} holds {} row(s) of this \
                     group, {singular} singular: the tables do not agree (collect again)",
                    i + 1,
                    g.seeds,
                    g.singular,
                    results.display(),
                    rows.len()
                ),
            ));
        }
        // The means as collect takes them from these rows (round 26's D1: an edited mean,
        // or an edited row, was drawn): kappa over the non-singular seeds, the angle over
        // the seeds with one; both tables write 11 digits, so they agree to 1e-8.
        let of_group = || seeds.iter().filter(|(v, _)| in_group(v, g));
        let mean = |values: Vec<f64>| match values.len() {
            0 => f64::NAN,
            n => values.iter().sum::<f64>() / n as f64,
        };
        let kappa = mean(of_group().filter_map(|(v, _)| v.kappa).collect());
        let angle = mean(
            of_group()
                .filter_map(|(v, _)| v.min_grad_angle_deg)
                .filter(|a| !a.is_nan())
                .collect(),
        );
        let differs = |written: f64, rows: f64| {
            if rows.is_nan() {
                return !written.is_nan() && !written.is_infinite();
            }
            // NaN (an unreadable written value) is never close.
            let close = (written - rows).abs() <= 1e-8 * rows.abs().max(1.0);
            !close
        };
        for (column, written, from_rows) in [
            ("kappa_mean", g.kappa_mean, kappa),
            ("min_grad_angle_mean_deg", g.min_grad_angle_mean_deg, angle),
        ] {
            if differs(written, from_rows) {
                return Err(bad(
                    summary,
                    format!(
                        "row {}: {column} = {}, where the mean of the group's rows in {} is \
                         {}: the tables do not agree (collect again)",
                        i + 1,
                        shown(written),
                        results.display(),
                        shown(from_rows)
                    ),
                ));
            }
        }
        // The mean's interval as collect forms it from the rows' (`collect::mean_interval`).
        let finite: Vec<(f64, Option<(f64, f64)>)> = of_group()
            .filter_map(|(v, facts)| v.kappa.map(|k| (k, facts.interval)))
            .collect();
        let from_rows = match finite.iter().any(|(_, i)| i.is_some()) {
            false => None,
            true => {
                let c = finite.len() as f64;
                let low: f64 = finite.iter().map(|(k, i)| i.map_or(*k, |i| i.0)).sum();
                let high: f64 = finite.iter().map(|(k, i)| i.map_or(*k, |i| i.1)).sum();
                Some((low / c, high / c))
            }
        };
        let written = g.kappa_mean_low.zip(g.kappa_mean_high);
        let agree = match (written, from_rows) {
            (None, None) => g.kappa_mean_low.is_none() && g.kappa_mean_high.is_none(),
            (Some(w), Some(r)) => {
                !differs(w.0, r.0) && (w.1 == r.1 || (r.1.is_finite() && !differs(w.1, r.1)))
            }
            _ => false,
        };
        if !agree {
            let said = |v: Option<f64>| v.map_or("(empty)".to_string(), shown);
            return Err(bad(
                summary,
                format!(
                    "row {}: kappa_mean_low = {}, kappa_mean_high = {}, where the rows of {} \
                     give {} and {}: the tables do not agree (collect again)",
                    i + 1,
                    said(g.kappa_mean_low),
                    said(g.kappa_mean_high),
                    results.display(),
                    said(from_rows.map(|r| r.0)),
                    said(from_rows.map(|r| r.1))
                ),
            ));
        }
        if g.kappa_mean.is_infinite() != (singular == rows.len()) {
            return Err(bad(
                summary,
                format!(
                    "row {}: kappa_mean = {} with {singular} of {} seeds singular: the mean \
                     is infinite exactly when every seed is",
                    i + 1,
                    shown(g.kappa_mean),
                    rows.len()
                ),
            ));
        }
    }
    Ok(())
}

/// What the figures' titles call the data: every row's of `results.csv`, as the papers
/// write it ([`ntk_data::inputs::title_of_all`]; not the first row's alone: sixty-eighth
/// hostile round, D1).
fn default_title(dir: &Path) -> crate::Result<String> {
    let rows: Vec<SeedRow> = table(&dir.join("results.csv"))?;
    Ok(ntk_data::inputs::title_of_all(
        rows.iter().map(|r| r.data.as_str()),
    ))
}

/// Redraws the figures of the collected sweep in `dir` from `summary.csv` and
/// `results.csv` into `out` (`dir` itself, or another directory: `plot --out`); returns the
/// stems written. The tables are only read; `title` as [`ntk_plot::title_as_asked`].
pub fn redraw(
    dir: &Path,
    out: &Path,
    title: Option<&str>,
    layout: Layout,
) -> crate::Result<super::figures::Drawn> {
    // ntk-train's runs are named as such, not "run `ntk-probe collect` first", which then
    // refused them (fourteenth hostile round, D15).
    super::collect::refuse_training_runs(dir)?;
    let summary = dir.join("summary.csv");
    let groups: Vec<GroupRow> = table(&summary)?;
    check_groups(&summary, &groups)?;
    let results = dir.join("results.csv");
    let seeds = seed_values(&results)?;
    check_agree(&summary, &groups, &results, &seeds)?;
    let seeds: Vec<SeedValue> = seeds.into_iter().map(|(v, _)| v).collect();
    let data = default_title(dir)?;
    let titles = super::figures::Titles {
        data: &data,
        given: title,
    };
    // Exactly the figures this plot draws, checked before the first is drawn (forty-fifth
    // hostile round, D1: another protocol's figure; forty-sixth, D1: the angle's, where no
    // angle was measured); then a dead writer's figure leftovers where the figures go
    // (round 27's N1).
    let planned = super::figures::plan(dir, &groups, &seeds, titles);
    let draws = |n: &str| {
        planned
            .iter()
            .any(|(stem, _)| ntk_plot::is_figure_file(n, stem))
    };
    ntk_files::places::check_replaced_in(out, &draws)?;
    ntk_runs::sweep::check_proven_figures(out, dir, &draws)?;
    ntk_files::outset::clean_dir(out, None, &super::writes_file);
    super::say_stale_figures(out, dir, &draws);
    let drawn = super::figures::save(out, &planned, layout)?;
    ntk_runs::sweep::settle_captions(out, &drawn.uncaptioned);
    ntk_runs::sweep::record_reports(out, &|name: &str| drawn.wrote(name));
    Ok(drawn)
}
