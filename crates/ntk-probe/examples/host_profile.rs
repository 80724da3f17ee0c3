use burn::tensor::{DType, Device};
use ntk_model::{ActivationKind, Mlp, MlpConfig};
use std::time::Instant;
fn main() {
    let (n, d) = (2000, 5);
    let cfg = MlpConfig::new(d, 512, 10, ActivationKind::Relu).with_seed(1);
    let mlp = Mlp::new(&cfg, &Device::flex(), DType::F32).unwrap();
    let x: Vec<f64> = ntk_data::gaussian(n, d, 0)
        .x
        .iter()
        .map(|v| *v as f64)
        .collect();
    for _ in 0..2 {
        let t = Instant::now();
        let f = ntk_kernel::host::factors::<f32>(&mlp, &x, n, &[0]);
        println!("factors {:.3}", t.elapsed().as_secs_f64());
        let t = Instant::now();
        let _k = ntk_kernel::host::ntk::<f32>(&mlp, &x, n, &[0]);
        println!("ntk total {:.3}", t.elapsed().as_secs_f64());
        drop(f);
    }
}
