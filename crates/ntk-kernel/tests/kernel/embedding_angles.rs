//! The embedding angles of `ntk_kernel::embedding` against the same network in f64: an f32
//! network's `theta_l` is within the rule's error (`embedding::error_rad`) of the f64
//! network's, formed by a route of its own (`2 atan2(|u' - v'|, |u' + v'|)` of the unit
//! outputs of an f64 forward pass), at angles from 6 degrees down to 1e-5 radians, where
//! arccos of a cosine keeps nothing in f32; and the rule is not so loose that it calls
//! such angles unresolved.

use crate::common::*;
use ntk_kernel::angles::RESOLVED;
use ntk_kernel::embedding::{self, EmbeddingAngle};
use ntk_model::{ActivationKind, MlpConfig};
use ntk_numerics::backend::Precision;

fn half_angle(u: &[f64], v: &[f64]) -> f64 {
    let norm = |a: &[f64]| a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (nu, nv) = (norm(u), norm(v));
    let diff: Vec<f64> = u.iter().zip(v).map(|(a, b)| a / nu - b / nv).collect();
    let sum: Vec<f64> = u.iter().zip(v).map(|(a, b)| a / nu + b / nv).collect();
    2.0 * norm(&diff).atan2(norm(&sum))
}

#[test]
fn f32_embedding_angles_are_within_their_rule_of_f64() {
    let cases = [
        (32, 2, 5, ActivationKind::Relu),
        (32, 2, 5, ActivationKind::Tanh),
        (512, 4, 100, ActivationKind::Relu),
        (512, 3, 784, ActivationKind::Tanh),
        (256, 10, 50, ActivationKind::Relu),
    ];
    let (c32, c64) = (compute(Precision::F32), compute(Precision::F64));
    for (width, depth, d, act) in cases {
        let cfg = MlpConfig::new(d, width, depth, act);
        let net64 = mlp(&cfg, &c64);
        let net32 = ntk_kernel::compute::with_precision(&net64, Precision::F32);
        let base = gaussian_inputs(1, d, 7);
        let dir = gaussian_inputs(1, d, 8);
        for k in 0..5 {
            let delta = 10f64.powi(-1 - k);
            let mut x = base.clone();
            x.extend(base.iter().zip(&dir).map(|(b, e)| b + delta * e));
            let got = embedding::pair_angles(
                &net32,
                tensor(&x, 2, d, &c32),
                (&x[..d], &x[d..]),
                Precision::F32,
            );
            // The f64 network on the inputs as the f32 one reads them.
            let x32: Vec<f64> = x.iter().map(|v| *v as f32 as f64).collect();
            let trace = net64.forward_trace(tensor(&x32, 2, d, &c64));
            assert_eq!(got.len(), depth + 1);
            let mut fan_in = d;
            for (l, angle) in got.iter().enumerate().skip(1) {
                let a: Vec<f64> = trace.inputs[l].clone().try_into_vec_as().unwrap();
                let m = a.len() / 2;
                let want = half_angle(&a[..m], &a[m..]);
                let bound = embedding::error_rad(Precision::F32, l, fan_in);
                let case =
                    format!("width {width} depth {depth} d {d} {act:?} delta {delta:e} layer {l}");
                match *angle {
                    EmbeddingAngle::Deg(deg) => {
                        let err = (deg.to_radians() - want).abs();
                        assert!(err <= bound / 2.5, "{case}: error {err:e}, bound {bound:e}");
                    }
                    // Null only where the bound is more than a tenth of the angle, and never
                    // above 1e-3 radians (0.06 degrees).
                    EmbeddingAngle::Unresolved { .. } => {
                        assert!(
                            bound > RESOLVED * want && want < 1e-3,
                            "{case}: unresolved at {want:e} radians, bound {bound:e}"
                        );
                    }
                    other => panic!("{case}: {other:?} for {want:e} radians"),
                }
                fan_in = fan_in.max(m);
            }
        }
    }
}
