//! Liu & Hui, Fig. 1: the model-gradient angle phi against the input angle theta_in for
//! depths L = 1, 2, 5, 10 at infinite width (Thm 4.4) with the linear network's diagonal
//! phi = theta_in, and measured points from finite ReLU networks (several widths and seeds)
//! so the finite-width gap shows.
//!
//! Measurement: for each depth, width and seed one network; inputs are the unit vector e_1
//! and, for every theta_in, `cos(theta) e_1 + sin(theta) e_2` (d = 2), all in one batch; phi
//! is read off the structured NTK (`K_0j / sqrt(K_00 K_jj)`).

use std::path::Path;

use ntk_model::{Activation, ActivationKind, Mlp, MlpConfig};
use serde::{Deserialize, Serialize};

use crate::error::Error;

use ntk_kernel::angles;
use ntk_kernel::host;
use ntk_kernel::theory;
use ntk_numerics::backend::Compute;
use ntk_plot::{Dash, Figure, Marker, PALETTE, RGBColor, Scale, Series, Spread};

/// The tables this command writes into its output directory.
pub const TABLES: [&str; 1] = ["fig1.csv"];
/// The first name of each table's header, as it is written, then as older versions wrote
/// it (a table of the user's at its name is refused: `ntk_plot::check_places`;
/// hundred-and-thirtieth hostile round, second review, D1: the header begins `activation`
/// now, and a second run into one `--out` refused the first's table as a user's).
pub const HEADS: [&[&str]; 1] = [&["activation", "theta_in_deg"]];

/// The figures it draws there, by stem (`ntk_plot::is_figure_file`).
pub const STEMS: [&str; 1] = ["fig1"];

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Fig1Point {
    /// The networks' activation (tables written before the column existed are ReLU's).
    #[serde(default = "relu_name")]
    pub activation: String,
    pub theta_in_deg: f64,
    pub depth: usize,
    pub width: usize,
    pub seed: u64,
    pub phi_deg: f64,
    pub theory_phi_deg: f64,
}

fn relu_name() -> String {
    ActivationKind::Relu.name().to_string()
}

/// The largest error of an angle near 180 degrees that [`checked_theory_phi_deg`] answers:
/// a fifth of the half unit of the sixth decimal it is printed to (the one bound of a theory
/// run's `probe.pair` and a sweep's theory column too).
pub use ntk_kernel::theory::MAX_ANGLE_ERROR_DEG;

/// The smallest input angle (degrees, above 0) [`checked_theory_phi_deg`] takes.
pub const MIN_THEORY_ANGLE_DEG: f64 = 1e-300;

/// The infinite-width phi of `act` at depth `depth`, unit-norm inputs at angle `theta_deg`,
/// paper convention ([`theory::grad_angle`]: closed forms for ReLU and the identity, the
/// dual-kernel recursion otherwise; the later version's Fig. 2: ReLU^2, GeLU, tanh) in
/// degrees; refused where the recursion cannot resolve the angle
/// ([`theory::PairRecursion::unresolved_layer`]) or leaves f64's range: a `Sigma_l` or
/// `Theta_l` that is not finite or not a Gram matrix (its off-diagonal entry above the
/// diagonal's geometric mean), or an angle that is not a number
/// (twenty-second hostile round, D7: NaN, or a collapse to 0, with exit 0, where a run of
/// `probe.method = "theory"` refuses the same network naming the overflow).
pub fn checked_theory_phi_deg(
    act: &Activation,
    theta_deg: f64,
    depth: usize,
    flag: &'static str,
) -> crate::Result<f64> {
    checked_theory_phi_deg_observed(act, theta_deg, depth, flag, &mut |_| {})
}

/// [`checked_theory_phi_deg`], calling `on_layer(l)` as each layer of its one recursion
/// through `depth` layers is done ([`ntk_kernel::theory::pair_recursion_observed`]), for a
/// caller that shows its progress. The recursion that judges the digits gives the angle too
/// (each value's recursion ran two or three times, hundred-and-ninth hostile round, D4).
pub fn checked_theory_phi_deg_observed(
    act: &Activation,
    theta_deg: f64,
    depth: usize,
    flag: &'static str,
    on_layer: &mut dyn FnMut(usize),
) -> crate::Result<f64> {
    // An odd activation's phi beyond 90 degrees is 180 minus its phi at the supplement
    // (`theory::grad_angle_deg`), whose digits are those of the distance from 180: answered
    // where its error ([`ntk_kernel::theory::ntk::PairRecursion::angle_error_deg`]) is at
    // most [`MAX_ANGLE_ERROR_DEG`], a fifth of the sixth printed decimal's half unit
    // (hundred-and-first hostile round, D2: 179.999999 gave 180.0 unchecked; hundred-and-second,
    // D1: a correlation the quadrature put past 1 made the bound NaN, which passed;
    // hundred-and-third, D1: tanh's bound was 1.2 times too small, and an error just under
    // 5e-7 flipped the sixth decimal).
    if depth > 0 && theory::odd(act) && theta_deg > 90.0 {
        let mirror = 180.0 - theta_deg;
        if mirror == 0.0 {
            // Opposite inputs: opposite gradients, exactly.
            return Ok(180.0);
        }
        let (near, r) =
            checked_theory_phi_deg_digits(act, (mirror, theta_deg), depth, flag, false, on_layer)?;
        let dual = ntk_kernel::theory::dual::DualEvaluator::new(act);
        if let Some((l, d, error)) = r.angle_error_deg(dual.is_closed_form())
            && error > MAX_ANGLE_ERROR_DEG
        {
            let known = if d <= 0.0 {
                "rounds to 1 (or past it) in f64, where phi is not known".to_string()
            } else {
                format!(
                    "is within {d:.1e} of 1, where phi is known to about {error:.1e} degrees, \
                     more than the {MAX_ANGLE_ERROR_DEG:e} its six printed decimals allow"
                )
            };
            return Err(Error::Config {
                key: flag,
                value: typed(theta_deg),
                reason: format!(
                    "too near 180 degrees for the infinite-width recursion of {act} at depth \
                     {depth} in f64: {act} is odd, so phi is 180 minus phi at 180 - theta_in = \
                     {mirror:e}, whose correlation at layer {l} {known}; give a theta_in \
                     farther from 180"
                ),
            });
        }
        return Ok(180.0 - near);
    }
    checked_theory_phi_deg_digits(act, (theta_deg, theta_deg), depth, flag, true, on_layer)
        .map(|(phi, _)| phi)
}

/// An angle as a refusal names it: as typed where that is short, else in exponent form
/// (hundred-and-third hostile round, N2: 1e-300 came back as "0." and 299 zeros).
fn typed(theta_deg: f64) -> String {
    let plain = format!("{theta_deg}");
    if plain.len() <= 20 {
        plain
    } else {
        format!("{theta_deg:e}")
    }
}

/// [`checked_theory_phi_deg`] without the supplement; `relative`: refused where the angle
/// keeps fewer than six significant digits ([`theory::PairRecursion::unresolved_layer`]),
/// else only where the recursion leaves f64's range (the caller judges the digits); with the
/// recursion ([`ntk_kernel::theory::pair_recursion`] of unit inputs at `theta_deg`). `asked`
/// is the angle the user gave, which an odd activation's supplement replaced (a refusal
/// names it: hundred-and-tenth hostile round, D2, "(theta_in 60 deg)" for 120).
fn checked_theory_phi_deg_digits(
    act: &Activation,
    (theta_deg, asked): (f64, f64),
    depth: usize,
    flag: &'static str,
    relative: bool,
    on_layer: &mut dyn FnMut(usize),
) -> crate::Result<(f64, theory::PairRecursion)> {
    use ntk_kernel::theory::{Scaling, dual::DualEvaluator, pair_recursion_observed};
    // Thirty-second hostile round, D3: an angle this small is, in radians, at or below f64's
    // smallest normal number (2.2e-308), where it carries fewer than its 53 bits.
    if theta_deg > 0.0 && theta_deg < MIN_THEORY_ANGLE_DEG {
        return Err(Error::Config {
            key: flag,
            // In exponent form: `{}` wrote 5e-324 as a 324-digit decimal (forty-fifth
            // hostile round, N2).
            value: format!("{theta_deg:e}"),
            reason: format!(
                "below {MIN_THEORY_ANGLE_DEG:e} degrees the angle in radians nears f64's \
                 smallest normal number, where it keeps fewer than its 53 bits; 0 for parallel \
                 inputs, or a larger angle"
            ),
        });
    }
    let dual = DualEvaluator::new(act);
    let r = pair_recursion_observed(
        &dual,
        &Scaling::paper(dual.activation(), depth),
        [1.0, 1.0, theta_deg.to_radians().cos()],
        on_layer,
    );
    let layer = r.sigma.iter().zip(&r.theta).position(|(s, t)| {
        // Not finite, or not a Gram matrix any more (|K12| above sqrt(K11 K22) beyond
        // rounding: the dual kernel's precision is gone, and the angle collapsed to 0).
        let gram = |k: &[f64; 3]| k[2].abs() <= (k[0] * k[1]).sqrt() * (1.0 + 1e-9);
        s.iter().chain(t).any(|v| !v.is_finite()) || !gram(s) || !gram(t)
    });
    // Past the range check: a recursion that left f64's range is refused for that.
    if layer.is_none()
        && relative
        && !theory::grad_angle_exact_at_every_angle(act, depth)
        && theta_deg > 0.0
        && let Some((l, d)) = r.unresolved_layer()
    {
        // Thirty-first hostile round, D3: an angle formed from a correlation this near 1
        // has lost its digits (ReLU's was 97% off at 1e-7 deg, depth 50, before its closed
        // form was made exact); refused rather than printed.
        // "within 0.0e0 of 1" said "is 1" (hundred-and-third hostile round, N2).
        let near = if d > 0.0 {
            format!("is within {d:.1e} of 1")
        } else {
            "rounds to 1".to_string()
        };
        return Err(Error::Config {
            key: flag,
            value: typed(theta_deg),
            reason: format!(
                "too small an angle for the infinite-width recursion of {act} at depth {depth} \
                 in f64: at layer {l} the inputs' correlation {near}, where an angle keeps \
                 fewer than six significant digits (it needs at least {:.1e}: {:.0e} for \
                 each of the {} layers, the input's included); give a larger theta_in (ReLU, \
                 leaky ReLU and linear networks are exact at every angle)",
                // The rule as applied (hundred-and-eleventh hostile round, N5: "1.4e-9 ...
                // needs 1e-9 per layer" read as met).
                ntk_kernel::theory::MIN_ONE_MINUS_RHO_PER_LAYER * (depth as f64 + 1.0),
                ntk_kernel::theory::MIN_ONE_MINUS_RHO_PER_LAYER,
                depth + 1
            ),
        });
    }
    // The recursion's own angle where `grad_angle_deg` takes the recursion (the same
    // inputs, so the same bits), else its exact route.
    let phi = if theory::grad_angle_exact_at_every_angle(act, depth)
        || (theory::odd(act) && theta_deg > 90.0)
    {
        theory::grad_angle_deg(act, theta_deg, depth)
    } else {
        r.grad_angle().to_degrees()
    };
    if layer.is_some() || !phi.is_finite() {
        return Err(Error::Config {
            key: "--activation, --depth",
            value: format!("{act}, depth {depth}"),
            reason: format!(
                "the infinite-width recursion leaves f64's range{} (theta_in {asked} deg{}): \
                 no angle can be formed; a shallower network{}",
                layer.map_or_else(String::new, |l| format!(" at layer {l}")),
                if asked == theta_deg {
                    String::new()
                } else {
                    format!(", formed from its supplement {theta_deg} deg: {act} is odd")
                },
                // Only an activation with a parameter has one to make smaller
                // (hundred-and-eighth hostile round, N2: said of tanh).
                if act.kind().param().is_some() {
                    " or a smaller parameter"
                } else {
                    ""
                }
            ),
        });
    }
    Ok((phi, r))
}

/// Measures phi of networks with activation `act` for every (depth, width, seed) at the
/// given input angles.
pub fn measure(
    compute: &Compute,
    act: &Activation,
    thetas_deg: &[f64],
    depths: &[usize],
    widths: &[usize],
    seeds: &[u64],
) -> crate::Result<Vec<Fig1Point>> {
    let n = thetas_deg.len() + 1;
    let mut x = vec![0.0; 2 * n];
    x[0] = 1.0;
    for (j, t) in thetas_deg.iter().enumerate() {
        x[2 * (j + 1)] = t.to_radians().cos();
        x[2 * (j + 1) + 1] = t.to_radians().sin();
    }
    let mut out = Vec::new();
    for &depth in depths {
        for &width in widths {
            for &seed in seeds {
                // The activation's own parameter (twenty-second hostile round, D8: the
                // family's default was measured beside the given parameter's theory).
                let mut cfg = MlpConfig::new(2, width, depth, act.kind()).with_seed(seed);
                if let Some(p) = act.param() {
                    cfg = cfg.with_activation_param(p);
                }
                let mlp = Mlp::new(&cfg, &compute.device, compute.dtype())?;
                let k = host::ntk::<f64>(&mlp, &x, n, &[0]);
                for (j, &t) in thetas_deg.iter().enumerate() {
                    out.push(Fig1Point {
                        activation: act.to_string(),
                        theta_in_deg: t,
                        depth,
                        width,
                        seed,
                        phi_deg: angles::angle_deg(&k, 0, j + 1),
                        theory_phi_deg: checked_theory_phi_deg(act, t, depth, "--thetas")?,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Mean and sample standard deviation over seeds of phi at one (depth, width, theta_in).
pub fn mean_sd(points: &[Fig1Point], depth: usize, width: usize, theta_deg: f64) -> (f64, f64) {
    ntk_runs::stats::mean_std(&phis_at(points, depth, width, theta_deg))
}

/// The measured phi of every seed at one (depth, width, theta_in), in degrees.
fn phis_at(points: &[Fig1Point], depth: usize, width: usize, theta_deg: f64) -> Vec<f64> {
    points
        .iter()
        .filter(|p| p.depth == depth && p.width == width && p.theta_in_deg == theta_deg)
        .map(|p| p.phi_deg)
        .collect()
}

/// Writes `fig1.csv` (every measured point beside its theory value) and `fig1.{png,svg,pdf}`.
pub fn write(
    out: &Path,
    act: &Activation,
    points: &[Fig1Point],
    depths: &[usize],
    widths: &[usize],
) -> crate::Result<()> {
    std::fs::create_dir_all(out).map_err(|source| ntk_files::Error::Write {
        path: out.to_path_buf(),
        source,
    })?;
    ntk_plot::clean_leftovers(out, &TABLES, &STEMS);
    ntk_files::table::write_csv(&out.join("fig1.csv"), points)?;
    Ok(figure(act, points, depths, widths).save(&out.join("fig1"))?)
}

/// Reads back the `fig1.csv` written by [`write`] in `out`.
pub fn read(out: &Path) -> crate::Result<(Activation, Vec<Fig1Point>)> {
    let path = out.join("fig1.csv");
    // Missing: nothing there (a FIFO or a directory in its place is refused by the reader as
    // not a regular file, not called missing: thirty-sixth hostile round, N2).
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(crate::Error::BadTable {
            path,
            reason: "missing (run `ntk-probe fig1` first)".into(),
        });
    }
    let points: Vec<Fig1Point> = ntk_files::table::read_csv(&path)?;
    if points.is_empty() {
        return Err(crate::Error::BadTable {
            path,
            reason: "no rows".into(),
        });
    }
    // Each row's activation as `--activation` reads it (thirty-fifth hostile round, D1: a
    // name that is none, or a parameter out of range, was drawn as ReLU's figure, exit 0).
    let acts = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            Activation::read_words(&p.activation).map_err(|e| crate::Error::BadTable {
                path: path.clone(),
                reason: match e {
                    e @ (ntk_model::activation::WordsError::Param(_)
                    | ntk_model::activation::WordsError::Symbol { .. }
                    | ntk_model::activation::WordsError::Underflow { .. }) => {
                        format!("row {}: activation {:?}: {e}", i + 1, p.activation)
                    }
                    ntk_model::activation::WordsError::Unknown => format!(
                        "row {}: activation {:?} is not an activation ({})",
                        i + 1,
                        p.activation,
                        ActivationKind::list()
                    ),
                },
            })
        })
        .collect::<crate::Result<Vec<Activation>>>()?;
    // One figure is of one activation: its theory curves are drawn for it (thirty-fourth
    // hostile round, D1: a table of two was drawn as the first's, exit 0). Compared as
    // activations, not as text: `alpha=0.10` is `alpha=0.1`.
    let first = acts[0];
    let same = |a: &Activation| a.kind() == first.kind() && a.param() == first.param();
    if let Some(i) = acts.iter().position(|a| !same(a)) {
        return Err(crate::Error::BadTable {
            path,
            reason: format!(
                "its rows name two activations, {} (row 1) and {} (row {}): a figure is of \
                 one activation's networks",
                points[0].activation,
                points[i].activation,
                i + 1
            ),
        });
    }
    check_rows(&path, &first, &points)?;
    Ok((first, points))
}

/// Refuses rows of an edited `fig1.csv` (eighty-seventh hostile round, N1: a cut number, a NaN
/// phi, a seed listed twice, a theory value of 50 where the table had 36.7 were all drawn):
/// angles that are not numbers in [0, 180], one (θ_in, depth, width, seed) twice, and a
/// `theory_phi_deg` that is not the infinite-width angle of its θ_in and depth
/// ([`checked_theory_phi_deg`], formed again; to 1e-9 relative, the table holding it to
/// full precision).
fn check_rows(path: &Path, act: &Activation, points: &[Fig1Point]) -> crate::Result<()> {
    let bad = |i: usize, reason: String| crate::Error::BadTable {
        path: path.to_path_buf(),
        reason: format!("row {}: {reason}", i + 1),
    };
    let mut seen = std::collections::BTreeMap::new();
    for (i, p) in points.iter().enumerate() {
        for (name, v) in [
            ("theta_in_deg", p.theta_in_deg),
            ("phi_deg", p.phi_deg),
            ("theory_phi_deg", p.theory_phi_deg),
        ] {
            if !(0.0..=180.0).contains(&v) {
                return Err(bad(
                    i,
                    format!("{name} {v} is not an angle in [0, 180] degrees"),
                ));
            }
        }
        // A network has a width, as `fig1 --widths` requires (ninetieth hostile round, D3: a
        // width of 0 was drawn, with a legend entry for a depth it had no row at).
        if p.width == 0 {
            return Err(bad(
                i,
                "width 0: a measured network has at least one unit a layer".to_string(),
            ));
        }
        let key = (p.theta_in_deg.to_bits(), p.depth, p.width, p.seed);
        if let Some(first) = seen.insert(key, i) {
            return Err(bad(
                i,
                format!(
                    "theta_in_deg {}, depth {}, width {}, seed {} is row {}'s too: one \
                     network's angle is measured once",
                    p.theta_in_deg,
                    p.depth,
                    p.width,
                    p.seed,
                    first + 1
                ),
            ));
        }
        let theory = checked_theory_phi_deg(act, p.theta_in_deg, p.depth, "theta_in_deg")
            .map_err(|e| bad(i, e.to_string()))?;
        if (theory - p.theory_phi_deg).abs() > 1e-9 * theory.abs().max(1e-300) {
            return Err(bad(
                i,
                format!(
                    "theory_phi_deg {} is not the infinite-width angle at theta_in_deg {} and \
                     depth {} ({theory}): edited",
                    p.theory_phi_deg, p.theta_in_deg, p.depth
                ),
            ));
        }
    }
    // Every network at every angle, as `fig1` measures them: each mean over the same seeds,
    // each (depth, width) of the legend with its points (ninetieth hostile round, D3: a row
    // removed was drawn under "mean over 2 seeds", a width edited gained a legend entry).
    let count = |f: &dyn Fn(&Fig1Point) -> u64| {
        points
            .iter()
            .map(f)
            .collect::<std::collections::BTreeSet<u64>>()
            .len()
    };
    let grid = count(&|p| p.theta_in_deg.to_bits())
        * count(&|p| p.depth as u64)
        * count(&|p| p.width as u64)
        * count(&|p| p.seed);
    if points.len() != grid {
        return Err(crate::Error::BadTable {
            path: path.to_path_buf(),
            reason: format!(
                "{} rows, where its angles, depths, widths and seeds make {grid}: fig1 measures \
                 every network at every angle, and each point is a mean over the same seeds",
                points.len()
            ),
        });
    }
    Ok(())
}

/// Redraws `fig1.{png,svg,pdf}` in `out` from its `fig1.csv` alone (no network is built);
/// the depths and widths are those of the table.
pub fn redraw(out: &Path) -> crate::Result<()> {
    let (act, points) = read(out)?;
    let sorted = |f: fn(&Fig1Point) -> usize| {
        let mut v: Vec<usize> = points.iter().map(f).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (depths, widths) = (sorted(|p| p.depth), sorted(|p| p.width));
    ntk_plot::clean_leftovers(out, &[], &STEMS);
    Ok(figure(&act, &points, &depths, &widths).save(&out.join("fig1"))?)
}

/// How far apart (in θ_in) the measurements of neighbouring widths are drawn.
const DODGE_DEG: f64 = 1.5;

/// The line style and marker of the measurements at the `i`-th width.
fn width_style(i: usize) -> (Dash, Marker) {
    [
        (Dash::Dotted, Marker::Circle),
        (Dash::DashDot, Marker::Square),
    ][i % 2]
}

/// Fig. 1: φ against θ_in, the linear network's diagonal, the infinite-width curve of
/// each depth (solid) and the measurements of each width (mean over seeds, bars from the
/// seeds' min to max).
fn figure(act: &Activation, points: &[Fig1Point], depths: &[usize], widths: &[usize]) -> Figure {
    let kind = act.kind();
    let grid: Vec<f64> = (0..=180).map(|i| i as f64).collect();
    let line = |label: String, points, color, dash| Series {
        label,
        points,
        spread: None,
        color,
        dash,
        marker: None,
        unresolved: vec![],
    };
    let mut series = vec![line(
        "linear network (φ = θ_in)".into(),
        grid.iter().map(|&t| (t, t)).collect(),
        RGBColor(0, 0, 0),
        Dash::Dashed,
    )];
    for (c, &depth) in depths.iter().enumerate() {
        // Depth takes the ramp's colour, as in every figure whose curves are depths.
        let color = ntk_plot::ramp(c, depths.len());
        let phi = |t: f64| theory::grad_angle(act, t.to_radians(), depth).to_degrees();
        series.push(line(
            format!("L = {depth}, infinite width"),
            grid.iter().map(|&t| (t, phi(t))).collect(),
            color,
            Dash::Solid,
        ));
        for (wi, &width) in widths.iter().enumerate() {
            let mut s = measured(points, depth, width);
            // Widths side by side (dodged by DODGE_DEG) so neither hides the other.
            let shift = (wi as f64 - (widths.len() as f64 - 1.0) / 2.0) * DODGE_DEG;
            s.points.iter_mut().for_each(|p| p.0 += shift);
            s.color = color;
            (s.dash, s.marker) = {
                let (d, m) = width_style(wi);
                (d, Some(m))
            };
            series.push(s);
        }
    }
    let seeds = {
        let mut v: Vec<u64> = points.iter().map(|p| p.seed).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    Figure {
        title: if kind == ActivationKind::Relu {
            "Fig. 1: model-gradient angle vs input angle (ReLU)".into()
        } else {
            format!(
                "Later version, Fig. 2: model-gradient angle vs input angle ({})",
                // With its parameter (`leaky_relu(alpha=0.5)`), in its own spelling.
                ntk_plot::style::words(&act.to_string())
            )
        },
        x_label: "input angle θ_in (°)".into(),
        y_label: "model-gradient angle φ (°)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series,
        note: Some(format!(
            "solid: infinite width ({})\nmarkers: mean over {seeds} seeds\nbars: min to max over the seeds\nwidths drawn {DODGE_DEG}° apart in θ_in",
            if kind == ActivationKind::Relu {
                "Thm 4.4"
            } else {
                "dual-kernel recursion"
            }
        )),
    }
}

/// The measured angles of one (depth, width): mean and spread over seeds at each θ_in.
fn measured(points: &[Fig1Point], depth: usize, width: usize) -> Series {
    let mut thetas: Vec<f64> = points
        .iter()
        .filter(|p| p.depth == depth && p.width == width)
        .map(|p| p.theta_in_deg)
        .collect();
    thetas.sort_by(f64::total_cmp);
    thetas.dedup();
    // The spread is the seeds' min to max, as in every figure of both tools; the mean is
    // `mean_sd`'s, from the same values.
    let stats: Vec<(f64, f64, f64, f64)> = thetas
        .iter()
        .map(|&t| {
            let phis = phis_at(points, depth, width, t);
            let lo = phis.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = phis.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (t, ntk_runs::stats::mean_std(&phis).0, lo, hi)
        })
        .collect();
    Series {
        label: format!("L = {depth}, width {width}"),
        points: stats.iter().map(|s| (s.0, s.1)).collect(),
        spread: Some(Spread::Bars(stats.iter().map(|s| (s.2, s.3)).collect())),
        color: PALETTE[0],
        dash: Dash::Dotted,
        marker: Some(Marker::Circle),
        unresolved: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ntk_numerics::backend::{self, Precision};

    /// The hundred-and-ninth hostile round, D4: a value's one recursion reports each layer,
    /// in order, and gives the angle the recursion route gives, bit for bit (the recursion
    /// that judged the digits gave the angle once more before).
    #[test]
    fn a_value_reports_each_layer_and_keeps_its_bits() {
        for kind in [
            ActivationKind::Gelu,
            ActivationKind::Tanh,
            ActivationKind::Selu,
            ActivationKind::Relu,
        ] {
            let act = Activation::new(kind, None);
            for (theta, depth) in [(45.0, 7), (120.0, 3), (1.0, 20), (30.0, 0)] {
                let mut seen = Vec::new();
                let phi = checked_theory_phi_deg_observed(&act, theta, depth, "--t", &mut |l| {
                    seen.push(l)
                })
                .unwrap();
                assert_eq!(seen, (1..=depth).collect::<Vec<_>>(), "{kind:?} {theta}");
                let want = theory::grad_angle_deg(&act, theta, depth);
                assert_eq!(phi.to_bits(), want.to_bits(), "{kind:?} {theta} {depth}");
            }
        }
    }

    /// Thirty-first hostile round, D3: ReLU and the identity keep their digits at any angle
    /// (ReLU at 1e-7 deg, depth 50, against 60-digit mpmath); the recursion of another
    /// activation refuses an angle it cannot resolve rather than print lost digits.
    #[test]
    #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
    fn small_angles_are_exact_or_refused() {
        let relu = Activation::new(ActivationKind::Relu, None);
        let phi = checked_theory_phi_deg(&relu, 1e-7, 50, "--thetas").unwrap();
        assert!(
            (phi / 0.0095492965248805588544 - 1.0).abs() < 1e-12,
            "{phi}"
        );
        // Leaky ReLU (alpha 0.01) by its angle recursion, exact at every angle (forty-ninth
        // hostile round, N1: refused below about 1e-3 degrees), against mpmath's NTK recursion
        // on the cosine at 60 digits.
        let leaky = Activation::new(ActivationKind::LeakyRelu, None);
        #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
        for (deg, want) in [
            (0.01, 2.987547652198096408),
            (1e-7, 0.0094533309061238804209),
        ] {
            let phi = checked_theory_phi_deg(&leaky, deg, 50, "--thetas").unwrap();
            assert!((phi / want - 1.0).abs() < 1e-12, "{deg}: {phi} vs {want}");
        }
        // At the ends of the range (fiftieth hostile round, D1): `|z|` maps opposite inputs
        // as parallel ones (phi 0 at 180 degrees, not 1.3e-6), and alpha 1 is the identity.
        let abs = Activation::new(ActivationKind::LeakyRelu, Some(-1.0));
        assert_eq!(
            checked_theory_phi_deg(&abs, 180.0, 7, "--thetas").unwrap(),
            0.0
        );
        let identity = Activation::new(ActivationKind::LeakyRelu, Some(1.0));
        for deg in [1e-160, 179.99999999999] {
            let phi = checked_theory_phi_deg(&identity, deg, 7, "--thetas").unwrap();
            assert_eq!(phi, deg);
        }
        let linear = Activation::new(ActivationKind::Linear, None);
        let phi = checked_theory_phi_deg(&linear, 1e-9, 10, "--thetas").unwrap();
        assert!((phi / 1e-9 - 1.0).abs() < 1e-15, "{phi}");
        let gelu = Activation::new(ActivationKind::Gelu, None);
        let e = checked_theory_phi_deg(&gelu, 1e-5, 10, "--thetas")
            .unwrap_err()
            .to_string();
        // Thirty-second hostile round, N2: the flag named is the command's own.
        assert!(
            e.contains("too small an angle") && e.contains("at layer") && e.contains("--thetas"),
            "{e}"
        );
        // Hundred-and-third hostile round, N2: 1e-299 is named in exponent form, not as "0."
        // and 298 zeros, and a correlation that rounds to 1 is said to.
        let e = checked_theory_phi_deg(&gelu, 1e-299, 2, "--theta-deg")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--theta-deg = 1e-299:")
                && e.contains("correlation rounds to 1")
                && e.len() < 400,
            "{e}"
        );
        // D3: below 1e-300 degrees the radians are near subnormal: refused, naming the flag.
        let e = checked_theory_phi_deg(&relu, 1e-301, 2, "--theta-deg")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--theta-deg") && e.contains("1e-300"), "{e}");
        let e = checked_theory_phi_deg(&relu, 5e-324, 2, "--theta-deg")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--theta-deg = 5e-324"), "{e}");
        assert!(checked_theory_phi_deg(&gelu, 1.0, 10, "--thetas").unwrap() > 1.0);
        assert_eq!(
            checked_theory_phi_deg(&gelu, 0.0, 10, "--thetas").unwrap(),
            0.0
        );
    }

    #[test]
    fn the_figure_redraws_from_its_table_alone() {
        let compute = backend::select(Some("flex"), Precision::F64).unwrap();
        let relu = Activation::new(ActivationKind::Relu, None);
        let points = measure(&compute, &relu, &[10.0, 90.0], &[1, 3], &[8, 16], &[1, 2]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &relu, &points, &[1, 3], &[8, 16]).unwrap();
        let csv = std::fs::read(dir.path().join("fig1.csv")).unwrap();
        std::fs::remove_file(dir.path().join("fig1.png")).unwrap();
        redraw(dir.path()).unwrap();
        assert!(dir.path().join("fig1.png").exists());
        assert_eq!(std::fs::read(dir.path().join("fig1.csv")).unwrap(), csv);
        let svg = std::fs::read_to_string(dir.path().join("fig1.svg")).unwrap();
        assert!(svg.contains("θ_in") && svg.contains("φ"));
        assert_eq!(read(dir.path()).unwrap().1.len(), points.len());
        let empty = tempfile::tempdir().unwrap();
        let e = redraw(empty.path()).unwrap_err().to_string();
        assert!(e.contains("fig1.csv") && e.contains("missing"), "{e}");
        // Thirty-fourth hostile round, D1: rows of two activations are refused, naming both.
        let text = String::from_utf8(csv).unwrap();
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        lines[2] = lines[2].replacen("relu", "tanh", 1);
        std::fs::write(dir.path().join("fig1.csv"), lines.join("\n") + "\n").unwrap();
        let e = redraw(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("fig1.csv") && e.contains("relu (row 1)") && e.contains("tanh (row 2)"),
            "{e}"
        );
        // Round 91, N4: a seed that is no seed is named by its column, counted from 1.
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        let mut fields: Vec<&str> = lines[16].split(',').collect();
        fields[4] = "-1";
        lines[16] = fields.join(",");
        std::fs::write(dir.path().join("fig1.csv"), lines.join("\n") + "\n").unwrap();
        let e = redraw(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("fig1.csv: line 17, column 5 (seed): \"-1\": invalid digit"),
            "{e}"
        );
        // Thirty-fifth hostile round, D1: a name that is no activation, or a parameter out of
        // range, was drawn as ReLU's figure; now refused naming the row and the value, as
        // `--activation` refuses it. The same activation spelled two ways is one (N1).
        let with_activations = |first: &str, rest: &str| {
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            for (i, line) in lines.iter_mut().enumerate().skip(1) {
                let name = if i == 1 { first } else { rest };
                *line = line.replacen("relu", &format!("\"{name}\""), 1);
            }
            std::fs::write(dir.path().join("fig1.csv"), lines.join("\n") + "\n").unwrap();
            redraw(dir.path())
        };
        for bad in ["bogus", "Leaky_ReLU(alpha=0.1)"] {
            let e = with_activations(bad, bad).unwrap_err().to_string();
            assert!(
                e.contains("fig1.csv")
                    && e.contains(&format!("row 1: activation {bad:?} is not an activation")),
                "{bad}: {e}"
            );
        }
        // A parameter out of range is refused with its range (round 91, N6).
        for (bad, value) in [
            ("leaky_relu(alpha=nan)", "NaN"),
            ("leaky_relu(alpha=5)", "5.0"),
        ] {
            let e = with_activations(bad, bad).unwrap_err().to_string();
            assert!(
                e.contains("fig1.csv")
                    && e.contains(&format!(
                        "row 1: activation {bad:?}: leaky_relu's negative slope alpha = {value} \
                         must be finite, in [-1, 1]"
                    )),
                "{bad}: {e}"
            );
        }
        // A ReLU table's theory values under another activation's name: edited.
        let e = with_activations("leaky_relu(alpha=0.1)", "leaky_relu( alpha = 0.10 )")
            .unwrap_err()
            .to_string();
        assert!(e.contains("theory_phi_deg") && e.contains("edited"), "{e}");
        let e = with_activations("leaky_relu(alpha=0.1)", "leaky_relu(alpha=0.2)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("two activations"), "{e}");
        // A leaky ReLU table with its activation spelled two ways is one activation's.
        let leaky = Activation::new(ActivationKind::LeakyRelu, Some(0.1));
        let points = measure(&compute, &leaky, &[10.0, 90.0], &[1, 3], &[8], &[1]).unwrap();
        write(dir.path(), &leaky, &points, &[1, 3], &[8]).unwrap();
        let table = std::fs::read_to_string(dir.path().join("fig1.csv")).unwrap();
        let mut lines: Vec<String> = table.lines().map(String::from).collect();
        let spelled = lines[1].split(',').next().unwrap().to_string();
        lines[2] = lines[2].replacen(&spelled, "\"leaky_relu( alpha = 0.10 )\"", 1);
        std::fs::write(dir.path().join("fig1.csv"), lines.join("\n") + "\n").unwrap();
        redraw(dir.path()).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("fig1.svg")).unwrap();
        assert!(svg.contains("alpha = 0.1)"), "the title's activation");
    }

    /// Eighty-seventh hostile round, N1: an edited `fig1.csv` was drawn whatever it held. A
    /// number cut short, a NaN angle, a network measured twice and a theory value that is not
    /// the infinite-width angle are refused, naming the row.
    #[test]
    fn an_edited_table_is_refused_by_the_redraw() {
        let compute = backend::select(Some("flex"), Precision::F64).unwrap();
        let relu = Activation::new(ActivationKind::Relu, None);
        let points = measure(&compute, &relu, &[10.0, 90.0], &[2], &[8], &[1, 2]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &relu, &points, &[2], &[8]).unwrap();
        let text = std::fs::read_to_string(dir.path().join("fig1.csv")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let cells =
            |row: usize| -> Vec<String> { lines[row].split(',').map(String::from).collect() };
        let header: Vec<&str> = lines[0].split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let with_row = |row: usize, cells: Vec<String>| {
            let mut all: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            all[row] = cells.join(",");
            std::fs::write(dir.path().join("fig1.csv"), all.join("\n") + "\n").unwrap();
            redraw(dir.path()).unwrap_err().to_string()
        };
        let mut cut = cells(1);
        let theory = cut[col("theory_phi_deg")].clone();
        cut[col("theory_phi_deg")] = theory[..theory.len().min(3)].to_string();
        let mut nan = cells(1);
        nan[col("phi_deg")] = "NaN".into();
        let mut twice = cells(2);
        twice[col("seed")] = cells(1)[col("seed")].clone();
        twice[col("theta_in_deg")] = cells(1)[col("theta_in_deg")].clone();
        let mut narrow = cells(1);
        narrow[col("width")] = "0".into();
        let mut other_seed = cells(1);
        other_seed[col("seed")] = "7".into();
        for (what, row, edited, says) in [
            ("cut", 1, cut, "theory_phi_deg"),
            ("NaN", 1, nan, "phi_deg NaN is not an angle"),
            ("twice", 2, twice, "is row 1's too"),
            ("width 0", 1, narrow, "width 0"),
            (
                "a seed of its own",
                1,
                other_seed,
                "every network at every angle",
            ),
        ] {
            let e = with_row(row, edited);
            assert!(e.contains("fig1.csv") && e.contains(says), "{what}: {e}");
        }
    }
}
