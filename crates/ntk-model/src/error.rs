//! Errors of model construction and weight I/O.

use ntk_files::shown::Shown;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ModelError {
    /// A config field holds a value the model cannot be built with.
    #[error("invalid model config: field `{field}` = {value}: {reason}")]
    InvalidConfig {
        field: &'static str,
        value: String,
        reason: String,
    },
    #[error("{path}: {reason}", path = ntk_files::shown::controls_escaped(.path))]
    Weights { path: String, reason: String },
    #[error("{path}: {source}", path = ntk_files::shown::controls_escaped(.path))]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A config with neither a `[model]` nor a `[resnet]` table.
    #[error(
        "the config needs a network: a [model] table (an MLP) or a [resnet] table (a CIFAR \
         ResNet)"
    )]
    NoNetwork,
    /// A config with both a `[model]` and a `[resnet]` table.
    #[error(
        "the config has both [model] and [resnet]: give exactly one network table ([model] \
         for an MLP, [resnet] for a CIFAR ResNet)"
    )]
    TwoNetworks,
    /// An MLP's `model.input_dim` that is not the data's.
    #[error(
        "model.input_dim = {input_dim}, but the data have {data_dim} inputs per sample \
         ({what}); remove model.input_dim (it is taken from the data) or make them agree"
    )]
    InputDim {
        input_dim: usize,
        data_dim: usize,
        /// Where the data's dimension comes from.
        what: String,
    },
    /// A ResNet whose input shape does not hold the data's values.
    #[error(
        "the data has {data_dim} values per sample ({what}), but {net} reads \
         resnet.in_channels x resnet.image_size^2 = {in_channels} x {image_size}^2 = \
         {input_dim}; set resnet.image_size and resnet.in_channels to match the data \
         (CIFAR-10: 32 and 3)"
    )]
    ResNetInputDim {
        data_dim: usize,
        what: String,
        /// The ResNet's description.
        net: String,
        in_channels: usize,
        image_size: usize,
        /// The product, exact (as a decimal, or in exponent form beyond 128 bits).
        input_dim: String,
    },
    /// A ResNet whose images are not the data's (same number of values, another layout:
    /// the pixels would be silently rearranged).
    #[error(
        "resnet.in_channels = {in_channels} and resnet.image_size = {image_size}: {net} reads \
         {in_channels}x{image_size}x{image_size} images, but {what} holds {c}x{h}x{w} images \
         (channels first, as PyTorch's NCHW)"
    )]
    ResNetImageShape {
        what: String,
        net: String,
        in_channels: usize,
        image_size: usize,
        c: usize,
        h: usize,
        w: usize,
    },
    /// An error of the network built from a config table (`model`, `resnet`).
    #[error("{table}: {source}")]
    Table {
        table: &'static str,
        #[source]
        source: Box<ModelError>,
    },
    /// A sweep over activations of a ResNet.
    /// `variant`: the variant it meets (eighty-ninth hostile round, N6: a sweep over
    /// variants was told to sweep over variants).
    #[error(
        "activation {activation} with ResNet variant {variant}: a ResNet's activation follows \
         its variant, except for variant \"normalized\", which takes any (sweep activations \
         with resnet.variant = \"normalized\", or sweep.variants = [\"normalized\"] alone; \
         the other variants over `variants`, without `activations`)"
    )]
    ResNetActivation { activation: String, variant: String },
    /// A sweep over normalizations of a ResNet.
    #[error(
        "normalization {normalization}: a ResNet's normalization follows resnet.variant \
         (sweep over `variants` instead)"
    )]
    ResNetNormalization { normalization: String },
    /// A sweep over ResNet variants of an MLP.
    #[error(
        "variant {variant}: variants are for [resnet]; an MLP sweeps `normalizations` and \
         `activations`"
    )]
    MlpVariant { variant: String },
    /// An ONNX file that cannot be read or run (the error names the file, and the node
    /// where one is to blame).
    #[error(transparent)]
    Onnx(Box<ntk_onnx::OnnxError>),
    /// A change of architecture asked of an ONNX network (a sweep axis): its architecture
    /// is the file's.
    #[error(
        "{key}: does not apply to an ONNX network ([onnx]): its architecture and weights are \
         the file's"
    )]
    OnnxFixed { key: &'static str },
    /// A config's `[onnx]` whose file was not read before its network was asked for (the
    /// tools read it right after the config: `ntk_train::config::TrainConfig::read_onnx`).
    #[error("onnx.file = \"{}\": the file has not been read yet", file.shown())]
    OnnxUnread { file: std::path::PathBuf },
}

impl From<ntk_onnx::OnnxError> for ModelError {
    fn from(e: ntk_onnx::OnnxError) -> Self {
        Self::Onnx(Box::new(e))
    }
}

impl ModelError {
    pub(crate) fn invalid(
        field: &'static str,
        value: impl ToString,
        reason: impl Into<String>,
    ) -> Self {
        Self::InvalidConfig {
            field,
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}
