//! He et al. 2016's basic block with BatchNorm (Sec. 3.3 and 4.2, Fig. 2):
//! `y = relu(BN2(conv2(relu(BN1(conv1(x))))) + shortcut(x))`, convolutions without bias,
//! He (Kaiming normal, fan_in, gain sqrt 2) weights, BN gamma 1 and beta 0.

use burn::module::Module;
use burn::nn::BatchNorm;
use burn::tensor::activation::relu;
use burn::tensor::{DType, Device, Tensor};

use super::layers::{self, Conv3x3};

/// One basic block with BatchNorm.
#[derive(Module, Debug)]
pub struct BnBlock {
    pub conv1: Conv3x3,
    pub bn1: BatchNorm,
    pub conv2: Conv3x3,
    pub bn2: BatchNorm,
    /// Stride 2 and doubled channels: the option-A shortcut subsamples and zero-pads.
    pub downsample: bool,
}

impl BnBlock {
    /// Block `index` (0-based over the network) from `c_in` to `c_out` channels; weights
    /// `N(0, 2 / fan_in)`, `fan_in = 9 c_in` for each convolution.
    pub fn new(
        index: usize,
        channels: [usize; 2],
        seed: u64,
        device: &Device,
        dtype: DType,
    ) -> Self {
        let [c_in, c_out] = channels;
        let downsample = c_out != c_in;
        let he = |c: usize| (2.0 / Conv3x3::fan_in(c) as f64).sqrt();
        let stride = if downsample { 2 } else { 1 };
        Self {
            conv1: Conv3x3::new(
                [c_in, c_out],
                stride,
                he(c_in),
                seed,
                layers::block_stream(index, 0),
                device,
                dtype,
            ),
            bn1: layers::batch_norm(c_out, device, dtype),
            conv2: Conv3x3::new(
                [c_out, c_out],
                1,
                he(c_out),
                seed,
                layers::block_stream(index, 1),
                device,
                dtype,
            ),
            bn2: layers::batch_norm(c_out, device, dtype),
            downsample,
        }
    }

    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let h = relu(self.bn1.forward(self.conv1.forward(x.clone())));
        let r = self.bn2.forward(self.conv2.forward(h));
        relu(r + layers::shortcut(x, self.downsample))
    }
}
