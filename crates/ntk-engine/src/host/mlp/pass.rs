//! The forward's record ([`Trace`]), the activation with its slope, and the backward
//! ([`backprop`]); the equations are in the module doc of [`super`].

use faer::{Mat, MatRef};
use ntk_numerics::linalg::{Real, gemm, gemm_acc};

use super::{Layer, Params, Pool};
use ntk_model::activation::Activation;

/// What a forward keeps of every hidden layer `l = 1..L`: its output `a_l` and its slope
/// `s_l = gamma_l phi'(z_l)`, each `[n, m_l]`.
#[derive(Clone, Debug)]
pub struct Trace<T: Real> {
    pub acts: Vec<Mat<T>>,
    pub slopes: Vec<Mat<T>>,
}

impl<T: Real> Trace<T> {
    /// Buffers for the hidden layers of `params` on `n` rows, from `pool`.
    pub fn new(params: &Params<T>, n: usize, pool: &mut Pool<T>) -> Self {
        let (mut acts, mut slopes) = (Vec::new(), Vec::new());
        for layer in params.hidden() {
            acts.push(pool.take(n, layer.fan_out()));
            slopes.push(pool.take(n, layer.fan_out()));
        }
        Self { acts, slopes }
    }

    /// The number of hidden layers recorded.
    pub fn depth(&self) -> usize {
        self.slopes.len()
    }

    /// `a_l`, the input of layer `l + 1` (`a_0 = x`).
    pub fn input<'a>(&'a self, x: MatRef<'a, T>, l: usize) -> MatRef<'a, T> {
        if l == 0 { x } else { self.acts[l - 1].as_ref() }
    }
}

/// In place: the pre-activation `z` held in `a` becomes `a = gamma phi(z)`, and
/// `s = gamma phi'(z)` (a buffer of `z`'s shape), elementwise, column by column.
pub fn activate<T: Real>(act: &Activation, gamma: f64, a: &mut Mat<T>, s: &mut Mat<T>) {
    for j in 0..a.ncols() {
        act.activate_host(gamma, a.col_as_slice_mut(j), s.col_as_slice_mut(j));
    }
}

/// Column `j` of `m` as a slice (the engines' matrices have contiguous columns).
fn column<'a, T: Real>(m: MatRef<'a, T>, j: usize) -> &'a [T] {
    m.col(j)
        .try_as_col_major()
        .expect("a matrix with contiguous columns")
        .as_slice()
}

/// The output cotangent `G = dE/df` a backward starts from.
#[derive(Clone, Copy, Debug)]
pub enum Cotangent<'a, T> {
    /// `G` given, `[n, k]`.
    Rows(MatRef<'a, T>),
    /// `e_o` in every row: output `o`'s own signals. The top signal is then column `o` of
    /// `W_{L+1}` (scaled by `beta_out`) times the slope, without a GEMM.
    Unit(usize),
}

/// Where a backward puts the parameter gradients: `g = keep g + dE/dtheta` for every layer
/// (the output layer last), BLAS's `beta` (`keep = 0`: the weight gradients are overwritten
/// without being read; the bias gradients as `0 g + dE/db`).
pub struct Grads<'a, T: Real> {
    /// Shaped as the weights.
    pub w: &'a mut [Mat<T>],
    /// Shaped as the biases.
    pub b: &'a mut [Option<Vec<T>>],
    pub keep: T,
}

/// The backward of the network with hidden layers `hidden` (the trace's first ones) and
/// output layer `output` on the rows of `x` (the forward's input), from the cotangent `cot`:
/// the signals `delta_l = dE/dz_l`, `l = 1..L`, into `signals` (`[n, m_l]`, overwritten) and,
/// with `grads`, the parameter gradients (equations in [`super`]). Layer by layer from the
/// output down: each layer's gradients, then the signal below it.
///
/// The hidden layers may be the first ones of a deeper network's trace: a depth sweep's
/// shallower networks share the deeper one's hidden layers, and only the output layer
/// differs.
pub fn backprop<T: Real>(
    hidden: &[Layer<T>],
    output: &Layer<T>,
    x: MatRef<'_, T>,
    trace: &Trace<T>,
    cot: Cotangent<'_, T>,
    signals: &mut [Mat<T>],
    grads: Option<Grads<'_, T>>,
) {
    let depth = hidden.len();
    assert!(trace.depth() >= depth, "a trace of these hidden layers");
    assert_eq!(signals.len(), depth, "one signal per hidden layer");
    if let (Cotangent::Unit(o), Some(_)) = (cot, &grads) {
        // The weight gradients need G itself.
        let onehot = Mat::from_fn(x.nrows(), output.fan_out(), |_, j| {
            T::of(if j == o { 1.0 } else { 0.0 })
        });
        let cot = Cotangent::Rows(onehot.as_ref());
        return backprop(hidden, output, x, trace, cot, signals, grads);
    }
    let mut grads = grads;
    for l in (0..=depth).rev() {
        let layer = if l == depth { output } else { &hidden[l] };
        let (lower, upper) = signals.split_at_mut(l);
        // dE/dz of this layer: G for the output layer, else its signal.
        let dz = match cot {
            _ if l < depth => Some(upper[0].as_ref()),
            Cotangent::Rows(g) => Some(g),
            Cotangent::Unit(_) => None,
        };
        if let (Some(g), Some(dz)) = (grads.as_mut(), dz) {
            // dW_l = beta_l a_{l-1}^T dz_l, db_l = 1^T dz_l.
            let a_t = trace.input(x, l).transpose();
            gemm_acc(g.w[l].as_mut(), a_t, dz, T::of(layer.beta), g.keep);
            if let Some(gb) = g.b[l].as_mut() {
                for (j, gj) in gb.iter_mut().enumerate() {
                    let sum = column(dz, j).iter().fold(T::of(0.0), |s, v| s + *v);
                    *gj = *gj * g.keep + sum;
                }
            }
        }
        if l == 0 {
            break;
        }
        let (prev, s) = (&mut lower[l - 1], &trace.slopes[l - 1]);
        match (dz, cot) {
            (Some(dz), _) => {
                // delta_{l-1} = (beta_l dz_l W_l^T) .* s_{l-1}.
                gemm(prev.as_mut(), dz, layer.wt(), T::of(layer.beta));
                for j in 0..prev.ncols() {
                    let (pc, sc) = (prev.col_as_slice_mut(j), s.col_as_slice(j));
                    pc.iter_mut().zip(sc).for_each(|(p, s)| *p *= *s);
                }
            }
            (None, Cotangent::Unit(o)) => {
                // delta_L = s_L .* (beta_out W_{L+1}[:, o])^T.
                for j in 0..prev.ncols() {
                    let w = T::of(layer.beta * layer.w[(j, o)].f64());
                    let (pc, sc) = (prev.col_as_slice_mut(j), s.col_as_slice(j));
                    pc.iter_mut().zip(sc).for_each(|(p, s)| *p = *s * w);
                }
            }
            (None, Cotangent::Rows(_)) => unreachable!("a given G is a dz"),
        }
    }
}
