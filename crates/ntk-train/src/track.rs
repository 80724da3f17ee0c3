//! The probes during training:
//! - the NTK of a fixed subset of the training set (beyond the papers), its condition number
//!   kappa = lambda_max / lambda_min (the kernel in `ntk.precision`: f64 by default on the
//!   CPU; float64 spectrum, singular below n eps lambda_max as in `ntk_numerics::spectrum`)
//!   and the minimum pairwise model-gradient angle, with the probe's own kernel routes
//!   (structured for MLPs, per-sample gradients otherwise; BatchNorm in evaluation mode);
//! - the representations of a fixed subset of the test set (Agarwal et al., Fig. 1): at
//!   every layer, the average normalized dot product between the inputs' representations
//!   ([`representations`]).
//!
//! Both are taken at initialization and every K epochs ([`Tracking`]), their rows rewritten to
//! `ntk.csv` and `representations.csv` each time.

use std::time::Instant;

use ntk_data::inputs::Inputs;
use ntk_kernel::batch_norm::BnStatistics;
use ntk_kernel::compute::Method;
use ntk_numerics::backend::{Compute, Precision};
use ntk_numerics::kernel::OutputMode;

use burn::tensor::Tensor;
use faer::MatRef;
use ntk_numerics::linalg::gram_lower;

use ntk_engine::Stepper;

use crate::config::{NtkTrackConfig, RepresentationTrackConfig, TrainConfig};
use crate::data::Data;
use crate::metrics::{NtkRow, RepresentationRow, Tracked, write_csv};
use crate::model::Model;
use crate::run::Run;

/// Measures the NTK of `model` (plain device, evaluation mode) on `probe`, in `precision`
/// (`ntk.precision`): the kernel of the trained parameters, cast when the run trains in
/// another precision (f32 parameters widen to f64 exactly), on the run's device.
pub fn measure(
    model: &Model,
    probe: &Inputs,
    compute: &Compute,
    (output, precision, stats): (OutputMode, Precision, BnStatistics),
    epoch: usize,
) -> crate::Result<NtkRow> {
    let t = Instant::now();
    let cast;
    let (model, compute) = if precision == compute.precision {
        (model, compute.clone())
    } else {
        cast = ntk_kernel::compute::with_precision(model, precision);
        let c = Compute {
            precision,
            ..compute.clone()
        };
        (&cast, c)
    };
    // The kernel as tracked, of this network or (for the underflow check) another on some
    // of the inputs.
    let kernel_of = |net: &Model, some: &Inputs| {
        ntk_kernel::batch_norm::compute_kernel_net_stats(
            net,
            some,
            &compute,
            (Method::Auto, output),
            stats,
            &mut ntk_kernel::host::HostCache::default(),
        )
    };
    let result = kernel_of(model, probe)?;
    if let Some(sample) = first_non_finite_sample(&result.kernel, probe.n) {
        return Err(crate::Error::NtkNotFinite {
            epoch,
            sample,
            row: probe.source_row(sample),
            data: probe.description.clone(),
            largest: largest_magnitude(probe, sample),
            precision,
        });
    }
    // With the batch's own statistics a 0 of the network's own cannot be told from an
    // underflow, and the samples interact: a diagonal entry below the precision's smallest
    // normal number is refused, as ntk-probe refuses it (hundred-and-thirty-third hostile
    // round, D2: a row at 1e25 in f32 gave an all-zero kernel, "rank 0", exit 0).
    if stats == BnStatistics::Batch
        && let Some((sample, value)) = first_subnormal_diagonal(&result.kernel, probe.n, precision)
    {
        // The batch's statistics are every sample's: its largest input is named too.
        let top = (0..probe.n)
            .max_by(|&a, &b| largest_magnitude(probe, a).total_cmp(&largest_magnitude(probe, b)))
            .unwrap_or(sample);
        let why = format!(
            " (with ntk.batch_norm_statistics = \"batch\" the samples share the batch's \
             statistics, whose largest input is row {} of the file at {:.3e}, and a 0 of the \
             network's own cannot be told from an underflow)",
            probe.source_row(top),
            largest_magnitude(probe, top)
        );
        return Err(underflow(epoch, probe, (sample, value), precision, why));
    }
    let again = |net: &Model, some: &Inputs| kernel_of(net, some).map(|r| r.kernel);
    let outputs = output.outputs(model.spec().classes());
    let formed = ntk_kernel::underflow::Formed::Empirical {
        net: model,
        precision,
        again: &again,
        outputs: &outputs,
    };
    if let Some(ntk_kernel::underflow::Underflow { sample, value, why }) =
        ntk_kernel::underflow::first_underflowing_sample(probe, &result.kernel, formed)?
    {
        return Err(underflow(epoch, probe, (sample, value), precision, why));
    }
    // The smallest angle is held to the rule of the probe's angles: empty where the
    // kernel's precision does not resolve it (hundred-and-thirty-seventh hostile round, D2).
    let resolution = ntk_kernel::angles::Resolution::of_route(
        result.route,
        compute.precision,
        model.rounding_depth(),
    );
    let rows = Some((probe.x.as_slice(), probe.d));
    let conditioning =
        ntk_kernel::api::Conditioning::of_network(&result.kernel, resolution, output, rows)
            .map_err(|e| crate::Error::Ntk {
                epoch,
                source: Box::new(e.into()),
            })?;
    Ok(NtkRow::of(
        epoch,
        probe.n,
        &conditioning,
        t.elapsed().as_secs_f64(),
    ))
}

/// [`crate::Error::NtkUnderflow`] of tracked sample `sample`, whose `K(x, x)` is `value`.
fn underflow(
    epoch: usize,
    probe: &Inputs,
    (sample, value): (usize, f64),
    precision: Precision,
    why: String,
) -> crate::Error {
    crate::Error::NtkUnderflow {
        epoch,
        sample,
        row: probe.source_row(sample),
        data: probe.description.clone(),
        largest: largest_magnitude(probe, sample),
        value,
        precision,
        why,
        f64: match precision {
            Precision::F64 => "",
            _ => ", or track it in f64 (ntk.precision = \"f64\")",
        },
    }
}

/// The first sample (of `n`) with a diagonal entry `K(x, x)` below `precision`'s smallest
/// normal number, with that entry.
fn first_subnormal_diagonal(
    k: &ntk_numerics::kernel::Kernel,
    n: usize,
    precision: Precision,
) -> Option<(usize, f64)> {
    let normal = match precision {
        Precision::F64 => f64::MIN_POSITIVE,
        _ => f64::from(f32::MIN_POSITIVE),
    };
    let per = (k.size / n.max(1)).max(1);
    (0..k.size)
        .map(|i| (i, k.data[i * k.size + i]))
        .find(|&(_, v)| v.abs() < normal)
        .map(|(i, v)| (i / per, v))
}

/// The largest magnitude of sample `sample`'s input row.
pub(crate) fn largest_magnitude(inputs: &Inputs, sample: usize) -> f64 {
    inputs.x[sample * inputs.d..(sample + 1) * inputs.d]
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()))
}

/// The first tracked sample whose kernel row holds a NaN or an infinity (the kernel of `n`
/// samples, `size / n` rows each: one per output for `ntk.output = "full"`), if any.
/// The sample whose own `K(x, x)` is not finite comes first: an overflowing sample makes
/// every row's entry beside it infinite, and the first such row named an innocent sample
/// (hundred-and-thirty-third hostile round, D1: a random subset's sample 0, whose row is
/// ordinary, for the file's row 0 at 3e29).
fn first_non_finite_sample(k: &ntk_numerics::kernel::Kernel, n: usize) -> Option<usize> {
    let per = (k.size / n.max(1)).max(1);
    let diagonal = (0..k.size).find(|&i| !k.data[i * k.size + i].is_finite());
    let row = match diagonal {
        Some(i) => i,
        None => k.data.iter().position(|v| !v.is_finite())? / k.size.max(1),
    };
    Some(row / per)
}

/// Every layer's representation of `inputs` by `model` (plain device, evaluation mode), as
/// (name, rows `[n, width]` row-major f64): the inputs, then an MLP's hidden activations
/// `a_1..a_L` (after normalization and activation) or a ResNet's stem, each block's output
/// and the pooled features that the classifier reads.
pub fn layer_representations(
    model: &Model,
    inputs: &Inputs,
    compute: &Compute,
) -> Vec<(String, Vec<f64>)> {
    let x = ntk_kernel::compute::to_tensor(inputs, compute);
    let flat = |t: Tensor<2>| -> Vec<f64> {
        t.try_into_vec_as::<f64>()
            .expect("reading a representation from the device")
    };
    let mut out = vec![("input".to_string(), inputs.x.clone())];
    out.extend(
        model
            .representations(x)
            .into_iter()
            .map(|(name, h)| (name, flat(h))),
    );
    out
}

/// The mean cosine and mean absolute cosine over the pairs `i < j` of the `n` rows of
/// `h` (`[n, width]` row-major): the rows' Gram matrix (one SYRK), each entry divided by
/// the two norms; a pair with a zero row counts as 0.
pub fn mean_cosines(h: &[f64], n: usize) -> (f64, f64) {
    let width = h.len().checked_div(n).unwrap_or(0);
    if n < 2 || width == 0 {
        return (0.0, 0.0);
    }
    let g = gram_lower(MatRef::from_row_major_slice(h, n, width), 1.0);
    let norm: Vec<f64> = (0..n).map(|i| g[(i, i)].max(0.0).sqrt()).collect();
    let (mut sum, mut abs) = (0.0, 0.0);
    for j in 0..n {
        for i in j + 1..n {
            let d = norm[i] * norm[j];
            let c = if d > 0.0 { g[(i, j)] / d } else { 0.0 };
            sum += c;
            abs += c.abs();
        }
    }
    let pairs = (n * (n - 1) / 2) as f64;
    (sum / pairs, abs / pairs)
}

/// The rows of `representations.csv` for `model` after `epoch` epochs (0: at init).
pub fn representations(
    model: &Model,
    inputs: &Inputs,
    compute: &Compute,
    epoch: usize,
) -> Vec<RepresentationRow> {
    layer_representations(model, inputs, compute)
        .into_iter()
        .enumerate()
        .map(|(layer, (name, h))| {
            let (mean_cosine, mean_abs_cosine) = mean_cosines(&h, inputs.n);
            RepresentationRow {
                epoch,
                layer,
                name,
                n: inputs.n,
                mean_cosine,
                mean_abs_cosine,
            }
        })
        .collect()
}

/// The probes of a run during training: the NTK (`[ntk]`) of the first `ntk.n` training
/// samples, and the representations (`[representations]`) of the first
/// `representations.n` test inputs.
pub(crate) struct Tracking<'a> {
    ntk: Option<(&'a NtkTrackConfig, Inputs)>,
    representations: Option<(&'a RepresentationTrackConfig, Inputs)>,
}

impl<'a> Tracking<'a> {
    pub(crate) fn new(cfg: &'a TrainConfig, data: &Data) -> crate::Result<Option<Self>> {
        let first = |set: &Inputs, n: usize| set.select(&(0..n.min(set.n)).collect::<Vec<_>>());
        let ntk = cfg.ntk.as_ref().map(|k| (k, first(&data.train, k.n)));
        let representations = match (&cfg.representations, &data.test) {
            (Some(r), Some(test)) => Some((r, first(test, r.n))),
            (Some(_), None) => {
                return Err(crate::Error::RepresentationsNeedTestSet);
            }
            (None, _) => None,
        };
        Ok(
            (ntk.is_some() || representations.is_some()).then_some(Self {
                ntk,
                representations,
            }),
        )
    }

    /// The warnings of the tracked NTK of `model` on its probe inputs: the inputs' scale
    /// decides kappa ([`ntk_kernel::scale::input_scale_warning`]).
    pub(crate) fn warnings(&self, model: &Model) -> Vec<String> {
        self.ntk
            .as_ref()
            .and_then(|(_, probe)| ntk_kernel::scale::input_scale_warning(model, probe))
            .into_iter()
            .collect()
    }

    /// Whether a probe taken every `every` epochs is due after `epoch` (and after the last).
    fn due(every: usize, epoch: usize, last: bool) -> bool {
        last || epoch.is_multiple_of(every)
    }

    /// Whether any probe is due after `epoch`.
    fn any_due(&self, epoch: usize, last: bool) -> bool {
        let ntk = self.ntk.as_ref().map(|(k, _)| k.every);
        let reps = self.representations.as_ref().map(|(r, _)| r.every);
        [ntk, reps]
            .into_iter()
            .flatten()
            .any(|every| Self::due(every, epoch, last))
    }

    /// Takes the probes due after `epoch` (0: at initialization, all of them) that
    /// `tracked` does not hold yet, on the stepper's network in evaluation mode (built only
    /// when a probe is due), and rewrites their tables (`ntk.csv`, `representations.csv`).
    /// A run checkpoints an epoch before its probes (so that an interruption while they
    /// measure keeps the epoch), and a resumed run calls this for its checkpoint's epoch:
    /// what the interruption left unmeasured is measured then, on the same model.
    pub(crate) fn record(
        &self,
        run: &Run,
        stepper: &dyn Stepper,
        tracked: &mut Tracked,
        epoch: usize,
        last: bool,
    ) -> crate::Result<()> {
        if !self.any_due(epoch, last) {
            return Ok(());
        }
        let model = &stepper.valid();
        if let Some((k, probe)) = &self.ntk
            && Self::due(k.every, epoch, last)
            && !tracked.ntk.iter().any(|r| r.epoch == epoch)
        {
            let precision = run
                .ntk_precision
                .expect("a run that tracks the NTK resolves its precision");
            let stats = k.batch_norm_statistics.unwrap_or_default();
            let how = (k.output, precision, stats);
            let spinner = run.reporter.spinner(format!(
                "{}: the NTK of {} samples after epoch {epoch}",
                run.labels.model, probe.n
            ));
            let row = measure(model, probe, run.compute, how, epoch);
            spinner.finish_and_clear();
            tracked.ntk.push(row?);
            write_csv(&run.out.join("ntk.csv"), &tracked.ntk)?;
        }
        if let Some((r, probe)) = &self.representations
            && Self::due(r.every, epoch, last)
            && !tracked.representations.iter().any(|r| r.epoch == epoch)
        {
            let rows = representations(model, probe, run.compute, epoch);
            tracked.representations.extend(rows);
            write_csv(
                &run.out.join("representations.csv"),
                &tracked.representations,
            )?;
        }
        Ok(())
    }
}
