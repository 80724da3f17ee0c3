//! The words of the layer: which [`Engine`] runs a network's passes, what a run asks for
//! ([`EngineChoice`], `train.engine`), and the form of the optimizer state an engine's
//! checkpoints hold ([`StateForm`]).

use serde::{Deserialize, Serialize};

/// What runs a network's forward and backward passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Burn's autodiff on the run's backend ([`crate::burn`]): any network.
    Burn,
    /// The host engines on host GEMMs ([`crate::host`]): MLPs without normalization layers
    /// and the CIFAR ResNets.
    Host,
    /// The cuDNN engine (`crate::cudnn`, feature `cudnn`): CIFAR ResNets in f32 on an
    /// NVIDIA GPU.
    Cudnn,
}

impl Engine {
    /// Its name in configs, logs and messages.
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }

    /// The form of the optimizer state its checkpoints hold: the cuDNN engine writes the
    /// host engine's momentum buffers, so its runs resume on the host and back.
    pub fn state_form(self) -> StateForm {
        match self {
            Self::Burn => StateForm::Burn,
            Self::Host | Self::Cudnn => StateForm::Host,
        }
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `train.engine`: the engine a run asks for ([`fn@crate::choose`] decides).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineChoice {
    /// The cuDNN engine for a CIFAR ResNet in f32 where it starts, else the host engine on a
    /// CPU backend where it applies, else Burn's.
    #[default]
    Auto,
    Burn,
    Host,
    /// The cuDNN engine (built with the `cudnn` feature): CIFAR ResNets in f32 on an NVIDIA
    /// GPU.
    Cudnn,
}

impl EngineChoice {
    /// Whether it is `auto` (left out of a config written back).
    pub fn is_auto(&self) -> bool {
        *self == Self::Auto
    }

    /// Its name in configs and messages.
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }
}

/// Whose optimizer state a checkpoint holds, as its pointer records it (`"engine"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StateForm {
    /// Burn's optimizer (`optim.bpk`).
    #[default]
    Burn,
    /// The host engine's momentum buffers (`velocity.npy`); the cuDNN engine writes these
    /// too.
    Host,
}

impl StateForm {
    /// Its name in the pointer and in messages.
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }
}

impl std::fmt::Display for StateForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
