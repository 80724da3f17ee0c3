//! The CIFAR ResNet configuration: what a TOML `[resnet]` table holds.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::activation::{Activation, ActivationKind, NormRelu, Normalized};
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
    /// The norm_relu network with any activation of the registry (`resnet.activation`),
    /// normalized to `E[s(Z)] = 0`, `E[s(Z)^2] = 1` ([`Normalized`]) in place of NormReLU:
    /// the same blocks, initialization, merge and border gain. `norm_relu` is this with
    /// NormReLU, `selu` with SELU (both normalized already, applied as they are).
    Normalized,
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

    /// The norm-free networks of a normalized activation (norm_relu, selu, normalized): no
    /// normalization layers, `N(0, 1 / fan_in)` weights, the `1 / sqrt 2` merge.
    pub fn normalized_activation(self) -> bool {
        matches!(self, Self::NormRelu | Self::Selu | Self::Normalized)
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
    /// The activation of `variant = "normalized"` (required there, refused elsewhere: the
    /// other variants' names fix theirs), any of the registry, normalized ([`Normalized`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation: Option<ActivationKind>,
    /// Its parameter, for a family that has one (NormReLU's kink `b`, LeakyReLU's slope
    /// `alpha`); default the family's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_param: Option<f64>,
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
            activation: None,
            activation_param: None,
            seed: 0,
        }
    }

    /// [`Self::new`], with GELU for the normalized variant (which needs an activation):
    /// one network of every variant, for loops over [`ResNetVariant::all`].
    pub fn example(depth: usize, variant: ResNetVariant) -> Self {
        match variant {
            ResNetVariant::Normalized => Self::new_normalized(depth, ActivationKind::Gelu),
            _ => Self::new(depth, variant),
        }
    }

    /// `variant = "normalized"` with the activation `kind` (its parameter the family's
    /// default).
    pub fn new_normalized(depth: usize, kind: ActivationKind) -> Self {
        Self {
            activation: Some(kind),
            ..Self::new(depth, ResNetVariant::Normalized)
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
    pub fn with_activation_param(mut self, p: f64) -> Self {
        self.activation_param = Some(p);
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
        self.validate_activation()?;
        if let Some(on) = self.border_rescale
            && !self.variant.normalized_activation()
        {
            return Err(ModelError::invalid(
                "resnet.border_rescale",
                on,
                format!(
                    "only norm_relu, selu and normalized rescale their borders (variant is {})",
                    self.variant
                ),
            ));
        }
        Ok(())
    }

    /// `activation` and `activation_param`: given exactly for `variant = "normalized"`, the
    /// parameter in its family's range, the activation normalizable.
    fn validate_activation(&self) -> Result<(), ModelError> {
        let normalized = self.variant == ResNetVariant::Normalized;
        match (self.activation, normalized) {
            (None, true) => {
                return Err(ModelError::invalid(
                    "resnet.activation",
                    "(missing)",
                    format!(
                        "variant = \"normalized\" needs an activation, one of: {}",
                        ActivationKind::list()
                    ),
                ));
            }
            (Some(kind), false) => {
                return Err(ModelError::invalid(
                    "resnet.activation",
                    kind,
                    format!(
                        "only variant = \"normalized\" takes an activation (variant {} runs {}); \
                         for another activation use variant = \"normalized\"",
                        self.variant,
                        self.fixed_activation()
                    ),
                ));
            }
            _ => {}
        }
        if let Some(p) = self.activation_param {
            let Some(kind) = self.activation else {
                return Err(ModelError::invalid(
                    "resnet.activation_param",
                    p,
                    "only variant = \"normalized\" with an activation that has a parameter \
                     takes one",
                ));
            };
            kind.check_param(Some(p))
                .map_err(|e| ModelError::invalid("resnet.activation_param", p, e.to_string()))?;
        }
        if normalized && !Normalized::new(self.activation()).is_finite() {
            return Err(ModelError::invalid(
                "resnet.activation",
                self.activation(),
                "has no variance under N(0, 1): it cannot be normalized",
            ));
        }
        Ok(())
    }

    /// The activation a variant other than `normalized` fixes by its name.
    fn fixed_activation(&self) -> ActivationKind {
        match self.variant {
            ResNetVariant::NormRelu => ActivationKind::NormRelu,
            ResNetVariant::Selu => ActivationKind::Selu,
            ResNetVariant::BatchNorm | ResNetVariant::Fixup | ResNetVariant::Normalized => {
                ActivationKind::Relu
            }
        }
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

    /// Values per image in the flat (CHW) layout, `in_channels * image_size^2`; beyond
    /// `usize` it saturates, so it never equals a data set's dimension by wrapping around
    /// (fifteenth hostile round, D7: `image_size = 2^63 - 4` read `3 x (2^63 - 4)^2 = 48`).
    pub fn input_dim(&self) -> usize {
        self.in_channels
            .saturating_mul(self.image_size)
            .saturating_mul(self.image_size)
    }

    /// [`Self::input_dim`] for messages: the exact product, in exponent form beyond 128 bits.
    pub fn input_dim_text(&self) -> String {
        let (c, s) = (self.in_channels as u128, self.image_size as u128);
        match c.checked_mul(s).and_then(|v| v.checked_mul(s)) {
            Some(v) => v.to_string(),
            None => format!("{:.3e}", c as f64 * (s as f64) * (s as f64)),
        }
    }

    /// The activation `s`: ReLU (batch_norm, fixup), NormReLU with the configured kink,
    /// SELU, or `resnet.activation` with its parameter (normalized; the norm-free variants
    /// apply [`Self::normalized`]).
    pub fn activation(&self) -> Activation {
        match (self.variant, self.activation) {
            (ResNetVariant::NormRelu, _) => Activation::new(ActivationKind::NormRelu, self.kink),
            (ResNetVariant::Normalized, Some(kind)) => Activation::new(kind, self.activation_param),
            _ => Activation::new(self.fixed_activation(), None),
        }
    }

    /// What the norm-free variants (norm_relu, selu, normalized) apply: [`Self::activation`]
    /// normalized ([`Normalized`]: NormReLU and SELU as they are); `None` for batch_norm and
    /// fixup.
    pub fn normalized(&self) -> Option<Normalized> {
        self.variant
            .normalized_activation()
            .then(|| Normalized::new(self.activation()))
    }

    /// NormReLU's constants, for the norm_relu variant.
    pub fn norm_relu(&self) -> Option<NormRelu> {
        match self.activation() {
            Activation::NormRelu(n) => Some(n),
            _ => None,
        }
    }

    /// A short name: `resnet-110 batch_norm`, `resnet-110 norm_relu(b=-1) zero-padded`,
    /// `resnet-20 normalized gelu`.
    pub fn describe(&self) -> String {
        let mut s = match self.norm_relu() {
            Some(n) if self.kink.is_some() => {
                format!("resnet-{} {}(b={})", self.depth, self.variant, n.b)
            }
            _ if self.variant == ResNetVariant::Normalized => {
                format!(
                    "resnet-{} {} {}",
                    self.depth,
                    self.variant,
                    self.activation()
                )
            }
            _ => format!("resnet-{} {}", self.depth, self.variant),
        };
        if self.variant.normalized_activation() && !self.border_gain() {
            s.push_str(" zero-padded");
        }
        s
    }
}
