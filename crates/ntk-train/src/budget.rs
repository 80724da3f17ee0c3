//! The memory a training run needs, estimated before anything is allocated (the cost model
//! of `ntk_runs::budget`, held to measured peaks in tests/train/hostile.rs), and the check that
//! refuses a run beyond the limit.

use ntk_model::NetSpec;
use ntk_runs::budget::Estimate;

use crate::config::TrainConfig;

/// The memory a run of `cfg` needs, roughly (see `ntk_runs::budget`): the data, the
/// parameters with their gradients, momentum and autodiff copies, a batch's activations,
/// and the NTK tracking's kernel and gradient rows. `d` is the data's input dimension.
pub fn memory_estimate(cfg: &TrainConfig, d: usize) -> crate::Result<Estimate> {
    let elem = cfg.train.precision.dtype().size() as f64;
    let spec = cfg.spec()?;
    let mut e = network_estimate(&spec, d, cfg.train.batch_size, elem);
    let samples = cfg.data.n as f64 + cfg.train.test_n as f64;
    e.add("the data", samples * d as f64, 8.0);
    // A file is read whole (its bytes, then its values as f64) before n rows are picked.
    e.add(
        "the data files, read whole",
        ntk_data::inputs::file_values(&cfg.data),
        16.0,
    );
    if let Some(k) = &cfg.ntk {
        let n = k.n as f64;
        e.add("the tracked NTK", 4.0 * n * n, 8.0);
        e.add("its gradient rows", n * spec.params(d), 8.0);
    }
    Ok(e)
}

/// The memory of training `spec` on batches of `batch` inputs of `d` values in `elem`-byte
/// floats: the network's parameters and the engine's state beside them (the host engine
/// keeps parameters, gradients and momenta in f64, 3 x 8 bytes; Burn's optimizer its
/// gradients, momenta and the autodiff graph's copies in the run's precision, 3 x elem at
/// most as much), a batch's activations and its logits. Held to the measured peak in
/// tests/train/hostile.rs (`the_memory_estimate_holds_to_the_measured_peak`).
pub fn network_estimate(spec: &NetSpec, d: usize, batch: usize, elem: f64) -> Estimate {
    let batch = batch as f64;
    let activations = match spec {
        NetSpec::Mlp(m) => 4.0 * batch * m.width as f64 * (m.depth as f64 + 1.0),
        NetSpec::ResNet(r) => batch * ntk_model::size::resnet_activations(r),
    };
    let mut e = Estimate::default();
    e.add(
        "parameters, gradients and momentum",
        spec.params(d),
        elem + 24.0,
    );
    e.add("a batch's activations", activations, elem);
    e.add(
        "a batch's logits",
        4.0 * batch * spec.classes() as f64,
        elem,
    );
    e
}

/// Refuses a run whose estimated memory exceeds the limit (`ntk_runs::budget`).
pub fn check_memory(cfg: &TrainConfig, d: usize, max_memory: Option<&str>) -> crate::Result<()> {
    let spec = cfg.spec()?;
    let culprit = format!(
        "{} (depth {}, width {}), data.n = {}, train.batch_size = {}",
        spec.describe(),
        spec.depth(),
        spec.width(),
        cfg.data.n,
        cfg.train.batch_size
    );
    Ok(memory_estimate(cfg, d)?.check(&culprit, max_memory)?)
}
