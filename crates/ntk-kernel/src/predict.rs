//! What the NTK at initialization predicts for gradient descent on the square loss: the
//! linearized network's training-loss curve and its test outputs at any time (Jacot et al.;
//! Lee et al. 2019; Liu & Hui, Sec. 6).
//!
//! With `n` training samples, outputs `f` (`n x c`: `c` output columns), targets `y` and the
//! loss `L = (1/2n) ||f - y||_F^2`, a full-batch gradient-descent step at rate `eta` moves
//! the outputs of the network linearized at initialization by
//! `f_{s+1} = f_s - (eta / n) K (f_s - y)`, with `K` (`n x n`, symmetric, positive
//! semi-definite) the NTK of the training inputs. So the residual `r = f - y` after steps at
//! rates `eta_1..eta_t` is, with `K = V diag(lambda) V^T`,
//!
//! `r_t = V diag(g) V^T r_0`, `g_i = prod_s (1 - eta_s lambda_i / n)`,
//!
//! and the loss `L_t = (1/2n) sum_i g_i^2 ||(V^T r_0)_i||^2`: each eigendirection decays at
//! its own rate, the slowest at `1 - eta lambda_min / n`, and the fastest stable rate is
//! `eta < 2n / lambda_max`, so kappa bounds the speed (`L_t <= (1 - eta lambda_min / n)^{2t}
//! L_0`). The test outputs are kernel regression at time `t`: with `K_*` (`m x n`) the
//! kernel between test and training inputs,
//!
//! `f_*(t) = f_*(0) - K_* V diag(h) V^T r_0`, `h_i = (1 - g_i) / lambda_i`,
//!
//! where `h_i` follows `h <- h + g eta / n` step by step (so `lambda_i = 0` needs no
//! division: `h_i = sum_s eta_s / n`). Gradient flow, the continuous-time limit that
//! neural-tangents' `predict.gradient_descent_mse` solves, has `g_i = exp(-lambda_i tau / n)`
//! at time `tau = sum_s eta_s` ([`Linearized::flow`]).
//!
//! A network with `k` outputs has an `(n k) x (n k)` NTK (`OutputMode::Full`): give it with
//! the residual as one column in the same row order (`i k + o`), and the prediction is the
//! linearized network's, exact. Its block-diagonal approximation (`OutputMode::Sum` divided
//! by `k`: the infinite-width kernel is `K (x) I_k`) takes the residual as `k` columns.
//!
//! ```
//! use faer::Mat;
//! use ntk_kernel::predict::Linearized;
//!
//! // A 2 x 2 kernel, residuals f_0 - y of two samples (one output).
//! let k = Mat::from_fn(2, 2, |i, j| if i == j { 2.0 } else { 0.5 });
//! let r0 = Mat::from_fn(2, 1, |i, _| [1.0, -1.0][i]);
//! let lin = Linearized::new(k.as_ref(), r0.as_ref()).unwrap();
//! let mut at = lin.start();
//! for _ in 0..10 {
//!     lin.step(&mut at, 0.5); // eta = 0.5, n = 2
//! }
//! // r_0 is the eigenvector of lambda = 1.5: each step multiplies it by 1 - 0.5 * 1.5 / 2.
//! let expected = 0.5 * 0.625f64.powi(20) * 2.0 / 2.0;
//! assert!((lin.loss(&at) - expected).abs() < 1e-15);
//! ```

use faer::{Mat, MatRef};

/// The eigendecomposition of a kernel and the initial residual in its eigenbasis: everything
/// the linearized dynamics needs.
#[derive(Clone, Debug)]
pub struct Linearized {
    /// Eigenvalues of `K`, ascending.
    lambda: Vec<f64>,
    /// Eigenvectors of `K` (columns).
    v: Mat<f64>,
    /// `V^T r_0` (`n x c`).
    rotated: Mat<f64>,
}

/// Where the linearized dynamics stands: the per-eigenvalue factors `g` (left of the
/// residual) and `h = (1 - g) / lambda` (learned so far, per unit of kernel), after `steps`
/// steps or `time = sum eta`.
#[derive(Clone, Debug, PartialEq)]
pub struct Decay {
    pub g: Vec<f64>,
    pub h: Vec<f64>,
    pub steps: usize,
    pub time: f64,
}

/// Why a prediction cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PredictError {
    #[error("the kernel is {rows} x {cols}; a prediction needs a square kernel")]
    NotSquare { rows: usize, cols: usize },
    #[error("the kernel is {n} x {n} but the residual has {rows} rows")]
    Rows { n: usize, rows: usize },
    #[error("the kernel holds a non-finite value")]
    NotFinite,
    #[error("the test kernel is {rows} x {cols}: it needs {n} columns (the training samples)")]
    TestColumns { rows: usize, cols: usize, n: usize },
    #[error("the test outputs are {rows} x {cols}; the test kernel and residual ask {m} x {c}")]
    TestOutputs {
        rows: usize,
        cols: usize,
        m: usize,
        c: usize,
    },
    #[error("the eigensolver failed: {0}")]
    Eigensolver(String),
}

impl Linearized {
    /// The dynamics of kernel `kernel` (`n x n`, symmetric: its lower triangle is read) from
    /// the initial residual `residual = f_0 - y` (`n x c`). The eigendecomposition is f64
    /// ([`ntk_numerics::linalg::sym_eigen`]): `O(n^3)`, about 1 s at `n = 2000`.
    pub fn new(kernel: MatRef<'_, f64>, residual: MatRef<'_, f64>) -> Result<Self, PredictError> {
        let n = kernel.nrows();
        if kernel.ncols() != n {
            return Err(PredictError::NotSquare {
                rows: n,
                cols: kernel.ncols(),
            });
        }
        if residual.nrows() != n {
            return Err(PredictError::Rows {
                n,
                rows: residual.nrows(),
            });
        }
        let mut lower = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let v = kernel[(i, j)];
                if !v.is_finite() {
                    return Err(PredictError::NotFinite);
                }
                lower[i * n + j] = v;
                lower[j * n + i] = v;
            }
        }
        let (lambda, v) = ntk_numerics::linalg::sym_eigen(&lower, n)
            .map_err(|e| PredictError::Eigensolver(e.to_string()))?;
        let rotated = v.transpose() * residual;
        Ok(Self { lambda, v, rotated })
    }

    /// The number of training samples (rows of the kernel).
    pub fn n(&self) -> usize {
        self.lambda.len()
    }

    /// The kernel's eigenvalues, ascending.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.lambda
    }

    /// At initialization: `g = 1`, `h = 0`.
    pub fn start(&self) -> Decay {
        Decay {
            g: vec![1.0; self.n()],
            h: vec![0.0; self.n()],
            steps: 0,
            time: 0.0,
        }
    }

    /// One gradient-descent step at rate `lr`: `h <- h + g lr / n`, then
    /// `g <- g (1 - lr lambda / n)`.
    pub fn step(&self, at: &mut Decay, lr: f64) {
        let per = lr / self.n() as f64;
        for ((g, h), l) in at.g.iter_mut().zip(at.h.iter_mut()).zip(&self.lambda) {
            *h += *g * per;
            *g *= 1.0 - per * l;
        }
        at.steps += 1;
        at.time += lr;
    }

    /// Gradient flow at time `time` (`= sum_s eta_s`): `g = exp(-lambda time / n)`,
    /// `h = -expm1(-lambda time / n) / lambda` (`time / n` at `lambda = 0`).
    pub fn flow(&self, time: f64) -> Decay {
        let n = self.n() as f64;
        let (g, h) = self
            .lambda
            .iter()
            .map(|&l| {
                let x = -l * time / n;
                let h = if l == 0.0 { time / n } else { -x.exp_m1() / l };
                (x.exp(), h)
            })
            .unzip();
        Decay {
            g,
            h,
            steps: 0,
            time,
        }
    }

    /// The training loss `(1/2n) ||r_t||_F^2` of the linearized network at `at`.
    /// Each residual is scaled by a power of two before it is squared, so the loss is finite
    /// wherever it is within f64's range: the sum of squares passed it `2n` times earlier
    /// (hundred-and-thirty-seventh hostile round, D1: `inf` for losses of 4.7e306).
    pub fn loss(&self, at: &Decay) -> f64 {
        let cols = self.rotated.ncols();
        let entry = |i: usize, c: usize| at.g[i] * self.rotated[(i, c)];
        let largest = (0..at.g.len())
            .flat_map(|i| (0..cols).map(move |c| (i, c)))
            .fold(0.0f64, |m, (i, c)| m.max(entry(i, c).abs()));
        // The largest residual near 1 (a power of two: exact); none past the range (the
        // loss is then too) or all 0.
        let e = match largest.is_finite() && largest > 0.0 {
            // (At least -1000: 2^1000 is in range, where a subnormal's 2^1074 is not.)
            true => libm::ilogb(largest).max(-1000),
            false => 0,
        };
        let down = libm::scalbn(1.0, -e);
        let sum: f64 = (0..at.g.len())
            .flat_map(|i| (0..cols).map(move |c| (i, c)))
            .map(|(i, c)| {
                let v = entry(i, c) * down;
                v * v
            })
            .sum();
        libm::scalbn(sum / (2.0 * self.n() as f64), 2 * e)
    }

    /// The training residual `r_t = V diag(g) V^T r_0` (`n x c`).
    pub fn residual(&self, at: &Decay) -> Mat<f64> {
        let scaled = Mat::from_fn(self.rotated.nrows(), self.rotated.ncols(), |i, c| {
            at.g[i] * self.rotated[(i, c)]
        });
        &self.v * scaled
    }

    /// The test outputs at `at`: `f_*(0) - K_* V diag(h) V^T r_0`, with `test_kernel` `K_*`
    /// (`m x n`) and `test_outputs0` `f_*(0)` (`m x c`).
    pub fn test_outputs(
        &self,
        at: &Decay,
        test_kernel: MatRef<'_, f64>,
        test_outputs0: MatRef<'_, f64>,
    ) -> Result<Mat<f64>, PredictError> {
        let (n, c) = (self.n(), self.rotated.ncols());
        if test_kernel.ncols() != n {
            return Err(PredictError::TestColumns {
                rows: test_kernel.nrows(),
                cols: test_kernel.ncols(),
                n,
            });
        }
        let m = test_kernel.nrows();
        if test_outputs0.nrows() != m || test_outputs0.ncols() != c {
            return Err(PredictError::TestOutputs {
                rows: test_outputs0.nrows(),
                cols: test_outputs0.ncols(),
                m,
                c,
            });
        }
        let learned = Mat::from_fn(n, c, |i, j| at.h[i] * self.rotated[(i, j)]);
        let moved = test_kernel * (&self.v * learned);
        Ok(Mat::from_fn(m, c, |i, j| {
            test_outputs0[(i, j)] - moved[(i, j)]
        }))
    }
}

/// The asymptotic rate of the linearized loss at a constant rate `lr` on a kernel whose
/// eigenvalues span `[lambda_min, lambda_max]`: each eigendirection's residual is multiplied
/// by `1 - lr lambda / n` a step, whose size is largest at one end of the spectrum, so once
/// the slowest direction dominates the loss changes by
/// `max(|1 - lr lambda_min / n|, |1 - lr lambda_max / n|)^2` a step: minus twice its log in
/// `ln L` a step (the slope of `ln L` against steps). Above `2 n / (lambda_min + lambda_max)`
/// the top direction is the slowest; above the stability limit `2 n / lambda_max` it grows
/// and the rate is negative (seventh hostile round: lambda_min's alone gave a decay of 0.02
/// a step to a prediction that grew to 4.6e10).
///
/// Each `ln |1 - x|` (`x = lr lambda / n`) is formed as `ln_1p(-x)` below 1: `ln(1 - x)`
/// rounded `1 - x` to 1 for `x` below eps and wrote `-0.0`, and kept only part of the digits
/// above it (hundred-and-third hostile round, D5: inputs of norm 1e-20 gave `-0.0` for
/// 2.03e-164, unit inputs 12 of 17 digits).
pub fn asymptotic_rate(lambda_min: f64, lambda_max: f64, lr: f64, n: usize) -> f64 {
    let ln_factor = |lambda: f64| {
        let x = lr * lambda / n as f64;
        if x <= 1.0 {
            (-x).ln_1p()
        } else {
            // `ln(x - 1)` as `ln_1p(x - 2)`: near the stability limit (`x` near 2) `ln` of a
            // number near 1 kept 7 of 17 digits (hundred-and-fourth hostile round, N1); and
            // `x - 2` as `(lr lambda - 2 n) / n` with one rounding (a fused multiply-add), not
            // from `x` rounded: one ulp above the limit `x` rounded to 2 and the rate to 0
            // where it is -3e-16 (hundred-and-sixth hostile round, N2).
            (lr.mul_add(lambda, -2.0 * n as f64) / n as f64).ln_1p()
        }
    };
    let rate = -2.0 * ln_factor(lambda_min).max(ln_factor(lambda_max));
    // At the limit itself the top direction neither grows nor decays: 0, not -0.0.
    if rate == 0.0 { 0.0 } else { rate }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rate keeps its digits where `lr lambda / n` is far below 1, and its sign: the
    /// reference is the series `-2 ln(1 - x) = 2 (x + x^2 / 2 + x^3 / 3 + ...)`, four terms
    /// (the fifth below an ulp at `x <= 1e-6`).
    #[test]
    fn the_asymptotic_rate_keeps_its_digits_at_small_rates() {
        for x in [2.0e-164, 1e-17, 1e-9, 1e-6] {
            let series = 2.0 * (x + x * x / 2.0 + x * x * x / 3.0 + x * x * x * x / 4.0);
            let rate = asymptotic_rate(x * 40.0, x * 40.0, 1.0, 40);
            assert!(rate > 0.0, "{x:e}: {rate:e}");
            assert!(
                (rate - series).abs() <= 4.0 * f64::EPSILON * series,
                "{x:e}: {rate:e}"
            );
        }
        // Past the stability limit the top direction grows: negative; at it, 0 (not -0.0);
        // just below it, `-2 ln(1 - 1e-9)` to its digits.
        assert!(asymptotic_rate(0.1, 100.0, 1.0, 40) < 0.0);
        let at = asymptotic_rate(0.1, 80.0, 1.0, 40);
        assert!(at == 0.0 && at.is_sign_positive(), "{at}");
        let near = asymptotic_rate(0.1, 80.0 - 40e-9, 1.0, 40);
        let expected = -2.0 * (-1e-9f64).ln_1p();
        assert!(
            (near - expected).abs() <= 1e-6 * expected,
            "{near:e} {expected:e}"
        );
        // One ulp above the limit of a singular kernel: negative, as the formula is, not 0
        // (a lambda_max at which `lr lambda / n` rounds to 2 there).
        let (lambda, n) = (83.7407452880671, 40);
        let limit = 2.0 * n as f64 / lambda;
        let above = f64::from_bits(limit.to_bits() + 1);
        let r = asymptotic_rate(0.0, lambda, above, n);
        // About -2 lr lambda / n - 2 a step, a few ulps of 2 in all.
        assert!(r < 0.0 && r > -8.0 * f64::EPSILON, "{r:e}");
        // A step that removes a direction entirely leaves the other as the slowest.
        let r = asymptotic_rate(40.0, 40.0 * 1.5, 1.0, 40);
        assert!((r - (-2.0 * 0.5f64.ln())).abs() < 1e-15, "{r}");
    }

    /// The loss is finite wherever it is within f64's range, though its sum of squares is
    /// not (hundred-and-thirty-seventh hostile round, D1), and exact where it was.
    #[test]
    fn the_loss_is_finite_up_to_the_range() {
        let (n, c) = (12, 3);
        let k = kernel(n, 6, 0.05);
        for (scale, finite) in [(3e153, true), (1.0, true), (1e-160, true), (1e160, false)] {
            let r0 = Mat::<f64>::from_fn(n, c, |i, j| scale * (1.0 + ((i + j) % 3) as f64));
            let lin = Linearized::new(k.as_ref(), r0.as_ref()).unwrap();
            let loss = lin.loss(&lin.start());
            // (1/2n) sum of (scale m)^2, m in {1, 2, 3}: 12 each over the 36 entries.
            let expected = scale * scale * (12.0 * (1.0 + 4.0 + 9.0)) / (2.0 * n as f64);
            assert_eq!(loss.is_finite(), finite, "{scale:e}: {loss:e}");
            if finite {
                assert!(
                    (loss - expected).abs() <= 1e-14 * expected,
                    "{scale:e}: {loss:e} against {expected:e}"
                );
            }
        }
    }

    /// A fixed positive semi-definite kernel: `B B^T` of a `n x r` matrix, plus `shift I`.
    fn kernel(n: usize, r: usize, shift: f64) -> Mat<f64> {
        let b = Mat::<f64>::from_fn(n, r, |i, j| ((i * 13 + j * 7) % 17) as f64 / 8.0 - 1.0);
        let mut k = &b * b.transpose();
        for i in 0..n {
            k[(i, i)] += shift;
        }
        k
    }

    /// The eigenbasis route against a direct iteration of the linear model,
    /// `f <- f - (eta / n) K (f - y)` on the training and `f_* <- f_* - (eta / n) K_* (f - y)`
    /// on the test outputs, over 200 steps at a changing rate: equal to f64 rounding (both
    /// sums of ~n terms of size ~|r_0| per step: 1e-12 relative).
    #[test]
    fn the_eigenbasis_equals_the_direct_iteration() {
        let (n, m, c) = (12, 5, 3);
        let all = kernel(n + m, 6, 0.05);
        let k = all.as_ref().submatrix(0, 0, n, n).to_owned();
        let k_star = all.as_ref().submatrix(n, 0, m, n).to_owned();
        let r0 = Mat::<f64>::from_fn(n, c, |i, j| ((i * 5 + j * 3) % 7) as f64 / 3.0 - 1.0);
        let f_star0 = Mat::<f64>::from_fn(m, c, |i, j| (i as f64 - j as f64) / 4.0);
        let lin = Linearized::new(k.as_ref(), r0.as_ref()).unwrap();
        let lambda_max = lin.eigenvalues()[n - 1];
        let mut at = lin.start();
        let (mut r, mut f_star) = (r0.clone(), f_star0.clone());
        for s in 0..200 {
            let lr = (1.0 + (s % 3) as f64) / 3.0 * n as f64 / lambda_max;
            lin.step(&mut at, lr);
            let kr = &k * &r;
            let ksr = &k_star * &r;
            let per = lr / n as f64;
            r = Mat::from_fn(n, c, |i, j| r[(i, j)] - per * kr[(i, j)]);
            f_star = Mat::from_fn(m, c, |i, j| f_star[(i, j)] - per * ksr[(i, j)]);
            if s % 50 == 49 {
                let direct: f64 = r.as_ref().squared_norm_l2() / (2.0 * n as f64);
                let scale = lin.loss(&lin.start());
                assert!((lin.loss(&at) - direct).abs() < 1e-12 * scale, "step {s}");
                let res = lin.residual(&at);
                let pred = lin
                    .test_outputs(&at, k_star.as_ref(), f_star0.as_ref())
                    .unwrap();
                for (a, b) in [(&res, &r), (&pred, &f_star)] {
                    let diff = (a - b).norm_max();
                    assert!(diff < 1e-12 * b.norm_max().max(1.0), "step {s}: {diff:e}");
                }
            }
        }
    }

    /// Gradient flow is the limit of many small steps (1e5 steps of rate tau / 1e5: the
    /// difference is O(tau^2 lambda^2 / (n^2 steps)), below 1e-5 relative here), and at
    /// `lambda = 0` (a singular kernel) nothing decays while `h = tau / n`.
    #[test]
    fn the_flow_is_the_limit_of_small_steps() {
        let n = 8;
        let k = kernel(n, 5, 0.0); // rank 5: three zero eigenvalues
        let r0 = Mat::<f64>::from_fn(n, 1, |i, _| (i as f64 - 3.5) / 2.0);
        let lin = Linearized::new(k.as_ref(), r0.as_ref()).unwrap();
        let tau = 3.0 * n as f64 / lin.eigenvalues()[n - 1];
        let mut at = lin.start();
        let steps = 100_000;
        for _ in 0..steps {
            lin.step(&mut at, tau / steps as f64);
        }
        let flow = lin.flow(tau);
        let rel = (lin.loss(&at) - lin.loss(&flow)).abs() / lin.loss(&flow);
        assert!(rel < 1e-5, "{rel:e}");
        let zero = Linearized::new(Mat::<f64>::zeros(n, n).as_ref(), r0.as_ref()).unwrap();
        let at0 = zero.flow(2.0);
        assert_eq!(zero.loss(&at0), zero.loss(&zero.start()));
        assert!(at0.h.iter().all(|h| *h == 2.0 / n as f64));
    }

    /// Gradient flow against neural-tangents' `predict.gradient_descent_mse` fed the same
    /// kernel, targets and initial outputs (the values it printed,
    /// `experiments/convergence/nt_reference.py`; neural-tangents 0.6.5, jax 0.4.30 in
    /// float64): the training loss and the test outputs at three times, equal to 1e-12 (both
    /// are an f64 eigendecomposition of a 6 x 6 kernel of condition ~100).
    #[test]
    fn gradient_flow_matches_neural_tangents() {
        let (n, m, c) = (6, 3, 2);
        let b = Mat::<f64>::from_fn(n + m, 4, |i, j| ((i * 13 + j * 7) % 17) as f64 / 8.0 - 1.0);
        let mut k = &b * b.transpose();
        for i in 0..n + m {
            k[(i, i)] += 0.1;
        }
        let y = Mat::<f64>::from_fn(n, c, |i, j| ((i * 5 + j * 3) % 7) as f64 / 3.0 - 1.0);
        let f0 = Mat::<f64>::from_fn(n, c, |i, j| (i as f64 - j as f64) / 5.0);
        let f0_test = Mat::<f64>::from_fn(m, c, |i, j| (i + j) as f64 / 7.0);
        let k_train = k.as_ref().submatrix(0, 0, n, n);
        let k_test = k.as_ref().submatrix(n, 0, m, n);
        let lin = Linearized::new(k_train, (&f0 - &y).as_ref()).unwrap();
        let neural_tangents: [(f64, f64, [f64; 6]); 3] = [
            (
                0.5,
                0.5362437409588569,
                [
                    0.0931649977105343,
                    0.15654619762642344,
                    0.07133547948550396,
                    0.5077148461644053,
                    0.24283495884209594,
                    0.33901538603879444,
                ],
            ),
            (
                2.0,
                0.3726359899022233,
                [
                    0.3227795182759649,
                    0.21851134352613993,
                    -0.06671480719447015,
                    0.7852357394361864,
                    0.16704698944516427,
                    0.23880014566979943,
                ],
            ),
            (
                10.0,
                0.21532335969273445,
                [
                    1.045141387953871,
                    0.564043013200823,
                    -0.38341702811341377,
                    0.7838601441042496,
                    0.1515658760482196,
                    0.2128173227095749,
                ],
            ),
        ];
        for (tau, loss, test) in neural_tangents {
            let at = lin.flow(tau);
            assert!(
                (lin.loss(&at) - loss).abs() < 1e-12 * loss,
                "tau {tau}: loss"
            );
            let f = lin.test_outputs(&at, k_test, f0_test.as_ref()).unwrap();
            for (idx, want) in test.iter().enumerate() {
                let got = f[(idx / c, idx % c)];
                assert!(
                    (got - want).abs() < 1e-12,
                    "tau {tau}: test output {idx}: {got} {want}"
                );
            }
        }
    }

    /// Shapes that do not fit are refused, naming them.
    #[test]
    fn shapes_are_checked() {
        let k = kernel(4, 2, 1.0);
        let bad = Mat::<f64>::zeros(3, 1);
        assert_eq!(
            Linearized::new(k.as_ref(), bad.as_ref()).unwrap_err(),
            PredictError::Rows { n: 4, rows: 3 }
        );
        let lin = Linearized::new(k.as_ref(), Mat::<f64>::zeros(4, 2).as_ref()).unwrap();
        let err = lin
            .test_outputs(
                &lin.start(),
                Mat::zeros(2, 3).as_ref(),
                Mat::zeros(2, 2).as_ref(),
            )
            .unwrap_err();
        assert_eq!(
            err,
            PredictError::TestColumns {
                rows: 2,
                cols: 3,
                n: 4
            }
        );
    }

    /// `ln L_3999 - ln L_4000` of `lin` trained at `lr`: long enough for the slowest
    /// direction to dominate the others by 1e12, the loss far above f64's underflow.
    fn late_slope(lin: &Linearized, lr: f64) -> f64 {
        let mut at = lin.start();
        let mut losses = Vec::new();
        for _ in 0..4000 {
            lin.step(&mut at, lr);
            losses.push(lin.loss(&at).ln());
        }
        losses[3998] - losses[3999]
    }

    /// The asymptotic rate is the slope of the loss once the slowest direction dominates.
    /// The residual `1 + i^2` has a component of 4 along the slowest eigenvector (B has rank
    /// 5, its null vector is that direction); `1 + i` had none, orthogonal to it, which left
    /// that component at rounding level (1e-15, a different value on each CPU's BLAS) and
    /// the next direction still in the slope after 4000 steps (5e-6 off on an Intel Xeon).
    #[test]
    fn the_asymptotic_rate_is_the_late_slope() {
        let n = 6;
        let k = kernel(n, 6, 0.2);
        let r0 = Mat::<f64>::from_fn(n, 1, |i, _| 1.0 + (i * i) as f64);
        let lin = Linearized::new(k.as_ref(), r0.as_ref()).unwrap();
        // The premise: the slowest direction is in the residual, not rounding noise.
        assert!(lin.rotated[(0, 0)].abs() > 1.0, "{}", lin.rotated[(0, 0)]);
        let lr = n as f64 / lin.eigenvalues()[n - 1];
        let slope = late_slope(&lin, lr);
        let w = lin.eigenvalues();
        let rate = asymptotic_rate(w[0], w[n - 1], lr, n);
        assert!((slope - rate).abs() < 1e-6 * rate, "{slope} {rate}");
    }

    /// Above `2 n / (lambda_min + lambda_max)` the top direction is the slowest, and above
    /// the stability limit it grows: the rate is the late slope there too (negative where
    /// the loss grows), not lambda_min's decay.
    #[test]
    fn the_asymptotic_rate_follows_the_top_direction_at_large_rates() {
        let n = 6;
        let k = kernel(n, 6, 0.2);
        let r0 = Mat::<f64>::from_fn(n, 1, |i, _| 1.0 + i as f64);
        let lin = Linearized::new(k.as_ref(), r0.as_ref()).unwrap();
        let w = lin.eigenvalues().to_vec();
        let (lo, hi) = (w[0], w[n - 1]);
        // Between 2n / (lo + hi) and the limit 2n / hi (decaying), and beyond it (growing).
        for (lr, grows) in [(1.95 * n as f64 / hi, false), (2.05 * n as f64 / hi, true)] {
            let slope = late_slope(&lin, lr);
            let rate = asymptotic_rate(lo, hi, lr, n);
            assert_eq!(rate < 0.0, grows, "{rate}");
            assert!(
                (slope - rate).abs() < 1e-6 * rate.abs(),
                "{lr}: {slope} {rate}"
            );
        }
    }
}
