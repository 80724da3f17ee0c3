//! The device route to kappa (blocked Cholesky + Lanczos, `ntk_kernel::extreme`) against
//! LAPACK's full spectrum (`linalg::sym_eigenvalues`): kappa within 1e-8 relative when the
//! solve runs in f64, for kernels built in f32 and f64, on flex and (with `--features
//! wgpu`, lavapipe in CI) on wgpu.

use crate::common::*;
use burn::tensor::{DType, Tensor, TensorData};
use ntk_kernel::extreme::{self, Options, cholesky};
use ntk_kernel::structured;
use ntk_model::{ActivationKind, MlpConfig};
use ntk_numerics::backend::{Compute, Precision};
use ntk_numerics::kernel::{Kernel, OutputMode};
use ntk_numerics::spectrum::spectrum;

/// Small blocks, so that a test kernel spans several block columns (and a ragged last one).
fn options() -> Options {
    Options {
        block: 32,
        ..Options::default()
    }
}

fn upload(k: &Kernel, c: &Compute, dtype: DType) -> Tensor<2> {
    Tensor::from_data(
        TensorData::new(k.data.clone(), [k.size, k.size]),
        (&c.device, dtype),
    )
}

/// An NTK built on `c`'s device in `c`'s precision, read back as a host kernel too.
fn ntk_on(c: &Compute, kind: ActivationKind, depth: usize, n: usize) -> (Tensor<2>, Kernel) {
    let d = 5;
    let x = gaussian_inputs(n, d, 7);
    let cfg = MlpConfig::new(d, 64, depth, kind).with_seed(11);
    let net = mlp(&cfg, c);
    let t = structured::ntk_tensor(&net, tensor(&x, n, d, c), OutputMode::Sum).unwrap();
    let host = Kernel {
        size: n,
        data: t.clone().try_into_vec_as().unwrap(),
    };
    (t, host)
}

fn assert_matches_lapack(label: &str, k: &Kernel, t: Tensor<2>, kernel_eps: f64, rel: f64) {
    for explicit_inverse in [false, true] {
        let o = Options {
            explicit_inverse,
            ..options()
        };
        let label = format!("{label}, explicit inverse {explicit_inverse}");
        assert_matches_lapack_with(&label, k, t.clone(), kernel_eps, rel, &o);
    }
}

fn assert_matches_lapack_with(
    label: &str,
    k: &Kernel,
    t: Tensor<2>,
    kernel_eps: f64,
    rel: f64,
    o: &Options,
) {
    let full = spectrum(k, kernel_eps).unwrap();
    assert!(!full.singular, "{label}: test kernel is singular: {full:?}");
    let e = extreme::extreme(t, kernel_eps, o).unwrap();
    assert!(e.converged, "{label}: {e:?}");
    assert!(!e.singular, "{label}: {e:?}");
    let err = |a: f64, b: f64| (a / b - 1.0).abs();
    assert!(
        err(e.kappa, full.kappa) <= rel
            && err(e.lambda_max, full.lambda_max) <= rel
            && err(e.lambda_min, full.lambda_min) <= rel,
        "{label}: extreme {e:?} vs LAPACK lambda_min {:e} lambda_max {:e} kappa {:e}",
        full.lambda_min,
        full.lambda_max,
        full.kappa
    );
    // Ritz values bound from inside: lambda_max from below, lambda_min from above, up to
    // the rounding of either solver (~ n eps lambda_max, Weyl).
    let slack = 16.0 * k.size as f64 * f64::EPSILON * full.lambda_max;
    assert!(
        e.lambda_max <= full.lambda_max + slack,
        "{label}: {e:?} vs {full:?}"
    );
    assert!(
        e.lambda_min >= full.lambda_min - slack,
        "{label}: {e:?} vs {full:?}"
    );
}

/// Real NTKs (ReLU, tanh, NormReLU) built in f64 and in f32, solved in f64 on flex.
#[test]
fn kappa_matches_lapack_on_flex() {
    for precision in [Precision::F64, Precision::F32] {
        let c = compute(precision);
        let f64c = compute(Precision::F64);
        for (kind, depth) in [
            (ActivationKind::Relu, 3),
            (ActivationKind::Tanh, 5),
            (ActivationKind::NormRelu, 4),
        ] {
            let (_, k) = ntk_on(&c, kind, depth, 150);
            let label = format!("flex {precision} {kind} depth {depth}");
            assert_matches_lapack(
                &label,
                &k,
                upload(&k, &f64c, DType::F64),
                precision.epsilon(),
                1e-8,
            );
        }
    }
}

/// `Q diag(lambda) Q^T` with `Q` a product of four Householder reflections.
fn with_spectrum(lambda: &[f64]) -> Kernel {
    let n = lambda.len();
    let mut q = vec![0.0f64; n * n];
    for i in 0..n {
        q[i * n + i] = 1.0;
    }
    for r in 0..4u64 {
        let v = gaussian_inputs(n, 1, 100 + r);
        let vv: f64 = v.iter().map(|x| x * x).sum();
        // Q <- (I - 2 v v^T / v^T v) Q
        for col in 0..n {
            let dot: f64 = (0..n).map(|i| v[i] * q[i * n + col]).sum();
            for i in 0..n {
                q[i * n + col] -= 2.0 * v[i] * dot / vv;
            }
        }
    }
    let mut data = vec![0.0f64; n * n];
    for i in 0..n {
        for j in 0..n {
            data[i * n + j] = (0..n)
                .map(|m| q[i * n + m] * lambda[m] * q[j * n + m])
                .sum();
        }
    }
    Kernel { size: n, data }
}

/// Kappa 1e6 with a well-separated bottom.
fn known_kernel() -> Kernel {
    let n = 120;
    let lambda: Vec<f64> = (0..n)
        .map(|i| {
            if i == 0 {
                1e-6
            } else {
                1e-3 * 1e3f64.powf(i as f64 / (n - 1) as f64)
            }
        })
        .collect();
    with_spectrum(&lambda)
}

/// A kernel with a known spectrum, kappa 1e6, on flex and on the host route.
#[test]
fn known_spectrum_is_recovered() {
    let k = known_kernel();
    let c = compute(Precision::F64);
    let e = extreme::extreme(upload(&k, &c, DType::F64), f64::EPSILON, &options()).unwrap();
    assert!((e.kappa / 1e6 - 1.0).abs() < 1e-8, "{e:?}");
    assert!((e.lambda_min / 1e-6 - 1.0).abs() < 1e-8, "{e:?}");
    let h = extreme::dense::of_host(&k, f64::EPSILON).unwrap();
    assert!((h.kappa / 1e6 - 1.0).abs() < 1e-8, "{h:?}");
    assert!((h.lambda_min / 1e-6 - 1.0).abs() < 1e-8, "{h:?}");
}

/// The host route (`extreme::dense`: LAPACK's Cholesky and Lanczos on the host BLAS) against
/// LAPACK's full spectrum, on real NTKs built in f64 and f32 and on the known spectrum: the
/// same tolerance and Ritz bounds as the device route.
#[test]
fn the_host_route_matches_lapack() {
    let check = |label: &str, k: &Kernel, kernel_eps: f64| {
        let full = spectrum(k, kernel_eps).unwrap();
        assert!(!full.singular, "{label}: test kernel is singular: {full:?}");
        let e = extreme::dense::of_host(k, kernel_eps).unwrap();
        assert!(
            e.converged && !e.singular && e.rank_lower_bound == k.size,
            "{label}: {e:?}"
        );
        let err = |a: f64, b: f64| (a / b - 1.0).abs();
        assert!(
            err(e.kappa, full.kappa) <= 1e-8
                && err(e.lambda_max, full.lambda_max) <= 1e-8
                && err(e.lambda_min, full.lambda_min) <= 1e-8,
            "{label}: {e:?} vs LAPACK {full:?}"
        );
        let slack = 16.0 * k.size as f64 * f64::EPSILON * full.lambda_max;
        assert!(e.lambda_max <= full.lambda_max + slack, "{label}: {e:?}");
        assert!(e.lambda_min >= full.lambda_min - slack, "{label}: {e:?}");
    };
    for precision in [Precision::F64, Precision::F32] {
        let c = compute(precision);
        for (kind, depth) in [
            (ActivationKind::Relu, 3),
            (ActivationKind::Tanh, 5),
            (ActivationKind::NormRelu, 4),
        ] {
            let (_, k) = ntk_on(&c, kind, depth, 150);
            check(
                &format!("host {precision} {kind} depth {depth}"),
                &k,
                precision.epsilon(),
            );
        }
    }
    check("known spectrum", &known_kernel(), f64::EPSILON);
}

/// On the host route a kernel of low rank is found by the pivoted Cholesky and reported with
/// its exact numerical rank (the full route's); one of higher rank (beyond the pivoted
/// Cholesky's reach) goes through the shifted factorizations and is reported singular with a
/// rank bound at most the numerical rank.
#[test]
fn the_host_route_reports_singular_kernels_with_their_rank() {
    let c = compute(Precision::F64);
    let (_, k) = ntk_on(&c, ActivationKind::Linear, 2, 100);
    let full = spectrum(&k, f64::EPSILON).unwrap();
    let e = extreme::dense::of_host(&k, f64::EPSILON).unwrap();
    assert!(
        full.singular && e.singular && e.kappa.is_infinite(),
        "{e:?}"
    );
    assert_eq!(e.rank_lower_bound, full.rank, "{e:?} vs {full:?}");
    assert_eq!(e.steps, [0, 0], "no Lanczos on a low-rank kernel: {e:?}");
    assert!(
        (e.lambda_max / full.lambda_max - 1.0).abs() < 1e-12,
        "{e:?}"
    );

    // Rank 60 of 120 (the pivoted Cholesky stops at n / 16 = 7).
    let lambda: Vec<f64> = (0..120)
        .map(|i| if i < 60 { 0.0 } else { 1.0 + i as f64 / 10.0 })
        .collect();
    let k = with_spectrum(&lambda);
    let full = spectrum(&k, f64::EPSILON).unwrap();
    assert!(full.singular && full.rank == 60, "{full:?}");
    let e = extreme::dense::of_host(&k, f64::EPSILON).unwrap();
    assert!(e.singular && e.kappa.is_infinite(), "{e:?}");
    assert!(e.rank_lower_bound >= 1 && e.rank_lower_bound <= 60, "{e:?}");
    assert!(e.lambda_min <= e.tolerance, "{e:?}");
    assert!(
        (e.lambda_max / full.lambda_max - 1.0).abs() < 1e-10,
        "{e:?}"
    );

    // The zero kernel, and a kernel that is not finite.
    let e = extreme::dense::of_host(&Kernel::zeros(10), f64::EPSILON).unwrap();
    assert!(e.singular && e.rank_lower_bound == 0, "{e:?}");
    let mut bad = Kernel::zeros(3);
    bad.data[4] = f64::NAN;
    assert!(extreme::dense::of_host(&bad, f64::EPSILON).is_err());
}

/// The extremes of `k` by every route: the device route (flex, f64), the host route and the
/// tiled route (tiles of 50).
fn every_route(
    k: &Kernel,
    c: &Compute,
) -> [(&'static str, Result<extreme::Extreme, ntk_kernel::Error>); 3] {
    [
        (
            "device",
            extreme::extreme(upload(k, c, DType::F64), f64::EPSILON, &options()),
        ),
        ("host", extreme::dense::of_host(k, f64::EPSILON)),
        (
            "tiled",
            extreme::solve(
                &mut extreme::tiled::Tiled::from_dense(&k.data, k.size, 50),
                f64::EPSILON,
                &Options::default(),
            ),
        ),
    ]
}

/// The extreme routes do not depend on the kernel's scale (round 99, D4: an absolute Lanczos
/// tolerance stopped the inverse run at its first step once the kernel was about 1e10, and a
/// `||w||^2` that overflowed past about 1e154 was taken for an invariant space): the known
/// spectrum (kappa 1e6) scaled by 1e-280 ... 1e300 gives `s` times its extremes to 1e-8 on the
/// device route (flex, f64), the host route and the tiled route.
#[test]
fn the_extremes_do_not_depend_on_the_kernels_scale() {
    let c = compute(Precision::F64);
    let unit = known_kernel();
    for s in [1e-280, 1e-150, 1e-10, 1e10, 1e80, 1e150, 1e200, 1e300] {
        let mut k = unit.clone();
        k.data.iter_mut().for_each(|v| *v *= s);
        for (route, e) in every_route(&k, &c) {
            let e = e.unwrap_or_else(|e| panic!("{route} at {s:e}: {e}"));
            let err = |a: f64, b: f64| (a / b - 1.0).abs();
            assert!(
                !e.singular
                    && e.converged
                    && err(e.kappa, 1e6) < 1e-8
                    && err(e.lambda_min, 1e-6 * s) < 1e-8
                    && err(e.lambda_max, s) < 1e-8,
                "{route} at {s:e}: {e:?}"
            );
        }
    }
}

/// A singular kernel at a scale near f64's smallest numbers (rank 60 of 120 at 1e-300):
/// every extreme route reports it singular, or says that its inverse overflows at that
/// scale ([`ntk_kernel::Error::InverseOverflow`]); none reports it regular.
#[test]
fn a_singular_kernel_at_the_bottom_of_f64s_range_is_singular_or_said() {
    let c = compute(Precision::F64);
    let lambda: Vec<f64> = (0..120)
        .map(|i| if i < 60 { 0.0 } else { 1.0 + i as f64 / 10.0 })
        .collect();
    let mut k = with_spectrum(&lambda);
    k.data.iter_mut().for_each(|v| *v *= 1e-300);
    for (route, e) in every_route(&k, &c) {
        match e {
            Ok(e) => assert!(e.singular && e.kappa.is_infinite(), "{route}: {e:?}"),
            Err(ntk_kernel::Error::InverseOverflow { largest }) => {
                assert!(largest < 1e-290, "{route}: {largest}")
            }
            Err(e) => panic!("{route}: {e}"),
        }
    }
}

/// A kernel whose entries are finite but whose `lambda_max` passes f64's range (`c (J + I)`,
/// `n = 6`, at `c = 5e307`: `lambda_max = 3.5e308`) is refused by every extreme route as the
/// full route refuses it ([`ntk_numerics::Error::SpectrumOverflow`]), never reported singular.
#[test]
fn a_lambda_max_past_f64s_range_is_refused_by_every_route() {
    let c = compute(Precision::F64);
    let n = 6;
    let data: Vec<f64> = (0..n * n)
        .map(|i| if i % (n + 1) == 0 { 1e308 } else { 5e307 })
        .collect();
    let ones = Kernel { size: n, data };
    // The known spectrum with its top 1.85 (the rest at most 1) times 1e308: entries at most
    // about 1e307, every Lanczos product finite, and only T's largest eigenvalue past the
    // range (the round's kernel: lambda_max 1.85e308, its entries at most 8.2e307).
    let mut lambda: Vec<f64> = (0..120).map(|i| 1e-3 + i as f64 / 120.0).collect();
    lambda[119] = 1.85;
    let mut known = with_spectrum(&lambda);
    known.data.iter_mut().for_each(|v| *v *= 1e308);
    assert!(known.data.iter().all(|v| v.is_finite()));
    let overflow = |r: Result<extreme::Extreme, ntk_kernel::Error>| match r {
        Err(ntk_kernel::Error::Numerics(e))
            if matches!(*e, ntk_numerics::Error::SpectrumOverflow { .. }) => {}
        other => panic!("{other:?}"),
    };
    for k in [&ones, &known] {
        let n = k.size;
        overflow(extreme::extreme(
            upload(k, &c, DType::F64),
            f64::EPSILON,
            &options(),
        ));
        overflow(extreme::dense::of_host(k, f64::EPSILON));
        overflow(extreme::solve(
            &mut extreme::tiled::Tiled::from_dense(&k.data, n, 4),
            f64::EPSILON,
            &Options::default(),
        ));
        assert!(matches!(
            spectrum(k, f64::EPSILON),
            Err(ntk_numerics::Error::SpectrumOverflow { .. })
        ));
    }
}

/// A linear network's kernel has rank at most d: singular, with a rank bound that does not
/// exceed the numerical rank, and the Gram matrix likewise.
#[test]
fn singular_kernels_are_reported_singular() {
    let c = compute(Precision::F64);
    let (t, k) = ntk_on(&c, ActivationKind::Linear, 2, 100);
    let full = spectrum(&k, f64::EPSILON).unwrap();
    assert!(full.singular, "{full:?}");
    let e = extreme::extreme(t, f64::EPSILON, &options()).unwrap();
    assert!(e.singular && e.kappa.is_infinite(), "{e:?}");
    assert!(
        e.rank_lower_bound >= 1 && e.rank_lower_bound <= full.rank,
        "{e:?} vs rank {}",
        full.rank
    );
    assert!(e.lambda_min <= e.tolerance, "{e:?}");
    assert!(
        (e.lambda_max / full.lambda_max - 1.0).abs() < 1e-10,
        "{e:?}"
    );
    // The zero kernel.
    let z = Kernel::zeros(10);
    let e = extreme::extreme(upload(&z, &c, DType::F64), f64::EPSILON, &options()).unwrap();
    assert!(e.singular && e.rank_lower_bound == 0, "{e:?}");
}

/// `(K + s I) x = b` is solved by the blocked factor to the precision of the solve.
#[test]
fn cholesky_solves() {
    let c = compute(Precision::F64);
    let (t, k) = ntk_on(&c, ActivationKind::Relu, 2, 90);
    let n = k.size;
    let shift = 0.5;
    let f = cholesky::factor(t, shift, 32).unwrap();
    let b = gaussian_inputs(n, 1, 5);
    let x: Vec<f64> = f
        .solve(Tensor::from_data(
            TensorData::new(b.clone(), [n, 1]),
            (&c.device, DType::F64),
        ))
        .try_into_vec_as()
        .unwrap();
    let bnorm = b.iter().map(|v| v * v).sum::<f64>().sqrt();
    let resid: f64 = (0..n)
        .map(|i| {
            let kx: f64 = (0..n).map(|j| k.data[i * n + j] * x[j]).sum::<f64>() + shift * x[i];
            (kx - b[i]).powi(2)
        })
        .sum::<f64>()
        .sqrt();
    assert!(resid / bnorm < 1e-10, "residual {resid:e}");
    // A matrix that is not positive definite breaks down, at the row that shows it.
    let mut indefinite = k.clone();
    indefinite.data[40 * n + 40] = -1.0;
    let err = cholesky::factor(upload(&indefinite, &c, DType::F64), 0.0, 32)
        .err()
        .expect("breaks down");
    assert!(err.row <= 40, "{err:?}");
}

/// The GPU code path: kernels built on wgpu in f32 and f64 stay there; kappa solved there in
/// f64 matches LAPACK on the same values within 1e-8, and in f32 within what f32 allows.
#[cfg(feature = "wgpu")]
#[test]
fn kappa_on_wgpu_matches_lapack() {
    use ntk_numerics::backend;
    for precision in [Precision::F32, Precision::F64] {
        let c = match backend::select(Some("wgpu"), precision) {
            Ok(c) => c,
            Err(e) if precision == Precision::F64 => {
                eprintln!("skipping wgpu f64: {e}");
                continue;
            }
            Err(e) => panic!("a wgpu adapter (lavapipe in CI): {e}"),
        };
        let (t, k) = ntk_on(&c, ActivationKind::Relu, 3, 150);
        let label = format!("wgpu {precision}");
        if c.device.supports_dtype(DType::F64) {
            let t64 = t.clone().cast(DType::F64);
            assert_matches_lapack(&label, &k, t64, precision.epsilon(), 1e-8);
        }
        // The solve in f32 (backends without f64): relative error ~ 64 eps kappa.
        let t32 = t.cast(DType::F32);
        let e = extreme::extreme(t32, precision.epsilon(), &options()).unwrap();
        let full = spectrum(&k, precision.epsilon()).unwrap();
        let bound = 1e3 * f64::from(f32::EPSILON) * full.kappa;
        assert!(
            (e.kappa / full.kappa - 1.0).abs() < bound,
            "{label} solved in f32: {e:?} vs kappa {} (bound {bound:e})",
            full.kappa
        );
    }
}
