//! The figures of a probe sweep (Liu & Hui, Fig. 2): minimum gradient angle and kappa (log
//! scale) against depth, one curve per (setting, activation), relu solid and linear dashed
//! as in the paper, theory dotted in the same colour.

use std::path::{Path, PathBuf};

use ntk_core::plot::{Dash, Figure, PALETTE, RGBColor, Series};

use super::GroupRow;

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
    dash: Dash,
    color: RGBColor,
    rows: Vec<&'a GroupRow>,
}

impl Curve<'_> {
    fn series(&self, label: String, points: Vec<(f64, f64)>, errors: Option<Vec<f64>>) -> Series {
        Series {
            label,
            points,
            errors,
            color: self.color,
            dash: self.dash,
            markers: true,
        }
    }

    /// The infinite-width values `th` as a dotted line, when there are any.
    fn theory(&self, th: impl Fn(&GroupRow) -> Option<f64>) -> Option<Series> {
        let points: Vec<(f64, f64)> = self
            .rows
            .iter()
            .filter_map(|g| th(g).map(|t| (g.depth as f64, t)))
            .collect();
        (!points.is_empty()).then(|| Series {
            label: format!("{} (infinite width)", self.name),
            points,
            errors: None,
            color: self.color,
            dash: Dash::Dotted,
            markers: false,
        })
    }
}

/// The curves of `protocol`, one per (setting, activation) of the sweep, in a fixed order
/// and colour.
fn curves<'a>(groups: &'a [GroupRow], protocol: &str) -> Vec<Curve<'a>> {
    let keys = distinct(groups, |g| (g.setting.clone(), g.activation.clone()));
    keys.iter()
        .enumerate()
        .map(|(c, (setting, activation))| {
            let rows: Vec<&GroupRow> = groups
                .iter()
                .filter(|g| &g.setting == setting && &g.activation == activation)
                .filter(|g| g.protocol == protocol)
                .collect();
            let name = if setting.is_empty() {
                keys[c].1.clone()
            } else {
                format!("{setting} {}", keys[c].1)
            };
            Curve {
                name,
                dash: dash_for(activation),
                color: PALETTE[c % PALETTE.len()],
                rows,
            }
        })
        .collect()
}

/// The minimum gradient angle against depth (a property of the whole kernel: drawn from
/// the first protocol's groups).
fn angle_figure(groups: &[GroupRow], protocol: &str, title: &str) -> Figure {
    let mut series = Vec::new();
    for curve in curves(groups, protocol) {
        series.push(
            curve.series(
                format!("{} (measured, mean over seeds)", curve.name),
                curve
                    .rows
                    .iter()
                    .map(|g| (g.depth as f64, g.min_grad_angle_mean_deg))
                    .collect(),
                Some(
                    curve
                        .rows
                        .iter()
                        .map(|g| g.min_grad_angle_std_deg)
                        .collect(),
                ),
            ),
        );
        series.extend(curve.theory(|g| g.theory_min_grad_angle_deg));
    }
    Figure {
        title: format!("{title}: minimum model-gradient angle"),
        x_label: "depth L".into(),
        y_label: "min pairwise gradient angle (deg)".into(),
        log_y: false,
        series,
    }
}

/// kappa (log scale) against depth under `protocol`; the theory on the whole-set kernel.
fn kappa_figure(groups: &[GroupRow], protocol: &str, title: &str) -> Figure {
    let mut series = Vec::new();
    for curve in curves(groups, protocol) {
        let singular_all = curve.rows.iter().all(|g| g.singular == g.seeds);
        let label = if singular_all {
            format!("{}: singular at every depth (kappa = inf)", curve.name)
        } else {
            format!("{} (measured)", curve.name)
        };
        let points = curve
            .rows
            .iter()
            .map(|g| (g.depth as f64, g.kappa_mean))
            .collect();
        series.push(curve.series(label, points, None));
        if protocol == "whole" {
            series.extend(curve.theory(|g| g.theory_kappa));
        }
    }
    Figure {
        title: format!("{title}: NTK condition number ({protocol} protocol)"),
        x_label: "depth L".into(),
        y_label: "kappa (log scale)".into(),
        log_y: true,
        series,
    }
}

/// The figures of Fig. 2: `min_grad_angle_vs_depth` and `kappa_vs_depth_<protocol>` (when
/// some kappa is finite); returns their stems.
pub fn figures(out: &Path, groups: &[GroupRow], title: &str) -> crate::Result<Vec<PathBuf>> {
    let protocols = distinct(groups, |g| g.protocol.clone());
    let first = protocols.first().cloned().unwrap_or_default();
    let stem = out.join("min_grad_angle_vs_depth");
    angle_figure(groups, &first, title).save(&stem)?;
    let mut written = vec![stem];
    for protocol in &protocols {
        let fig = kappa_figure(groups, protocol, title);
        if fig
            .series
            .iter()
            .any(|s| s.points.iter().any(|p| p.1.is_finite()))
        {
            let stem = out.join(format!("kappa_vs_depth_{protocol}"));
            fig.save(&stem)?;
            written.push(stem);
        }
    }
    Ok(written)
}
