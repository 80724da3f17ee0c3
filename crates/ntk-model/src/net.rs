//! The model a trainer holds: an MLP ([`Mlp`]) or a CIFAR ResNet ([`ResNet`]), one forward
//! on flat rows `[B, d]` for both.

use burn::module::Module;
use burn::tensor::{DType, Device, Tensor};

use crate::config::Normalization;
use crate::mlp::Mlp;
use crate::resnet::ResNet;

/// One per trainer (the size difference of the variants, a few hundred bytes, does not matter;
/// and Burn 0.22 has no `Module` impl for `Box<M>`).
#[allow(clippy::large_enum_variant)]
#[derive(Module, Debug)]
pub enum Net {
    Mlp(Mlp),
    ResNet(ResNet),
}

impl Net {
    /// The spec it was built from (an MLP's with its input dimension filled in): what the
    /// kinds share (depth, width, seed, classes, which engines compute it) is asked of it.
    pub fn spec(&self) -> crate::NetSpec {
        match self {
            Self::Mlp(m) => crate::NetSpec::Mlp(m.config().clone()),
            Self::ResNet(r) => crate::NetSpec::ResNet(r.config().clone()),
        }
    }

    /// The values of one input row: an MLP's `input_dim`, a ResNet's `C * S * S`.
    pub fn input_dim(&self) -> usize {
        match self {
            Self::Mlp(m) => m.config().input_dim,
            Self::ResNet(r) => r.config().input_dim(),
        }
    }

    /// A network of the same spec built anew on `device` in `dtype` (its parameters drawn
    /// again from its seed).
    pub fn rebuilt(&self, device: &Device, dtype: DType) -> Result<Self, crate::ModelError> {
        self.spec().build(self.input_dim(), device, dtype)
    }

    /// Whether the network has BatchNorm layers ([`crate::NetSpec::has_batch_norm`]).
    pub fn has_batch_norm(&self) -> bool {
        self.spec().has_batch_norm()
    }

    /// The MLP, when it is one (what only MLPs have: the structured kernel's layer Gram
    /// matrices, the embedding angles).
    pub fn as_mlp(&self) -> Option<&Mlp> {
        match self {
            Self::Mlp(m) => Some(m),
            Self::ResNet(_) => None,
        }
    }

    /// The activation of its hidden layers.
    pub fn activation(&self) -> &crate::Activation {
        match self {
            Self::Mlp(m) => m.activation(),
            Self::ResNet(r) => r.activation(),
        }
    }

    /// Whether any layer adds a bias (every ResNet's classifier does).
    pub fn has_bias(&self) -> bool {
        match self {
            Self::Mlp(m) => m.config().bias,
            Self::ResNet(_) => true,
        }
    }

    /// Every layer's representation of the rows `x` `[B, d]`, named, each `[B, width]`: an
    /// MLP's hidden activations `a_1..a_L` (after normalization and activation: `hidden l`),
    /// or a ResNet's stem, each block's output (`block k`) and the pooled features the
    /// classifier reads (`pooled`). The inputs themselves are not among them.
    pub fn representations(&self, x: Tensor<2>) -> Vec<(String, Tensor<2>)> {
        match self {
            Self::Mlp(m) => m
                .forward_trace(x)
                .inputs
                .into_iter()
                .enumerate()
                .skip(1)
                .map(|(l, a)| (format!("hidden {l}"), a))
                .collect(),
            Self::ResNet(r) => {
                let maps = r.forward_blocks(r.images(x));
                let pooled = maps.last().cloned().map(|h| r.features(h));
                let mut out: Vec<(String, Tensor<2>)> = maps
                    .into_iter()
                    .enumerate()
                    .map(|(k, h)| {
                        let name = if k == 0 {
                            "stem".to_string()
                        } else {
                            format!("block {k}")
                        };
                        (name, h.flatten(1, 3))
                    })
                    .collect();
                out.extend(pooled.map(|p| ("pooled".to_string(), p)));
                out
            }
        }
    }

    /// Outputs `[B, k]` from flat rows `[B, d]` (a ResNet reads each row as a CHW image).
    pub fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        match self {
            Self::Mlp(m) => m.forward(x),
            Self::ResNet(r) => r.forward(x),
        }
    }

    /// A short name: `mlp depth 10 width 512 relu` (plus the normalization when there is
    /// one), `resnet-110 batch_norm`.
    pub fn describe(&self) -> String {
        match self {
            Self::Mlp(m) => {
                let c = m.config();
                let mut s = format!("mlp depth {} width {} {}", c.depth, c.width, m.activation());
                match c.normalization {
                    Normalization::None => {}
                    Normalization::BatchNorm => s.push_str(" batch_norm"),
                    Normalization::LayerNorm => s.push_str(" layer_norm"),
                }
                s
            }
            Self::ResNet(r) => r.config().describe(),
        }
    }
}

impl From<Mlp> for Net {
    fn from(m: Mlp) -> Self {
        Self::Mlp(m)
    }
}

impl From<ResNet> for Net {
    fn from(r: ResNet) -> Self {
        Self::ResNet(r)
    }
}
