//! The engine's own kernels ([`SOURCE`], `kernels.cu`): the elementwise work between cuDNN's
//! and cuBLAS's calls (NormReLU, SELU and the border gain, Fixup's scalars, the option-A
//! shortcut and the residual merges, pooling, the loss and its cotangent, BatchNorm's running
//! statistics) and the whole SGD update, compiled once by NVRTC for the device at hand.

/// The CUDA source.
pub const SOURCE: &str = include_str!("kernels.cu");

/// Every kernel of [`SOURCE`], as the engine loads them.
pub const NAMES: [&str; 22] = [
    "relu_inplace",
    "shortcut_add_relu",
    "shortcut_adjoint",
    "relu_mask",
    "act_forward",
    "merge_act_forward",
    "merge_act_backward",
    "scale_gain",
    "act_backward",
    "add_scalar",
    "bias_relu",
    "fixup_out",
    "fixup_out_backward",
    "mask_sums",
    "total",
    "finish",
    "pool",
    "unpool",
    "add_bias_rows",
    "softmax_ce",
    "sgd",
    "bn_running",
];

/// [`SOURCE`] as PTX for compute capability `arch` (e.g. `"compute_90"`; `None`: NVRTC's
/// default). FMA contraction is off, so each product and sum rounds as on the host engine.
pub fn compile(arch: Option<&'static str>) -> crate::cudnn::Result<cudarc::nvrtc::Ptx> {
    ntk_cuda::libraries::probe(
        "the engine's kernels",
        &[crate::cudnn::libraries::Library::Nvrtc],
    )?;
    let opts = cudarc::nvrtc::CompileOptions {
        fmad: Some(false),
        arch,
        name: Some("ntk_cudnn_kernels.cu".into()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(SOURCE, opts)
        .map_err(|e| crate::cudnn::Error::Compile(format!("{e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_of_the_source_is_listed_once() {
        let mut found: Vec<&str> = SOURCE
            .split("extern \"C\" __global__ void ")
            .skip(1)
            .map(|s| s.split('(').next().unwrap_or(""))
            .collect();
        let mut listed = NAMES.to_vec();
        found.sort_unstable();
        listed.sort_unstable();
        listed.dedup();
        assert_eq!(listed.len(), NAMES.len(), "distinct names");
        assert_eq!(found, listed);
    }

    /// NVRTC compiles the source wherever libnvrtc loads (CI installs PyPI's
    /// nvidia-cuda-nvrtc wheel: scripts/setup-nvrtc.sh); elsewhere the test says why it
    /// skips.
    #[test]
    fn the_kernels_compile_through_nvrtc() {
        if let Err(why) = crate::cudnn::libraries::load(crate::cudnn::libraries::Library::Nvrtc) {
            eprintln!("skipped: libnvrtc does not load here ({why})");
            return;
        }
        for arch in [None, Some("compute_80"), Some("compute_90")] {
            let ptx = compile(arch).unwrap_or_else(|e| panic!("{arch:?}: {e}"));
            let text = ptx.to_src();
            for name in NAMES {
                assert!(
                    text.contains(&format!(".entry {name}(")),
                    "{arch:?}: {name} in the PTX"
                );
            }
        }
    }
}
