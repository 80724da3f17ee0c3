//! Liu & Hui, Fig. 4 (appendix A): the ReLU embedding-angle map
//! `g(z) = arccos(((pi - z) cos z + sin z) / pi)` (Eq. 14), the angle between two inputs'
//! embeddings after one infinitely wide ReLU layer given the angle `z` before it, beside the
//! identity; and its iterates `g^l`, the embedding angle after `l` layers, which Prop. A.1
//! says decrease monotonically to 0 (`g(z) <= z`, with equality only at 0).
//!
//! Writes `gmap.csv` (`theta_in_deg`, then `g^l` in degrees for each depth) and
//! `gmap.{png,svg,pdf}`.

use std::path::Path;

use ntk_plot::{Dash, Figure, RGBColor, Scale, Series};

use ntk_kernel::theory::relu::g;

/// The tables this command writes into its output directory.
pub const TABLES: [&str; 1] = ["gmap.csv"];
/// The first name of each table's header, as it is written (a table of the user's at its
/// name is refused: `ntk_plot::check_places`).
pub const HEADS: [&[&str]; 1] = [&["theta_in_deg"]];

/// The figures it draws there, by stem (`ntk_plot::is_figure_file`).
pub const STEMS: [&str; 1] = ["gmap"];

/// `g^l(z)` in radians.
pub fn iterate(z: f64, l: usize) -> f64 {
    (0..l).fold(z, |t, _| g(t))
}

/// `l` in superscript digits (the bundled font has them): `g¹⁰`.
fn superscript(l: usize) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    l.to_string()
        .chars()
        .map(|c| DIGITS[c.to_digit(10).unwrap_or(0) as usize])
        .collect()
}

/// Writes `out/gmap.csv` and `out/gmap.{png,svg,pdf}` for `depths` on `points` angles in
/// `[0, 180]` degrees.
pub fn write(out: &Path, depths: &[usize], points: usize) -> crate::Result<()> {
    let thetas: Vec<f64> = (0..points)
        .map(|i| 180.0 * i as f64 / (points - 1) as f64)
        .collect();
    let curve = |l: usize| -> Vec<(f64, f64)> {
        thetas
            .iter()
            .map(|&t| (t, iterate(t.to_radians(), l).to_degrees()))
            .collect()
    };
    let mut text = String::from("theta_in_deg");
    for l in depths {
        text += &format!(",g{l}_deg");
    }
    text += "\n";
    let curves: Vec<Vec<(f64, f64)>> = depths.iter().map(|&l| curve(l)).collect();
    for (i, t) in thetas.iter().enumerate() {
        text += &ntk_files::table::number(*t);
        for c in &curves {
            text += &format!(",{}", ntk_files::table::number(c[i].1));
        }
        text += "\n";
    }
    ntk_plot::clean_leftovers(out, &TABLES, &STEMS);
    ntk_files::io::write_into(out, "gmap.csv", text.as_bytes())?;
    let mut series = vec![Series {
        label: "identity (linear network)".into(),
        points: thetas.iter().map(|&t| (t, t)).collect(),
        spread: None,
        color: RGBColor(0, 0, 0),
        dash: Dash::Dashed,
        marker: None,
        unresolved: vec![],
    }];
    for (k, (l, c)) in depths.iter().zip(curves).enumerate() {
        series.push(Series {
            label: if *l == 1 {
                "g(θ), one ReLU layer".into()
            } else {
                format!("g{}(θ), {l} layers", superscript(*l))
            },
            points: c,
            spread: None,
            // Depth takes the ramp's colour, as in every figure whose curves are depths.
            color: ntk_plot::ramp(k, depths.len()),
            dash: [Dash::Solid, Dash::DashDot, Dash::Dotted, Dash::Dashed][k % 4],
            marker: None,
            unresolved: vec![],
        });
    }
    Figure {
        title: "Fig. 4: the embedding-angle map g of a ReLU layer".into(),
        x_label: "angle before the layers θ (°)".into(),
        y_label: "embedding angle after them (°)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series,
        note: Some("infinite width (Eq. 14);\ng(θ) ≤ θ, equal only at 0;\ng(180°) = 90°".into()),
    }
    .save(&out.join("gmap"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// Prop. A.1: g is increasing, below the identity except at 0, its iterates decrease to
    /// 0; g(pi) = pi / 2 and g'(0) = 1 (the identity near 0); the table holds the iterates.
    #[test]
    fn g_has_the_properties_of_prop_a1_and_the_table_holds_it() {
        let zs: Vec<f64> = (0..=1000).map(|i| PI * i as f64 / 1000.0).collect();
        for w in zs.windows(2) {
            assert!(g(w[1]) > g(w[0]), "increasing at {}", w[1]);
            assert!(g(w[1]) < w[1], "below the identity at {}", w[1]);
            assert!(iterate(w[1], 3) < iterate(w[1], 2));
        }
        assert_eq!(g(0.0), 0.0);
        assert!((g(PI) - PI / 2.0).abs() < 1e-12);
        assert!((g(1e-4) / 1e-4 - 1.0).abs() < 1e-3);
        assert!(iterate(PI / 2.0, 2000) < 0.01);
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[1, 5], 7).unwrap();
        let csv = std::fs::read_to_string(dir.path().join("gmap.csv")).unwrap();
        let mut lines = csv.lines();
        assert_eq!(lines.next().unwrap(), "theta_in_deg,g1_deg,g5_deg");
        for line in lines {
            let v: Vec<f64> = line.split(',').map(|s| s.parse().unwrap()).collect();
            assert_eq!(v[1], g(v[0].to_radians()).to_degrees());
            assert_eq!(v[2], iterate(v[0].to_radians(), 5).to_degrees());
        }
        assert!(dir.path().join("gmap.png").exists());
    }
}
