//! The subcommands of `ntk-probe`, one module each, and what several of them share.

pub(crate) mod activations;
pub(crate) mod bench;
pub(crate) mod collect;
pub(crate) mod fig1;
pub(crate) mod gmap;
pub(crate) mod plot;
pub(crate) mod run;
pub(crate) mod sweep;
pub(crate) mod theory;
pub(crate) mod transfer;

use crate::CliResult;
use ntk_model::ActivationKind;
use std::path::Path;

/// The activations named on the command line (`--activations`), NormReLU with `kink`.
pub(crate) fn parse_activations(
    names: &[String],
    kink: Option<f64>,
) -> CliResult<Vec<ntk_model::Activation>> {
    if let Some(b) = kink {
        // The config's own rule for the kink (finite, in range).
        ntk_model::MlpConfig::new(1, 1, 1, ActivationKind::NormRelu)
            .with_kink(b)
            .validate()
            .map_err(|e| format!("--kink {b:?}: {e}"))?;
    }
    let mut acts = Vec::new();
    for name in names {
        let kind =
            ntk_model::ActivationKind::parse(name).ok_or_else(|| ntk_probe::Error::Config {
                key: "--activations",
                value: name.clone(),
                reason:
                    "not an activation (relu, linear, norm_relu, gelu, tanh, relu_squared, selu)"
                        .into(),
            })?;
        acts.push(ntk_model::Activation::new(kind, kink));
    }
    Ok(acts)
}

/// The output directory of a figure command, created and locked for this process (one
/// writer at a time, `ntk_runs::lock`; the commands write only their own named files, each
/// atomically, beside whatever else the directory holds, such as a README).
pub(crate) fn figure_dir(out: &Path) -> CliResult<ntk_runs::lock::DirLock> {
    let out = ntk_runs::outset::resolve_out(out)?;
    ntk_runs::outset::check_writable(&out)?;
    Ok(ntk_runs::lock::DirLock::acquire(&out)?)
}
