//! One look for the same thing in every figure: the words a reader knows for the configs'
//! names (`norm_relu` is "NormReLU", `batch_norm` "BatchNorm") and one colour and marker per
//! activation, normalization and ResNet variant, so that ReLU is the same red in the probe's
//! depth sweeps and in the trainer's curves. An activation's look is in its own file
//! ([`ntk_model::activation::Look`]); the rest is here.

use plotters::style::RGBColor;

use ntk_model::ActivationKind;
use ntk_model::activation::Shape;

use crate::{Marker, PALETTE};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
