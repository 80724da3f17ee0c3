//! The CIFAR ResNets of He et al. 2016 ("Deep residual learning for image recognition",
//! Sec. 4.2) in the variants Agarwal, Awasthi & Kale compare (Sec. 7, Fig. 4 and 5; App.
//! I.2, Fig. 8): with BatchNorm ([`block`]), with NormReLU and no normalization
//! ([`norm_relu`]), the same with SELU or any other activation of the registry, normalized,
//! in place of NormReLU (its block is [`NormReluBlock`] with the other activation), and with
//! Fixup initialization ([`fixup`]).
//!
//! `depth = 6n + 2`: a 3x3 convolution (the stem), three stages of `n` basic blocks (two 3x3
//! convolutions each; `base`, `2 base`, `4 base` channels; stride 2 in the first block of
//! stages 2 and 3), global average pooling, a linear classifier. Shortcuts are option A:
//! the identity, or for a downsampling block spatial subsampling by 2 with the new channels
//! zero-padded, so shortcuts have no parameters. [`config`] holds the configuration and
//! [`layers`] the shared pieces.

pub mod block;
pub mod config;
pub mod export;
pub mod fixup;
pub mod layers;
pub mod norm_relu;

use burn::module::{Module, ModuleVisitor, Param};
use burn::nn::BatchNorm;
use burn::tensor::activation::relu;
use burn::tensor::{DType, Device, Tensor};

pub use block::BnBlock;
pub use config::{ResNetConfig, ResNetVariant};
pub use fixup::FixupBlock;
pub use layers::{Classifier, Conv3x3};
pub use norm_relu::NormReluBlock;

use crate::activation::{Activation, Normalized};
use crate::error::ModelError;

/// One residual block of any variant. (The variants differ in size by a few hundred bytes of
/// handles; a network holds at most a few hundred blocks, and Burn 0.22 has no `Module` impl for
/// `Box<M>`, so they are not boxed.)
#[allow(clippy::large_enum_variant)]
#[derive(Module, Debug)]
pub enum Block {
    BatchNorm(BnBlock),
    /// The norm-free variants' block (norm_relu, selu, normalized: its activation tells
    /// them apart).
    NormRelu(NormReluBlock),
    Fixup(FixupBlock),
}

impl Block {
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        match self {
            Self::BatchNorm(b) => b.forward(x),
            Self::NormRelu(b) => b.forward(x),
            Self::Fixup(b) => b.forward(x),
        }
    }

    /// Whether the block halves the map and doubles the channels.
    pub fn downsamples(&self) -> bool {
        match self {
            Self::BatchNorm(b) => b.downsample,
            Self::NormRelu(b) => b.downsample,
            Self::Fixup(b) => b.downsample,
        }
    }
}

/// A CIFAR ResNet (see the module docs).
///
/// Modes (batch_norm): built on a plain device the network is in evaluation mode (BatchNorm
/// uses its running statistics); `net.fork(&device.autodiff()).train()` is the training
/// mode (batch statistics, running statistics updated with momentum 0.1), `net.valid()` the
/// evaluation mode again (see [`layers::batch_norm`]). `num_params()` counts the running
/// statistics too; [`ResNet::num_trainable_params`] does not.
#[derive(Module, Debug)]
pub struct ResNet {
    /// `in_channels -> base_width`, stride 1.
    pub stem: Conv3x3,
    /// batch_norm only: the stem's BatchNorm.
    pub stem_bn: Option<BatchNorm>,
    /// fixup only: the scalar bias before the stem's ReLU (`bias1` of the reference code).
    pub stem_bias: Option<Param<Tensor<1>>>,
    /// The `3n` residual blocks, stage by stage.
    pub blocks: Vec<Block>,
    /// fixup only: the scalar bias before the classifier (`bias2`).
    pub head_bias: Option<Param<Tensor<1>>>,
    pub classifier: Classifier,
    #[module(skip)]
    config: ResNetConfig,
    #[module(skip)]
    activation: Activation,
    /// The norm-free variants' normalized activation (`None` for batch_norm and fixup).
    #[module(skip)]
    normalized: Option<Normalized>,
}

impl ResNet {
    /// Builds the network from a validated config, weights drawn on the host (see
    /// [`crate::init::gaussian`]; stem stream 0, block `b`'s convolutions streams `2b + 1`
    /// and `2b + 2`, the classifier stream `2^32`) and created on `device` in `dtype`.
    ///
    /// Initialization: the stem and every convolution `N(0, c / fan_in)` with `fan_in =
    /// 9 c_in` and `c = 1 / E[s(Z)^2]` of the activation applied (He init, `c = 2`, for
    /// ReLU; `c = 1` for NormReLU and any normalized activation), except Fixup's branches
    /// (see [`fixup`]). The classifier is
    /// `N(0, 1 / fan_in)` (gain 1: no activation follows it), zero for Fixup; its bias zero.
    pub fn new(config: &ResNetConfig, device: &Device, dtype: DType) -> Result<Self, ModelError> {
        config.validate()?;
        let activation = config.activation();
        let normalized = config.normalized();
        let c = normalized.map_or_else(|| activation.c(), |n| n.c());
        let base = config.base_width;
        let stem = Conv3x3::new(
            [config.in_channels, base],
            1,
            (c / Conv3x3::fan_in(config.in_channels) as f64).sqrt(),
            config.seed,
            layers::STEM_STREAM,
            device,
            dtype,
        )
        .with_border_gain(config.border_gain());
        let variant = config.variant;
        let num_blocks = config.num_blocks();
        let mut blocks = Vec::with_capacity(num_blocks);
        let mut c_in = base;
        for stage in 0..3 {
            let c_out = config.stage_width(stage);
            for _ in 0..config.blocks_per_stage() {
                let index = blocks.len();
                let channels = [c_in, c_out];
                blocks.push(match variant {
                    ResNetVariant::BatchNorm => {
                        Block::BatchNorm(BnBlock::new(index, channels, config.seed, device, dtype))
                    }
                    ResNetVariant::NormRelu | ResNetVariant::Selu | ResNetVariant::Normalized => {
                        Block::NormRelu(NormReluBlock::new(
                            index,
                            channels,
                            normalized.expect("a norm-free variant's activation"),
                            config.border_gain(),
                            config.seed,
                            device,
                            dtype,
                        ))
                    }
                    ResNetVariant::Fixup => Block::Fixup(FixupBlock::new(
                        index,
                        num_blocks,
                        channels,
                        config.seed,
                        device,
                        dtype,
                    )),
                });
                c_in = c_out;
            }
        }
        let fixup = variant == ResNetVariant::Fixup;
        let features = config.feature_width();
        let classifier_std = if fixup {
            0.0
        } else {
            (1.0 / features as f64).sqrt()
        };
        Ok(Self {
            stem,
            stem_bn: (variant == ResNetVariant::BatchNorm)
                .then(|| layers::batch_norm(base, device, dtype)),
            stem_bias: fixup.then(|| layers::scalar(0.0, device, dtype)),
            blocks,
            head_bias: fixup.then(|| layers::scalar(0.0, device, dtype)),
            classifier: Classifier::new(
                features,
                config.num_classes,
                classifier_std,
                config.seed,
                device,
                dtype,
            ),
            config: config.clone(),
            activation,
            normalized,
        })
    }

    pub fn config(&self) -> &ResNetConfig {
        &self.config
    }
    pub fn variant(&self) -> ResNetVariant {
        self.config.variant
    }
    /// The activation `s`: ReLU, NormReLU with its constants, SELU, or the normalized
    /// variant's (before normalization: [`ResNet::normalized`]).
    pub fn activation(&self) -> &Activation {
        &self.activation
    }
    /// What the norm-free variants apply, `s` normalized; `None` for batch_norm and fixup.
    pub fn normalized(&self) -> Option<Normalized> {
        self.normalized
    }
    /// `3n`.
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Fixup's scalar parameters (the stem's `bias1`, each block's `bias1a`, `bias1b`,
    /// `bias2a`, `scale` and `bias2b`, the head's `bias2`), in that order; empty for the
    /// other variants. Fixup's authors train them at a tenth of the base learning rate
    /// (their CIFAR `cifar_train.py`: the `bias` and `scale` parameter groups at
    /// `base_lr / 10`).
    pub fn fixup_scalars(&self) -> Vec<&Param<Tensor<1>>> {
        let mut out: Vec<&Param<Tensor<1>>> = self.stem_bias.iter().collect();
        for b in &self.blocks {
            if let Block::Fixup(f) = b {
                out.extend([&f.bias1a, &f.bias1b, &f.bias2a, &f.scale, &f.bias2b]);
            }
        }
        out.extend(self.head_bias.iter());
        out
    }

    /// The parameters a gradient step updates (see [`trainable_params`]); `num_params()`
    /// also counts BatchNorm's running statistics.
    pub fn num_trainable_params(&self) -> usize {
        trainable_params(self)
    }

    /// Logits `[B, num_classes]` from flat rows `x: [B, C * H * W]` in CHW order (the CIFAR
    /// binary layout: the red plane row-major, then green, then blue).
    pub fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        self.forward_images(self.images(x))
    }

    /// Logits `[B, num_classes]` from images `x: [B, C, H, W]`.
    pub fn forward_images(&self, x: Tensor<4>) -> Tensor<2> {
        let mut h = self.forward_stem(x);
        for block in &self.blocks {
            h = block.forward(h);
        }
        self.forward_head(h)
    }

    /// The stem's output and every block's output, `3n + 1` maps `[B, C_l, H_l, W_l]`: the
    /// trace in which scale through depth is measured.
    pub fn forward_blocks(&self, x: Tensor<4>) -> Vec<Tensor<4>> {
        let mut trace = Vec::with_capacity(self.blocks.len() + 1);
        let mut h = self.forward_stem(x);
        for block in &self.blocks {
            trace.push(h.clone());
            h = block.forward(h);
        }
        trace.push(h);
        trace
    }

    /// Flat CHW rows `[B, C * H * W]` as images `[B, C, H, W]`.
    pub fn images(&self, x: Tensor<2>) -> Tensor<4> {
        let [batch, dim] = x.dims();
        let (c, s) = (self.config.in_channels, self.config.image_size);
        assert_eq!(
            dim,
            self.config.input_dim(),
            "ResNet input rows hold {dim} values, expected {c} x {s} x {s}"
        );
        x.reshape([batch, c, s, s])
    }

    /// The stem: `relu(BN(conv(x)))`, `s_hat(conv(x))` or `relu(conv(x) + bias1)`.
    pub fn forward_stem(&self, x: Tensor<4>) -> Tensor<4> {
        let z = self.stem.forward(x);
        match (&self.stem_bn, &self.stem_bias) {
            (Some(bn), _) => relu(bn.forward(z)),
            (None, Some(bias)) => relu(layers::add_scalar4(z, bias)),
            (None, None) => self
                .normalized
                .expect("a norm-free variant's activation")
                .forward(z),
        }
    }

    /// Global average pooling, Fixup's `bias2`, the classifier.
    pub fn forward_head(&self, h: Tensor<4>) -> Tensor<2> {
        self.classifier.forward(self.features(h))
    }

    /// The features the classifier reads, `[B, C]`: the last map average-pooled, plus
    /// Fixup's `bias2`.
    pub fn features(&self, h: Tensor<4>) -> Tensor<2> {
        let a = layers::global_avg_pool(h);
        match &self.head_bias {
            Some(b) => a + b.val().reshape([1, 1]),
            None => a,
        }
    }
}

/// [`Module::num_params`] without BatchNorm's running mean and variance: Burn 0.22 visits a
/// [`burn::module::RunningState`] as a float parameter, so `num_params` counts them too, but
/// they get no gradient (they are updated by the training-mode forward instead).
pub fn trainable_params<M: Module>(module: &M) -> usize {
    struct Count {
        path: Vec<String>,
        total: usize,
    }
    impl ModuleVisitor for Count {
        fn enter_module(&mut self, name: &str, _container_type: &str) {
            self.path.push(name.to_string());
        }
        fn exit_module(&mut self, _name: &str, _container_type: &str) {
            self.path.pop();
        }
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            let running = matches!(
                self.path.last().map(String::as_str),
                Some("running_mean" | "running_var")
            );
            if !running {
                self.total += param.lazy_shape().num_elements();
            }
        }
    }
    let mut count = Count {
        path: Vec::new(),
        total: 0,
    };
    module.visit(&mut count);
    count.total
}
