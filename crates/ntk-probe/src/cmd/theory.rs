//! `ntk-probe theory`: the infinite-width gradient angle phi for input angles and depths.

use crate::CliResult;
use clap::Args;

#[derive(Args)]
pub(crate) struct TheoryArgs {
    /// Input angle(s) theta_in in degrees: one value, a list `5,30,60`, or a range `start:stop:step`.
    #[arg(long, default_value = "5", allow_hyphen_values = true)]
    theta_deg: String,
    /// Depth(s) L: one value, a list, or a range `start:stop:step` (inclusive).
    #[arg(long, default_value = "1", allow_hyphen_values = true)]
    depth: String,
    /// The activation: relu, norm_relu, linear, ... (as model.activation).
    #[arg(long, default_value = "relu")]
    activation: String,
    /// NormReLU's kink b.
    #[arg(long, allow_hyphen_values = true, value_parser = ntk_cli::args::float)]
    kink: Option<f64>,
    /// JSON output (key `phi_deg`); several values give CSV unless --json.
    #[arg(long)]
    json: bool,
}

/// The most values one `theory` call computes.
pub(crate) const MAX_THEORY_VALUES: f64 = 100_000.0;

/// How long a `theory` call runs before it shows its progress.
const PROGRESS_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

/// The deepest network `theory` computes (each layer is one step of the recursion).
pub(crate) const MAX_THEORY_DEPTH: f64 = 10_000.0;

/// Parses `x`, `a,b,c` or `start:stop:step` (inclusive) of finite numbers, at most
/// [`MAX_THEORY_VALUES`] of them.
pub(crate) fn parse_values(s: &str, what: &str) -> CliResult<Vec<f64>> {
    // The text as typed, shown with its control characters escaped (hundred-and-sixth
    // hostile round, D3: a newline in it broke the refusal's line).
    let typed = ntk_runs::quote::controls_escaped(s);
    let bad =
        || format!("--{what} {typed}: expected a number, a list a,b,c or a range start:stop:step");
    // As every number flag is read ([`ntk_cli::args::float`]): a nonzero number that reads
    // as 0 is refused as typed, never taken for 0 (hundredth hostile round, D4:
    // `--theta-deg 1e-400` was the angle 0).
    let num = |t: &str| match (t.trim().parse::<f64>(), ntk_cli::args::float(t)) {
        (Err(_), _) => Err(bad()),
        (Ok(_), Err(why)) => Err(format!(
            "--{what} {typed}: {}",
            ntk_runs::quote::controls_escaped(&why)
        )),
        (Ok(v), Ok(_)) if v.is_finite() => Ok(v),
        (Ok(_), Ok(_)) => Err(format!(
            "--{what} {typed}: {} is not a finite number",
            ntk_runs::quote::controls_escaped(t.trim())
        )),
    };
    let values: Vec<f64> = if let Some((a, rest)) = s.split_once(':') {
        let (b, step_text) = rest.split_once(':').ok_or_else(bad)?;
        let a_text = a;
        let (a, b, step) = (num(a)?, num(b)?, num(step_text)?);
        if step <= 0.0 || b < a {
            return Err(format!(
                "--{what} {typed}: a range start:stop:step needs step > 0 and stop >= start"
            )
            .into());
        }
        let count = ((b - a) / step + 1e-9).floor();
        // NaN (inf / inf) fails this test too. The values are the steps and the start: a
        // whole number where it is one exactly (forty-seventh hostile round, D4: 100,001
        // values were refused as "1.000e5 values; at most 100000").
        if !count.is_finite() || count >= MAX_THEORY_VALUES {
            let values = count + 1.0;
            let shown = if values < 1e15 {
                format!("{values:.0}")
            } else {
                format!("{values:.3e}")
            };
            return Err(format!(
                "--{what} {typed}: {shown} values; at most {MAX_THEORY_VALUES} per call"
            )
            .into());
        }
        // Each value to the decimals its start and step were written with (0:1:0.1 gives
        // 0.3, not 0.30000000000000004; forty-sixth hostile round, N3).
        let digits = decimals(a_text).max(decimals(step_text));
        (0..=count as usize)
            .map(|i| to_decimals(a + step * i as f64, digits))
            .collect()
    } else {
        s.split(',').map(num).collect::<Result<_, _>>()?
    };
    if values.len() as f64 > MAX_THEORY_VALUES {
        return Err(format!(
            "--{what}: {} values; at most {MAX_THEORY_VALUES} per call",
            values.len()
        )
        .into());
    }
    Ok(values)
}

/// A duration for a progress line: `42 s`, `3.5 min`, `2.1 h`.
fn seconds(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// The decimals a number was written with (`0.25` 2, `1e-3` 3, `2.5e1` 0), where the text
/// is a plain decimal or exponent form; 0 for text without decimals.
fn decimals(t: &str) -> usize {
    let t = t.trim();
    let (mantissa, exponent) = match t.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(0)),
        None => (t, 0),
    };
    let written = mantissa.split_once('.').map_or(0, |(_, f)| f.len()) as i64;
    (written - exponent).clamp(0, 400) as usize
}

/// `v` rounded to `digits` decimals through its decimal text (the nearest f64 to the
/// decimal the user would have written), where that keeps 17 significant digits or fewer;
/// otherwise `v` as computed.
fn to_decimals(v: f64, digits: usize) -> f64 {
    let integer_digits = if v.abs() >= 1.0 {
        v.abs().log10().floor() as usize + 1
    } else {
        0
    };
    if integer_digits + digits > 17 {
        return v;
    }
    format!("{v:.digits$}").parse().unwrap_or(v)
}

pub(crate) fn theory_cmd(args: TheoryArgs) -> CliResult<()> {
    let parsed = super::parse_activation("--activation", &args.activation, None)?;
    if let Some(b) = args.kink {
        // The config's own rule for the kink (finite, in range, norm_relu only).
        ntk_model::MlpConfig::new(1, 1, 1, parsed.kind())
            .with_kink(b)
            .validate()
            .map_err(|e| format!("--kink {b:?}: {e}"))?;
    }
    let act = super::parse_activation("--activation", &args.activation, args.kink)?;
    let thetas = parse_values(&args.theta_deg, "theta-deg")?;
    let depths = parse_values(&args.depth, "depth")?;
    // A value given twice is refused, as gmap's and activations' lists refuse one
    // (ninety-fourth hostile round, N5: four equal rows).
    ntk_cli::args::distinct("--theta-deg", &thetas)?;
    ntk_cli::args::distinct("--depth", &depths)?;
    if thetas.len() * depths.len() > MAX_THEORY_VALUES as usize {
        return Err(format!(
            "--theta-deg {} --depth {}: {} values; at most {MAX_THEORY_VALUES} per call",
            ntk_runs::quote::controls_escaped(&args.theta_deg),
            ntk_runs::quote::controls_escaped(&args.depth),
            thetas.len() * depths.len()
        )
        .into());
    }
    for t in &thetas {
        if !(0.0..=180.0).contains(t) {
            return Err(format!("--theta-deg {t}: must be in [0, 180]").into());
        }
    }
    let mut rows = Vec::new();
    // Every value is tried, and the refused ones named together (hundred-and-second hostile
    // round, N4: a list stopped at its first refused value, so a list of angles had to be
    // given one by one to see which are answered).
    let mut refused: Vec<(f64, usize, ntk_probe::Error)> = Vec::new();
    for &d in &depths {
        if d < 0.0 || d.fract() != 0.0 {
            return Err(format!("--depth {d}: must be a non-negative integer").into());
        }
        if d > MAX_THEORY_DEPTH {
            return Err(format!(
                "--depth {d}: at most {MAX_THEORY_DEPTH} (the recursion takes one step per layer)"
            )
            .into());
        }
    }
    // A call that takes long says so on stderr: up front, an estimate where the activation
    // has no closed form (one quadrature per layer and value, a layer timed here), and from
    // [`PROGRESS_AFTER`] on a line of its progress every 30 s (hundred-and-sixth hostile
    // round, N1, and hundred-and-eighth, D4: GELU at depth 10,000 ran 72 s printing
    // nothing, and a bar's one line said "0/2 ... ETA 00:00:00").
    let total = thetas.len() * depths.len();
    let dual = ntk_kernel::theory::DualEvaluator::new(&act);
    if !dual.is_closed_form() {
        let layers = depths.iter().sum::<f64>() * thetas.len() as f64;
        // A layer's quadrature costs more as the correlation nears 1, where deep layers
        // take it: the slower of one layer at 0.5 and one at 0.9999 (hundred-and-ninth
        // hostile round, D4: SELU at depth 10,000 ran 25 s with no estimate).
        // Each the fastest of three, past the first call's setup.
        let layer = |c: f64| {
            (0..3)
                .map(|_| {
                    let timed = std::time::Instant::now();
                    let _ = ntk_kernel::theory::pair_recursion(&dual, 1.0, 1.0, c, 1);
                    timed.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min)
        };
        let estimate = layers * layer(0.5).max(layer(0.9999));
        if estimate >= PROGRESS_AFTER.as_secs_f64() {
            eprintln!(
                "theory: {act} by quadrature, {total} value(s) at depths up to {}: roughly \
                 {} (a layer timed here; the deep layers' quadratures may take half to a few \
                 times as long), its progress shown from 10 s on",
                depths.iter().copied().fold(0.0, f64::max),
                seconds(estimate)
            );
        }
    }
    let start = std::time::Instant::now();
    let said: std::cell::Cell<Option<std::time::Instant>> = std::cell::Cell::new(None);
    // A line is due from PROGRESS_AFTER on, every LOG_EVERY.
    let due = || {
        start.elapsed() >= PROGRESS_AFTER
            && said
                .get()
                .is_none_or(|at| at.elapsed() >= ntk_runs::progress::LOG_EVERY)
    };
    let all_layers = depths.iter().sum::<f64>() * thetas.len() as f64;
    let (mut done, mut layers_done) = (0usize, 0.0f64);
    for &d in &depths {
        for &t in &thetas {
            // Within a value, by its layers (each a quadrature where the activation has no
            // closed form): one value at depth 10,000 ran a minute with no line.
            let mut on_layer = |l: usize| {
                if due() {
                    let elapsed = start.elapsed().as_secs_f64();
                    let past = layers_done + l as f64;
                    let left = time_left(elapsed, (past, all_layers), (done, total));
                    eprintln!(
                        "theory: value {} of {total} (theta_in {t} degrees, depth {d}): layer \
                         {l} of {d} in {}, about {} left",
                        done + 1,
                        seconds(elapsed),
                        seconds(left)
                    );
                    said.set(Some(std::time::Instant::now()));
                }
            };
            match ntk_probe::fig1::checked_theory_phi_deg_observed(
                &act,
                t,
                d as usize,
                "--theta-deg",
                &mut on_layer,
            ) {
                Ok(phi) => rows.push((t, d as usize, phi)),
                Err(e) => refused.push((t, d as usize, e)),
            }
            done += 1;
            layers_done += d;
            // Between values, for many short ones.
            if done < total && due() {
                let elapsed = start.elapsed().as_secs_f64();
                let left = time_left(elapsed, (layers_done, all_layers), (done, total));
                eprintln!(
                    "theory: {done} of {total} values in {}, about {} left",
                    seconds(elapsed),
                    seconds(left)
                );
                said.set(Some(std::time::Instant::now()));
            }
        }
    }
    if let Some((_, _, first)) = refused.first() {
        if rows.is_empty() && refused.len() == 1 {
            return Err(first.to_string().into());
        }
        let mut which: Vec<String> = refused
            .iter()
            .take(10)
            .map(|(t, d, _)| format!("{t} at depth {d}"))
            .collect();
        if refused.len() > 10 {
            which.push(format!("and {} more", refused.len() - 10));
        }
        let others = if rows.is_empty() {
            "none answered".to_string()
        } else {
            format!(
                "the other {} answered but not printed: give them alone",
                rows.len()
            )
        };
        return Err(format!(
            "{} of the {} values refused ({}); {others}; the first refusal: {first}",
            refused.len(),
            refused.len() + rows.len(),
            which.join(", ")
        )
        .into());
    }
    if rows.len() == 1 && !args.json {
        println!("{:.6}", rows[0].2);
    } else if args.json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|(t, d, phi)| {
                serde_json::json!({"theta_in_deg": t, "depth": d, "activation": act.to_string(), "phi_deg": phi})
            })
            .collect();
        let out = if v.len() == 1 {
            v[0].clone()
        } else {
            serde_json::Value::Array(v)
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("serializes")
        );
    } else {
        println!("theta_in_deg,depth,activation,phi_deg");
        for (t, d, phi) in rows {
            println!("{t},{d},{act},{phi:.6}");
        }
    }
    Ok(())
}

/// The time left of a `theory` run `elapsed` seconds in, with `layers` = (done, all) of the
/// recursion's layers and `values` = (done, all): by layers, since value `k` of a depth range
/// takes `k` layers (hundred-and-fifteenth hostile round, D2: by values, `--depth 1:4500:1`
/// said "about 9 s left" at 70 s of 99), by values where no layer is done yet (depth 0).
fn time_left(elapsed: f64, (layers_done, all_layers): (f64, f64), values: (usize, usize)) -> f64 {
    if layers_done > 0.0 {
        elapsed / layers_done * (all_layers - layers_done).max(0.0)
    } else if values.0 > 0 {
        elapsed / values.0 as f64 * values.1.saturating_sub(values.0) as f64
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    /// Left by layers: value k of `--depth 1:100:1` takes k layers, so at value 70 of 100
    /// (2485 of 5050 layers) about 1.03 times the elapsed time is left, not 0.43 times.
    #[test]
    fn the_time_left_is_weighed_by_layers() {
        let left = super::time_left(70.0, (2485.0, 5050.0), (70, 100));
        assert!((left - 70.0 * 2565.0 / 2485.0).abs() < 1e-9, "{left}");
        assert_eq!(super::time_left(3.0, (0.0, 0.0), (3, 6)), 3.0);
        assert_eq!(super::time_left(0.0, (0.0, 10.0), (0, 6)), 0.0);
    }

    use super::parse_values;

    /// A range's values are the decimals the user wrote: `start + i x step` in f64 is
    /// 0.30000000000000004 at 0:1:0.1 (forty-sixth hostile round, N3).
    #[test]
    fn a_range_gives_the_decimals_written() {
        let tenths = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];
        assert_eq!(parse_values("0:1:0.1", "theta-deg").unwrap(), tenths);
        assert_eq!(
            parse_values("1e-3:5e-3:1e-3", "theta-deg").unwrap(),
            [0.001, 0.002, 0.003, 0.004, 0.005]
        );
        assert_eq!(
            parse_values("0.25:1:0.25", "theta-deg").unwrap(),
            [0.25, 0.5, 0.75, 1.0]
        );
        assert_eq!(
            parse_values("1:10:3", "depth").unwrap(),
            [1.0, 4.0, 7.0, 10.0]
        );
        assert_eq!(
            parse_values("2.5e1:30:2.5", "depth").unwrap(),
            [25.0, 27.5, 30.0]
        );
        // One value over the limit, counted as a whole number.
        let e = parse_values("0:180:0.0018", "theta-deg")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(": 100001 values; at most 100000 per call"),
            "{e}"
        );
        let e = parse_values("0:1e300:1", "depth").unwrap_err().to_string();
        assert!(e.contains(": 1.000e300 values;"), "{e}");
        // Too many decimals to round through text: computed as before.
        let tiny = parse_values("1e-300:3e-300:1e-300", "theta-deg").unwrap();
        assert_eq!(tiny.len(), 3);
        assert_eq!(tiny[0], 1e-300);
    }
}
