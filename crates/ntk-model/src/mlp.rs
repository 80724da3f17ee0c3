//! The MLP of Liu & Hui Eq. (1) and (3), with the conventions of [`NtkConvention`],
//! optional biases and normalization layers.
//!
//! Weights are stored as `[fan_in, fan_out]` (so the forward is `a W`, samples as rows);
//! exports transpose to PyTorch's `[out, in]`.

use burn::module::{Module, Param};
use burn::nn::{BatchNorm, LayerNorm, LayerNormConfig};
use burn::tensor::{DType, Device, Tensor, TensorData};

use crate::activation::Activation;
use crate::config::{LayerScales, MlpConfig, Normalization};
use crate::error::ModelError;
use crate::init;

/// One dense layer: `z = beta (a W) + b`.
#[derive(Module, Debug)]
pub struct Dense {
    /// `[fan_in, fan_out]`.
    pub weight: Param<Tensor<2>>,
    pub bias: Option<Param<Tensor<1>>>,
}

impl Dense {
    fn forward(&self, a: Tensor<2>, beta: f64) -> Tensor<2> {
        let z = a.matmul(self.weight.val());
        let z = if beta == 1.0 { z } else { z.mul_scalar(beta) };
        match &self.bias {
            Some(b) => z + b.val().unsqueeze_dim(0),
            None => z,
        }
    }
}

/// The MLP. `layers[0..L]` are the hidden layers, `layers[L]` the output layer.
#[derive(Module, Debug)]
pub struct Mlp {
    pub layers: Vec<Dense>,
    pub batch_norms: Vec<BatchNorm>,
    pub layer_norms: Vec<LayerNorm>,
    #[module(skip)]
    config: MlpConfig,
    #[module(skip)]
    activation: Activation,
    #[module(skip)]
    scales: LayerScales,
}

/// What the probe needs from a forward pass: per hidden layer `l = 1..L` the layer input
/// `a_{l-1}` (as multiplied by `W_l`) and the pre-activation `z_l` (before normalization),
/// plus the output layer's input `a_L` and the output.
pub struct MlpTrace {
    /// `a_0 = x, a_1, ..., a_L`, each `[n, fan_in]`.
    pub inputs: Vec<Tensor<2>>,
    /// `z_1, ..., z_L`, each `[n, width]`.
    pub preacts: Vec<Tensor<2>>,
    /// `f(x)`, `[n, output_dim]`.
    pub output: Tensor<2>,
}

impl Mlp {
    /// Builds the network from a validated config, weights drawn on the host (see
    /// [`init::gaussian`]) and created on `device` in `dtype`.
    pub fn new(config: &MlpConfig, device: &Device, dtype: DType) -> Result<Self, ModelError> {
        config.validate()?;
        let layers = (0..=config.depth)
            .map(|l| Self::dense(config, l, device, dtype))
            .collect();
        Ok(Self::assemble(config, layers, device, dtype))
    }

    /// The depth-`depth` network of this one's config: its first `depth` hidden layers
    /// (shared, not redrawn) under a freshly drawn output layer, and fresh normalization
    /// layers. Layer `l` is drawn from stream `l` of the seed whatever the depth, so for a
    /// network as [`Mlp::new`] built it this *is* `Mlp::new` at that depth, parameter for
    /// parameter (tested), without drawing the hidden layers again: a depth sweep builds
    /// each seed's deepest network once.
    pub fn truncated(&self, depth: usize) -> Result<Self, ModelError> {
        if depth > self.config.depth {
            return Err(ModelError::InvalidConfig {
                field: "depth",
                value: depth.to_string(),
                reason: format!(
                    "a truncation cannot be deeper than the network ({})",
                    self.config.depth
                ),
            });
        }
        let config = MlpConfig {
            depth,
            ..self.config.clone()
        };
        config.validate()?;
        let weight = self.layers[0].weight.val();
        let (device, dtype) = (weight.device(), weight.dtype());
        let mut layers: Vec<Dense> = self.layers[..depth].to_vec();
        layers.push(Self::dense(&config, depth, &device, dtype));
        Ok(Self::assemble(&config, layers, &device, dtype))
    }

    /// This network's weights (shared, not redrawn) under `config`, which may change the
    /// activation, its kink and the convention, nothing that sets the weights' shapes or
    /// their initial distribution (layer sizes, parameterization's init, biases). Tests and
    /// studies that compare activations or conventions on the same draw use it (drawing a
    /// width-8192 network's weights costs seconds).
    pub fn with_config(&self, config: &MlpConfig) -> Result<Self, ModelError> {
        config.validate()?;
        let mine = &self.config;
        if config.layer_sizes() != mine.layer_sizes()
            || config.init_std() != mine.init_std()
            || config.bias != mine.bias
        {
            return Err(ModelError::InvalidConfig {
                field: "model",
                value: format!("{config:?}"),
                reason: "another layer shape, initialization or bias than the network's"
                    .to_string(),
            });
        }
        let weight = self.layers[0].weight.val();
        let (device, dtype) = (weight.device(), weight.dtype());
        Ok(Self::assemble(config, self.layers.clone(), &device, dtype))
    }

    /// Layer `l` of `config` (hidden for `l < depth`, else the output layer), drawn from
    /// stream `l` of the seed ([`init::gaussian`]).
    fn dense(config: &MlpConfig, l: usize, device: &Device, dtype: DType) -> Dense {
        let sizes = config.layer_sizes();
        let (fan_in, fan_out) = (sizes[l], sizes[l + 1]);
        let w =
            init::gaussian_transposed(config.seed, l as u64, fan_out, fan_in, config.init_std()[l]);
        let weight = Tensor::<2>::from_data(TensorData::new(w, [fan_in, fan_out]), (device, dtype));
        let bias = config
            .bias
            .then(|| Param::from_tensor(Tensor::<1>::zeros([fan_out], (device, dtype))));
        Dense {
            weight: Param::from_tensor(weight),
            bias,
        }
    }

    /// The network of `config` around `layers`, with its normalization layers.
    fn assemble(config: &MlpConfig, layers: Vec<Dense>, device: &Device, dtype: DType) -> Self {
        let cast = |t: Tensor<1>| t.cast(dtype);
        let batch_norms = match config.normalization {
            // Parameters and running statistics in `dtype` (an f64 network's BatchNorm would
            // otherwise keep f32 running statistics and fail on its first training step).
            Normalization::BatchNorm => (0..config.depth)
                .map(|_| crate::resnet::layers::batch_norm(config.width, device, dtype))
                .collect(),
            _ => Vec::new(),
        };
        let layer_norms = match config.normalization {
            Normalization::LayerNorm => (0..config.depth)
                .map(|_| {
                    let mut ln = LayerNormConfig::new(config.width).init(device);
                    ln.gamma = ln.gamma.map(cast);
                    ln.beta = ln.beta.map(|b| b.map(cast));
                    ln
                })
                .collect(),
            _ => Vec::new(),
        };
        Self {
            layers,
            batch_norms,
            layer_norms,
            activation: config.activation(),
            scales: config.scales(),
            config: config.clone(),
        }
    }

    pub fn config(&self) -> &MlpConfig {
        &self.config
    }
    pub fn activation(&self) -> &Activation {
        &self.activation
    }
    pub fn scales(&self) -> &LayerScales {
        &self.scales
    }
    pub fn depth(&self) -> usize {
        self.config.depth
    }

    /// `f(x)` for `x: [n, d]`.
    pub fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        self.forward_probed(x, None)
    }

    /// The forward with an additive probe on each pre-activation, `z_l + p_l`. With
    /// zero-valued leaves `p_l` that require grad, the gradient of `sum f` with respect to
    /// `p_l` is the per-sample backpropagated signal `delta_l = df/dz_l` (samples do not
    /// interact without batch statistics).
    pub fn forward_probed(&self, x: Tensor<2>, probes: Option<&[Tensor<2>]>) -> Tensor<2> {
        let mut a = x;
        for l in 0..self.depth() {
            let mut z = self.layers[l].forward(a, self.scales.beta[l]);
            if let Some(p) = probes {
                z = z + p[l].clone();
            }
            a = self.hidden_activation(l, z);
        }
        self.layers[self.depth()].forward(a, self.scales.beta_out)
    }

    /// `a_l` from `z_l` for hidden layer index `l` (0-based): normalization and activation.
    fn hidden_activation(&self, l: usize, z: Tensor<2>) -> Tensor<2> {
        let gamma = self.scales.gamma[l];
        match self.config.normalization {
            Normalization::None => self.activation.forward(z).mul_scalar(gamma),
            Normalization::BatchNorm => self
                .activation
                .forward(self.batch_norms[l].forward(z))
                .mul_scalar(gamma),
            Normalization::LayerNorm => {
                self.layer_norms[l].forward(self.activation.forward(z).mul_scalar(gamma))
            }
        }
    }

    /// The forward that also hands back each layer's input and pre-activation.
    pub fn forward_trace(&self, x: Tensor<2>) -> MlpTrace {
        let mut inputs = Vec::with_capacity(self.depth() + 1);
        let mut preacts = Vec::with_capacity(self.depth());
        let mut a = x;
        for l in 0..self.depth() {
            inputs.push(a.clone());
            let z = self.layers[l].forward(a, self.scales.beta[l]);
            preacts.push(z.clone());
            a = self.hidden_activation(l, z);
        }
        inputs.push(a.clone());
        let output = self.layers[self.depth()].forward(a, self.scales.beta_out);
        MlpTrace {
            inputs,
            preacts,
            output,
        }
    }

    /// Weight `l` (input layer first) as PyTorch stores it: `[out, in]`, row-major f64.
    pub fn weight_out_in(&self, l: usize) -> (Vec<f64>, [usize; 2]) {
        let w = self.layers[l].weight.val();
        let [fan_in, fan_out] = w.dims();
        let data: Vec<f64> = w
            .transpose()
            .try_into_vec_as::<f64>()
            .expect("reading weights from the device");
        (data, [fan_out, fan_in])
    }
}
