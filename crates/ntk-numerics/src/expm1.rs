//! `e^x - 1` in f32 as straight-line arithmetic that LLVM vectorizes (libm's `expm1f` is a
//! call per element, ~10 ns: it made SELU's forward the most expensive pass of a ResNet
//! step).
//!
//! Range reduction `x = n ln 2 + r`, `n = round(x / ln 2)`, `|r| <= ln 2 / 2`, with `ln 2`
//! split in a high part exact in a product with `n` and a low part (Cody and Waite); then
//!
//! `e^x - 1 = 2^n (e^r - 1) + (2^n - 1)`,
//!
//! `e^r - 1` by its Taylor polynomial of degree 7 (truncation `|r|^8 / 8! < 5.3e-9`, far
//! below f32's unit roundoff `6e-8`), `2^n` assembled in the exponent bits. For `n = 0`
//! (`|x| < 0.347`) the result is the polynomial itself, so small arguments keep their
//! relative accuracy (no cancellation in `e^x - 1`). The argument is clamped to
//! `[-87, 88]`, where `2^n` stays a normal float; below `-87` the result is `-1` to f32's
//! precision anyway; above `ln(f32::MAX) = 88.72` the result is infinity, between 88 and
//! 88.72 it is `e^88 - 1` (1.3e-6 of the way short at worst: no caller of ours goes there).
//! NaN propagates. Measured against
//! f64's `exp_m1` on every 1/64 step of [-87, 88] and on a geometric grid near 0 (the tests):
//! within 2 ulp of the correctly rounded value's magnitude, i.e. relative error below
//! `2.4e-7`.

const LOG2_E: f32 = std::f32::consts::LOG2_E;
/// `ln 2 = LN2_HI + LN2_LO`; `LN2_HI` has 9 significant bits, so `n LN2_HI` is exact.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// `1.5 * 2^23`: adding and subtracting it rounds an f32 of magnitude below `2^22` to the
/// nearest integer, without a call to `roundf`.
const ROUND: f32 = 12_582_912.0;

/// `e^x - 1` for f32 (see the module docs for the method and its accuracy).
#[inline(always)]
pub fn exp_m1_f32(x: f32) -> f32 {
    let xc = x.clamp(-87.0, 88.0);
    let n = (xc * LOG2_E + ROUND) - ROUND;
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let p = r
        * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0
                        + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    // 2^n in the exponent bits (n in [-126, 127] after the clamp).
    let two_n = f32::from_bits(((n as i32 + 127) as u32) << 23);
    let y = two_n * p + (two_n - 1.0);
    // NaN: `clamp` keeps it, but `n as i32` would not; give it back.
    if x.is_nan() {
        x
    } else if x > 88.722_84 {
        f32::INFINITY
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::exp_m1_f32;

    /// Error in units of the f32 spacing at the exact value's magnitude.
    fn ulps(x: f32) -> f64 {
        let exact = f64::from(x).exp_m1();
        let got = f64::from(exp_m1_f32(x));
        let spacing = f64::from(f32::EPSILON) * exact.abs().max(f64::from(f32::MIN_POSITIVE));
        (got - exact).abs() / spacing
    }

    #[test]
    fn within_two_ulp_over_the_range() {
        let mut worst = (0.0, 0.0f32);
        let mut x = -87.0f32;
        while x <= 88.0 {
            let e = ulps(x);
            if e > worst.0 {
                worst = (e, x);
            }
            x += 1.0 / 64.0;
        }
        // Near zero, where e^x - 1 cancels: a geometric grid of both signs.
        let mut t = 1e-30f32;
        while t < 1.0 {
            for x in [t, -t] {
                let e = ulps(x);
                if e > worst.0 {
                    worst = (e, x);
                }
            }
            t *= 1.1;
        }
        assert!(worst.0 <= 2.0, "{} ulp at x = {}", worst.0, worst.1);
    }

    #[test]
    fn ends_and_nan() {
        assert_eq!(exp_m1_f32(0.0), 0.0);
        assert_eq!(exp_m1_f32(-1000.0), -1.0);
        assert_eq!(exp_m1_f32(f32::NEG_INFINITY), -1.0);
        assert!(exp_m1_f32(f32::NAN).is_nan());
        assert!(exp_m1_f32(88.0).is_finite());
        assert_eq!(exp_m1_f32(89.0), f32::INFINITY);
    }
}
