//! The infinite-width theory (`ntk_kernel::theory`): the public check values of
//! `reference/theory.md`, the generic recursion against the ReLU and identity closed forms,
//! the small-angle and infinite-depth limits, and the infinite-width NTK of a small data set
//! against the empirical NTK of paper-convention networks at width 8192.

use burn::tensor::{DType, Device};
use ntk_kernel::theory::{self, DualEvaluator, Quadrature};
use ntk_model::{Activation, ActivationKind, Mlp, MlpConfig, NtkConvention};
use ntk_numerics::kernel::Kernel;
use ntk_numerics::spectrum::spectrum;

/// The model-gradient angle of two unit inputs at angle `t` by the NTK recursion itself
/// (`theory::grad_angle` takes ReLU's and the identity's closed forms instead).
fn recursion_angle(act: &Activation, t: f64, depth: usize) -> f64 {
    theory::pair_recursion(&DualEvaluator::new(act), 1.0, 1.0, t.cos(), depth).grad_angle()
}

/// Public check values (degrees) of Thm 4.4: phi for theta_in = 5 and 60 degrees, through
/// the closed form and through the generic recursion.
#[test]
fn public_check_values() {
    let cases = [
        (5.0, 1, 10.767),
        (5.0, 2, 14.300),
        (5.0, 5, 21.368),
        (5.0, 10, 28.913),
        (60.0, 1, 61.890),
        (60.0, 10, 68.069),
    ];
    for (theta, depth, phi) in cases {
        let t = f64::to_radians(theta);
        let closed = theory::relu_grad_angle(t, depth).to_degrees();
        let generic =
            recursion_angle(&Activation::Relu(ntk_model::activation::Relu), t, depth).to_degrees();
        // Printed to 3 decimals.
        assert!((closed - phi).abs() < 6e-4, "{theta} L{depth}: {closed}");
        assert!((generic - phi).abs() < 6e-4, "{theta} L{depth}: {generic}");
    }
    // Slow convergence: about 74.7 degrees at L = 10^4 for theta_in = 1 degree.
    let far = theory::relu_grad_angle(1f64.to_radians(), 10_000).to_degrees();
    assert!((far - 74.7).abs() < 0.05, "L = 10^4: {far}");
}

/// The recursion for ReLU (closed-form dual kernel) agrees with Thm 4.4 to
/// 1e-12 rad, and so do the embedding angles with `g`.
#[test]
fn generic_angles_equal_relu_closed_form() {
    for theta in [1.0, 5.0, 20.0, 60.0, 90.0, 120.0, 179.0] {
        let t = f64::to_radians(theta);
        for depth in [0, 1, 2, 3, 7, 10, 50] {
            let a = recursion_angle(&Activation::Relu(ntk_model::activation::Relu), t, depth);
            let b = theory::relu_grad_angle(t, depth);
            assert!((a - b).abs() < 1e-12, "{theta} L{depth}: {a} vs {b}");
            let emb =
                theory::embedding_angles(&Activation::Relu(ntk_model::activation::Relu), t, depth);
            let want = theory::relu_embedding_angles(t, depth);
            assert_eq!(emb.len(), depth + 1);
            for (x, y) in emb.iter().zip(&want) {
                assert!((x - y).abs() < 1e-12, "{theta} L{depth}");
            }
        }
    }
}

/// Four unit vectors in R^3 with acute, right and obtuse pairs.
fn unit_inputs() -> Vec<f64> {
    let raw = [
        [1.0, 0.0, 0.0],
        [0.8, 0.6, 0.0],
        [0.0, 0.6, 0.8],
        [-1.0, 0.5, 0.5],
    ];
    raw.iter()
        .flat_map(|v| {
            let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
            v.map(|a| a / norm)
        })
        .collect()
}

/// The whole matrix by quadrature (ReLU forced through the split rule) equals the closed
/// form: the quadrature is at machine precision (1e-14 of the diagonal), whereas
/// Gauss-Hermite with 100 nodes is off by percents (the kink; see `theory::dual`).
#[test]
fn quadrature_kernels_match_relu_closed_form_on_a_data_set() {
    let (n, d, depth) = (4, 3, 4);
    let x = unit_inputs();
    let closed = theory::infinite_width_kernels(
        &x,
        n,
        d,
        &DualEvaluator::new(&Activation::Relu(ntk_model::activation::Relu)),
        depth,
    );
    let split = theory::infinite_width_kernels(
        &x,
        n,
        d,
        &DualEvaluator::with_quadrature(
            &Activation::Relu(ntk_model::activation::Relu),
            Quadrature::SPLIT,
        ),
        depth,
    );
    let hermite = theory::infinite_width_kernels(
        &x,
        n,
        d,
        &DualEvaluator::with_quadrature(
            &Activation::Relu(ntk_model::activation::Relu),
            Quadrature::HERMITE,
        ),
        depth,
    );
    assert!(split.ntk.relative_error(&closed.ntk) < 1e-14);
    assert!(split.gram.relative_error(&closed.gram) < 1e-14);
    let gh = hermite.ntk.relative_error(&closed.ntk);
    assert!(gh > 1e-4 && gh < 5e-2, "Gauss-Hermite error {gh:e}");
    // Sigma_L of ReLU keeps the norms: unit diagonal.
    for i in 0..n {
        assert!((closed.gram.get(i, i) - 1.0).abs() < 1e-15);
        assert!((closed.ntk.get(i, i) - (depth as f64 + 1.0)).abs() < 1e-14);
    }
}

/// Thm 4.5: `cos phi = (1 - L theta_in / (2 pi)) cos theta_in + o(theta_in)`: the remainder
/// divided by theta_in goes to zero (it is O(theta_in^2): a tenth of theta_in, about a
/// hundredth of the remainder).
#[test]
fn small_angle_expansion_of_thm_4_5() {
    for depth in [1, 2, 5] {
        let rem = |t: f64| {
            (theory::relu_grad_angle(t, depth).cos() - theory::relu_small_angle_cos_phi(t, depth))
                .abs()
        };
        let (t1, t2) = (1e-2, 1e-3);
        let (r1, r2) = (rem(t1) / t1, rem(t2) / t2);
        assert!(r2 < 0.15 * r1, "L{depth}: {r1:e} -> {r2:e}");
        assert!(r2 < 1e-3 * depth as f64, "L{depth}: {r2:e}");
        let phi = theory::relu_small_angle_grad_angle(t2, depth);
        assert!((phi - theory::relu_grad_angle(t2, depth)).abs() < 0.05 * phi);
    }
}

/// Infinite depth: for acute inputs phi increases monotonically in L towards
/// arccos(1/4) = 75.5225 degrees, and is within a degree of it at L = 2000 from
/// theta_in = 5 degrees on (from 1 degree the approach is slower: 71.5 at L = 2000, 74.7 at
/// L = 10^4). An obtuse pair (150 degrees) first falls below the limit (93.7 at L = 1,
/// 72.8 at L = 20) and then rises to it.
#[test]
fn infinite_depth_limit() {
    let depths = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000];
    for theta in [1.0, 5.0, 30.0, 60.0, 150.0] {
        let phis: Vec<f64> = depths
            .iter()
            .map(|&l| theory::relu_grad_angle(f64::to_radians(theta), l).to_degrees())
            .collect();
        // Monotone from L = 1 for acute pairs, from L = 20 for the obtuse one.
        let from = if theta < 90.0 { 0 } else { 4 };
        for w in phis[from..].windows(2) {
            assert!(w[1] > w[0], "{theta}: not increasing {phis:?}");
        }
        let last = *phis.last().unwrap();
        assert!(last < theory::RELU_LIMIT_PHI_DEG, "{theta}: {last}");
        if theta >= 5.0 {
            assert!(theory::RELU_LIMIT_PHI_DEG - last < 1.0, "{theta}: {last}");
        }
    }
    let obtuse_l1 = theory::relu_grad_angle(150f64.to_radians(), 1).to_degrees();
    assert!(obtuse_l1 > theory::RELU_LIMIT_PHI_DEG);

    // kappa of the limit matrix is (n + 3)/3 (the later paper prints (n + 4)/3).
    for n in 2..10 {
        let s = spectrum(&theory::relu_limit_kernel(n), f64::EPSILON).unwrap();
        assert!((s.kappa - theory::relu_limit_kappa(n)).abs() < 1e-12, "{n}");
    }
    // The NTK of a data set approaches it: kappa decreases towards 7/3 (n = 4).
    let (n, d) = (4, 3);
    let x = unit_inputs();
    let kappas: Vec<f64> = [1, 10, 100, 2000]
        .iter()
        .map(|&l| {
            let k = theory::infinite_width_ntk(
                &x,
                n,
                d,
                &Activation::Relu(ntk_model::activation::Relu),
                l,
            );
            spectrum(&k, f64::EPSILON).unwrap().kappa
        })
        .collect();
    for w in kappas.windows(2) {
        assert!(w[1] < w[0], "{kappas:?}");
    }
    let limit = theory::relu_limit_kappa(n);
    assert!(
        kappas[3] > limit && kappas[3] < 1.1 * limit,
        "{kappas:?} vs {limit}"
    );
}

/// The linear network: K = (L + 1) G exactly, every angle equals theta_in; the generic
/// recursion (closed form or quadrature) gives the same to rounding.
#[test]
fn linear_network() {
    let (n, d) = (4, 3);
    let x: Vec<f64> = (0..n * d).map(|k| (k as f64 * 0.37).sin() * 2.0).collect();
    let g = Kernel::gram(&x, n, d);
    let quad = DualEvaluator::with_quadrature(
        &Activation::Linear(ntk_model::activation::Linear),
        Quadrature::SPLIT,
    );
    for depth in [0, 1, 2, 5, 20] {
        let k = theory::infinite_width_ntk(
            &x,
            n,
            d,
            &Activation::Linear(ntk_model::activation::Linear),
            depth,
        );
        let scale = depth as f64 + 1.0;
        for (a, b) in k.data.iter().zip(&g.data) {
            assert_eq!(*a, scale * b);
        }
        assert_eq!(k, theory::linear_ntk(&x, n, d, depth));
        assert_eq!(
            theory::infinite_width_embedding_gram(
                &x,
                n,
                d,
                &Activation::Linear(ntk_model::activation::Linear),
                depth
            ),
            g
        );
        // The recursion itself, entry by entry (L additions of rounding).
        let by_quad = theory::infinite_width_kernels(&x, n, d, &quad, depth);
        assert!(by_quad.ntk.relative_error(&k) < 1e-13 * scale);
        let t = 0.7;
        assert_eq!(theory::linear_grad_angle(t, depth), t);
        assert_eq!(
            theory::linear_embedding_angles(t, depth),
            vec![t; depth + 1]
        );
        let phi = recursion_angle(&Activation::Linear(ntk_model::activation::Linear), t, depth);
        assert!((phi - t).abs() < 1e-14);
        for a in
            theory::embedding_angles(&Activation::Linear(ntk_model::activation::Linear), t, depth)
        {
            assert!((a - t).abs() < 1e-14);
        }
    }
    // kappa(K) = kappa(G) at every depth (three of the unit inputs: G invertible).
    let (n, x) = (3, &unit_inputs()[..9]);
    let kg = spectrum(&Kernel::gram(x, n, d), f64::EPSILON)
        .unwrap()
        .kappa;
    let kk = spectrum(
        &theory::infinite_width_ntk(
            x,
            n,
            d,
            &Activation::Linear(ntk_model::activation::Linear),
            7,
        ),
        f64::EPSILON,
    )
    .unwrap()
    .kappa;
    assert!((kg - kk).abs() < 1e-10 * kg, "{kg} {kk}");
}

#[test]
fn depth_zero_is_the_gram_matrix_and_nonlinearity_is_exposed() {
    let (n, d) = (4, 3);
    let x = unit_inputs();
    let g = Kernel::gram(&x, n, d);
    for kind in ActivationKind::all() {
        let act = Activation::new(kind, None);
        assert_eq!(theory::infinite_width_ntk(&x, n, d, &act, 0), g, "{kind}");
    }
    let pi = std::f64::consts::PI;
    let relu = theory::nonlinearity(&Activation::Relu(ntk_model::activation::Relu));
    assert!((relu - (1.0 - pi / (2.0 * (pi - 1.0)))).abs() < 1e-12);
    assert!(theory::nonlinearity(&Activation::Linear(ntk_model::activation::Linear)).abs() < 1e-15);
}

/// Seed-wise empirical NTKs (paper convention, f64, host engine) of `x` at `width`.
fn empirical(
    x: &[f64],
    n: usize,
    d: usize,
    kind: ActivationKind,
    depth: usize,
    width: usize,
    seeds: u64,
) -> Vec<Kernel> {
    empirical_in(NtkConvention::Paper, x, n, d, kind, depth, width, seeds)
}

/// Seed-wise empirical NTKs in a given convention.
#[allow(clippy::too_many_arguments)]
fn empirical_in(
    convention: NtkConvention,
    x: &[f64],
    n: usize,
    d: usize,
    kind: ActivationKind,
    depth: usize,
    width: usize,
    seeds: u64,
) -> Vec<Kernel> {
    (0..seeds)
        .map(|s| {
            let cfg = MlpConfig::new(d, width, depth, kind)
                .with_seed(1000 + s)
                .with_convention(convention);
            let mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
            ntk_kernel::host::ntk::<f64>(&mlp, x, n, &[0])
        })
        .collect()
}

/// Mean and standard error of the mean of one entry over the seeds.
fn mean_sem(ks: &[Kernel], i: usize, j: usize) -> (f64, f64) {
    let s = ks.len() as f64;
    let mean = ks.iter().map(|k| k.get(i, j)).sum::<f64>() / s;
    let var = ks.iter().map(|k| (k.get(i, j) - mean).powi(2)).sum::<f64>() / (s - 1.0);
    (mean, (var / s).sqrt())
}

/// The scale of the paper convention: depth-1 ReLU, ||x|| = 1, K(x,x) = Sigma_0 Sigma_dot_1 +
/// Sigma_1 = 1 + 1 = 2 at infinite width, and the empirical kernel (at depth 1 an average of
/// m i.i.d. terms, so unbiased, with per-seed sd sqrt(12/m) = 0.038 at m = 8192: the unit
/// term 2 (relu(z)^2 + w^2 1{z>0}) has variance 4 * 3) agrees with no extra constant.
#[test]
fn paper_convention_scale_matches_the_recursion() {
    let (n, d, width, seeds) = (4, 3, 8192, 64);
    let x = unit_inputs();
    let theory_k =
        theory::infinite_width_ntk(&x, n, d, &Activation::Relu(ntk_model::activation::Relu), 1);
    assert_eq!(theory_k.get(0, 0), 2.0);
    let ks = empirical(&x, n, d, ActivationKind::Relu, 1, width, seeds);
    let (mean, sem) = mean_sem(&ks, 0, 0);
    eprintln!("depth-1 relu K(x,x): empirical {mean:.5} +- {sem:.5} (width {width}), theory 2");
    assert!((mean - 2.0).abs() < 4.0 * sem, "{mean} +- {sem}");
    let sd = sem * (seeds as f64).sqrt();
    let predicted = (12.0 / width as f64).sqrt();
    assert!(
        (sd / predicted - 1.0).abs() < 0.35,
        "sd {sd} vs {predicted}"
    );
}

/// Every entry of the infinite-width NTK against the mean of `seeds` empirical NTKs at
/// width 8192: |mean - theory| < 4 SEM + (L / m) max|Theta|. The allowance is the O(L/m)
/// finite-width bias of the mean (at depth 1 the kernel is an average of m i.i.d. terms and
/// unbiased; from depth 2 on, the gradient-independence of the limit fails at O(1/m)). The
/// per-seed spread is also checked to be of the 1/sqrt(m) size, so that a noisy or broken
/// kernel cannot pass by inflating the SEM. With the SEM itself estimated from few seeds
/// (t distribution with seeds - 1 degrees of freedom), one entry exceeds 4 SEM by chance
/// with probability ~1e-4 (128 seeds) to ~3e-3 (10 seeds).
fn compare_with_width_8192(kind: ActivationKind, depth: usize, seeds: u64) {
    let (n, d, width) = (4, 3, 8192);
    let x = unit_inputs();
    let act = Activation::new(kind, None);
    let th = theory::infinite_width_ntk(&x, n, d, &act, depth);
    let scale = th.data.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let ks = empirical(&x, n, d, kind, depth, width, seeds);
    let bias = depth as f64 / width as f64 * scale;
    let mut worst: f64 = 0.0;
    for i in 0..n {
        for j in i..n {
            let (mean, sem) = mean_sem(&ks, i, j);
            let t = th.get(i, j);
            worst = worst.max((mean - t).abs() / sem);
            assert!(
                (mean - t).abs() < 4.0 * sem + bias,
                "{kind} L{depth} ({i},{j}): empirical {mean:.5} +- {sem:.5}, theory {t:.5}"
            );
            let sd = sem * (seeds as f64).sqrt();
            assert!(
                sd < 10.0 * scale / (width as f64).sqrt(),
                "{kind} L{depth}: sd {sd}"
            );
        }
    }
    let rel = ks
        .iter()
        .map(|k| k.relative_error(&th))
        .fold(0.0f64, f64::max);
    eprintln!(
        "{kind} L{depth}: worst |mean - theory| / SEM {worst:.2} over {seeds} seeds, \
         worst single-seed relative error {rel:.2e}"
    );
}

/// Depth 1 (cheap: the widest matrix is m x d).
#[test]
fn infinite_width_ntk_matches_width_8192_depth_1() {
    compare_with_width_8192(ActivationKind::Relu, 1, 128);
    compare_with_width_8192(ActivationKind::NormRelu, 1, 128);
}

/// Depth 2 (an 8192 x 8192 hidden matrix per seed: several seconds each).
#[test]
fn infinite_width_ntk_matches_width_8192_depth_2_relu() {
    compare_with_width_8192(ActivationKind::Relu, 2, 10);
}

/// NormReLU (kink at b = -1.5908; unit-norm inputs, so N(0, 1) pre-activations in every
/// layer): the quadrature path of the recursion.
#[test]
fn infinite_width_ntk_matches_width_8192_depth_2_norm_relu() {
    compare_with_width_8192(ActivationKind::NormRelu, 2, 10);
}

/// The other conventions map onto the paper recursion as documented on
/// `theory::infinite_width_kernels`: `unit_variance` is the paper kernel of `x / sqrt(d)`
/// (every activation), `official` is `(c / d)` times the paper kernel (ReLU). Depth 1,
/// width 8192, 64 seeds, every entry within 4 SEM (unbiased at depth 1).
#[test]
fn other_conventions_map_onto_the_paper_recursion() {
    let (n, d, width, seeds) = (4, 3, 8192, 64);
    let x = unit_inputs();
    let scaled: Vec<f64> = x.iter().map(|v| v / (d as f64).sqrt()).collect();
    let cases = [
        (NtkConvention::UnitVariance, ActivationKind::Relu),
        (NtkConvention::UnitVariance, ActivationKind::NormRelu),
        (NtkConvention::Official, ActivationKind::Relu),
    ];
    for (convention, kind) in cases {
        let act = Activation::new(kind, None);
        let th = match convention {
            NtkConvention::UnitVariance => theory::infinite_width_ntk(&scaled, n, d, &act, 1),
            _ => {
                let mut k = theory::infinite_width_ntk(&x, n, d, &act, 1);
                k.data.iter_mut().for_each(|v| *v *= act.c() / d as f64);
                k
            }
        };
        let ks = empirical_in(convention, &x, n, d, kind, 1, width, seeds);
        for i in 0..n {
            for j in i..n {
                let (mean, sem) = mean_sem(&ks, i, j);
                let t = th.get(i, j);
                assert!(
                    (mean - t).abs() < 4.0 * sem,
                    "{convention:?} {kind} ({i},{j}): {mean:.5} +- {sem:.5} vs {t:.5}"
                );
            }
        }
    }
}
