//! The reference path: per-sample model gradients (rows of the Jacobian F) through Burn's
//! autodiff, one backward per sample and output, and `K = F F^T`. Works for any module and
//! forward (ResNets included); it is also the independent check of the structured path.

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::{Gradients, Tensor};
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, MatRef};

use ntk_numerics::kernel::{Kernel, OutputMode};

/// Collects every float parameter's gradient, flattened, in visiting order.
struct GradCollector<'a> {
    grads: &'a Gradients,
    row: Vec<f64>,
}

impl ModuleVisitor for GradCollector<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let value = param.val();
        match value.grad(self.grads) {
            Some(g) => self
                .row
                .extend(g.try_into_vec_as::<f64>().expect("reading a gradient")),
            None => self
                .row
                .extend(std::iter::repeat_n(0.0, value.shape().num_elements())),
        }
    }
}

/// Row-major Jacobian: one row per (sample, output) pair selected by `mode` (for
/// [`OutputMode::Sum`], all outputs: rows `i k + o`).
pub struct Jacobian {
    pub rows: usize,
    pub cols: usize,
    pub data: Vec<f64>,
    /// Outputs per sample that have a row.
    pub outputs_per_sample: usize,
}

/// How sample `i`'s output is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Coupling {
    /// From a forward of the sample alone: samples do not interact (BatchNorm on its
    /// running statistics), `f_i = f(x_i)`.
    #[default]
    PerSample,
    /// As row `i` of a forward of the whole batch: BatchNorm on the batch's own statistics,
    /// `f_i = f(X)_i`, which depends on every sample; its gradient carries the coupling.
    /// One forward of the batch per row: `O(n^2)` sample passes.
    Batch,
}

/// The gradient of output `o` of sample `i` (see [`Coupling`]) with respect to every
/// parameter of `model`, flattened in visiting order.
fn gradient_row<M: Module, const D: usize>(
    model: &M,
    forward: &impl Fn(&M, Tensor<D>) -> Tensor<2>,
    (x, i, coupling): (&Tensor<D>, usize, Coupling),
    o: usize,
) -> Vec<f64> {
    // Burn keeps no graph after a backward (no retain_graph): one forward per output.
    let out = match coupling {
        Coupling::PerSample => forward(model, x.clone().narrow(0, i, 1)),
        Coupling::Batch => forward(model, x.clone()).narrow(0, i, 1),
    };
    let fo = out.narrow(1, o, 1).sum();
    let grads = fo.backward();
    let mut collector = GradCollector {
        grads: &grads,
        row: Vec::new(),
    };
    model.visit(&mut collector);
    collector.row
}

/// The gradient rows of every sample of `x` for each of `outputs` (rows `i * outputs.len() +
/// index`), in `buffer` (cleared) sized exactly once the first row gives the parameter
/// count: grown by doubling it held about 1.5 times the rows, and at its last growth the old
/// and the new buffer together (fifty-fourth hostile round, D1: MNIST n = 500, width 256,
/// 1017 MiB of rows peaked at 2163 MiB). Returns the rows and the parameter count.
fn gradient_rows<M: Module, const D: usize>(
    model: &M,
    forward: &impl Fn(&M, Tensor<D>) -> Tensor<2>,
    (x, coupling): (&Tensor<D>, Coupling),
    outputs: &[usize],
    mut buffer: Vec<f64>,
) -> (Vec<f64>, usize) {
    buffer.clear();
    let rows = x.dims()[0] * outputs.len();
    let mut cols = 0;
    for i in 0..x.dims()[0] {
        for &o in outputs {
            let row = gradient_row(model, forward, (x, i, coupling), o);
            if cols == 0 {
                cols = row.len();
                buffer.reserve_exact(rows * cols);
            }
            buffer.extend_from_slice(&row);
        }
    }
    (buffer, cols)
}

/// Number of outputs of `forward`.
fn output_count<M: Module, const D: usize>(
    model: &M,
    forward: &impl Fn(&M, Tensor<D>) -> Tensor<2>,
    x: &Tensor<D>,
) -> usize {
    forward(model, x.clone().narrow(0, 0, 1)).dims()[1]
}

/// Per-sample gradients of `forward(model, x)` with respect to every parameter of `model`.
/// `model` must live on an autodiff device with tracked parameters
/// (`model.fork(&device.autodiff()).train()`),
/// and `x` (`[n, ...]`, any rank) on the same device.
pub fn per_sample_jacobian<M, const D: usize>(
    model: &M,
    forward: impl Fn(&M, Tensor<D>) -> Tensor<2>,
    x: &Tensor<D>,
    mode: OutputMode,
) -> Jacobian
where
    M: Module,
{
    jacobian(model, forward, x, mode, Coupling::PerSample)
}

/// The Jacobian rows of `forward(model, x)` with the samples' outputs taken as `coupling`
/// says ([`per_sample_jacobian`] for [`Coupling::PerSample`]).
pub fn jacobian<M, const D: usize>(
    model: &M,
    forward: impl Fn(&M, Tensor<D>) -> Tensor<2>,
    x: &Tensor<D>,
    mode: OutputMode,
    coupling: Coupling,
) -> Jacobian
where
    M: Module,
{
    let n = x.dims()[0];
    let k = if n == 0 {
        0
    } else {
        output_count(model, &forward, x)
    };
    let outputs = mode.outputs(k);
    let (data, cols) = gradient_rows(model, &forward, (x, coupling), &outputs, Vec::new());
    Jacobian {
        rows: n * outputs.len(),
        cols,
        data,
        outputs_per_sample: outputs.len(),
    }
}

/// The NTK from per-sample gradients without holding the whole Jacobian: for `Sum` and
/// `Single`, `K = sum_o F_o F_o^T` is accumulated one output at a time, so memory is
/// `n x P` (the rows of one output) instead of `n k x P` (an MLP of 1.2M parameters on 200
/// samples with 10 outputs: 1.9 GB instead of 19 GB). `Full` needs every row together and
/// goes through [`per_sample_jacobian`].
pub fn ntk_by_autodiff<M, const D: usize>(
    model: &M,
    forward: impl Fn(&M, Tensor<D>) -> Tensor<2>,
    x: &Tensor<D>,
    mode: OutputMode,
) -> Kernel
where
    M: Module,
{
    ntk_by_autodiff_with(model, forward, x, mode, Coupling::PerSample)
}

/// [`ntk_by_autodiff`] with the samples' outputs taken as `coupling` says.
pub fn ntk_by_autodiff_with<M, const D: usize>(
    model: &M,
    forward: impl Fn(&M, Tensor<D>) -> Tensor<2>,
    x: &Tensor<D>,
    mode: OutputMode,
    coupling: Coupling,
) -> Kernel
where
    M: Module,
{
    let n = x.dims()[0];
    if mode == OutputMode::Full || n == 0 {
        return jacobian(model, forward, x, mode, coupling).ntk(mode);
    }
    let outputs: Vec<usize> = match mode {
        OutputMode::Single(o) => vec![o],
        _ => (0..output_count(model, &forward, x)).collect(),
    };
    let mut g = Mat::<f64>::zeros(n, n);
    // One buffer of `n x P` for every output in turn.
    let mut data = Vec::new();
    for (index, &o) in outputs.iter().enumerate() {
        let cols;
        (data, cols) = gradient_rows(model, &forward, (x, coupling), &[o], data);
        if cols > 0 {
            accumulate_lower(
                &mut g,
                MatRef::from_row_major_slice(&data, n, cols),
                index == 0,
            );
        }
    }
    mirror_lower(&g)
}

/// `G (+)= F F^T` on the lower triangle, with faer's triangular GEMM.
fn accumulate_lower(g: &mut Mat<f64>, f: MatRef<'_, f64>, first: bool) {
    triangular::matmul(
        g.as_mut(),
        BlockStructure::TriangularLower,
        if first { Accum::Replace } else { Accum::Add },
        f,
        BlockStructure::Rectangular,
        f.transpose(),
        BlockStructure::Rectangular,
        1.0,
        faer::get_global_parallelism(),
    );
}

/// The kernel whose lower triangle is `g`'s, mirrored (exactly symmetric).
fn mirror_lower(g: &Mat<f64>) -> Kernel {
    let size = g.nrows();
    let mut out = Kernel::zeros(size);
    for i in 0..size {
        for j in 0..=i {
            let v = g[(i, j)];
            out.data[i * size + j] = v;
            out.data[j * size + i] = v;
        }
    }
    out
}

impl Jacobian {
    /// `K = F F^T` summed per `mode` (`Sum` adds the outputs' blocks; `Single` and `Full`
    /// keep every row), with faer's triangular GEMM (the lower triangle, mirrored: exactly
    /// symmetric). A ResNet-20 has ~0.27M parameters, so this is GEMM-sized work.
    pub fn ntk(&self, mode: OutputMode) -> Kernel {
        let k = self.outputs_per_sample.max(1);
        // Sum: one n x cols block per output, rows o, o + k, ... of F.
        let (groups, size) = match mode {
            OutputMode::Sum => (k, self.rows / k),
            OutputMode::Single(_) | OutputMode::Full => (1, self.rows),
        };
        if size == 0 || self.cols == 0 {
            return Kernel::zeros(size);
        }
        let stride = self.cols * (self.rows / size);
        let mut g = Mat::<f64>::zeros(size, size);
        for o in 0..groups {
            let f = MatRef::from_row_major_slice_with_stride(
                &self.data[o * self.cols..],
                size,
                self.cols,
                stride,
            );
            accumulate_lower(&mut g, f, o == 0);
        }
        mirror_lower(&g)
    }
}
