//! Weights out and in: every MLP (plain, with biases, BatchNorm, LayerNorm) and every
//! ResNet variant (batch_norm, norm_relu, fixup, selu) written to safetensors and read into
//! a network of the same architecture drawn from another seed comes back exactly (f64
//! files: every tensor bit for bit, and so the forward), under PyTorch's names.

use burn::tensor::{DType, Device, Tensor, TensorData};
use ntk_model::export::{self, ExportDType, Named};
use ntk_model::{
    ActivationKind, Mlp, MlpConfig, Net, Normalization, ResNet, ResNetConfig, ResNetVariant,
};

/// `net` with every tensor replaced by distinct values (running variances positive), so
/// that nothing left at its initialization could pass for a loaded value.
fn scrambled(net: Net) -> Net {
    let mut k = 0.0;
    net.with_tensors(&mut |name, shape| {
        let len: usize = shape.iter().product();
        k += 1.0;
        Ok((0..len)
            .map(|i| {
                let v = ((i as f64 + 1.0) * 0.37 + k * 0.11).sin() * 0.5;
                if name.ends_with("running_var") {
                    v.abs() + 0.5
                } else {
                    v
                }
            })
            .collect())
    })
    .unwrap()
}

fn forward(net: &Net, d: usize) -> Vec<f64> {
    let x: Vec<f64> = (0..3 * d).map(|i| ((i as f64) * 0.13).cos()).collect();
    let x = Tensor::<2>::from_data(TensorData::new(x, [3, d]), (&Device::flex(), DType::F64));
    net.forward(x).try_into_vec_as::<f64>().unwrap()
}

fn round_trip(make: impl Fn(u64) -> Net, d: usize) -> Vec<String> {
    let a = scrambled(make(1));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.safetensors");
    export::save(&a, &path, ExportDType::F64).unwrap();
    let b = export::load(make(2), &path).unwrap();
    assert_eq!(a.tensors(), b.tensors());
    assert_eq!(forward(&a, d), forward(&b, d));
    // A network of another shape is refused, naming the tensor.
    a.tensors().into_iter().map(|t| t.0).collect()
}

#[test]
fn every_resnet_variant_round_trips_under_pytorch_names() {
    for variant in ResNetVariant::all() {
        let make = |seed| {
            let cfg = ResNetConfig::example(8, variant)
                .with_base_width(2)
                .with_image_size(4)
                .with_in_channels(1)
                .with_num_classes(3)
                .with_seed(seed);
            Net::ResNet(ResNet::new(&cfg, &Device::flex(), DType::F64).unwrap())
        };
        let names = round_trip(make, 16);
        assert_eq!(names[0], "stem.weight", "{variant:?}");
        assert_eq!(names.last().unwrap(), "classifier.bias");
        let has = |n: &str| names.iter().any(|x| x == n);
        match variant {
            ResNetVariant::BatchNorm => {
                assert!(
                    has("stem_bn.running_var") && has("blocks.2.bn2.weight"),
                    "{names:?}"
                )
            }
            ResNetVariant::Fixup => {
                assert!(
                    has("stem_bias") && has("blocks.1.scale") && has("head_bias"),
                    "{names:?}"
                )
            }
            _ => assert!(
                has("blocks.0.conv2.weight") && !has("stem_bn.weight"),
                "{names:?}"
            ),
        }
        let tensors = make(1).tensors();
        let classifier = tensors.iter().find(|t| t.0 == "classifier.weight").unwrap();
        assert_eq!(classifier.1, vec![3, 8], "PyTorch's [classes, features]");
    }
}

#[test]
fn every_mlp_round_trips_under_pytorch_names() {
    for (normalization, bias) in [
        (Normalization::None, false),
        (Normalization::None, true),
        (Normalization::BatchNorm, false),
        (Normalization::LayerNorm, true),
    ] {
        let make = |seed| {
            let cfg = MlpConfig::new(5, 7, 2, ActivationKind::Relu)
                .with_seed(seed)
                .with_bias(bias)
                .with_normalization(normalization);
            Net::Mlp(Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap())
        };
        let names = round_trip(make, 5);
        assert_eq!(names[0], "layers.0.weight");
        match normalization {
            Normalization::BatchNorm => {
                assert!(names.contains(&"batch_norms.1.running_mean".to_string()))
            }
            Normalization::LayerNorm => assert!(names.contains(&"layer_norms.0.bias".to_string())),
            Normalization::None => {}
        }
    }
}

/// A file of another architecture is refused, naming the tensor and both shapes.
#[test]
fn another_architecture_is_refused() {
    let small = |w| {
        let cfg = ResNetConfig::new(8, ResNetVariant::NormRelu)
            .with_base_width(w)
            .with_image_size(4)
            .with_in_channels(1)
            .with_num_classes(3);
        Net::ResNet(ResNet::new(&cfg, &Device::flex(), DType::F64).unwrap())
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.safetensors");
    export::save(&small(2), &path, ExportDType::F32).unwrap();
    let e = export::load(small(4), &path).err().unwrap().to_string();
    assert!(
        e.contains("stem.weight") && e.contains("[2, 1, 3, 3]") && e.contains("[4, 1, 3, 3]"),
        "{e}"
    );
}

fn mlp(bias: bool, normalization: Normalization) -> Net {
    let cfg = MlpConfig::new(5, 7, 2, ActivationKind::Relu)
        .with_bias(bias)
        .with_normalization(normalization);
    Net::Mlp(Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap())
}

fn resnet(variant: ResNetVariant, border_rescale: Option<bool>) -> Net {
    let mut cfg = ResNetConfig::example(8, variant)
        .with_base_width(2)
        .with_image_size(4)
        .with_in_channels(1)
        .with_num_classes(3);
    cfg.border_rescale = border_rescale;
    Net::ResNet(ResNet::new(&cfg, &Device::flex(), DType::F64).unwrap())
}

/// `src`'s tensors and `extra` (name, dtype, shape, bytes) written to a new file in `dir`.
fn with_extra(
    src: &std::path::Path,
    dir: &std::path::Path,
    extra: &[(&str, safetensors::Dtype, Vec<usize>, Vec<u8>)],
) -> std::path::PathBuf {
    use safetensors::tensor::{SafeTensors, TensorView};
    let bytes = std::fs::read(src).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let mut views: Vec<(String, TensorView)> = st
        .tensors()
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect();
    for (name, dtype, shape, data) in extra {
        views.push((
            name.to_string(),
            TensorView::new(*dtype, shape.clone(), data).unwrap(),
        ));
    }
    let out = dir.join("extra.safetensors");
    std::fs::write(&out, safetensors::serialize(views, None).unwrap()).unwrap();
    out
}

/// Issue 65 item 4: every tensor of a file must be one the network uses. A file of another
/// architecture (biases into a network without, BatchNorm's or LayerNorm's tensors into a
/// plain MLP, a BatchNorm ResNet's into NormReLU, Fixup's scalars into SELU) is refused
/// naming the first few unused tensors (in their order: `layers.2` before `layers.10`) and
/// their count, where it was loaded leaving them unread; PyTorch's derived buffers
/// (`num_batches_tracked` of a BatchNorm the network has, the border `gain` of a convolution
/// that has it) are passed over, and refused where the network has no such layer.
#[test]
fn tensors_the_network_does_not_use_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let save = |net: &Net| {
        let path = dir.path().join("w.safetensors");
        export::save(net, &path, ExportDType::F64).unwrap();
        path
    };
    let refused = |from: Net, into: Net, words: &[&str]| {
        let path = save(&from);
        let Err(e) = export::load(into, &path) else {
            panic!("loaded")
        };
        let e = e.to_string();
        assert!(e.contains("w.safetensors"), "{e}");
        assert!(e.contains("the network does not use"), "{e}");
        for w in words {
            assert!(e.contains(w), "{w:?} not in: {e}");
        }
        e
    };
    refused(
        mlp(true, Normalization::None),
        mlp(false, Normalization::None),
        &[
            "3 tensor(s)",
            "`layers.0.bias`, `layers.1.bias`, `layers.2.bias`",
        ],
    );
    let e = refused(
        mlp(false, Normalization::BatchNorm),
        mlp(false, Normalization::None),
        &[
            "8 tensor(s)",
            "`batch_norms.0.bias`",
            "`batch_norms.0.running_var`",
            "and 3 more",
        ],
    );
    assert!(
        e.contains("`batch_norms.1.bias` and 3 more") && !e.contains("batch_norms.1.weight"),
        "only the first five: {e}"
    );
    refused(
        mlp(true, Normalization::LayerNorm),
        mlp(true, Normalization::None),
        &[
            "4 tensor(s)",
            "`layer_norms.0.bias`",
            "`layer_norms.1.weight`",
        ],
    );
    refused(
        resnet(ResNetVariant::BatchNorm, None),
        resnet(ResNetVariant::NormRelu, None),
        &["28 tensor(s)", "`blocks.0.bn1.bias`", "and 23 more"],
    );
    refused(
        resnet(ResNetVariant::Fixup, None),
        resnet(ResNetVariant::Selu, None),
        &["`blocks.0.bias1a`"],
    );
    // The order of numbers: layers.2 before layers.10.
    let deep = |bias| {
        let cfg = MlpConfig::new(3, 4, 11, ActivationKind::Relu).with_bias(bias);
        Net::Mlp(Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap())
    };
    refused(
        deep(true),
        deep(false),
        &[
            "12 tensor(s)",
            "`layers.0.bias`, `layers.1.bias`, `layers.2.bias`, `layers.3.bias`, `layers.4.bias` and 7 more",
        ],
    );
    // The same architecture loads, as before.
    for net in [
        mlp(true, Normalization::BatchNorm),
        resnet(ResNetVariant::BatchNorm, None),
        resnet(ResNetVariant::NormRelu, None),
    ] {
        let path = save(&net);
        let names = net.tensors();
        let back = export::load(net, &path).unwrap();
        assert_eq!(back.tensors(), names);
    }
    // PyTorch's derived buffers, as a `state_dict` saved whole holds them.
    type Extra = (&'static str, safetensors::Dtype, Vec<usize>, Vec<u8>);
    let tracked = |name: &'static str| -> Extra {
        (
            name,
            safetensors::Dtype::I64,
            vec![],
            7i64.to_le_bytes().to_vec(),
        )
    };
    let gain = |name: &'static str| -> Extra {
        let v: Vec<u8> = (0..16).flat_map(|_| 1.0f32.to_le_bytes()).collect();
        (name, safetensors::Dtype::F32, vec![1, 1, 4, 4], v)
    };
    let bn = mlp(false, Normalization::BatchNorm);
    let file = with_extra(
        &save(&bn),
        dir.path(),
        &[
            tracked("batch_norms.0.num_batches_tracked"),
            tracked("batch_norms.1.num_batches_tracked"),
        ],
    );
    export::load(bn, &file).unwrap();
    let file = with_extra(
        &save(&mlp(false, Normalization::None)),
        dir.path(),
        &[tracked("batch_norms.0.num_batches_tracked")],
    );
    let e = export::load(mlp(false, Normalization::None), &file)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("`batch_norms.0.num_batches_tracked`"), "{e}");
    let norm_relu = resnet(ResNetVariant::NormRelu, None);
    let file = with_extra(
        &save(&norm_relu),
        dir.path(),
        &[
            gain("stem.gain"),
            gain("blocks.0.conv1.gain"),
            gain("blocks.2.conv2.gain"),
        ],
    );
    export::load(norm_relu, &file).unwrap();
    // Without the border gain (resnet.border_rescale = false) a `gain` is another network's.
    let e = export::load(resnet(ResNetVariant::NormRelu, Some(false)), &file)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("3 tensor(s)") && e.contains("`stem.gain`"),
        "{e}"
    );
}

/// A tensor missing under its name but there spelled otherwise (`layers.2.weight ` with a
/// trailing space, `Layers.2.Weight`) is named in the refusal as the likely cause
/// (eighty-first hostile round, N2: only `missing tensor` was said).
#[test]
fn a_missing_tensor_names_its_near_spellings() {
    use safetensors::tensor::{SafeTensors, TensorView};
    let dir = tempfile::tempdir().unwrap();
    let net = mlp(false, Normalization::None);
    let src = dir.path().join("w.safetensors");
    export::save(&net, &src, ExportDType::F64).unwrap();
    for spelled in ["layers.2.weight ", "Layers.2.Weight"] {
        let bytes = std::fs::read(&src).unwrap();
        let st = SafeTensors::deserialize(&bytes).unwrap();
        let views: Vec<(String, TensorView)> = st
            .tensors()
            .into_iter()
            .map(|(n, v)| match n.as_str() {
                "layers.2.weight" => (spelled.to_string(), v),
                _ => (n.to_string(), v),
            })
            .collect();
        let path = dir.path().join("renamed.safetensors");
        std::fs::write(&path, safetensors::serialize(views, None).unwrap()).unwrap();
        let Err(e) = export::load(mlp(false, Normalization::None), &path) else {
            panic!("loaded")
        };
        let e = e.to_string();
        assert!(e.contains("missing tensor `layers.2.weight`"), "{e}");
        assert!(
            e.contains(&format!("the file has {spelled:?}, spelled otherwise")),
            "{e}"
        );
    }
}
