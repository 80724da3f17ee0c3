//! Shared helpers of the kernel's tests.
#![allow(dead_code)]

use burn::tensor::{DType, Tensor, TensorData};
use ntk_model::{Mlp, MlpConfig};
use ntk_numerics::backend::{self, Compute, Precision};

pub fn compute(precision: Precision) -> Compute {
    backend::select(Some("flex"), precision).expect("flex is built in")
}

pub fn tensor(x: &[f64], n: usize, d: usize, c: &Compute) -> Tensor<2> {
    Tensor::from_data(TensorData::new(x.to_vec(), [n, d]), (&c.device, c.dtype()))
}

pub fn mlp(cfg: &MlpConfig, c: &Compute) -> Mlp {
    Mlp::new(cfg, &c.device, c.dtype()).expect("valid config")
}

/// Deterministic N(0, 1) inputs.
pub fn gaussian_inputs(n: usize, d: usize, seed: u64) -> Vec<f64> {
    ntk_model::init::gaussian(seed, 1234, n, d, 1.0)
}

pub fn dtype(p: Precision) -> DType {
    p.dtype()
}
