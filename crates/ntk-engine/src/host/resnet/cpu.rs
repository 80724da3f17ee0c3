//! Whether this CPU runs the direct convolutions: AVX2 with FMA ([`available`], the
//! code of [`super::simd`]; [`super::avx512`] needs it too), unless `NTK_HOST_CONV=im2col`
//! switches them off.

/// Whether the direct convolution runs here: x86-64 with AVX2 and FMA, and not switched off by
/// `NTK_HOST_CONV=im2col`.
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let off = std::env::var("NTK_HOST_CONV").is_ok_and(|v| v == "im2col");
        !off && cpu_has_fma()
    })
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_fma() -> bool {
    false
}
