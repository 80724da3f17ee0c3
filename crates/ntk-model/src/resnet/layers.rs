//! The pieces every CIFAR ResNet variant is built from: seeded 3x3 convolutions, the linear
//! classifier, scalar parameters (Fixup), BatchNorm in the model's dtype, the option-A
//! shortcut and global average pooling.
//!
//! Weights are drawn on the host with [`init::gaussian`] (f64, ChaCha8, one stream per layer)
//! and cast, so the same seed gives the same network on every backend and precision.

use burn::module::{Module, Param, RunningState};
use burn::nn::{BatchNorm, BatchNormConfig};
use burn::tensor::module::conv2d;
use burn::tensor::ops::ConvOptions;
use burn::tensor::{DType, Device, Tensor, TensorData, s};

use crate::init;

/// Initializer stream of the stem convolution.
pub const STEM_STREAM: u64 = 0;
/// Initializer stream of the classifier (far above any block's, so the classifier's draws do
/// not depend on the depth).
pub const CLASSIFIER_STREAM: u64 = 1 << 32;

/// Initializer stream of convolution `k = 0, 1` of residual block `b` (0-based, stem first):
/// a block's draws do not depend on how many blocks follow it.
pub fn block_stream(block: usize, k: usize) -> u64 {
    1 + 2 * block as u64 + k as u64
}

/// A bias-free 3x3 convolution with zero padding 1 (He et al.'s `conv3x3`), optionally with
/// the border gain (see [`border_gain`]).
#[derive(Module, Debug)]
pub struct Conv3x3 {
    /// `[out, in, 3, 3]`, PyTorch's layout.
    pub weight: Param<Tensor<4>>,
    pub stride: usize,
    /// Multiply the output by [`border_gain`] (the norm_relu variant's `border_rescale`).
    pub border_gain: bool,
}

impl Conv3x3 {
    /// Weights i.i.d. `N(0, std^2)` from stream `stream` of `seed` (all zeros when
    /// `std == 0`, Fixup's zero init).
    pub fn new(
        channels: [usize; 2],
        stride: usize,
        std: f64,
        seed: u64,
        stream: u64,
        device: &Device,
        dtype: DType,
    ) -> Self {
        let [c_in, c_out] = channels;
        let shape = [c_out, c_in, 3, 3];
        let weight = if std == 0.0 {
            Tensor::<4>::zeros(shape, (device, dtype))
        } else {
            let w = init::gaussian(seed, stream, c_out, c_in * 9, std);
            Tensor::<4>::from_data(TensorData::new(w, shape), (device, dtype))
        };
        Self {
            weight: Param::from_tensor(weight),
            stride,
            border_gain: false,
        }
    }

    /// The same convolution with the border gain on or off.
    pub fn with_border_gain(mut self, on: bool) -> Self {
        self.border_gain = on;
        self
    }

    /// He et al.'s `fan_in = 9 c_in`.
    pub fn fan_in(c_in: usize) -> usize {
        9 * c_in
    }

    /// `[B, c_in, H, W] -> [B, c_out, H / stride, W / stride]`.
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let [_, _, h, w] = x.dims();
        let (device, dtype) = (x.device(), x.dtype());
        let options = ConvOptions::new([self.stride, self.stride], [1, 1], [1, 1], 1);
        let y = conv2d(x, self.weight.val(), None, options);
        if self.border_gain {
            y * border_gain([h, w], self.stride, &device, dtype)
        } else {
            y
        }
    }
}

/// Taps of a 3x3, padding-1 window centred on output index `i` (stride `stride`) that fall
/// inside an input axis of length `n`: 3 in the interior, 2 at a zero-padded edge.
pub fn taps_inside(n: usize, stride: usize, i: usize) -> usize {
    (0..3)
        .filter(|t| (1..=n).contains(&(i * stride + t)))
        .count()
}

/// `[1, 1, H_out, W_out]`: `sqrt(9 / taps(p))` at each output position `p` of a 3x3,
/// padding-1 convolution of stride `stride` on an `[H, W]` map, `taps(p)` the window's taps
/// inside the map (9 in the interior, 6 on an edge, 4 in a corner).
///
/// Why: with weights `N(0, c / (9 c_in))` an output's variance is `c / 9` times the sum of
/// the input mean squares under its window, so zero padding leaves a border output with
/// `taps(p) / 9` of the interior's variance (2/3 on an edge, 4/9 in a corner). This factor is
/// the fan-in rule applied per position (`fan_in(p) = taps(p) c_in`): every output then has
/// the mean of its window's input mean squares, and a map of uniform scale stays uniform.
/// It is the variance-preserving form of partial-convolution padding (Liu et al. 2018,
/// "Partial convolution based padding", which rescales by `9 / taps(p)`).
pub fn border_gain(input: [usize; 2], stride: usize, device: &Device, dtype: DType) -> Tensor<4> {
    let [h, w] = input;
    let (h_out, w_out) = ((h - 1) / stride + 1, (w - 1) / stride + 1);
    let gain = border_gains(input, stride);
    Tensor::<4>::from_data(TensorData::new(gain, [1, 1, h_out, w_out]), (device, dtype))
}

/// The values of [`border_gain`], row-major over the output map: `sqrt(9 / taps(p))`.
pub fn border_gains(input: [usize; 2], stride: usize) -> Vec<f64> {
    let [h, w] = input;
    let (h_out, w_out) = ((h - 1) / stride + 1, (w - 1) / stride + 1);
    let mut gain = Vec::with_capacity(h_out * w_out);
    for i in 0..h_out {
        for j in 0..w_out {
            let taps = taps_inside(h, stride, i) * taps_inside(w, stride, j);
            gain.push((9.0 / taps as f64).sqrt());
        }
    }
    gain
}

/// The classifier `z = a W + b`, weight stored `[fan_in, fan_out]` like [`crate::mlp::Dense`].
#[derive(Module, Debug)]
pub struct Classifier {
    pub weight: Param<Tensor<2>>,
    pub bias: Param<Tensor<1>>,
}

impl Classifier {
    /// Weights i.i.d. `N(0, std^2)` (zeros when `std == 0`), bias zero.
    pub fn new(
        fan_in: usize,
        fan_out: usize,
        std: f64,
        seed: u64,
        device: &Device,
        dtype: DType,
    ) -> Self {
        let weight = if std == 0.0 {
            Tensor::<2>::zeros([fan_in, fan_out], (device, dtype))
        } else {
            let w = init::gaussian(seed, CLASSIFIER_STREAM, fan_out, fan_in, std);
            let w = init::transpose(&w, fan_out, fan_in);
            Tensor::<2>::from_data(TensorData::new(w, [fan_in, fan_out]), (device, dtype))
        };
        Self {
            weight: Param::from_tensor(weight),
            bias: Param::from_tensor(Tensor::<1>::zeros([fan_out], (device, dtype))),
        }
    }

    pub fn forward(&self, a: Tensor<2>) -> Tensor<2> {
        a.matmul(self.weight.val()) + self.bias.val().unsqueeze_dim(0)
    }
}

/// A learnable scalar, shape `[1]` (Fixup's biases and multiplier).
pub fn scalar(value: f64, device: &Device, dtype: DType) -> Param<Tensor<1>> {
    Param::from_tensor(Tensor::<1>::full([1], value, (device, dtype)))
}

/// `x + b` for a scalar parameter `b`, broadcast over `[B, C, H, W]`.
pub fn add_scalar4(x: Tensor<4>, b: &Param<Tensor<1>>) -> Tensor<4> {
    x + b.val().reshape([1, 1, 1, 1])
}

/// `x * a` for a scalar parameter `a`, broadcast over `[B, C, H, W]`.
pub fn mul_scalar4(x: Tensor<4>, a: &Param<Tensor<1>>) -> Tensor<4> {
    x * a.val().reshape([1, 1, 1, 1])
}

/// Burn's BatchNorm with gamma 1, beta 0, running mean 0, running variance 1, every tensor in
/// `dtype` (the config creates them in the device's default float type).
///
/// Burn 0.22's `BatchNorm::forward` normalizes with the batch's statistics (and updates the
/// running ones, momentum 0.1) only when the input lives on an autodiff device *and* the
/// layer's `training` flag is on; otherwise it uses the running statistics. A model built on a
/// plain device is therefore in evaluation mode; `model.fork(&device.autodiff()).train()` puts
/// it in training mode, and `model.valid()` back in evaluation mode.
pub fn batch_norm(channels: usize, device: &Device, dtype: DType) -> BatchNorm {
    let mut bn = BatchNormConfig::new(channels).init(device);
    bn.gamma = Param::from_tensor(Tensor::<1>::ones([channels], (device, dtype)));
    bn.beta = Param::from_tensor(Tensor::<1>::zeros([channels], (device, dtype)));
    bn.running_mean = RunningState::new(Tensor::<1>::zeros([channels], (device, dtype)));
    bn.running_var = RunningState::new(Tensor::<1>::ones([channels], (device, dtype)));
    bn
}

/// He et al.'s option-A shortcut, parameter-free: the identity, or for a downsampling block
/// every second pixel in each direction (as a 1x1 stride-2 pooling) with the channels doubled
/// by zero padding.
pub fn shortcut(x: Tensor<4>, downsample: bool) -> Tensor<4> {
    if !downsample {
        return x;
    }
    let sub = subsample(x);
    let zeros = sub.zeros_like();
    Tensor::cat(vec![sub, zeros], 1)
}

/// Every second row and column, from the first: `[B, C, H, W] -> [B, C, ceil(H/2), ceil(W/2)]`
/// (the same grid a stride-2, padding-1 3x3 convolution centres on).
pub fn subsample(x: Tensor<4>) -> Tensor<4> {
    x.slice(s![.., .., ..;2, ..;2])
}

/// Global average pooling, `[B, C, H, W] -> [B, C]`.
pub fn global_avg_pool(x: Tensor<4>) -> Tensor<2> {
    let [b, c, _, _] = x.dims();
    x.mean_dim(3).mean_dim(2).reshape([b, c])
}
