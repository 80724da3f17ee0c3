//! The model a trainer holds: an MLP ([`Mlp`]) or a CIFAR ResNet ([`ResNet`]), one forward
//! on flat rows `[B, d]` for both.

use burn::module::Module;
use burn::tensor::Tensor;

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
    /// Whether the network has BatchNorm layers ([`crate::NetSpec::has_batch_norm`]).
    pub fn has_batch_norm(&self) -> bool {
        match self {
            Self::Mlp(m) => crate::NetSpec::Mlp(m.config().clone()).has_batch_norm(),
            Self::ResNet(r) => crate::NetSpec::ResNet(r.config().clone()).has_batch_norm(),
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
