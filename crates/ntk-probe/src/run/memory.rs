//! What a probe needs before it starts: the memory of its plan ([`memory_estimate`], checked
//! against the limit by [`check_memory`]) and, for the tiled route, its plan in words with
//! the flop counts and the time they take at this machine's GEMM rate ([`tiled_plan`]).

use super::*;
use ntk_kernel::host::Reuse;

/// What the tiled route is about to do, with its memory, its flop counts and the time they
/// take at this machine's GEMM rate, measured on one tile-sized product.
pub(super) fn tiled_plan(
    source: &host::tiles::GroupedSource,
    mlp: &Mlp,
    inputs: &Inputs,
) -> String {
    let (n, b) = (inputs.n as f64, TILE.min(inputs.n.max(1)) as f64);
    let width = mlp.config().width as f64;
    let depth = mlp.config().depth as f64;
    let tiles_gb = 8.0 * n * (n + b) / 2.0 / 1e9;
    // Each entry of the lower triangle: two GEMM multiply-adds per layer and unit (A A^T and
    // D D^T), the first layer's over d and the output layer's over the width.
    let form = n * (n + b) / 2.0 * 2.0 * (2.0 * depth * width + inputs.d as f64 + width);
    let factor = n * n * n / 3.0;
    let rate = gemm_rate(TILE.min(inputs.n.max(1)), mlp.config().width.max(1));
    format!(
        "tiled: n = {}, tiles {tiles_gb:.2} GB + factors {:.2} GB ({} of {} inputs at a \
         time); formation {form:.2e} flop, Cholesky {factor:.2e} flop: about {:.0} s and {:.0} \
         s at {:.0} GFLOP/s (this machine's GEMM, measured now), then Lanczos (n^2 per step)",
        inputs.n,
        source.held_bytes() as f64 / 1e9,
        source.rows().min(inputs.n) * 2.min(source.groups()),
        inputs.n,
        form / rate,
        factor / rate,
        rate / 1e9
    )
}

/// FLOP/s of one `b x b x k` f64 GEMM on the host BLAS (best of three).
fn gemm_rate(b: usize, k: usize) -> f64 {
    let a = faer::Mat::<f64>::from_fn(b, k, |i, j| ((i * 7 + j * 3) % 11) as f64);
    let mut c = faer::Mat::<f64>::zeros(b, b);
    let (_, best) = ntk_numerics::bench::best_of(3, || -> Result<(), ()> {
        ntk_numerics::linalg::gemm(c.as_mut(), a.as_ref(), a.as_ref().transpose(), 1.0);
        Ok(())
    })
    .expect("infallible");
    2.0 * (b * b * k) as f64 / best.max(1e-9)
}

/// The rows of a group of the tiled route's inputs (`host::tiles::GroupedSource`) whose
/// factors take `factor_bytes` in all: a multiple of [`TILE`].
pub(super) fn tiled_group_rows(n: usize, factor_bytes: usize) -> usize {
    host::tiles::GroupedSource::group_rows(n, factor_bytes).div_ceil(TILE) * TILE
}

/// The tile width of `probe.eigen = "tiled"`: GEMMs of 1024 x 1024 x width run near the
/// BLAS's peak, and the diagonal tiles' upper halves add `n 1024 / 2` values (under 2% of
/// the tiles at n = 60,000).
pub const TILE: usize = 1024;

/// The memory a probe of `cfg` needs, roughly (see [`ntk_runs::budget`]): the kernel and the
/// eigensolver's copies, the structured engine's activations and work matrices, or the
/// autodiff path's per-sample gradient rows. `d` is the data's input dimension; `reuse` is
/// what the host engine keeps (a depth sweep keeps the layers' Grams, one run does not).
pub fn memory_estimate(cfg: &ProbeConfig, d: usize, reuse: Reuse) -> crate::Result<Estimate> {
    let elem = cfg.probe.precision.dtype().size() as f64;
    let mut e = Estimate::default();
    e.add(
        "the program itself",
        ntk_runs::budget::PROBE_PROGRAM_BYTES,
        1.0,
    );
    e.add("inputs", cfg.data.n as f64 * d as f64, 8.0);
    e.add(
        "the inputs as they are decoded",
        ntk_data::inputs::decoded_bytes(&cfg.data, d),
        1.0,
    );
    // A file is read whole (an array's bytes, then its values as f64; a CSV's values)
    // before n rows are picked.
    e.add(
        "the data files, read whole",
        ntk_data::inputs::file_bytes(&cfg.data),
        1.0,
    );
    // The tiled route holds the lower triangle and the factors, nothing else of size n^2.
    let spec = cfg.net()?;
    if cfg.probe.eigen == Eigen::Tiled
        && let NetSpec::Mlp(m) = &spec
    {
        let (n, w, l) = (cfg.data.n as f64, m.width as f64, m.depth as f64);
        let k = match cfg.probe.output {
            OutputMode::Single(_) => 1.0,
            _ => m.output_dim as f64,
        };
        e.add("parameters", spec.params(d), 8.0);
        // The tiled route's kernel is the host engine's too (hundred-and-thirty-third hostile
        // round, D4: 420 MiB estimated against a 905 MiB peak).
        host_copies(&mut e, cfg, m, d, spec.params(d));
        e.add(
            "the kernel's lower triangle in tiles",
            n * (n + TILE as f64) / 2.0,
            8.0,
        );
        // The factors one group of inputs at a time (`host::tiles::GroupedSource`): every
        // input in one group when they fit, formed before the tiles; else beside the tiles
        // one group held and the next one forming (its forward's copy of the inputs and
        // input matrix, the layers' outputs and slopes, the signals).
        let all_bytes = host::tiles::factor_bytes_of(cfg.data.n, d, m.depth, m.width, k as usize);
        let all = all_bytes as f64 / 8.0;
        let rows = (tiled_group_rows(cfg.data.n, all_bytes) as f64).min(n);
        if rows >= n {
            e.add(
                "the factors (layer inputs, backpropagated signals)",
                all,
                8.0,
            );
        } else {
            e.add(
                "the factors of one group of inputs (layer inputs, signals)",
                all * rows / n,
                8.0,
            );
            e.add(
                "the next group's forward and backward while its factors form",
                rows * (2.0 * d as f64 + 2.0 * l * w + l * w * k),
                8.0,
            );
        }
        e.add("Lanczos' basis", 400.0 * n, 8.0);
        return Ok(e);
    }
    // Block by block ([`per_block`]) every kernel-sized term is one block's.
    let n = if per_block(cfg, &[cfg.probe.protocol], cfg.data.n) {
        cfg.data.n.min(cfg.probe.block_size) as f64
    } else {
        cfg.data.n as f64
    };
    // `activations` is Some for the structured kernel (plain dense MLPs), which keeps every
    // layer's activations; the other routes take per-sample gradients.
    let resnet = matches!(spec, NetSpec::ResNet(_));
    // A ResNet under `auto` takes the host engine wherever it computes on a CPU backend
    // (whether it surely does: [`surely_on_host`]); every other route, Burn's autodiff.
    let host_route = resnet && cfg.probe.method == Method::Auto;
    let (params, outputs) = (spec.params(d), spec.classes() as f64);
    let activations = match &spec {
        NetSpec::Mlp(m)
            if m.normalization == ntk_model::Normalization::None
                && matches!(cfg.probe.method, Method::Auto | Method::Structured) =>
        {
            Some(2.0 * m.depth as f64 * n * m.width as f64)
        }
        _ => None,
    };
    let size = if cfg.probe.output == OutputMode::Full {
        n * outputs
    } else {
        n
    };
    e.add("parameters", params, elem);
    if let NetSpec::ResNet(r) = cfg.net()? {
        // The network's forward maps kept for the backward pass, of the images in flight
        // (one per worker thread on the host engine, `auto` on a CPU backend; one on Burn's
        // autodiff, a forward per sample and output), and the copies of its parameters
        // beside the model's (the host engine's, their gradient and one per-sample row being
        // formed). Held to measured peaks in tests/probe/hostile.rs
        // (`memory_estimates_hold_to_the_measured_peaks`).
        let images = if host_route {
            ntk_kernel::host::resnet::images_at_once(n as usize)
        } else {
            1
        };
        e.add(
            "the forward maps",
            images as f64 * ntk_model::size::resnet_activations(&r),
            elem,
        );
        e.add("the network's working copies", 3.0 * params, elem);
    }
    e.add("the kernel", size * size, 8.0);
    match cfg.probe.protocol {
        // The kernel on the device, its Schur complement, the factor and one product.
        Protocol::Whole if cfg.probe.eigen == Eigen::Extreme => {
            e.add("the Cholesky factorization", 3.5 * size * size, 8.0)
        }
        Protocol::Whole => e.add("the eigensolver's workspace", 3.0 * size * size, 8.0),
        Protocol::Blocks => {
            let b = (cfg.probe.block_size as f64).min(n) * (size / n);
            e.add("the eigensolver's workspace", 3.0 * b * b, 8.0)
        }
    };
    if let (Some(activations), NetSpec::Mlp(m)) = (activations, &spec) {
        host_copies(&mut e, cfg, m, d, params);
        e.add("activations (all layers)", activations, elem);
        e.add("work matrices", 3.0 * n * n, 8.0);
        // A depth sweep's host engine keeps every layer's Gram matrix for reuse while they
        // fit (`host::GRAM_CACHE_BYTES`); one run's forms each once in a work matrix.
        if let (NetSpec::Mlp(m), Reuse::DepthSweep) = (cfg.net()?, reuse) {
            let grams = (m.depth as f64 + 1.0) * n * n * elem;
            if grams <= ntk_kernel::host::GRAM_CACHE_BYTES as f64 {
                e.add("the layers' Gram matrices", grams, 1.0);
            }
        }
    } else if cfg.probe.method != Method::Theory {
        let rows = if cfg.probe.output == OutputMode::Full {
            size
        } else {
            n
        };
        // A ResNet on the host engine (`auto` on a CPU backend) holds the rows of every
        // output at once in its precision, in output groups of at most
        // `host::resnet::ROW_BUDGET_BYTES` for `sum`; Burn's autodiff one output's in f64.
        let host = if host_route {
            ntk_kernel::host::resnet::rows_bytes(
                n as usize,
                params as usize,
                outputs as usize,
                cfg.probe.output,
                elem as usize,
            )
        } else {
            0.0
        };
        // Where the host engine surely takes them (a CPU backend named, or no GPU backend
        // built in), its rows alone: in f32 they are half Burn's (the fifty-fifth hostile
        // round's N1, a ResNet-8 in f32 estimated at 2.6x its peak).
        let gradients = if host_route && surely_on_host(cfg) {
            host
        } else {
            (rows * params * 8.0).max(host)
        };
        e.add("per-sample gradients", gradients, 1.0);
    }
    Ok(e)
}

/// The copies of an MLP's parameters the host engine's kernel holds beside the model's
/// own: its copy in the run's precision with the transposes of every layer after the first
/// (the backward's), and Burn's copy of a layer as it is read into it (the largest; Burn
/// copies it twice, the first copy gone before the host's matrix is made); an f32 run checks
/// its kernel against the same network cast to f64 (the cast, and its read in f64 with its
/// transposes and Burn's two copies of the largest layer as it is read). Measured (`/usr/bin/time`): a first layer of 3072 x 8192 to 16384, 24 bytes a
/// parameter in f64 and 45 in f32 where the parameters alone were counted
/// (hundred-and-thirty-second hostile round, D2); hidden layers of 3072 x 3072, three copies
/// a layer where two were counted (hundred-and-thirty-third, D3).
fn host_copies(
    e: &mut Estimate,
    cfg: &ProbeConfig,
    m: &ntk_model::MlpConfig,
    d: usize,
    params: f64,
) {
    let elem = cfg.probe.precision.dtype().size() as f64;
    let hidden = if m.depth > 1 { m.width * m.width } else { 0 };
    let largest = (d * m.width).max(hidden).max(m.width * m.output_dim) as f64;
    let transposes = params - (d * m.width) as f64;
    e.add(
        "the host engine's copy of the parameters and their transposes, a layer as it is read",
        params + transposes + largest,
        elem,
    );
    if cfg.probe.precision != Precision::F64 {
        e.add(
            "the network cast to f64 for the f32 check, read with its transposes",
            2.0 * params + transposes + 2.0 * largest,
            8.0,
        );
    }
}

/// Whether the probe computes on a CPU backend whatever the machine has: one named
/// (`probe.backend`, `--backend`), or, when none is, no GPU backend built in.
fn surely_on_host(cfg: &ProbeConfig) -> bool {
    use ntk_numerics::backend::Backend;
    match cfg.probe.backend.as_deref().and_then(Backend::parse) {
        Some(b) => b.on_host(),
        None => ![Backend::Cuda, Backend::Wgpu]
            .into_iter()
            .any(Backend::built),
    }
}

/// Refuses a probe whose estimated memory exceeds the limit ([`ntk_runs::budget`]).
pub fn check_memory(
    cfg: &ProbeConfig,
    d: usize,
    reuse: Reuse,
    max_memory: Option<&str>,
) -> crate::Result<()> {
    let culprit = format!("data.n = {}, {}", cfg.data.n, cfg.net()?.size_keys());
    Ok(memory_estimate(cfg, d, reuse)?.check(&culprit, max_memory)?)
}
