//! The ResNet NTK from the probe equals a brute-force Jacobian product on a tiny net.
//!
//! For each variant (batch_norm, norm_relu, fixup, selu) a tiny ResNet (depth 8, base width 2, 3
//! classes, 8 x 8 images so that every 3x3 tap of the last stage's 2 x 2 maps sees data, f64
//! on flex) gets its kernel from [`compute_kernel_net`] twice, by Burn's per-sample autodiff
//! (`method = "autodiff"`) and by the host engine's per-sample gradients (`auto` on flex),
//! both in evaluation mode, and independently from central finite differences: every trainable float
//! entry is moved by `+-h`, the network is run forward on the plain (non-autodiff) device in
//! evaluation mode (BatchNorm on its running statistics), `J[:, p] = (f(w + h e_p) - f(w -
//! h e_p)) / 2h`, and `K_fd = J J^T`. Both are checked at the initialization and at a point
//! moved away from it (every trainable parameter `+ N(0, 0.1^2)`, BatchNorm's running mean
//! `+ N(0, 0.1^2)` and running variance `* exp(N(0, 0.2^2))`): Fixup zero-initializes its
//! classifier and branch ends, so at its initialization only the classifier has a gradient.
//!
//! Tolerance: the central difference has truncation error `~ h^2 |f'''| / 6` and roundoff
//! `~ eps |f| / h`; with `h = 1e-5` in f64 both are `~1e-10` relative for outputs, weights and
//! derivatives of order one. The kernel's entries sum `~10^3` products of such columns, so
//! its error relative to `max |K|` is of the same order; we allow `100 (h^2 + eps / h) =
//! 1.2e-8`, two orders of margin for larger third derivatives (BatchNorm's `1 / sigma`,
//! products through depth). Measured: 1e-12 to 5e-12 (exactly 0 for Fixup at its
//! initialization, where only the classifier, in which the outputs are linear, has a gradient). NormReLU and ReLU have kinks; a pre-activation lands within `h`
//! of one with negligible probability for these random inputs and weights.
//!
//! Then the command line: `ntk-probe ntk` with a `[resnet]` table writes the usual files, and
//! refuses a data dimension that does not match, both network tables at once, and a sweep over
//! a ResNet.

use std::path::Path;
use std::time::Instant;

use crate::common::{ntk_cli, probe, write_file};

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::tensor::{Tensor, TensorData};
use ntk_data::inputs::Inputs;
use ntk_files::npy;
use ntk_kernel::compute::compute_kernel_net;
use ntk_model::{Net, ResNet, ResNetConfig, ResNetVariant};
use ntk_numerics::backend::{self, Compute, Precision};
use ntk_numerics::kernel::{Kernel, OutputMode};
use ntk_probe::config::{Method, ProbeConfig};
use ntk_probe::run;

/// The finite-difference step.
const H: f64 = 1e-5;
/// The step of the batch-statistics check (see its test).
const BATCH_H: f64 = 1e-6;

/// The allowed `max |K_autodiff - K_fd| / max |K_fd|` (see the module docs).
fn tolerance() -> f64 {
    100.0 * (H * H + f64::EPSILON / H)
}

fn compute() -> Compute {
    backend::select(Some("flex"), Precision::F64).expect("flex is built in")
}

fn tiny(variant: ResNetVariant, image_size: usize, in_channels: usize) -> ResNetConfig {
    ResNetConfig::example(8, variant)
        .with_base_width(2)
        .with_image_size(image_size)
        .with_in_channels(in_channels)
        .with_num_classes(3)
        .with_seed(7)
}

fn inputs(n: usize, d: usize, seed: u64) -> Inputs {
    Inputs {
        x: ntk_model::init::gaussian(seed, 99, n, d, 1.0),
        n,
        d,
        labels: vec![0; n],
        description: format!("N(0, I_{d}), n = {n}"),
        source_rows: None,
    }
}

/// Whether the visitor/mapper is inside BatchNorm's running statistics (buffers, not
/// parameters: no gradient, so not Jacobian columns).
fn is_running(path: &[String]) -> bool {
    matches!(
        path.last().map(String::as_str),
        Some("running_mean" | "running_var")
    )
}

/// One float tensor of the module, in visiting order.
struct Slot {
    values: Vec<f64>,
    shape: Vec<usize>,
    trainable: bool,
}

/// Every float tensor's host values, in visiting order (the order `map` sees them too).
fn slots<M: Module>(model: &M) -> Vec<Slot> {
    struct Collect {
        path: Vec<String>,
        slots: Vec<Slot>,
    }
    impl ModuleVisitor for Collect {
        fn enter_module(&mut self, name: &str, _container_type: &str) {
            self.path.push(name.to_string());
        }
        fn exit_module(&mut self, _name: &str, _container_type: &str) {
            self.path.pop();
        }
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            let t = param.val();
            self.slots.push(Slot {
                shape: t.dims().to_vec(),
                values: t.try_into_vec_as::<f64>().expect("reading a parameter"),
                trainable: !is_running(&self.path),
            });
        }
    }
    let mut c = Collect {
        path: Vec::new(),
        slots: Vec::new(),
    };
    model.visit(&mut c);
    c.slots
}

/// Replaces float tensor number `index` (visiting order) by `values`.
struct SetOne<'a> {
    index: usize,
    values: &'a [f64],
    shape: &'a [usize],
    counter: usize,
}

impl ModuleMapper for SetOne<'_> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let hit = self.counter == self.index;
        self.counter += 1;
        if !hit {
            return param;
        }
        let (values, shape) = (self.values.to_vec(), self.shape.to_vec());
        param.map(|t| {
            let (device, dtype) = (t.device(), t.dtype());
            Tensor::<D>::from_data(TensorData::new(values, shape), (&device, dtype))
        })
    }
}

/// Moves every parameter away from initialization: trainable entries `+ N(0, 0.1^2)`,
/// running means `+ N(0, 0.1^2)`, running variances `* exp(N(0, 0.2^2))`.
struct Perturb {
    path: Vec<String>,
    seed: u64,
    counter: u64,
}

impl ModuleMapper for Perturb {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let variance = self.path.last().is_some_and(|n| n == "running_var");
        let (seed, stream) = (self.seed, self.counter);
        self.counter += 1;
        param.map(|t| {
            let (device, dtype, dims) = (t.device(), t.dtype(), t.dims());
            let v = t.try_into_vec_as::<f64>().expect("reading a parameter");
            let z = ntk_model::init::gaussian(seed, stream, 1, v.len(), 1.0);
            let out: Vec<f64> = v
                .iter()
                .zip(&z)
                .map(|(w, z)| {
                    if variance {
                        w * (0.2 * z).exp()
                    } else {
                        w + 0.1 * z
                    }
                })
                .collect();
            Tensor::<D>::from_data(TensorData::new(out, dims.to_vec()), (&device, dtype))
        })
    }
}

fn perturbed(model: ResNet, seed: u64) -> ResNet {
    model.map(&mut Perturb {
        path: Vec::new(),
        seed,
        counter: 0,
    })
}

/// Outputs `[n, k]`, row-major, of `model` in evaluation mode on its plain device.
fn outputs(model: &ResNet, x: &Tensor<2>) -> Vec<f64> {
    model
        .forward(x.clone())
        .try_into_vec_as::<f64>()
        .expect("reading outputs")
}

/// The Jacobian by central differences: `rows = n k` (row `i k + o`), one column per
/// trainable entry; returned column-major (`cols` vectors of length `rows`).
fn fd_jacobian(model: &ResNet, inp: &Inputs, c: &Compute) -> (Vec<Vec<f64>>, usize) {
    let model = model.valid();
    let x = Tensor::<2>::from_data(
        TensorData::new(inp.x.clone(), [inp.n, inp.d]),
        (&c.device, c.dtype()),
    );
    fd_columns(&model, H, |m| outputs(m, &x))
}

/// The columns `(f(w + h e_p) - f(w - h e_p)) / 2h` of `f = out(model)` over every trainable
/// entry `p`, and the number of outputs.
fn fd_columns(model: &ResNet, h: f64, out: impl Fn(&ResNet) -> Vec<f64>) -> (Vec<Vec<f64>>, usize) {
    let rows = out(model).len();
    let all = slots(model);
    let mut cols = Vec::new();
    for (index, slot) in all.iter().enumerate().filter(|(_, s)| s.trainable) {
        let mut values = slot.values.clone();
        for e in 0..values.len() {
            let w = slot.values[e];
            let (wp, wm) = (w + h, w - h);
            let mut at = |v: f64| {
                values[e] = v;
                let m = model.clone().map(&mut SetOne {
                    index,
                    values: &values,
                    shape: &slot.shape,
                    counter: 0,
                });
                out(&m)
            };
            let (fp, fm) = (at(wp), at(wm));
            values[e] = w;
            // The steps actually taken (w +- h rounded), not h.
            let step = (wp - w) + (w - wm);
            cols.push(fp.iter().zip(&fm).map(|(a, b)| (a - b) / step).collect());
        }
    }
    (cols, rows)
}

/// `J J^T`, summed over the outputs (`Sum`: `n x n`) or whole (`Full`: `nk x nk`).
fn fd_kernel(cols: &[Vec<f64>], rows: usize, k: usize, mode: OutputMode) -> Kernel {
    let dot = |a: usize, b: usize| -> f64 { cols.iter().map(|c| c[a] * c[b]).sum() };
    match mode {
        OutputMode::Sum => {
            let n = rows / k;
            let mut out = Kernel::zeros(n);
            for i in 0..n {
                for j in 0..n {
                    out.data[i * n + j] = (0..k).map(|o| dot(i * k + o, j * k + o)).sum();
                }
            }
            out
        }
        _ => {
            let mut out = Kernel::zeros(rows);
            for a in 0..rows {
                for b in 0..rows {
                    out.data[a * rows + b] = dot(a, b);
                }
            }
            out
        }
    }
}

/// The autodiff kernel and the host engine's against the finite-difference one, for every
/// output mode; the two per-sample routes against each other to rounding (`1e-12`), and the
/// host engine in f32 against them within f32's precision; returns the largest relative
/// error against finite differences.
fn check(label: &str, model: &ResNet, inp: &Inputs, c: &Compute) -> f64 {
    let t = Instant::now();
    let (cols, rows) = fd_jacobian(model, inp, c);
    let fd_seconds = t.elapsed().as_secs_f64();
    let k = model.config().num_classes;
    let nonzero = cols.iter().filter(|c| c.iter().any(|v| *v != 0.0)).count();
    let net = Net::ResNet(model.clone());
    let mut worst: f64 = 0.0;
    for mode in [OutputMode::Sum, OutputMode::Full, OutputMode::Single(1)] {
        let t = Instant::now();
        let result = compute_kernel_net(&net, inp, c, Method::Autodiff, mode).expect("kernel");
        let ad_seconds = t.elapsed().as_secs_f64();
        assert_eq!(result.route, ntk_kernel::compute::Route::Autodiff);
        let t = Instant::now();
        let host = compute_kernel_net(&net, inp, c, Method::Auto, mode).expect("kernel");
        let host_seconds = t.elapsed().as_secs_f64();
        assert_eq!(
            host.route,
            ntk_kernel::compute::Route::Host,
            "auto on flex takes the host engine"
        );
        let fd = match mode {
            OutputMode::Single(o) => {
                let one: Vec<Vec<f64>> = cols
                    .iter()
                    .map(|c| c.iter().skip(o).step_by(k).copied().collect())
                    .collect();
                fd_kernel(&one, rows / k, 1, OutputMode::Full)
            }
            _ => fd_kernel(&cols, rows, k, mode),
        };
        assert_eq!(result.kernel.size, fd.size, "{label} {mode:?}: kernel size");
        let err = result.kernel.relative_error(&fd);
        let host_err = host.kernel.relative_error(&fd);
        let routes = host.kernel.relative_error(&result.kernel);
        let scale = fd.data.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        println!(
            "{label} {mode:?}: {} params ({nonzero} with a nonzero column), max|K| = {scale:.4e}, \
             rel err autodiff {err:.3e}, host {host_err:.3e} (tol {:.1e}), host vs autodiff \
             {routes:.3e}; fd {fd_seconds:.2} s, autodiff {ad_seconds:.2} s, host {host_seconds:.3} s",
            cols.len(),
            tolerance()
        );
        assert!(scale > 0.0, "{label} {mode:?}: zero kernel");
        for (what, e) in [("autodiff", err), ("host", host_err)] {
            assert!(
                e < tolerance(),
                "{label} {mode:?}: {what} NTK differs from J J^T by {e:.3e} relative (tolerance {:.1e})",
                tolerance()
            );
        }
        // Two exact routes in f64: sums of ~10^3 products in different orders.
        assert!(
            routes < 1e-12,
            "{label} {mode:?}: host vs autodiff {routes:.3e}"
        );
        // The host engine in f32: the gradients' and the Gram's rounding, a few hundred
        // eps_f32 relative to max |K| at most.
        let c32 = backend::select(Some("flex"), Precision::F32).expect("flex");
        let net32 = Net::ResNet(model.clone());
        let f32k = compute_kernel_net(&net32, inp, &c32, Method::Auto, mode).expect("kernel");
        let e32 = f32k.kernel.relative_error(&result.kernel);
        assert!(
            e32 < 1e-4,
            "{label} {mode:?}: host f32 vs autodiff f64 {e32:.3e}"
        );
        worst = worst.max(err).max(host_err);
    }
    worst
}

fn check_variant(variant: ResNetVariant, image_size: usize, in_channels: usize, n: usize) {
    let c = compute();
    let cfg = tiny(variant, image_size, in_channels);
    let model = ResNet::new(&cfg, &c.device, c.dtype()).expect("valid config");
    let inp = inputs(n, cfg.input_dim(), 3);
    check(&format!("{variant} at init"), &model, &inp, &c);
    let moved = perturbed(model, 11);
    check(&format!("{variant} perturbed"), &moved, &inp, &c);
}

#[test]
fn batch_norm_resnet_ntk_equals_finite_difference_jacobian_product() {
    check_variant(ResNetVariant::BatchNorm, 8, 2, 4);
}

#[test]
fn norm_relu_resnet_ntk_equals_finite_difference_jacobian_product() {
    check_variant(ResNetVariant::NormRelu, 8, 1, 3);
}

#[test]
fn selu_resnet_ntk_equals_finite_difference_jacobian_product() {
    check_variant(ResNetVariant::Selu, 8, 1, 3);
}

#[test]
fn fixup_resnet_ntk_equals_finite_difference_jacobian_product() {
    check_variant(ResNetVariant::Fixup, 8, 2, 4);
}

// ---- the command line ----

const RESNET: &str = r#"
[data]
dataset = "synthetic"
n = 12
input_dim = 32

[resnet]
depth = 8
variant = "batch_norm"
base_width = 2
image_size = 4
in_channels = 2
num_classes = 3
seed = 5

[probe]
precision = "f64"
"#;

#[test]
fn ntk_with_a_resnet_config_writes_the_usual_files() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_file(dir.path(), "resnet.toml", RESNET);
    let out = dir.path().join("out");
    let o = ntk_cli(&cfg, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["summary.json", "inputs.npy", "ntk.npy", "eigenvalues.npy"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(s["kappa"].as_f64().is_some_and(|k| k >= 1.0), "{s}");
    assert_eq!(s["n"], 12);
    assert_eq!(s["input_dim"], 32);
    assert_eq!(s["depth"], 8);
    assert_eq!(s["width"], 2);
    assert_eq!(s["activation"], "relu");
    assert_eq!(s["convention"], "batch_norm");
    assert_eq!(s["method"], "autodiff");
    assert_eq!(s["engine"], "host");
    assert_eq!(s["seed"], 5);
    assert_eq!(
        s["note"],
        "ResNet NTK from per-sample gradients; BatchNorm with evaluation mode (running statistics)"
    );

    // The file's kernel is the library's on the saved inputs.
    let (k, shape) = npy::read(&out.join("ntk.npy")).unwrap();
    assert_eq!(shape, [12, 12]);
    let (x, xs) = npy::read(&out.join("inputs.npy")).unwrap();
    assert_eq!(xs, [12, 32]);
    let c = compute();
    let pcfg = ProbeConfig::parse(RESNET).unwrap();
    let net = ResNet::new(pcfg.resnet.as_ref().unwrap(), &c.device, c.dtype()).unwrap();
    let inp = Inputs {
        x,
        n: 12,
        d: 32,
        labels: vec![0; 12],
        description: String::new(),
        source_rows: None,
    };
    let lib = compute_kernel_net(&Net::ResNet(net), &inp, &c, Method::Auto, OutputMode::Sum)
        .unwrap()
        .kernel;
    let file = Kernel { size: 12, data: k };
    assert!(file.relative_error(&lib) < 1e-12);
}

fn fails_with(args: &[&str], cfg: &Path, out: &Path, needles: &[&str]) {
    let o = probe()
        .args(args)
        .arg("--config")
        .arg(cfg)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "expected a failure");
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
    assert!(!err.contains("internal error"), "{err}");
}

#[test]
fn bad_resnet_configs_are_refused_with_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");

    // The data's dimension does not match C x S x S.
    let bad_dim = write_file(
        dir.path(),
        "dim.toml",
        &RESNET.replace("input_dim = 32", "input_dim = 33"),
    );
    fails_with(
        &["ntk"],
        &bad_dim,
        &out,
        &["resnet.image_size", "resnet.in_channels", "33", "32"],
    );
    // The same check where the data are loaded (image sets fix their own dimension).
    let pcfg = ProbeConfig::parse(RESNET).unwrap();
    let err = match run::build_net(&pcfg, &inputs(2, 64, 1), &compute()) {
        Ok(_) => panic!("a 64-dimensional input set must not fit a 2 x 4 x 4 ResNet"),
        Err(e) => e.to_string(),
    };
    for n in [
        "resnet.image_size",
        "resnet.in_channels",
        "64",
        "2 x 4^2 = 32",
    ] {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }

    // Both network tables, and neither.
    let both = write_file(
        dir.path(),
        "both.toml",
        &format!("{RESNET}\n[model]\nwidth = 8\ndepth = 1\nactivation = \"relu\"\n"),
    );
    fails_with(&["ntk"], &both, &out, &["[model]", "[resnet]"]);
    let neither_text = RESNET
        .split("[resnet]")
        .next()
        .unwrap()
        .to_string()
        .replace("[data]", "[probe]\nprecision = \"f64\"\n\n[data]");
    let neither = write_file(dir.path(), "neither.toml", &neither_text);
    fails_with(&["ntk"], &neither, &out, &["[model]", "[resnet]"]);
    assert!(ProbeConfig::parse(&std::fs::read_to_string(&both).unwrap()).is_err());
    assert!(ProbeConfig::parse(&neither_text).is_err());

    // Methods other than autodiff.
    let structured = write_file(
        dir.path(),
        "structured.toml",
        &format!("{RESNET}method = \"structured\"\n"),
    );
    fails_with(&["ntk"], &structured, &out, &["probe.method", "autodiff"]);

    // A sweep over a ResNet.
    let sweep = write_file(
        dir.path(),
        "sweep.toml",
        &format!(
            "[sweep]\ndepths = [8]\nactivations = [\"relu\"]\nseeds = [1]\nout = \"{}\"\n{RESNET}",
            out.display()
        ),
    );
    let o = probe()
        .args(["sweep", "--config"])
        .arg(&sweep)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("[resnet]") && err.contains("MLP"), "{err}");
}

/// `ntk.precision` (ntk-train's tracking): the f64 kernel of a network trained in f32 is the
/// kernel of its f32 parameters in f64 arithmetic. Two routes must agree: the host engine
/// reading the f32 network in f64, and Burn's autodiff on the network cast to f64
/// (`with_precision`, exact widening). Both are f64 sums of the same products in different
/// orders: relative error ~1e-14, bound 1e-10. The f32 kernel is within f32's rounding of it.
#[test]
fn the_f64_kernel_of_an_f32_network_by_two_routes() {
    use ntk_kernel::compute::{Method as KernelMethod, compute_kernel_net, with_precision};
    let f32c = backend::select(Some("flex"), Precision::F32).unwrap();
    let f64c = compute();
    let nets = [
        Net::ResNet(
            ResNet::new(
                &tiny(ResNetVariant::BatchNorm, 8, 1),
                &f32c.device,
                f32c.dtype(),
            )
            .unwrap(),
        ),
        Net::Mlp(
            ntk_model::Mlp::new(
                &ntk_model::MlpConfig::new(64, 32, 3, ntk_model::ActivationKind::Relu).with_seed(3),
                &f32c.device,
                f32c.dtype(),
            )
            .unwrap(),
        ),
    ];
    let inp = inputs(12, 64, 5);
    for net in nets {
        let host =
            compute_kernel_net(&net, &inp, &f64c, KernelMethod::Auto, OutputMode::Sum).unwrap();
        let wide = with_precision(&net, Precision::F64);
        let ad = compute_kernel_net(&wide, &inp, &f64c, KernelMethod::Autodiff, OutputMode::Sum)
            .unwrap();
        let err = host.kernel.relative_error(&ad.kernel);
        assert!(
            err < 1e-10,
            "{}: host vs autodiff in f64: {err:e}",
            net.describe()
        );
        let narrow =
            compute_kernel_net(&net, &inp, &f32c, KernelMethod::Auto, OutputMode::Sum).unwrap();
        let err = narrow.kernel.relative_error(&host.kernel);
        assert!(
            err < 1e-5 && err > 0.0,
            "{}: f32 vs f64: {err:e}",
            net.describe()
        );
    }
}

/// BatchNorm on the probe batch's own statistics (`batch_norm_statistics = "batch"`): the
/// NTK of the batch map `X -> f(X)`, whose rows couple the samples, equals the finite
/// differences of that map (every trainable entry moved by `+-h`, the whole batch run in
/// training mode: BatchNorm on the batch's statistics), to the tolerance of the module docs;
/// it differs from the running-statistics kernel; and computing it leaves the network's
/// running statistics as they were.
///
/// The step is `h = 1e-6` (bound `100 (h^2 + eps / h) = 2.2e-8`): with these 4 samples a
/// ReLU pre-activation lies within 1e-5 of its kink, and the difference across it is
/// measured at 1.9e-3 with `h = 1e-5`, 3.9e-11 with `3e-6` and 7.4e-11 with `1e-6`.
#[test]
fn the_batch_statistics_ntk_is_the_batch_maps() {
    use ntk_kernel::batch_norm::batch_statistics_kernel;
    let c = compute();
    let cfg = tiny(ResNetVariant::BatchNorm, 8, 1);
    let model = perturbed(ResNet::new(&cfg, &c.device, c.dtype()).unwrap(), 5);
    let inp = inputs(4, 64, 11);
    let net = Net::ResNet(model.clone());
    let before: Vec<Vec<f64>> = slots(&model).into_iter().map(|s| s.values).collect();
    let batch = batch_statistics_kernel(&net, &inp, &c, Method::Auto, OutputMode::Sum).unwrap();
    let after: Vec<Vec<f64>> = slots(&model).into_iter().map(|s| s.values).collect();
    assert_eq!(before, after, "the running statistics are untouched");
    // Finite differences of the batch map, on a copy forked to the autodiff device (where a
    // training-flagged BatchNorm normalizes with the batch's statistics).
    let ad = c.device.clone().autodiff();
    let x = Tensor::<2>::from_data(
        TensorData::new(inp.x.clone(), [inp.n, inp.d]),
        (&ad, c.dtype()),
    );
    let batch_out = |m: &ResNet| -> Vec<f64> {
        m.clone()
            .fork(&ad)
            .forward(x.clone())
            .try_into_vec_as::<f64>()
            .expect("reading outputs")
    };
    let (cols, rows) = fd_columns(&model, BATCH_H, batch_out);
    let fd = fd_kernel(&cols, rows, cfg.num_classes, OutputMode::Sum);
    let err = batch.kernel.relative_error(&fd);
    let bound = 100.0 * (BATCH_H * BATCH_H + f64::EPSILON / BATCH_H);
    assert!(
        err < bound,
        "batch statistics vs finite differences: {err:e}"
    );
    let running = compute_kernel_net(&net, &inp, &c, Method::Autodiff, OutputMode::Sum).unwrap();
    assert!(
        running.kernel.relative_error(&fd) > 1e-3,
        "the two kernels differ"
    );
    // A network without BatchNorm has no batch statistics to choose.
    let fixup =
        Net::ResNet(ResNet::new(&tiny(ResNetVariant::Fixup, 8, 1), &c.device, c.dtype()).unwrap());
    let e = batch_statistics_kernel(&fixup, &inp, &c, Method::Auto, OutputMode::Sum)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("no BatchNorm layers"), "{e}");
}

/// `probe.batch_norm_statistics` from the command line: `batch` writes the batch map's
/// kernel and says so in the note; the key is refused for a network without BatchNorm and
/// with a method that cannot couple the samples.
#[test]
fn batch_norm_statistics_is_a_probe_key() {
    let dir = tempfile::tempdir().unwrap();
    let text = RESNET.replace("[probe]", "[probe]\nbatch_norm_statistics = \"batch\"");
    let cfg = write_file(dir.path(), "batch.toml", &text);
    let out = dir.path().join("out");
    let o = ntk_cli(&cfg, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let note = s["note"].as_str().unwrap();
    assert!(note.contains("the probe batch's own statistics"), "{note}");
    assert_eq!(s["engine"], "autodiff");
    assert_eq!(
        s["provenance"]["config"]["probe.batch_norm_statistics"],
        "batch"
    );
    let fixup = text.replace("variant = \"batch_norm\"", "variant = \"fixup\"");
    let cfg = write_file(dir.path(), "fixup.toml", &fixup);
    let o = ntk_cli(&cfg, dir.path().join("fixup"));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && e.contains("probe.batch_norm_statistics = batch: only for BatchNorm networks"),
        "{e}"
    );
}
