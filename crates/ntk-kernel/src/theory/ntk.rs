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
//! fluctuation (`tests/kernel/theory.rs`).

use ntk_model::Activation;

use super::dual::{DualEvaluator, DualKernel, correlation};
use super::scaling::Scaling;
use ntk_numerics::kernel::Kernel;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// The angle `arccos(k_xy / sqrt(k_xx k_yy))` of a pair's kernel `[(x,x), (y,y), (x,y)]`.
///
/// The norm product is `k0` itself when the two diagonals are equal (`sqrt(a) sqrt(a)` can
/// be an ulp off `a`, which arccos turns into 1.5e-8 rad at `rho = -1`: 179.999999 degrees
/// for two opposite inputs; round 98 N8), and `sqrt(k0) sqrt(k1)` otherwise, which never
/// overflows where `k0 k1` would.
fn angle(k: &[f64; 3]) -> f64 {
    let norms = if k[0] == k[1] {
        k[0]
    } else {
        k[0].sqrt() * k[1].sqrt()
    };
    (k[2] / norms).clamp(-1.0, 1.0).acos()
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

    /// The first layer `l` (0-based) whose `Sigma_l` or `Theta_l` correlation `rho` is too
    /// near 1 for an angle formed from the recursion to keep six significant digits, and its
    /// `1 - rho`: below [`MIN_ONE_MINUS_RHO_PER_LAYER`] `* (L + 1)`. `None` when every layer
    /// resolves (or a correlation is not a number: the range checks say that).
    ///
    /// An angle formed as `arccos(rho)` from a correlation known to about an ulp of 1 has
    /// relative error about `ulp / (1 - rho)`, and the errors add up over the layers
    /// (thirty-first hostile round, D3: ReLU's angle by the recursion was 97% off at theta_in
    /// = 1e-7 degrees, depth 50). ReLU and the identity have angles formed without the
    /// cancellation ([`grad_angle`]); every other activation goes through the recursion.
    pub fn unresolved_layer(&self) -> Option<(usize, f64)> {
        self.unresolved_layer_from(0)
    }

    /// [`Self::unresolved_layer`] over the layers from `first` on: `first = 1` leaves out
    /// the input layer where its correlation is exact, not a cosine's rounding (exactly
    /// proportional rows of different norms: correlation 1, the input angle exactly 0,
    /// whose later layers a non-homogeneous activation turns apart; hundred-and-seventh
    /// hostile round, D5: tanh's 30.2 degrees at rows (1, 0), (3, 0) was refused as "too
    /// near 0").
    pub fn unresolved_layer_from(&self, first: usize) -> Option<(usize, f64)> {
        let floor = MIN_ONE_MINUS_RHO_PER_LAYER * (self.depth() as f64 + 1.0);
        self.one_minus_rho()
            .skip(first)
            .find(|&(_, d)| d.is_finite() && d < floor)
    }

    /// The layer whose correlation is nearest 1 and its `1 - rho` (a correlation that is
    /// not a number passed over: the range checks say it): where an angle formed from the
    /// recursion has its relative error, about `(L + 1) eps / (1 - rho)`
    /// ([`Self::unresolved_layer`]).
    pub fn least_one_minus_rho(&self) -> Option<(usize, f64)> {
        self.one_minus_rho()
            .filter(|(_, d)| d.is_finite())
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The absolute error of an angle formed from this recursion where its correlation is
    /// near 1, in degrees, with the layer nearest 1 and its `1 - rho`: `(L + 1) u / sqrt(2
    /// (1 - rho))` radians (arccos near 1 moves by `u / sqrt(2 (1 - rho))` for an error `u`
    /// of its argument), `u` the error of a layer's correlation: an ulp of 1 for a
    /// closed-form dual kernel, [`QUADRATURE_ULPS`] ulps by quadrature. Infinite where a
    /// correlation is at or past 1 (`1 - rho <= 0`: no distance left to measure). `None`
    /// where no correlation is a number.
    pub fn angle_error_deg(&self, closed_form: bool) -> Option<(usize, f64, f64)> {
        self.angle_error_deg_from(0, closed_form)
    }

    /// [`Self::angle_error_deg`] over the layers from `first` on (`first = 1`: the input
    /// layer's correlation exact, [`Self::unresolved_layer_from`]).
    pub fn angle_error_deg_from(
        &self,
        first: usize,
        closed_form: bool,
    ) -> Option<(usize, f64, f64)> {
        let (l, d) = self
            .one_minus_rho()
            .skip(first)
            .filter(|(_, d)| d.is_finite())
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        Some((l, d, self.error_deg(d, closed_form)))
    }

    /// The error of the model-gradient angle formed from the final `Theta_L` alone, in
    /// radians: `(L + 1) u / sqrt(2 (1 - abs(rho_L)))` for its correlation `rho_L` (`u` as
    /// [`Self::angle_error_deg`] says: each layer adds about that much to it), infinite where
    /// `rho_L` rounds to 1 or -1. Where it is a small part of the angle, the angle keeps its
    /// digits whatever an earlier layer's correlation (rows proportional up to rounding, of
    /// different norms: the input layer's rounds to 1, the angle is tens of degrees;
    /// hundred-and-eighth hostile round, D1).
    pub fn final_angle_error_rad(&self, closed_form: bool) -> f64 {
        let ulps = if closed_form { 1.0 } else { QUADRATURE_ULPS };
        let k = self.ntk();
        let d = 1.0 - (k[2] / (k[0] * k[1]).sqrt()).abs();
        if d > 0.0 {
            (self.depth() as f64 + 1.0) * ulps * f64::EPSILON / (2.0 * d).sqrt()
        } else {
            f64::INFINITY
        }
    }

    /// `(L + 1) u / sqrt(2 d)` radians in degrees, `u` as [`Self::angle_error_deg`] says;
    /// infinite at `d <= 0`.
    fn error_deg(&self, d: f64, closed_form: bool) -> f64 {
        let ulps = if closed_form { 1.0 } else { QUADRATURE_ULPS };
        if d > 0.0 {
            ((self.depth() as f64 + 1.0) * ulps * f64::EPSILON / (2.0 * d).sqrt()).to_degrees()
        } else {
            f64::INFINITY
        }
    }

    /// Each layer's `1 - rho`, the smaller of `Sigma_l`'s and `Theta_l`'s.
    fn one_minus_rho(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        let distance = |k: &[f64; 3]| 1.0 - k[2] / (k[0] * k[1]).sqrt();
        self.sigma
            .iter()
            .zip(&self.theta)
            .enumerate()
            .map(move |(l, (s, t))| (l, distance(s).min(distance(t))))
    }
}

/// The error of a dual kernel's correlation by quadrature near 1, in ulps of 1
/// ([`PairRecursion::angle_error_deg`]): tanh's angles near 180 degrees were off by up to
/// 1.2 times the one-ulp estimate against mpmath (hundred-and-third hostile round, D1: depth
/// 5 at 179.999991, 5.57e-7 degrees for an estimate of 4.8e-7), so four.
pub const QUADRATURE_ULPS: f64 = 4.0;

/// The smallest `1 - rho` a layer of the recursion may reach, per layer of depth, for an
/// angle formed from its correlation to keep six significant digits
/// ([`PairRecursion::unresolved_layer`]): the correlations are known to about an ulp of 1
/// (2.2e-16, more through a quadrature), so `1e-9` leaves about `2e-7` relative error per
/// layer.
pub const MIN_ONE_MINUS_RHO_PER_LAYER: f64 = 1e-9;

/// Runs the recursion for two inputs with `||x||^2 = q1`, `||y||^2 = q2`, `x.y = c12`
/// through `depth` hidden layers, in the paper convention.
pub fn pair_recursion(
    dual: &DualEvaluator,
    q1: f64,
    q2: f64,
    c12: f64,
    depth: usize,
) -> PairRecursion {
    pair_recursion_scaled(dual, &Scaling::paper(dual.activation(), depth), q1, q2, c12)
}

/// The recursion of a network with constants `scaling` ([`super::scaling`]): `Sigma_0 =
/// s0 [q1, q2, c12]`, then `Sigma_l = k_l E[s s]`, `Sigma_dot_l = k_l E[s' s']`,
/// `Theta_l = Theta_{l-1} Sigma_dot_l + Sigma_l` for `l = 1..=scaling.depth()`. `q1, q2, c12`
/// are the inputs' `||x||^2, ||y||^2, x.y` as fed to the network.
pub fn pair_recursion_scaled(
    dual: &DualEvaluator,
    scaling: &Scaling,
    q1: f64,
    q2: f64,
    c12: f64,
) -> PairRecursion {
    pair_recursion_observed(dual, scaling, [q1, q2, c12], &mut |_| {})
}

/// [`pair_recursion_scaled`] of `[q1, q2, c12]`, calling `on_layer(l)` as each layer `l =
/// 1..=depth` is done: for a caller that shows its progress through a deep recursion whose
/// layers are quadratures (hundred-and-ninth hostile round, D4: GELU at depth 10,000, one
/// value, ran 64 s with no line after its estimate).
pub fn pair_recursion_observed(
    dual: &DualEvaluator,
    scaling: &Scaling,
    [q1, q2, c12]: [f64; 3],
    on_layer: &mut dyn FnMut(usize),
) -> PairRecursion {
    let depth = scaling.depth();
    let s0 = scaling.input;
    let first = [s0 * q1, s0 * q2, s0 * c12];
    let mut sigma = vec![first];
    let mut sigma_dot = Vec::with_capacity(depth);
    let mut theta = vec![first];
    for l in 1..=depth {
        let k = scaling.layers[l - 1];
        let [a, b, ab] = sigma[l - 1];
        let (kx, ky, kxy) = (
            dual.eval_scaled(a, a, a, k),
            dual.eval_scaled(b, b, b, k),
            dual.eval_scaled(a, b, ab, k),
        );
        let prev = theta[l - 1];
        sigma.push([kx.sigma, ky.sigma, kxy.sigma]);
        sigma_dot.push([kx.sigma_dot, ky.sigma_dot, kxy.sigma_dot]);
        theta.push([
            prev[0] * kx.sigma_dot + kx.sigma,
            prev[1] * ky.sigma_dot + ky.sigma,
            prev[2] * kxy.sigma_dot + kxy.sigma,
        ]);
        on_layer(l);
    }
    PairRecursion {
        sigma,
        sigma_dot,
        theta,
    }
}

/// The first layer at which the recursion of one input of square norm `q` (as fed to the
/// network) leaves f64's range, a `Sigma_l` or `Theta_l` not finite, if any: where an
/// infinite-width kernel overflows (tanh at depth 4326 from unit inputs), said by the
/// theory's refusals and notes rather than as a network's overflow (hundred-and-tenth
/// hostile round, D3 and D4).
pub fn layer_leaving_range(dual: &DualEvaluator, scaling: &Scaling, q: f64) -> Option<usize> {
    let r = pair_recursion_scaled(dual, scaling, q, q, q);
    r.sigma
        .iter()
        .zip(&r.theta)
        .position(|(s, t)| s.iter().chain(t).any(|v| !v.is_finite()))
}

/// [`layer_leaving_range`] of the row-major inputs `x` (`d` columns): that of the largest
/// square norm among the rows, the first to leave the range (every entry is bounded by the
/// diagonal's, and each diagonal grows with its input's norm). The one rule of the theory's
/// overflow refusals and notes: a probe's run, a sweep's theory column, ntk-train's
/// prediction.
pub fn layer_leaving_range_of(
    dual: &DualEvaluator,
    scaling: &Scaling,
    x: &[f64],
    d: usize,
) -> Option<usize> {
    row_leaving_range_of(dual, scaling, x, d).map(|(_, layer)| layer)
}

/// [`layer_leaving_range_of`] with the row it follows, `(row, layer)`: the row of the largest
/// square norm (for ReLU^2's recursion on unit variances, of the largest variance), whose
/// recursion leaves f64's range first.
pub fn row_leaving_range_of(
    dual: &DualEvaluator,
    scaling: &Scaling,
    x: &[f64],
    d: usize,
) -> Option<(usize, usize)> {
    // ReLU^2's kernels as its recursion forms them: the row of the largest variance, the
    // unit-variance recursion's `Sigma^_l`, `Theta^_l` times the row's scale, carried in
    // logarithms (`super::degree_two`). The row's own variance recursion rounds it (`s0 =
    // 1/3` of `|x|^2 = 3 + 4.4e-16` is 1 in f64), and said "at its last layer" where the
    // kernel leaves the range at layer 63 (hundred-and-fourteenth hostile round, D3).
    if super::degree_two::applies(dual, scaling)
        && let Some((at, (_, row))) = x
            .chunks(d.max(1))
            .map(|r| (super::degree_two::log_variance(r, scaling.input), r))
            .enumerate()
            .max_by(|a, b| a.1.0.total_cmp(&b.1.0))
        && let Some(f) = super::degree_two::Factors::of(row, row.len(), dual, scaling)
    {
        let unit = Scaling {
            input: 1.0,
            layers: vec![dual.c(); scaling.depth()],
        };
        let q = f.unit(0);
        let r = pair_recursion_scaled(dual, &unit, q, q, q);
        return r
            .sigma
            .iter()
            .zip(&r.theta)
            .enumerate()
            .position(|(l, (s, t))| {
                !f.scaled(s[0], l, 0, 0).is_finite() || !f.scaled(t[0], l, 0, 0).is_finite()
            })
            .map(|layer| (at, layer));
    }
    // The first row of the largest square norm (an infinite one included).
    let (at, largest) = x
        .chunks(d.max(1))
        .map(|r| r.iter().map(|v| v * v).sum::<f64>())
        .enumerate()
        .fold(
            (0, 0.0),
            |(i, m), (j, q)| if q > m { (j, q) } else { (i, m) },
        );
    layer_leaving_range(dual, scaling, largest).map(|layer| (at, layer))
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
/// `theta_in`, for any activation. ReLU: Thm 4.4's closed form
/// ([`super::relu::relu_grad_angle`]), the identity: `theta_in`
/// ([`super::linear::linear_grad_angle`]), leaky ReLU: the angle recursion of its slope
/// ([`super::relu_angles::one_minus_cos_phi`]; forty-ninth hostile round, N1: refused below
/// about 1e-3 degrees), all exact at every angle; other activations:
/// the NTK recursion ([`pair_recursion`]), whose angles lose digits where a correlation
/// nears 1 ([`PairRecursion::unresolved_layer`] says where). For ReLU the recursion equals
/// the closed form to rounding above small angles (tests), but at `theta_in = 1e-7`
/// degrees, depth 50, it was 97% off: the sweep table's theory column took it until
/// 2026-11-30.
///
/// At depth 0 every network's phi is `theta_in` (its kernel is the Gram matrix), returned as
/// it is rather than through a correlation.
pub fn grad_angle(act: &Activation, theta_in: f64, depth: usize) -> f64 {
    match act {
        _ if depth == 0 => theta_in,
        Activation::Relu(_) => super::relu::relu_grad_angle(theta_in, depth),
        Activation::Linear(_) => super::linear::linear_grad_angle(theta_in, depth),
        other => match super::relu_angles::slope(other) {
            Some(s) => {
                super::relu_angles::phi(super::relu_angles::Angle::of(theta_in), depth, s).radians()
            }
            None => pair_recursion(&DualEvaluator::new(other), 1.0, 1.0, theta_in.cos(), depth)
                .grad_angle(),
        },
    }
}

/// [`grad_angle`] with the input angle and phi in degrees: leaky ReLU's input angle taken
/// beyond 90 degrees as its supplement `180 - theta` (exact), and its phi near 180 from its
/// own supplement ([`super::relu_angles::phi`]), so that 180 degrees is exactly opposite
/// (fiftieth hostile round, D1: `theta.to_radians()` is pi's double, 1.2e-16 short of pi).
/// An odd activation's (tanh, erf) beyond 90 degrees from its supplement too,
/// `phi(theta) = 180 - phi(180 - theta)` ([`odd`]): near 180 its correlation nears -1, where
/// the recursion keeps as few digits of the distance from 180 as it keeps of an angle near 0
/// (hundred-and-first hostile round, D2: 179.999999 gave 180.0, where 179.9999987582 is
/// right).
pub fn grad_angle_deg(act: &Activation, theta_deg: f64, depth: usize) -> f64 {
    if depth > 0 && odd(act) && theta_deg > 90.0 {
        // 180 - theta is exact (Sterbenz), so is the subtraction's rounding at 180.
        return 180.0 - grad_angle_deg(act, 180.0 - theta_deg, depth);
    }
    match super::relu_angles::slope(act) {
        Some(s) if depth > 0 && !matches!(act, Activation::Relu(_)) => {
            let angle = super::relu_angles::Angle::of_degrees(theta_deg);
            super::relu_angles::phi(angle, depth, s).degrees()
        }
        _ => grad_angle(act, theta_deg.to_radians(), depth).to_degrees(),
    }
}

/// Whether `act` is odd, `s(-z) = -s(z)`, and not the identity (whose angles are exact):
/// tanh and erf. Its dual kernel is then odd in the correlation and its derivative's even,
/// so that every layer's `Theta` is odd in it: the gradient angle of opposite-leaning inputs
/// is the supplement of the angle of their mirror, `phi(pi - theta) = pi - phi(theta)`.
pub fn odd(act: &Activation) -> bool {
    matches!(
        act.kind(),
        ntk_model::ActivationKind::Tanh | ntk_model::ActivationKind::Erf
    )
}

/// Whether [`grad_angle`] of `act` at `depth` takes a route exact at every input angle
/// (depth 0, ReLU, the identity, leaky ReLU's angle recursion), rather than the recursion, whose angles lose digits
/// near parallel inputs ([`PairRecursion::unresolved_layer`]).
pub fn grad_angle_exact_at_every_angle(act: &Activation, depth: usize) -> bool {
    depth == 0
        || matches!(
            act,
            Activation::Relu(_) | Activation::Linear(_) | Activation::LeakyRelu(_)
        )
}

/// The infinite-width NTK `Theta_L` and the top-layer embedding Gram matrix `Sigma_L`
/// (`alpha_L(x_i).alpha_L(x_j)` at infinite width) of a data set.
#[derive(Clone, Debug, PartialEq)]
pub struct InfiniteWidth {
    pub ntk: Kernel,
    pub gram: Kernel,
}

/// `Theta_L` and `Sigma_L` of the row-major `n x d` inputs `x` in the paper convention
/// ([`infinite_width_kernels_scaled`] with [`Scaling::paper`]). The identity's result is
/// exactly `((L + 1) G, G)` with `G = X X^T` ([`super::linear::linear_ntk`]), the
/// recursion's value without the rounding of its `L` additions.
///
/// Scope: scalar output, no biases, the paper convention; a network with `k` outputs has
/// `k Theta_L` for the summed kernel and `Theta_L (x) I_k` for the full one. Other
/// conventions: [`infinite_width_kernels_scaled`] with [`Scaling::of`].
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
    let scaling = Scaling::paper(dual.activation(), depth);
    infinite_width_kernels_scaled(x, n, d, dual, &scaling, &|_| {})
}

/// Relative spread of the diagonal `Sigma_{l-1}(x_i, x_i)` below which a layer is computed
/// as a function of the correlation alone (see [`infinite_width_kernels_scaled`]).
pub const EQUAL_NORMS: f64 = 1e-13;

/// `Theta_L` and `Sigma_L` (`S_L` of [`super::scaling`]) of the row-major `n x d` inputs `x`
/// as fed to a network with constants `scaling`, layer by layer over all pairs, on all cores
/// for activations without a closed form; `progress(k)` says `k` more of the
/// [`recursion_evaluations`] are done (from any thread; each layer's by its end, and
/// every [`PROGRESS_EVERY`] pairs within a layer evaluated pair by pair by quadrature, which
/// takes minutes at a few hundred inputs: sixty-fourth hostile round, N1).
///
/// Cost: one dual-kernel evaluation per pair and layer (closed forms ~100 ns, quadrature
/// 1-5 ms), except where the layer's input variances `Sigma_{l-1}(x_i, x_i)` are all equal
/// to a relative [`EQUAL_NORMS`] (unit-norm inputs, for instance: they then stay equal in
/// every layer). There the layer is a function of the angle `t = arccos rho` alone, for both
/// `Sigma` and `Sigma_dot`, which is interpolated at Chebyshev points of `[0, pi]`, doubling
/// them (33, 65, ..., 1025) until the interpolant of the previous level predicts every new
/// value to `1e-13` of the kernels' scale (`Sigma(x,x)`, `Sigma_dot(x,x)`, the
/// Cauchy-Schwarz bounds); the finer level is then used, whose error is far below that
/// (geometric convergence). If the check fails within as many evaluations as the layer has
/// pairs, the layer is evaluated pair by pair. The equal variances are taken as the first
/// one's (a relative change of at most `1e-13`, the quadrature's own accuracy).
///
/// # Panics
/// If `x.len() != n * d`.
pub fn infinite_width_kernels_scaled(
    x: &[f64],
    n: usize,
    d: usize,
    dual: &DualEvaluator,
    scaling: &Scaling,
    progress: &(dyn Fn(u64) + Sync),
) -> InfiniteWidth {
    recursion(x, n, d, dual, scaling, progress, None)
}

/// [`infinite_width_kernels_scaled`] and, from the same pass, every layer's embedding Gram
/// matrix `S_0, ..., S_L` (`S_l = beta_{l+1}^2 A_l`, `A_l(x, y) = lim a_l(x).a_l(y)`; `S_0`
/// the scaled input Gram matrix): the infinite-width counterpart of the finite network's
/// layer Gram matrices, whose angles are the embedding angles `theta_l` (a layer's constant
/// factor changes no angle).
///
/// # Panics
/// If `x.len() != n * d`.
pub fn infinite_width_layer_grams_scaled(
    x: &[f64],
    n: usize,
    d: usize,
    dual: &DualEvaluator,
    scaling: &Scaling,
    progress: &(dyn Fn(u64) + Sync),
) -> (InfiniteWidth, Vec<Kernel>) {
    let mut layers = Vec::with_capacity(scaling.depth() + 1);
    let kernels = recursion(x, n, d, dual, scaling, progress, Some(&mut layers));
    (kernels, layers)
}

/// The dual-kernel evaluations of the recursion over `n` inputs to depth `depth` (each
/// layer's diagonal and upper triangle): the whole of what
/// [`infinite_width_kernels_scaled`]'s `progress` counts.
pub fn recursion_evaluations(n: usize, depth: usize) -> u64 {
    (depth * (n + n * n.saturating_sub(1) / 2)) as u64
}

/// How many pairs evaluated by quadrature one `progress` call of the recursion reports
/// ([`infinite_width_kernels_scaled`]): about a second's work on one core.
pub const PROGRESS_EVERY: u64 = 256;

/// The symmetric n x n kernel of a diagonal and the upper triangle's `pairs` (row-major).
fn symmetric(n: usize, diag: &[f64], pairs: &[(usize, usize)], off: &[f64]) -> Kernel {
    let mut k = Kernel::zeros(n);
    for (i, &v) in diag.iter().enumerate() {
        k.data[i * n + i] = v;
    }
    for (&(i, j), &v) in pairs.iter().zip(off) {
        k.data[i * n + j] = v;
        k.data[j * n + i] = v;
    }
    k
}

/// The recursion of [`infinite_width_kernels_scaled`]; `layers`, when given, receives
/// `S_0, ..., S_L`.
fn recursion(
    x: &[f64],
    n: usize,
    d: usize,
    dual: &DualEvaluator,
    scaling: &Scaling,
    progress: &(dyn Fn(u64) + Sync),
    mut layers: Option<&mut Vec<Kernel>>,
) -> InfiniteWidth {
    assert_eq!(x.len(), n * d, "x must be n x d row-major");
    let depth = scaling.depth();
    let g = Kernel::gram(x, n, d);
    if matches!(dual.activation(), Activation::Linear(_))
        && dual.is_closed_form()
        && scaling.is_paper(dual.activation())
    {
        // The identity in the paper convention (c = 1): every S_l is the Gram matrix.
        if let Some(layers) = layers {
            layers.extend(std::iter::repeat_n(g.clone(), depth + 1));
        }
        progress(recursion_evaluations(n, depth));
        return InfiniteWidth {
            ntk: super::linear::linear_ntk(x, n, d, depth),
            gram: g,
        };
    }
    let s0 = scaling.input;
    // Diagonal and upper-triangle pairs (i < j, row-major) of Sigma_l and Theta_l.
    let mut q: Vec<f64> = (0..n).map(|i| s0 * g.get(i, i)).collect();
    let pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| ((i + 1)..n).map(move |j| (i, j)))
        .collect();
    let mut sig: Vec<f64> = pairs.iter().map(|&(i, j)| s0 * g.get(i, j)).collect();
    if let Some(layers) = layers.as_deref_mut() {
        layers.push(symmetric(n, &q, &pairs, &sig));
    }
    // ReLU^2: the recursion on unit variances at the inputs' correlations, each layer's
    // kernels scaled back by the inputs' own norms (`super::degree_two`).
    let factors = super::degree_two::applies(dual, scaling)
        .then(|| super::degree_two::Factors::of(x, d, dual, scaling))
        .flatten();
    if let Some(f) = &factors {
        for (p, &(i, j)) in pairs.iter().enumerate() {
            sig[p] = correlation(q[i], q[j], sig[p]);
        }
        for (i, v) in q.iter_mut().enumerate() {
            *v = f.unit(i);
        }
    }
    let scaled = |l: usize, q: &[f64], sig: &[f64]| -> (Vec<f64>, Vec<f64>) {
        let f = factors.as_ref().expect("only for factored kernels");
        (
            q.iter()
                .enumerate()
                .map(|(i, &v)| f.scaled(v, l, i, i))
                .collect(),
            pairs
                .iter()
                .zip(sig)
                .map(|(&(i, j), &v)| f.scaled(v, l, i, j))
                .collect(),
        )
    };
    let mut theta_diag = q.clone();
    let mut theta = sig.clone();
    // Closed forms cost ~100 ns a pair and layer: threads pay off from a few million pairs.
    // Each entry is computed alone, so the kernel does not depend on the thread count.
    let threads = if dual.is_closed_form() && n * n < 4_000_000 {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |p| p.get())
    };
    for l in 1..=depth {
        let k = match factors {
            Some(_) => dual.c(),
            None => scaling.layers[l - 1],
        };
        let equal = !dual.is_closed_form() && n >= 2 && {
            let q0 = q[0];
            q.iter().all(|&v| (v - q0).abs() <= EQUAL_NORMS * q0.abs())
        };
        let interp = if equal {
            AngleInterpolant::build(dual, q[0], k, pairs.len(), threads)
        } else {
            None
        };
        // The diagonal.
        let diag: Vec<DualKernel> = if equal {
            vec![dual.eval_scaled(q[0], q[0], q[0], k); n]
        } else {
            super::par_map(&q, threads, |&v| dual.eval_scaled(v, v, v, k))
        };
        // The pairs; quadrature's progress said as it goes.
        let idx: Vec<usize> = (0..pairs.len()).collect();
        let said = AtomicU64::new(0);
        let off: Vec<DualKernel> = match &interp {
            Some(f) => super::par_map(&idx, threads, |&p| {
                let (i, j) = pairs[p];
                f.eval(correlation(q[i], q[j], sig[p]))
            }),
            None if !dual.is_closed_form() => super::par_map(&idx, threads, |&p| {
                let (i, j) = pairs[p];
                let v = dual.eval_scaled(q[i], q[j], sig[p], k);
                if said.fetch_add(1, Ordering::Relaxed) % PROGRESS_EVERY == PROGRESS_EVERY - 1 {
                    progress(PROGRESS_EVERY);
                }
                v
            }),
            None => super::par_map(&idx, threads, |&p| {
                let (i, j) = pairs[p];
                dual.eval_scaled(q[i], q[j], sig[p], k)
            }),
        };
        for (i, kd) in diag.iter().enumerate() {
            theta_diag[i] = theta_diag[i] * kd.sigma_dot + kd.sigma;
            q[i] = kd.sigma;
        }
        for (p, kd) in off.iter().enumerate() {
            theta[p] = theta[p] * kd.sigma_dot + kd.sigma;
            sig[p] = kd.sigma;
        }
        if let Some(layers) = layers.as_deref_mut() {
            layers.push(match factors {
                Some(_) => {
                    let (diag, off) = scaled(l, &q, &sig);
                    symmetric(n, &diag, &pairs, &off)
                }
                None => symmetric(n, &q, &pairs, &sig),
            });
        }
        let told = said.into_inner() / PROGRESS_EVERY * PROGRESS_EVERY;
        progress((n + pairs.len()) as u64 - told);
    }
    if factors.is_some() {
        (theta_diag, theta) = scaled(depth, &theta_diag, &theta);
        (q, sig) = scaled(depth, &q, &sig);
    }
    InfiniteWidth {
        ntk: symmetric(n, &theta_diag, &pairs, &theta),
        gram: symmetric(n, &q, &pairs, &sig),
    }
}

/// One layer's `(Sigma, Sigma_dot)` at equal variances `q` as a function of
/// `t = arccos rho`, interpolated at the Chebyshev points of the second kind on `[0, pi]`
/// (barycentric form; see [`infinite_width_kernels_scaled`] for the accuracy check).
struct AngleInterpolant {
    /// `t_k = pi (1 - cos(k pi / N)) / 2`, `k = 0..=N`.
    nodes: Vec<f64>,
    values: Vec<DualKernel>,
}

/// The accuracy the interpolant must show (relative to the kernels' scales).
const INTERPOLATION_TOL: f64 = 1e-13;

impl AngleInterpolant {
    fn nodes(n: usize) -> Vec<f64> {
        (0..=n)
            .map(|j| {
                0.5 * std::f64::consts::PI
                    * (1.0 - (j as f64 * std::f64::consts::PI / n as f64).cos())
            })
            .collect()
    }

    /// The interpolant, or `None` when it is not accurate within `budget` evaluations.
    fn build(dual: &DualEvaluator, q: f64, k: f64, budget: usize, threads: usize) -> Option<Self> {
        let eval = |t: &f64| dual.eval_scaled(q, q, q * t.cos(), k);
        let mut n = 32;
        if n + 1 > budget {
            return None;
        }
        let mut nodes = Self::nodes(n);
        let mut values = super::par_map(&nodes, threads, eval);
        while 2 * n < budget && n <= 512 {
            let coarse = Self {
                nodes: nodes.clone(),
                values: values.clone(),
            };
            let fine = Self::nodes(2 * n);
            let mids: Vec<f64> = fine.iter().skip(1).step_by(2).copied().collect();
            let new = super::par_map(&mids, threads, eval);
            // The scales: Sigma(x,x) and Sigma_dot(x,x) at t = 0 bound |Sigma|, |Sigma_dot|.
            let (ss, sd) = (values[0].sigma.abs(), values[0].sigma_dot.abs());
            let worst = mids.iter().zip(&new).fold(0.0f64, |w, (&t, v)| {
                let p = coarse.at(t);
                w.max((p.sigma - v.sigma).abs() / ss.max(f64::MIN_POSITIVE))
                    .max((p.sigma_dot - v.sigma_dot).abs() / sd.max(f64::MIN_POSITIVE))
            });
            let mut merged = Vec::with_capacity(2 * n + 1);
            for j in 0..=2 * n {
                merged.push(if j % 2 == 0 {
                    values[j / 2]
                } else {
                    new[j / 2]
                });
            }
            nodes = fine;
            values = merged;
            n *= 2;
            if worst <= INTERPOLATION_TOL {
                return Some(Self { nodes, values });
            }
        }
        None
    }

    /// The interpolated `(Sigma, Sigma_dot)` at angle `t` (barycentric formula of the
    /// second kind; exact at the nodes).
    fn at(&self, t: f64) -> DualKernel {
        let last = self.nodes.len() - 1;
        let (mut num_s, mut num_d, mut den) = (0.0, 0.0, 0.0);
        for (j, (&tj, v)) in self.nodes.iter().zip(&self.values).enumerate() {
            let diff = t - tj;
            if diff == 0.0 {
                return *v;
            }
            let mut w = if j % 2 == 0 { 1.0 } else { -1.0 };
            if j == 0 || j == last {
                w *= 0.5;
            }
            // The points are Chebyshev points in x = cos-variable; t is an affine image of
            // x (x = 1 - 2 t / pi), so 1 / (x - x_j) = -(pi / 2) / (t - t_j): the common
            // factor cancels in the ratio.
            let c = w / diff;
            num_s += c * v.sigma;
            num_d += c * v.sigma_dot;
            den += c;
        }
        DualKernel {
            sigma: num_s / den,
            sigma_dot: num_d / den,
        }
    }

    /// The layer at correlation `rho`.
    fn eval(&self, rho: f64) -> DualKernel {
        self.at(rho.clamp(-1.0, 1.0).acos())
    }
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
    /// The hundred-and-eleventh hostile round, D1: ReLU^2's norm map `q -> q^2` has an
    /// unstable fixed point at 1, and its quadrature's rounding, doubled each layer, put a unit
    /// input's `Theta_L(x, x)` at 2.16e-128 for 1.254e8 at depth 60. Its closed form keeps the
    /// variance at exactly 1, so `Theta_L = 1 + (4/3) Theta_{L-1}` (mpmath, 40 digits) at
    /// every depth.
    #[test]
    #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
    fn relu_squared_keeps_a_unit_input_at_its_fixed_point() {
        let act = Activation::new(ntk_model::ActivationKind::ReluSquared, None);
        let dual = DualEvaluator::new(&act);
        assert!(dual.is_closed_form());
        for (depth, want) in [
            (20, 1258.347420804868973),
            (60, 125425019.5629756318),
            (100, 12471929640828.76791),
        ] {
            let r = pair_recursion(&dual, 1.0, 1.0, 0.5, depth);
            assert!(r.sigma.iter().all(|s| s[0] == 1.0), "{depth}");
            let got = r.ntk()[0];
            assert!((got - want).abs() <= 1e-13 * want, "{depth}: {got} {want}");
        }
    }

    #[test]
    fn recursion_reproduces_thm_4_4() {
        let quad = DualEvaluator::with_quadrature(
            &Activation::Relu(ntk_model::activation::Relu),
            Quadrature::SPLIT,
        );
        for theta_deg in [1.0, 5.0, 30.0, 60.0, 90.0, 135.0] {
            let t = f64::to_radians(theta_deg);
            for depth in [0, 1, 2, 5, 10, 30] {
                let want = relu_grad_angle(t, depth);
                let relu = DualEvaluator::new(&Activation::Relu(ntk_model::activation::Relu));
                let got = pair_recursion(&relu, 1.0, 1.0, t.cos(), depth).grad_angle();
                assert!(
                    (got - want).abs() < 1e-12,
                    "{theta_deg} {depth}: {got} {want}"
                );
                let by_quad = pair_recursion(&quad, 1.0, 1.0, t.cos(), depth).grad_angle();
                assert!((by_quad - want).abs() < 1e-11, "{theta_deg} {depth}");
                let emb =
                    embedding_angles(&Activation::Relu(ntk_model::activation::Relu), t, depth);
                for (a, b) in emb.iter().zip(relu_embedding_angles(t, depth)) {
                    assert!((a - b).abs() < 1e-12);
                }
            }
        }
    }

    /// `Theta_L(x,x) = (L + 1) ||x||^2` for ReLU: the normalization of Thm 4.4.
    #[test]
    fn relu_diagonal_is_l_plus_one_times_the_norm() {
        let dual = DualEvaluator::new(&Activation::Relu(ntk_model::activation::Relu));
        for depth in 0..6 {
            let p = pair_recursion(&dual, 2.5, 0.5, 0.3, depth);
            let [a, b, _] = p.ntk();
            assert!((a - (depth as f64 + 1.0) * 2.5).abs() < 1e-13 * a);
            assert!((b - (depth as f64 + 1.0) * 0.5).abs() < 1e-13 * b);
        }
    }

    /// An odd activation maps opposite inputs to opposite gradients, so phi is exactly 180
    /// degrees at theta_in = 180 at every depth (round 98 N8: erf at depth 3 gave
    /// 179.99999914622634, the norm product `sqrt(k) sqrt(k)` an ulp off `k`). The angle of
    /// a pair of equal norms is formed with `k` itself.
    #[test]
    fn odd_activations_keep_opposite_inputs_opposite() {
        for kind in [ActivationKind::Erf, ActivationKind::Tanh] {
            let act = Activation::new(kind, None);
            for depth in 1..=8 {
                let phi = grad_angle_deg(&act, 180.0, depth);
                assert_eq!(phi, 180.0, "{kind} depth {depth}");
            }
        }
        // Beyond 90 degrees from the supplement: the recursion itself agrees away from 180
        // (the identity phi(pi - t) = pi - phi(t) of an odd activation), and near 180 the
        // supplement keeps the digits of the distance from 180.
        for kind in [ActivationKind::Erf, ActivationKind::Tanh] {
            let act = Activation::new(kind, None);
            for depth in [1, 2, 5] {
                for t in [100.0_f64, 135.0, 150.0, 170.0] {
                    let direct = grad_angle(&act, t.to_radians(), depth).to_degrees();
                    let mirrored = grad_angle_deg(&act, t, depth);
                    assert!((direct - mirrored).abs() < 1e-10, "{kind} {depth} {t}");
                    let back = 180.0 - grad_angle_deg(&act, 180.0 - t, depth);
                    assert_eq!(mirrored, back, "{kind} {depth} {t}");
                }
            }
        }
        // A kernel whose norm product rounds off: sqrt(a) sqrt(a) != a, the angle still pi.
        let a = 3.0_f64;
        assert_ne!(a.sqrt() * a.sqrt(), a);
        assert_eq!(angle(&[a, a, -a]), std::f64::consts::PI);
    }

    /// Unit-norm inputs (equal variances in every layer): the interpolated layers equal the
    /// pair-by-pair quadrature to 1e-11 of the diagonal (each layer is checked to 1e-13 of
    /// its scale; three layers' `Sigma_dot` products amplify it, measured up to 2e-12), for
    /// the non-closed activations and every convention.
    #[test]
    fn interpolated_layers_equal_the_pairwise_recursion() {
        let (n, d) = (40, 4);
        let mut x: Vec<f64> = (0..n * d)
            .map(|k| ((k * 37 % 101) as f64 / 50.0 - 1.0) + 0.01 * k as f64)
            .collect();
        // Unit rows, one antipodal and one nearly parallel pair.
        ntk_data::inputs::unit_rows(&mut x, d).unwrap();
        for k in 0..d {
            x[d + k] = -x[k];
            x[2 * d + k] = x[k] + if k == 0 { 1e-4 } else { 0.0 };
        }
        ntk_data::inputs::unit_rows(&mut x[2 * d..3 * d], d).unwrap();
        let g = Kernel::gram(&x, n, d);
        for kind in [
            ActivationKind::Gelu,
            ActivationKind::Tanh,
            ActivationKind::NormRelu,
            ActivationKind::Selu,
        ] {
            let act = Activation::new(kind, None);
            let dual = DualEvaluator::new(&act);
            for convention in [
                ntk_model::NtkConvention::Paper,
                ntk_model::NtkConvention::Official,
                ntk_model::NtkConvention::UnitVariance,
            ] {
                let depth = 3;
                let scaling = Scaling::convention(convention, &act, d, 64, depth);
                let k = infinite_width_kernels_scaled(&x, n, d, &dual, &scaling, &|_| {});
                let mut worst = 0.0f64;
                for (i, j) in [(0, 1), (0, 2), (3, 17), (5, 39), (10, 11), (2, 30)] {
                    let p = pair_recursion_scaled(
                        &dual,
                        &scaling,
                        g.get(i, i),
                        g.get(j, j),
                        g.get(i, j),
                    );
                    let scale = k.ntk.get(i, i);
                    worst = worst.max((k.ntk.get(i, j) - p.ntk()[2]).abs() / scale);
                    worst = worst.max((k.ntk.get(i, i) - p.ntk()[0]).abs() / scale);
                    let gs = k.gram.get(i, i);
                    worst = worst.max((k.gram.get(i, j) - p.sigma[depth][2]).abs() / gs);
                }
                assert!(worst < 1e-11, "{kind} {convention:?}: {worst:e}");
            }
        }
    }

    /// The interpolant in the angle converges (the check passes) for every activation at
    /// unit variance and for the smooth ones at large variance too (a kink at `b / sqrt(q)`
    /// close to 0 makes a kinked one nearly singular at small angles: the layer then falls
    /// back to pair-by-pair quadrature), and reproduces the quadrature at angles between its
    /// nodes to 1e-13 of the scale.
    #[test]
    fn angle_interpolant_converges() {
        for kind in [
            ActivationKind::Gelu,
            ActivationKind::Tanh,
            ActivationKind::NormRelu,
            ActivationKind::Selu,
            ActivationKind::ReluSquared,
        ] {
            let act = Activation::new(kind, None);
            let dual = DualEvaluator::new(&act);
            let smooth = act.kinks().is_empty();
            for q in [1.0, 1e3] {
                let Some(f) = AngleInterpolant::build(&dual, q, act.c(), usize::MAX, 2) else {
                    assert!(!smooth && q > 1.0, "{kind} q = {q}: no convergence");
                    continue;
                };
                let diag = dual.eval(q, q, q);
                for t in [1e-3, 0.1234, 1.0, 2.0, 3.1] {
                    let want = dual.eval(q, q, q * f64::cos(t));
                    let got = f.at(t);
                    assert!(
                        (got.sigma - want.sigma).abs() < 1e-13 * diag.sigma
                            && (got.sigma_dot - want.sigma_dot).abs() < 1e-13 * diag.sigma_dot,
                        "{kind} q = {q} t = {t} ({} nodes)",
                        f.nodes.len()
                    );
                }
                eprintln!("{kind} q = {q}: {} nodes", f.nodes.len());
            }
        }
    }

    /// For ReLU and the identity every convention is the paper kernel times one constant:
    /// `(c / d)` (`official`) and `1 / d` (`unit_variance`), to rounding.
    #[test]
    fn homogeneous_conventions_are_global_factors() {
        let (n, d) = (5, 3);
        let x: Vec<f64> = (0..n * d)
            .map(|k| ((k * 7 % 11) as f64 - 5.0) / 4.0)
            .collect();
        for act in [
            Activation::Relu(ntk_model::activation::Relu),
            Activation::Linear(ntk_model::activation::Linear),
        ] {
            for depth in 0..5 {
                let dual = DualEvaluator::new(&act);
                let paper = infinite_width_kernels(&x, n, d, &dual, depth).ntk;
                for (convention, factor) in [
                    (ntk_model::NtkConvention::UnitVariance, 1.0 / d as f64),
                    (
                        ntk_model::NtkConvention::Official,
                        if depth == 0 { 1.0 } else { act.c() } / d as f64,
                    ),
                ] {
                    let scaling = Scaling::convention(convention, &act, d, 300, depth);
                    let k = infinite_width_kernels_scaled(&x, n, d, &dual, &scaling, &|_| {}).ntk;
                    for (a, b) in k.data.iter().zip(&paper.data) {
                        assert!(
                            (a - factor * b).abs() < 1e-13 * paper.get(0, 0).abs().max(1.0),
                            "{act} {convention:?} L{depth}"
                        );
                    }
                }
            }
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
            Activation::Relu(ntk_model::activation::Relu),
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

    /// Every layer's Gram matrix `S_l` of [`infinite_width_layer_grams_scaled`] equals the
    /// pair recursion's `Sigma_l` (the paper convention), its last is `gram`, and its NTK is
    /// [`infinite_width_kernels_scaled`]'s; the identity's layers are the Gram matrix.
    #[test]
    fn layer_grams_equal_the_pair_recursion() {
        let (n, d, depth) = (5, 3, 3);
        let x: Vec<f64> = (0..n * d)
            .map(|k| ((k * 7 % 11) as f64 - 5.0) / 4.0)
            .collect();
        let g = Kernel::gram(&x, n, d);
        for act in [
            Activation::Relu(ntk_model::activation::Relu),
            Activation::new(ActivationKind::Tanh, None),
            Activation::new(ActivationKind::Linear, None),
        ] {
            let dual = DualEvaluator::new(&act);
            let scaling = Scaling::paper(&act, depth);
            let (k, layers) = infinite_width_layer_grams_scaled(&x, n, d, &dual, &scaling, &|_| {});
            assert_eq!(
                k,
                infinite_width_kernels_scaled(&x, n, d, &dual, &scaling, &|_| {})
            );
            assert_eq!(layers.len(), depth + 1, "{act}");
            assert_eq!(layers[depth], k.gram, "{act}");
            for i in 0..n {
                for j in 0..n {
                    let p = pair_recursion(&dual, g.get(i, i), g.get(j, j), g.get(i, j), depth);
                    for (l, layer) in layers.iter().enumerate() {
                        let s = p.sigma[l][2];
                        let tol = 1e-12 * layer.get(i, i).abs().max(1.0);
                        assert!((layer.get(i, j) - s).abs() < tol, "{act} l{l} {i} {j}");
                    }
                }
            }
        }
    }

    /// The recursion's progress (sixty-fourth hostile round, N1) adds up to
    /// [`recursion_evaluations`] on every route: closed form (ReLU), the identity's shortcut,
    /// quadrature pair by pair (tanh at unequal norms, with calls within each layer) and
    /// the angle interpolant (tanh at equal norms); the kernel is the same with or without
    /// a listener.
    #[test]
    fn progress_adds_up_to_the_evaluations() {
        use std::sync::atomic::AtomicU64;
        let (n, d, depth) = (40, 3, 2);
        let x: Vec<f64> = (0..n * d)
            .map(|i| ((i * 37 % 17) as f64 - 8.0) / 5.0)
            .collect();
        let unit: Vec<f64> = x
            .chunks(d)
            .flat_map(|r| {
                let norm = r.iter().map(|v| v * v).sum::<f64>().sqrt();
                r.iter().map(move |v| v / norm)
            })
            .collect();
        for (kind, inputs, calls_within) in [
            (ActivationKind::Relu, &x, false),
            (ActivationKind::Linear, &x, false),
            (ActivationKind::Tanh, &x, true),
            (ActivationKind::Tanh, &unit, false),
        ] {
            let act = Activation::new(kind, None);
            let dual = DualEvaluator::new(&act);
            let scaling = Scaling::paper(&act, depth);
            let (done, calls) = (AtomicU64::new(0), AtomicU64::new(0));
            let k = infinite_width_kernels_scaled(inputs, n, d, &dual, &scaling, &|k| {
                done.fetch_add(k, Ordering::Relaxed);
                calls.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(
                done.into_inner(),
                recursion_evaluations(n, depth),
                "{kind:?}"
            );
            let calls = calls.into_inner();
            // 780 pairs a layer: three calls within each of the two layers, one at its end.
            let want = if calls_within {
                2 * (780 / PROGRESS_EVERY + 1)
            } else if kind == ActivationKind::Linear {
                1
            } else {
                depth as u64
            };
            assert_eq!(calls, want, "{kind:?}");
            let quiet = infinite_width_kernels_scaled(inputs, n, d, &dual, &scaling, &|_| {});
            assert_eq!(k, quiet, "{kind:?}");
        }
    }
}
