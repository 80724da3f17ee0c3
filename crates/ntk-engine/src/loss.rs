//! The training loss (`train.loss`): what a step's gradient and the metrics' losses are of.
//!
//! - [`Loss::CrossEntropy`] (the default): `(1/B) sum_i (logsumexp f_i - f_{i, y_i})`.
//! - [`Loss::Mse`], the square loss of the NTK theory (Liu & Hui, Sec. 6; Jacot et al.):
//!   `L = (1/B) sum_i (1/2) ||f_i - t_i||^2`, half the squared error summed over the
//!   outputs, averaged over the batch. The targets `t_i` ([`targets`]) are the one-hot rows
//!   `e_{y_i}` for a network with `k >= 2` outputs, and the scalar `+1` (label 1) or `-1`
//!   (label 0) for a one-output network on two classes. With `B = n` (full batch), one step of
//!   gradient descent at rate `eta` moves the outputs by `-(eta / n) Theta (f - t)` to first
//!   order in `eta` (`Theta` the empirical NTK), the linearized dynamics that
//!   `ntk_kernel::predict` solves.
//!
//! A prediction counts as correct when its largest output is the label (`k >= 2`), or when
//! its sign is the target's (`k = 1`: `f > 0` predicts label 1).

use burn::tensor::{Tensor, TensorData};
use ntk_numerics::linalg::Real;
use serde::{Deserialize, Serialize};

use faer::Mat;

/// `train.loss`: see the module's documentation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Loss {
    #[default]
    CrossEntropy,
    /// Half the squared error against one-hot (or, for one output, +-1) targets.
    Mse,
}

impl Loss {
    pub fn is_cross_entropy(&self) -> bool {
        *self == Self::CrossEntropy
    }

    /// The config word (`cross_entropy`, `mse`).
    pub fn name(self) -> &'static str {
        match self {
            Self::CrossEntropy => "cross_entropy",
            Self::Mse => "mse",
        }
    }

    /// The summed loss over the rows of `logits` and the correct predictions; `logits` is
    /// overwritten with the cotangent of the batch's mean loss, `dL/df`. A non-finite
    /// logit gives a NaN loss (and leaves the logits partly overwritten).
    pub(crate) fn host<T: Real>(self, logits: impl Logits<T>, y: &[usize]) -> (f64, usize) {
        match self {
            Self::CrossEntropy => softmax_cross_entropy(logits, y),
            Self::Mse => squared_error(logits, y),
        }
    }

    /// The batch's mean loss as a tensor (for Burn's autodiff) and its correct predictions,
    /// for logits `[B, k]` and labels `y`.
    pub fn burn(self, logits: Tensor<2>, y: &[usize]) -> (Tensor<1>, usize) {
        let [b, k] = logits.dims();
        let host: Vec<f64> = logits
            .clone()
            .try_into_vec_as()
            .expect("reading the logits from the device");
        let hits = correct(&host, k, y);
        let loss = match self {
            Self::CrossEntropy => {
                let labels: Vec<i64> = y.iter().map(|&l| l as i64).collect();
                let device = logits.device();
                let labels = Tensor::from_data(TensorData::new(labels, [b]), &device);
                burn::nn::loss::CrossEntropyLossConfig::new()
                    .init(&device)
                    .forward(logits, labels)
            }
            Self::Mse => {
                let wanted = targets(y, k);
                let residuals: Vec<f64> = host.iter().zip(&wanted).map(|(f, t)| f - t).collect();
                let t = Tensor::<2>::from_data(
                    TensorData::new(wanted, [b, k]),
                    (&logits.device(), logits.dtype()),
                );
                // Scaled by a power of two where the squares could pass the precision's
                // range, so that a mean in range is finite (hundred-and-seventeenth hostile
                // round, D3: a test loss of 2.31e307 was inf, the run "diverged").
                let d = logits - t;
                let f32_range = d.dtype() != burn::tensor::DType::F64;
                match square_scale(&residuals, f32_range) {
                    None => (d.clone() * d).sum().mul_scalar(0.5 / b as f64),
                    Some(e) => {
                        let up = pow2(e);
                        let s = d.mul_scalar(pow2(-e));
                        (s.clone() * s)
                            .sum()
                            .mul_scalar(0.5 / b as f64)
                            .mul_scalar(up)
                            .mul_scalar(up)
                    }
                }
            }
        };
        (loss, hits)
    }
}

/// `(1/rows) sum_i (1/2) r_i^2` over the residuals `r` of `rows` rows (the square loss's
/// mean, [`Loss::Mse`]), formed at a power-of-two scale where the squares could pass f64's
/// range ([`square_scale`]), so that a mean in range is finite where the sum of squares is
/// not; bit for bit the plain sum's elsewhere (a power of two scales without rounding).
pub fn half_mean_square(r: &[f64], rows: usize) -> f64 {
    let e = square_scale(r, false).unwrap_or(0);
    let down = pow2(-e);
    let sum: f64 = r.iter().map(|v| (v * down) * (v * down)).sum();
    let up = pow2(e);
    sum * (0.5 / rows as f64) * up * up
}

/// The binary exponent `e` by which to scale residuals `r` down before their squares are
/// summed (the largest into `[2, 4)`), where the largest square times their count could pass
/// the precision's largest number (f64's, or f32's where `f32_range`): `2 (e_max + 1) +
/// bits(count)` at or past its exponent less 2 (hundred-and-eighteenth hostile round, D3: 300
/// residuals of 1.1e18 in f32, each below the old 2^60 threshold, summed past 2^128); `None`
/// below, or where a residual is not finite.
fn square_scale(r: &[f64], f32_range: bool) -> Option<i32> {
    let largest = r.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if !largest.is_finite() || largest == 0.0 {
        return None;
    }
    let top = if f32_range { 127 } else { 1023 };
    // A number's binary exponent, from its bits (a subnormal's counts as -1023: never scaled).
    let exponent = ((largest.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let bits = (usize::BITS - r.len().leading_zeros()) as i32;
    // Less one: the largest into [2, 4), so that 2^-e stays a normal number (at 2^1023:
    // 2^-1022).
    (2 * (exponent + 1) + bits >= top - 2).then_some(exponent - 1)
}

/// `2^e`, exact for `|e| <= 1022`.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

/// A batch of logits, `B` rows of `k`: read and overwritten by [`softmax_cross_entropy`].
pub trait Logits<T> {
    fn shape(&self) -> (usize, usize);
    fn get(&self, i: usize, j: usize) -> T;
    fn set(&mut self, i: usize, j: usize, v: T);
}

impl<T: Real> Logits<T> for &mut Mat<T> {
    fn shape(&self) -> (usize, usize) {
        (self.nrows(), self.ncols())
    }
    fn get(&self, i: usize, j: usize) -> T {
        self[(i, j)]
    }
    fn set(&mut self, i: usize, j: usize, v: T) {
        self[(i, j)] = v;
    }
}

/// Row-major logits `[B, k]`.
pub struct Rows<'a, T> {
    pub values: &'a mut [T],
    pub k: usize,
}

impl<T: Real> Logits<T> for Rows<'_, T> {
    fn shape(&self) -> (usize, usize) {
        (self.values.len() / self.k, self.k)
    }
    fn get(&self, i: usize, j: usize) -> T {
        self.values[i * self.k + j]
    }
    fn set(&mut self, i: usize, j: usize, v: T) {
        self.values[i * self.k + j] = v;
    }
}

/// Summed cross-entropy over the rows of `logits`, and the number of rows whose first
/// maximal logit is the label; `logits` is overwritten with `(softmax - onehot(y)) / B`.
/// A non-finite logit gives a NaN loss (and leaves the logits partly overwritten).
pub fn softmax_cross_entropy<T: Real>(mut logits: impl Logits<T>, y: &[usize]) -> (f64, usize) {
    let (batch, k) = logits.shape();
    let (mut loss, mut correct) = (0.0f64, 0usize);
    let inv_b = 1.0 / batch as f64;
    let mut row = vec![0.0f64; k];
    for i in 0..batch {
        let (mut best, mut arg) = (f64::NEG_INFINITY, 0);
        for (j, r) in row.iter_mut().enumerate() {
            *r = logits.get(i, j).f64();
            if *r > best {
                best = *r;
                arg = j;
            }
        }
        if !best.is_finite() || row.iter().any(|v| v.is_nan()) {
            return (f64::NAN, correct);
        }
        if arg == y[i] {
            correct += 1;
        }
        let sum: f64 = row.iter().map(|v| (v - best).exp()).sum();
        loss += sum.ln() + best - row[y[i]];
        for (j, r) in row.iter().enumerate() {
            let p = (r - best).exp() / sum;
            logits.set(i, j, T::of((p - if j == y[i] { 1.0 } else { 0.0 }) * inv_b));
        }
    }
    (loss, correct)
}

/// The square loss's targets for labels `y` and `k` outputs, row-major `[B, k]`: one-hot
/// rows for `k >= 2`, `2 y - 1` (so `-1` or `+1`) for `k = 1`.
pub fn targets(y: &[usize], k: usize) -> Vec<f64> {
    if k == 1 {
        return y.iter().map(|&l| if l == 1 { 1.0 } else { -1.0 }).collect();
    }
    let mut t = vec![0.0; y.len() * k];
    for (i, &l) in y.iter().enumerate() {
        t[i * k + l] = 1.0;
    }
    t
}

/// The rows of row-major `logits` (`k` per row) predicting their label: the first largest
/// output for `k >= 2`, the sign for `k = 1` (`f > 0`: label 1).
pub fn correct(logits: &[f64], k: usize, y: &[usize]) -> usize {
    y.iter()
        .enumerate()
        .filter(|&(i, &l)| {
            let row = &logits[i * k..(i + 1) * k];
            if k == 1 {
                return (row[0] > 0.0) == (l == 1);
            }
            let mut arg = 0;
            for (j, v) in row.iter().enumerate() {
                if *v > row[arg] {
                    arg = j;
                }
            }
            arg == l
        })
        .count()
}

/// Summed `(1/2) ||f_i - t_i||^2` over the rows of `logits` and the rows predicting their
/// label ([`correct`]); `logits` is overwritten with `(f - t) / B`, the cotangent of the
/// mean. A non-finite logit gives a NaN loss.
fn squared_error<T: Real>(mut logits: impl Logits<T>, y: &[usize]) -> (f64, usize) {
    let (batch, k) = logits.shape();
    let mut row = vec![0.0f64; k];
    let (mut loss, mut hits) = (0.0f64, 0usize);
    let inv_b = 1.0 / batch as f64;
    for (i, &label) in y.iter().enumerate().take(batch) {
        for (j, r) in row.iter_mut().enumerate() {
            *r = logits.get(i, j).f64();
        }
        if row.iter().any(|v| !v.is_finite()) {
            return (f64::NAN, hits);
        }
        hits += correct(&row, k, &[label]);
        let t = targets(&[label], k);
        for (j, (f, t)) in row.iter().zip(&t).enumerate() {
            loss += 0.5 * (f - t) * (f - t);
            logits.set(i, j, T::of((f - t) * inv_b));
        }
    }
    (loss, hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: logits (0.5, -1), label 0 -> targets (1, 0): loss (0.25 + 1) / 2 = 0.625,
    /// cotangent (-0.5, -1) / 2 for a batch of 2; logits (3, 4), label 1 -> targets (0, 1):
    /// loss (9 + 9) / 2, cotangent (3, 3) / 2. Both rows predict their label.
    #[test]
    fn squared_error_by_hand() {
        let mut v = vec![0.5f64, -1.0, 3.0, 4.0];
        let (loss, hits) = Loss::Mse.host(
            Rows {
                values: &mut v,
                k: 2,
            },
            &[0, 1],
        );
        assert_eq!(loss, 0.625 + 9.0);
        assert_eq!(hits, 2);
        assert_eq!(v, [-0.25, -0.5, 1.5, 1.5]);
    }

    /// One output on two classes: targets -1 and +1, correct by sign.
    #[test]
    fn scalar_targets_are_plus_minus_one() {
        assert_eq!(targets(&[0, 1, 1], 1), [-1.0, 1.0, 1.0]);
        assert_eq!(correct(&[-0.2, 0.3, -0.1], 1, &[0, 1, 1]), 2);
        let mut v = vec![0.5f64, -0.5];
        let (loss, hits) = Loss::Mse.host(
            Rows {
                values: &mut v,
                k: 1,
            },
            &[0, 1],
        );
        assert_eq!(loss, 0.5 * 1.5 * 1.5 * 2.0);
        assert_eq!(hits, 0);
        assert_eq!(v, [0.75, -0.75]);
    }

    /// The hundred-and-seventeenth hostile round, D3: four residuals whose squares sum past
    /// f64's largest number (1.848e308) have a mean loss of 2.31e307. Formed at a power of
    /// two it is finite and equals the exact mean scaled back (each residual 2^500 times a
    /// small integer, so every step is exact); ordinary residuals give the plain sum's bits.
    /// Burn's tensor loss (the test loss of the network itself) forms it the same way, in f64
    /// and in f32 (where 1e20 squares past f32's range).
    #[test]
    fn a_mean_square_in_range_is_finite_where_the_sum_is_not() {
        let r = [3.0, 5.0, 4.0, 6.0].map(|v| v * pow2(510));
        let plain: f64 = r.iter().map(|v| v * v).sum::<f64>();
        assert!(plain.is_infinite());
        let exact = (9.0 + 25.0 + 16.0 + 36.0) / 8.0 * pow2(1020);
        assert!(exact.is_finite());
        assert_eq!(half_mean_square(&r, 4), exact);
        let small = [0.3, -1.7, 2.9];
        let sum: f64 = small.iter().map(|v| v * v).sum();
        assert_eq!(
            half_mean_square(&small, 3).to_bits(),
            (sum * (0.5 / 3.0)).to_bits()
        );
        // Burn's: logits 1 + r (= r) for one output and labels 1 (targets +1); in f32 the
        // residuals 2^62 times the same integers, whose squares pass f32's 2^128.
        let device = burn::tensor::Device::flex();
        for (dtype, e) in [
            (burn::tensor::DType::F64, 510),
            (burn::tensor::DType::F32, 62),
        ] {
            let r = [3.0, 5.0, 4.0, 6.0].map(|v| v * pow2(e));
            let logits: Vec<f64> = r.iter().map(|v| 1.0 + v).collect();
            let t = Tensor::<2>::from_data(TensorData::new(logits, [4, 1]), (&device, dtype));
            let (loss, _) = Loss::Mse.burn(t, &[1, 1, 1, 1]);
            let loss: Vec<f64> = loss.try_into_vec_as().unwrap();
            assert_eq!(loss[0], 86.0 / 8.0 * pow2(2 * e), "{dtype:?}");
        }
        // Hundred-and-eighteenth hostile round, D3: in f32, 300 residuals of 1.1e18, each
        // square below 2^128, their sum past it; the mean 6.05e35 in range.
        let r = f64::from(1.1e18f32);
        let t = Tensor::<2>::from_data(
            TensorData::new(vec![1.0 + r; 300], [300, 1]),
            (&device, burn::tensor::DType::F32),
        );
        let (loss, _) = Loss::Mse.burn(t, &[1; 300]);
        let loss: Vec<f64> = loss.try_into_vec_as().unwrap();
        let want = 0.5 * r * r;
        assert!(
            ((loss[0] - want) / want).abs() < 1e-6 && 300.0 * r * r > f64::from(f32::MAX),
            "{} against {want}",
            loss[0]
        );
    }
}
