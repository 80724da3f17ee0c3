//! The CIFAR ResNet configuration: what a TOML `[resnet]` table holds.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::activation::{Activation, ActivationKind, NormRelu};
use crate::error::ModelError;

/// How a ResNet keeps its signal in scale: the three networks Agarwal et al. compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResNetVariant {
    /// He et al. 2016: conv-BN-ReLU, conv-BN, add the shortcut, ReLU; He init.
    BatchNorm,
    /// Agarwal, Awasthi & Kale: NormReLU in place of ReLU, no normalization layers,
    /// variance-preserving residual sums (see [`super::norm_relu`]).
    NormRelu,
    /// Zhang, Dauphin & Ma 2019: no normalization, zero-initialized branch ends, scalar
    /// biases and multipliers (see [`super::fixup`]).
    Fixup,
    /// Agarwal et al.'s App. I.2 (Fig. 8): the norm_relu network with SELU (Klambauer et
    /// al. 2017, `E[s(Z)] = 0`, `E[s(Z)^2] = 1` as NormReLU's) in place of NormReLU: the same
    /// blocks, initialization, merge and border gain (see [`super::norm_relu`]).
    Selu,
}

impl ResNetVariant {
    /// Every variant, in declaration order.
    pub fn all() -> Vec<Self> {
        ntk_names::all()
    }

    /// The config's name (the serde name: [`ntk_names`]).
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }

    /// The norm-free networks of a normalized activation (norm_relu, selu): no
    /// normalization layers, `N(0, 1 / fan_in)` weights, the `1 / sqrt 2` merge.
    pub fn normalized_activation(self) -> bool {
        matches!(self, Self::NormRelu | Self::Selu)
    }
}

impl fmt::Display for ResNetVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn default_num_classes() -> usize {
    10
}
fn default_base_width() -> usize {
    16
}
fn default_image_size() -> usize {
    32
}
fn default_in_channels() -> usize {
    3
}

/// A CIFAR ResNet of He et al. 2016 (Sec. 4.2): `depth = 6n + 2` layers with weights, a 3x3
/// stem, three stages of `n` basic blocks with `base_width`, `2 base_width`, `4 base_width`
/// channels on `image_size`, `image_size / 2`, `image_size / 4` maps, global average pooling
/// and a linear classifier. `base_width` and `image_size` exist so that tests can build tiny
/// networks; the paper's are 16 and 32.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResNetConfig {
    /// `6n + 2`: 20, 32, 44, 56, 110 in He et al. (any `n >= 1` is accepted).
    pub depth: usize,
    pub variant: ResNetVariant,
    #[serde(default = "default_num_classes")]
    pub num_classes: usize,
    /// Channels of the first stage (16 in He et al.).
    #[serde(default = "default_base_width")]
    pub base_width: usize,
    /// Height and width of the input images (32 for CIFAR).
    #[serde(default = "default_image_size")]
    pub image_size: usize,
    #[serde(default = "default_in_channels")]
    pub in_channels: usize,
    /// NormReLU's kink `b` (default [`crate::activation::NORM_RELU_DEFAULT_B`]); only for
    /// `variant = "norm_relu"`.
    #[serde(default)]
    pub kink: Option<f64>,
    /// norm_relu and selu only (default true): multiply every 3x3 convolution's output by
    /// `sqrt(9 / taps)` where its window overlaps the zero padding (see
    /// [`super::layers::border_gain`]), so that map borders keep unit scale through depth.
    /// `false` is plain zero padding, as in He et al. and presumably Agarwal et al.
    #[serde(default)]
    pub border_rescale: Option<bool>,
    #[serde(default)]
    pub seed: u64,
}

impl ResNetConfig {
    /// ResNet-`depth` with the paper's sizes (CIFAR-10: 10 classes, 16 base channels, 3 x 32 x
    /// 32 images) and seed 0.
    pub fn new(depth: usize, variant: ResNetVariant) -> Self {
        Self {
            depth,
            variant,
            num_classes: default_num_classes(),
            base_width: default_base_width(),
            image_size: default_image_size(),
            in_channels: default_in_channels(),
            kink: None,
            border_rescale: None,
            seed: 0,
        }
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    pub fn with_base_width(mut self, base_width: usize) -> Self {
        self.base_width = base_width;
        self
    }
    pub fn with_image_size(mut self, image_size: usize) -> Self {
        self.image_size = image_size;
        self
    }
    pub fn with_in_channels(mut self, in_channels: usize) -> Self {
        self.in_channels = in_channels;
        self
    }
    pub fn with_num_classes(mut self, num_classes: usize) -> Self {
        self.num_classes = num_classes;
        self
    }
    pub fn with_kink(mut self, b: f64) -> Self {
        self.kink = Some(b);
        self
    }
    pub fn with_border_rescale(mut self, on: bool) -> Self {
        self.border_rescale = Some(on);
        self
    }

    /// Checks every field; the error names the field (as `resnet.<field>`) and the value.
    pub fn validate(&self) -> Result<(), ModelError> {
        if self.depth > crate::config::MAX_DEPTH {
            return Err(ModelError::invalid(
                "resnet.depth",
                self.depth,
                "at most 10000 layers (He et al.'s deepest CIFAR ResNet has 1202)",
            ));
        }
        if self.depth < 8 || !(self.depth - 2).is_multiple_of(6) {
            return Err(ModelError::invalid(
                "resnet.depth",
                self.depth,
                "a CIFAR ResNet has 6n + 2 layers, n >= 1 (He et al.: 20, 32, 44, 56, 110)",
            ));
        }
        if self.num_classes == 0 {
            return Err(ModelError::invalid(
                "resnet.num_classes",
                0,
                "must be at least 1",
            ));
        }
        if self.base_width == 0 {
            return Err(ModelError::invalid(
                "resnet.base_width",
                0,
                "must be at least 1",
            ));
        }
        if self.in_channels == 0 {
            return Err(ModelError::invalid(
                "resnet.in_channels",
                0,
                "must be at least 1",
            ));
        }
        if self.image_size < 4 || !self.image_size.is_multiple_of(4) {
            return Err(ModelError::invalid(
                "resnet.image_size",
                self.image_size,
                "must be a positive multiple of 4 (two stride-2 stages)",
            ));
        }
        if let Some(b) = self.kink {
            if self.variant != ResNetVariant::NormRelu {
                return Err(ModelError::invalid(
                    "resnet.kink",
                    b,
                    format!("only norm_relu has a kink (variant is {})", self.variant),
                ));
            }
            if !b.is_finite() || b.abs() > 8.0 {
                return Err(ModelError::invalid(
                    "resnet.kink",
                    b,
                    "must be finite, in [-8, 8]",
                ));
            }
        }
        if let Some(on) = self.border_rescale
            && !self.variant.normalized_activation()
        {
            return Err(ModelError::invalid(
                "resnet.border_rescale",
                on,
                format!(
                    "only norm_relu and selu rescale their borders (variant is {})",
                    self.variant
                ),
            ));
        }
        Ok(())
    }

    /// Whether the convolutions carry the border gain: norm_relu and selu unless switched
    /// off.
    pub fn border_gain(&self) -> bool {
        self.variant.normalized_activation() && self.border_rescale.unwrap_or(true)
    }

    /// `n`, the basic blocks per stage (0 for a depth below 8, which `validate` refuses).
    pub fn blocks_per_stage(&self) -> usize {
        self.depth.saturating_sub(2) / 6
    }

    /// `L = 3n`, the residual blocks of the network (Fixup's `L`).
    pub fn num_blocks(&self) -> usize {
        3 * self.blocks_per_stage()
    }

    /// Channels of stage `s = 0, 1, 2`: `base_width * 2^s`.
    pub fn stage_width(&self, stage: usize) -> usize {
        self.base_width << stage
    }

    /// Channels entering the classifier, `4 base_width`.
    pub fn feature_width(&self) -> usize {
        self.stage_width(2)
    }

    /// Values per image in the flat (CHW) layout, `in_channels * image_size^2`.
    pub fn input_dim(&self) -> usize {
        self.in_channels * self.image_size * self.image_size
    }

    /// The activation: ReLU, NormReLU with the configured kink, or SELU.
    pub fn activation(&self) -> Activation {
        match self.variant {
            ResNetVariant::NormRelu => Activation::new(ActivationKind::NormRelu, self.kink),
            ResNetVariant::Selu => Activation::new(ActivationKind::Selu, None),
            ResNetVariant::BatchNorm | ResNetVariant::Fixup => {
                Activation::new(ActivationKind::Relu, None)
            }
        }
    }

    /// NormReLU's constants, for the norm_relu variant.
    pub fn norm_relu(&self) -> Option<NormRelu> {
        match self.activation() {
            Activation::NormRelu(n) => Some(n),
            _ => None,
        }
    }

    /// A short name: `resnet-110 batch_norm`, `resnet-110 norm_relu(b=-1) zero-padded`.
    pub fn describe(&self) -> String {
        let mut s = match self.norm_relu() {
            Some(n) if self.kink.is_some() => {
                format!("resnet-{} {}(b={})", self.depth, self.variant, n.b)
            }
            _ => format!("resnet-{} {}", self.depth, self.variant),
        };
        if self.variant.normalized_activation() && !self.border_gain() {
            s.push_str(" zero-padded");
        }
        s
    }
}
