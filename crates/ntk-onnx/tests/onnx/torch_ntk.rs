//! The NTK of each committed ONNX model against torch.func's (float64) NTK of the PyTorch
//! model it was exported from.
//!
//! Tolerances. Both sides start from the same float32 weights, cast exactly to float64, and
//! the same float64 inputs; they differ only in the order of floating-point operations
//! (GEMM blocking, summation order of the per-sample gradient products). Each kernel entry
//! is a sum of P <= 4,609 products of gradients that are themselves products over a few
//! layers, so its rounding error is bounded by a small multiple of P u |K|max with
//! u = 1.1e-16 (about 5e-13 relative) in the worst case and is typically sqrt(P) u
//! (about 1e-14). f64: the largest difference relative to the kernel's largest entry must
//! be below 1e-12 (measured: experiments/onnx/README.md). f32: the forward and backward
//! run in float32 (u = 6e-8), so the same bound gives about P u = 3e-4 worst case and
//! sqrt(P) u = 4e-6 typically; the f32 kernel must agree to 1e-4 relative.

use ntk_numerics::backend::Precision;

use crate::common::{MODELS, differences, fixtures, onnx_ntk, read_npy};

fn check(precision: Precision, tolerance: f64) {
    for name in MODELS {
        let (n, ours) = onnx_ntk(&fixtures(), name, precision);
        let (shape, reference) = read_npy(&fixtures().join(format!("{name}_ntk.npy")));
        assert_eq!(shape, vec![n, n]);
        let (abs, rel) = differences(&ours, &reference);
        println!("{name} {precision:?}: max abs {abs:.3e}, max rel {rel:.3e}");
        assert!(
            rel < tolerance,
            "{name} {precision:?}: max abs difference {abs:e}, relative {rel:e} >= {tolerance:e}"
        );
    }
}

#[test]
fn f64_ntk_matches_torch_func() {
    check(Precision::F64, 1e-12);
}

#[test]
fn f32_ntk_matches_torch_func() {
    check(Precision::F32, 1e-4);
}
