//! The probe during training (beyond the papers): the NTK of a fixed subset of the
//! training set, its condition number kappa = lambda_max / lambda_min (float64 spectrum,
//! singular below n eps lambda_max as in `ntk_core::spectrum`) and the minimum pairwise
//! model-gradient angle, taken at initialization and every K epochs with the probe's own
//! kernel routes (structured for MLPs, autodiff otherwise; BatchNorm in evaluation mode).

use std::time::Instant;

use ntk_core::backend::Compute;
use ntk_core::kernel::OutputMode;
use ntk_data::inputs::Inputs;
use ntk_probe::config::Method;

use crate::metrics::NtkRow;
use crate::model::Model;

/// Measures the NTK of `model` (plain device, evaluation mode) on `probe`.
pub fn measure(
    model: &Model,
    probe: &Inputs,
    compute: &Compute,
    output: OutputMode,
    epoch: usize,
) -> crate::Result<NtkRow> {
    let t = Instant::now();
    let result = ntk_probe::run::compute_kernel_net(model, probe, compute, Method::Auto, output)?;
    let spectrum = ntk_core::spectrum::spectrum(&result.kernel, compute.precision.epsilon())
        .map_err(|e| crate::Error::Ntk {
            epoch,
            source: Box::new(e.into()),
        })?;
    Ok(NtkRow {
        epoch,
        n: probe.n,
        lambda_min: spectrum.lambda_min,
        lambda_max: spectrum.lambda_max,
        kappa: (!spectrum.singular).then_some(spectrum.kappa),
        singular: spectrum.singular,
        rank: spectrum.rank,
        min_grad_angle_deg: ntk_probe::angles::min_angle(&result.kernel).map(|a| a.deg),
        seconds: t.elapsed().as_secs_f64(),
    })
}
