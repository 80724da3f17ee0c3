//! The infinite-width recursion of every NTK convention (`ntk_kernel::theory::scaling`)
//! against the empirical NTK of width-8192 networks (f64, the host engine) for the
//! non-homogeneous activations gelu, tanh and norm_relu at depths 1..5, on inputs of
//! unequal norms (the theory takes them as fed to the network).

use burn::tensor::{DType, Device};
use ntk_kernel::theory::{self, DualEvaluator, Scaling};
use ntk_model::{ActivationKind, Mlp, MlpConfig, NtkConvention};
use ntk_numerics::kernel::Kernel;

const WIDTH: usize = 8192;
const DEPTH: usize = 5;
const CONVENTIONS: [NtkConvention; 3] = [
    NtkConvention::Paper,
    NtkConvention::Official,
    NtkConvention::UnitVariance,
];
const KINDS: [ActivationKind; 3] = [
    ActivationKind::Gelu,
    ActivationKind::Tanh,
    ActivationKind::NormRelu,
];

/// Four inputs in R^3 with norms 0.6, 1, 1.4 and 2, acute, right and obtuse pairs.
fn inputs() -> (Vec<f64>, usize, usize) {
    let raw = [
        ([1.0, 0.0, 0.0], 0.6),
        ([0.8, 0.6, 0.0], 1.0),
        ([0.0, 0.6, 0.8], 1.4),
        ([-1.0, 0.5, 0.5], 2.0),
    ];
    let x = raw
        .iter()
        .flat_map(|(v, r)| {
            let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
            v.map(|a| a * r / norm)
        })
        .collect();
    (x, 4, 3)
}

fn config(kind: ActivationKind, convention: NtkConvention, depth: usize, seed: u64) -> MlpConfig {
    MlpConfig::new(3, WIDTH, depth, kind)
        .with_convention(convention)
        .with_seed(seed)
}

/// The output layer of the depth-`L` network for `L = 0..=DEPTH` (stream `L`, `[1, m]`).
fn output_layers(seed: u64, m: usize) -> Vec<Vec<f64>> {
    (0..=DEPTH)
        .map(|l| ntk_model::init::gaussian(seed, l as u64, 1, m, 1.0))
        .collect()
}

/// The weights of `Mlp::new` with this seed, as `ntk_model::init` draws them: layer `l`
/// (`[fan_out, fan_in]` row-major, `W_l` as it multiplies a column) from stream `l`. The
/// output layer of the depth-`L` network is stream `L`, `[1, m]`. Drawn on two threads.
fn weights(seed: u64, d: usize, m: usize) -> Vec<Vec<f64>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..DEPTH)
            .map(|l| {
                s.spawn(move || {
                    let fan_in = if l == 0 { d } else { m };
                    ntk_model::init::gaussian(seed, l as u64, m, fan_in, 1.0)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// `y_k = W x_k` (`transpose`: `W^T x_k`) for the `rows x cols` row-major `w`, on two
/// threads; eight accumulators per dot product so that it vectorizes.
fn apply(w: &[f64], rows: usize, cols: usize, xs: &[Vec<f64>], transpose: bool) -> Vec<Vec<f64>> {
    let half = rows.div_ceil(2);
    let part = |r0: usize, r1: usize| -> Vec<Vec<f64>> {
        let out_len = if transpose { cols } else { r1 - r0 };
        let mut out = vec![vec![0.0; out_len]; xs.len()];
        for r in r0..r1 {
            let row = &w[r * cols..(r + 1) * cols];
            for (k, x) in xs.iter().enumerate() {
                if transpose {
                    let xr = x[r];
                    for (o, a) in out[k].iter_mut().zip(row) {
                        *o += a * xr;
                    }
                } else {
                    let mut acc = [0.0; 8];
                    let (rc, xc) = (row.chunks_exact(8), x.chunks_exact(8));
                    let (rt, xt) = (rc.remainder(), xc.remainder());
                    for (a, b) in rc.zip(xc) {
                        for t in 0..8 {
                            acc[t] += a[t] * b[t];
                        }
                    }
                    let tail: f64 = rt.iter().zip(xt).map(|(a, b)| a * b).sum();
                    out[k][r - r0] = acc.iter().sum::<f64>() + tail;
                }
            }
        }
        out
    };
    let (a, b) = std::thread::scope(|s| {
        let h = s.spawn(|| part(half, rows));
        (part(0, half), h.join().unwrap())
    });
    if transpose {
        a.into_iter()
            .zip(b)
            .map(|(u, v)| u.iter().zip(&v).map(|(p, q)| p + q).collect())
            .collect()
    } else {
        a.into_iter()
            .zip(b)
            .map(|(mut u, v)| {
                u.extend(v);
                u
            })
            .collect()
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(p, q)| p * q).sum()
}

/// The empirical NTK, by its definition, of the networks `cfg` (depth `DEPTH`) truncated to
/// depths `1..=DEPTH` (the first `L` hidden layers, the output layer drawn from stream `L`,
/// as `Mlp::truncated` does), with the forward scales of `MlpConfig::scales`:
/// `K = beta_out^2 a_L a_L^T + sum_l beta_l^2 (a_{l-1} a_{l-1}^T) .* (delta_l delta_l^T)`,
/// `delta_L = gamma_L s'(z_L) beta_out w_out`,
/// `delta_l = gamma_l s'(z_l) .* beta_{l+1} W_{l+1}^T delta_{l+1}`.
fn empirical(
    cfg: &MlpConfig,
    w: &[Vec<f64>],
    outs: &[Vec<f64>],
    x: &[f64],
    n: usize,
) -> Vec<Kernel> {
    let (d, m) = (cfg.input_dim, cfg.width);
    let act = cfg.activation();
    let sc = cfg.scales();
    // Forward: a[l] (per sample), z[l - 1] = z_l.
    let mut a: Vec<Vec<Vec<f64>>> = vec![(0..n).map(|i| x[i * d..(i + 1) * d].to_vec()).collect()];
    let mut z: Vec<Vec<Vec<f64>>> = Vec::new();
    for l in 0..DEPTH {
        let fan_in = if l == 0 { d } else { m };
        let zl: Vec<Vec<f64>> = apply(&w[l], m, fan_in, &a[l], false)
            .into_iter()
            .map(|v| v.into_iter().map(|t| sc.beta[l] * t).collect())
            .collect();
        a.push(
            zl.iter()
                .map(|v| v.iter().map(|&t| sc.gamma[l] * act.eval(t)).collect())
                .collect(),
        );
        z.push(zl);
    }
    let gram = |vs: &[Vec<f64>]| -> Vec<f64> {
        let mut g = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                g[i * n + j] = dot(&vs[i], &vs[j]);
            }
        }
        g
    };
    let a_grams: Vec<Vec<f64>> = a.iter().map(|v| gram(v)).collect();
    (1..=DEPTH)
        .map(|depth| {
            let truncated = MlpConfig {
                depth,
                ..cfg.clone()
            };
            let sc = truncated.scales();
            let beta_out = sc.beta_out;
            let mut k: Vec<f64> = a_grams[depth]
                .iter()
                .map(|g| beta_out * beta_out * g)
                .collect();
            // delta_L, then down.
            let mut delta: Vec<Vec<f64>> = (0..n)
                .map(|i| {
                    (0..m)
                        .map(|j| {
                            sc.gamma[depth - 1]
                                * act.derivative(z[depth - 1][i][j])
                                * beta_out
                                * outs[depth][j]
                        })
                        .collect()
                })
                .collect();
            for l in (1..=depth).rev() {
                let h = gram(&delta);
                let b2 = sc.beta[l - 1] * sc.beta[l - 1];
                for p in 0..n * n {
                    k[p] += b2 * a_grams[l - 1][p] * h[p];
                }
                if l > 1 {
                    let back = apply(&w[l - 1], m, m, &delta, true);
                    delta = back
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| {
                            v.iter()
                                .zip(&z[l - 2][i])
                                .map(|(&t, &zz)| {
                                    sc.gamma[l - 2] * act.derivative(zz) * sc.beta[l - 1] * t
                                })
                                .collect()
                        })
                        .collect();
                }
            }
            Kernel { size: n, data: k }
        })
        .collect()
}

/// `(K_emp(i,j) - Theta(i,j)) / sqrt(Theta(i,i) Theta(j,j))` for `i <= j`: the deviation in
/// the units of the kernel's own scale (that of the cosines the angles are read from).
fn deviations(emp: &Kernel, th: &Kernel) -> Vec<f64> {
    let n = th.size;
    let mut v = Vec::new();
    for i in 0..n {
        for j in i..n {
            let scale = (th.get(i, i) * th.get(j, j)).sqrt();
            v.push((emp.get(i, j) - th.get(i, j)) / scale);
        }
    }
    v
}

/// The cosines `K_ij / sqrt(K_ii K_jj)`, `i < j` (the model-gradient angles).
fn cosines(k: &Kernel) -> Vec<f64> {
    let n = k.size;
    let mut v = Vec::new();
    for i in 0..n {
        for j in (i + 1)..n {
            v.push(k.get(i, j) / (k.get(i, i) * k.get(j, j)).sqrt());
        }
    }
    v
}

/// The tolerance on a normalized deviation at depth `L`: `5 (L + 1) / sqrt(m_eff)`. The
/// empirical NTK is a sum of `L + 1` layer terms, each an average over `m` units whose
/// relative fluctuation is `O(1 / sqrt(m))` (a few units of `1 / sqrt(m)` per layer:
/// measured at most 2.1 / sqrt(m) at depth 1 and 14 / sqrt(m) for gelu at depth 5, whose
/// `Sigma_dot ~ 1.4 > 1` amplifies the lower layers); 5 per term covers them. `m_eff = m`
/// except for a saturating activation (tanh) in the `official` convention from depth 2:
/// there the hidden pre-activations have variance `q ~ c m / d`, only a fraction
/// `~ 1 / sqrt(q)` of the units is unsaturated, and `Sigma_dot` averages
/// `m_eff ~ m / sqrt(m / d) = sqrt(m d)` units (measured 27 / sqrt(m) = 3.7 / sqrt(m_eff)).
fn tolerance(kind: ActivationKind, convention: NtkConvention, depth: usize, d: usize) -> f64 {
    let m = WIDTH as f64;
    let m_eff =
        if kind == ActivationKind::Tanh && convention == NtkConvention::Official && depth >= 2 {
            (m * d as f64).sqrt()
        } else {
            m
        };
    5.0 * (depth as f64 + 1.0) / m_eff.sqrt()
}

/// Every (activation, convention, depth): the theory's kernel against the empirical one of
/// width 8192 (one weight draw per seed, shared by all of them: the weights do not depend
/// on the activation or the convention in the NTK parameterization), every entry within
/// [`tolerance`] of the kernel's scale. And the theory the sweep used before (the paper
/// recursion on unit-variance pre-activations, whatever the network's convention) misses
/// the `unit_variance` networks' gradient cosines by more than that tolerance.
/// `NTK_THEORY_SEEDS` sets the number of seeds (default 1).
#[test]
fn theory_matches_width_8192_under_every_convention() {
    let seeds: u64 = std::env::var("NTK_THEORY_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let (x, n, d) = inputs();
    let t0 = std::time::Instant::now();
    let mut theories = Vec::new();
    let mut old_theories = Vec::new();
    for &kind in &KINDS {
        for &convention in &CONVENTIONS {
            for depth in 1..=DEPTH {
                let cfg = config(kind, convention, depth, 0);
                // The table's constants at the network's own width: under `official` with
                // tanh the width-m mean-field recursion, which `Scaling::of` refuses as
                // having no infinite-width limit.
                let scaling = Scaling::convention(
                    cfg.convention,
                    &cfg.activation(),
                    cfg.input_dim,
                    cfg.width,
                    cfg.depth,
                );
                let dual = DualEvaluator::new(&cfg.activation());
                theories.push(
                    theory::infinite_width_kernels_scaled(&x, n, d, &dual, &scaling, &|_| {}).ntk,
                );
                let unit: Vec<f64> = unit_rows(&x, n, d);
                old_theories.push(theory::infinite_width_ntk(
                    &unit,
                    n,
                    d,
                    &cfg.activation(),
                    depth,
                ));
            }
        }
    }
    eprintln!("theory: {:.1} s", t0.elapsed().as_secs_f64());
    let mut worst_ratio = 0.0f64;
    let mut old_missed = Vec::new();
    for seed in 0..seeds {
        let seed = 9000 + seed;
        let w = weights(seed, d, WIDTH);
        let outs = output_layers(seed, WIDTH);
        eprintln!("seed {seed}: drawn at {:.1} s", t0.elapsed().as_secs_f64());
        let mut slot = 0;
        for &kind in &KINDS {
            for &convention in &CONVENTIONS {
                let cfg = config(kind, convention, DEPTH, seed);
                let ks = empirical(&cfg, &w, &outs, &x, n);
                for (l, k) in ks.iter().enumerate() {
                    let depth = l + 1;
                    let th = &theories[slot];
                    let tol = tolerance(kind, convention, depth, d);
                    let worst = deviations(k, th).iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    worst_ratio = worst_ratio.max(worst / tol);
                    eprintln!(
                        "{kind:>9} {:>13} L{depth}: worst |dev| {worst:.4} = {:5.2} / sqrt(m), tolerance {tol:.4}",
                        ntk_names::spelled(&convention),
                        worst * (WIDTH as f64).sqrt()
                    );
                    assert!(
                        worst < tol,
                        "{kind} {convention:?} L{depth} seed {seed}: {worst} > {tol}"
                    );
                    if convention == NtkConvention::UnitVariance {
                        let miss = cosines(k)
                            .iter()
                            .zip(cosines(&old_theories[slot]))
                            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
                        old_missed.push((kind, depth, miss / tol));
                    }
                    slot += 1;
                }
            }
        }
        eprintln!("seed {seed}: done at {:.1} s", t0.elapsed().as_secs_f64());
    }
    eprintln!("worst deviation / tolerance: {worst_ratio:.2}");
    eprintln!("old theory's worst cosine miss / tolerance (unit_variance): {old_missed:?}");
    for &kind in &KINDS {
        let best = old_missed
            .iter()
            .filter(|m| m.0 == kind)
            .fold(0.0f64, |a, m| a.max(m.2));
        eprintln!("{kind}: old theory misses by up to {best:.2} tolerances");
        // The case: gelu, unit_variance; the old theory is off by more than the
        // whole tolerance (measured 1.78 tolerances at depth 1).
        if kind == ActivationKind::Gelu {
            assert!(best > 1.0, "the old theory would have passed: {best}");
        }
    }
}

/// The rows of `x` scaled to unit norm (as `data.unit_norm` scales them).
fn unit_rows(x: &[f64], n: usize, d: usize) -> Vec<f64> {
    let mut u = x[..n * d].to_vec();
    ntk_data::inputs::unit_rows(&mut u, d).unwrap();
    u
}

/// The direct kernel of this file is the project's: at width 256 (cheap) it equals the host
/// engine's NTK of `Mlp::new` (and its truncations) with the same seed to 1e-12, for every
/// activation and convention here.
#[test]
fn direct_kernel_is_the_host_engines() {
    let (x, n, d) = inputs();
    let (m, seed) = (256, 5);
    let w = weights(seed, d, m);
    let outs = output_layers(seed, m);
    for &kind in &KINDS {
        for &convention in &CONVENTIONS {
            let cfg = MlpConfig {
                width: m,
                ..config(kind, convention, DEPTH, seed)
            };
            let direct = empirical(&cfg, &w, &outs, &x, n);
            let mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
            for depth in 1..=DEPTH {
                let net = mlp.truncated(depth).unwrap();
                let host = ntk_kernel::host::ntk::<f64>(&net, &x, n, &[0]);
                let err = host.relative_error(&direct[depth - 1]);
                assert!(err < 1e-12, "{kind} {convention:?} L{depth}: {err:e}");
            }
        }
    }
}
