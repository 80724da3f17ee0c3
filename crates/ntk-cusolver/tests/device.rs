//! The cuSOLVER route against LAPACK (`ntk_numerics::linalg::sym_eigenvalues`) and against
//! the same algorithm on Burn tensors (`ntk_kernel::extreme::extreme` on flex): kernels with
//! a known spectrum (`Q diag(lambda) Q^T`), a singular Gram matrix, every eigenvalue by
//! `syevd`. Everything is f64: `lambda_min` and `lambda_max` within `1e-8` relative of
//! LAPACK (Lanczos' tolerance `1e-10` plus the factorization's rounding, `kappa eps`), every
//! eigenvalue within `64 n eps lambda_max` (Weyl: both solvers are backward stable).
//!
//! These run where an NVIDIA GPU and its libraries are present (the device call of
//! experiments/bench/gpu/cusolver.sh); elsewhere each says why it skips.

use burn::tensor::{DType, Tensor, TensorData};
use ntk_kernel::extreme::{self, Options};
use ntk_numerics::kernel::Kernel;
use ntk_numerics::linalg::sym_eigenvalues;

/// Whether a GPU and the libraries are here; says why not otherwise.
fn gpu_here() -> bool {
    if let Err(m) = ntk_cusolver::libraries::probe() {
        eprintln!("skipped: {m}");
        return false;
    }
    match ntk_cusolver::device::with_gpu(|g| Ok(g.name.clone())) {
        Ok(name) => {
            eprintln!("on {name}");
            true
        }
        Err(e) => {
            eprintln!("skipped: no device ({e})");
            false
        }
    }
}

/// A reproducible uniform stream in [-1, 1).
fn uniform(seed: u64, len: usize) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

/// `Q diag(lambda) Q^T` with `Q` a product of three Householder reflections.
fn known(lambda: &[f64], seed: u64) -> Kernel {
    let n = lambda.len();
    let mut q: Vec<f64> = (0..n * n)
        .map(|i| if i / n == i % n { 1.0 } else { 0.0 })
        .collect();
    for r in 0..3 {
        let v = uniform(seed + r, n);
        let vv: f64 = v.iter().map(|x| x * x).sum();
        // Q <- Q (I - 2 v v^T / v^T v)
        for row in 0..n {
            let dot: f64 = (0..n).map(|j| q[row * n + j] * v[j]).sum();
            for j in 0..n {
                q[row * n + j] -= 2.0 * dot * v[j] / vv;
            }
        }
    }
    let mut data = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            data[i * n + j] = (0..n)
                .map(|k| q[i * n + k] * lambda[k] * q[j * n + k])
                .sum();
        }
    }
    Kernel { size: n, data }
}

/// `F F^T` for `F` with `n` rows of `m` random features: rank `m` when `m < n`.
fn gram(n: usize, m: usize, seed: u64) -> Kernel {
    let f = uniform(seed, n * m);
    let mut data = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            data[i * n + j] = (0..m).map(|k| f[i * m + k] * f[j * m + k]).sum();
        }
    }
    Kernel { size: n, data }
}

/// The CPU backend's device, for the Burn route.
fn flex() -> burn::tensor::Device {
    ntk_numerics::backend::select(Some("flex"), ntk_numerics::backend::Precision::F64)
        .unwrap()
        .device
}

fn rel(a: f64, b: f64) -> f64 {
    (a / b - 1.0).abs()
}

#[test]
fn kappa_matches_lapack_and_the_burn_route() {
    if !gpu_here() {
        return;
    }
    let n = 400;
    // A well-separated bottom and top, kappa 1e6, a cluster in between.
    let lambda: Vec<f64> = (0..n)
        .map(|i| match i {
            0 => 1e-3,
            i if i == n - 1 => 1e3,
            i => 0.5 + i as f64 / n as f64,
        })
        .collect();
    let k = known(&lambda, 3);
    let o = Options::default();
    let e = ntk_cusolver::extreme(&k, f64::EPSILON, &o).unwrap();
    assert!(e.converged && !e.singular, "{e:?}");
    assert!(rel(e.lambda_min, 1e-3) < 1e-8, "{e:?}");
    assert!(rel(e.lambda_max, 1e3) < 1e-8, "{e:?}");
    assert!(rel(e.kappa, 1e6) < 1e-8, "{e:?}");
    let lapack = sym_eigenvalues(&k.data, n).unwrap();
    assert!(
        rel(e.lambda_min, lapack[0]) < 1e-8,
        "{e:?} vs {}",
        lapack[0]
    );
    let t = Tensor::<2>::from_data(
        TensorData::new(k.data.clone(), [n, n]),
        (&flex(), DType::F64),
    );
    let b = extreme::extreme(t, f64::EPSILON, &o).unwrap();
    assert!(
        rel(e.lambda_min, b.lambda_min) < 1e-8,
        "{e:?} vs flex {b:?}"
    );
    assert!(
        rel(e.lambda_max, b.lambda_max) < 1e-8,
        "{e:?} vs flex {b:?}"
    );
}

#[test]
fn a_singular_gram_matrix_is_reported_singular() {
    if !gpu_here() {
        return;
    }
    let (n, m) = (300, 40);
    let k = gram(n, m, 5);
    let e = ntk_cusolver::extreme(&k, f64::EPSILON, &Options::default()).unwrap();
    assert!(e.singular && e.kappa.is_infinite(), "{e:?}");
    assert!(e.rank_lower_bound <= m, "{e:?}");
    let s = ntk_cusolver::spectrum(&k, f64::EPSILON).unwrap();
    assert!(s.singular, "{s:?}");
    assert_eq!(s.rank, m, "{s:?}");
}

#[test]
fn every_eigenvalue_matches_lapack() {
    if !gpu_here() {
        return;
    }
    for (n, seed) in [(1, 1), (7, 2), (300, 3)] {
        let k = gram(n, n + 5, seed);
        let s = ntk_cusolver::spectrum(&k, f64::EPSILON).unwrap();
        let lapack = sym_eigenvalues(&k.data, n).unwrap();
        let top = lapack[n - 1].abs();
        let bound = 64.0 * n as f64 * f64::EPSILON * top;
        for (i, (a, b)) in s.eigenvalues.iter().zip(&lapack).enumerate() {
            assert!(
                (a - b).abs() <= bound,
                "n {n}: eigenvalue {i}: {a} vs LAPACK {b}"
            );
        }
    }
}

#[test]
fn bad_kernels_are_errors() {
    if !gpu_here() {
        return;
    }
    let mut k = gram(5, 8, 1);
    // A NaN anywhere (not only last) is the non-finite kernel, by both routes.
    k.data[7] = f64::NAN;
    let non_finite = |r: Result<String, String>| {
        let e = r.expect_err("a NaN kernel is an error");
        assert!(e.contains("non-finite entries"), "{e}");
    };
    non_finite(
        ntk_cusolver::extreme(&k, f64::EPSILON, &Options::default())
            .map(|e| format!("{e:?}"))
            .map_err(|e| e.to_string()),
    );
    non_finite(
        ntk_cusolver::spectrum(&k, f64::EPSILON)
            .map(|s| format!("{s:?}"))
            .map_err(|e| e.to_string()),
    );
    let huge = Kernel {
        size: usize::MAX,
        data: vec![1.0],
    };
    assert!(matches!(
        ntk_cusolver::extreme(&huge, f64::EPSILON, &Options::default()),
        Err(ntk_cusolver::Error::Shape { .. })
    ));
    let empty = Kernel {
        size: 0,
        data: vec![],
    };
    assert!(matches!(
        ntk_cusolver::spectrum(&empty, f64::EPSILON),
        Err(ntk_cusolver::Error::Shape { .. })
    ));
    let zero = Kernel {
        size: 3,
        data: vec![0.0; 9],
    };
    let e = ntk_cusolver::extreme(&zero, f64::EPSILON, &Options::default()).unwrap();
    assert!(e.singular && e.rank_lower_bound == 0, "{e:?}");
}

/// The whole MLP kernel formed on the device from the factors (`ntk_cusolver::whole`, the
/// route of `probe.eigen = "tiled"` on a GPU) against the host's tiles of the same factors
/// (`ntk_kernel::extreme::tiled`): `lambda_min` and `lambda_max` within `1e-8` relative (the
/// same Lanczos tolerance on both, the kernels equal to rounding), the minimum gradient angle
/// within `1e-8` degrees and at the same pair. `n = 2600` crosses a panel boundary
/// (`whole::PANEL` = 2048); with biases and two outputs summed, and without.
#[test]
fn the_whole_kernel_formed_on_the_device_matches_the_host_tiles() {
    use ntk_kernel::extreme::tiled::Tiled;
    use ntk_kernel::host::tiles::TileSource;
    use ntk_model::{ActivationKind, Mlp, MlpConfig};
    if !gpu_here() {
        return;
    }
    let (n, d) = (2600, 5);
    let x = ntk_model::init::gaussian(3, 1234, n, d, 1.0);
    for (act, bias, outputs) in [
        (ActivationKind::Tanh, true, vec![0, 1]),
        (ActivationKind::Relu, false, vec![0]),
    ] {
        let cfg = MlpConfig::new(d, 64, 3, act)
            .with_seed(4)
            .with_bias(bias)
            .with_output_dim(2);
        let mlp = Mlp::new(&cfg, &flex(), DType::F64).unwrap();
        let source = TileSource::new(&mlp, &x, n, &outputs);
        let options = Options {
            block: 256,
            ..Default::default()
        };
        let gpu = ntk_cusolver::whole::solve(&source, &options).unwrap();
        let mut tiles = Tiled::from_source(&source, 256, ntk_runs::progress::Reporter::silent());
        let angle = tiles.min_angle(&source.diagonal()).unwrap();
        let host = extreme::solve(&mut tiles, f64::EPSILON, &options).unwrap();
        let (g, h) = (&gpu.extreme, &host);
        eprintln!(
            "{act:?}: lambda_min {:e} / {:e}, lambda_max {:e} / {:e}, angle {} / {} deg",
            g.lambda_min,
            h.lambda_min,
            g.lambda_max,
            h.lambda_max,
            gpu.min_angle.as_ref().map_or(f64::NAN, |a| a.deg),
            angle.deg
        );
        let kappa_tol = 1e-8 + n as f64 * f64::EPSILON * h.lambda_max / h.lambda_min;
        assert!(
            rel(g.lambda_min, h.lambda_min) < kappa_tol,
            "{act:?}: lambda_min"
        );
        assert!(
            rel(g.lambda_max, h.lambda_max) < 1e-8,
            "{act:?}: lambda_max"
        );
        let a = gpu.min_angle.expect("an angle");
        assert!((a.deg - angle.deg).abs() < 1e-8, "{act:?}: min angle");
        assert_eq!((a.i, a.j), (angle.i, angle.j), "{act:?}: the pair");
    }
}
