//! The subcommands of `ntk-probe`, one module each, and what several of them share.

pub(crate) mod activations;
pub(crate) mod bench;
pub(crate) mod collect;
pub(crate) mod fig1;
pub(crate) mod gmap;
pub(crate) mod onnx;
pub(crate) mod plot;
pub(crate) mod run;
pub(crate) mod sweep;
pub(crate) mod theory;
pub(crate) mod transfer;

use crate::CliResult;
use ntk_model::ActivationKind;
use std::path::Path;

/// The activations named on the command line (`--activations`): names, or words with a
/// parameter (`leaky_relu(alpha=0.1)`); a NormReLU named without one takes `kink`.
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
    let acts: Vec<ntk_model::Activation> = names
        .iter()
        .map(|name| parse_activation("--activations", name, kink))
        .collect::<CliResult<_>>()?;
    // One activation spelled two ways (`norm_relu(b=1)`, `norm_relu(b=1.0)`; the default
    // kink written out beside `norm_relu`) is one column twice (twenty-fifth hostile round,
    // D2: `relu,relu` was refused, these were drawn twice under one name).
    for (j, a) in acts.iter().enumerate() {
        if let Some(i) = acts[..j]
            .iter()
            .position(|b| b.kind() == a.kind() && b.param() == a.param())
        {
            return Err(format!(
                "--activations: {} and {} are one activation ({a}); give each once",
                names[i], names[j]
            )
            .into());
        }
    }
    // A kink no listed activation takes would change nothing (twenty-second hostile round,
    // D5), as `theory` refuses it.
    if let Some(b) = kink
        && !acts.iter().any(|a| a.kind() == ActivationKind::NormRelu)
    {
        return Err(format!(
            "--kink {b:?}: only norm_relu has a kink, and --activations lists none ({})",
            names.join(", ")
        )
        .into());
    }
    Ok(acts)
}

/// One activation named on the command line under `key` (see [`parse_activations`]); the
/// error lists every family, from the registry.
pub(crate) fn parse_activation(
    key: &'static str,
    words: &str,
    kink: Option<f64>,
) -> CliResult<ntk_model::Activation> {
    // The user's words as a message shows them: a newline escaped too (hundred-and-fifth
    // hostile round, D3).
    let shown = ntk_files::shown::controls_escaped(words);
    let act = ntk_model::Activation::read_words(words).map_err(|e| match e {
        e @ (ntk_model::activation::WordsError::Param(_)
        | ntk_model::activation::WordsError::Symbol { .. }
        | ntk_model::activation::WordsError::Underflow { .. }) => format!("{key} {shown}: {e}"),
        ntk_model::activation::WordsError::Unknown => format!(
            "{key} {shown}: not an activation ({}), such as relu, norm_relu(b=-0.2) or \
             leaky_relu(alpha=0.1)",
            ActivationKind::list()
        ),
    })?;
    Ok(match (act.kind(), words.contains('('), kink) {
        (ActivationKind::NormRelu, false, Some(b)) => {
            ntk_model::Activation::new(ActivationKind::NormRelu, Some(b))
        }
        (ActivationKind::NormRelu, true, Some(b)) => {
            return Err(format!("{key} {words} --kink {b:?}: the kink is given twice").into());
        }
        _ => act,
    })
}

/// The output directory of a figure command, created and locked for this process (one
/// writer at a time, `ntk_files::lock`; the commands write only their own named files, each
/// atomically, beside whatever else the directory holds, such as a README), with the places
/// of the files it writes, its `tables` (each with its header's first names in `heads`) and the
/// figures of `stems`, checked before any work ([`ntk_plot::check_places`]).
pub(crate) fn figure_dir(
    out: &Path,
    tables: &[&str],
    heads: &[&[&str]],
    stems: &[&str],
) -> CliResult<ntk_files::lock::DirLock> {
    let out = ntk_files::outset::check_figure_dir(out)?;
    ntk_files::outset::check_writable(&out)?;
    ntk_plot::check_places(&out, tables, heads, stems)?;
    Ok(ntk_files::lock::DirLock::acquire(&out)?)
}
