//! Agarwal, Awasthi & Kale, Fig. 6 (appendix I.1): the transfer functions of NormReLU (and
//! any other activation beside it) from [`ntk_kernel::theory::transfer`]: the norm transfer
//! `N(q)` with its slope `N'(q)` beside the identity, whose crossing at `q = 1` is the
//! fixed point of `q_{l+1} = N(q_l)`, and the bias `B(q)`.
//!
//! Writes `transfer.csv` (`activation`, `q`, `mean`, `norm`, `norm_slope`, `bias`: one row
//! per activation and variance), `transfer_norm.{png,svg,pdf}` and `transfer_bias.{png,svg,pdf}`.

use std::path::Path;

use ntk_files::table::number;
use ntk_model::Activation;
use ntk_plot::{Dash, Figure, PALETTE, RGBColor, Scale, Series};

use crate::Error;
use ntk_kernel::theory::transfer::{Transfer, transfer};

/// The tables this command writes into its output directory.
pub const TABLES: [&str; 1] = ["transfer.csv"];
/// The first name of each table's header, as it is written (a table of the user's at its
/// name is refused: `ntk_plot::check_places`).
pub const HEADS: [&[&str]; 1] = [&["activation"]];

/// The figures it draws there, by stem (`ntk_plot::is_figure_file`).
pub const STEMS: [&str; 2] = ["transfer_norm", "transfer_bias"];

/// Checks the range and the grid size (an error names the flag).
pub fn check(q_min: f64, q_max: f64, points: usize) -> crate::Result<()> {
    // A subnormal variance gave a NaN norm (twenty-second hostile round, D6): from f64's
    // smallest normal number up.
    if !(q_min >= f64::MIN_POSITIVE && q_min < q_max && q_max <= 1e4) {
        return Err(Error::Config {
            key: "--q-min, --q-max",
            value: format!("{}, {}", number(q_min), number(q_max)),
            reason: format!(
                "need variances with {:e} <= q-min < q-max <= 10000 (f64's smallest normal \
                 number up)",
                f64::MIN_POSITIVE
            ),
        });
    }
    if !(2..=100_000).contains(&points) {
        return Err(Error::Config {
            key: "--points",
            value: points.to_string(),
            reason: "need 2 to 100000".into(),
        });
    }
    Ok(())
}

/// The activation's legend name (with its parameter: "NormReLU (b = -1.591)").
fn name(act: &Activation) -> String {
    let label = act.look().label;
    match act.param_words() {
        Some(w) => format!("{label} ({w})"),
        None => label.to_string(),
    }
}

/// The activation's colour in every figure (the `k`-th palette colour for one without).
fn color(act: &Activation, k: usize) -> RGBColor {
    ntk_plot::style::family_color(act.kind().name()).unwrap_or(PALETTE[k % PALETTE.len()])
}

/// One curve of `values` (picked from each row) against `q`.
fn series(label: String, rows: &[Transfer], pick: fn(&Transfer) -> f64, color: RGBColor) -> Series {
    Series {
        label,
        points: rows.iter().map(|t| (t.q, pick(t))).collect(),
        spread: None,
        color,
        dash: Dash::Solid,
        marker: None,
        unresolved: vec![],
    }
}

/// Writes `out/transfer.csv`, `out/transfer_norm.{png,svg,pdf}` and `out/transfer_bias.{png,svg,pdf}`
/// for `acts` on the variances `qs`; returns each activation's values at `q = 1`.
pub fn write(out: &Path, acts: &[Activation], qs: &[f64]) -> crate::Result<Vec<Transfer>> {
    let table: Vec<Vec<Transfer>> = acts
        .iter()
        .map(|a| qs.iter().map(|&q| transfer(a, q)).collect())
        .collect();
    let mut text = String::from("activation,q,mean,norm,norm_slope,bias\n");
    let names = crate::activation_fig::table_names(acts);
    for (name, rows) in names.iter().zip(&table) {
        for t in rows {
            let cells = [t.q, t.mean, t.norm, t.norm_slope, t.bias].map(number);
            text += &format!("{name},{}\n", cells.join(","));
        }
    }
    ntk_plot::clean_leftovers(out, &TABLES, &STEMS);
    ntk_files::io::write_into(out, "transfer.csv", text.as_bytes())?;
    let at_one: Vec<Transfer> = acts.iter().map(|a| transfer(a, 1.0)).collect();
    let fixed = |a: &Activation, t: &Transfer| {
        format!(
            "{}: N(1) = {:.4}, N'(1) = {:.4}",
            a.look().label,
            t.norm,
            t.norm_slope
        )
    };

    let mut norm = vec![Series {
        label: "identity q".into(),
        points: vec![(qs[0], qs[0]), (qs[qs.len() - 1], qs[qs.len() - 1])],
        spread: None,
        color: RGBColor(0, 0, 0),
        dash: Dash::Dotted,
        marker: None,
        unresolved: vec![],
    }];
    for (k, (a, rows)) in acts.iter().zip(&table).enumerate() {
        norm.push(series(
            format!("N(q), {}", name(a)),
            rows,
            |t| t.norm,
            color(a, k),
        ));
        let mut slope = series(
            format!("N'(q), {}", name(a)),
            rows,
            |t| t.norm_slope,
            color(a, k),
        );
        slope.dash = Dash::Dashed;
        norm.push(slope);
    }
    Figure {
        title: "Fig. 6: the norm transfer N(q) = E s(√q Z)² and its slope".into(),
        x_label: "pre-activation variance q".into(),
        y_label: "N(q) (solid), N'(q) (dashed)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series: norm,
        note: Some(format!(
            "q_(l+1) = N(q_l) at infinite width;\nq = 1 is a fixed point, attracting where N'(1) < 1\n{}",
            acts.iter()
                .zip(&at_one)
                .map(|(a, t)| fixed(a, t))
                .collect::<Vec<_>>()
                .join("\n")
        )),
    }
    .save(&out.join("transfer_norm"))?;

    let bias = acts
        .iter()
        .zip(&table)
        .enumerate()
        .map(|(k, (a, rows))| series(name(a), rows, |t| t.bias, color(a, k)))
        .collect();
    Figure {
        title: "Fig. 6: the bias B(q) = m(q)² / N(q), m(q) = E s(√q Z)".into(),
        x_label: "pre-activation variance q".into(),
        y_label: "B(q)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series: bias,
        note: Some(
            "the constant term's share of the next layer's\nsecond moment: it pulls correlations towards 1;\n0 at q = 1 for a normalized activation".into(),
        ),
    }
    .save(&out.join("transfer_bias"))?;
    Ok(at_one)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ntk_kernel::theory::transfer::grid;
    use ntk_model::ActivationKind;

    /// The table holds the theory's values row for row; both figures are written; bad
    /// ranges are refused.
    #[test]
    fn the_table_is_the_transfer_functions() {
        let acts = [
            Activation::new(ActivationKind::NormRelu, None),
            Activation::new(ActivationKind::Selu, None),
        ];
        let qs = grid(0.1, 3.0, 30);
        let dir = tempfile::tempdir().unwrap();
        let at_one = write(dir.path(), &acts, &qs).unwrap();
        assert!((at_one[0].norm - 1.0).abs() < 1e-12);
        let csv = std::fs::read_to_string(dir.path().join("transfer.csv")).unwrap();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "activation,q,mean,norm,norm_slope,bias"
        );
        let rows: Vec<&str> = lines.collect();
        assert_eq!(rows.len(), 60);
        for (i, line) in rows.iter().enumerate() {
            let (a, q) = (&acts[i / 30], qs[i % 30]);
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f[0], a.kind().name());
            let v: Vec<f64> = f[1..].iter().map(|s| s.parse().unwrap()).collect();
            let t = transfer(a, q);
            assert_eq!(v, [t.q, t.mean, t.norm, t.norm_slope, t.bias]);
        }
        for f in ["transfer_norm.png", "transfer_bias.svg"] {
            assert!(dir.path().join(f).exists(), "{f}");
        }
        assert!(check(0.0, 1.0, 10).is_err() && check(2.0, 1.0, 10).is_err());
        assert!(check(0.5, 4.0, 1).is_err() && check(0.5, 4.0, 2).is_ok());
    }
}
