//! Times the whole-set route of a ReLU MLP's NTK held in tiles ([`ntk_kernel::extreme::tiled`]):
//! the factors, the tiles' formation, Lanczos on `K`, the factorization, Lanczos on `K^{-1}`,
//! with the flop counts beside them (issue: the condition number of all 60,000 MNIST images).
//!
//!     cargo run --release -p ntk-probe --example tiled_kappa -- N [DEPTH] [WIDTH] [BLOCK]
//!
//! Inputs: N points of N(0, I_784 / 784) (MNIST's shape), seed 1.

use std::time::Instant;

use burn::tensor::{DType, Device};
use ntk_kernel::extreme::{self, Operand, tiled::Tiled};
use ntk_kernel::host::tiles::TileSource;
use ntk_model::{ActivationKind, Mlp, MlpConfig};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let n = *args.first().unwrap_or(&4000);
    let depth = *args.get(1).unwrap_or(&10);
    let width = *args.get(2).unwrap_or(&512);
    let block = *args.get(3).unwrap_or(&1024);
    let d = 784;
    let x = ntk_model::init::gaussian(1, 5, n, d, 1.0 / (d as f64).sqrt());
    let cfg = MlpConfig::new(d, width, depth, ActivationKind::Relu).with_seed(1);
    let mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).expect("a valid config");
    let t = Instant::now();
    let src = TileSource::new(&mlp, &x, n, &[0]);
    let factors = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut tiles = Tiled::from_source(&src, block, ntk_runs::progress::Reporter::default());
    let form = t.elapsed().as_secs_f64();
    let (nf, df, wf) = (n as f64, d as f64, width as f64);
    // Lower triangle (with the diagonal tiles whole): ~(n^2 / 2) entries, each 2 GEMM
    // multiply-adds per layer and width, plus the output layer and the first layer's d.
    let form_flops = nf * nf / 2.0 * 2.0 * (2.0 * wf * depth as f64 + df + wf);
    let options = extreme::Options {
        block,
        ..Default::default()
    };
    let t = Instant::now();
    let e = extreme::solve(&mut tiles, f64::EPSILON, &options).expect("the solve");
    let solve = t.elapsed().as_secs_f64();
    let chol_flops = nf * nf * nf / 3.0;
    println!(
        "n {n} depth {depth} width {width} block {block}: tiles {:.2} GB, factors {:.2} GB",
        tiles.bytes() as f64 / 1e9,
        src.bytes() as f64 / 1e9
    );
    println!(
        "factors {factors:.2} s; formation {form:.2} s ({:.1} GFLOP/s of {:.2e} flop)",
        form_flops / form / 1e9,
        form_flops
    );
    println!(
        "solve {solve:.2} s (factorization {:.2e} flop, Lanczos steps {:?}): kappa {:.6e}, lambda_min {:.6e}, lambda_max {:.6e}, singular {}",
        chol_flops, e.steps, e.kappa, e.lambda_min, e.lambda_max, e.singular
    );
    assert_eq!(tiles.size(), n);
}
