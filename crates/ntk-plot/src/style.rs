//! One look for the same thing in every figure: the words a reader knows for the configs'
//! names (`norm_relu` is "NormReLU", `batch_norm` "BatchNorm") and one colour and marker per
//! activation, normalization and ResNet variant, so that ReLU is the same red in the probe's
//! depth sweeps and in the trainer's curves. An activation's look is in its own file
//! ([`ntk_model::activation::Look`]); the rest is here.

use plotters::style::RGBColor;

use ntk_model::ActivationKind;
use ntk_model::activation::Shape;

use crate::{Dash, MEASURED, Marker, PALETTE};

/// The name a paper uses for a config word: an activation's own label
/// ([`ntk_model::activation::Look`]: `relu` "ReLU", `relu_squared` "ReLU²", `norm_relu`
/// "NormReLU"), normalizations and ResNet variants (`batch_norm` "BatchNorm", `layer_norm`
/// "LayerNorm", `fixup` "Fixup", `none` "no normalization"); other words as they are. An
/// activation with its parameter (`norm_relu(b=-0.2)`) keeps it: "NormReLU (b = -0.2)".
pub fn words(name: &str) -> String {
    if let Some((family, rest)) = name.split_once('(')
        && let Some(kind) = ActivationKind::parse(family)
        && let Some((symbol, value)) = rest.strip_suffix(')').and_then(|r| r.split_once('='))
    {
        return format!("{} ({symbol} = {value})", kind.look().label);
    }
    if let Some(kind) = ActivationKind::parse(name) {
        return kind.look().label.to_string();
    }
    match name {
        "batch_norm" => "BatchNorm",
        "layer_norm" => "LayerNorm",
        "fixup" => "Fixup",
        "none" => "no normalization",
        other => other,
    }
    .to_string()
}

/// An MLP's activation and normalization in words: "ReLU", "ReLU, BatchNorm".
pub fn family_words(activation: &str, normalization: &str) -> String {
    if normalization == "none" {
        words(activation)
    } else {
        format!("{}, {}", words(activation), words(normalization))
    }
}

/// The colour of an activation, normalization or ResNet variant in every figure, `None` for
/// a word that has none. NormReLU and SELU have one colour as activations and as ResNet
/// variants; BatchNorm one as an MLP layer and as the ResNet variant.
pub fn family_color(name: &str) -> Option<RGBColor> {
    let name = name.split('(').next().unwrap_or(name);
    if let Some(kind) = ActivationKind::parse(name) {
        let (r, g, b) = kind.look().rgb;
        return Some(RGBColor(r, g, b));
    }
    Some(match name {
        "fixup" => PALETTE[7],
        "batch_norm" => RGBColor(23, 190, 207),
        "layer_norm" => RGBColor(188, 189, 34),
        _ => return None,
    })
}

/// The marker of an activation, normalization or ResNet variant (four shapes, so two
/// families can share one; their colours differ).
pub fn family_marker(name: &str) -> Marker {
    let name = name.split('(').next().unwrap_or(name);
    if let Some(kind) = ActivationKind::parse(name) {
        return match kind.look().shape {
            Shape::Circle => Marker::Circle,
            Shape::Square => Marker::Square,
            Shape::Triangle => Marker::Triangle,
            Shape::Diamond => Marker::Diamond,
        };
    }
    match name {
        "batch_norm" => Marker::Circle,
        "layer_norm" => Marker::Square,
        "fixup" => Marker::Triangle,
        _ => Marker::Diamond,
    }
}

/// The order a reader counts settings in: runs of digits compared as numbers, the rest as
/// text, so that `width=8` comes before `width=16` and `width=128` (as text, `width=128`
/// came first and `width=8` last); two names that differ only in leading zeros keep their
/// text order.
pub fn counting_order(a: &str, b: &str) -> std::cmp::Ordering {
    /// The name as runs: `(true, digits)` for a run of digits, `(false, text)` otherwise.
    fn runs(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let (mut start, mut digits) = (0, None);
        for (i, c) in s.char_indices() {
            let d = c.is_ascii_digit();
            if let Some(p) = digits
                && p != d
            {
                out.push((p, &s[start..i]));
                start = i;
            }
            digits = Some(d);
        }
        if let Some(p) = digits {
            out.push((p, &s[start..]));
        }
        out
    }
    let (ra, rb) = (runs(a), runs(b));
    for ((da, x), (db, y)) in ra.iter().zip(&rb) {
        let order = if *da && *db {
            let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
            x.len().cmp(&y.len()).then_with(|| x.cmp(y))
        } else {
            x.cmp(y)
        };
        if order.is_ne() {
            return order;
        }
    }
    ra.len().cmp(&rb.len()).then_with(|| a.cmp(b))
}

/// How many settings' curves of one colour [`setting_style`] tells apart: each
/// [`MEASURED`] dash with each [`Marker`].
pub const DISTINCT_SETTINGS: usize = MEASURED.len() * Marker::ALL.len();

/// The look of the `i`-th of several settings' measured curves whose own marker is
/// `marker`: a dash of its own for the first five ([`MEASURED`], never the dots the figures
/// keep for the theory and the predictions), then the dashes again with the next marker,
/// up to [`DISTINCT_SETTINGS`]; past that the looks repeat (the third value `false`: the
/// figure's note says so, [`repeated_styles_note`]). Sixty-ninth hostile round, D1: a four-dash cycle drew the fourth setting dotted, as
/// the theory, and the fifth as the first.
pub fn setting_style(i: usize, marker: Marker) -> (Dash, Marker, bool) {
    let dash = MEASURED[i % MEASURED.len()];
    let marker = marker.after(i / MEASURED.len());
    (dash, marker, i < DISTINCT_SETTINGS)
}

/// The line a figure's note adds where two of its labelled measured curves look alike (the
/// same colour, dash and marker: more settings than [`setting_style`] tells apart), else
/// `None`. Dotted lines are not measured curves (the theory, the predictions: the note says
/// what they are) and are left out.
pub fn repeated_looks_note(series: &[crate::Series]) -> Option<&'static str> {
    let labelled: Vec<&crate::Series> = series
        .iter()
        .filter(|s| !s.label.is_empty() && s.dash != Dash::Dotted)
        .collect();
    let repeat = labelled.iter().enumerate().any(|(i, a)| {
        labelled[i + 1..]
            .iter()
            .any(|b| (a.color, a.dash, a.marker) == (b.color, b.dash, b.marker))
    });
    repeat.then_some(
        "some curves look alike (more\nsettings than line styles): read\nthe legend's order",
    )
}

/// A learning rate for a legend, to three significant digits (`0.797` for 0.797458, as the
/// convergence experiment's rates from 1/lambda_max come; 0.003 and 30 as they are).
pub fn three_digits(x: f64) -> f64 {
    format!("{x:.2e}").parse().unwrap_or(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round 71 (the legend of its five-width figure): settings in the order a reader
    /// counts them, not as text.
    #[test]
    fn settings_are_in_counting_order() {
        let mut v = vec![
            "width=128",
            "width=16",
            "width=8",
            "width=32",
            "n=12 width=8",
            "n=5 width=64",
            "mnist",
            "fashion_mnist",
            "width=08",
        ];
        v.sort_by(|a, b| counting_order(a, b));
        assert_eq!(
            v,
            [
                "fashion_mnist",
                "mnist",
                "n=5 width=64",
                "n=12 width=8",
                "width=08",
                "width=8",
                "width=16",
                "width=32",
                "width=128"
            ]
        );
        assert!(counting_order("a", "a").is_eq());
        assert!(counting_order("", "a").is_lt() && counting_order("9", "10").is_lt());
    }

    #[test]
    fn every_family_has_its_own_colour_and_words() {
        let mut names: Vec<&str> = ActivationKind::all()
            .into_iter()
            .map(|k| k.name())
            .collect();
        names.extend(["fixup", "batch_norm", "layer_norm"]);
        let colors: Vec<RGBColor> = names.iter().filter_map(|n| family_color(n)).collect();
        assert_eq!(colors.len(), names.len());
        for (i, a) in colors.iter().enumerate() {
            assert!(
                colors[i + 1..].iter().all(|b| b != a),
                "{} shares a colour",
                names[i]
            );
        }
        assert_eq!(words("norm_relu"), "NormReLU");
        assert_eq!(words("norm_relu(b=-0.2)"), "NormReLU (b = -0.2)");
        assert_eq!(family_color("norm_relu(b=-0.2)"), family_color("norm_relu"));
        assert_eq!(words("relu_squared"), "ReLU²");
        assert_eq!(words("leaky_relu(alpha=0.1)"), "LeakyReLU (alpha = 0.1)");
        assert_eq!(words("something"), "something");
        assert_eq!(family_color("something"), None);
    }

    /// Every setting up to DISTINCT_SETTINGS has a look of its own, none dotted.
    #[test]
    fn settings_have_looks_of_their_own_and_none_dotted() {
        let looks: Vec<(Dash, Marker, bool)> = (0..DISTINCT_SETTINGS + 1)
            .map(|i| setting_style(i, Marker::Triangle))
            .collect();
        assert!(looks.iter().all(|l| l.0 != Dash::Dotted));
        assert_eq!(looks[0], (Dash::Solid, Marker::Triangle, true));
        assert_eq!(looks[5], (Dash::Solid, Marker::Diamond, true));
        for (i, a) in looks[..DISTINCT_SETTINGS].iter().enumerate() {
            assert!(a.2);
            assert!(
                looks[i + 1..DISTINCT_SETTINGS]
                    .iter()
                    .all(|b| (b.0, b.1) != (a.0, a.1)),
                "setting {i} shares a look"
            );
        }
        assert!(!looks[DISTINCT_SETTINGS].2);
        let series = |i: usize, label: &str| {
            let (dash, marker, _) = setting_style(i, Marker::Circle);
            crate::Series {
                label: label.into(),
                points: vec![(1.0, 1.0)],
                spread: None,
                color: PALETTE[0],
                dash,
                marker: Some(marker),
                unresolved: Vec::new(),
            }
        };
        let apart: Vec<crate::Series> = (0..DISTINCT_SETTINGS).map(|i| series(i, "s")).collect();
        assert_eq!(repeated_looks_note(&apart), None);
        let mut alike = apart.clone();
        alike.push(series(DISTINCT_SETTINGS, "s"));
        assert!(repeated_looks_note(&alike).is_some());
        // A curve out of the legend (a prediction) or dotted (a theory line) is not a
        // measured setting's.
        alike.last_mut().unwrap().label.clear();
        assert_eq!(repeated_looks_note(&alike), None);
        let mut theory = apart.clone();
        for s in &mut theory[..2] {
            s.dash = Dash::Dotted;
            s.marker = None;
        }
        assert_eq!(repeated_looks_note(&theory), None);
    }
}
