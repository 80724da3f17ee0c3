//! What a config trains: the network spec, its construction, and the sweep axes it takes.

use burn::tensor::{DType, Device};
use ntk_model::{ActivationKind, Mlp, MlpConfig, Normalization};

/// The network a run trains.
pub type Model = Mlp;

/// A network description from a config's `[model]` table.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelSpec {
    Mlp(MlpConfig),
}

impl ModelSpec {
    /// Builds the network for inputs of dimension `input_dim`.
    pub fn build(&self, input_dim: usize, device: &Device, dtype: DType) -> Result<Model, String> {
        match self {
            Self::Mlp(m) => {
                let cfg = MlpConfig {
                    input_dim,
                    ..m.clone()
                };
                Mlp::new(&cfg, device, dtype).map_err(|e| format!("model: {e}"))
            }
        }
    }

    pub fn depth(&self) -> usize {
        match self {
            Self::Mlp(m) => m.depth,
        }
    }

    /// Short name of the network, e.g. `mlp depth 3 width 512 relu`.
    pub fn describe(&self) -> String {
        match self {
            Self::Mlp(m) => {
                let norm = match m.normalization {
                    Normalization::None => String::new(),
                    n => format!(" {}", normalization_name(n)),
                };
                format!(
                    "mlp depth {} width {} {}{norm}",
                    m.depth, m.width, m.activation
                )
            }
        }
    }

    /// (activation, normalization) names for tables.
    pub fn activation_name(&self) -> String {
        match self {
            Self::Mlp(m) => m.activation.to_string(),
        }
    }
    pub fn normalization_name(&self) -> String {
        match self {
            Self::Mlp(m) => normalization_name(m.normalization).to_string(),
        }
    }
    pub fn width(&self) -> usize {
        match self {
            Self::Mlp(m) => m.width,
        }
    }

    pub fn with_depth(mut self, depth: usize) -> Self {
        match &mut self {
            Self::Mlp(m) => m.depth = depth,
        }
        self
    }
    pub fn with_activation(mut self, a: ActivationKind) -> Result<Self, String> {
        match &mut self {
            Self::Mlp(m) => m.activation = a,
        }
        Ok(self)
    }
    pub fn with_normalization(mut self, n: Normalization) -> Result<Self, String> {
        match &mut self {
            Self::Mlp(m) => m.normalization = n,
        }
        Ok(self)
    }
    pub fn with_width(mut self, width: usize) -> Result<Self, String> {
        match &mut self {
            Self::Mlp(m) => m.width = width,
        }
        Ok(self)
    }
    pub fn with_seed(mut self, seed: u64) -> Self {
        match &mut self {
            Self::Mlp(m) => m.seed = seed,
        }
        self
    }
    pub fn seed(&self) -> u64 {
        match self {
            Self::Mlp(m) => m.seed,
        }
    }
}

pub fn normalization_name(n: Normalization) -> &'static str {
    match n {
        Normalization::None => "none",
        Normalization::BatchNorm => "batch_norm",
        Normalization::LayerNorm => "layer_norm",
    }
}
