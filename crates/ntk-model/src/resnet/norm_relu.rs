//! The basic block of Agarwal, Awasthi & Kale's NormReLU ResNets (Sec. 7, Fig. 4 and 5;
//! App. I.2): He et al.'s block with BatchNorm removed and ReLU replaced by NormReLU `s_b`,
//! weights zero-mean Gaussian, and a variance-preserving residual sum:
//!
//! `y = s(merge(shortcut(x), conv2(s(conv1(x)))))`, with
//! `merge(x, r) = (x + r) / sqrt 2` on channels the shortcut carries and `r` alone on the
//! channels it zero-pads (the upper half after a downsampling block).
//!
//! # Why this scaling
//!
//! The paper says only that BatchNorm is "switched off", ReLU replaced by NormReLU, and the
//! kernels drawn from "a mean zero Gaussian" with a He-like variance (the formula is lost in
//! our copy, `papers/004`, Sec. 7 "Comparison with Fixup initialization"); it is silent on the
//! residual sum. Its theory assumes a *normalized* activation applied to unit-variance
//! Gaussian pre-activations (`E[s(Z)] = 0`, `E[s(Z)^2] = 1`, `Z ~ N(0, 1)`, Eq. (2)), so we
//! keep every NormReLU input at unit mean square at initialization:
//!
//! - Weights `N(0, c / fan_in)` with `c = 1 / E[s(Z)^2] = 1` (the He-init analogue: He's
//!   `2 / fan_in` is `c / fan_in` for ReLU, `c = 2`). Given an input whose coordinates have
//!   mean square `q`, a convolution's outputs are (over the weights) `N(0, q)`: a conv maps
//!   mean square 1 to 1, and `s` maps `N(0, 1)` to mean square 1.
//! - The shortcut `x` and the branch `r = conv2(s(conv1(x)))` both have mean square 1 and
//!   are uncorrelated (`E[x r] = 0`: `conv2`'s weights are zero-mean and independent of `x`),
//!   so the plain `x + r` has mean square 2: the block's NormReLU would see twice the variance
//!   it is normalized for (`E[s(sqrt 2 Z)^2] = 1.75`), and without an activation after the sum
//!   the mean square would double per block (`2^54` over ResNet-110). `(x + r) / sqrt 2` has
//!   mean square `(1 + 1) / 2 = 1`.
//! - A branch multiplier without the division, `x + alpha r` with `alpha = L^(-1/2)` (Fixup's
//!   device), still grows the mean square by `(1 + alpha^2)` per block (about `e` over the
//!   net) and never feeds NormReLU unit variance; and the paper's point (Fig. 5) is that
//!   NormReLU with plain Gaussian init replaces Fixup's rescaling. The `1 / sqrt 2` merge is
//!   the parameter-free rule that keeps the sum at unit mean square, so it is the one we use.
//! - In a downsampling block the option-A shortcut is zero on the padded channels; there the
//!   sum is `r` alone, which already has mean square 1, so it is not divided.
//!
//! # What remains, and the test that measures it
//!
//! - Map borders: with zero padding a border output's 3x3 window sees fewer inputs (on the
//!   8x8 maps of stage 3 a convolution keeps ~92% of the mean square in its slowest-decaying
//!   spatial mode), and NormReLU restores scale only weakly: its mean-square map
//!   `g(q) = E[s(sqrt q Z)^2]` has `g(q) / q` between ~1.17 (`q -> 0`) and ~0.56 (`q -> oo`)
//!   and slope `g'(1) = 0.84`. Measured at init, ResNet-110 falls to ~0.63 of the stem's mean
//!   square by the last block. Hence the border gain (`border_rescale`, on by default; see
//!   [`super::layers::border_gain`]), which applies the fan-in rule per position.
//! - The post-activation block applies `s` to `(x + r) / sqrt 2` where the shortcut `x` is a
//!   NormReLU output, not a Gaussian: its lower tail is cut at `lambda_b (b - mu_b)`, so
//!   `E[s(u)^2]` slightly exceeds `E[u^2] = 1`. Deviations shrink by
//!   `a = g'(1) (1 + g'(1)) / 2 = 0.77` per block, so the infinite-width mean square rises
//!   from 1 to a fixed point near 1.11 and stays there (computed in `tests/model/resnet.rs` by
//!   propagating the per-coordinate distribution, and matched there by the measured profile).
//!
//! # SELU (the selu variant)
//!
//! App. I.2 (Fig. 8) trains these ResNets with SELU in place of NormReLU and nothing else
//! changed. SELU is normalized too (`E[s(Z)] = 0`, `E[s(Z)^2] = 1` up to its constants'
//! rounding), so every argument above carries over: the same block, `c = 1 / E[s(Z)^2]`, the
//! `1 / sqrt 2` merge and the border gain.
//!
//! # Any activation (the normalized variant)
//!
//! The same holds for any activation once normalized, `s_hat = (s - E s(Z)) / sd s(Z)`
//! ([`crate::activation::Normalized`]): `variant = "normalized"` with `activation = "gelu"`
//! (or any name of the registry) is this network with normalized GELU, `c = 1`. Whether it
//! keeps unit scale through depth depends on the activation: deviations shrink by
//! `g'(1) (1 + g'(1)) / 2` per block ([`crate::activation::Normalized::mean_square_slope`]),
//! so tanh (`g'(1) = 0.46`) keeps ResNet-20's blocks within 5% of unit mean square at
//! initialization, while GELU (1.06) and ReLU normalized (1.00) do not: their mean square
//! grows block by block (404 and 157 at ResNet-20's last block, seed 5; NormReLU's negative
//! kink is what makes it stable, `g(q) / q -> 0.56`). A finding the tool lets one measure,
//! not a defect of the construction: `tests/model/resnet.rs` holds both.

use burn::module::Module;
use burn::tensor::{DType, Device, Tensor};
use std::f64::consts::FRAC_1_SQRT_2;

use super::layers::{self, Conv3x3};
use crate::activation::Normalized;

/// One basic block with a normalized activation (NormReLU, SELU for the selu variant, any
/// activation normalized for the normalized variant) and the variance-preserving merge.
#[derive(Module, Debug)]
pub struct NormReluBlock {
    pub conv1: Conv3x3,
    pub conv2: Conv3x3,
    /// Stride 2 and doubled channels: the option-A shortcut subsamples and zero-pads.
    pub downsample: bool,
    #[module(skip)]
    activation: Normalized,
}

impl NormReluBlock {
    /// Block `index` (0-based over the network) from `c_in` to `c_out` channels; weights
    /// `N(0, c / fan_in)`, `c = 1 / E[s(Z)^2]` (1 for NormReLU and any normalized activation).
    pub fn new(
        index: usize,
        channels: [usize; 2],
        activation: Normalized,
        border_gain: bool,
        seed: u64,
        device: &Device,
        dtype: DType,
    ) -> Self {
        let [c_in, c_out] = channels;
        let downsample = c_out != c_in;
        let c = activation.c();
        let std = |fan_in_channels: usize| (c / Conv3x3::fan_in(fan_in_channels) as f64).sqrt();
        Self {
            conv1: Conv3x3::new(
                [c_in, c_out],
                if downsample { 2 } else { 1 },
                std(c_in),
                seed,
                layers::block_stream(index, 0),
                device,
                dtype,
            )
            .with_border_gain(border_gain),
            conv2: Conv3x3::new(
                [c_out, c_out],
                1,
                std(c_out),
                seed,
                layers::block_stream(index, 1),
                device,
                dtype,
            )
            .with_border_gain(border_gain),
            downsample,
            activation,
        }
    }

    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let h = self.activation.forward(self.conv1.forward(x.clone()));
        let r = self.conv2.forward(h);
        self.activation.forward(merge(x, r, self.downsample))
    }
}

/// `(shortcut(x) + r) / sqrt 2` where the shortcut carries `x`, `r` where it is zero padding.
pub fn merge(x: Tensor<4>, r: Tensor<4>, downsample: bool) -> Tensor<4> {
    if !downsample {
        return (x + r).mul_scalar(FRAC_1_SQRT_2);
    }
    let sub = layers::subsample(x);
    let carried = sub.dims()[1];
    let padded = r.dims()[1] - carried;
    let r_carried = r.clone().narrow(1, 0, carried);
    let r_padded = r.narrow(1, carried, padded);
    Tensor::cat(
        vec![(sub + r_carried).mul_scalar(FRAC_1_SQRT_2), r_padded],
        1,
    )
}
