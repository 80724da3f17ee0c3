//! The model a trainer holds: an MLP ([`Mlp`]), a CIFAR ResNet ([`ResNet`]) or a network
//! read from an ONNX file ([`OnnxModel`]), one forward on flat rows `[B, d]` for all.

use burn::module::Module;
use burn::tensor::{DType, Device, Tensor};

use ntk_onnx::OnnxModel;

use crate::config::Normalization;
use crate::mlp::Mlp;
use crate::onnx::OnnxSpec;
use crate::resnet::ResNet;

/// One per trainer (the size difference of the variants, a few hundred bytes, does not matter;
/// and Burn 0.22 has no `Module` impl for `Box<M>`).
#[allow(clippy::large_enum_variant)]
#[derive(Module, Debug)]
pub enum Net {
    Mlp(Mlp),
    ResNet(ResNet),
    /// A network read from an ONNX file: its initializers are the parameters.
    Onnx(OnnxModel),
}

impl Net {
    /// The spec it was built from (an MLP's with its input dimension filled in): what the
    /// kinds share (depth, width, seed, classes, which engines compute it) is asked of it.
    pub fn spec(&self) -> crate::NetSpec {
        match self {
            Self::Mlp(m) => crate::NetSpec::Mlp(m.config().clone()),
            Self::ResNet(r) => crate::NetSpec::ResNet(r.config().clone()),
            Self::Onnx(o) => crate::NetSpec::Onnx(OnnxSpec::of(o)),
        }
    }

    /// The layers a sample's rounding errors pass through, for the rule of how finely a
    /// kernel resolves an angle (`ntk_kernel::angles::Resolution`): an MLP's L + 1
    /// linear maps, a ResNet's depth `6n + 2`, an ONNX graph's parameter tensors.
    pub fn rounding_depth(&self) -> usize {
        match self {
            Self::Mlp(m) => m.depth() + 1,
            Self::ResNet(r) => r.config().depth,
            Self::Onnx(o) => o.params.len().max(1),
        }
    }

    /// The values of one input row: an MLP's `input_dim`, a ResNet's `C * S * S`.
    pub fn input_dim(&self) -> usize {
        match self {
            Self::Mlp(m) => m.config().input_dim,
            Self::ResNet(r) => r.config().input_dim(),
            Self::Onnx(o) => o.input_dim(),
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
            Self::ResNet(_) | Self::Onnx(_) => None,
        }
    }

    /// The activation of its hidden layers; `None` for an ONNX graph, whose operators are
    /// its own.
    pub fn activation(&self) -> Option<&crate::Activation> {
        match self {
            Self::Mlp(m) => Some(m.activation()),
            Self::ResNet(r) => Some(r.activation()),
            Self::Onnx(_) => None,
        }
    }

    /// Whether any layer adds a bias (every ResNet's classifier does; an ONNX graph is
    /// taken to, its initializers not being told apart).
    pub fn has_bias(&self) -> bool {
        match self {
            Self::Mlp(m) => m.config().bias,
            Self::ResNet(_) | Self::Onnx(_) => true,
        }
    }

    /// Every layer's representation of the rows `x` `[B, d]`, named, each `[B, width]`: an
    /// MLP's hidden activations `a_1..a_L` (after normalization and activation: `hidden l`),
    /// or a ResNet's stem, each block's output (`block k`) and the pooled features the
    /// classifier reads (`pooled`). The inputs themselves are not among them. An ONNX graph
    /// has no layers of its own naming (its intermediate values are the file's): none
    /// (training refuses `[representations]` for it).
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
            Self::Onnx(_) => Vec::new(),
        }
    }

    /// Outputs `[B, k]` from flat rows `[B, d]` (a ResNet reads each row as a CHW image).
    pub fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        match self {
            Self::Mlp(m) => m.forward(x),
            Self::ResNet(r) => r.forward(x),
            Self::Onnx(o) => o.forward(x),
        }
    }

    /// A short name: `mlp depth 10 width 512 relu` (plus the normalization when there is
    /// one), `resnet-110 batch_norm`, `onnx net.onnx (1281 parameters)`.
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
            Self::Onnx(o) => OnnxSpec::of(o).describe(),
        }
    }
}

impl From<Mlp> for Net {
    fn from(m: Mlp) -> Self {
        Self::Mlp(m)
    }
}

impl From<OnnxModel> for Net {
    fn from(o: OnnxModel) -> Self {
        Self::Onnx(o)
    }
}

impl From<ResNet> for Net {
    fn from(r: ResNet) -> Self {
        Self::ResNet(r)
    }
}
