//! The reference route run again where PyTorch is installed: the script exports fresh
//! models and computes their NTK by torch.func, and ours must agree with it as with the
//! committed fixtures.

use std::path::Path;
use std::process::Command;

use ntk_numerics::backend::Precision;

use crate::common::{MODELS, differences, onnx_ntk, read_npy};

#[test]
fn torch_reference_script_agrees_when_torch_is_installed() {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args(["-c", "import torch, onnx"])
        .output();
    match probe {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            println!(
                "skipped: {python} cannot import torch and onnx ({})",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
            return;
        }
        Err(e) => {
            println!("skipped: {python} does not run ({e})");
            return;
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join(format!("ntk-onnx-torch-{}", std::process::id()));
    let status = Command::new(&python)
        .arg(root.join("experiments/onnx/torch_reference.py"))
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "torch_reference.py failed");
    for name in MODELS {
        let (_, ours) = onnx_ntk(&out, name, Precision::F64);
        let (_, reference) = read_npy(&out.join(format!("{name}_ntk.npy")));
        let (abs, rel) = differences(&ours, &reference);
        println!("{name} (fresh export): max abs {abs:.3e}, max rel {rel:.3e}");
        assert!(rel < 1e-12, "{name}: relative difference {rel:e}");
    }
    let _ = std::fs::remove_dir_all(&out);
}
