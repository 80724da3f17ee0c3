//! The MLP configuration: what a TOML `[model]` table holds.

use serde::{Deserialize, Serialize};

use crate::activation::{Activation, ActivationKind};
use crate::error::ModelError;

/// How weights are initialized and where the forward scales sit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Parameterization {
    /// NTK parameterization: all weights i.i.d. N(0, 1), the scale lives in the forward
    /// pass (see [`NtkConvention`] for exactly where).
    Ntk,
    /// Standard (Kaiming-style) parameterization: hidden weights N(0, c / fan_in), the
    /// output layer N(0, 1 / fan_in), no forward scale.
    Standard,
}

/// Where the NTK parameterization puts its scales. With `a_0 = x`, hidden layers
/// `z_l = beta_l W_l a_{l-1} (+ b_l)`, `a_l = gamma_l s(z_l)`, output
/// `f = beta_out W_{L+1} a_L (+ b_out)`:
///
/// | convention     | beta_l          | gamma_1       | gamma_l (l >= 2) | beta_out        |
/// |----------------|-----------------|---------------|------------------|-----------------|
/// | `paper`        | 1               | sqrt(c / m)   | sqrt(c / m)      | 1               |
/// | `official`     | 1               | sqrt(c / d)   | sqrt(c / m)      | sqrt(c / m)     |
/// | `unit_variance`| 1 / sqrt(fan_in)| sqrt(c)       | sqrt(c)          | 1 / sqrt(m)     |
///
/// `paper` is Liu & Hui Eq. (1) (`alpha_l = sqrt(c/m_l) s(W_l alpha_{l-1})`,
/// `f = W_{L+1} alpha_L`, last layer unscaled): pre-activations have variance `||x||^2`, and
/// `||alpha_l|| = ||x||` at infinite width. `official` is the Like-Hui code: every layer, the
/// last too, scaled by `sqrt(c / fan_in)` after its matrix product. `unit_variance` is
/// neural-tangents' NTK parameterization: pre-activations are N(0, ||x||^2 / d), so inputs
/// with unit-variance coordinates give the N(0, 1) pre-activations Agarwal et al. assume.
/// For relu and linear all three differ by one global constant on K (positive homogeneity),
/// so kappa and every angle agree; for norm_relu, gelu, tanh they do not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NtkConvention {
    #[default]
    Paper,
    Official,
    UnitVariance,
}

/// Normalization layers of Agarwal et al.'s fully connected comparisons.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Normalization {
    #[default]
    None,
    /// `a_l = gamma_l s(BN(z_l))`: BatchNorm between the matrix product and the activation.
    BatchNorm,
    /// `a_l = LN(gamma_l s(z_l))`: LayerNorm after the activation (Agarwal et al., Lemma 2.1).
    LayerNorm,
}

fn default_parameterization() -> Parameterization {
    Parameterization::Ntk
}
fn default_output_dim() -> usize {
    1
}

/// The deepest network (MLP hidden layers, ResNet layers) the models build: far beyond the
/// papers (depth 10 MLPs, ResNet-110; He et al.'s deepest CIFAR ResNet has 1202), and a
/// clear error instead of hours spent building a million layers.
pub const MAX_DEPTH: usize = 10_000;

/// An MLP: `depth` hidden layers of `width` units (depth 0 is the linear model `f = W x`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MlpConfig {
    /// Input dimension d (the probe and trainer fill it in from the data when absent).
    #[serde(default)]
    pub input_dim: usize,
    pub width: usize,
    /// Number of hidden layers L.
    pub depth: usize,
    #[serde(default = "default_output_dim")]
    pub output_dim: usize,
    pub activation: ActivationKind,
    /// NormReLU's kink `b` (default: the SELU-matching `-1.5907658564`); the name NormReLU's
    /// parameter had before [`Self::activation_param`], still read.
    #[serde(default)]
    pub kink: Option<f64>,
    /// The activation's parameter, for a family that has one
    /// ([`crate::activation::Param`]): NormReLU's kink `b`, LeakyReLU's slope `alpha`. Left
    /// out of the saved config when absent (fingerprints of earlier runs stay valid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_param: Option<f64>,
    #[serde(default = "default_parameterization")]
    pub parameterization: Parameterization,
    #[serde(default)]
    pub convention: NtkConvention,
    #[serde(default)]
    pub normalization: Normalization,
    /// Biases (off by default, as in the papers); initialized to zero.
    #[serde(default)]
    pub bias: bool,
    #[serde(default)]
    pub seed: u64,
}

impl MlpConfig {
    pub fn new(input_dim: usize, width: usize, depth: usize, activation: ActivationKind) -> Self {
        Self {
            input_dim,
            width,
            depth,
            output_dim: 1,
            activation,
            kink: None,
            activation_param: None,
            parameterization: Parameterization::Ntk,
            convention: NtkConvention::Paper,
            normalization: Normalization::None,
            bias: false,
            seed: 0,
        }
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    pub fn with_bias(mut self, bias: bool) -> Self {
        self.bias = bias;
        self
    }
    pub fn with_output_dim(mut self, k: usize) -> Self {
        self.output_dim = k;
        self
    }
    pub fn with_convention(mut self, convention: NtkConvention) -> Self {
        self.convention = convention;
        self
    }
    pub fn with_parameterization(mut self, p: Parameterization) -> Self {
        self.parameterization = p;
        self
    }
    pub fn with_normalization(mut self, n: Normalization) -> Self {
        self.normalization = n;
        self
    }
    pub fn with_kink(mut self, b: f64) -> Self {
        self.kink = Some(b);
        self
    }

    /// Sets the activation's parameter ([`Self::activation_param`]).
    pub fn with_activation_param(mut self, p: f64) -> Self {
        self.activation_param = Some(p);
        self
    }

    /// The activation with its parameter resolved (`activation_param`, or NormReLU's
    /// `kink`).
    pub fn activation(&self) -> Activation {
        Activation::new(self.activation, self.activation_param.or(self.kink))
    }

    /// Checks every field; the error names the field and the value.
    pub fn validate(&self) -> Result<(), ModelError> {
        if self.input_dim == 0 {
            return Err(ModelError::invalid("input_dim", 0, "must be at least 1"));
        }
        if self.depth > MAX_DEPTH {
            return Err(ModelError::invalid(
                "depth",
                self.depth,
                "at most 10000 hidden layers",
            ));
        }
        if self.depth > 0 && self.width == 0 {
            return Err(ModelError::invalid("width", 0, "must be at least 1"));
        }
        if self.output_dim == 0 {
            return Err(ModelError::invalid("output_dim", 0, "must be at least 1"));
        }
        if let Some(b) = self.kink {
            if self.activation != ActivationKind::NormRelu {
                return Err(ModelError::invalid(
                    "kink",
                    format!("{b:?}"),
                    format!(
                        "only norm_relu has a kink (activation is {})",
                        self.activation
                    ),
                ));
            }
            if !b.is_finite() || b.abs() > 8.0 {
                // Debug keeps -1e308 short (Display writes its 309 digits).
                return Err(ModelError::invalid(
                    "kink",
                    format!("{b:?}"),
                    "must be finite, in [-8, 8]",
                ));
            }
        }
        if let Some(p) = self.activation_param {
            if self.kink.is_some() {
                return Err(ModelError::invalid(
                    "activation_param",
                    format!("{p:?}"),
                    "kink gives the same parameter: set one of them",
                ));
            }
            self.activation.check_param(Some(p)).map_err(|e| {
                ModelError::invalid("activation_param", format!("{p:?}"), e.to_string())
            })?;
        }
        // The convention places the NTK parameterization's forward scales; the standard
        // parameterization has none and ignored it (eighth hostile round: `convention =
        // "official"` under `parameterization = "standard"` was accepted and recorded).
        if self.parameterization == Parameterization::Standard
            && self.convention != NtkConvention::default()
        {
            return Err(ModelError::invalid(
                "convention",
                format!("\"{}\"", ntk_names::name(&self.convention)),
                "applies to parameterization = \"ntk\" only: the standard parameterization \
                 has no forward scales to place; leave it out",
            ));
        }
        if self.depth == 0 && self.normalization != Normalization::None {
            return Err(ModelError::invalid(
                "normalization",
                format!("\"{}\"", ntk_names::name(&self.normalization)),
                "a depth-0 (linear) model has no hidden layer to normalize",
            ));
        }
        Ok(())
    }

    /// Layer widths `[d, m, ..., m, k]` (length `depth + 2`).
    pub fn layer_sizes(&self) -> Vec<usize> {
        let mut sizes = vec![self.input_dim];
        sizes.extend(std::iter::repeat_n(self.width, self.depth));
        sizes.push(self.output_dim);
        sizes
    }

    /// The forward scales `(beta_l, gamma_l)` of each hidden layer and `beta_out` (see
    /// [`NtkConvention`]); all ones for the standard parameterization.
    pub fn scales(&self) -> LayerScales {
        let c = self.activation().c();
        let (d, m, depth) = (self.input_dim as f64, self.width as f64, self.depth);
        let fan_in_out = if depth == 0 { d } else { m };
        match self.parameterization {
            Parameterization::Standard => LayerScales {
                beta: vec![1.0; depth],
                gamma: vec![1.0; depth],
                beta_out: 1.0,
            },
            Parameterization::Ntk => match self.convention {
                NtkConvention::Paper => LayerScales {
                    beta: vec![1.0; depth],
                    gamma: vec![(c / m).sqrt(); depth],
                    beta_out: 1.0,
                },
                NtkConvention::Official => LayerScales {
                    beta: vec![1.0; depth],
                    gamma: (0..depth)
                        .map(|l| (c / if l == 0 { d } else { m }).sqrt())
                        .collect(),
                    beta_out: (if depth == 0 { 1.0 } else { c } / fan_in_out).sqrt(),
                },
                NtkConvention::UnitVariance => LayerScales {
                    beta: (0..depth)
                        .map(|l| 1.0 / if l == 0 { d } else { m }.sqrt())
                        .collect(),
                    gamma: vec![c.sqrt(); depth],
                    beta_out: 1.0 / fan_in_out.sqrt(),
                },
            },
        }
    }

    /// Standard deviation of each layer's initial weights (input layer first).
    pub fn init_std(&self) -> Vec<f64> {
        let sizes = self.layer_sizes();
        match self.parameterization {
            Parameterization::Ntk => vec![1.0; self.depth + 1],
            Parameterization::Standard => {
                let c = self.activation().c();
                (0..=self.depth)
                    .map(|l| {
                        let gain2 = if l == self.depth { 1.0 } else { c };
                        (gain2 / sizes[l] as f64).sqrt()
                    })
                    .collect()
            }
        }
    }
}

/// Forward scales of an MLP (see [`NtkConvention`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LayerScales {
    /// `beta_l`, multiplying `W_l a_{l-1}` in hidden layer `l` (index `l - 1`).
    pub beta: Vec<f64>,
    /// `gamma_l`, multiplying `s(z_l)`.
    pub gamma: Vec<f64>,
    /// `beta_out`, multiplying `W_{L+1} a_L`.
    pub beta_out: f64,
}
