//! The GPU code path: the structured NTK and the autodiff reference on wgpu agree with the
//! CPU backend. Built only with `--features wgpu`; CI runs it on Mesa's lavapipe (software
//! Vulkan), so every change exercises the wgpu kernels.
#![cfg(feature = "wgpu")]

use crate::common::*;
use burn::module::Module;
use ntk_kernel::jacobian::per_sample_jacobian;
use ntk_kernel::structured;
use ntk_model::{ActivationKind, MlpConfig};
use ntk_numerics::backend::{self, Precision};
use ntk_numerics::kernel::OutputMode;
use ntk_numerics::spectrum::spectrum;

#[test]
fn wgpu_structured_ntk_matches_flex() {
    let (n, d) = (64, 5);
    let x = gaussian_inputs(n, d, 1);
    let gpu =
        backend::select(Some("wgpu"), Precision::F32).expect("a wgpu adapter (lavapipe in CI)");
    let cpu = compute(Precision::F64);
    for kind in [
        ActivationKind::Relu,
        ActivationKind::Tanh,
        ActivationKind::NormRelu,
    ] {
        let cfg = MlpConfig::new(d, 128, 4, kind).with_seed(3).with_bias(true);
        let k_gpu = structured::ntk(&mlp(&cfg, &gpu), tensor(&x, n, d, &gpu), OutputMode::Sum);
        let k_cpu = structured::ntk(&mlp(&cfg, &cpu), tensor(&x, n, d, &cpu), OutputMode::Sum);
        // f32 against an f64 reference: sums of ~10^3 terms, relative error ~1e-6.
        let err = k_gpu.relative_error(&k_cpu);
        assert!(
            err < 1e-5,
            "{kind}: wgpu f32 vs flex f64 relative error {err:e}"
        );
        let a = spectrum(&k_gpu, f32::EPSILON as f64).unwrap();
        let b = spectrum(&k_cpu, f64::EPSILON).unwrap();
        assert!(
            (a.kappa / b.kappa - 1.0).abs() < 1e-2,
            "{kind}: kappa {} vs {}",
            a.kappa,
            b.kappa
        );
    }
}

#[test]
fn wgpu_autodiff_reference_matches_structured() {
    let (n, d) = (5, 3);
    let x = gaussian_inputs(n, d, 2);
    let gpu = backend::select(Some("wgpu"), Precision::F32).expect("a wgpu adapter");
    // tanh, not gelu: the wgpu backend's erf is an approximation (on lavapipe the GELU
    // kernels of the two routes differ by 2.7e-4 relative, against 1e-6 on flex), which
    // would test the backend's erf rather than the two NTK routes.
    let cfg = MlpConfig::new(d, 16, 2, ActivationKind::Tanh).with_seed(5);
    let model = mlp(&cfg, &gpu);
    let fast = structured::ntk(&model, tensor(&x, n, d, &gpu), OutputMode::Sum);
    let ad = gpu.device.clone().autodiff();
    let xt = tensor(&x, n, d, &gpu).to_device(&ad);
    let reference = per_sample_jacobian(
        &model.fork(&ad).train(),
        |m, x| m.forward(x),
        &xt,
        OutputMode::Sum,
    )
    .ntk(OutputMode::Sum);
    let err = fast.relative_error(&reference);
    assert!(err < 1e-5, "relative error {err:e}");
}

#[test]
fn wgpu_f64_when_the_adapter_has_it() {
    match backend::select(Some("wgpu"), Precision::F64) {
        Ok(gpu) => {
            let (n, d) = (16, 4);
            let x = gaussian_inputs(n, d, 3);
            let cpu = compute(Precision::F64);
            let cfg = MlpConfig::new(d, 32, 3, ActivationKind::Relu).with_seed(1);
            let a = structured::ntk(&mlp(&cfg, &gpu), tensor(&x, n, d, &gpu), OutputMode::Sum);
            let b = structured::ntk(&mlp(&cfg, &cpu), tensor(&x, n, d, &cpu), OutputMode::Sum);
            assert!(a.relative_error(&b) < 1e-10, "{:e}", a.relative_error(&b));
        }
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("does not support f64"), "{e}");
            eprintln!("skipped: {e}");
        }
    }
}
