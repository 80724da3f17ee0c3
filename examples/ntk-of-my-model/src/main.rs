//! The library from a crate of your own (README, "As a library"):
//!
//! 1. the empirical NTK of a Burn module defined here ([`model::Classifier`], with a
//!    LayerNorm: no layer of ntk-model's) on 200 digits, formed in f32 and in f64
//!    (`empirical_ntk`'s precision parameter), with its condition number, rank and minimum
//!    gradient angle;
//! 2. the same module trained by burn-train's `Learner` (SGD), with the NTK's kappa and
//!    minimum gradient angle on that probe batch as training metrics every 10 steps
//!    (`ntk_kernel::train_metric`, feature `burn-train`), also written to `OUT/ntk.csv`.
//!
//! It checks itself: the metric's step-0 measurement must equal the kernel formed by hand in
//! (1), and there must be one measurement per 10 steps; it exits 1 otherwise.
//!
//! `cargo run --manifest-path examples/ntk-of-my-model/Cargo.toml -- DIGITS_DIR [OUT_DIR]`

mod data;
mod epoch_lines;
mod model;

use std::error::Error;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use burn::data::dataloader::DataLoaderBuilder;
use burn::optim::SgdConfig;
use burn::tensor::Tensor;
use burn::train::metric::{AccuracyMetric, LossMetric};
use burn::train::{Learner, SupervisedTraining};
use ntk_kernel::api::{Conditioning, empirical_ntk};
use ntk_kernel::train_metric::{MetricRow, NtkProbe};
use ntk_numerics::backend::{self, Precision};
use ntk_numerics::kernel::OutputMode;

use model::Classifier;

/// Probe samples (at most), hidden width, batch size, epochs, steps between NTK
/// measurements; the classes and the split come from the data.
const PROBE: usize = 200;
const WIDTH: usize = 256;
const BATCH: usize = 50;
const EPOCHS: usize = 2;
const EVERY: usize = 10;

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<bool, Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let digits = args
        .next()
        .ok_or("usage: ntk-of-my-model DIGITS_DIR [OUT_DIR] (DIGITS_DIR holds digits.csv.gz)")?;
    // By default a directory of this process's own, so that two runs never share one.
    let out = args.next().map_or_else(
        || std::env::temp_dir().join(format!("ntk-of-my-model-{}", std::process::id())),
        PathBuf::from,
    );

    // Burn's layers are built in f32; the device is Burn's CPU backend.
    let compute = backend::select(Some("flex"), Precision::F32)?;
    let device = compute.device.clone();
    device.seed(7);

    let mut samples = data::digits(&digits)?;
    // The classes the labels hold; five sixths of the samples train, the rest validate.
    let classes = samples
        .iter()
        .map(|s| usize::from(s.label) + 1)
        .max()
        .unwrap_or(0);
    if samples.len() < 12 || classes < 2 {
        return Err(format!(
            "{digits}: {} samples of {classes} classes; training needs at least 12 and 2",
            samples.len()
        )
        .into());
    }
    let valid = samples.split_off(samples.len() * 5 / 6);
    let probe_n = PROBE.min(samples.len());
    let x = data::inputs(&samples[..probe_n], &device);
    // Built on the autodiff device, as burn-train trains it (its parameters require grad).
    let model = Classifier::new(x.dims()[1], WIDTH, classes, &device.clone().autodiff());
    let forward = |m: &Classifier, x: Tensor<2>| m.forward(x);

    // 1. The NTK by hand, in both precisions.
    println!(
        "NTK of the classifier at initialization on {probe_n} digits (sum of the {classes} logits):"
    );
    let mut at_init = None;
    for precision in [Precision::F32, Precision::F64] {
        let k = empirical_ntk(&model, forward, x.clone(), OutputMode::Sum, precision);
        let c = Conditioning::of(&k, precision)?;
        println!(
            "  {:?}: lambda_min {:.4e}, lambda_max {:.4e}, kappa {}, rank {} of {}, min angle {:.3} deg",
            precision,
            c.lambda_min,
            c.lambda_max,
            c.kappa.map_or("singular".into(), |k| format!("{k:.4e}")),
            c.rank,
            k.size,
            c.min_grad_angle_deg.unwrap_or(f64::NAN),
        );
        at_init = Some(c);
    }
    let at_init = at_init.expect("two precisions");

    // 2. Training with burn-train, the NTK watched every EVERY steps.
    let probe = NtkProbe::new(x, forward)
        .every(NonZeroUsize::new(EVERY).expect("not zero"))
        .precision(Precision::F64)
        .csv(out.join("ntk.csv"));
    let train_items = samples.len();
    let train = DataLoaderBuilder::new(data::Stack)
        .batch_size(BATCH)
        .shuffle(7)
        .set_device(device.clone())
        .build(data::dataset(samples));
    let valid = DataLoaderBuilder::new(data::Stack)
        .batch_size(BATCH)
        .set_device(device.clone())
        .build(data::dataset(valid));
    let training = SupervisedTraining::new(&out, train, valid)
        .metric_train_numeric(LossMetric::new())
        .metric_valid_numeric(LossMetric::new())
        .metric_train_numeric(AccuracyMetric::new())
        .metric_valid_numeric(AccuracyMetric::new())
        .metric_train_numeric(probe.kappa())
        .metric_train_numeric(probe.min_angle())
        .num_epochs(EPOCHS)
        .renderer(Box::new(epoch_lines::EpochLines::default()));
    let result = training.launch(Learner::new(model, SgdConfig::new().init(), 0.5));
    if let Some(e) = result.error {
        return Err(format!("training failed: {e}").into());
    }

    let rows = probe.rows();
    println!("\nNTK during training ({}):", out.join("ntk.csv").display());
    println!("  step  kappa        min angle (deg)  rank");
    for r in &rows {
        println!(
            "  {:>4}  {:<11}  {:<15}  {}",
            r.step,
            r.kappa.map_or("singular".into(), |k| format!("{k:.4e}")),
            r.min_grad_angle_deg
                .map_or("-".into(), |a| format!("{a:.3}")),
            r.rank
        );
    }
    Ok(check(&rows, &at_init, EPOCHS * train_items.div_ceil(BATCH)))
}

/// The metric's measurements against the kernel formed by hand and the schedule.
fn check(rows: &[MetricRow], at_init: &Conditioning, steps: usize) -> bool {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * a.abs().max(b.abs());
    let first = rows.first();
    let same = first.is_some_and(|r| {
        r.step == 0
            && close(r.lambda_min, at_init.lambda_min)
            && close(r.lambda_max, at_init.lambda_max)
            && r.rank == at_init.rank
    });
    let expected: Vec<usize> = (0..steps).step_by(EVERY).collect();
    let schedule: Vec<usize> = rows.iter().map(|r| r.step).collect();
    let moved = rows
        .last()
        .zip(first)
        .is_some_and(|(l, f)| l.lambda_max != f.lambda_max);
    println!(
        "\nchecks: step 0 equals the kernel formed by hand: {same}; measured at steps \
         {expected:?}: {}; the kernel moved during training: {moved}",
        schedule == expected
    );
    same && schedule == expected && moved
}
