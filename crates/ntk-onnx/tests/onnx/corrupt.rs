//! Damaged files are errors, never a crash: every committed fixture with bytes overwritten,
//! cut short or extended, read by `OnnxModel::load_bytes` (parsed and run once) (a deterministic stand-in for the
//! fuzzer: a panic inside onnx-ir must come back as an error too).

use burn::tensor::DType;
use ntk_numerics::backend::{self, Precision};
use ntk_onnx::OnnxModel;

use crate::common::{MODELS, fixtures};

/// xorshift64: the damage is the same on every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn damaged_files_are_errors_or_models_never_crashes() {
    let compute = backend::select(Some("flex"), Precision::F32).unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut errors = 0;
    for name in MODELS.iter().copied().chain(["unsupported_softmax"]) {
        let path = fixtures().join(format!("{name}.onnx"));
        let bytes = std::fs::read(&path).unwrap();
        for round in 0..60 {
            let mut b = bytes.clone();
            match round % 3 {
                0 => {
                    for _ in 0..1 + next(&mut state) % 8 {
                        let i = (next(&mut state) % b.len() as u64) as usize;
                        b[i] = next(&mut state) as u8;
                    }
                }
                1 => b.truncate((next(&mut state) % b.len() as u64) as usize),
                _ => b.extend((0..next(&mut state) % 64).map(|_| next(&mut state) as u8)),
            }
            if OnnxModel::load_bytes(&path, &b, &compute.device, DType::F32).is_err() {
                errors += 1;
            }
        }
    }
    // Most damage is caught (a flipped weight byte still loads: a different model).
    assert!(errors > 0);
}
