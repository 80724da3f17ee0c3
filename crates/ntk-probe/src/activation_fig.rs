//! Agarwal, Awasthi & Kale, Fig. 2: the activations themselves, NormReLU `s_b(x) = lambda_b
//! (max(x, b) - mu_b)` with its kink at `b = -1.5907658564` (where `lambda_b` equals SELU's
//! scale 1.0507) beside SELU, on a grid of `x`; each curve labelled with its Gaussian
//! moments (`E s(Z)`, `E s(Z)^2`) and Agarwal et al.'s coefficient of non-linearity
//! `mu = 1 - E[Z s(Z)]^2 / Var s(Z)`, from [`ntk_model::Activation::moments`].
//!
//! Writes `activations.csv` (`x`, then `s(x)` and `s'(x)` of each activation: the values the
//! networks compute, [`ntk_model::Activation::eval`] and `derivative`) and
//! `activations.{png,svg,pdf}`.

use std::path::Path;

use ntk_files::table::number;
use ntk_model::Activation;
use ntk_plot::{Dash, Figure, PALETTE, Scale, Series};

use crate::Error;

/// The tables this command writes into its output directory.
pub const TABLES: [&str; 1] = ["activations.csv"];
/// The first name of each table's header, as it is written (a table of the user's at its
/// name is refused: `ntk_plot::check_places`).
pub const HEADS: [&[&str]; 1] = [&["x"]];

/// The figures it draws there, by stem (`ntk_plot::is_figure_file`).
pub const STEMS: [&str; 1] = ["activations"];

/// The grid `x_min, ..., x_max` of `points` values.
pub fn grid(x_min: f64, x_max: f64, points: usize) -> Vec<f64> {
    (0..points)
        .map(|i| x_min + (x_max - x_min) * i as f64 / (points - 1) as f64)
        .collect()
}

/// Checks the range and the grid size (an error names the flag).
pub fn check(x_min: f64, x_max: f64, points: usize) -> crate::Result<()> {
    let bad = |key, value: String, reason: &str| Error::Config {
        key,
        value,
        reason: reason.into(),
    };
    // The grid's width too: -1e308 to 1e308 spans more than f64 holds, and its points
    // were NaN (twenty-second hostile round, D4).
    if !(x_min.is_finite() && x_max.is_finite() && x_min < x_max && (x_max - x_min).is_finite()) {
        return Err(bad(
            "--x-min, --x-max",
            format!("{}, {}", number(x_min), number(x_max)),
            "need finite values with x-min < x-max and a finite x-max - x-min",
        ));
    }
    if !(2..=100_000).contains(&points) {
        return Err(bad("--points", points.to_string(), "need 2 to 100000"));
    }
    Ok(())
}

/// The activation's short name (with its parameter: "NormReLU, b = -1.591").
fn name(act: &Activation) -> String {
    let label = act.look().label;
    match act.param_words() {
        Some(w) => format!("{label}, {w}"),
        None => label.to_string(),
    }
}

/// One legend label: the activation and its coefficient of non-linearity.
pub fn label(act: &Activation) -> String {
    format!("{}: μ = {:.3}", name(act), act.moments().nonlinearity())
}

/// One line of the note: the activation's Gaussian moments.
pub fn moments_line(act: &Activation) -> String {
    let m = act.moments();
    format!(
        "{}: E s(Z) = {:.3}, E s(Z)² = {:.3}",
        act.look().label,
        m.mean,
        m.second
    )
}

/// Each activation's name in a table of `acts`: the family's (`leaky_relu`) at its default
/// parameter, with its parameter (`leaky_relu(alpha=0.1)`) where it is not the default or
/// where the table holds two of that family (round 22's N8: two parameters of one family
/// were two columns of one name; round 25's N7: `leaky_relu(alpha=0.1)` alone was written
/// under the default's name).
pub fn table_names(acts: &[Activation]) -> Vec<String> {
    acts.iter()
        .map(|a| {
            let family = acts.iter().filter(|b| b.kind() == a.kind()).count();
            if family > 1 { a.to_string() } else { a.label() }
        })
        .collect()
}

/// Writes `out/activations.csv` and `out/activations.{png,svg,pdf}` for `acts` on `xs`.
pub fn write(out: &Path, acts: &[Activation], xs: &[f64]) -> crate::Result<()> {
    let mut header = vec!["x".to_string()];
    for name in table_names(acts) {
        header.push(format!("{name}_derivative"));
        header.insert(header.len() - 1, name);
    }
    let mut text = header.join(",") + "\n";
    for &x in xs {
        let mut row = vec![number(x)];
        for a in acts {
            row.push(number(a.eval(x)));
            row.push(number(a.derivative(x)));
        }
        text += &(row.join(",") + "\n");
    }
    ntk_plot::clean_leftovers(out, &TABLES, &STEMS);
    ntk_files::io::write_into(out, "activations.csv", text.as_bytes())?;
    let dashes = [Dash::Solid, Dash::Dashed, Dash::DashDot, Dash::Dotted];
    let series = acts
        .iter()
        .enumerate()
        .map(|(i, a)| Series {
            label: label(a),
            points: xs.iter().map(|&x| (x, a.eval(x))).collect(),
            spread: None,
            color: ntk_plot::style::family_color(a.kind().name())
                .unwrap_or(PALETTE[i % PALETTE.len()]),
            dash: dashes[i % dashes.len()],
            marker: None,
            unresolved: vec![],
        })
        .collect();
    Figure {
        title: "Agarwal et al., Fig. 2: NormReLU beside SELU".into(),
        x_label: "pre-activation x".into(),
        y_label: "activation s(x)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series,
        note: Some(format!(
            "Z ~ N(0, 1); μ = 1 - E[Z s(Z)]² / Var s(Z),\nthe coefficient of non-linearity\n{}",
            acts.iter().map(moments_line).collect::<Vec<_>>().join("\n")
        )),
    }
    .save(&out.join("activations"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ntk_model::ActivationKind;

    /// The table holds the networks' own values, and NormReLU and SELU meet the paper's
    /// description: NormReLU normalized (mean 0, second moment 1), its slope on the right
    /// SELU's scale, both equal to that scale's line for large x up to NormReLU's offset.
    #[test]
    fn the_table_is_the_activations_and_normrelu_matches_selus_scale() {
        let acts = [
            Activation::new(ActivationKind::NormRelu, None),
            Activation::new(ActivationKind::Selu, None),
        ];
        let xs = grid(-4.0, 3.0, 71);
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &acts, &xs).unwrap();
        let csv = std::fs::read_to_string(dir.path().join("activations.csv")).unwrap();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "x,norm_relu,norm_relu_derivative,selu,selu_derivative"
        );
        for (line, &x) in lines.zip(&xs) {
            let v: Vec<f64> = line.split(',').map(|s| s.parse().unwrap()).collect();
            assert_eq!(v[0], x);
            assert_eq!(v[1], acts[0].eval(x));
            assert_eq!(v[3], acts[1].eval(x));
        }
        let m = acts[0].moments();
        assert!(m.mean.abs() < 1e-12 && (m.second - 1.0).abs() < 1e-12);
        // Right of the kink both slopes are SELU's lambda = 1.0507009873554805.
        assert!((acts[0].derivative(2.0) - acts[1].derivative(2.0)).abs() < 1e-9);
        assert!(dir.path().join("activations.png").exists());
        let svg = std::fs::read_to_string(dir.path().join("activations.svg")).unwrap();
        // The figure names the activations as the paper does, never by their config words.
        assert!(svg.contains("μ") && svg.contains("NormReLU") && !svg.contains("norm_relu"));
        assert!(check(1.0, 1.0, 10).is_err() && check(0.0, 1.0, 1).is_err());
    }
}
