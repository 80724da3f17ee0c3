//! What a dry run foresees of a run before it trains: whether a kernel of the network at
//! initialization leaves its precision's range, the tracked NTK (`[ntk]`, taken at epoch 0)
//! or the `[prediction]` kernels, which the run refuses before its first step
//! (hundred-and-second hostile round, N1: the dry run said "new" for runs the run then
//! refused). Checked as the run checks them ([`crate::track::measure`],
//! [`crate::predict::foresee`]), on the inputs of the smallest nonzero and of the largest norm
//! of each set, on the host (a dry run opens no GPU for this): for an MLP without
//! normalization, whose `K(x, x)` is its input's alone, so the two stand for the set as the
//! probe's dry run takes them ([`ntk_kernel::underflow`]). Other networks are left to the run.

use ntk_data::inputs::Inputs;
use ntk_kernel::batch_norm::BnStatistics;
use ntk_model::Net;
use ntk_numerics::backend::{self, Compute, Precision};
use ntk_numerics::kernel::OutputMode;

use crate::config::{PredictKernel, TrainConfig};
use crate::data::Data;

/// Why a run of `cfg` on `data` would fail at its kernels of epoch 0, if it would and that can
/// be told here; `compute`: the run's backend (a host one is taken in its place).
pub fn foresee(cfg: &TrainConfig, data: &Data, compute: &Compute) -> crate::Result<Option<String>> {
    if cfg.ntk.is_none() && cfg.prediction.is_none() {
        return Ok(None);
    }
    // A config the run refuses is refused by the checks before this.
    let Ok(spec) = cfg.spec() else {
        return Ok(None);
    };
    let Some(host) = on_host(compute) else {
        return Ok(None);
    };
    let Ok(model) = spec.build(data.train.d, &host.device, host.dtype()) else {
        return Ok(None);
    };
    let failed = |e: crate::Error| Ok(Some(e.to_string()));
    // With the batch's own statistics the samples interact: the tracked kernel of epoch 0 is
    // taken whole, as the run takes it (hundred-and-thirty-third hostile round, D2: the dry
    // run said "new" where the run's kernel underflowed).
    if let Some(k) = &cfg.ntk
        && k.batch_norm_statistics == Some(BnStatistics::Batch)
        && matches!(&model, Net::Mlp(m) if !m.batch_norms.is_empty())
    {
        let probe = data
            .train
            .select(&(0..k.n.min(data.train.n)).collect::<Vec<_>>());
        let how = (k.output, k.precision_on(compute), BnStatistics::Batch);
        if let Err(e @ (crate::Error::NtkUnderflow { .. } | crate::Error::NtkNotFinite { .. })) =
            crate::track::measure(&model, &probe, &host, how, 0)
        {
            return failed(e);
        }
    }
    if !matches!(&model, Net::Mlp(m) if m.batch_norms.is_empty() && m.layer_norms.is_empty()) {
        return Ok(None);
    }
    if let Some(k) = &cfg.ntk {
        let probe = data
            .train
            .select(&(0..k.n.min(data.train.n)).collect::<Vec<_>>());
        let precision = k.precision_on(compute);
        let rows = with_extremes(suspects(&model, &probe, precision, k.output), &probe);
        let how = (
            k.output,
            precision,
            k.batch_norm_statistics.unwrap_or_default(),
        );
        let some = probe.select(&rows);
        // An error of the range checks, its sample named as the set's row; anything else is
        // the run's to say.
        if !rows.is_empty()
            && let Err(
                mut e @ (crate::Error::NtkUnderflow { .. } | crate::Error::NtkNotFinite { .. }),
            ) = crate::track::measure(&model, &some, &host, how, 0)
        {
            if let crate::Error::NtkUnderflow { sample, .. }
            | crate::Error::NtkNotFinite { sample, .. } = &mut e
            {
                *sample = rows[*sample];
            }
            return failed(e);
        }
        note_trace(&model, &probe, precision, k.output);
    }
    if cfg.prediction.is_some() {
        let all = crate::predict::inputs(data);
        if let Err(e) = crate::predict::foresee_theory_range(cfg, &model, (&all, data.train.n)) {
            return failed(e);
        }
        let mut rows = with_extremes(
            suspects(&model, &all, Precision::F64, OutputMode::Sum),
            &all,
        );
        // The first input whose diagonal passes f64 too: the kernel's overflow is not always
        // at an input of extreme norm (hundred-and-sixteenth hostile round, D1: a test row's,
        // refused by the run, "new" from the dry run). One diagonal of every input serves
        // this and the trace's note.
        let diagonal = prediction_diagonal(&model, &all);
        rows.extend(
            diagonal
                .as_ref()
                .and_then(|d| d.iter().position(|v| !v.is_finite())),
        );
        rows.sort_unstable();
        rows.dedup();
        if !rows.is_empty()
            && let Err(
                e @ (crate::Error::PredictionUnderflow { .. }
                | crate::Error::PredictionOverflow { .. }
                | crate::Error::PredictionNotFinite { .. }),
            ) = crate::predict::foresee(cfg, &model, (&all, &rows, data.train.n), &host)
        {
            return failed(e);
        }
        let train_diagonal = diagonal.as_ref().map(|d| &d[..data.train.n]);
        note_prediction_trace(cfg, &model, &data.train, train_diagonal);
    }
    Ok(None)
}

/// The inputs whose `K(x, x)` the run would find out of range, by every input's diagonal
/// ([`ntk_kernel::host::diagonal`]: one forward and backward, no kernel, in `precision` as the
/// structured route forms it; the smallest over the outputs): the first whose entry is
/// subnormal, else every nonzero input whose entry is 0 and which the network scaled by
/// powers of two does not keep at 0 (the run proves them again), so that the dry run names the row
/// the run names (hundred-and-fourth hostile round, D2: the inputs of the extreme norms
/// alone named row 7 where the run named row 2). `None` where the structured route does not
/// apply.
fn suspects(
    model: &Net,
    inputs: &Inputs,
    precision: Precision,
    output: OutputMode,
) -> Option<Vec<usize>> {
    let Net::Mlp(mlp) = model else {
        return None;
    };
    let outputs = output.outputs(mlp.config().output_dim);
    let per_output = output == OutputMode::Full;
    ntk_kernel::underflow::suspects(mlp, inputs, &outputs, per_output, precision)
}

/// The empirical `[prediction]` kernel's diagonal at every one of `inputs` (the sum over the
/// network's outputs divided by their number, in f64, from the host diagonal: one forward and
/// backward, no kernel), for an MLP; `None` for another network.
fn prediction_diagonal(model: &Net, inputs: &Inputs) -> Option<Vec<f64>> {
    use ntk_kernel::host::diagonal::{Formed, largest_diagonal};
    let Net::Mlp(mlp) = model else {
        return None;
    };
    let k = mlp.config().output_dim;
    let outputs: Vec<usize> = (0..k).collect();
    let x = (inputs.x.as_slice(), inputs.n);
    Some(
        largest_diagonal::<f64>(mlp, x, &outputs, false, Formed::InPrecision)
            .into_iter()
            .map(|v| v / k as f64)
            .collect(),
    )
}

/// `compute` where it is on the host, else the first host backend built in, in its
/// precision.
fn on_host(compute: &Compute) -> Option<Compute> {
    if compute.on_host() {
        return Some(compute.clone());
    }
    let host = backend::available().into_iter().find(|b| b.on_host())?;
    backend::select(Some(host.name()), compute.precision).ok()
}

/// Says, as ntk-probe's dry run says it, where the tracked kernel's diagonal entries are each
/// finite but their sum, the kernel's trace, is not: lambda_max, between the trace's `1/n`
/// and the trace, may pass f64's range, which the run refuses at epoch 0 once the kernel is
/// formed (hundred-and-fourteenth hostile round, D1: 40 rows of norm 2e153, rc 0 from the
/// dry run, "lambda_max = 1.247e309" from the run).
fn note_trace(model: &Net, probe: &Inputs, precision: Precision, output: OutputMode) {
    let Net::Mlp(mlp) = model else {
        return;
    };
    let outputs = output.outputs(mlp.config().output_dim);
    let per_output = output == OutputMode::Full;
    if trace_passes(mlp, probe, precision, (&outputs, per_output)) {
        eprintln!(
            "note: [ntk]: the tracked kernel's trace (the sum of its diagonal K(x, x) over the \
             {} tracked samples) passes f64's largest number, so its lambda_max may too, which \
             the run refuses at epoch 0 once the kernel is formed; rescale the inputs down",
            probe.n
        );
    }
}

/// [`note_trace`] for each `[prediction]` kernel, whose spectrum is that of its block over
/// every training input `train` (not only the tracked ones): the empirical kernel's trace
/// from every training input's diagonal (`diagonal`, [`prediction_diagonal`]), the theory's bounded
/// by its largest `K(x, x)` of the inputs of extreme norm times `n`, as ntk-probe's dry run
/// bounds it (hundred-and-fifteenth hostile round, D1: with `ntk.n = 2` of 40 rows of norm
/// 2e153, rc 0 and no note from the dry run; the run refused "lambda_max = 3.199e308").
fn note_prediction_trace(cfg: &TrainConfig, model: &Net, train: &Inputs, diagonal: Option<&[f64]>) {
    let (Some(p), Net::Mlp(mlp)) = (&cfg.prediction, model) else {
        return;
    };
    for &which in &p.kernels {
        let name = which.name();
        match which {
            PredictKernel::Empirical => {
                let passes = diagonal.is_some_and(|d| {
                    d.iter().all(|v| v.is_finite()) && d.iter().sum::<f64>().is_infinite()
                });
                if passes {
                    eprintln!(
                        "note: [prediction]: kernels = [\"{name}\"]: the kernel's trace (the \
                         sum of its diagonal K(x, x) over the {} training inputs) passes f64's \
                         largest number, so its lambda_max may too, which the run refuses \
                         before its first step once the kernel is formed; rescale the inputs \
                         down",
                        train.n
                    );
                }
            }
            PredictKernel::Theory => {
                let Some(top) = theory_largest_diagonal(mlp, train) else {
                    continue;
                };
                if (top * train.n as f64).is_infinite() {
                    eprintln!(
                        "note: [prediction]: kernels = [\"{name}\"]: the infinite-width K(x, x) \
                         of the largest training input, {top:.3e}, times n = {} passes f64's \
                         largest number: the kernel's trace, and so its lambda_max, may too, \
                         which the run refuses before its first step once the kernel is \
                         formed; rescale the inputs down",
                        train.n
                    );
                }
            }
        }
    }
}

/// The largest of the infinite-width `K(x, x)` (of one output) at the inputs of extreme norm
/// of `inputs` ([`extreme_rows`]); `None` where the theory does not cover `mlp` or a value is
/// not finite (the range checks before this say why).
fn theory_largest_diagonal(mlp: &ntk_model::Mlp, inputs: &Inputs) -> Option<f64> {
    let one = ntk_model::MlpConfig {
        output_dim: 1,
        ..mlp.config().clone()
    };
    let scaling = ntk_kernel::theory::Scaling::of(&one).ok()?;
    let dual = ntk_kernel::theory::DualEvaluator::new(mlp.activation());
    let d = inputs.d;
    let mut top = 0.0f64;
    for r in extreme_rows(inputs) {
        let row = &inputs.x[r * d..(r + 1) * d];
        let k =
            ntk_kernel::theory::infinite_width_kernels_scaled(row, 1, d, &dual, &scaling, &|_| {})
                .ntk;
        let v = k.data[0];
        if !v.is_finite() {
            return None;
        }
        top = top.max(v);
    }
    Some(top)
}

/// Whether every diagonal entry `K(x, x)` of `mlp`'s kernel over `inputs` (of `outputs`, each
/// apart where `per_output`, formed in `precision` as the structured route forms it) is
/// finite and their sum, the kernel's trace, is not.
fn trace_passes(
    mlp: &ntk_model::Mlp,
    inputs: &Inputs,
    precision: Precision,
    (outputs, per_output): (&[usize], bool),
) -> bool {
    use ntk_kernel::host::diagonal::{Formed, largest_diagonal};
    let x = (inputs.x.as_slice(), inputs.n);
    let formed = Formed::InPrecision;
    let diagonal = match precision {
        Precision::F32 => largest_diagonal::<f32>(mlp, x, outputs, per_output, formed),
        Precision::F64 => largest_diagonal::<f64>(mlp, x, outputs, per_output, formed),
    };
    diagonal.iter().all(|v| v.is_finite()) && !diagonal.iter().sum::<f64>().is_finite()
}

/// The rows the checks measure: the underflow suspects (where the diagonal tells them) and
/// the inputs of the largest and smallest nonzero norm always, whose kernels overflow first
/// and underflow first (hundred-and-thirteenth hostile round, D5: with no suspect the rows of
/// norm 1e154 were not measured, and the dry run passed a run that failed at epoch 0).
fn with_extremes(suspects: Option<Vec<usize>>, inputs: &Inputs) -> Vec<usize> {
    let mut rows = suspects.unwrap_or_default();
    rows.extend(extreme_rows(inputs));
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// The rows of `inputs` of the smallest nonzero and of the largest norm (one where they are
/// the same; none of an empty set), in row order.
fn extreme_rows(inputs: &Inputs) -> Vec<usize> {
    let d = inputs.d.max(1);
    // Each norm formed from the row scaled by its largest magnitude: a row at 1e-170 has a
    // squared norm that underflows to 0, and is still nonzero.
    let norms: Vec<f64> = inputs
        .x
        .chunks(d)
        .map(|r| {
            let m = r.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            if m == 0.0 || !m.is_finite() {
                return m;
            }
            m * r.iter().map(|v| (v / m) * (v / m)).sum::<f64>().sqrt()
        })
        .collect();
    let largest = (0..norms.len()).max_by(|&a, &b| norms[a].total_cmp(&norms[b]));
    let smallest = (0..norms.len())
        .filter(|&r| norms[r] > 0.0)
        .min_by(|&a, &b| norms[a].total_cmp(&norms[b]));
    let mut rows: Vec<usize> = largest.into_iter().chain(smallest).collect();
    rows.sort_unstable();
    rows.dedup();
    rows
}
