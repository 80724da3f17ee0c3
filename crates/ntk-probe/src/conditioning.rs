//! What the probe reads off a kernel's spectrum ([`SpectrumSummary`]: the extreme
//! eigenvalues, kappa, rank, singular), from the full spectrum or the extreme eigensolver;
//! shared by a probe run, its blocks and the benchmark.

use ntk_numerics::spectrum::Spectrum;

/// The conditioning numbers of one protocol (or of one benchmarked kernel).
pub(crate) struct SpectrumSummary {
    pub(crate) lambda_min: f64,
    pub(crate) lambda_max: f64,
    /// `None` when the kernel is numerically singular.
    pub(crate) kappa: Option<f64>,
    pub(crate) singular: bool,
    pub(crate) rank: usize,
}

impl From<&ntk_kernel::extreme::Extreme> for SpectrumSummary {
    fn from(e: &ntk_kernel::extreme::Extreme) -> Self {
        Self {
            lambda_min: e.lambda_min,
            lambda_max: e.lambda_max,
            kappa: (!e.singular).then_some(e.kappa),
            singular: e.singular,
            rank: e.rank_lower_bound,
        }
    }
}

impl From<&Spectrum> for SpectrumSummary {
    fn from(s: &Spectrum) -> Self {
        Self {
            lambda_min: s.lambda_min,
            lambda_max: s.lambda_max,
            kappa: (!s.singular).then_some(s.kappa),
            singular: s.singular,
            rank: s.rank,
        }
    }
}
