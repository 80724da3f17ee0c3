//! The angles a probe reports ([`Angles`]): the minimum model-gradient angle over the set,
//! and the layer embedding angles of `probe.embedding_angles` and `probe.pair`.

use super::*;

/// The angles a probe reports: the minimum model-gradient angle over the set, and with
/// `probe.embedding_angles` / `probe.pair` the layer embedding angles (MLPs only).
pub(super) struct Angles {
    pub(super) min: Option<MinAngle>,
    pub(super) embedding_min: Option<Vec<f64>>,
    pub(super) pair_embedding: Option<Vec<f64>>,
    pub(super) pair_grad: Option<f64>,
    /// Why `pair_grad` is null though the kernel gave a number: an angle nearer 0 or 180
    /// degrees than the kernel's correlation resolves ([`resolved_pair_angle`]).
    pub(super) pair_grad_note: Option<String>,
    /// Why `min` is null though the kernel gave a number: a theory run's smallest angle
    /// that the rule of a pair's angle does not resolve.
    pub(super) min_note: Option<String>,
}

impl Angles {
    /// Without the whole kernel: `probe.pair`'s angles alone (the gradient angle from the
    /// pair's own kernel, by `pair_kernel` on its two samples).
    pub(super) fn of_pair(
        cfg: &ProbeConfig,
        inputs: &Inputs,
        compute: &Compute,
        net: &Net,
        pair_kernel: &mut impl FnMut(&[usize]) -> crate::Result<Kernel>,
    ) -> crate::Result<Self> {
        let (pair_embedding, pair_grad) = match cfg.probe.pair {
            Some([i, j]) => {
                let two = inputs.select(&[i, j]);
                let grams = embedding_grams(cfg, mlp_only(net)?, &two, compute)?;
                let theta: Vec<f64> = grams.iter().map(|g| angles::angle_deg(g, 0, 1)).collect();
                let full = cfg.probe.output == OutputMode::Full;
                let grad = if full {
                    None
                } else {
                    Some(resolved_pair_angle(
                        cfg,
                        (inputs, [i, j]),
                        compute,
                        net,
                        (&pair_kernel(&[i, j])?, [0, 1]),
                    ))
                };
                (Some(theta), grad)
            }
            None => (None, None),
        };
        let (pair_grad, pair_grad_note) = pair_grad.map_or((None, None), |(a, n)| (a, n));
        Ok(Self {
            min: None,
            min_note: None,
            embedding_min: None,
            pair_embedding,
            pair_grad,
            pair_grad_note,
        })
    }

    pub(super) fn measure(
        cfg: &ProbeConfig,
        inputs: &Inputs,
        compute: &Compute,
        net: &Net,
        kernel: &Kernel,
    ) -> crate::Result<Self> {
        let full = cfg.probe.output == OutputMode::Full;
        let mlp = || mlp_only(net);
        let embedding_min = if cfg.probe.embedding_angles {
            let grams = embedding_grams(cfg, mlp()?, inputs, compute)?;
            let min = |g: &Kernel| angles::min_angle(g).map_or(f64::NAN, |a| a.deg);
            Some(grams.iter().map(min).collect())
        } else {
            None
        };
        let (pair_embedding, pair_grad) = match cfg.probe.pair {
            Some([i, j]) => {
                let two = inputs.select(&[i, j]);
                let grams = embedding_grams(cfg, mlp()?, &two, compute)?;
                let theta: Vec<f64> = grams.iter().map(|g| angles::angle_deg(g, 0, 1)).collect();
                let grad = (!full).then(|| {
                    resolved_pair_angle(cfg, (inputs, [i, j]), compute, net, (kernel, [i, j]))
                });
                (Some(theta), grad)
            }
            None => (None, None),
        };
        let (pair_grad, pair_grad_note) = pair_grad.map_or((None, None), |(a, n)| (a, n));
        let mut min = if full {
            None
        } else {
            angles::min_angle_of_rows(kernel, &inputs.x, inputs.d)
        };
        // A theory run's smallest angle is its pair's own as `probe.pair`'s is formed, where
        // that resolves it (hundred-and-sixth hostile round: 0.0 beside a pair angle of 1e-6
        // degrees, the kernel's arccos; hundred-and-fifth, N1).
        // Where the rule does not resolve it, null with a note, as the pair's angle is
        // (hundred-and-seventh hostile round, D1: the kernel's arccos was written, 0.0 for
        // inputs 1e-6 degrees apart, 5.5e-7 degrees off near 180).
        let mut min_note = None;
        if cfg.probe.method == Method::Theory
            && let Some(m) = min
        {
            let d = inputs.d;
            let row = |i: usize| &inputs.x[i * d..(i + 1) * d];
            match theory_pair_angle(net, row(m.i), row(m.j)) {
                Some(Ok(angle)) if angle.is_finite() => {
                    min = Some(MinAngle { deg: angle, ..m });
                }
                Some(Err(why)) => {
                    min = None;
                    min_note = Some(format!(
                        "min_grad_angle_deg is null: the smallest angle's pair (samples {}, \
                         {}) is {why}, as `ntk-probe theory` refuses it",
                        m.i, m.j
                    ));
                }
                _ => {}
            }
        }
        Ok(Self {
            min,
            min_note,
            embedding_min,
            pair_embedding,
            pair_grad,
            pair_grad_note,
        })
    }
}

/// The gradient angle of `probe.pair` (inputs `i`, `j`; `kernel`'s entries `[a, b]`), where
/// it is resolved; else null and why. A pair of equal inputs is 0 exactly on every route
/// (hundred-and-sixth hostile round, D2: 1.2e-6 degrees, one rounding of the correlation).
/// With `probe.method = "theory"` the angle is the pair's own as `ntk-probe theory` answers
/// it ([`ntk_kernel::theory::pair_grad_angle_deg`]: ReLU, leaky ReLU and the identity exact
/// at every angle, an odd activation near 180 degrees by its supplement within
/// [`ntk_kernel::theory::MAX_ANGLE_ERROR_DEG`], the others where every layer keeps six
/// significant digits; hundred-and-third round, D2, to hundred-and-sixth, D1: 180.0 written
/// for 179.9999999, then ReLU's exact angles nulled by a bound of the wrong end). A
/// network's kernel: an angle formed as arccos of a correlation within `1 - |c|` of 1 has an
/// error of about `u / sqrt(2 (1 - |c|))` radians for an error `u` of the correlation,
/// `(L + 1)` ulps of its precision (an estimate: its sums have more terms), answered where
/// that is below the angle's distance from 0 or 180 (at least one significant digit).
fn resolved_pair_angle(
    cfg: &ProbeConfig,
    (inputs, [i, j]): (&Inputs, [usize; 2]),
    compute: &Compute,
    net: &Net,
    (kernel, [a, b]): (&Kernel, [usize; 2]),
) -> (Option<f64>, Option<String>) {
    let d = inputs.d;
    let (xi, xj) = (&inputs.x[i * d..(i + 1) * d], &inputs.x[j * d..(j + 1) * d]);
    // Undefined (null, with the pair's note) where a sample has no gradient, equal inputs
    // too (hundred-and-seventh hostile round, D4: two zero rows were 0.0 beside a note
    // saying null).
    let phi = angles::angle_deg(kernel, a, b);
    if !phi.is_finite() {
        return (Some(phi), None);
    }
    if xi == xj {
        return (Some(0.0), None);
    }
    let theory = cfg.probe.method == Method::Theory;
    if theory && let Some(answer) = theory_pair_angle(net, xi, xj) {
        return match answer {
            Ok(angle) if angle.is_finite() => (Some(angle), None),
            Ok(_) => (Some(phi), None),
            Err(why) => (
                None,
                Some(format!(
                    "probe.pair = [{i}, {j}]: the gradient angle is null: it is {why}, as \
                     `ntk-probe theory` refuses it"
                )),
            ),
        };
    }
    let c = kernel.get(a, b) / (kernel.get(a, a).sqrt() * kernel.get(b, b).sqrt());
    let gap = 1.0 - c.abs();
    let layers = match net {
        Net::Mlp(m) => m.depth() + 1,
        _ => 1,
    } as f64;
    let eps = match (theory, compute.precision) {
        (false, Precision::F32) => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    };
    // A correlation that rounds to 1 is at most half an ulp from it: the bound at the
    // smallest gap it may hide (hundred-and-seventh hostile round, N4: "known to about inf
    // degrees").
    let error = (layers * eps / (2.0 * gap.max(eps / 2.0)).sqrt()).to_degrees();
    let distance = phi.min(180.0 - phi);
    if error < distance {
        return (Some(phi), None);
    }
    // The end the angle is near, from the angle (hundred-and-sixth hostile round, D1: the
    // sign of the correlation named the wrong one).
    let near = if phi < 90.0 { "0" } else { "180" };
    let sign = if c > 0.0 { "" } else { "-" };
    let known = if gap > 0.0 {
        format!("within {gap:.1e} of {sign}1")
    } else {
        format!("{sign}1 in {}", compute.precision)
    };
    let at_best = if gap > 0.0 { "" } else { " at best" };
    (
        None,
        Some(format!(
            "probe.pair = [{i}, {j}]: the gradient angle is null: it is too near {near} degrees \
             for the kernel's correlation ({known}) to resolve it, known to about {error:.1e} \
             degrees{at_best}, more than its distance from {near}"
        )),
    )
}

/// The infinite-width gradient angle of the rows `x` and `y` under `net`'s own scaling, by
/// the one rule of a pair's angle ([`ntk_kernel::theory::pair_grad_angle_deg`]); `None` for a
/// network the theory does not cover.
fn theory_pair_angle(
    net: &Net,
    x: &[f64],
    y: &[f64],
) -> Option<Result<f64, ntk_kernel::theory::Unresolved>> {
    let Net::Mlp(m) = net else {
        return None;
    };
    let scaling = ntk_kernel::theory::Scaling::of(m.config()).ok()?;
    let dual = ntk_kernel::theory::DualEvaluator::new(m.activation());
    Some(ntk_kernel::theory::pair_grad_angle_deg(
        &dual, &scaling, x, y,
    ))
}

/// The layer embedding Gram matrices `l = 0..=L` whose angles are the embedding angles
/// theta_l: the network's own (`a_l(x_i).a_l(x_j)` of the seeded or given weights), or,
/// with `probe.method = "theory"`, the infinite-width recursion's `S_l` under the network's
/// convention, so that a theory run reports the theory's angles throughout, free of the
/// weights' seed and of the width (the `official` convention with an activation that is
/// not homogeneous, whose recursion depends on the width, is refused by
/// [`ntk_kernel::theory::Scaling::of`]).
fn embedding_grams(
    cfg: &ProbeConfig,
    mlp: &Mlp,
    inputs: &Inputs,
    compute: &Compute,
) -> crate::Result<Vec<Kernel>> {
    if cfg.probe.method != Method::Theory {
        return Ok(structured::embedding_grams(mlp, to_tensor(inputs, compute)));
    }
    let scaling =
        ntk_kernel::theory::Scaling::of(mlp.config()).map_err(|reason| Error::Config {
            key: "probe.method",
            value: "theory".into(),
            reason: reason.to_string(),
        })?;
    let dual = ntk_kernel::theory::DualEvaluator::new(mlp.activation());
    let (_, grams) = ntk_kernel::theory::infinite_width_layer_grams_scaled(
        &inputs.x,
        inputs.n,
        inputs.d,
        &dual,
        &scaling,
        &|_| {},
    );
    Ok(grams)
}
