//! When the inputs' scale decides the answer.
//!
//! For a network without biases whose activation is positively homogeneous (ReLU, leaky
//! ReLU, the identity: degree one; ReLU²: degree two), the output is positively homogeneous
//! in the input, `f(a x; W) = a^p f(x; W)` for every `a > 0` and every weight `W` (`p = 1`,
//! or `2^L` for ReLU² at depth `L`), so its gradient in the weights is too:
//! `K(a x, a y) = a^(2p) K(x, y)`, and kappa and every angle are unchanged (hundredth hostile
//! round, N3: ReLU² was warned of, though its kappa was 56.170095076 at every scale from
//! 1e-20 to 1e5). Any other activation (NormReLU, GELU, tanh, SELU) or a bias makes them
//! depend on the scale: on 500 MNIST images tanh's depth-1 kappa is 655 at the pixels' scale
//! and 1.47e5 at unit norm, ReLU's 4.6e4 and 4.8e4. [`input_scale_warning`] says so
//! whenever the inputs are not at unit norm.

use ntk_data::Inputs;
use ntk_model::Net;

/// How far a row's norm may be from 1 and still count as unit norm.
const UNIT_NORM_TOLERANCE: f64 = 1e-6;

/// Why `net` is not scale-invariant in its input, if it is not: its activation is not
/// positively homogeneous (of degree one, or ReLU²'s two), or it has biases (an ONNX graph
/// is not analysed: `None`).
pub fn scale_dependence(net: &Net) -> Option<String> {
    // Every ResNet's classifier has a bias (and BatchNorm its betas, Fixup its scalars).
    // An ONNX graph's operators and biases are the file's, not analysed here: no warning.
    let &activation = net.activation()?;
    let bias = net.has_bias();
    let homogeneous =
        activation.is_homogeneous() || activation.kind() == ntk_model::ActivationKind::ReluSquared;
    if !homogeneous {
        Some(format!(
            "{} is not positively homogeneous",
            activation.kind().name()
        ))
    } else if bias {
        Some("the network has biases".to_string())
    } else {
        None
    }
}

/// A warning when the NTK's conditioning of `net` on `inputs` depends on the inputs' scale
/// and that scale is not fixed at unit norm; `None` otherwise.
pub fn input_scale_warning(net: &Net, inputs: &Inputs) -> Option<String> {
    let why = scale_dependence(net)?;
    let d = inputs.d.max(1);
    let norms: Vec<f64> = inputs
        .x
        .chunks(d)
        .map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt())
        .collect();
    if norms.iter().all(|r| (r - 1.0).abs() <= UNIT_NORM_TOLERANCE) {
        return None;
    }
    let mean = norms.iter().sum::<f64>() / norms.len().max(1) as f64;
    // Fixed point where it reads well; else a mantissa and exponent (1e18 printed as 19
    // digits, 1e-21 as "0.000", in the fifth hostile round).
    let mean = if (1e-3..1e6).contains(&mean) {
        format!("{mean:.3}")
    } else {
        format!("{mean:.3e}")
    };
    Some(format!(
        "{why}: kappa and the angles depend on the inputs' scale (here mean norm {mean} \
         in {} dimensions), not only on their directions; data.unit_norm = true puts every \
         input at norm 1, the scale the infinite-width theory assumes",
        inputs.d
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ntk_model::{ActivationKind, Mlp, MlpConfig};
    use ntk_numerics::backend::Precision;

    fn net(kind: ActivationKind, bias: bool) -> Net {
        let cfg = MlpConfig::new(3, 8, 2, kind).with_bias(bias);
        let c = ntk_numerics::backend::select(Some("flex"), Precision::F32).unwrap();
        Net::Mlp(Mlp::new(&cfg, &c.device, c.dtype()).unwrap())
    }

    fn inputs(x: Vec<f64>) -> Inputs {
        Inputs {
            n: x.len() / 3,
            d: 3,
            labels: vec![0; x.len() / 3],
            x,
            description: String::new(),
            source_rows: None,
        }
    }

    #[test]
    fn warns_only_for_scale_dependent_networks_off_unit_norm() {
        let raw = inputs(vec![3.0, 0.0, 4.0, 0.0, 2.0, 0.0]);
        let unit = inputs(vec![0.6, 0.0, 0.8, 0.0, 1.0, 0.0]);
        assert_eq!(
            input_scale_warning(&net(ActivationKind::Relu, false), &raw),
            None
        );
        assert_eq!(
            input_scale_warning(&net(ActivationKind::Linear, false), &raw),
            None
        );
        let w = input_scale_warning(&net(ActivationKind::Tanh, false), &raw).unwrap();
        assert!(w.starts_with("tanh is not positively homogeneous"), "{w}");
        assert!(w.contains("mean norm 3.500 in 3 dimensions"), "{w}");
        // ReLU² is homogeneous of degree two: kappa is scale-free without biases.
        assert_eq!(
            input_scale_warning(&net(ActivationKind::ReluSquared, false), &raw),
            None
        );
        let w = input_scale_warning(&net(ActivationKind::ReluSquared, true), &raw).unwrap();
        assert!(w.starts_with("the network has biases"), "{w}");
        for kind in [ActivationKind::Gelu, ActivationKind::Selu] {
            assert!(
                input_scale_warning(&net(kind, false), &raw).is_some(),
                "{kind:?}"
            );
            assert_eq!(
                input_scale_warning(&net(kind, false), &unit),
                None,
                "{kind:?}"
            );
        }
        let w = input_scale_warning(&net(ActivationKind::Relu, true), &raw).unwrap();
        assert!(w.starts_with("the network has biases"), "{w}");
    }

    /// Issue 65, fifth hostile round: inputs at 1e18 printed their mean norm as 19 digits
    /// and a fraction, inputs at 1e-21 as "0.000"; both now as a mantissa and exponent.
    #[test]
    fn far_scales_are_printed_with_an_exponent() {
        let tanh = net(ActivationKind::Tanh, false);
        for (scale, words) in [
            (1e18, "mean norm 3.500e18 "),
            (1e-21, "mean norm 3.500e-21 "),
        ] {
            let x = vec![3.0 * scale, 0.0, 4.0 * scale, 0.0, 2.0 * scale, 0.0];
            let w = input_scale_warning(&tanh, &inputs(x)).unwrap();
            assert!(w.contains(words), "{w}");
        }
    }
}
