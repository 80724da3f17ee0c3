//! The figures of a probe sweep (Liu & Hui, Fig. 2): the minimum gradient angle and the
//! NTK condition number κ (log scale) against the depth L, one curve per (setting,
//! activation): the mean over seeds with a shaded band from the smallest to the largest
//! seed's value; relu solid and linear dashed as in the paper, the infinite-width theory
//! dotted in the same colour.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ntk_plot::{Dash, Figure, Layout, Marker, PALETTE, RGBColor, Scale, Series, Spread};

use super::GroupRow;

/// One seed's values at one point, for the seed bands: the keys of its group and its
/// κ (`None` when singular) and minimum gradient angle.
#[derive(Clone, Debug)]
pub struct SeedValue {
    pub protocol: String,
    pub setting: String,
    pub activation: String,
    pub depth: usize,
    pub kappa: Option<f64>,
    pub min_grad_angle_deg: Option<f64>,
    /// The blocks protocol's (block size, n): `None` for the whole set, and for an older
    /// `results.csv` without the column.
    pub blocks_of: Option<(usize, usize)>,
}

type GroupKey = (String, String, String, usize);

/// (min, max) over the seeds of each group of the finite values read by `value`.
fn ranges(
    seeds: &[SeedValue],
    value: fn(&SeedValue) -> Option<f64>,
) -> BTreeMap<GroupKey, (f64, f64)> {
    let mut out: BTreeMap<GroupKey, (f64, f64)> = BTreeMap::new();
    for s in seeds {
        let Some(v) = value(s).filter(|v| v.is_finite()) else {
            continue;
        };
        let key = (
            s.protocol.clone(),
            s.setting.clone(),
            s.activation.clone(),
            s.depth,
        );
        let e = out.entry(key).or_insert((v, v));
        *e = (e.0.min(v), e.1.max(v));
    }
    out
}

fn dash_for(activation: &str) -> Dash {
    if activation.starts_with("linear") {
        Dash::Dashed
    } else {
        Dash::Solid
    }
}

/// The sorted distinct values of `key` over the groups.
fn distinct<T: Ord + Clone>(groups: &[GroupRow], key: impl Fn(&GroupRow) -> T) -> Vec<T> {
    let mut v: Vec<T> = groups.iter().map(key).collect();
    v.sort();
    v.dedup();
    v
}

/// One curve: a (setting, activation) pair's groups under one protocol, by depth.
struct Curve<'a> {
    name: String,
    /// The activation in words ("ReLU"), without the setting.
    words: String,
    dash: Dash,
    color: RGBColor,
    marker: Marker,
    rows: Vec<&'a GroupRow>,
}

impl Curve<'_> {
    /// The measured means `value` with their seed range from `spread` as a band (groups
    /// without a finite mean are left out); with `singular_open`, the depths where some
    /// seed's kernel was singular get an open marker in the band above the axes.
    fn measured(
        &self,
        label: String,
        value: impl Fn(&GroupRow) -> f64,
        spread: &BTreeMap<GroupKey, (f64, f64)>,
        singular_open: bool,
    ) -> Series {
        let rows: Vec<&GroupRow> = self
            .rows
            .iter()
            .copied()
            .filter(|g| value(g).is_finite())
            .collect();
        let band: Vec<(f64, f64)> = rows
            .iter()
            .map(|g| {
                let key = (
                    g.protocol.clone(),
                    g.setting.clone(),
                    g.activation.clone(),
                    g.depth,
                );
                spread.get(&key).copied().unwrap_or((value(g), value(g)))
            })
            .collect();
        // A curve without points (singular at every depth) keeps its legend line and its
        // open markers.
        let any = !rows.is_empty();
        Series {
            label,
            points: rows.iter().map(|g| (g.depth as f64, value(g))).collect(),
            spread: any.then_some(Spread::Band(band)),
            color: self.color,
            dash: self.dash,
            marker: Some(self.marker),
            unresolved: if singular_open {
                self.rows
                    .iter()
                    .filter(|g| g.singular > 0)
                    .map(|g| g.depth as f64)
                    .collect()
            } else {
                Vec::new()
            },
        }
    }

    /// The infinite-width values `th` by depth.
    fn theory_points(&self, th: &impl Fn(&GroupRow) -> Option<f64>) -> Vec<(f64, f64)> {
        self.rows
            .iter()
            .filter_map(|g| th(g).map(|t| (g.depth as f64, t)))
            .collect()
    }

    /// The curve's infinite-width `points` ([`Curve::theory_points`]) as a dotted line named
    /// `name`, when there are any.
    fn theory(&self, name: &str, points: Vec<(f64, f64)>) -> Option<Series> {
        (!points.is_empty()).then(|| Series {
            label: format!("{name}, infinite width"),
            points,
            spread: None,
            color: self.color,
            dash: Dash::Dotted,
            marker: None,
            unresolved: Vec::new(),
        })
    }
}

/// The dotted infinite-width lines of `curves` (values `th`), after their measured curves:
/// one per activation and colour where every setting's theory is the same line (a width
/// axis: the theory does not depend on the width), named by the activation alone, and one
/// per curve, named by its setting too, where they differ (a conventions axis:
/// `unit_variance` scales the inputs, which ReLU's angles and kappa ignore and erf's do
/// not); seventy-second hostile round: one identical dotted entry per width, each named
/// with a finite width.
fn theories(curves: &[Curve], th: impl Fn(&GroupRow) -> Option<f64>) -> Vec<Series> {
    let mut out = Vec::new();
    let mut done = vec![false; curves.len()];
    for (i, c) in curves.iter().enumerate() {
        if done[i] {
            continue;
        }
        let same: Vec<usize> = (i..curves.len())
            .filter(|&j| curves[j].words == c.words && curves[j].color == c.color)
            .collect();
        // `same` starts with `i`: the first line is this curve's.
        let mut lines: Vec<Vec<(f64, f64)>> =
            same.iter().map(|&j| curves[j].theory_points(&th)).collect();
        let shared = same.len() > 1 && lines.iter().all(|l| l == &lines[0]);
        let points = lines.swap_remove(0);
        if shared {
            out.extend(c.theory(&c.words, points));
            for j in same {
                done[j] = true;
            }
        } else {
            out.extend(c.theory(&c.name, points));
            done[i] = true;
        }
    }
    out
}

/// The curves of `protocol`, one per (setting, activation) of the sweep, in a fixed order:
/// each activation in its colour and marker of every figure ([`ntk_plot::style`]) and named
/// in words ("ReLU", "NormReLU (b = -0.2)"); with several settings, a dash per setting.
fn curves<'a>(groups: &'a [GroupRow], protocol: &str) -> Vec<Curve<'a>> {
    // Settings in the order a reader counts them (`width=8` before `width=16`).
    let by_count = ntk_plot::style::counting_order;
    let mut keys = distinct(groups, |g| (g.setting.clone(), g.activation.clone()));
    keys.sort_by(|a, b| by_count(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
    let mut settings = distinct(groups, |g| g.setting.clone());
    settings.sort_by(|a, b| by_count(a, b));
    keys.iter()
        .enumerate()
        .map(|(c, (setting, activation))| {
            let rows: Vec<&GroupRow> = groups
                .iter()
                .filter(|g| &g.setting == setting && &g.activation == activation)
                .filter(|g| g.protocol == protocol)
                .collect();
            let words = ntk_plot::style::words(activation);
            let name = if setting.is_empty() {
                words
            } else {
                format!("{setting} {words}")
            };
            // Several settings: a look of its own each, never the theory's dots
            // (sixty-ninth hostile round, D1).
            let own = ntk_plot::style::family_marker(activation);
            let (dash, marker) = if settings.len() > 1 {
                let s = settings.iter().position(|x| x == setting).unwrap_or(0);
                let (dash, marker, _) = ntk_plot::style::setting_style(s, own);
                (dash, marker)
            } else {
                (dash_for(activation), own)
            };
            Curve {
                name,
                words: ntk_plot::style::words(activation),
                dash,
                color: ntk_plot::style::family_color(activation)
                    .unwrap_or(PALETTE[c % PALETTE.len()]),
                marker,
                rows,
            }
        })
        .collect()
}

/// What the lines and bands are, for the legend: "mean over 5 seeds; band: min..max".
fn note(groups: &[GroupRow], theory: bool) -> String {
    let seeds = distinct(groups, |g| g.seeds);
    let n = match seeds.as_slice() {
        [one] => one.to_string(),
        _ => format!(
            "{}-{}",
            seeds.first().copied().unwrap_or(0),
            seeds.last().copied().unwrap_or(0)
        ),
    };
    let mut s = format!("lines: mean over {n} seeds\nshaded: min to max over the seeds");
    if theory {
        s += "\ndotted: infinite-width theory";
    }
    s
}

/// `note` with [`ntk_plot::style::repeated_looks_note`]'s line where `series` has curves
/// that look alike.
fn with_repeated_looks(note: String, series: &[Series]) -> String {
    match ntk_plot::style::repeated_looks_note(series) {
        Some(line) => format!("{note}\n{line}"),
        None => note,
    }
}

/// The points whose mean leaves seeds out (some, not all, singular): "dropped from the
/// means (singular):" and one line per curve, `L=1 (2/5), L=3 (1/5)`, so that no mean is
/// drawn over fewer seeds than the figure says without the figure saying how many fewer
/// (summary.csv's `singular` column holds the same counts).
fn dropped(curves: &[Curve]) -> String {
    let mut lines = Vec::new();
    for c in curves {
        let points: Vec<String> = c
            .rows
            .iter()
            .filter(|g| g.singular > 0 && g.singular < g.seeds)
            .map(|g| format!("L={} ({}/{})", g.depth, g.singular, g.seeds))
            .collect();
        if !points.is_empty() {
            lines.push(format!("{}: {}", c.name, points.join(", ")));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    format!("\ndropped from the means (singular):\n{}", lines.join("\n"))
}

/// The minimum gradient angle against depth (a property of the whole kernel: drawn from
/// the first protocol's groups).
fn angle_figure(
    groups: &[GroupRow],
    seeds: &[SeedValue],
    protocol: &str,
    titles: Titles,
) -> Figure {
    let spread = ranges(seeds, |s| s.min_grad_angle_deg);
    let curves = curves(groups, protocol);
    let mut series = Vec::new();
    for curve in &curves {
        series.push(curve.measured(
            curve.name.clone(),
            |g| g.min_grad_angle_mean_deg,
            &spread,
            false,
        ));
    }
    series.extend(theories(&curves, |g| g.theory_min_grad_angle_deg));
    let theory = series.iter().any(|s| s.dash == Dash::Dotted);
    let note = with_repeated_looks(note(groups, theory), &series);
    Figure {
        title: titles.of("minimum model-gradient angle"),
        x_label: "depth L".into(),
        y_label: "min pairwise gradient angle (°)".into(),
        x_scale: Scale::Integer,
        y_scale: Scale::Linear,
        series,
        note: Some(note),
    }
}

/// κ (log scale) against depth under `protocol`; the theory on the whole-set kernel.
fn kappa_figure(
    groups: &[GroupRow],
    seeds: &[SeedValue],
    protocol: &str,
    titles: Titles,
) -> Figure {
    let spread = ranges(seeds, |s| s.kappa);
    let curves = curves(groups, protocol);
    let mut series = Vec::new();
    for curve in &curves {
        let singular_all = curve.rows.iter().all(|g| g.singular == g.seeds);
        let label = if singular_all {
            format!("{}: singular at every depth (κ = ∞)", curve.name)
        } else {
            curve.name.clone()
        };
        series.push(curve.measured(label, |g| g.kappa_mean, &spread, true));
    }
    if protocol == "whole" {
        series.extend(theories(&curves, |g| g.theory_kappa));
    }
    let theory = series.iter().any(|s| s.dash == Dash::Dotted);
    let mut note = with_repeated_looks(note(groups, theory), &series);
    if series.iter().any(|s| !s.unresolved.is_empty()) {
        note += "\nopen markers above the axes: κ unresolved\n(singular kernel) for some or all\nseeds; lines: mean over the others";
        note += &dropped(&curves);
    }
    note += &intervals(groups, protocol);
    let what = match protocol {
        "whole" => "whole set".to_string(),
        "blocks" => blocks_words(seeds),
        other => format!("{other} protocol"),
    };
    Figure {
        title: titles.of(&format!("NTK condition number ({what})")),
        x_label: "depth L".into(),
        y_label: "NTK condition number κ".into(),
        x_scale: Scale::Integer,
        y_scale: Scale::Log,
        series,
        note: Some(note),
    }
}

/// The note's line for the points of `protocol` whose f32 κ was measured against f64 near
/// the worst-case bound: their mean κ is drawn, and the interval the measured errors allow
/// is in summary.csv (eighty-ninth hostile round, D3: drawn as exact without a word).
fn intervals(groups: &[GroupRow], protocol: &str) -> String {
    let within: Vec<String> = groups
        .iter()
        .filter(|g| g.protocol == protocol)
        .filter_map(|g| {
            let (low, high) = (g.kappa_mean_low?, g.kappa_mean_high?);
            let high = match high.is_finite() {
                true => format!("{high:.3e}"),
                false => "∞".to_string(),
            };
            Some(format!("{} L={}: {low:.3e}–{high}", g.activation, g.depth))
        })
        .collect();
    match within.len() {
        0 => String::new(),
        k => format!(
            "\nf32 near its bound at {k} point(s): κ within\n{}\n(summary.csv's kappa_mean_low/high)",
            within.into_iter().take(3).collect::<Vec<_>>().join("\n")
                + if k > 3 { "\n…" } else { "" }
        ),
    }
}

/// The blocks the blocks protocol's points were measured on, as a title says them, from the
/// block size and `n` each recorded, cut as the probe cuts them ([`crate::blocks::block_sizes`];
/// sixty-sixth hostile round, D2: "512-sample blocks" whatever they were; sixty-seventh, D1:
/// a remainder of one joins the block before it, which is then larger): one size for every
/// point, with the last block smaller or larger where `n` is not a multiple of it (over
/// several `n`, each `n` not cut in equal blocks named with its last block's size), and one
/// block of the whole set where every point has a single block.
fn blocks_words(seeds: &[SeedValue]) -> String {
    let recorded: BTreeSet<(usize, usize)> = seeds
        .iter()
        .filter(|s| s.protocol == "blocks")
        .filter_map(|s| s.blocks_of)
        .collect();
    let sizes: BTreeSet<usize> = recorded.iter().map(|&(b, _)| b).collect();
    let (1, Some(&b)) = (sizes.len(), sizes.first()) else {
        return "mean over blocks".to_string();
    };
    let cut: Vec<Vec<usize>> = recorded
        .iter()
        .map(|&(b, n)| crate::blocks::block_sizes(n, b))
        .collect();
    if cut.iter().all(|c| c.len() <= 1) {
        return "blocks protocol: one block, the whole set".to_string();
    }
    // Points of several `n` (a `sweep.ns` axis) are cut differently: each `n` whose blocks
    // are not all `b` is named with its own (sixty-eighth hostile round, N2: `[5, 12]` said
    // "the last larger", true of n = 5's one block alone).
    let ns: BTreeSet<usize> = recorded.iter().map(|&(_, n)| n).collect();
    if ns.len() > 1 {
        let odd: Vec<String> = recorded
            .iter()
            .zip(&cut)
            .filter_map(|(&(_, n), c)| match c.as_slice() {
                [_] => Some(format!("n = {n}: one block")),
                [.., last] if *last != b => Some(format!("n = {n}: the last of {last}")),
                _ => None,
            })
            .collect();
        return if odd.is_empty() {
            format!("mean over {b}-sample blocks")
        } else {
            format!("mean over {b}-sample blocks; {}", odd.join(", "))
        };
    }
    let last: BTreeSet<std::cmp::Ordering> = cut
        .iter()
        .filter_map(|c| c.last())
        .map(|&l| l.cmp(&b))
        .collect();
    use std::cmp::Ordering::{Greater, Less};
    let tail = match (last.contains(&Less), last.contains(&Greater)) {
        (false, false) => "",
        (true, false) => ", the last smaller",
        (false, true) => ", the last larger",
        (true, true) => ", the last of another size",
    };
    format!("mean over {b}-sample blocks{tail}")
}

/// What the figures' titles say: each its own, naming the data set `data` and what it
/// shows, unless `--title` asked otherwise (`given`: [`ntk_plot::title_as_asked`]).
#[derive(Clone, Copy, Debug)]
pub struct Titles<'a> {
    pub data: &'a str,
    pub given: Option<&'a str>,
}

impl Titles<'_> {
    /// The title of a figure that shows `what`.
    fn of(&self, what: &str) -> String {
        ntk_plot::title_as_asked(self.given, || format!("{}: {what}", self.data), what)
    }
}

/// The figures of Fig. 2 (of the sweep in `dir`, written into `out`): `min_grad_angle_vs_depth` (when some angle was measured: not by
/// a blocks protocol run block by block) and `kappa_vs_depth_<protocol>` (when some κ is
/// finite or unresolved: singular kernels are open markers), the seed bands from `seeds`;
/// returns their stems.
pub fn figures(
    (dir, out): (&Path, &Path),
    groups: &[GroupRow],
    seeds: &[SeedValue],
    titles: Titles,
    layout: Layout,
) -> crate::Result<Drawn> {
    let planned = plan(dir, groups, seeds, titles);
    save(out, &planned, layout)
}

/// What [`save`] drew ([`ntk_plot::Drawn`]).
pub use ntk_plot::Drawn;

/// Writes the figures of [`plan`] into `out` in `layout`, keeping each caption standing
/// there that the record does not prove the tools' ([`ntk_runs::sweep::keep_edited_captions`]);
/// says what it drew.
pub fn save(out: &Path, figures: &[(String, Figure)], layout: Layout) -> crate::Result<Drawn> {
    let kept = ntk_runs::sweep::keep_edited_captions(out, &ntk_plot::captioned(figures, layout));
    Ok(ntk_plot::save_all(out, figures, layout, kept)?)
}

/// The figures [`figures`] draws, by stem, those with something to draw only: what a plot
/// checks before it writes the first (forty-sixth hostile round, D1: the angle's figure was
/// checked where no angle was measured).
pub fn plan(
    dir: &Path,
    groups: &[GroupRow],
    seeds: &[SeedValue],
    titles: Titles,
) -> Vec<(String, Figure)> {
    let protocols = distinct(groups, |g| g.protocol.clone());
    let first = protocols.first().cloned().unwrap_or_default();
    let finite = |fig: &Figure| {
        fig.series
            .iter()
            .any(|s| s.points.iter().any(|p| p.1.is_finite()) || !s.unresolved.is_empty())
    };
    let mut planned = Vec::new();
    // Points that failed are named on every figure (they have no value to draw).
    let failed = ntk_runs::sweep::failed_note(dir);
    let noted = |mut fig: Figure| {
        if let Some(f) = &failed {
            fig.note = Some(fig.note.map_or(f.clone(), |n| format!("{n}\n{f}")));
        }
        fig
    };
    let angles = noted(angle_figure(groups, seeds, &first, titles));
    if finite(&angles) {
        planned.push(("min_grad_angle_vs_depth".to_string(), angles));
    }
    for protocol in &protocols {
        let fig = noted(kappa_figure(groups, seeds, protocol, titles));
        if finite(&fig) {
            planned.push((format!("kappa_vs_depth_{protocol}"), fig));
        }
    }
    planned
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mean over fewer seeds than the figure's count is named with its count: ReLU at
    /// L = 1 lost 2 of 5 seeds; a point singular for every seed (no mean drawn) and one
    /// with none singular are not listed.
    #[test]
    fn the_note_counts_the_seeds_each_mean_leaves_out() {
        let csv = "protocol,activation,depth,seeds,singular,kappa_mean,kappa_std,kappa_min,kappa_max,log10_kappa_mean,min_grad_angle_mean_deg,min_grad_angle_std_deg,lambda_min_mean,lambda_max_mean,rank_min,theory_min_grad_angle_deg,theory_kappa\n\
            blocks,relu,1,5,2,1e4,1e3,9e3,1.1e4,4,5,0.1,1,1e4,512,,\n\
            blocks,relu,2,5,0,5e3,1e2,4.9e3,5.1e3,3.7,8,0.1,1,5e3,512,,\n\
            blocks,linear,1,5,5,inf,NaN,inf,inf,inf,3,0,0,1,10,,\n";
        let groups: Vec<GroupRow> = ntk_files::table::parse_csv(csv.as_bytes(), "test").unwrap();
        let text = dropped(&curves(&groups, "blocks"));
        assert!(
            text.contains("dropped from the means (singular):"),
            "{text}"
        );
        assert!(text.contains("L=1 (2/5)"), "{text}");
        assert!(!text.contains("L=2") && !text.contains("(5/5)"), "{text}");
        let none = &groups[1..2];
        assert_eq!(dropped(&curves(none, "blocks")), "");
    }

    /// Sixty-ninth hostile round, D1: the settings took four dashes in turn, so the fourth
    /// was dotted, as the theory is (and the note said "dotted: infinite-width theory" with
    /// no theory drawn), and the fifth drawn as the first.
    #[test]
    fn settings_take_looks_of_their_own_and_never_the_theorys_dots() {
        let mut csv = String::from(
            "protocol,setting,activation,depth,seeds,singular,kappa_mean,kappa_std,kappa_min,kappa_max,log10_kappa_mean,min_grad_angle_mean_deg,min_grad_angle_std_deg,lambda_min_mean,lambda_max_mean,rank_min,theory_min_grad_angle_deg,theory_kappa\n",
        );
        for n in [6, 8, 10, 12, 14, 16] {
            csv += &format!("whole,n={n},relu,1,2,0,10,1,9,11,1,5,0.1,1,10,{n},,\n");
        }
        let groups: Vec<GroupRow> = ntk_files::table::parse_csv(csv.as_bytes(), "test").unwrap();
        let drawn = curves(&groups, "whole");
        assert_eq!(drawn.len(), 6);
        assert!(drawn.iter().all(|c| c.dash != Dash::Dotted));
        // In the order a reader counts (as text n=10 came first and n=6 fifth), the
        // first setting solid.
        let names: Vec<&str> = drawn.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "n=6 ReLU",
                "n=8 ReLU",
                "n=10 ReLU",
                "n=12 ReLU",
                "n=14 ReLU",
                "n=16 ReLU"
            ]
        );
        assert_eq!(drawn[0].dash, Dash::Solid);
        for (i, a) in drawn.iter().enumerate() {
            for b in &drawn[i + 1..] {
                assert!(
                    (a.color, a.dash, a.marker) != (b.color, b.dash, b.marker),
                    "{} and {} look alike",
                    a.name,
                    b.name
                );
            }
        }
        let figure = kappa_figure(
            &groups,
            &[],
            "whole",
            Titles {
                data: "d",
                given: None,
            },
        );
        let note = figure.note.unwrap();
        assert!(
            !note.contains("dotted") && !note.contains("look alike"),
            "{note}"
        );
    }

    /// The blocks figure's title says the blocks the points recorded (sixty-sixth hostile
    /// round, D2: "512-sample blocks" whatever they were).
    #[test]
    fn the_blocks_title_says_the_recorded_blocks() {
        let seed = |protocol: &str, blocks_of: Option<(usize, usize)>| SeedValue {
            protocol: protocol.into(),
            setting: String::new(),
            activation: "relu".into(),
            depth: 1,
            kappa: Some(10.0),
            min_grad_angle_deg: None,
            blocks_of,
        };
        let words = |of: &[(usize, usize)]| {
            let mut seeds: Vec<SeedValue> = of.iter().map(|&b| seed("blocks", Some(b))).collect();
            seeds.push(seed("whole", None));
            blocks_words(&seeds)
        };
        assert_eq!(words(&[(8, 24), (8, 16)]), "mean over 8-sample blocks");
        assert_eq!(
            words(&[(8, 20)]),
            "mean over 8-sample blocks, the last smaller"
        );
        assert_eq!(
            words(&[(512, 20)]),
            "blocks protocol: one block, the whole set"
        );
        assert_eq!(words(&[(4, 20), (8, 16)]), "mean over blocks");
        // A remainder of one joins the block before it (sixty-seventh hostile round, D1).
        assert_eq!(
            words(&[(8, 9)]),
            "blocks protocol: one block, the whole set"
        );
        assert_eq!(
            words(&[(8, 17)]),
            "mean over 8-sample blocks, the last larger"
        );
        // Several n: each cut otherwise than in b-sample blocks named with its own
        // (sixty-eighth hostile round, N2).
        assert_eq!(
            words(&[(8, 17), (8, 20)]),
            "mean over 8-sample blocks; n = 17: the last of 9, n = 20: the last of 4"
        );
        assert_eq!(
            words(&[(4, 5), (4, 12)]),
            "mean over 4-sample blocks; n = 5: one block"
        );
        assert_eq!(words(&[(4, 8), (4, 12)]), "mean over 4-sample blocks");
        assert_eq!(
            words(&[(4, 5), (4, 4)]),
            "blocks protocol: one block, the whole set"
        );
        assert_eq!(words(&[]), "mean over blocks");
    }
}
