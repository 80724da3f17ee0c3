//! The infinite-width NTK of a positively homogeneous network (ReLU, leaky ReLU) formed from
//! each pair's angle: the recursion takes every layer's angle from a cosine, which near 1
//! holds few of its digits (`arccos(1 - e) ~ sqrt(2 e)`), at nearly parallel inputs and at
//! depth (where every pair's embedding angle becomes small), and such a network's kernel
//! moves linearly with the angle (`1 - cos phi ~ L theta / (2 pi)`, Thm 4.5): its kappa lost
//! up to 3e-3 at rows 1e-5 degrees apart, and 0.7% between the same rows scaled by 1e-150
//! and 1e150 (forty-seventh hostile round, D2). An angle near pi is held by its supplement
//! ([`Angle`]): leaky ReLU near `alpha = -1` (`|z|`) maps nearly opposite rows as nearly
//! parallel ones (forty-ninth hostile round, D2: kappa 4.4e-3 off).

use std::f64::consts::PI;

use ntk_data::inputs::Inputs;
use ntk_model::Activation;
use ntk_numerics::kernel::Kernel;

use super::relu::{angle_from_one_minus_cos, next_angle, one_minus_cos, sin_minus_z_cos};
use super::row_angle::{input_angle, norm, pairs, pow2_scaled};

/// Pairs of rows less than this many radians from parallel or from opposite take their
/// angle from the rows ([`input_angle`]); between, the arccos of their unit rows' cosine,
/// which holds the angle to about an ulp over `sin theta` (1e-14 of it at the limit).
pub const NEAR_PARALLEL: f64 = 0.1;

/// The low part of pi: `PI + PI_LO` is pi to about 1e-32.
const PI_LO: f64 = 1.2246467991473532e-16;

/// The two constants of a positively homogeneous activation `s(z) = a z + b |z|` (`a = (1 +
/// alpha) / 2`, `b = (1 - alpha) / 2`; ReLU `alpha = 0`) in the paper convention (`c = 1 /
/// E[s(Z)^2] = 2 / (1 + alpha^2)`): unit inputs at angle `theta` give
/// `cos theta' = k sin theta + (1 - k theta) cos theta`, that is `(linear / 2) cos theta + k
/// (sin theta + (pi / 2 - theta) cos theta)`, and `Sigma_dot = 1 - k theta`, so that `1 -
/// cos theta' = (1 - cos theta) - k (sin theta - theta cos theta)` (from `E[u v] = cos theta`,
/// `E|u||v| = (2 / pi)(sin theta + (pi / 2 - theta) cos theta)`, `E[sign u sign v] = 1 - 2
/// theta / pi`; ReLU: Eq. 7-9).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slope {
    /// `k = 2 c b^2 / pi = (1 - alpha)^2 / ((1 + alpha^2) pi)`; ReLU's `1 / pi`.
    pub k: f64,
    /// `2 c a^2 = (1 + alpha)^2 / (1 + alpha^2) = 2 - k pi`, formed from `alpha` (exactly 0
    /// for `|z|`); ReLU's 1.
    pub linear: f64,
}

/// The [`Slope`] of a positively homogeneous activation (ReLU, leaky ReLU), or `None` for
/// another. Forty-eighth hostile round, D1: leaky ReLU's kernel kept the cosines' error.
pub fn slope(act: &Activation) -> Option<Slope> {
    let alpha = match act {
        Activation::Relu(_) => 0.0,
        Activation::LeakyRelu(l) => l.alpha,
        _ => return None,
    };
    let norm = 1.0 + alpha * alpha;
    Some(Slope {
        k: (1.0 - alpha) * (1.0 - alpha) / (norm * PI),
        linear: (1.0 + alpha) * (1.0 + alpha) / norm,
    })
}

/// `theta_0 = theta_in, ..., theta_L` of two inputs at angle `theta_in` through a positively
/// homogeneous activation ([`slope`]: [`Angle::next`], from `1 - cos theta'` where acute and
/// from `1 + cos theta'` where obtuse, so that angles near 0 and near pi keep their digits)
/// or the identity (every layer's angle is the inputs'), under any convention (a homogeneous
/// layer's angle is free of its scale); `None` for another activation.
/// Hundred-and-thirty-eighth hostile round, second review, D3: a theory run's embedding
/// angles were the arccos of its Gram matrices' cosines, 0 for inputs 3e-8 degrees apart;
/// hundred-and-thirty-ninth round, D1: the map formed every angle as acute, and leaky ReLU at
/// `alpha = -1` or `1` wrote 0 or 180 for rows 1e-8 from opposite.
pub fn homogeneous_embedding_angles(
    act: &Activation,
    theta_in: Angle,
    depth: usize,
) -> Option<Vec<Angle>> {
    if let Activation::Linear(_) = act {
        return Some(vec![theta_in; depth + 1]);
    }
    let s = slope(act)?;
    let mut t = vec![theta_in];
    for l in 0..depth {
        t.push(t[l].next(s));
    }
    Some(t)
}

/// An angle in `[0, pi]`, held where its digits are: by itself up to `pi / 2`, beyond by its
/// supplement `pi - theta` (an angle near pi formed as `pi - psi` keeps only the digits of
/// `psi` above an ulp of pi).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Angle {
    /// `theta <= pi / 2`.
    Acute(f64),
    /// `pi - theta`, for `theta > pi / 2`.
    Obtuse(f64),
}

impl Angle {
    /// The angle of radians `theta` in `[0, pi]`.
    pub fn of(theta: f64) -> Self {
        if theta <= 0.5 * PI {
            Angle::Acute(theta)
        } else {
            Angle::Obtuse((PI - theta) + PI_LO)
        }
    }

    /// The angle of `deg` degrees in `[0, 180]`, beyond 90 by its supplement `180 - deg`
    /// (exact): 180 degrees is `Obtuse(0)`, where `deg.to_radians()` is pi's nearest double,
    /// 1.2e-16 short of pi (fiftieth hostile round, D1: phi 1.3e-6 degrees there under `|z|`).
    pub fn of_degrees(deg: f64) -> Self {
        if deg <= 90.0 {
            Angle::Acute(deg.to_radians())
        } else {
            Angle::Obtuse((180.0 - deg).to_radians())
        }
    }

    /// The angle in degrees (beyond 90, `180 - psi` in degrees).
    pub fn degrees(self) -> f64 {
        match self {
            Angle::Acute(t) => t.to_degrees(),
            Angle::Obtuse(p) => 180.0 - p.to_degrees(),
        }
    }

    /// The angle in radians.
    pub fn radians(self) -> f64 {
        match self {
            Angle::Acute(t) => t,
            Angle::Obtuse(p) => (PI - p) + PI_LO,
        }
    }

    /// `1 - cos theta`, to a few ulps of itself.
    pub fn one_minus_cos(self) -> f64 {
        match self {
            Angle::Acute(t) => one_minus_cos(t),
            Angle::Obtuse(p) => 1.0 + p.cos(),
        }
    }

    /// `1 + cos theta`, to a few ulps of itself.
    pub fn one_plus_cos(self) -> f64 {
        match self {
            Angle::Acute(t) => 1.0 + t.cos(),
            Angle::Obtuse(p) => one_minus_cos(p),
        }
    }

    /// The angle after one layer of slope `s` ([`Slope`]). Acute: [`next_angle`]. Obtuse,
    /// `theta = pi - psi`: `1 - cos theta' = (1 - cos psi) - k (sin psi - psi cos psi) + linear
    /// cos psi` and `1 + cos theta' = (1 - cos psi) + k (sin psi + (pi - psi) cos psi)` (sum 2),
    /// each a sum of terms that do not cancel for `psi <= pi / 2`; the smaller gives the
    /// angle. `|z|` (`linear = 0`) maps `x, y` as `x, -y`; the identity (`k = 0`) keeps it.
    pub fn next(self, s: Slope) -> Self {
        match self {
            _ if s.k == 0.0 => self,
            Angle::Acute(t) => Angle::Acute(next_angle(t, s.k)),
            Angle::Obtuse(p) if s.linear == 0.0 => Angle::Acute(next_angle(p, s.k)),
            Angle::Obtuse(p) => {
                let minus = one_minus_cos(p) - s.k * sin_minus_z_cos(p) + s.linear * p.cos();
                let plus = one_minus_cos(p) + s.k * (p.sin() + (PI - p) * p.cos());
                if minus <= plus {
                    Angle::Acute(angle_from_one_minus_cos(minus))
                } else {
                    Angle::Obtuse(angle_from_one_minus_cos(plus))
                }
            }
        }
    }
}

/// `1 - cos phi_L` of a depth-`depth` network of slope `s` ([`Slope`]) at input angle
/// `theta_in` (ReLU: Thm 4.4), in O(L): `D_L / (L + 1)`, where `D_l = (l + 1) - Theta_l` of
/// unit inputs, from `Theta_l = Theta_{l-1} (1 - k theta_{l-1}) + cos theta_l`:
/// `D_l = (1 - cos theta_l) + D_{l-1} (1 - k theta_{l-1}) + l k theta_{l-1}`, terms that do
/// not cancel where `Theta_{l-1} >= 0` (`D_{l-1} <= l`), so it keeps its digits at small
/// angles, as [`super::relu_grad_angle`] (O(L^2)) does. Where `Theta_{l-1} < 0` the small one
/// is `E_{l-1} = l + Theta_{l-1}`, and both are formed from it: `E_l = (1 + cos theta_l) +
/// E_{l-1} (1 - k theta_{l-1}) + l k theta_{l-1}`, and at an obtuse `theta_{l-1} = pi - psi`
/// `D_l = (1 - cos theta_l) + E_{l-1} (1 - w) + l w`, `w = linear + k psi` (nearly opposite
/// rows under `|z|` keep their digits). Every coefficient of the carried value is within
/// [-1, 1], so rounding does not grow with depth.
pub fn one_minus_cos_phi(theta_in: Angle, depth: usize, s: Slope) -> f64 {
    deficit_and_excess(theta_in, depth, s).0
}

/// `phi_L` of a depth-`depth` network of slope `s` ([`Slope`]) at input angle `theta_in`, as
/// an [`Angle`]: from `1 - cos phi_L` ([`one_minus_cos_phi`]) or, beyond `pi / 2`, from
/// `1 + cos phi_L`, which holds the supplement's digits; the identity (`k = 0`) keeps every
/// angle, returned as given (its `1 - cos` underflows below about 1e-154 radians: fiftieth
/// hostile round, D1, phi 0 at 1e-160 degrees and 180 at 180 - 1e-11).
pub fn phi(theta_in: Angle, depth: usize, s: Slope) -> Angle {
    if s.k == 0.0 {
        return theta_in;
    }
    let (deficit, excess) = deficit_and_excess(theta_in, depth, s);
    if deficit <= excess {
        Angle::Acute(angle_from_one_minus_cos(deficit))
    } else {
        Angle::Obtuse(angle_from_one_minus_cos(excess))
    }
}

/// `(D_L, E_L) / (L + 1)`: `1 - cos phi_L` and `1 + cos phi_L` ([`one_minus_cos_phi`]).
fn deficit_and_excess(theta_in: Angle, depth: usize, s: Slope) -> (f64, f64) {
    let mut theta = theta_in;
    let mut deficit = theta.one_minus_cos();
    let mut excess = theta.one_plus_cos();
    for l in 1..=depth {
        let l = l as f64;
        let kt = s.k * theta.radians();
        let next = theta.next(s);
        if deficit <= l {
            deficit = next.one_minus_cos() + deficit * (1.0 - kt) + l * kt;
            excess = 2.0 * (l + 1.0) - deficit;
        } else {
            deficit = next.one_minus_cos()
                + match theta {
                    Angle::Obtuse(psi) => {
                        let w = s.linear + s.k * psi;
                        excess * (1.0 - w) + l * w
                    }
                    Angle::Acute(_) => (2.0 * l - excess) * (1.0 - kt) + l * kt,
                };
            excess = next.one_plus_cos() + excess * (1.0 - kt) + l * kt;
        }
        theta = next;
    }
    let top = depth as f64 + 1.0;
    (deficit / top, excess / top)
}

/// The [`Angle`] of the rows `x` and `y` whose unit rows' cosine is `c`: the rows' own
/// ([`input_angle`], of `x` and `-y` near opposite) within [`NEAR_PARALLEL`] of parallel or
/// opposite, else the arccos of `c`.
fn pair_angle(x: &[f64], y: &[f64], c: f64) -> Angle {
    let limit = NEAR_PARALLEL.cos();
    if c > limit {
        Angle::Acute(input_angle(x, y))
    } else if c < -limit {
        let opposite: Vec<f64> = y.iter().map(|v| -v).collect();
        Angle::Obtuse(input_angle(x, &opposite))
    } else if c >= 0.0 {
        Angle::Acute(c.acos())
    } else {
        Angle::Obtuse((-c).acos())
    }
}

/// The [`Angle`] of the rows `x` and `y` ([`pair_angle`] of their unit rows' cosine), held to
/// its digits near parallel and near opposite rows; NaN (acute) where a row is zeros or holds a
/// value that is not finite.
pub fn rows_angle(x: &[f64], y: &[f64]) -> Angle {
    let d = x.len();
    let both: Vec<f64> = x.iter().chain(y).copied().collect();
    let (units, norms) = unit_rows(&both, 2, d);
    if !norms.iter().all(|v| *v > 0.0 && v.is_finite()) {
        return Angle::Acute(f64::NAN);
    }
    let c: f64 = units[..d].iter().zip(&units[d..]).map(|(a, b)| a * b).sum();
    pair_angle(x, y, c.clamp(-1.0, 1.0))
}

/// The pair of the smallest key over pairs `(i, j)`, `i < j`: `(key, input angle, i, j)`, the
/// first in row-major order of the upper triangle among ties (the first pair's key is taken
/// even when NaN).
type PairMin = Option<(f64, Angle, usize, usize)>;

/// Writes `1 - cos phi_L` of every pair `i < j` of the row-major `n x d` rows `x` at
/// `out[i * n + j]` (the upper triangle of a row-major `n x n` matrix; the rest of `out` is
/// left as it is), from the pair's [`Angle`] ([`pair_angle`]; `units` their unit rows,
/// [`unit_rows`]) by the angle recursion ([`one_minus_cos_phi`] of slope `s`), which keeps
/// its digits where the embedding angles become small (every pair's, with depth: ReLU's
/// `theta_l ~ 3 pi / l`), and returns the pair of the smallest `key(1 - cos phi_L, angle)`
/// ([`PairMin`]). NaN for a pair with a row of zeros or of values that are not finite. On all
/// cores from a million pairs, rows dealt out in turn (each core a like share of the
/// triangle); nothing is kept per pair but its entry in `out` (a list of the pairs and their
/// angles took 40 bytes a pair, 500 MB at n = 5,000).
fn deficits_into_upper(
    x: &[f64],
    units: &[f64],
    (n, d): (usize, usize),
    depth: usize,
    s: Slope,
    out: &mut [f64],
    key: impl Fn(f64, Angle) -> f64 + Sync,
) -> PairMin {
    assert_eq!(out.len(), n * n, "deficits_into_upper: out is not n x n");
    if n < 2 {
        return None;
    }
    let unit = |i: usize| &units[i * d..(i + 1) * d];
    let row = |i: usize| &x[i * d..(i + 1) * d];
    let fill = |i: usize, out_row: &mut [f64]| -> PairMin {
        let mut min: PairMin = None;
        for (j, entry) in out_row.iter_mut().enumerate().skip(i + 1) {
            let c: f64 = unit(i).iter().zip(unit(j)).map(|(a, b)| a * b).sum();
            let theta = pair_angle(row(i), row(j), c.clamp(-1.0, 1.0));
            let finite = match theta {
                Angle::Acute(t) | Angle::Obtuse(t) => t.is_finite(),
            };
            let deficit = if finite && unit(i).iter().any(|v| *v != 0.0) {
                one_minus_cos_phi(theta, depth, s)
            } else {
                f64::NAN
            };
            *entry = deficit;
            let k = key(deficit, theta);
            if min.is_none_or(|m| k < m.0) {
                min = Some((k, theta, i, j));
            }
        }
        min
    };
    let threads = if n * (n - 1) / 2 < 1_000_000 {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |p| p.get())
    };
    let mut shares: Vec<Vec<(usize, &mut [f64])>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, out_row) in out.chunks_mut(n).enumerate() {
        shares[i % threads].push((i, out_row));
    }
    let mut mins: Vec<PairMin> = vec![None; n];
    std::thread::scope(|scope| {
        let fill = &fill;
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| {
                scope.spawn(move || {
                    share
                        .into_iter()
                        .map(|(i, out_row)| (i, fill(i, out_row)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            for (i, m) in h.join().expect("kernel thread panicked") {
                mins[i] = m;
            }
        }
    });
    // Rows in order, the first of ties kept: the pairs' row-major order.
    mins.into_iter().flatten().fold(None, |best: PairMin, m| {
        if best.is_none_or(|b| m.0 < b.0) {
            Some(m)
        } else {
            best
        }
    })
}

/// Re-forms every off-diagonal entry of the infinite-width NTK `k` of a network of the
/// positively homogeneous activation `act` (ReLU, leaky ReLU: [`slope`]; others are left as
/// they are) on the row-major `n x d` inputs `x` from the pair's angle: the kernel is
/// positively homogeneous (any convention, any input norms), so `K_ij = sqrt(K_ii) sqrt(K_jj)
/// cos phi_L(theta_ij)` ([`deficits_into_upper`]). The recursion takes each layer's angle from
/// a cosine, which near 1 holds few of its digits. A pair with a row of zeros keeps the
/// recursion's entry.
pub fn reform_from_angles(
    k: &mut Kernel,
    x: &[f64],
    (n, d): (usize, usize),
    depth: usize,
    act: &Activation,
) {
    let Some(slope) = slope(act) else {
        return;
    };
    let (units, _) = unit_rows(x, n, d);
    // The deficits go to the upper triangle; the lower still holds the recursion's entries.
    deficits_into_upper(
        x,
        &units,
        (n, d),
        depth,
        slope,
        &mut k.data,
        |deficit, _| deficit,
    );
    for (i, j) in pairs(n) {
        let scale = k.get(i, i).sqrt() * k.get(j, j).sqrt();
        let c = 1.0 - k.data[i * n + j];
        k.data[i * n + j] = if c.is_finite() && scale.is_finite() {
            k.data[j * n + i] = scale * c;
            scale * c
        } else {
            k.data[j * n + i]
        };
    }
}

/// A homogeneous network's infinite-width NTK over the largest squared input norm and its
/// smallest model-gradient angle ([`homogeneous_ntk`]).
#[derive(Clone, Debug, PartialEq)]
pub struct OverMaxNorm {
    /// `(L + 1) r_i r_j cos phi_L(theta_ij)`, `r_i = ||x_i|| / max_k ||x_k||`.
    pub ntk: Kernel,
    /// The smallest `phi_L` over the pairs (radians) and its pair `(i, j)`, `i < j` (the
    /// first of ties); `None` for fewer than two inputs.
    pub min_grad_angle: Option<(f64, usize, usize)>,
}

/// The paper-convention NTK of a depth-`depth` network of slope `s` ([`Slope`]) on `inputs`
/// over the largest squared input norm (kappa is free of a global factor, and every
/// convention the recursion covers changes the kernel by one), so that inputs of norm 1e-150
/// or 1e150 lose no digits to a Gram matrix's range, with the smallest gradient angle over
/// the pairs, formed from `1 - cos phi` ([`deficits_into_upper`]): exact at every angle,
/// also near opposite rows. `None` where a row is zeros or holds a value that is not finite.
pub fn homogeneous_ntk(inputs: &Inputs, s: Slope, depth: usize) -> Option<OverMaxNorm> {
    let (n, d, x) = (inputs.n, inputs.d, &inputs.x);
    let (units, norms) = unit_rows(x, n, d);
    if !norms.iter().all(|v| *v > 0.0 && v.is_finite()) {
        return None;
    }
    let top = norms.iter().copied().fold(0.0, f64::max);
    let r: Vec<f64> = norms.iter().map(|v| v / top).collect();
    let top_entry = depth as f64 + 1.0;
    let mut k = Kernel::zeros(n);
    for (i, ri) in r.iter().enumerate() {
        k.data[i * n + i] = top_entry * ri * ri;
    }
    // The smallest phi by `1 - cos phi`; the identity's (`k = 0`) by the input angle, where
    // `1 - cos` underflows at tiny angles and phi is the input angle.
    let key = |deficit: f64, theta: Angle| if s.k == 0.0 { theta.radians() } else { deficit };
    let min = deficits_into_upper(x, &units, (n, d), depth, s, &mut k.data, key);
    for (i, j) in pairs(n) {
        let v = top_entry * r[i] * r[j] * (1.0 - k.data[i * n + j]);
        k.data[i * n + j] = v;
        k.data[j * n + i] = v;
    }
    Some(OverMaxNorm {
        ntk: k,
        min_grad_angle: min.map(|(_, theta, i, j)| (phi(theta, depth, s).radians(), i, j)),
    })
}

/// The rows of the row-major `n x d` inputs `x` scaled to unit norm, and their norms, each
/// through a power of two first (no square under- or overflows): a row of zeros stays zeros,
/// of norm 0; a row with a value that is not finite has norm NaN (and a unit row of zeros or
/// NaN).
pub fn unit_rows(x: &[f64], n: usize, d: usize) -> (Vec<f64>, Vec<f64>) {
    let mut units = Vec::with_capacity(n * d);
    let mut norms = Vec::with_capacity(n);
    for i in 0..n {
        let v = &x[i * d..(i + 1) * d];
        match pow2_scaled(v) {
            Some((s, e)) => {
                let unit_norm = s.iter().map(|a| a * a).sum::<f64>().sqrt();
                units.extend(s.iter().map(|a| a / unit_norm));
                norms.push(libm::scalbn(unit_norm, e));
            }
            None => {
                units.extend(std::iter::repeat_n(0.0, d));
                norms.push(norm(v));
            }
        }
    }
    (units, norms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::{infinite_width_ntk, relu, relu_grad_angle};
    use ntk_numerics::spectrum;

    /// Over a million pairs the rows are dealt to the cores in turn: every entry and the
    /// smallest key's pair (the first of ties, in row-major order) are the one-core pass's,
    /// bit for bit.
    #[test]
    fn rows_dealt_to_the_cores_give_the_one_core_result() {
        let (n, d, depth) = (1_500, 3, 3);
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut x: Vec<f64> = (0..n * d)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            })
            .collect();
        // Ties: rows 700 and 1,200 are rows 3 and 9 again, so the smallest key is 0 at
        // (3, 700) first, then at (9, 1200).
        for (from, to) in [(3, 700), (9, 1200)] {
            let row: Vec<f64> = x[from * d..(from + 1) * d].to_vec();
            x[to * d..(to + 1) * d].copy_from_slice(&row);
        }
        let (units, _) = unit_rows(&x, n, d);
        let s = slope(&Activation::Relu(ntk_model::activation::Relu)).unwrap();
        let key = |deficit: f64, _: Angle| deficit;
        let mut dealt = vec![f64::NAN; n * n];
        let min = deficits_into_upper(&x, &units, (n, d), depth, s, &mut dealt, key).unwrap();
        assert!(n * (n - 1) / 2 >= 1_000_000);
        let mut best: Option<(f64, usize, usize)> = None;
        for (i, j) in pairs(n) {
            let c: f64 = units[i * d..(i + 1) * d]
                .iter()
                .zip(&units[j * d..(j + 1) * d])
                .map(|(a, b)| a * b)
                .sum();
            let theta = pair_angle(
                &x[i * d..(i + 1) * d],
                &x[j * d..(j + 1) * d],
                c.clamp(-1.0, 1.0),
            );
            let deficit = one_minus_cos_phi(theta, depth, s);
            assert_eq!(dealt[i * n + j].to_bits(), deficit.to_bits(), "({i}, {j})");
            if best.is_none_or(|b| deficit < b.0) {
                best = Some((deficit, i, j));
            }
        }
        assert!(
            (0..n).all(|i| dealt[i * n + i].is_nan()),
            "the diagonal is left"
        );
        assert_eq!((min.0, min.2, min.3), best.unwrap());
        assert_eq!((min.2, min.3), (3, 700));
    }

    fn inputs(x: &[f64], n: usize, d: usize) -> Inputs {
        Inputs {
            x: x.to_vec(),
            n,
            d,
            labels: vec![0; n],
            description: "test".into(),
            source_rows: None,
        }
    }

    fn kappa(k: &Kernel) -> f64 {
        spectrum::spectrum(k, f64::EPSILON).unwrap().kappa
    }

    /// [`homogeneous_ntk`]'s kernel of `act` (ReLU or leaky ReLU) on rows of positive norm.
    fn ntk_over_max_norm(inputs: &Inputs, act: &Activation, depth: usize) -> Kernel {
        homogeneous_ntk(inputs, slope(act).unwrap(), depth)
            .unwrap()
            .ntk
    }

    fn relu_act() -> Activation {
        Activation::Relu(ntk_model::activation::Relu)
    }

    fn leaky(alpha: f64) -> Activation {
        Activation::LeakyRelu(ntk_model::activation::LeakyRelu { alpha })
    }

    /// phi in degrees at the ends of the range (fiftieth hostile round, D1): 180 degrees is
    /// exactly opposite (`|z|`: phi 0, not 1.3e-6 degrees from pi's double), `|z|` 1e-11
    /// degrees from opposite and alpha 0.999 1e-5 degrees from it against mpmath's 60-digit
    /// recursion on the cosine (of the double's exact value), and the identity (alpha 1)
    /// keeps every angle (it gave 0 at 1e-160 degrees and 180 at 180 - 1e-11).
    #[test]
    #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
    fn phi_holds_its_digits_at_both_ends() {
        let at = |alpha: f64, deg: f64, depth: usize| {
            phi(Angle::of_degrees(deg), depth, slope(&leaky(alpha)).unwrap()).degrees()
        };
        assert_eq!(at(-1.0, 180.0, 7), 0.0);
        assert_eq!(at(-1.0, 0.0, 7), 0.0);
        for (alpha, deg, want) in [
            (-1.0, 179.99999999999, 0.00005054134870860894008101),
            (0.999, 179.99999, 179.8483570462773857739),
        ] {
            let got = at(alpha, deg, 7);
            assert!(
                (got / want - 1.0).abs() < 1e-12,
                "{alpha} {deg}: {got} vs {want}"
            );
        }
        for deg in [1e-160, 1e-200, 1e-5, 45.0, 179.99999999999, 180.0] {
            assert_eq!(at(1.0, deg, 7), deg);
        }
    }

    /// `|z|` (leaky ReLU at alpha -1) cannot tell `y` from `-y`: nearly opposite rows give
    /// nearly parallel rows' `1 - cos phi` to rounding at every depth and supplement (the
    /// cosines' route lost it: 4.4e-3 of kappa at 1e-5 degrees from opposite, forty-ninth
    /// hostile round, D2), their kernels the same kappa, and `x`, `-2 x` an exactly singular
    /// kernel (D1 (d): kappa 7.3e8). Near alpha -1 the value moves continuously: at
    /// `1 + alpha = 1e-12` the change is `(1 + alpha)^2 / psi^2` = 1e-10 of it.
    #[test]
    fn nearly_opposite_rows_under_abs_are_nearly_parallel_ones() {
        let abs = slope(&leaky(-1.0)).unwrap();
        assert_eq!(abs.linear, 0.0);
        for psi in [1e-12, 1e-7, 1e-3, 0.05, 1.0] {
            for depth in [1, 7, 100] {
                let opposite = one_minus_cos_phi(Angle::Obtuse(psi), depth, abs);
                let parallel = one_minus_cos_phi(Angle::Acute(psi), depth, abs);
                assert!(
                    (opposite / parallel - 1.0).abs() < 1e-13,
                    "{psi} {depth}: {opposite} vs {parallel}"
                );
                let near = slope(&leaky(-1.0 + 1e-12)).unwrap();
                if psi == 1e-7 {
                    let moved = one_minus_cos_phi(Angle::Obtuse(psi), depth, near);
                    assert!(
                        (moved / opposite - 1.0).abs() < 1e-9,
                        "{moved} vs {opposite}"
                    );
                }
            }
        }
        let t = 1e-5f64.to_radians();
        let x = [1.0, 0.0, 0.0, t.cos(), t.sin(), 0.0, 0.3, 1.0, -0.2];
        let mut flipped = x;
        flipped[3..6].iter_mut().for_each(|v| *v = -*v);
        let want = kappa(&ntk_over_max_norm(&inputs(&x, 3, 3), &leaky(-1.0), 7));
        let got = kappa(&ntk_over_max_norm(&inputs(&flipped, 3, 3), &leaky(-1.0), 7));
        assert!((got / want - 1.0).abs() < 1e-9, "{got} vs {want}");
        let mut k = infinite_width_ntk(&flipped, 3, 3, &leaky(-1.0), 7);
        reform_from_angles(&mut k, &flipped, (3, 3), 7, &leaky(-1.0));
        assert!(
            (kappa(&k) / want - 1.0).abs() < 1e-9,
            "{} vs {want}",
            kappa(&k)
        );
        let twice = [1.0, 0.2, -0.3, -2.0, -0.4, 0.6, 0.3, 1.0, -0.2];
        let s = spectrum::spectrum(
            &ntk_over_max_norm(&inputs(&twice, 3, 3), &leaky(-1.0), 7),
            f64::EPSILON,
        )
        .unwrap();
        assert!(s.singular, "{s:?}");
        let h = homogeneous_ntk(&inputs(&twice, 3, 3), abs, 7).unwrap();
        assert_eq!(h.min_grad_angle, Some((0.0, 0, 1)));
    }

    /// The O(L) deficit equals Thm 4.4's O(L^2) sum ([`relu_grad_angle`]) to rounding.
    #[test]
    fn the_deficit_is_thm_4_4() {
        for t in [1e-12, 1e-7, 1e-3, 0.1, 1.0, 2.0, 3.1] {
            for depth in [0, 1, 5, 50, 1000] {
                let got = relu::angle_from_one_minus_cos(one_minus_cos_phi(
                    Angle::of(t),
                    depth,
                    slope(&relu_act()).unwrap(),
                ));
                let want = relu_grad_angle(t, depth);
                assert!(
                    (got - want).abs() <= 1e-13 * want,
                    "{t} {depth}: {got} vs {want}"
                );
            }
        }
    }

    /// Two rows `theta` apart: the 2 x 2 kernel `(L + 1) [[1, c], [c, 1]]` has kappa
    /// `(1 + c) / (1 - c) = cot^2(phi / 2)`, formed here from Thm 4.4's angle without the
    /// matrix; the kernel's kappa agrees to 1e-7 at 1e-5 and 1e-3 degrees, depths 7 and
    /// 10,000 (the recursion on the cosine was 2.8e-3 and 2e-4 off), and the same rows
    /// scaled by 1e-150 and 1e150 give the same kappa (they were 0.7% apart).
    #[test]
    fn nearly_parallel_rows_keep_kappa() {
        for deg in [1e-5f64, 1e-3] {
            let t = deg.to_radians();
            let x = [1.0, 0.0, 0.0, t.cos(), t.sin(), 0.0];
            let theta = input_angle(&x[0..3], &x[3..6]);
            for depth in [7, 10_000] {
                let phi = relu_grad_angle(theta, depth);
                let want = (1.0 / (0.5 * phi).tan()).powi(2);
                let relu_act = relu_act();
                let got = kappa(&ntk_over_max_norm(&inputs(&x, 2, 3), &relu_act, depth));
                assert!(
                    (got / want - 1.0).abs() < 1e-7,
                    "{deg} deg, depth {depth}: {got} vs {want}"
                );
                // `probe.method = "theory"`'s route: the recursion's kernel, re-formed.
                let mut k = infinite_width_ntk(&x, 2, 3, &relu_act, depth);
                reform_from_angles(&mut k, &x, (2, 3), depth, &relu_act);
                let run = kappa(&k);
                assert!((run / want - 1.0).abs() < 1e-7, "run: {run} vs {want}");
                for s in [1e-150, 1e150] {
                    let scaled: Vec<f64> = x.iter().map(|v| v * s).collect();
                    let k = kappa(&ntk_over_max_norm(&inputs(&scaled, 2, 3), &relu_act, depth));
                    assert!((k / got - 1.0).abs() < 1e-9, "{s}: {k} vs {got}");
                }
            }
        }
    }

    /// Rows of unequal norms, some pairs within [`NEAR_PARALLEL`] (3 and 0.5 degrees): the
    /// kernel over the largest squared norm equals the recursion on the rows as given to
    /// 1e-12 (at depths where the cosines still hold the angles), and `reform_from_angles` on
    /// the recursion's kernel moves no entry beyond that: for ReLU and for leaky ReLU at
    /// alpha 0.01, 0.3, -0.5, -0.9, -1 and 1 (the identity), whose slope ([`slope`]) is derived here and checked
    /// against the recursion's own dual kernel (forty-eighth hostile round, D1); leaky ReLU at
    /// alpha 0 is ReLU to rounding.
    #[test]
    fn where_the_cosines_hold_the_recursion_stands() {
        let (n, d) = (5, 3);
        let x = [
            1.0, 0.2, -0.3, //
            2.0, 0.5, -0.55, // about 3 degrees from the first, twice its norm
            -0.4, 1.1, 0.7, //
            -0.41, 1.1, 0.71, // about 0.5 degrees from the third
            0.3, -0.2, 1.5,
        ];
        let acts = [
            relu_act(),
            leaky(0.01),
            leaky(0.3),
            leaky(-0.5),
            leaky(-0.9),
            leaky(-1.0),
            leaky(1.0),
        ];
        for act in &acts {
            for depth in [1, 4, 20] {
                let want = infinite_width_ntk(&x, n, d, act, depth);
                let top = (0..n).map(|i| want.get(i, i)).fold(0.0, f64::max) / (depth as f64 + 1.0);
                let got = ntk_over_max_norm(&inputs(&x, n, d), act, depth);
                let mut refined = want.clone();
                reform_from_angles(&mut refined, &x, (n, d), depth, act);
                for i in 0..n {
                    for j in 0..n {
                        let w = want.get(i, j);
                        let scale = want.get(i, i).max(want.get(j, j));
                        let at = format!("{act} depth {depth} ({i}, {j})");
                        assert!(
                            (got.get(i, j) * top - w).abs() <= 1e-12 * scale,
                            "{at}: {} vs {w} ({scale})",
                            got.get(i, j) * top
                        );
                        assert!((refined.get(i, j) - w).abs() <= 1e-12 * scale, "{at}");
                    }
                }
            }
        }
        let relu = ntk_over_max_norm(&inputs(&x, n, d), &acts[0], 10);
        let alpha0 = ntk_over_max_norm(&inputs(&x, n, d), &leaky(0.0), 10);
        assert!(relu.relative_error(&alpha0) < 1e-14);
    }

    /// A theory run's embedding angles near 180 degrees (hundred-and-thirty-ninth hostile
    /// round, D1: leaky ReLU at alpha -1 wrote 0 and at alpha 1 wrote 180 for rows 1e-8 from
    /// opposite): under `|z|` (alpha -1) rows `psi` from opposite map as rows `psi` from
    /// parallel (`|-y| = |y|`), the identity (alpha 1) keeps every angle to the last bit, and
    /// at a supplement where the cosines hold their digits (0.3 radians) every slope agrees
    /// with the arccos of the cosine recursion `cos t' = k sin t + (1 - k t) cos t` to 1e-12.
    #[test]
    fn embedding_angles_near_opposite_keep_the_supplement() {
        for psi in [1e-12, 1e-8, 1e-3, 0.05] {
            let opposite = homogeneous_embedding_angles(&leaky(-1.0), Angle::Obtuse(psi), 3);
            let parallel = homogeneous_embedding_angles(&leaky(-1.0), Angle::Acute(psi), 3);
            assert_eq!(
                opposite.as_ref().unwrap()[1..],
                parallel.as_ref().unwrap()[1..]
            );
            assert!(parallel.unwrap()[1].degrees() > 0.0);
            let kept = homogeneous_embedding_angles(&leaky(1.0), Angle::Obtuse(psi), 3).unwrap();
            assert!(kept.iter().all(|a| *a == Angle::Obtuse(psi)), "{kept:?}");
        }
        for alpha in [-1.0, -0.5, 0.0, 0.5, 1.0] {
            let s = slope(&leaky(alpha)).unwrap();
            let got = homogeneous_embedding_angles(&leaky(alpha), Angle::Obtuse(0.3), 4).unwrap();
            let mut t = PI - 0.3;
            for (l, a) in got.iter().enumerate().skip(1) {
                let c = s.k * t.sin() + (1.0 - s.k * t) * t.cos();
                t = c.clamp(-1.0, 1.0).acos();
                assert!(
                    (a.radians() - t).abs() < 1e-12,
                    "alpha {alpha} layer {l}: {a:?} vs {t}"
                );
            }
        }
    }
}
