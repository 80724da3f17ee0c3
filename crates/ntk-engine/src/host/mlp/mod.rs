//! The dense MLP on the host, in `T` = f32 or f64 ([`Real`]), on the host GEMMs of
//! [`ntk_numerics::linalg`] (the system OpenBLAS by default, faer without it): the one engine
//! under the probe's structured NTK (`ntk_kernel::host`) and the trainer's SGD step
//! (`ntk_train::host`). Both were written against Burn's autodiff, and this module is
//! tested against it (`tests.rs`).
//!
//! Notation as in [`ntk_model::mlp`] and [`NtkConvention`](ntk_model::NtkConvention): samples are
//! rows, weights `W_l` are `[fan_in, fan_out]` as the [`Mlp`] stores them, `a_0 = x` is
//! `[n, d]`, and for the hidden layers `l = 1..L` and the output layer `L + 1`
//!
//! > `z_l = beta_l a_{l-1} W_l + b_l`, `a_l = gamma_l phi(z_l)`,
//! > `f = beta_out a_L W_{L+1} + b_{L+1}`,
//!
//! with the convention's scales `beta_l`, `gamma_l`, `beta_out` ([`ntk_model::LayerScales`];
//! the `unit_variance` convention is neural-tangents' `h_l = (sigma_w / sqrt(m_{l-1}))
//! W_l x_{l-1} + b_l` with `sigma_w = sqrt(c)` moved behind the activation) and the biases
//! unscaled (zero at initialization). [`Params::forward`] keeps, for every hidden layer, its
//! output `a_l` and its slope `s_l = gamma_l phi'(z_l)` ([`Trace`]); [`Params::output_into`]
//! takes `f`.
//!
//! The backward starts from a given output cotangent `G = dE/df` (`[n, k]`, [`Cotangent`]):
//! unit vectors `e_o` in every row for the NTK (the per-output signals), `(softmax f -
//! onehot y) / B` for the mean cross-entropy. Its per-layer signals `delta_l = dE/dz_l`
//! (`[n, m_l]`) are
//!
//! > `delta_L = (beta_out G W_{L+1}^T) .* s_L`,
//! > `delta_{l-1} = (beta_l delta_l W_l^T) .* s_{l-1}`,
//!
//! and, when asked ([`Grads`]), the parameter gradients `dE/dW_l = beta_l a_{l-1}^T delta_l`,
//! `dE/db_l = 1^T delta_l` (with `delta_{L+1} = G`, `beta_{L+1} = beta_out`).
//!
//! [`Params::read`] is the one place an [`Mlp`]'s weights are read into host layout. Buffers
//! are reused, not allocated per pass: a [`Trace`] holds its own, filled again by every
//! forward of the same shape, and the [`Pool`] hands out matrices of finished computations.

use faer::{Mat, MatRef};
use ntk_numerics::linalg::{Real, gemm};

use ntk_model::Mlp;
use ntk_model::activation::Activation;

mod pass;
pub mod step;
#[cfg(test)]
mod tests;

pub use pass::{Cotangent, Grads, Trace, activate, backprop};

/// A row-major `rows x cols` f64 buffer as a (column-major) faer matrix in `T`: a transpose
/// in [`TILE`] x [`TILE`] tiles, so that neither side is walked with a stride of a whole
/// row (a plain column loop over 512 x 512 weights costs a cache and TLB miss per entry:
/// ~25 ms a depth-10 network, paid by every read of its parameters).
pub fn from_rows<T: Real>(v: &[f64], rows: usize, cols: usize) -> Mat<T> {
    from_rows_of(v, rows, cols)
}

/// [`from_rows`] of a buffer in any float `S` (a tensor's own f32 or f64 values, read with
/// no f64 copy between: a first layer of 3072 x 8192 held 36 bytes a parameter at once in
/// f32, the model's, Burn's read, its aligned copy, an f64 copy and this matrix:
/// hundred-and-thirty-second hostile round, D2).
pub fn from_rows_of<T: Real, S: Copy + Into<f64>>(v: &[S], rows: usize, cols: usize) -> Mat<T> {
    assert_eq!(v.len(), rows * cols, "a {rows} x {cols} matrix");
    let mut out = Mat::<T>::zeros(rows, cols);
    for i0 in (0..rows).step_by(TILE) {
        for j in 0..cols {
            let col = out.col_as_slice_mut(j);
            for i in i0..(i0 + TILE).min(rows) {
                col[i] = T::of(v[i * cols + j].into());
            }
        }
    }
    out
}

/// A `[rows, cols]` tensor as a faer matrix in `T`, read in its own dtype (f64 or f32; any
/// other through f64).
fn mat_of<T: Real>(t: burn::tensor::Tensor<2>) -> Mat<T> {
    let [rows, cols] = t.dims();
    let data = t.into_data();
    if let Ok(v) = data.as_slice::<f64>() {
        return from_rows_of(v, rows, cols);
    }
    if let Ok(v) = data.as_slice::<f32>() {
        return from_rows_of(v, rows, cols);
    }
    let v: Vec<f64> = data
        .convert::<f64>()
        .try_into_vec()
        .expect("reading weights");
    from_rows(&v, rows, cols)
}

/// The tile edge of [`from_rows`] and [`transposed`]: 32 rows of f64 are 4 cache lines a
/// column, and a tile's lines stay in L1 while it is copied.
const TILE: usize = 32;

/// `m^T`, stored contiguously, copied in [`TILE`]-column panels (see [`from_rows`]).
pub fn transposed<T: Real>(m: MatRef<'_, T>) -> Mat<T> {
    let (rows, cols) = (m.nrows(), m.ncols());
    let mut out = Mat::<T>::zeros(cols, rows);
    for j0 in (0..cols).step_by(TILE) {
        for i in 0..rows {
            let col = out.col_as_slice_mut(i);
            for j in j0..(j0 + TILE).min(cols) {
                col[j] = m[(i, j)];
            }
        }
    }
    out
}

/// One dense layer on the host: `z = beta a W + b`.
#[derive(Clone, Debug)]
pub struct Layer<T: Real> {
    /// `W`, `[fan_in, fan_out]`.
    w: Mat<T>,
    /// `W^T` stored contiguously for the backward (see [`Params::store_transposes`]).
    wt: Option<Mat<T>>,
    b: Option<Vec<T>>,
    beta: f64,
}

impl<T: Real> Layer<T> {
    /// `W`, `[fan_in, fan_out]`.
    pub fn w(&self) -> &Mat<T> {
        &self.w
    }
    pub fn b(&self) -> Option<&[T]> {
        self.b.as_deref()
    }
    /// The scale `beta` of `a W` (`beta_out` for the output layer).
    pub fn beta(&self) -> f64 {
        self.beta
    }
    pub fn fan_in(&self) -> usize {
        self.w.nrows()
    }
    pub fn fan_out(&self) -> usize {
        self.w.ncols()
    }

    /// The weight and bias to update in place (a stored transpose is dropped).
    pub fn parts_mut(&mut self) -> (&mut Mat<T>, Option<&mut [T]>) {
        self.wt = None;
        (&mut self.w, self.b.as_deref_mut())
    }

    /// Whether `other` has the same weight, bias and scale, value for value.
    pub fn same(&self, other: &Self) -> bool {
        self.beta == other.beta
            && self.b == other.b
            && self.w.nrows() == other.w.nrows()
            && self.w.ncols() == other.w.ncols()
            && self.w == other.w
    }

    /// `W^T` as the backward's operand: the stored copy, else a transposed view.
    fn wt(&self) -> MatRef<'_, T> {
        match &self.wt {
            Some(wt) => wt.as_ref(),
            None => self.w.transpose(),
        }
    }

    /// `z = beta a W + b`, into `z` (`[n, fan_out]`, overwritten).
    pub fn preact_into(&self, a: MatRef<'_, T>, z: &mut Mat<T>) {
        gemm(z.as_mut(), a, self.w.as_ref(), T::of(self.beta));
        if let Some(b) = &self.b {
            for (j, bj) in b.iter().enumerate() {
                z.col_as_slice_mut(j).iter_mut().for_each(|v| *v += *bj);
            }
        }
    }
}

/// A dense MLP's parameters in host layout, in `T`: the hidden layers, the output layer, the
/// activation and the hidden layers' `gamma_l`. Normalization layers are not read: the host
/// engines take networks without them.
#[derive(Clone, Debug)]
pub struct Params<T: Real> {
    act: Activation,
    gamma: Vec<f64>,
    hidden: Vec<Layer<T>>,
    output: Layer<T>,
}

impl<T: Real> Params<T> {
    /// `mlp`'s parameters, read from its device as f64 and rounded to `T`.
    pub fn read(mlp: &Mlp) -> Self {
        let scales = mlp.scales();
        let depth = mlp.depth();
        let mut layers = mlp.layers.iter().enumerate().map(|(l, layer)| {
            let b = layer.bias.as_ref().map(|b| {
                let v: Vec<f64> = b.val().try_into_vec_as().expect("reading biases");
                v.into_iter().map(T::of).collect()
            });
            Layer {
                w: mat_of(layer.weight.val()),
                wt: None,
                b,
                beta: if l == depth {
                    scales.beta_out
                } else {
                    scales.beta[l]
                },
            }
        });
        let hidden = layers.by_ref().take(depth).collect();
        let output = layers.next().expect("the output layer");
        Self {
            act: *mlp.activation(),
            gamma: scales.gamma.clone(),
            hidden,
            output,
        }
    }

    /// The number of hidden layers `L`.
    pub fn depth(&self) -> usize {
        self.hidden.len()
    }
    pub fn activation(&self) -> &Activation {
        &self.act
    }
    /// `gamma_l` of the hidden layers.
    pub fn gamma(&self) -> &[f64] {
        &self.gamma
    }
    pub fn hidden(&self) -> &[Layer<T>] {
        &self.hidden
    }
    pub fn output(&self) -> &Layer<T> {
        &self.output
    }

    /// Layer `l`, `0..=L` (the output layer last).
    pub fn layer(&self, l: usize) -> &Layer<T> {
        if l == self.depth() {
            &self.output
        } else {
            &self.hidden[l]
        }
    }

    /// Layer `l`, `0..=L`, to update.
    pub fn layer_mut(&mut self, l: usize) -> &mut Layer<T> {
        if l == self.depth() {
            &mut self.output
        } else {
            &mut self.hidden[l]
        }
    }

    /// Every layer, the output layer last.
    pub fn layers(&self) -> impl Iterator<Item = &Layer<T>> {
        self.hidden.iter().chain(std::iter::once(&self.output))
    }

    /// Every layer, the output layer last, to update.
    pub fn layers_mut(&mut self) -> impl Iterator<Item = &mut Layer<T>> {
        self.hidden
            .iter_mut()
            .chain(std::iter::once(&mut self.output))
    }

    /// Stores `W_l^T` contiguously for every layer the backward multiplies by (all but the
    /// first): faer's GEMM is ~30% slower with a transposed operand. For parameters that
    /// stay fixed over many backward passes (the NTK); [`Layer::parts_mut`] drops them.
    pub fn store_transposes(&mut self) {
        for layer in self.layers_mut().skip(1) {
            if layer.wt.is_none() {
                layer.wt = Some(transposed(layer.w.as_ref()));
            }
        }
    }

    /// Whether [`Self::store_transposes`] has stored every transpose the backward uses.
    pub fn transposes_stored(&self) -> bool {
        self.layers().skip(1).all(|layer| layer.wt.is_some())
    }

    /// The hidden layers' forward on the rows of `x` (`[n, d]`, any strides) into `trace`
    /// (shaped by [`Trace::new`]): `a_l` and `s_l` for `l = 1..L`.
    pub fn forward(&self, x: MatRef<'_, T>, trace: &mut Trace<T>) {
        assert_eq!(trace.depth(), self.depth(), "a trace of this network");
        for (l, layer) in self.hidden.iter().enumerate() {
            let (done, rest) = trace.acts.split_at_mut(l);
            let a = if l == 0 { x } else { done[l - 1].as_ref() };
            // z_l in a_l's buffer, then a_l and s_l from it in place.
            layer.preact_into(a, &mut rest[0]);
            activate(&self.act, self.gamma[l], &mut rest[0], &mut trace.slopes[l]);
        }
    }

    /// The output `f = beta_out a_L W_{L+1} + b_{L+1}` into `out` (`[n, k]`), after
    /// [`Self::forward`] filled `trace` from `x`.
    pub fn output_into(&self, x: MatRef<'_, T>, trace: &Trace<T>, out: &mut Mat<T>) {
        self.output.preact_into(trace.input(x, self.depth()), out);
    }

    /// The backward of this network from `cot` ([`backprop`] over all its layers).
    pub fn backprop(
        &self,
        x: MatRef<'_, T>,
        trace: &Trace<T>,
        cot: Cotangent<'_, T>,
        signals: &mut [Mat<T>],
        grads: Option<Grads<'_, T>>,
    ) {
        backprop(&self.hidden, &self.output, x, trace, cot, signals, grads);
    }
}

/// Matrices of finished computations kept for the next one of the same shape: repeated
/// passes need the same `n x m` (and, in the NTK, `n x n`) buffers again and again, and a
/// fresh one costs page faults and zeroing (~15 ms per `2000 x 2000` f64 matrix here) where
/// reuse costs nothing. Every buffer taken is overwritten before it is read.
#[derive(Clone, Debug)]
pub struct Pool<T: Real> {
    free: Vec<Mat<T>>,
}

impl<T: Real> Default for Pool<T> {
    fn default() -> Self {
        Self { free: Vec::new() }
    }
}

impl<T: Real> Pool<T> {
    /// A `rows x cols` matrix with unspecified contents.
    pub fn take(&mut self, rows: usize, cols: usize) -> Mat<T> {
        match self
            .free
            .iter()
            .position(|m| m.nrows() == rows && m.ncols() == cols)
        {
            Some(i) => self.free.swap_remove(i),
            None => Mat::zeros(rows, cols),
        }
    }

    pub fn give(&mut self, m: Mat<T>) {
        self.free.push(m);
    }

    /// Drops every buffer that has not `rows` rows.
    pub fn retain_rows(&mut self, rows: usize) {
        self.free.retain(|m| m.nrows() == rows);
    }
}

/// A new value for `param` (same id, device, dtype and grad requirement), from host data.
pub fn replace_param<const D: usize, T: Real>(
    param: burn::module::Param<burn::tensor::Tensor<D>>,
    data: Vec<T>,
    shape: Vec<usize>,
) -> burn::module::Param<burn::tensor::Tensor<D>> {
    param.map(|old| {
        let (device, dtype) = (old.device(), old.dtype());
        let values: Vec<f64> = data.iter().map(|v| v.f64()).collect();
        let fresh = burn::tensor::Tensor::<D>::from_data(
            burn::tensor::TensorData::new(values, shape),
            (&device, dtype),
        );
        if old.is_require_grad() {
            fresh.require_grad()
        } else {
            fresh
        }
    })
}
