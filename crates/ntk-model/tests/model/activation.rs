//! Activation constants against quadrature, and derivatives against finite differences.

use burn::tensor::{DType, Device, Tensor, TensorData};
use ntk_model::activation::{NORM_RELU_DEFAULT_B, SELU_LAMBDA};
use ntk_model::normal;
use ntk_model::{Activation, ActivationKind, NormRelu};

fn all() -> Vec<Activation> {
    ActivationKind::all()
        .into_iter()
        .map(|k| Activation::new(k, None))
        .collect()
}

#[test]
fn closed_form_moments_match_quadrature() {
    // Composite Gauss-Legendre split at the kinks is accurate to ~1e-14 on these
    // piecewise-smooth integrands; 1e-12 leaves room for the closed forms' own rounding.
    for act in all() {
        let closed = act.moments();
        let quad = act.moments_by_quadrature();
        for (what, a, b) in [
            ("mean", closed.mean, quad.mean),
            ("second", closed.second, quad.second),
            ("z_s", closed.z_s, quad.z_s),
        ] {
            assert!(
                (a - b).abs() < 1e-12,
                "{act}: {what} closed {a} vs quadrature {b}"
            );
        }
    }
}

#[test]
fn smooth_activation_moments_agree_with_gauss_hermite() {
    // An independent quadrature for the activations without a closed form: Gauss-Hermite is
    // spectrally accurate for the analytic tanh and gelu.
    let (z, w) = normal::gauss_hermite(120);
    for kind in [ActivationKind::Tanh, ActivationKind::Gelu] {
        let act = Activation::new(kind, None);
        let m = act.moments();
        let gh = |f: &dyn Fn(f64) -> f64| z.iter().zip(&w).map(|(z, w)| w * f(*z)).sum::<f64>();
        assert!((gh(&|x| act.eval(x)) - m.mean).abs() < 1e-10, "{kind} mean");
        assert!(
            (gh(&|x| act.eval(x).powi(2)) - m.second).abs() < 1e-10,
            "{kind} second"
        );
        assert!(
            (gh(&|x| x * act.eval(x)) - m.z_s).abs() < 1e-10,
            "{kind} z_s"
        );
    }
}

#[test]
fn known_constants() {
    let relu = Activation::new(ActivationKind::Relu, None);
    assert!((relu.c() - 2.0).abs() < 1e-15);
    assert_eq!(Activation::new(ActivationKind::Linear, None).c(), 1.0);
    // ReLU's coefficient of non-linearity, 1 - pi / (2 (pi - 1)).
    let pi = std::f64::consts::PI;
    assert!((relu.moments().nonlinearity() - (1.0 - pi / (2.0 * (pi - 1.0)))).abs() < 1e-14);
    assert!(
        Activation::new(ActivationKind::Linear, None)
            .moments()
            .nonlinearity()
            .abs()
            < 1e-15
    );
    // tanh: E[tanh(Z)^2] = 0.394294... (tabulated).
    let tanh = Activation::new(ActivationKind::Tanh, None).moments();
    assert!((tanh.second - 0.394_294_8).abs() < 1e-6, "{}", tanh.second);
    // SELU has mean 0 and variance 1 as its fixed point (to the 1e-9 of its printed constants).
    let selu = Activation::new(ActivationKind::Selu, None).moments();
    assert!(selu.mean.abs() < 1e-6, "SELU mean {}", selu.mean);
    assert!(
        (selu.second - 1.0).abs() < 1e-6,
        "SELU second {}",
        selu.second
    );
}

#[test]
fn norm_relu_constants_from_theory_md() {
    let n = NormRelu::new(NORM_RELU_DEFAULT_B);
    assert!(
        (n.lambda - SELU_LAMBDA).abs() < 1e-9,
        "lambda_b {}",
        n.lambda
    );
    assert!((n.mu - 0.023_752_744_9).abs() < 1e-9, "mu_b {}", n.mu);
    let zero = NormRelu::new(0.0);
    assert!((zero.mu - 0.398_942).abs() < 1e-6);
    assert!((zero.lambda - 1.712_859).abs() < 1e-6);
    // Normalized: mean 0, second moment 1, for any kink (checked by quadrature).
    for b in [-2.0, -1.0, 0.0, 0.5] {
        let act = Activation::new(ActivationKind::NormRelu, Some(b));
        let q = act.moments_by_quadrature();
        assert!(
            q.mean.abs() < 1e-13 && (q.second - 1.0).abs() < 1e-13,
            "b = {b}: {q:?}"
        );
        // E[Z max(Z, b)] = 1 - Phi(b).
        assert!((act.moments().z_s - q.z_s).abs() < 1e-13);
    }
}

#[test]
fn scalar_derivatives_match_finite_differences() {
    let h = 1e-6;
    for act in all() {
        for &x in &[-2.3, -0.7, 0.31, 1.9] {
            let fd = (act.eval(x + h) - act.eval(x - h)) / (2.0 * h);
            assert!((fd - act.derivative(x)).abs() < 1e-6, "{act} at {x}");
        }
    }
}

#[test]
fn tensor_forward_and_derivative_match_scalars() {
    let device = Device::flex();
    let xs: Vec<f64> = (0..41).map(|i| -4.0 + 0.2 * i as f64 + 0.013).collect();
    for act in all() {
        let t = Tensor::<1>::from_data(
            TensorData::new(xs.clone(), [xs.len()]),
            (&device, DType::F64),
        );
        let f: Vec<f64> = act.forward(t.clone()).try_into_vec_as().unwrap();
        let d: Vec<f64> = act.derivative_tensor(t).try_into_vec_as().unwrap();
        for (i, &x) in xs.iter().enumerate() {
            assert!((f[i] - act.eval(x)).abs() < 1e-12, "{act} s({x})");
            assert!((d[i] - act.derivative(x)).abs() < 1e-12, "{act} s'({x})");
        }
    }
}
