//! The MLP: norm preservation at width 4096, determinism, weight I/O, config errors.

use burn::module::Module;
use burn::tensor::{DType, Device, Tensor, TensorData};
use ntk_model::export::{ExportDType, load_safetensors, save_safetensors};
use ntk_model::init;
use ntk_model::{ActivationKind, Mlp, MlpConfig, ModelError, Normalization};

fn unit_norm_inputs(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut x = init::gaussian(seed, 99, n, d, 1.0);
    for row in x.chunks_mut(d) {
        let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
        row.iter_mut().for_each(|v| *v /= norm);
    }
    x
}

fn tensor(x: &[f64], shape: [usize; 2], dtype: DType) -> Tensor<2> {
    Tensor::from_data(TensorData::new(x.to_vec(), shape), (&Device::flex(), dtype))
}

fn to_vec(t: Tensor<2>) -> Vec<f64> {
    t.try_into_vec_as().unwrap()
}

/// Liu & Hui Eq. (1): `||alpha_l|| = ||x||` at infinite width. At width m each layer's
/// squared-norm ratio has mean 1 and variance `V / m` with `V = Var[c s(Z)^2]` (computed by
/// quadrature for each activation); over l layers the relative deviations add in
/// variance, so the l-th layer's mean ratio lies within `5 sqrt(l V / m)` of 1 (5 sigma).
#[test]
fn ntk_forward_keeps_the_input_norm_at_width_4096() {
    let (n, d, m, depth) = (32, 16, 4096, 4);
    let x = unit_norm_inputs(n, d, 7);
    for kind in [
        ActivationKind::Relu,
        ActivationKind::Linear,
        ActivationKind::NormRelu,
    ] {
        let config = MlpConfig::new(d, m, depth, kind).with_seed(3);
        let mlp = Mlp::new(&config, &Device::flex(), DType::F32).unwrap();
        let v = config.activation().norm_ratio_variance();
        let trace = mlp.forward_trace(tensor(&x, [n, d], DType::F32));
        for l in 1..=depth {
            let a = to_vec(trace.inputs[l].clone());
            let mean_ratio = a
                .chunks(m)
                .map(|row| row.iter().map(|v| v * v).sum::<f64>())
                .sum::<f64>()
                / n as f64;
            let tol = 5.0 * (l as f64 * v / m as f64).sqrt();
            assert!(
                (mean_ratio - 1.0).abs() < tol,
                "{kind}: layer {l}: ||a_l||^2 / ||x||^2 = {mean_ratio}, tolerance {tol}"
            );
        }
        // The linear network's variance is 0 only in the limit; V = 2 for Z^2.
        if kind == ActivationKind::Linear {
            assert!((v - 2.0).abs() < 1e-12);
        }
    }
}

#[test]
fn same_seed_same_weights_other_seed_other_weights() {
    let config = MlpConfig::new(5, 64, 3, ActivationKind::Relu).with_seed(11);
    let a = Mlp::new(&config, &Device::flex(), DType::F64).unwrap();
    let b = Mlp::new(&config, &Device::flex(), DType::F64).unwrap();
    let c = Mlp::new(&config.clone().with_seed(12), &Device::flex(), DType::F64).unwrap();
    for l in 0..4 {
        assert_eq!(a.weight_out_in(l), b.weight_out_in(l));
        assert_ne!(a.weight_out_in(l).0, c.weight_out_in(l).0);
    }
    // Layer l's draws do not depend on the depth of the network.
    let deeper = Mlp::new(
        &MlpConfig::new(5, 64, 6, ActivationKind::Relu).with_seed(11),
        &Device::flex(),
        DType::F64,
    )
    .unwrap();
    assert_eq!(a.weight_out_in(1), deeper.weight_out_in(1));
    // f32 weights are the f64 draws rounded.
    let f32_model = Mlp::new(&config, &Device::flex(), DType::F32).unwrap();
    let (w64, _) = a.weight_out_in(0);
    let (w32, _) = f32_model.weight_out_in(0);
    assert!(w64.iter().zip(&w32).all(|(a, b)| (*a as f32) as f64 == *b));
}

/// A depth sweep builds each seed's deepest network once and truncates it: the result is
/// `Mlp::new` at that depth, parameter for parameter.
#[test]
fn truncated_networks_are_the_shallower_networks() {
    use ntk_model::{Normalization, Parameterization};
    for (config, dtype) in [
        (
            MlpConfig::new(5, 48, 6, ActivationKind::Relu).with_seed(4),
            DType::F64,
        ),
        (
            MlpConfig::new(5, 48, 6, ActivationKind::Tanh)
                .with_seed(9)
                .with_bias(true)
                .with_parameterization(Parameterization::Standard)
                .with_normalization(Normalization::LayerNorm),
            DType::F32,
        ),
    ] {
        let deep = Mlp::new(&config, &Device::flex(), dtype).unwrap();
        for depth in [0, 1, 3, 6] {
            if config.normalization != Normalization::None && depth == 0 {
                // Invalid for Mlp::new too: nothing to normalize.
                assert!(deep.truncated(0).is_err());
                continue;
            }
            let cut = deep.truncated(depth).unwrap();
            let fresh = Mlp::new(
                &MlpConfig {
                    depth,
                    ..config.clone()
                },
                &Device::flex(),
                dtype,
            )
            .unwrap();
            assert_eq!(cut.config(), fresh.config());
            assert_eq!(cut.scales(), fresh.scales());
            assert_eq!(cut.layers.len(), depth + 1);
            assert_eq!(cut.layer_norms.len(), fresh.layer_norms.len());
            for l in 0..=depth {
                assert_eq!(
                    cut.weight_out_in(l),
                    fresh.weight_out_in(l),
                    "depth {depth} layer {l}"
                );
            }
            let x = tensor(&unit_norm_inputs(3, 5, 1), [3, 5], dtype);
            assert_eq!(to_vec(cut.forward(x.clone())), to_vec(fresh.forward(x)));
        }
        let err = deep.truncated(7).unwrap_err().to_string();
        assert!(err.contains("depth") && err.contains('7'), "{err}");
    }
}

#[test]
fn forward_matches_a_hand_computation() {
    // depth 1, paper convention: f = w2 . sqrt(2/m) relu(W1 x).
    let config = MlpConfig::new(3, 4, 1, ActivationKind::Relu).with_seed(5);
    let mlp = Mlp::new(&config, &Device::flex(), DType::F64).unwrap();
    let x = [0.3, -1.2, 0.5];
    let (w1, _) = mlp.weight_out_in(0);
    let (w2, _) = mlp.weight_out_in(1);
    let mut f = 0.0;
    for j in 0..4 {
        let z: f64 = (0..3).map(|i| w1[j * 3 + i] * x[i]).sum();
        f += w2[j] * (2.0f64 / 4.0).sqrt() * z.max(0.0);
    }
    let out = to_vec(mlp.forward(tensor(&x, [1, 3], DType::F64)));
    assert!((out[0] - f).abs() < 1e-13, "{} vs {f}", out[0]);
}

#[test]
fn safetensors_round_trip_with_pytorch_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("weights.safetensors");
    let config = MlpConfig::new(5, 8, 2, ActivationKind::Tanh)
        .with_seed(1)
        .with_bias(true)
        .with_output_dim(3);
    let mlp = Mlp::new(&config, &Device::flex(), DType::F64).unwrap();
    save_safetensors(&mlp, &path, ExportDType::F64).unwrap();

    // Names and shapes as PyTorch's nn.Linear stores them: [out, in].
    let bytes = std::fs::read(&path).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut names = st.names();
    names.sort();
    assert_eq!(
        names,
        [
            "layers.0.bias",
            "layers.0.weight",
            "layers.1.bias",
            "layers.1.weight",
            "layers.2.bias",
            "layers.2.weight"
        ]
    );
    assert_eq!(st.tensor("layers.0.weight").unwrap().shape(), &[8, 5]);
    assert_eq!(st.tensor("layers.1.weight").unwrap().shape(), &[8, 8]);
    assert_eq!(st.tensor("layers.2.weight").unwrap().shape(), &[3, 8]);
    let w0 = st.tensor("layers.0.weight").unwrap();
    let first = f64::from_le_bytes(w0.data()[..8].try_into().unwrap());
    assert_eq!(first, mlp.weight_out_in(0).0[0]);

    // Loading into a differently seeded model restores the outputs exactly.
    let other = Mlp::new(&config.clone().with_seed(2), &Device::flex(), DType::F64).unwrap();
    let loaded = load_safetensors(other, &path).unwrap();
    let x = tensor(
        &[0.1, 0.2, -0.3, 0.4, 0.5, 1.0, -1.0, 0.0, 0.5, 0.5],
        [2, 5],
        DType::F64,
    );
    assert_eq!(to_vec(mlp.forward(x.clone())), to_vec(loaded.forward(x)));

    // A wrong architecture is refused, naming the tensor and both shapes.
    let wrong = Mlp::new(
        &MlpConfig::new(5, 9, 2, ActivationKind::Tanh)
            .with_bias(true)
            .with_output_dim(3),
        &Device::flex(),
        DType::F64,
    )
    .unwrap();
    let err = load_safetensors(wrong, &path).unwrap_err().to_string();
    assert!(
        err.contains("layers.0.weight") && err.contains("[8, 5]") && err.contains("[9, 5]"),
        "{err}"
    );
}

#[test]
fn burn_recorder_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.bpk");
    let config = MlpConfig::new(4, 16, 2, ActivationKind::Gelu).with_seed(9);
    let mlp = Mlp::new(&config, &Device::flex(), DType::F32).unwrap();
    let x = tensor(&[0.5, -0.5, 1.0, 2.0], [1, 4], DType::F32);
    let expected = to_vec(mlp.forward(x.clone()));
    mlp.save_file(&path).unwrap();
    let fresh = Mlp::new(&config.with_seed(10), &Device::flex(), DType::F32).unwrap();
    assert_ne!(to_vec(fresh.forward(x.clone())), expected);
    let loaded = fresh.try_load_file(&path).unwrap();
    assert_eq!(to_vec(loaded.forward(x)), expected);
}

#[test]
fn bad_configs_name_the_field() {
    let check = |config: MlpConfig, field: &str| {
        let err = Mlp::new(&config, &Device::flex(), DType::F32).unwrap_err();
        assert!(matches!(err, ModelError::InvalidConfig { .. }));
        assert!(err.to_string().contains(field), "{err}");
    };
    check(MlpConfig::new(0, 8, 1, ActivationKind::Relu), "input_dim");
    check(MlpConfig::new(3, 0, 2, ActivationKind::Relu), "width");
    check(
        MlpConfig::new(3, 8, 2, ActivationKind::Relu).with_kink(-1.0),
        "kink",
    );
    // An unknown activation name is refused by the deserializer, naming it.
    let err = serde_json::from_str::<MlpConfig>(
        r#"{"input_dim": 3, "width": 8, "depth": 1, "activation": "swish"}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("swish") && err.contains("relu"), "{err}");
}

/// A BatchNorm or LayerNorm MLP in f64 trains in f64: its normalization layers' parameters
/// and running statistics are built in the network's float type (an f32 running mean once
/// made the first f64 training step panic on a dtype mismatch).
#[test]
fn normalized_networks_train_in_f64() {
    for norm in [Normalization::BatchNorm, Normalization::LayerNorm] {
        let cfg = MlpConfig::new(3, 8, 2, ActivationKind::Relu)
            .with_output_dim(2)
            .with_normalization(norm);
        let device = Device::flex();
        let mlp = Mlp::new(&cfg, &device, DType::F64).unwrap();
        let ad = device.autodiff();
        let mlp = mlp.fork(&ad).train();
        let x = tensor(&unit_norm_inputs(4, 3, 1), [4, 3], DType::F64).to_device(&ad);
        let y = mlp.forward(x);
        assert_eq!(y.dtype(), DType::F64, "{norm:?}");
        let grads = y.sum().backward();
        let w = mlp.layers[0].weight.val();
        let g = w.grad(&grads).expect("a gradient of the first layer");
        assert_eq!(g.dtype(), DType::F64, "{norm:?}");
        assert!(
            to_vec(
                mlp.valid()
                    .forward(tensor(&[1.0, 0.0, 0.0], [1, 3], DType::F64))
            )
            .iter()
            .all(|v| v.is_finite())
        );
    }
}

/// Eighth hostile round: `convention` places the NTK parameterization's forward scales; under
/// the standard parameterization, which has none, a value other than the default is refused
/// by name (it was accepted and recorded, changing nothing).
#[test]
fn a_convention_under_the_standard_parameterization_is_refused() {
    use ntk_model::{NtkConvention, Parameterization};
    let mut c = MlpConfig::new(5, 8, 2, ActivationKind::Relu);
    c.parameterization = Parameterization::Standard;
    c.validate().unwrap();
    c.convention = NtkConvention::Official;
    let e = c.validate().unwrap_err().to_string();
    assert!(
        e.contains("convention") && e.contains("official") && e.contains("standard"),
        "{e}"
    );
    c.parameterization = Parameterization::Ntk;
    c.validate().unwrap();
}
