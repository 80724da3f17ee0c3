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
                    Some(angles::angle_deg(&pair_kernel(&[i, j])?, 0, 1))
                };
                (Some(theta), grad)
            }
            None => (None, None),
        };
        Ok(Self {
            min: None,
            embedding_min: None,
            pair_embedding,
            pair_grad,
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
                let grad = (!full).then(|| angles::angle_deg(kernel, i, j));
                (Some(theta), grad)
            }
            None => (None, None),
        };
        Ok(Self {
            min: if full {
                None
            } else {
                angles::min_angle(kernel)
            },
            embedding_min,
            pair_embedding,
            pair_grad,
        })
    }
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
