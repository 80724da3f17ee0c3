//! The angles a probe reports ([`Angles`]): the minimum model-gradient angle over the set,
//! and the layer embedding angles of `probe.embedding_angles` and `probe.pair`.

use super::*;
use ntk_kernel::embedding::{self, EmbeddingAngle};
use ntk_kernel::theory::relu_angles::Angle;

/// The angles a probe reports: the minimum model-gradient angle over the set, and with
/// `probe.embedding_angles` / `probe.pair` the layer embedding angles (MLPs only).
pub(super) struct Angles {
    pub(super) min: Option<MinAngle>,
    pub(super) embedding_min: Option<Vec<EmbeddingAngle>>,
    pub(super) pair_embedding: Option<Vec<EmbeddingAngle>>,
    pub(super) pair_grad: Option<f64>,
    /// Why `pair_grad` is null though the kernel gave a number: an angle nearer 0 or 180
    /// degrees than the kernel's correlation resolves ([`resolved_pair_angle`]).
    pub(super) pair_grad_note: Option<String>,
    /// Why `min` is null though the kernel gave a number: a smallest angle that the kernel's
    /// precision does not resolve ([`resolved_min`]), or a theory run's that the rule of a
    /// pair's angle does not.
    pub(super) min_note: Option<String>,
    /// The pair of the smallest angle where `min` is null by that rule.
    pub(super) min_unresolved: Option<[usize; 2]>,
}

impl Angles {
    /// Without the whole kernel: `probe.pair`'s angles alone (the gradient angle from the
    /// pair's own kernel, by `pair_kernel` on its two samples).
    pub(super) fn of_pair(
        cfg: &ProbeConfig,
        inputs: &Inputs,
        compute: &Compute,
        net: &Net,
        pair_kernel: &mut impl FnMut(&[usize]) -> crate::Result<KernelResult>,
    ) -> crate::Result<Self> {
        let (pair_embedding, pair_grad) = match cfg.probe.pair {
            Some([i, j]) => {
                let theta = pair_embedding_angles(cfg, mlp_only(net)?, (inputs, [i, j]), compute)?;
                let full = cfg.probe.output == OutputMode::Full;
                let grad = if full {
                    None
                } else {
                    let r = pair_kernel(&[i, j])?;
                    Some(resolved_pair_angle(
                        cfg,
                        (inputs, [i, j]),
                        compute,
                        net,
                        (&r.kernel, [0, 1], r.route),
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
            min_unresolved: None,
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
        (kernel, route): (&Kernel, Route),
    ) -> crate::Result<Self> {
        let full = cfg.probe.output == OutputMode::Full;
        let mlp = || mlp_only(net);
        let embedding_min = if cfg.probe.embedding_angles {
            Some(min_embedding_angles(cfg, mlp()?, inputs, compute)?)
        } else {
            None
        };
        let (pair_embedding, pair_grad) = match cfg.probe.pair {
            Some([i, j]) => {
                let theta = pair_embedding_angles(cfg, mlp()?, (inputs, [i, j]), compute)?;
                let grad = (!full).then(|| {
                    resolved_pair_angle(
                        cfg,
                        (inputs, [i, j]),
                        compute,
                        net,
                        (kernel, [i, j], route),
                    )
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
        let mut min_unresolved = None;
        if cfg.probe.method != Method::Theory {
            (min, min_note, min_unresolved) =
                resolved_min(min, inputs, resolution(cfg, compute, net, route));
        } else if let Some(m) = min {
            let d = inputs.d;
            let row = |i: usize| &inputs.x[i * d..(i + 1) * d];
            match theory_pair_angle(net, row(m.i), row(m.j)) {
                Some(Ok(angle)) if angle.is_finite() => {
                    min = Some(MinAngle { deg: angle, ..m });
                }
                Some(Err(why)) => {
                    min = None;
                    min_unresolved = Some([m.i, m.j]);
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
            min_unresolved,
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
    (kernel, [a, b], route): (&Kernel, [usize; 2], Route),
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
    if cfg.probe.method == Method::Theory
        && let Some(answer) = theory_pair_angle(net, xi, xj)
    {
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
    match resolution(cfg, compute, net, route).angle_deg(kernel, a, b) {
        Ok(phi) => (Some(phi), None),
        Err(why) => (
            None,
            Some(format!(
                "probe.pair = [{i}, {j}]: the gradient angle is null: it is {why}"
            )),
        ),
    }
}

/// How finely the kernel of a network's run resolves its angles near 0 and 180 degrees
/// ([`angles::Resolution`]): the gradients in the run's precision (f64 for a theory run),
/// their products in the precision of the kernel's `route` (f64 on the autodiff route),
/// through the layers the network's rounding passes ([`Net::rounding_depth`]).
pub(super) fn resolution(
    cfg: &ProbeConfig,
    compute: &Compute,
    net: &Net,
    route: Route,
) -> angles::Resolution {
    let precision = match cfg.probe.method {
        Method::Theory => Precision::F64,
        _ => compute.precision,
    };
    angles::Resolution::of_route(route, precision, net.rounding_depth())
}

/// The smallest gradient angle `min` of a network's kernel where the kernel resolves it
/// ([`resolution`]), else null and why (hundred-and-thirty-seventh hostile round, D1: an f32
/// kernel's smallest angle read 0.0 for inputs 0.003 degrees apart, beside a pair angle of
/// the same samples called unresolved). Equal inputs are 0 exactly.
pub(crate) fn resolved_min(
    min: Option<MinAngle>,
    inputs: &Inputs,
    resolution: angles::Resolution,
) -> (Option<MinAngle>, Option<String>, Option<[usize; 2]>) {
    let Some(m) = min else {
        return (None, None, None);
    };
    match resolution.min_angle(m, Some((&inputs.x, inputs.d))) {
        Ok(m) => (Some(m), None, None),
        Err((m, why)) => (
            None,
            Some(format!(
                "min_grad_angle_deg is null: the smallest angle's pair (samples {}, {}) is {why}",
                m.i, m.j
            )),
            Some([m.i, m.j]),
        ),
    }
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

/// The smallest embedding angle `theta_l` over the set at each layer `l = 0..=L`: of the
/// network's own layer outputs ([`ntk_kernel::embedding::min_angles`]: each angle from its
/// two vectors, unresolved below the outputs' rounding), or with `probe.method = "theory"`
/// of the infinite-width recursion's layer Gram matrices ([`theory_grams`]).
fn min_embedding_angles(
    cfg: &ProbeConfig,
    mlp: &Mlp,
    inputs: &Inputs,
    compute: &Compute,
) -> crate::Result<Vec<EmbeddingAngle>> {
    if cfg.probe.method == Method::Theory {
        // theta_0 is the inputs' own, as the network's is; the layers after it by the
        // activation's angle map where the smallest angle stays the smallest pair's
        // (ReLU, leaky ReLU with alpha >= 0, the identity), else the recursion's Gram
        // matrices, held to what their cosines resolve.
        let first = embedding::min_input_angle_deg(&inputs.x, inputs.d);
        let act = mlp.activation();
        if let EmbeddingAngle::Deg(t0) = first
            && ntk_kernel::theory::on_inputs::increasing_in_the_input_angle(act)
            && let Some(t) = theory_angle_map(mlp, Angle::of_degrees(t0))?
        {
            return Ok(t);
        }
        let grams = theory_grams(mlp, inputs)?;
        let min = |(l, g): (usize, &Kernel)| match theory_map_min(mlp, inputs, g, l)? {
            Some(angle) => Ok(angle),
            None => Ok(
                angles::min_angle(g).map_or(EmbeddingAngle::Undefined, |a| gram_angle(a.deg, l))
            ),
        };
        let rest = grams
            .iter()
            .enumerate()
            .skip(1)
            .map(min)
            .collect::<crate::Result<Vec<_>>>()?;
        return Ok(std::iter::once(first).chain(rest).collect());
    }
    let x = to_tensor(inputs, compute);
    let rows = (inputs.x.as_slice(), inputs.d);
    Ok(embedding::min_angles(mlp, x, rows, compute.precision))
}

/// The smallest `theta_l` over the set by the activation's angle map, where it has one but
/// the smallest input angle need not give the smallest `theta_l` (leaky ReLU with `alpha <
/// 0`: under `|z|` nearly opposite inputs become nearly parallel): the candidates are the
/// pairs whose cosine in the recursion's layer Gram matrix `g` is within `4 (d + 2) + 16 (l +
/// 2)` ulps of the largest (the inputs' Gram holds `d`-term dot products, each within about
/// `d` ulps, and each layer of the recursion adds a few), each taken by the map from its rows'
/// own angle. `None` for an activation without a map. Hundred-and-fortieth hostile round,
/// D1: the minimum was the arccos of the Gram's cosines, 0.7% off and above the pair's own
/// angle at 2.6e-5 degrees, null below 2.6e-7; hundred-and-forty-first, D1: with `16 (l + 2)`
/// ulps alone, rows of 10,000 values lost the nearest pair (50% high).
fn theory_map_min(
    mlp: &Mlp,
    inputs: &Inputs,
    g: &Kernel,
    l: usize,
) -> crate::Result<Option<EmbeddingAngle>> {
    use ntk_kernel::theory::relu_angles::{homogeneous_embedding_angles, rows_angle};
    let (n, d) = (inputs.n, inputs.d);
    if homogeneous_embedding_angles(mlp.activation(), Angle::Acute(0.0), 0).is_none() {
        return Ok(None);
    }
    // Each diagonal's root apart: their product underflows for rows near 1e-78
    // (hundred-and-forty-second hostile round, D1: the minimum 2.3 times its pair's, or null).
    let cosine = |i: usize, j: usize| g.get(i, j) / (g.get(i, i).sqrt() * g.get(j, j).sqrt());
    let pairs = || (0..n).flat_map(move |i| (i + 1..n).map(move |j| (i, j)));
    let finite = |&(i, j): &(usize, usize)| cosine(i, j).is_finite();
    let Some(c_max) = pairs()
        .filter(finite)
        .map(|(i, j)| cosine(i, j))
        .max_by(f64::total_cmp)
    else {
        return Ok(Some(EmbeddingAngle::Undefined));
    };
    let tol = (4.0 * (d as f64 + 2.0) + 16.0 * (l as f64 + 2.0)) * f64::EPSILON;
    let row = |k: usize| &inputs.x[k * d..(k + 1) * d];
    let mut best: Option<f64> = None;
    for (i, j) in pairs()
        .filter(finite)
        .filter(|&(i, j)| cosine(i, j) >= c_max - tol)
    {
        let Some(map) = theory_angle_map(mlp, rows_angle(row(i), row(j)))? else {
            return Ok(None);
        };
        if let Some(EmbeddingAngle::Deg(t)) = map.get(l)
            && t.is_finite()
            && best.is_none_or(|b| *t < b)
        {
            best = Some(*t);
        }
    }
    Ok(Some(
        best.map_or(EmbeddingAngle::Undefined, EmbeddingAngle::Deg),
    ))
}

/// `theta_0 .. theta_L` of the pair of samples `i`, `j`, formed as
/// [`min_embedding_angles`] forms each layer's.
fn pair_embedding_angles(
    cfg: &ProbeConfig,
    mlp: &Mlp,
    (inputs, [i, j]): (&Inputs, [usize; 2]),
    compute: &Compute,
) -> crate::Result<Vec<EmbeddingAngle>> {
    let two = inputs.select(&[i, j]);
    let d = inputs.d;
    let row = |k: usize| &inputs.x[k * d..(k + 1) * d];
    if cfg.probe.method == Method::Theory {
        let first = embedding::input_angle_deg(row(i), row(j));
        let theta_0 = ntk_kernel::theory::relu_angles::rows_angle(row(i), row(j));
        if let EmbeddingAngle::Deg(_) = first
            && let Some(t) = theory_angle_map(mlp, theta_0)?
        {
            return Ok(t);
        }
        let grams = theory_grams(mlp, &two)?;
        let rest = grams
            .iter()
            .enumerate()
            .skip(1)
            .map(|(l, g)| gram_angle(angles::angle_deg(g, 0, 1), l));
        return Ok(std::iter::once(first).chain(rest).collect());
    }
    let x = to_tensor(&two, compute);
    Ok(embedding::pair_angles(
        mlp,
        x,
        (row(i), row(j)),
        compute.precision,
    ))
}

/// `theta_0 .. theta_L` of inputs at angle `theta_0` by the activation's angle map, exact
/// at every angle, near 0 and near 180 degrees alike
/// ([`ntk_kernel::theory::relu_angles::homogeneous_embedding_angles`]: ReLU, leaky ReLU, the
/// identity); `None` for another activation. The network's theory scaling is checked
/// first, as [`theory_grams`] checks it.
fn theory_angle_map(mlp: &Mlp, theta_0: Angle) -> crate::Result<Option<Vec<EmbeddingAngle>>> {
    theory_scaling(mlp)?;
    let map = ntk_kernel::theory::relu_angles::homogeneous_embedding_angles(
        mlp.activation(),
        theta_0,
        mlp.depth(),
    );
    Ok(map.map(|t| {
        t.into_iter()
            .map(|a| EmbeddingAngle::Deg(a.degrees()))
            .collect()
    }))
}

/// An angle of layer `l` of the theory's Gram matrices, the arccos of a cosine: undefined
/// where not finite (a zero vector), unresolved where nearer 0 or 180 degrees than the
/// cosine's rounding resolves (`l + 1` ulps of f64, [`angles::Resolution`]): the theory's
/// angles below about 1e-6 degrees read 0 (hundred-and-thirty-eighth hostile round, second
/// review, D3).
fn gram_angle(deg: f64, l: usize) -> EmbeddingAngle {
    if !deg.is_finite() {
        return EmbeddingAngle::Undefined;
    }
    match angles::Resolution::new(Precision::F64, l + 1).resolve(deg) {
        Ok(deg) => EmbeddingAngle::Deg(deg),
        Err(why) => EmbeddingAngle::Unresolved {
            error_deg: why.error_deg,
        },
    }
}

/// The network's infinite-width scaling, or the refusal naming `probe.method`.
fn theory_scaling(mlp: &Mlp) -> crate::Result<ntk_kernel::theory::Scaling> {
    ntk_kernel::theory::Scaling::of(mlp.config()).map_err(|reason| Error::Config {
        key: "probe.method",
        value: "theory".into(),
        reason: reason.to_string(),
    })
}

/// The infinite-width recursion's layer Gram matrices `S_l` (`l = 0..=L`) under the
/// network's convention, so that a theory run reports the theory's angles throughout, free
/// of the weights' seed and of the width (the `official` convention with an activation that
/// is not homogeneous, whose recursion depends on the width, is refused by
/// [`ntk_kernel::theory::Scaling::of`]).
fn theory_grams(mlp: &Mlp, inputs: &Inputs) -> crate::Result<Vec<Kernel>> {
    let scaling = theory_scaling(mlp)?;
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

/// The notes of embedding angles that are null: not resolved, naming the layers: of a
/// network, nearer 0 or 180 degrees than the layer outputs' rounding
/// ([`ntk_kernel::embedding::error_rad`]); of a theory run (`theory`), than the recursion's
/// Gram matrices' cosines ([`gram_angle`]; hundred-and-thirty-ninth hostile round, second
/// review, N3: the note spoke of layer outputs and fan-in there).
pub(super) fn unresolved_embedding_note(
    what: &str,
    theta: &[EmbeddingAngle],
    (precision, theory): (Precision, bool),
) -> Option<String> {
    let layers: Vec<(usize, f64)> = theta
        .iter()
        .enumerate()
        .filter_map(|(l, a)| match a {
            EmbeddingAngle::Unresolved { error_deg } => Some((l, *error_deg)),
            _ => None,
        })
        .collect();
    let &(last, largest) = layers.last()?;
    let names: Vec<String> = layers.iter().map(|(l, _)| l.to_string()).collect();
    let (source, bound) = match theory {
        true => (
            "the infinite-width recursion's layer Gram matrices, computed in f64,".to_string(),
            "l + 1 ulps of their correlation",
        ),
        false => (
            format!("the layer outputs, computed in {precision},"),
            "sqrt(l fan-in) / 2 ulps",
        ),
    };
    Some(format!(
        "{what}: theta_l is null at layer {}: nearer 0 or 180 degrees than {source} resolve \
         (about {largest:.1e} degrees at layer {last}, {bound})",
        names.join(", ")
    ))
}
