//! The infinite-width NTK recursion (Jacot et al. 2018; Arora et al. 2019) for any
//! activation, in the paper convention.
//!
//! With the dual kernel `(Sigma_l, Sigma_dot_l)` of [`super::dual`]:
//!
//! ```text
//! Sigma_0(x,y) = x.y,                     Theta_0 = Sigma_0,
//! Sigma_l      = c E[s(u) s(v)],          (u, v) ~ N(0, Sigma_{l-1} on {x, y}),
//! Sigma_dot_l  = c E[s'(u) s'(v)],
//! Theta_l      = Theta_{l-1} Sigma_dot_l + Sigma_l,      l = 1..L.
//! ```
//!
//! `Theta_L` is the limit of the empirical NTK `<grad_W f(x), grad_W f(y)>` of the scalar
//! network `f = W_{L+1} alpha_L` of the paper convention, exactly, with no extra constant:
//! the output layer contributes `alpha_L(x).alpha_L(y) -> Sigma_L`; hidden layer `l`
//! contributes `alpha_{l-1}(x).alpha_{l-1}(y)` (`-> Sigma_{l-1}`, with `alpha_0 = x`) times
//! the product of its backpropagated signals, which for `l = L` is
//! `(c/m) sum_j w_j^2 s'(u_j) s'(v_j) -> Sigma_dot_L` and in general
//! `prod_{k=l..L} Sigma_dot_k` (the `W_k` of later layers are independent of the forward
//! pass in the limit). Summing, `Theta_L = sum_{l=0..L} Sigma_l prod_{k=l+1..L} Sigma_dot_k`,
//! which is the recursion. Example: depth-1 ReLU, `||x|| = 1`:
//! `Theta_1(x,x) = Sigma_0 Sigma_dot_1 + Sigma_1 = 1 * 1 + 1 = 2`, and in general
//! `Theta_L(x,x) = (L + 1) ||x||^2` for ReLU and the identity (the normalization of
//! Thm 4.4); the empirical host kernel at width 8192 gives 2 within its `1/sqrt(m)`
//! fluctuation (`tests/theory.rs`).

use ntk_model::Activation;

use super::dual::DualEvaluator;
use ntk_core::kernel::Kernel;

/// The recursion on two inputs, layer by layer; each entry is `[(x,x), (y,y), (x,y)]`.
#[derive(Clone, Debug, PartialEq)]
pub struct PairRecursion {
    /// `Sigma_l` for `l = 0..=L` (`Sigma_0 = [||x||^2, ||y||^2, x.y]`).
    pub sigma: Vec<[f64; 3]>,
    /// `Sigma_dot_l` for `l = 1..=L` (index `l - 1`).
    pub sigma_dot: Vec<[f64; 3]>,
    /// `Theta_l` for `l = 0..=L`.
    pub theta: Vec<[f64; 3]>,
}

fn angle(k: &[f64; 3]) -> f64 {
    (k[2] / (k[0].sqrt() * k[1].sqrt())).clamp(-1.0, 1.0).acos()
}

impl PairRecursion {
    pub fn depth(&self) -> usize {
        self.sigma.len() - 1
    }

    /// The embedding angles `theta_l = arccos(Sigma_l(x,y) / sqrt(Sigma_l(x,x) Sigma_l(y,y)))`,
    /// `l = 0..=L` (radians; `theta_0 = theta_in`): the angle between `alpha_l(x)` and
    /// `alpha_l(y)` at infinite width (Liu & Hui Eq. 7-9).
    pub fn embedding_angles(&self) -> Vec<f64> {
        self.sigma.iter().map(angle).collect()
    }

    /// The model-gradient angle `phi = arccos(Theta_L(x,y) / sqrt(Theta_L(x,x) Theta_L(y,y)))`
    /// (radians).
    pub fn grad_angle(&self) -> f64 {
        angle(self.theta.last().expect("theta_0 is always present"))
    }

    /// `Theta_L` as `[(x,x), (y,y), (x,y)]`.
    pub fn ntk(&self) -> [f64; 3] {
        *self.theta.last().expect("theta_0 is always present")
    }
}

/// Runs the recursion for two inputs with `||x||^2 = q1`, `||y||^2 = q2`, `x.y = c12`
/// through `depth` hidden layers.
pub fn pair_recursion(
    dual: &DualEvaluator,
    q1: f64,
    q2: f64,
    c12: f64,
    depth: usize,
) -> PairRecursion {
    let mut sigma = vec![[q1, q2, c12]];
    let mut sigma_dot = Vec::with_capacity(depth);
    let mut theta = vec![[q1, q2, c12]];
    for l in 1..=depth {
        let [a, b, ab] = sigma[l - 1];
        let (kx, ky, kxy) = (dual.eval(a, a, a), dual.eval(b, b, b), dual.eval(a, b, ab));
        let prev = theta[l - 1];
        sigma.push([kx.sigma, ky.sigma, kxy.sigma]);
        sigma_dot.push([kx.sigma_dot, ky.sigma_dot, kxy.sigma_dot]);
        theta.push([
            prev[0] * kx.sigma_dot + kx.sigma,
            prev[1] * ky.sigma_dot + ky.sigma,
            prev[2] * kxy.sigma_dot + kxy.sigma,
        ]);
    }
    PairRecursion {
        sigma,
        sigma_dot,
        theta,
    }
}

/// The infinite-width embedding angles `theta_0..theta_L` (radians) of two unit-norm inputs
/// at angle `theta_in`, for any activation (ReLU: equals
/// [`super::relu::relu_embedding_angles`]). For a non-homogeneous activation the answer
/// depends on the input norm; unit norm means N(0, 1) first-layer pre-activations in the
/// paper convention (use [`pair_recursion`] for other norms).
pub fn embedding_angles(act: &Activation, theta_in: f64, depth: usize) -> Vec<f64> {
    pair_recursion(&DualEvaluator::new(act), 1.0, 1.0, theta_in.cos(), depth).embedding_angles()
}

/// The infinite-width model-gradient angle phi (radians) of two unit-norm inputs at angle
/// `theta_in`, for any activation, from the NTK recursion (ReLU: equals
/// [`super::relu::relu_grad_angle`], Thm 4.4, to rounding).
pub fn grad_angle(act: &Activation, theta_in: f64, depth: usize) -> f64 {
    pair_recursion(&DualEvaluator::new(act), 1.0, 1.0, theta_in.cos(), depth).grad_angle()
}

/// The infinite-width NTK `Theta_L` and the top-layer embedding Gram matrix `Sigma_L`
/// (`alpha_L(x_i).alpha_L(x_j)` at infinite width) of a data set.
#[derive(Clone, Debug, PartialEq)]
pub struct InfiniteWidth {
    pub ntk: Kernel,
    pub gram: Kernel,
}

/// `(j, Theta_L(x_i, x_j), Sigma_L(x_i, x_j))` of row `i`.
type Entry = (usize, f64, f64);

/// `Theta_L` and `Sigma_L` of the row-major `n x d` inputs `x`, entry by entry: the diagonal
/// chains `Sigma_l(x_i, x_i)` first, then every pair `i < j` through the recursion, on all
/// cores for activations without a closed form (about 1-5 ms per entry and layer there;
/// microseconds for ReLU and the identity). The identity's result is exactly
/// `((L + 1) G, G)` with `G = X X^T` ([`super::linear::linear_ntk`]), the recursion's value
/// without the rounding of its `L` additions.
///
/// Scope: scalar output, no biases, the paper convention. A network with `k` outputs has
/// `k Theta_L` for the summed kernel and `Theta_L (x) I_k` for the full one. The
/// `unit_variance` convention is this recursion started from `Sigma_0 = x.y / d` (the paper
/// convention on `x / sqrt(d)`, for every activation); for ReLU and the identity, the
/// `official` one is `(c / d) Theta_L` for `L >= 1` (by positive homogeneity
/// `f_official = sqrt(c/d) f_paper` weight by weight; `G / d` at `L = 0`). Both are checked
/// against width 8192 in `tests/theory.rs`. For a non-homogeneous activation the `official`
/// first-layer scale `sqrt(c/d)` makes the second layer's pre-activation variance grow like
/// `m / d`, and this recursion does not describe it.
///
/// # Panics
/// If `x.len() != n * d`.
pub fn infinite_width_kernels(
    x: &[f64],
    n: usize,
    d: usize,
    dual: &DualEvaluator,
    depth: usize,
) -> InfiniteWidth {
    assert_eq!(x.len(), n * d, "x must be n x d row-major");
    let g = Kernel::gram(x, n, d);
    if matches!(dual.activation(), Activation::Linear) && dual.is_closed_form() {
        return InfiniteWidth {
            ntk: super::linear::linear_ntk(x, n, d, depth),
            gram: g,
        };
    }
    // Diagonal chains: q[i][l] = Sigma_l(x_i, x_i), and Theta_L(x_i, x_i).
    let mut q = vec![vec![0.0; depth + 1]; n];
    let mut theta_diag = vec![0.0; n];
    for i in 0..n {
        let mut t = g.get(i, i);
        q[i][0] = t;
        for l in 1..=depth {
            let v = q[i][l - 1];
            let k = dual.eval(v, v, v);
            t = t * k.sigma_dot + k.sigma;
            q[i][l] = k.sigma;
        }
        theta_diag[i] = t;
    }
    let pair = |i: usize, j: usize| -> (f64, f64) {
        let (mut s, mut t) = (g.get(i, j), g.get(i, j));
        for l in 1..=depth {
            let k = dual.eval(q[i][l - 1], q[j][l - 1], s);
            t = t * k.sigma_dot + k.sigma;
            s = k.sigma;
        }
        (t, s)
    };
    let row = |i: usize| -> Vec<Entry> {
        ((i + 1)..n)
            .map(|j| {
                let (t, s) = pair(i, j);
                (j, t, s)
            })
            .collect()
    };
    // Closed forms cost ~100 ns a pair and layer: threads pay off from a few million pairs
    // (n = 10,000 at depth 10: 5e8 evaluations, minutes on one core). Each entry is computed
    // alone, so the kernel does not depend on the thread count.
    let threads = if dual.is_closed_form() && n * n < 4_000_000 {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |p| p.get())
            .min(n.max(1))
    };
    // Rows interleaved over the threads (row i has n - 1 - i entries).
    let rows: Vec<(usize, Vec<Entry>)> = if threads <= 1 {
        (0..n).map(|i| (i, row(i))).collect()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let row = &row;
                    scope.spawn(move || {
                        (t..n)
                            .step_by(threads)
                            .map(|i| (i, row(i)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("kernel thread panicked"))
                .collect()
        })
    };
    let (mut ntk, mut gram) = (Kernel::zeros(n), Kernel::zeros(n));
    for i in 0..n {
        ntk.data[i * n + i] = theta_diag[i];
        gram.data[i * n + i] = q[i][depth];
    }
    for (i, entries) in rows {
        for (j, t, s) in entries {
            ntk.data[i * n + j] = t;
            ntk.data[j * n + i] = t;
            gram.data[i * n + j] = s;
            gram.data[j * n + i] = s;
        }
    }
    InfiniteWidth { ntk, gram }
}

/// The infinite-width NTK `Theta_L` (n x n) of the row-major `n x d` inputs for a depth-`L`
/// network with activation `act` in the paper convention (closed forms for ReLU and the
/// identity, the default quadrature otherwise); see [`infinite_width_kernels`].
pub fn infinite_width_ntk(x: &[f64], n: usize, d: usize, act: &Activation, depth: usize) -> Kernel {
    infinite_width_kernels(x, n, d, &DualEvaluator::new(act), depth).ntk
}

/// The infinite-width Gram matrix of the top-layer embeddings, `Sigma_L(x_i, x_j)`
/// (`= lim alpha_L(x_i).alpha_L(x_j)`; its angles are the embedding angles `theta_L`).
pub fn infinite_width_embedding_gram(
    x: &[f64],
    n: usize,
    d: usize,
    act: &Activation,
    depth: usize,
) -> Kernel {
    infinite_width_kernels(x, n, d, &DualEvaluator::new(act), depth).gram
}

#[cfg(test)]
mod tests {
    use super::super::dual::Quadrature;
    use super::super::relu::{relu_embedding_angles, relu_grad_angle};
    use super::*;
    use ntk_model::ActivationKind;

    /// The generic recursion with the closed form equals Thm 4.4 to rounding (1e-12 rad),
    /// and with the split quadrature forced on ReLU to 1e-11 rad.
    #[test]
    fn recursion_reproduces_thm_4_4() {
        let quad = DualEvaluator::with_quadrature(&Activation::Relu, Quadrature::SPLIT);
        for theta_deg in [1.0, 5.0, 30.0, 60.0, 90.0, 135.0] {
            let t = f64::to_radians(theta_deg);
            for depth in [0, 1, 2, 5, 10, 30] {
                let want = relu_grad_angle(t, depth);
                let got = grad_angle(&Activation::Relu, t, depth);
                assert!(
                    (got - want).abs() < 1e-12,
                    "{theta_deg} {depth}: {got} {want}"
                );
                let by_quad = pair_recursion(&quad, 1.0, 1.0, t.cos(), depth).grad_angle();
                assert!((by_quad - want).abs() < 1e-11, "{theta_deg} {depth}");
                let emb = embedding_angles(&Activation::Relu, t, depth);
                for (a, b) in emb.iter().zip(relu_embedding_angles(t, depth)) {
                    assert!((a - b).abs() < 1e-12);
                }
            }
        }
    }

    /// `Theta_L(x,x) = (L + 1) ||x||^2` for ReLU: the normalization of Thm 4.4.
    #[test]
    fn relu_diagonal_is_l_plus_one_times_the_norm() {
        let dual = DualEvaluator::new(&Activation::Relu);
        for depth in 0..6 {
            let p = pair_recursion(&dual, 2.5, 0.5, 0.3, depth);
            let [a, b, _] = p.ntk();
            assert!((a - (depth as f64 + 1.0) * 2.5).abs() < 1e-13 * a);
            assert!((b - (depth as f64 + 1.0) * 0.5).abs() < 1e-13 * b);
        }
    }

    /// The full matrix equals the pairwise recursion and is symmetric; the threaded path
    /// (quadrature) equals the serial one.
    #[test]
    fn matrix_entries_equal_the_pair_recursion() {
        let (n, d) = (5, 3);
        let x: Vec<f64> = (0..n * d)
            .map(|k| ((k * 7 % 11) as f64 - 5.0) / 4.0)
            .collect();
        for act in [
            Activation::Relu,
            Activation::new(ActivationKind::NormRelu, None),
        ] {
            let dual = DualEvaluator::new(&act);
            let k = infinite_width_kernels(&x, n, d, &dual, 3);
            let g = Kernel::gram(&x, n, d);
            for i in 0..n {
                for j in 0..n {
                    let p = pair_recursion(&dual, g.get(i, i), g.get(j, j), g.get(i, j), 3);
                    let [_, _, t] = p.ntk();
                    let s = p.sigma[3][2];
                    let tol = 1e-13 * k.ntk.get(i, i).abs().max(1.0);
                    assert!((k.ntk.get(i, j) - t).abs() < tol, "{act} {i} {j}");
                    assert!((k.gram.get(i, j) - s).abs() < tol, "{act} {i} {j}");
                    assert_eq!(k.ntk.get(i, j), k.ntk.get(j, i));
                }
            }
        }
    }
}
