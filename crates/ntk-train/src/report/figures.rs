//! The figures of a training sweep, read back from its runs: the training loss and test
//! accuracy against epoch (the mean over seeds, the seeds' min to max shaded), the tracked
//! NTK's kappa and angle, the representations; one curve per chosen configuration, and
//! titles that say what was measured.

use super::*;

/// Mean, min and max over the tables `tables` (one per seed) of `value` row by row, against
/// the row's epoch: at each row, over the tables that reach it, so a seed that diverged (and
/// stopped) leaves the others' curve going on past its last epoch instead of ending it
/// there; a row where one of those tables has no value is left out.
pub(super) fn mean_curve<T>(
    tables: &[&[T]],
    epoch: impl Fn(&T) -> usize,
    value: impl Fn(&T) -> Option<f64>,
) -> Vec<Stat> {
    let len = tables.iter().map(|t| t.len()).max().unwrap_or(0);
    (0..len)
        .filter_map(|i| {
            let rows: Vec<&T> = tables.iter().filter_map(|t| t.get(i)).collect();
            let vals: Vec<f64> = rows.iter().filter_map(|r| value(r)).collect();
            if vals.len() < rows.len() {
                return None;
            }
            let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            Some((epoch(rows[0]) as f64, mean(vals)?, lo, hi))
        })
        .collect()
}

pub(super) fn metric_curve(
    runs: &[&RunRecord],
    value: impl Fn(&EpochMetrics) -> Option<f64>,
) -> Vec<Stat> {
    let tables: Vec<&[EpochMetrics]> = runs.iter().map(|r| r.metrics.as_slice()).collect();
    mean_curve(&tables, |r| r.epoch, value)
}

pub(super) fn ntk_curve(runs: &[&RunRecord], value: impl Fn(&NtkRow) -> Option<f64>) -> Vec<Stat> {
    let tables: Vec<&[NtkRow]> = runs.iter().map(|r| r.ntk.as_slice()).collect();
    mean_curve(&tables, |r| r.epoch, value)
}

/// The epochs at which some seed's tracked kernel was singular (κ unresolved in
/// `ntk.precision`), over the rows any seed reaches, as [`mean_curve`] draws them.
pub(super) fn singular_epochs(runs: &[&RunRecord]) -> Vec<f64> {
    let len = runs.iter().map(|r| r.ntk.len()).max().unwrap_or(0);
    (0..len)
        .filter_map(|i| {
            let rows: Vec<&NtkRow> = runs.iter().filter_map(|r| r.ntk.get(i)).collect();
            rows.iter()
                .any(|r| r.singular)
                .then(|| rows[0].epoch as f64)
        })
        .collect()
}

/// The top layer's rows of each run's `representations.csv` (one per epoch), averaged.
pub(super) fn top_representation_curve(
    runs: &[&RunRecord],
    value: impl Fn(&RepresentationRow) -> Option<f64>,
) -> Vec<Stat> {
    let tops: Vec<Vec<&RepresentationRow>> = runs
        .iter()
        .map(|r| {
            let top = r.representations.iter().map(|x| x.layer).max();
            r.representations
                .iter()
                .filter(|x| Some(x.layer) == top)
                .collect()
        })
        .collect();
    let tables: Vec<&[&RepresentationRow]> = tops.iter().map(Vec::as_slice).collect();
    mean_curve(&tables, |r| r.epoch, |r| value(r))
}

/// One curve of the figures: a configuration at its chosen lr, the runs (seeds) averaged.
pub(super) struct Curve<'a> {
    label: String,
    color: ntk_plot::RGBColor,
    dash: Dash,
    marker: Marker,
    members: Vec<&'a RunRecord>,
}

/// The sorted distinct values of `key` over the chosen configurations.
pub(super) fn distinct<T: Ord>(best: &[BestRow], key: impl Fn(&BestRow) -> T) -> Vec<T> {
    let mut v: Vec<T> = best.iter().map(key).collect();
    v.sort();
    v.dedup();
    v
}

/// Whether a run trained a ResNet (its provenance has a `[resnet]` table).
pub(super) fn is_resnet(r: &RunRecord) -> bool {
    r.provenance
        .as_ref()
        .is_some_and(|p| p.config.keys().any(|k| k.starts_with("resnet.")))
        || r.summary
            .as_ref()
            .is_some_and(|s| s.model.starts_with("resnet"))
}

/// The family a configuration's colour and words come from: a ResNet's variant, an MLP's
/// normalization layer when it has one, else its activation.
pub(super) fn family(b: &BestRow, resnet: bool) -> &str {
    if resnet || b.normalization != "none" {
        &b.normalization
    } else {
        &b.activation
    }
}

/// The configuration in the words of a paper: "ReLU", "ReLU, BatchNorm", a ResNet's
/// "NormReLU" (its variant).
pub(super) fn family_words(b: &BestRow, resnet: bool) -> String {
    if resnet {
        ntk_plot::style::words(&b.normalization)
    } else {
        ntk_plot::style::family_words(&b.activation, &b.normalization)
    }
}

/// The curves of the chosen configurations: colour and marker by depth (a ramp) in a depth
/// sweep, by family ([`ntk_plot::style`]: the same colour for ReLU, NormReLU, BatchNorm in
/// every figure) when there is one depth; dash by family; labels in words ("ResNet-20,
/// NormReLU", "depth 3, ReLU, BatchNorm"), the lr when the runs used several.
pub(super) fn curves<'a>(runs: &'a [RunRecord], best: &[BestRow]) -> Vec<Curve<'a>> {
    let styles = distinct(best, |b| (b.activation.clone(), b.normalization.clone()));
    let depths = distinct(best, |b| b.depth);
    let several_lrs = runs
        .iter()
        .map(|r| r.lr.to_bits())
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    best.iter()
        .map(|b| {
            let style = styles
                .iter()
                .position(|s| s.0 == b.activation && s.1 == b.normalization)
                .unwrap_or(0);
            let depth = depths.iter().position(|&d| d == b.depth).unwrap_or(0);
            let members = compared_runs(runs, b);
            let resnet = members.first().is_some_and(|r| is_resnet(r));
            let mut label = if resnet {
                format!("ResNet-{}", b.depth)
            } else {
                format!("depth {}", b.depth)
            };
            if styles.len() > 1 {
                label += &format!(", {}", family_words(b, resnet));
            }
            if several_lrs {
                label += &format!(" (lr {})", three_digits(b.lr));
            }
            let name = family(b, resnet);
            // One depth: the families take the colours and markers too, not only dashes.
            let (color, marker) = if depths.len() > 1 {
                (ramp(depth, depths.len()), Marker::nth(depth))
            } else {
                (
                    ntk_plot::style::family_color(name).unwrap_or(ramp(style, styles.len())),
                    ntk_plot::style::family_marker(name),
                )
            };
            // A dash per family, never the predictions' dots (sixty-ninth hostile round,
            // D1: the fourth family was drawn dotted, as its own prediction).
            let (dash, marker, _) = ntk_plot::style::setting_style(style, marker);
            Curve {
                label,
                color,
                dash,
                marker,
                members,
            }
        })
        .collect()
}

/// A figure of `curves` against the epoch, each curve's points read by `points`: the mean
/// over seeds, and where a curve has several seeds their min..max as a band.
pub(super) fn figure(
    curves: &[Curve],
    title: &str,
    y: &str,
    log_y: bool,
    points: &CurveOf,
) -> Figure {
    let series: Vec<Series> = curves
        .iter()
        .map(|c| {
            let (stats, unresolved) = points(&c.members);
            Series {
                label: c.label.clone(),
                points: stats.iter().map(|p| (p.0, p.1)).collect(),
                spread: (c.members.len() > 1)
                    .then(|| Spread::Band(stats.iter().map(|p| (p.2, p.3)).collect())),
                color: c.color,
                dash: c.dash,
                marker: Some(c.marker),
                unresolved,
            }
        })
        .filter(|s| !s.points.is_empty() || !s.unresolved.is_empty())
        .collect();
    let seeds: Vec<usize> = curves.iter().map(|c| c.members.len()).collect();
    let note = match (seeds.iter().min(), seeds.iter().max()) {
        (Some(1), Some(1)) => "one seed per curve".to_string(),
        (Some(a), Some(b)) if a == b => format!("lines: mean over {a} seeds\nshaded: min to max"),
        (Some(a), Some(b)) => format!("lines: mean over {a}-{b} seeds\nshaded: min to max"),
        _ => String::new(),
    };
    // A seed that diverged stopped early: past its last epoch the line is the others' mean
    // ([`mean_curve`]), which the note says.
    let stopped = curves.iter().any(|c| {
        let lens = c.members.iter().map(|r| r.metrics.len());
        lens.clone().min() != lens.max()
    });
    let note = if stopped && !note.is_empty() {
        format!(
            "{note}
after a seed stopped (diverged):
the mean of those that went on"
        )
    } else {
        note
    };
    let note = if series.iter().any(|s| !s.unresolved.is_empty()) {
        format!(
            "{note}\nopen markers above the axes: a seed's\nkernel was singular (κ beyond\nntk.precision; see ntk.csv)"
        )
    } else {
        note
    };
    let note = match ntk_plot::style::repeated_looks_note(&series) {
        Some(line) if note.is_empty() => line.to_string(),
        Some(line) => format!("{note}\n{line}"),
        None => note,
    };
    Figure {
        title: title.into(),
        x_label: "epoch".into(),
        y_label: y.into(),
        x_scale: Scale::Integer,
        y_scale: if log_y { Scale::Log } else { Scale::Linear },
        series,
        note: (!note.is_empty()).then_some(note),
    }
}

/// Figures of the chosen configurations: training loss (Fig. 3; with `log_y` also on a log
/// scale, `train_loss_log`), test accuracy, and, when the probes ran during training, kappa
/// and the minimum gradient angle vs epoch, and the mean cosine between the test inputs'
/// top-layer representations vs epoch (Agarwal et al., Fig. 1). Figures without data are
/// left out.
/// `title` replaces each figure's title as [`ntk_plot::title_as_asked`] says (by default a
/// title names what the figure shows and what the runs trained on: `MNIST, 60,000 images`).
/// The runs are the sweep in `dir`'s; the figures, by stem ([`crate::files::FIGURE_STEMS`]),
/// those with data only, for [`save_figures`] to write once their places are checked.
pub fn plan_figures(
    dir: &Path,
    (runs, best): (&[RunRecord], &[BestRow]),
    log_y: bool,
    title: Option<&str>,
) -> Vec<(&'static str, Figure)> {
    let mut curves = curves(runs, best);
    // One run's own directory is drawn as it stands, finished or not (fifty-fifth hostile
    // round, D1: an interrupted or diverged run had "no finite epoch to plot").
    if let ([run], true) = (runs, curves.is_empty())
        && run.id.is_empty()
    {
        curves = self::curves(runs, &[as_it_stands(run)]);
        for c in &mut curves {
            c.label += &format!(" ({})", unended(run));
        }
    }
    let on = data_title(runs).map_or(String::new(), |d| format!(" ({d})"));
    let titled = |t: &str| ntk_plot::title_as_asked(title, || format!("{t}{on}"), t);
    // The probes during training measure a subset: their titles say which.
    let probed = |t: &str, key: &str, split: &str| {
        let on = probe_title(runs, key, split).map_or_else(
            || on.clone(),
            |p| format!(" ({p}{})", kernel_words(runs, key)),
        );
        ntk_plot::title_as_asked(title, || format!("{t}{on}"), t)
    };
    let loss = |m: &[&RunRecord]| (metric_curve(m, |r| Some(r.train_loss)), vec![]);
    let accuracy = |m: &[&RunRecord]| (metric_curve(m, |r| r.test_accuracy), vec![]);
    let kappa = |m: &[&RunRecord]| (ntk_curve(m, |r| r.kappa), singular_epochs(m));
    let angle = |m: &[&RunRecord]| (ntk_curve(m, |r| r.min_grad_angle_deg), vec![]);
    let cosine = |m: &[&RunRecord]| (top_representation_curve(m, |r| Some(r.mean_cosine)), vec![]);
    let loss_y = if runs.iter().all(|r| r.loss == ntk_engine::loss::Loss::Mse) {
        "training loss (square loss"
    } else {
        "training loss (cross-entropy"
    };
    // The runs' own NTK predictions (`[prediction]`), dotted beside the measured curves.
    let with_predictions = |mut fig: Figure| {
        let predicted: Vec<Series> = curves
            .iter()
            .filter_map(|c| crate::convergence::predicted_series(c.color, &c.members))
            .collect();
        if !predicted.is_empty() {
            let note = crate::convergence::PREDICTED_NOTE;
            fig.note = Some(
                fig.note
                    .map_or(note.to_string(), |n| format!("{n}\n{note}")),
            );
            fig.series.extend(predicted);
        }
        fig
    };
    let mut figures = vec![(
        "train_loss",
        with_predictions(figure(
            &curves,
            &titled("Training loss"),
            &format!("{loss_y})"),
            false,
            &loss,
        )),
    )];
    if log_y {
        let y = format!("{loss_y}, log scale)");
        figures.push((
            "train_loss_log",
            with_predictions(figure(&curves, &titled("Training loss"), &y, true, &loss)),
        ));
    }
    figures.extend([
        (
            "test_accuracy",
            figure(
                &curves,
                &titled("Test accuracy"),
                "test accuracy",
                false,
                &accuracy,
            ),
        ),
        (
            "ntk_kappa",
            figure(
                &curves,
                &probed("NTK condition number during training", "ntk.n", "training"),
                "NTK condition number κ",
                true,
                &kappa,
            ),
        ),
        (
            "ntk_angle",
            figure(
                &curves,
                &probed(
                    "Minimum gradient angle during training",
                    "ntk.n",
                    "training",
                ),
                "min gradient angle (°)",
                false,
                &angle,
            ),
        ),
        (
            "representation_cosine",
            figure(
                &curves,
                &probed(
                    "Test inputs' representations at the top layer",
                    "representations.n",
                    "test",
                ),
                "mean normalized dot product (cosine)",
                false,
                &cosine,
            ),
        ),
    ]);
    // Runs that failed are named on every figure (they are not drawn).
    let failed = ntk_runs::sweep::failed_note(dir);
    // A figure whose every point is not finite (a run diverged in its first epoch) has no
    // data either (hundred-and-fourteenth hostile round, N8: "nothing to plot" failed the
    // collect, rc 2, and spoke of an earlier collect's figures where there was none).
    figures
        .into_iter()
        .filter(|(_, f)| f.is_drawable())
        .map(|(stem, mut fig)| {
            if let Some(f) = &failed {
                fig.note = Some(fig.note.map_or(f.clone(), |n| format!("{n}\n{f}")));
            }
            (stem, fig)
        })
        .collect()
}

/// A run that has not ended as a configuration of its own rate, for [`curves`].
fn as_it_stands(run: &RunRecord) -> BestRow {
    let mut row = BestRow::chosen(
        run.key(),
        super::selection::Choice {
            lr: run.lr,
            selection: super::selection::Selection::SingleRate,
            selection_seed: None,
            selection_loss: None,
            at_grid_edge: false,
        },
    );
    row.epochs = run.metrics.len();
    row
}

/// How a run that is drawn as it stands ended, or that it has not: `diverged`, `running`,
/// `failed` or `interrupted`, with its finished epochs.
pub fn unended(run: &RunRecord) -> String {
    let state = if run.diverged() {
        "diverged"
    } else if run.running.is_some() {
        "running"
    } else if run.failure.is_some() {
        "failed"
    } else {
        "interrupted"
    };
    let epochs = run.metrics.len();
    format!(
        "{state}, {epochs} epoch{} finished",
        if epochs == 1 { "" } else { "s" }
    )
}

/// Says each run of `runs` that carries a prediction but has not ended, left out of
/// `what` (`convergence.csv` and `convergence_rate.*`, or the figure alone) as best.csv
/// leaves it out: its rate would be over the epochs it reached, not the middle half of its
/// training (hundred-and-fifty-second hostile round, second review, D1).
pub fn say_unrated(out: &Path, runs: &[RunRecord], what: &str) {
    for run in crate::convergence::unrated(runs) {
        let who = if run.id.is_empty() {
            "the run".to_string()
        } else {
            run.id.clone()
        };
        eprintln!(
            "warning: {}: {who} is not in {what}: it has not ended ({}), and a rate is over \
             the middle half of the training it plans",
            out.display(),
            unended(run)
        );
    }
}

/// Writes the figures of [`plan_figures`] into `out` (the sweep's directory, or `plot
/// --out`) in `layout`; says what it drew ([`ntk_plot::Drawn::files`]: the files written,
/// each figure's caption among them where written). A
/// caption standing there that the record does not prove the tools' is kept
/// ([`ntk_runs::sweep::keep_edited_captions`]), not written.
pub fn save_figures(
    out: &Path,
    figures: &[(&'static str, Figure)],
    layout: Layout,
) -> crate::Result<ntk_plot::Drawn> {
    let kept = ntk_runs::sweep::keep_edited_captions(out, &ntk_plot::captioned(figures, layout));
    Ok(ntk_plot::save_all(out, figures, layout, kept)?)
}

/// What the runs trained on, for the figures' titles (`MNIST, 60,000 images`), when every
/// run records the same data set and number of training images.
pub(super) fn data_title(runs: &[RunRecord]) -> Option<String> {
    let (set, n) = (recorded(runs, "data.dataset")?, recorded(runs, "data.n")?);
    Some(images_title(set.as_str()?, n.as_u64()?))
}

/// The value of the config key `key` that every run records alike (`None` when a run
/// records another value, or none): its provenance's, else (a run older than provenance)
/// its `config.toml`'s.
pub(super) fn recorded(runs: &[RunRecord], key: &str) -> Option<serde_json::Value> {
    let of = |r: &RunRecord| {
        r.provenance
            .as_ref()
            .and_then(|p| p.config.get(key))
            .or_else(|| r.config.get(key))
            .cloned()
    };
    let first = of(runs.first()?)?;
    runs.iter()
        .all(|r| of(r).as_ref() == Some(&first))
        .then_some(first)
}

/// What a probe during training measured, for its figures' titles (`Fashion-MNIST, the
/// first 500 training images`): the data set and the probe's `key` (`ntk.n`,
/// `representations.n`) as every run records them.
pub(super) fn probe_title(runs: &[RunRecord], key: &str, split: &str) -> Option<String> {
    let (set, n) = (recorded(runs, "data.dataset")?, recorded(runs, key)?);
    let (name, what) = set_words(set.as_str()?);
    let n = group_digits(n.as_u64()?);
    Some(format!("{name}, the first {n} {split} {what}"))
}

/// Which kernel of a many-output network the tracked NTK is (`ntk.output`), for the titles
/// of a probe of `key` = `ntk.n`: nothing for the sum over the outputs (the papers' and the
/// default), `, the full kernel over the outputs` or `, output 3` where every run records
/// that (sixty-seventh hostile round, N3: a `"full"` kernel's kappa, nearly twice the sum's,
/// was titled as the sum's).
pub(super) fn kernel_words(runs: &[RunRecord], key: &str) -> String {
    if key != "ntk.n" {
        return String::new();
    }
    match recorded(runs, "ntk.output") {
        Some(serde_json::Value::String(s)) if s == "full" => {
            ", the full kernel over the outputs".into()
        }
        Some(serde_json::Value::Number(o)) => format!(", output {o}"),
        _ => String::new(),
    }
}

/// `MNIST, 60,000 images` for the data set's config name and the number of images.
pub(super) fn images_title(set: &str, n: u64) -> String {
    let (name, what) = set_words(set);
    format!("{name}, {} {what}", group_digits(n))
}

/// The data set's name as the papers write it and what its samples are (`images`, or
/// `samples` for the synthetic set and one's own file).
pub(super) fn set_words(set: &str) -> (&str, &'static str) {
    let kind = ntk_data::config::Dataset::parse(set);
    let what = match kind {
        Some(ntk_data::config::Dataset::File | ntk_data::config::Dataset::Synthetic) => "samples",
        _ => "images",
    };
    (kind.map_or(set, |d| d.paper_name()), what)
}

use ntk_plot::style::three_digits;

pub(super) use ntk_data::inputs::group_digits;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Choice, Selection};

    fn best(depth: usize, activation: &str) -> BestRow {
        let choice = Choice {
            lr: 0.1,
            selection: Selection::SingleRate,
            selection_seed: None,
            selection_loss: None,
            at_grid_edge: false,
        };
        BestRow::chosen((depth, activation.into(), "none".into()), choice)
    }

    /// Sixty-ninth hostile round, D1: the families took four dashes in turn, so the fourth
    /// was dotted, as the predictions are, and the fifth drawn as the first. Over several
    /// depths (the colour and marker by depth) each family has a dash of its own, none
    /// dotted.
    #[test]
    fn families_take_looks_of_their_own_and_never_the_predictions_dots() {
        let families = ["relu", "tanh", "gelu", "silu", "erf"];
        let rows: Vec<BestRow> = [1, 2]
            .iter()
            .flat_map(|&d| families.iter().map(move |a| best(d, a)))
            .collect();
        let drawn = curves(&[], &rows);
        assert_eq!(drawn.len(), 10);
        assert!(drawn.iter().all(|c| c.dash != Dash::Dotted));
        for (i, a) in drawn.iter().enumerate() {
            for b in &drawn[i + 1..] {
                assert!(
                    (a.color, a.dash, a.marker) != (b.color, b.dash, b.marker),
                    "{} and {} look alike",
                    a.label,
                    b.label
                );
            }
        }
    }
}
