//! Fixup (Zhang, Dauphin & Ma 2019, "Fixup initialization: residual learning without
//! normalization", Sec. 3 and the CIFAR code `cifar/models/fixup_resnet_cifar.py` of
//! hongyi-zhang/Fixup): no normalization layers, and
//!
//! 1. the last layer of every residual branch (`conv2`) and the classifier (weight and
//!    bias) start at zero;
//! 2. the other branch layer (`conv1`) gets He init scaled by `L^(-1/(2m-2)) = L^(-1/2)`
//!    (`m = 2` layers per branch, `L = 3n` residual blocks);
//! 3. a scalar multiplier (`scale`, init 1) per branch and scalar biases (init 0) before
//!    each convolution, linear layer and activation.
//!
//! The block, as in the reference code:
//! `out = conv1(x + bias1a)`, `out = relu(out + bias1b)`, `out = conv2(out + bias2a)`,
//! `out = out * scale + bias2b`, `y = relu(out + shortcut(x + bias1a))`, the option-A
//! shortcut taking `x + bias1a` when it downsamples and `x` otherwise. The stem is
//! `relu(conv(x) + bias1)` and the head `fc(pool(x) + bias2)` (see [`super::ResNet`]).
//!
//! At initialization every branch outputs exactly zero, so each block returns
//! `relu(shortcut(x)) = shortcut(x)` (its input is a ReLU output, hence non-negative).
//!
//! One difference from the reference code: it draws `conv1` with `std = sqrt(2 / (c_out 9))
//! L^(-1/2)` (PyTorch's fan_out), which for the two downsampling blocks is `1 / sqrt 2` of the
//! fan_in rule used here (He et al.'s fan_in, as for the other variants); elsewhere
//! `c_in = c_out` and the two agree. Its stem keeps PyTorch's default init; ours is He.

use burn::module::{Module, Param};
use burn::tensor::activation::relu;
use burn::tensor::{DType, Device, Tensor};

use super::layers::{self, Conv3x3};

/// One Fixup basic block.
#[derive(Module, Debug)]
pub struct FixupBlock {
    pub bias1a: Param<Tensor<1>>,
    pub conv1: Conv3x3,
    pub bias1b: Param<Tensor<1>>,
    pub bias2a: Param<Tensor<1>>,
    pub conv2: Conv3x3,
    pub scale: Param<Tensor<1>>,
    pub bias2b: Param<Tensor<1>>,
    /// Stride 2 and doubled channels: the option-A shortcut subsamples and zero-pads.
    pub downsample: bool,
}

impl FixupBlock {
    /// Block `index` (0-based over the network) of `num_blocks = L`, from `c_in` to `c_out`
    /// channels: `conv1 ~ N(0, 2 / (9 c_in) / L)`, `conv2 = 0`, biases 0, scale 1.
    pub fn new(
        index: usize,
        num_blocks: usize,
        channels: [usize; 2],
        seed: u64,
        device: &Device,
        dtype: DType,
    ) -> Self {
        let [c_in, c_out] = channels;
        let downsample = c_out != c_in;
        let std1 = (2.0 / Conv3x3::fan_in(c_in) as f64).sqrt() / (num_blocks as f64).sqrt();
        Self {
            bias1a: layers::scalar(0.0, device, dtype),
            conv1: Conv3x3::new(
                [c_in, c_out],
                if downsample { 2 } else { 1 },
                std1,
                seed,
                layers::block_stream(index, 0),
                device,
                dtype,
            ),
            bias1b: layers::scalar(0.0, device, dtype),
            bias2a: layers::scalar(0.0, device, dtype),
            conv2: Conv3x3::new(
                [c_out, c_out],
                1,
                0.0,
                seed,
                layers::block_stream(index, 1),
                device,
                dtype,
            ),
            scale: layers::scalar(1.0, device, dtype),
            bias2b: layers::scalar(0.0, device, dtype),
            downsample,
        }
    }

    /// The residual branch alone, `conv2(relu(conv1(x + bias1a) + bias1b) + bias2a) * scale
    /// + bias2b` (zero at initialization).
    pub fn branch(&self, x: Tensor<4>) -> Tensor<4> {
        let out = self.conv1.forward(layers::add_scalar4(x, &self.bias1a));
        let out = relu(layers::add_scalar4(out, &self.bias1b));
        let out = self.conv2.forward(layers::add_scalar4(out, &self.bias2a));
        layers::add_scalar4(layers::mul_scalar4(out, &self.scale), &self.bias2b)
    }

    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let identity = if self.downsample {
            layers::shortcut(layers::add_scalar4(x.clone(), &self.bias1a), true)
        } else {
            x.clone()
        };
        relu(self.branch(x) + identity)
    }
}
