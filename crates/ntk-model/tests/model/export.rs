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
            let cfg = ResNetConfig::new(8, variant)
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
