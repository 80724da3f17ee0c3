//! The engine's own kernels ([`SOURCE`], `kernels.cu`): the elementwise work between cuDNN's
//! and cuBLAS's calls (the norm-free variants' activation and the border gain, Fixup's
//! scalars, the option-A shortcut and the residual merges, pooling, the loss and its
//! cotangent, BatchNorm's running statistics) and the whole SGD update, compiled once by
//! NVRTC for the device at hand, with the run's activation put before it ([`source`]).

use ntk_model::activation::Normalized;

/// The CUDA source, less the activation ([`source`] completes it).
pub const SOURCE: &str = include_str!("kernels.cu");

/// The kernels' source for a network whose norm-free blocks apply `act` (`None`: batch_norm
/// and fixup, whose ReLU is in [`SOURCE`]): `act(z)` and `slope(z, s)` from the activation's
/// CUDA form in the registry ([`ntk_model::activation::ActivationFn::cuda`]), then
/// [`SOURCE`]. An activation without a CUDA form is [`crate::cudnn::Error::NoCudaForm`].
pub fn source(act: Option<Normalized>) -> crate::cudnn::Result<String> {
    let (value, slope, what) = match act {
        None => (
            "z".to_string(),
            "1.f".to_string(),
            "none: ReLU only".to_string(),
        ),
        Some(n) => {
            let c = n.cuda().ok_or_else(|| crate::cudnn::Error::NoCudaForm {
                activation: n.activation().to_string(),
            })?;
            (c.value, c.slope, n.activation().to_string())
        }
    };
    Ok(format!(
        "// The activation ({what}), from the registry: s(z) and s'(z) given s = s(z).\n\
         __device__ __forceinline__ float act(float z) {{ return {value}; }}\n\
         __device__ __forceinline__ float slope(float z, float s) {{ (void)z; (void)s; return {slope}; }}\n\n\
         {SOURCE}"
    ))
}

/// Every kernel of [`SOURCE`], as the engine loads them.
pub const NAMES: [&str; 23] = [
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
    "square_error",
    "sgd",
    "bn_running",
];

/// [`source`] for `act` as PTX for compute capability `arch` (e.g. `"compute_90"`; `None`:
/// NVRTC's default). FMA contraction is off, so each product and sum rounds as on the host
/// engine.
pub fn compile(
    arch: Option<&'static str>,
    act: Option<Normalized>,
) -> crate::cudnn::Result<cudarc::nvrtc::Ptx> {
    let source = source(act)?;
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
    cudarc::nvrtc::compile_ptx_with_opts(source, opts)
        .map_err(|e| crate::cudnn::Error::Compile(format!("{e:?}")))
}

/// The CUDA version of the NVRTC that loads (`nvrtcVersion`); asked after [`compile`],
/// which probes for libnvrtc (cudarc panics on a missing one).
pub fn nvrtc_version() -> crate::cudnn::Result<ntk_cuda::CudaVersion> {
    let (mut major, mut minor): (std::ffi::c_int, std::ffi::c_int) = (0, 0);
    // SAFETY: `nvrtcVersion` writes one int through each pointer, both live locals; libnvrtc
    // loads ([`compile`] probed it before the caller asks).
    let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if status != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(crate::cudnn::Error::Compile(format!(
            "reading NVRTC's version: {status:?}"
        )));
    }
    let code = 1000 * u32::try_from(major).unwrap_or(0) + 10 * u32::try_from(minor).unwrap_or(0);
    Ok(ntk_cuda::CudaVersion::from_code(code))
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

    /// Every activation of the registry, normalized as the norm-free blocks apply it, and
    /// none (batch_norm, fixup).
    fn every_activation() -> Vec<Option<Normalized>> {
        use ntk_model::activation::{Activation, ActivationKind};
        let mut acts = vec![None];
        acts.extend(
            ActivationKind::all()
                .into_iter()
                .map(|k| Some(Normalized::new(Activation::new(k, None)))),
        );
        acts
    }

    #[test]
    fn the_activation_comes_first_and_the_source_names_no_other() {
        for act in every_activation() {
            let src = source(act).expect("every activation of the registry has a CUDA form");
            let at = |needle: &str| src.find(needle).unwrap_or_else(|| panic!("{needle}"));
            assert!(at("float act(float z)") < at("extern \"C\""));
            assert_eq!(src.matches("float act(float z)").count(), 1);
        }
        assert!(
            !SOURCE.contains("float act("),
            "kernels.cu defines no activation"
        );
    }

    /// NVRTC compiles the source, for every activation, wherever libnvrtc loads (CI installs
    /// PyPI's nvidia-cuda-nvrtc wheel: scripts/setup-nvrtc.sh); elsewhere the test says why
    /// it skips.
    #[test]
    fn the_kernels_compile_through_nvrtc() {
        if let Err(why) = crate::cudnn::libraries::load(crate::cudnn::libraries::Library::Nvrtc) {
            eprintln!("skipped: libnvrtc does not load here ({why})");
            return;
        }
        for act in every_activation() {
            let ptx = compile(Some("compute_90"), act).unwrap_or_else(|e| panic!("{act:?}: {e}"));
            assert!(ptx.to_src().contains(".entry act_forward("), "{act:?}");
        }
        // Its version by an independent route: the PTX's own header names the release.
        let v = nvrtc_version().expect("nvrtcVersion");
        let header = compile(None, None).expect("compiles").to_src();
        assert!(
            header.contains(&format!("release {v}, ")),
            "NVRTC {v}: {}",
            header.lines().take(6).collect::<Vec<_>>().join(" | ")
        );
        for arch in [None, Some("compute_80"), Some("compute_90")] {
            let ptx = compile(arch, None).unwrap_or_else(|e| panic!("{arch:?}: {e}"));
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
