//! What a config describes: the network spec of a `[model]` table (an MLP), a `[resnet]`
//! table (a CIFAR ResNet) or an `[onnx]` table (a network read from an ONNX file,
//! [`OnnxSpec`]), one type for both tools: the rule that a config has exactly one of
//! `[model]` and `[resnet]`, the check of the data's dimension, construction, a short
//! description, and the setters the sweeps use (an ONNX network's architecture is the
//! file's: its setters refuse or keep it).

use burn::tensor::{DType, Device};

use crate::{
    ActivationKind, Mlp, MlpConfig, ModelError, Net, Normalization, OnnxSpec, ResNet, ResNetConfig,
    ResNetVariant,
};

/// A network description from a config's `[model]`, `[resnet]` or `[onnx]` table.
#[derive(Clone, Debug, PartialEq)]
pub enum NetSpec {
    Mlp(MlpConfig),
    ResNet(ResNetConfig),
    /// A network read from an ONNX file (`[onnx] file`), read once.
    Onnx(OnnxSpec),
}

impl NetSpec {
    /// Whether the network has BatchNorm layers (an MLP with `normalization =
    /// "batch_norm"`, the batch_norm ResNet): the ones whose NTK depends on which
    /// statistics normalize (`ntk_kernel::batch_norm`).
    pub fn has_batch_norm(&self) -> bool {
        match self {
            Self::Mlp(m) => m.normalization == Normalization::BatchNorm,
            Self::ResNet(r) => r.variant == crate::ResNetVariant::BatchNorm,
            Self::Onnx(o) => o.file.has_batch_norm(),
        }
    }

    /// Whether the host engines (forward and backpropagation on host GEMMs: `ntk_engine::host`)
    /// compute this network: dense MLPs without normalization layers, and the CIFAR ResNets
    /// (not an ONNX graph: Burn's autodiff trains it).
    pub fn on_host_engine(&self) -> bool {
        match self {
            Self::Mlp(m) => m.normalization == Normalization::None,
            Self::ResNet(_) => true,
            Self::Onnx(_) => false,
        }
    }

    /// The network of a config's `[model]` and `[resnet]` tables: exactly one of them.
    pub fn from_tables(
        model: Option<&MlpConfig>,
        resnet: Option<&ResNetConfig>,
    ) -> Result<Self, ModelError> {
        match (model, resnet) {
            (Some(m), None) => Ok(Self::Mlp(m.clone())),
            (None, Some(r)) => Ok(Self::ResNet(r.clone())),
            (None, None) => Err(ModelError::NoNetwork),
            (Some(_), Some(_)) => Err(ModelError::TwoNetworks),
        }
    }

    /// Checks the network's own values (widths, depth, kink, normalization; a ResNet's depth
    /// and variant), as building it would, before any data are read; errors name the table
    /// (`model`, `resnet`). An MLP's `input_dim = 0` (taken from the data) passes.
    pub fn validate(&self) -> Result<(), ModelError> {
        match self {
            Self::Mlp(m) => MlpConfig {
                input_dim: m.input_dim.max(1),
                ..m.clone()
            }
            .validate()
            .map_err(|e| in_table("model", e)),
            Self::ResNet(r) => r.validate(),
            // Checked whole when it was read.
            Self::Onnx(_) => Ok(()),
        }
    }

    /// Checks that the network takes inputs of dimension `d`; `what` says where `d` comes
    /// from (the data's description, `data.input_dim`). An MLP's `input_dim` may be left 0
    /// (it is taken from the data); a ResNet reads `in_channels x image_size^2` values, an
    /// ONNX graph its input's values per sample.
    pub fn check_input_dim(&self, d: usize, what: &str) -> Result<(), ModelError> {
        match self {
            Self::Onnx(o) => o.check_input_dim(d, what),
            Self::Mlp(m) if m.input_dim != 0 && m.input_dim != d => Err(ModelError::InputDim {
                input_dim: m.input_dim,
                data_dim: d,
                what: what.to_string(),
            }),
            Self::ResNet(r) if r.input_dim() != d => Err(ModelError::ResNetInputDim {
                data_dim: d,
                what: what.to_string(),
                net: r.describe(),
                in_channels: r.in_channels,
                image_size: r.image_size,
                input_dim: r.input_dim_text(),
            }),
            _ => Ok(()),
        }
    }

    /// Checks that a ResNet reads images of the data's `[channels, height, width]` (`what`
    /// says where they come from) when it reads as many values ([`Self::check_input_dim`]
    /// reports a different count); an MLP reads any flattened image.
    pub fn check_image_shape(&self, [c, h, w]: [usize; 3], what: &str) -> Result<(), ModelError> {
        match self {
            Self::ResNet(r)
                if c * h * w == r.input_dim()
                    && [r.in_channels, r.image_size, r.image_size] != [c, h, w] =>
            {
                Err(ModelError::ResNetImageShape {
                    what: what.to_string(),
                    net: r.describe(),
                    in_channels: r.in_channels,
                    image_size: r.image_size,
                    c,
                    h,
                    w,
                })
            }
            _ => Ok(()),
        }
    }

    /// Builds the network for inputs of dimension `input_dim` (checked first).
    pub fn build(
        &self,
        input_dim: usize,
        device: &Device,
        dtype: DType,
    ) -> Result<Net, ModelError> {
        self.check_input_dim(input_dim, "the data")?;
        match self {
            Self::Mlp(m) => {
                let cfg = MlpConfig {
                    input_dim,
                    ..m.clone()
                };
                Ok(Net::Mlp(
                    Mlp::new(&cfg, device, dtype).map_err(|e| in_table("model", e))?,
                ))
            }
            Self::ResNet(r) => Ok(Net::ResNet(
                ResNet::new(r, device, dtype).map_err(|e| in_table("resnet", e))?,
            )),
            Self::Onnx(o) => Ok(Net::Onnx(o.build(device, dtype)?)),
        }
    }

    /// The depth; 0 for an ONNX graph (no `depth` key: its layers are the file's).
    pub fn depth(&self) -> usize {
        match self {
            Self::Mlp(m) => m.depth,
            Self::ResNet(r) => r.depth,
            Self::Onnx(_) => 0,
        }
    }

    /// Short name of the network, e.g. `mlp depth 3 width 512 relu`, `resnet-110 fixup`,
    /// `onnx net.onnx (1281 parameters)`.
    pub fn describe(&self) -> String {
        match self {
            Self::Mlp(m) => {
                let norm = match m.normalization {
                    Normalization::None => String::new(),
                    n => format!(" {}", normalization_name(n)),
                };
                format!(
                    "mlp depth {} width {} {}{norm}",
                    m.depth,
                    m.width,
                    m.activation().label()
                )
            }
            Self::ResNet(r) => r.describe(),
            Self::Onnx(o) => o.describe(),
        }
    }

    /// The activation's name ([`crate::Activation::label`]: with its parameter where that is
    /// not the default; a ResNet's: relu or norm_relu; an ONNX graph's: `onnx`, its
    /// operators being the file's).
    pub fn activation_name(&self) -> String {
        match self {
            Self::Mlp(m) => m.activation().label(),
            Self::ResNet(r) => r.activation().label(),
            Self::Onnx(_) => ONNX.to_string(),
        }
    }

    /// The activation's family name, without its parameter (`leaky_relu`; `onnx` for an ONNX
    /// graph): a sweep's run directories are named by it, one parameter per family in a
    /// sweep (`model.activation_param`).
    pub fn activation_family(&self) -> &'static str {
        match self {
            Self::Mlp(m) => m.activation.name(),
            Self::ResNet(r) => r.activation().kind().name(),
            Self::Onnx(_) => ONNX,
        }
    }

    /// What a run's summary and tables say of the network, read together ([`NetLabels`]).
    pub fn labels(&self) -> NetLabels {
        NetLabels {
            model: self.describe(),
            depth: self.depth(),
            width: self.width(),
            activation: self.activation_name(),
            normalization: self.normalization_name(),
            seed: self.seed(),
        }
    }

    /// How the signal is kept in scale: the MLP's normalization layer, or the ResNet's
    /// variant (batch_norm, norm_relu, fixup, selu); an ONNX graph's: `batch_norm` when it
    /// has BatchNormalization nodes, else `none`.
    pub fn normalization_name(&self) -> String {
        match self {
            Self::Mlp(m) => normalization_name(m.normalization).to_string(),
            Self::ResNet(r) => r.variant.name().to_string(),
            Self::Onnx(o) if o.file.has_batch_norm() => "batch_norm".to_string(),
            Self::Onnx(_) => "none".to_string(),
        }
    }

    /// The number of outputs (`output_dim`, a ResNet's `num_classes`, an ONNX graph's
    /// outputs per sample).
    pub fn output_dim(&self) -> usize {
        self.classes()
    }

    /// Hidden width of an MLP; the first stage's channels of a ResNet; 0 for an ONNX graph.
    pub fn width(&self) -> usize {
        match self {
            Self::Mlp(m) => m.width,
            Self::ResNet(r) => r.base_width,
            Self::Onnx(_) => 0,
        }
    }

    /// The network at depth `depth`; an ONNX graph's depth is its file's, kept (a sweep over
    /// depths of one is refused by its config's check).
    pub fn with_depth(mut self, depth: usize) -> Self {
        match &mut self {
            Self::Mlp(m) => m.depth = depth,
            Self::ResNet(r) => r.depth = depth,
            Self::Onnx(_) => {}
        }
        self
    }
    pub fn with_activation(mut self, a: ActivationKind) -> Result<Self, ModelError> {
        match &mut self {
            Self::Mlp(m) => m.activation = a,
            Self::ResNet(r) if r.variant == ResNetVariant::Normalized => r.activation = Some(a),
            Self::ResNet(r) => {
                return Err(ModelError::ResNetActivation {
                    activation: a.to_string(),
                    variant: r.variant.to_string(),
                });
            }
            Self::Onnx(_) => {
                return Err(ModelError::OnnxFixed {
                    key: "sweep.activations",
                });
            }
        }
        Ok(self)
    }
    pub fn with_normalization(mut self, n: Normalization) -> Result<Self, ModelError> {
        match &mut self {
            Self::Mlp(m) => m.normalization = n,
            Self::ResNet(_) => {
                return Err(ModelError::ResNetNormalization {
                    normalization: normalization_name(n).to_string(),
                });
            }
            Self::Onnx(_) => {
                return Err(ModelError::OnnxFixed {
                    key: "sweep.normalizations",
                });
            }
        }
        Ok(self)
    }
    pub fn with_variant(mut self, v: ResNetVariant) -> Result<Self, ModelError> {
        match &mut self {
            Self::ResNet(r) => r.variant = v,
            Self::Mlp(_) => {
                return Err(ModelError::MlpVariant {
                    variant: v.to_string(),
                });
            }
            Self::Onnx(_) => {
                return Err(ModelError::OnnxFixed {
                    key: "sweep.variants",
                });
            }
        }
        Ok(self)
    }
    pub fn with_width(mut self, width: usize) -> Result<Self, ModelError> {
        match &mut self {
            Self::Mlp(m) => m.width = width,
            Self::ResNet(r) => r.base_width = width,
            Self::Onnx(_) => return Err(ModelError::OnnxFixed { key: "width" }),
        }
        Ok(self)
    }
    /// The network initialized from `seed`; an ONNX graph's weights are the file's, kept.
    pub fn with_seed(mut self, seed: u64) -> Self {
        match &mut self {
            Self::Mlp(m) => m.seed = seed,
            Self::ResNet(r) => r.seed = seed,
            Self::Onnx(_) => {}
        }
        self
    }
    /// The seed of the initialization; 0 for an ONNX graph (its weights are the file's).
    pub fn seed(&self) -> u64 {
        match self {
            Self::Mlp(m) => m.seed,
            Self::ResNet(r) => r.seed,
            Self::Onnx(_) => 0,
        }
    }

    /// Classes the network outputs.
    pub fn classes(&self) -> usize {
        match self {
            Self::Mlp(m) => m.output_dim,
            Self::ResNet(r) => r.num_classes,
            Self::Onnx(o) => o.outputs,
        }
    }

    /// What sets [`Self::classes`], as messages write it before ` = {classes}`: the config
    /// key, or an ONNX graph's output width (its file's: seventh hostile round, "onnx.file =
    /// 10" named the file's key with the width for its value).
    pub fn classes_key(&self) -> &'static str {
        match self {
            Self::Mlp(_) => "model.output_dim",
            Self::ResNet(_) => "resnet.num_classes",
            Self::Onnx(_) => "the output width of onnx.file",
        }
    }

    /// The number of parameters on inputs of `d` values (a ResNet's input is fixed by its
    /// config), in f64: products of large sizes may exceed u64.
    pub fn params(&self, d: usize) -> f64 {
        match self {
            Self::Mlp(m) => crate::size::mlp_params(&MlpConfig {
                input_dim: d,
                ..m.clone()
            }),
            Self::ResNet(r) => crate::size::resnet_params(r),
            Self::Onnx(o) => o.file.parameters() as f64,
        }
    }

    /// The keys that set the network's size, with their values, for messages:
    /// `model.width = 512, model.depth = 10` or `resnet.depth = 110, resnet.base_width = 16`.
    pub fn size_keys(&self) -> String {
        match self {
            Self::Mlp(m) => format!("model.width = {}, model.depth = {}", m.width, m.depth),
            Self::ResNet(r) => {
                format!(
                    "resnet.depth = {}, resnet.base_width = {}",
                    r.depth, r.base_width
                )
            }
            Self::Onnx(o) => format!(
                "{} = \"{}\" ({} parameters)",
                ntk_onnx::section::FILE_KEY,
                o.file.path.display(),
                o.file.parameters()
            ),
        }
    }
}

/// The activation name of an ONNX graph ([`NetSpec::activation_name`]), in summaries and
/// sweep run names.
pub const ONNX: &str = "onnx";

/// A network in the words of a run's summary and tables ([`NetSpec::labels`]): its
/// description, depth, width (a ResNet's base width; 0 for an ONNX graph), activation,
/// normalization (or ResNet variant) and seed.
#[derive(Clone, Debug, PartialEq)]
pub struct NetLabels {
    /// [`NetSpec::describe`].
    pub model: String,
    /// [`NetSpec::depth`].
    pub depth: usize,
    /// [`NetSpec::width`].
    pub width: usize,
    /// [`NetSpec::activation_name`].
    pub activation: String,
    /// [`NetSpec::normalization_name`].
    pub normalization: String,
    /// [`NetSpec::seed`].
    pub seed: u64,
}

pub fn normalization_name(n: Normalization) -> &'static str {
    match n {
        Normalization::None => "none",
        Normalization::BatchNorm => "batch_norm",
        Normalization::LayerNorm => "layer_norm",
    }
}

/// An error of the network built from the config table `table`.
fn in_table(table: &'static str, e: ModelError) -> ModelError {
    ModelError::Table {
        table,
        source: Box::new(e),
    }
}

/// A network's recorded form, one for every spelling of it: a result records its config as
/// dotted keys (`ntk_runs::provenance`), and one network written two ways must be one
/// config (fifty-ninth hostile round, D2: `model.kink` against `model.activation_param`,
/// a family's default parameter given against left out, a ResNet's `kink` and
/// `border_rescale` at their defaults, were each a different config). In `flat`: an MLP's
/// parameter under `model.activation_param`, absent where it is the family's default
/// (`model.kink`, its former name, folded in and recorded as `null`, as it is when not
/// given); a ResNet's `resnet.kink`, `resnet.border_rescale` and `resnet.activation_param`
/// `null` or absent where they are the defaults. Keys of a config that fails validation
/// are left as they are.
pub fn canonical_recorded(flat: &mut std::collections::BTreeMap<String, serde_json::Value>) {
    use serde_json::Value;
    let text = |flat: &std::collections::BTreeMap<String, Value>, key: &str| {
        flat.get(key).and_then(Value::as_str).map(str::to_string)
    };
    let number = |flat: &std::collections::BTreeMap<String, Value>, key: &str| {
        flat.get(key).and_then(Value::as_f64)
    };
    let is_default = |kind: ActivationKind, p: f64| kind.param().is_some_and(|s| p == s.default);
    if let Some(kind) = text(flat, "model.activation").and_then(|n| ActivationKind::parse(&n)) {
        let param = number(flat, "model.activation_param").or(number(flat, "model.kink"));
        if flat.contains_key("model.kink") {
            flat.insert("model.kink".into(), Value::Null);
        }
        match param.filter(|&p| !is_default(kind, p)) {
            Some(p) => {
                flat.insert("model.activation_param".into(), p.into());
            }
            None => {
                flat.remove("model.activation_param");
            }
        }
    }
    if let Some(variant) =
        text(flat, "resnet.variant").and_then(|n| ntk_names::parse::<ResNetVariant>(&n))
    {
        if variant == ResNetVariant::NormRelu
            && number(flat, "resnet.kink") == Some(crate::activation::NORM_RELU_DEFAULT_B)
        {
            flat.insert("resnet.kink".into(), Value::Null);
        }
        if variant.normalized_activation()
            && flat.get("resnet.border_rescale") == Some(&Value::Bool(true))
        {
            flat.insert("resnet.border_rescale".into(), Value::Null);
        }
        if let Some(kind) = text(flat, "resnet.activation").and_then(|n| ActivationKind::parse(&n))
            && number(flat, "resnet.activation_param").is_some_and(|p| is_default(kind, p))
        {
            flat.remove("resnet.activation_param");
        }
    }
}

/// The value the key `key` takes where the one form [`canonical_recorded`] writes leaves it
/// out of `flat` (or records it as `null`) at its default: an MLP's or a ResNet's activation
/// parameter is its family's default, a NormReLU ResNet's `resnet.kink` NormReLU's, a
/// norm-free ResNet's `resnet.border_rescale` `true`; `None` for any other key (ninety-second
/// hostile round, D2: a diff said `model.activation_param: 0.2 -> (absent)` where the user
/// had set the default).
pub fn recorded_default(
    flat: &std::collections::BTreeMap<String, serde_json::Value>,
    key: &str,
) -> Option<serde_json::Value> {
    use serde_json::Value;
    let text = |key: &str| flat.get(key).and_then(Value::as_str);
    let family_default = |section: &str| {
        text(&format!("{section}.activation"))
            .and_then(ActivationKind::parse)
            .and_then(|k| k.param())
            .map(|p| Value::from(p.default))
    };
    let variant = || text("resnet.variant").and_then(ntk_names::parse::<ResNetVariant>);
    match key {
        "model.activation_param" => family_default("model"),
        "resnet.activation_param" => family_default("resnet"),
        "resnet.kink" if variant() == Some(ResNetVariant::NormRelu) => {
            Some(Value::from(crate::activation::NORM_RELU_DEFAULT_B))
        }
        "resnet.border_rescale" if variant().is_some_and(|v| v.normalized_activation()) => {
            Some(Value::Bool(true))
        }
        _ => None,
    }
}

/// Every other form in which a build before [`canonical_recorded`] may have recorded the
/// network of the one form `flat` (the spellings that rule folds: an MLP's parameter as
/// `model.kink`, a family's default given, a ResNet's defaults given), each with the other
/// keys as they are. For state that records a config's fingerprint alone (a probe's phase
/// files), which cannot be read in the one form (sixty-second hostile round, D2: a run
/// killed by such a build and resumed with the network spelled another way was `new`).
pub fn recorded_spellings(
    flat: &std::collections::BTreeMap<String, serde_json::Value>,
) -> Vec<std::collections::BTreeMap<String, serde_json::Value>> {
    use serde_json::Value;
    type Flat = std::collections::BTreeMap<String, Value>;
    /// One spelling of a choice: keys set to a value, or removed (`None`).
    type Edits = Vec<(&'static str, Option<Value>)>;
    let text = |key: &str| flat.get(key).and_then(Value::as_str);
    // For each spelled choice, its alternative spellings.
    let mut choices: Vec<Vec<Edits>> = Vec::new();
    if let Some(kind) = text("model.activation").and_then(ActivationKind::parse)
        && let Some(spec) = kind.param()
    {
        let kink = flat.contains_key("model.kink");
        match flat.get("model.activation_param").and_then(Value::as_f64) {
            Some(p) if kink => choices.push(vec![vec![
                ("model.kink", Some(p.into())),
                ("model.activation_param", None),
            ]]),
            Some(_) => {}
            None => {
                let mut alternatives =
                    vec![vec![("model.activation_param", Some(spec.default.into()))]];
                if kink {
                    alternatives.push(vec![("model.kink", Some(spec.default.into()))]);
                }
                choices.push(alternatives);
            }
        }
    }
    if let Some(variant) = text("resnet.variant").and_then(ntk_names::parse::<ResNetVariant>) {
        if variant == ResNetVariant::NormRelu && flat.get("resnet.kink") == Some(&Value::Null) {
            choices.push(vec![vec![(
                "resnet.kink",
                Some(crate::activation::NORM_RELU_DEFAULT_B.into()),
            )]]);
        }
        if variant.normalized_activation()
            && flat.get("resnet.border_rescale") == Some(&Value::Null)
        {
            choices.push(vec![vec![(
                "resnet.border_rescale",
                Some(Value::Bool(true)),
            )]]);
        }
        if let Some(spec) = text("resnet.activation")
            .and_then(ActivationKind::parse)
            .and_then(|k| k.param())
            && !flat.contains_key("resnet.activation_param")
        {
            choices.push(vec![vec![(
                "resnet.activation_param",
                Some(spec.default.into()),
            )]]);
        }
    }
    // Every combination: each choice as in `flat` or one of its alternatives.
    let mut all: Vec<Flat> = vec![flat.clone()];
    for alternatives in choices {
        let mut next = all.clone();
        for form in &all {
            for edits in &alternatives {
                let mut f = form.clone();
                for (key, value) in edits {
                    match value {
                        Some(v) => f.insert(key.to_string(), v.clone()),
                        None => f.remove(*key),
                    };
                }
                next.push(f);
            }
        }
        all = next;
    }
    all.remove(0);
    all
}

#[cfg(test)]
mod tests {
    use super::{canonical_recorded, recorded_default, recorded_spellings};
    use serde_json::{Value, json};
    use std::collections::BTreeMap;

    /// Ninety-second hostile round, D2: what a key left out at its default takes, by the
    /// config it is left out of; nothing for a family without a parameter or another key.
    #[test]
    fn a_left_out_key_takes_its_default() {
        let leaky = flat(&[("model.activation", json!("leaky_relu"))]);
        assert_eq!(
            recorded_default(&leaky, "model.activation_param"),
            Some(json!(0.01))
        );
        let relu = flat(&[("model.activation", json!("relu"))]);
        assert_eq!(recorded_default(&relu, "model.activation_param"), None);
        let norm = flat(&[("resnet.variant", json!("norm_relu"))]);
        assert_eq!(
            recorded_default(&norm, "resnet.kink"),
            Some(json!(crate::activation::NORM_RELU_DEFAULT_B))
        );
        assert_eq!(
            recorded_default(&norm, "resnet.border_rescale"),
            Some(json!(true))
        );
        let bn = flat(&[("resnet.variant", json!("batch_norm"))]);
        assert_eq!(recorded_default(&bn, "resnet.kink"), None);
        assert_eq!(recorded_default(&leaky, "model.width"), None);
    }

    fn flat(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    /// Fifty-ninth hostile round, D2: the spellings of one network record one form; other
    /// values keep theirs.
    #[test]
    fn one_network_one_recorded_form() {
        let canon = |pairs: &[(&str, Value)]| {
            let mut f = flat(pairs);
            canonical_recorded(&mut f);
            f
        };
        // LeakyReLU's default slope given, or left out.
        let given = canon(&[
            ("model.activation", json!("leaky_relu")),
            ("model.kink", Value::Null),
            ("model.activation_param", json!(0.01)),
        ]);
        let left_out = canon(&[
            ("model.activation", json!("leaky_relu")),
            ("model.kink", Value::Null),
        ]);
        assert_eq!(given, left_out);
        assert_eq!(
            left_out,
            flat(&[
                ("model.activation", json!("leaky_relu")),
                ("model.kink", Value::Null)
            ])
        );
        // NormReLU's kink under its former name, or as the parameter; a default kink.
        let kink = canon(&[
            ("model.activation", json!("norm_relu")),
            ("model.kink", json!(-1.5)),
        ]);
        let param = canon(&[
            ("model.activation", json!("norm_relu")),
            ("model.kink", Value::Null),
            ("model.activation_param", json!(-1.5)),
        ]);
        assert_eq!(kink, param);
        assert_eq!(param["model.activation_param"], json!(-1.5));
        let default = canon(&[
            ("model.activation", json!("norm_relu")),
            ("model.kink", json!(-1.5907658564)),
        ]);
        assert!(
            !default.contains_key("model.activation_param"),
            "{default:?}"
        );
        // A ResNet's defaults, given or not; other values kept.
        let resnet = canon(&[
            ("resnet.variant", json!("norm_relu")),
            ("resnet.kink", json!(-1.5907658564)),
            ("resnet.border_rescale", json!(true)),
        ]);
        assert_eq!(resnet["resnet.kink"], Value::Null);
        assert_eq!(resnet["resnet.border_rescale"], Value::Null);
        let other = canon(&[
            ("resnet.variant", json!("norm_relu")),
            ("resnet.kink", json!(-1.0)),
            ("resnet.border_rescale", json!(false)),
        ]);
        assert_eq!(other["resnet.kink"], json!(-1.0));
        assert_eq!(other["resnet.border_rescale"], json!(false));
        let normalized = canon(&[
            ("resnet.variant", json!("normalized")),
            ("resnet.activation", json!("leaky_relu")),
            ("resnet.activation_param", json!(0.01)),
        ]);
        assert!(!normalized.contains_key("resnet.activation_param"));
        // A family without a parameter, and no network: untouched.
        let relu = flat(&[
            ("model.activation", json!("relu")),
            ("model.kink", Value::Null),
        ]);
        assert_eq!(
            canon(&[
                ("model.activation", json!("relu")),
                ("model.kink", Value::Null)
            ]),
            relu
        );
        assert_eq!(
            canon(&[("optim.lr", json!(0.1))]),
            flat(&[("optim.lr", json!(0.1))])
        );
    }

    /// Sixty-second hostile round, D2: the spellings of a network's one form are every form
    /// that folds into it, and only those.
    #[test]
    fn the_spellings_of_a_network_fold_into_its_one_form() {
        for (pairs, count) in [
            // NormReLU at a kink of its own: the parameter, or `kink`.
            (
                vec![
                    ("model.activation", json!("norm_relu")),
                    ("model.kink", Value::Null),
                    ("model.activation_param", json!(-1.5)),
                ],
                1,
            ),
            // LeakyReLU's default slope: left out, given, or as `kink`.
            (
                vec![
                    ("model.activation", json!("leaky_relu")),
                    ("model.kink", Value::Null),
                ],
                2,
            ),
            // ReLU has no parameter: one spelling.
            (
                vec![
                    ("model.activation", json!("relu")),
                    ("model.kink", Value::Null),
                ],
                0,
            ),
            // A NormReLU ResNet at its defaults: kink and border rescale each given or not.
            (
                vec![
                    ("resnet.variant", json!("norm_relu")),
                    ("resnet.kink", Value::Null),
                    ("resnet.border_rescale", Value::Null),
                ],
                3,
            ),
        ] {
            let one = flat(&pairs);
            let mut canonical = one.clone();
            canonical_recorded(&mut canonical);
            assert_eq!(canonical, one, "the case is in the one form");
            let spellings = recorded_spellings(&one);
            assert_eq!(spellings.len(), count, "{spellings:?}");
            for mut s in spellings {
                assert_ne!(s, one);
                canonical_recorded(&mut s);
                assert_eq!(s, one);
            }
        }
    }
}
