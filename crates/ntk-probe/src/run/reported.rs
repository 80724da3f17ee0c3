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
        Ok(Self {
            min: if full {
                None
            } else {
                angles::min_angle(kernel)
            },
            embedding_min,
            pair_embedding,
            pair_grad,
            pair_grad_note,
        })
    }
}

/// The gradient angle of `probe.pair` from `kernel`'s entries `[a, b]`, where its
/// correlation resolves it; else null and why (hundred-and-third hostile round, D2: a
/// theory run wrote 180.0 for a pair 179.9999999 degrees apart, 0.0 for 1e-7, and at 1e-5
/// degrees a number wrong in its second digit, where `ntk-probe theory` refuses those
/// angles). An angle formed as arccos of a correlation within `1 - |c|` of 1 has an error of
/// about `u / sqrt(2 (1 - |c|))` radians for an error `u` of the correlation: with
/// `probe.method = "theory"`, `(L + 1)` ulps of f64 for a closed-form dual kernel and four
/// times that by quadrature ([`ntk_kernel::theory::ntk::PairRecursion::angle_error_deg`]),
/// answered where it is at most [`crate::fig1::MAX_ANGLE_ERROR_DEG`] as `theory` answers;
/// a network's kernel, `(L + 1)` ulps of its precision (an estimate: its sums have more
/// terms), answered where that error is below the angle's distance from 0 or 180 (at
/// least one significant digit). A pair of equal inputs is 0 exactly.
fn resolved_pair_angle(
    cfg: &ProbeConfig,
    (inputs, [i, j]): (&Inputs, [usize; 2]),
    compute: &Compute,
    net: &Net,
    (kernel, [a, b]): (&Kernel, [usize; 2]),
) -> (Option<f64>, Option<String>) {
    let phi = angles::angle_deg(kernel, a, b);
    let d = inputs.d;
    if !phi.is_finite() || inputs.x[i * d..(i + 1) * d] == inputs.x[j * d..(j + 1) * d] {
        return (Some(phi), None);
    }
    let c = kernel.get(a, b) / (kernel.get(a, a).sqrt() * kernel.get(b, b).sqrt());
    let gap = 1.0 - c.abs();
    let layers = match net {
        Net::Mlp(m) => m.depth() + 1,
        _ => 1,
    } as f64;
    let theory = cfg.probe.method == Method::Theory;
    let ulps = if theory {
        let closed = net
            .activation()
            .is_some_and(|act| ntk_kernel::theory::dual::DualEvaluator::new(act).is_closed_form());
        if closed {
            1.0
        } else {
            ntk_kernel::theory::ntk::QUADRATURE_ULPS
        }
    } else {
        1.0
    };
    let eps = match (theory, compute.precision) {
        (false, Precision::F32) => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    };
    let error = if gap > 0.0 {
        (layers * ulps * eps / (2.0 * gap).sqrt()).to_degrees()
    } else {
        f64::INFINITY
    };
    // The theory's angle is answered as `theory` answers it, by the pair's own recursion under
    // the network's scaling: near 0 where every layer's correlation keeps six significant
    // digits ([`ntk_kernel::theory::ntk::PairRecursion::unresolved_layer`]; an activation
    // whose angle is exact at every angle, ReLU's, aside), and near either end where the
    // bound of its layers nearest 1 or -1 is at most 1e-7 degrees (hundred-and-fourth hostile
    // round, D1: 1e-4 degrees was written, wrong in its fifth digit; hundred-and-fifth, D1 and
    // D2: ReLU's exact small angles were null, and tanh at 179.9999, depths 3-4, written
    // where `theory` refuses it).
    let mut error = error;
    if theory
        && let Net::Mlp(m) = net
        && let Ok(scaling) = ntk_kernel::theory::Scaling::of(m.config())
    {
        let (xi, xj) = (&inputs.x[i * d..(i + 1) * d], &inputs.x[j * d..(j + 1) * d]);
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(u, v)| u * v).sum::<f64>();
        let dual = ntk_kernel::theory::dual::DualEvaluator::new(m.activation());
        let r = ntk_kernel::theory::ntk::pair_recursion_scaled(
            &dual,
            &scaling,
            dot(xi, xi),
            dot(xj, xj),
            dot(xi, xj),
        );
        let exact =
            ntk_kernel::theory::ntk::grad_angle_exact_at_every_angle(m.activation(), m.depth());
        if c > 0.0
            && !exact
            && let Some((l, one_minus_rho)) = r.unresolved_layer()
        {
            return (
                None,
                Some(format!(
                    "probe.pair = [{i}, {j}]: the gradient angle is null: it is too small for \
                     the infinite-width recursion in f64: at layer {l} the pair's correlation \
                     is within {one_minus_rho:.1e} of 1, where an angle keeps fewer than six \
                     significant digits, as `ntk-probe theory` refuses it"
                )),
            );
        }
        if let Some((_, _, bound)) = r.angle_error_deg_at_either_end(dual.is_closed_form()) {
            error = error.max(bound);
        }
    }
    let distance = phi.min(180.0 - phi);
    let (resolved, allowed) = if theory {
        (
            error <= crate::fig1::MAX_ANGLE_ERROR_DEG,
            format!("{:e}", crate::fig1::MAX_ANGLE_ERROR_DEG),
        )
    } else {
        (error < distance, "its distance from 0 or 180".to_string())
    };
    if resolved {
        return (Some(phi), None);
    }
    let near = if c > 0.0 { "0" } else { "180" };
    let known = if gap > 0.0 {
        format!("within {gap:.1e} of {}1", if c > 0.0 { "" } else { "-" })
    } else {
        format!(
            "{}1 in {}",
            if c > 0.0 { "" } else { "-" },
            compute.precision
        )
    };
    (
        None,
        Some(format!(
            "probe.pair = [{i}, {j}]: the gradient angle is null: it is too near {near} degrees \
             for the kernel's correlation ({known}) to resolve it, known to about {error:.0e} \
             degrees, more than {allowed}"
        )),
    )
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
