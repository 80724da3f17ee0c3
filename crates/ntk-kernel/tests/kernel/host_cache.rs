//! The depth-sweep reuse of the host engine's forward (`host::Forward`): a shallower network
//! with the same seed shares the deeper one's hidden layers, and its kernel from the cached
//! forward is bit-for-bit the fresh computation, whether the forward keeps its Grams (a depth
//! sweep's cache) or forms each once (one kernel's); anything else replaces the cache.

use burn::tensor::{DType, Device};
use ntk_kernel::host::{self, Forward, Reuse};
use ntk_model::{ActivationKind, Mlp, MlpConfig};

fn mlp(depth: usize, seed: u64, act: ActivationKind, outputs: usize) -> Mlp {
    let cfg = MlpConfig {
        output_dim: outputs,
        ..MlpConfig::new(6, 32, depth, act).with_seed(seed)
    };
    Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap()
}

fn inputs(n: usize) -> Vec<f64> {
    (0..n * 6)
        .map(|i| ((i * 7919 % 211) as f64 / 105.5 - 1.0) * 0.9)
        .collect()
}

#[test]
fn shallower_networks_reuse_the_deeper_forward_exactly() {
    let n = 40;
    let x = inputs(n);
    let cases = [
        (ActivationKind::Relu, vec![0]),
        (ActivationKind::Tanh, vec![0, 1]),
    ];
    for ((act, outputs), reuse) in cases
        .into_iter()
        .flat_map(|c| [(c.clone(), Reuse::DepthSweep), (c, Reuse::OneKernel)])
    {
        let k = outputs.len();
        let mut cache: Option<Forward<f64>> = None;
        for depth in (0..=4).rev() {
            let net = mlp(depth, 7, act, k);
            let cached = host::ntk_with(&net, &x, n, &outputs, &mut cache, reuse);
            assert_eq!(
                cache.as_ref().unwrap().depth(),
                4,
                "{act:?} {reuse:?} depth {depth}: reused"
            );
            let fresh = host::ntk::<f64>(&net, &x, n, &outputs);
            assert_eq!(cached.data, fresh.data, "{act:?} {reuse:?} depth {depth}");
        }
        // Another seed: other hidden weights, the cache is replaced.
        let other = mlp(2, 8, act, k);
        let cached = host::ntk_with(&other, &x, n, &outputs, &mut cache, reuse);
        assert_eq!(cache.as_ref().unwrap().depth(), 2);
        assert_eq!(cached.data, host::ntk::<f64>(&other, &x, n, &outputs).data);
        // Other inputs: replaced too.
        let y = inputs(n + 1);
        let net = mlp(1, 8, act, k);
        let cached = host::ntk_with(&net, &y, n + 1, &outputs, &mut cache, reuse);
        assert_eq!(cache.as_ref().unwrap().depth(), 1);
        assert_eq!(
            cached.data,
            host::ntk::<f64>(&net, &y, n + 1, &outputs).data
        );
    }
}
