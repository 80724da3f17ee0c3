//! The CUDA forms of the activations (`ActivationFn::cuda`, the expressions the cuDNN
//! engine's kernels inline), evaluated without a GPU: the same expressions compiled as C
//! (they use only C99's float math, plus `normcdff`, defined here as CUDA documents it) by
//! the system's C compiler, against the registry's f64 definitions. Skipped, saying why,
//! where no C compiler runs.

use ntk_model::activation::{Activation, ActivationKind, Normalized};
use std::fmt::Write as _;
use std::process::Command;

/// Points away from every registry activation's kink (0, NormReLU's default b = -1.59).
const POINTS: [f64; 12] = [
    -6.3, -3.1, -2.2, -1.3, -0.71, -0.27, 0.19, 0.55, 1.07, 1.9, 3.4, 7.7,
];

#[test]
fn every_cuda_form_computes_s_and_its_slope() {
    // As the norm-free ResNets apply them: normalized (NormReLU's and SELU's own forms,
    // the others shifted and scaled), every code path of `Normalized::cuda`.
    let acts: Vec<Normalized> = ActivationKind::all()
        .into_iter()
        .map(|k| Normalized::new(Activation::new(k, None)))
        .collect();
    let mut c = String::from(
        "#include <math.h>\n#include <stdio.h>\n\
         static float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }\n",
    );
    for (i, n) in acts.iter().enumerate() {
        let f = n.cuda().expect("every registry activation has a CUDA form");
        writeln!(
            c,
            "static float act{i}(float z) {{ return {}; }}\n\
             static float slope{i}(float z, float s) {{ (void)z; (void)s; return {}; }}",
            f.value, f.slope
        )
        .unwrap();
    }
    c.push_str("int main(void) {\n    float z, s;\n");
    for i in 0..acts.len() {
        for x in POINTS {
            writeln!(
                c,
                "    z = {x:?}f; s = act{i}(z); printf(\"{i} %.9g %.9g\\n\", s, slope{i}(z, s));"
            )
            .unwrap();
        }
    }
    c.push_str("    return 0;\n}\n");

    let dir = tempfile::tempdir().unwrap();
    let (src, exe) = (dir.path().join("forms.c"), dir.path().join("forms"));
    std::fs::write(&src, &c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let built = Command::new(&cc)
        .args(["-std=c99", "-O0", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lm")
        .output();
    let built = match built {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: no C compiler runs here ({cc}: {e})");
            return;
        }
    };
    assert!(
        built.status.success(),
        "the CUDA forms do not compile as C:\n{}\n{c}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    for (i, n) in acts.iter().enumerate() {
        for x in POINTS {
            let line = lines.next().expect("one line per point");
            let v: Vec<f64> = line
                .split_whitespace()
                .map(|t| t.parse().unwrap())
                .collect();
            assert_eq!(v[0] as usize, i, "{line}");
            // The f32 input rounds x; evaluate the definitions there.
            let z = x as f32 as f64;
            let (want_s, want_d) = (n.eval(z), n.derivative(z));
            let tol = |w: f64| 2e-6 * (1.0 + w.abs());
            let what = n.activation();
            assert!(
                (v[1] - want_s).abs() <= tol(want_s),
                "{what} s({x}): CUDA form {} against {want_s}",
                v[1]
            );
            assert!(
                (v[2] - want_d).abs() <= tol(want_d),
                "{what} s'({x}): CUDA form {} against {want_d}",
                v[2]
            );
        }
    }
}
