//! The reference path: per-sample model gradients (rows of the Jacobian F) through Burn's
//! autodiff, one backward per sample and output, and `K = F F^T`. Works for any module and
//! forward (ResNets included); it is also the independent check of the structured path.

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::{Gradients, Tensor};
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, MatRef};

use crate::kernel::{Kernel, OutputMode};

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
    let n = x.dims()[0];
    let mut data = Vec::new();
    let mut cols = 0;
    let mut outputs_per_sample = 0;
    let mut k = 0;
    for i in 0..n {
        let xi = x.clone().narrow(0, i, 1);
        if i == 0 {
            k = forward(model, xi.clone()).dims()[1];
        }
        let outputs: Vec<usize> = match mode {
            OutputMode::Single(o) => vec![o],
            OutputMode::Sum | OutputMode::Full => (0..k).collect(),
        };
        outputs_per_sample = outputs.len();
        for o in outputs {
            // Burn keeps no graph after a backward (no retain_graph): one forward per output.
            let fo = forward(model, xi.clone()).narrow(1, o, 1).sum();
            let grads = fo.backward();
            let mut collector = GradCollector {
                grads: &grads,
                row: Vec::new(),
            };
            model.visit(&mut collector);
            cols = collector.row.len();
            data.extend(collector.row);
        }
    }
    Jacobian {
        rows: n * outputs_per_sample,
        cols,
        data,
        outputs_per_sample,
    }
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
        let mut out = Kernel::zeros(size);
        if size == 0 || self.cols == 0 {
            return out;
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
            triangular::matmul(
                g.as_mut(),
                BlockStructure::TriangularLower,
                if o == 0 { Accum::Replace } else { Accum::Add },
                f,
                BlockStructure::Rectangular,
                f.transpose(),
                BlockStructure::Rectangular,
                1.0,
                faer::get_global_parallelism(),
            );
        }
        for i in 0..size {
            for j in 0..=i {
                let v = g[(i, j)];
                out.data[i * size + j] = v;
                out.data[j * size + i] = v;
            }
        }
        out
    }
}
