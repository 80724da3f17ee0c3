//! The infinite-width recursion of each NTK convention, derived from the forward of
//! `ntk_model::Mlp` (`crates/ntk-model/src/mlp.rs`).
//!
//! The network (NTK parameterization, all weights i.i.d. N(0, 1), no biases, no
//! normalization, input dimension `d`, width `m`, depth `L`) computes, with the forward scales
//! `(beta_l, gamma_l, beta_out)` of [`ntk_model::LayerScales`]:
//!
//! ```text
//! a_0 = x,   z_l = beta_l W_l a_{l-1},   a_l = gamma_l s(z_l)   (l = 1..L),
//! f = beta_{L+1} W_{L+1} a_L             (beta_{L+1} = beta_out).
//! ```
//!
//! Write `A_l(x,y) = a_l(x).a_l(y)` (`A_0 = x.y`) and `S_l = beta_{l+1}^2 A_l`: the
//! covariance of the pre-activations that the next matrix product makes (a unit of
//! `z_{l+1}` is `beta_{l+1} w.a_l`, `w ~ N(0, I)`). At infinite width the units of `z_l` are
//! i.i.d. centred Gaussians with covariance `S_{l-1}` on `{x, y}`, and by the law of large
//! numbers over the `m` units
//!
//! ```text
//! S_0  = beta_1^2 x.y                                  (the `input` constant s0),
//! S_l  = beta_{l+1}^2 gamma_l^2 sum_j s(u_j) s(v_j)   -> k_l E[s(u) s(v)],
//! Sd_l = k_l E[s'(u) s'(v)],    k_l = beta_{l+1}^2 gamma_l^2 m,  (u, v) ~ N(0, S_{l-1}).
//! ```
//!
//! The NTK: the output layer contributes `beta_out^2 A_L = S_L`; hidden layer `l`
//! contributes `beta_l^2 A_{l-1} = S_{l-1}` times `delta_l(x).delta_l(y)`, with
//! `delta_l = df/dz_l`: `delta_L = gamma_L s'(z_L) * beta_out W_{L+1}^T` gives
//! `delta_L.delta_L -> beta_out^2 gamma_L^2 m E[s' s'] = Sd_L`, and
//! `delta_l = gamma_l s'(z_l) * beta_{l+1} W_{l+1}^T delta_{l+1}` gives
//! `delta_l.delta_l -> Sd_l (delta_{l+1}.delta_{l+1})` (the later `W` independent of the
//! forward in the limit). So `Theta_L = S_L + sum_{l=1..L} S_{l-1} prod_{k=l..L} Sd_k`, i.e.
//!
//! ```text
//! Theta_0 = S_0,   Theta_l = Theta_{l-1} Sd_l + S_l,
//! ```
//!
//! the paper recursion with `c` replaced by `k_l` and `x.y` by `s0 x.y`. From the table of
//! [`ntk_model::NtkConvention`] (`c = 1 / E[s(Z)^2]`):
//!
//! | convention      | s0                  | k_1                              | k_l, 1 < l < L | k_L (L >= 2) |
//! |-----------------|---------------------|----------------------------------|----------------|--------------|
//! | `paper`         | 1                   | c                                | c              | c            |
//! | `official`      | 1 (`1 / d` at L = 0)| `c m / d` (L >= 2), `c^2 / d` (L = 1) | c          | `c^2 / m`    |
//! | `unit_variance` | `1 / d`             | c                                | c              | c            |
//!
//! (`paper`: `beta = 1`, `gamma = sqrt(c/m)`, `beta_out = 1`; `official`: `gamma_1 =
//! sqrt(c/d)`, later `gamma_l = sqrt(c/m)`, `beta_out = sqrt(c/m)`; `unit_variance`:
//! `beta_1 = 1/sqrt(d)`, later `beta_l = 1/sqrt(m)`, `gamma = sqrt(c)`,
//! `beta_out = 1/sqrt(m)`.) So `unit_variance` is the paper recursion on `x / sqrt(d)`
//! (first pre-activations of variance `||x||^2 / d`); `official` keeps the first layer's
//! variance `||x||^2` but gives the second layer pre-activations of variance
//! `~ c m ||x||^2 / d`: growing with the width. For ReLU and the identity (positively
//! homogeneous) that is one global factor, `Theta_official = (c / d) Theta_paper`; for
//! other activations the `official` recursion depends on `m / d` and is the width-`m`
//! mean-field value (each layer's law of large numbers at the network's own `m`), not a
//! width-independent limit, so [`Scaling::of`] refuses it ([`NotCovered::NoLimit`]) and only
//! [`Scaling::convention`] gives it. Its fluctuation is larger there: for tanh at variance
//! `q ~ m / d` only a fraction `~ 1 / sqrt(q)` of the units is unsaturated, so `Sd` averages
//! `~ sqrt(m d)` effective units instead of `m`.

use ntk_model::{
    Activation, ActivationKind, LayerScales, MlpConfig, Normalization, NtkConvention,
    Parameterization,
};

/// The constants of one network's recursion (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct Scaling {
    /// `s0`: `S_0 = s0 x.y`.
    pub input: f64,
    /// `k_l` for `l = 1..=L` (index `l - 1`).
    pub layers: Vec<f64>,
}

impl Scaling {
    /// Liu & Hui's paper convention: `s0 = 1`, every `k_l = c`.
    pub fn paper(act: &Activation, depth: usize) -> Self {
        Self {
            input: 1.0,
            layers: vec![act.c(); depth],
        }
    }

    /// The constants of `convention` for an input dimension `d` and width `m`, by the table
    /// of the module doc.
    pub fn convention(
        convention: NtkConvention,
        act: &Activation,
        d: usize,
        m: usize,
        depth: usize,
    ) -> Self {
        let (c, d, m) = (act.c(), d as f64, m as f64);
        match convention {
            NtkConvention::Paper => Self::paper(act, depth),
            NtkConvention::UnitVariance => Self {
                input: 1.0 / d,
                layers: vec![c; depth],
            },
            NtkConvention::Official => Self {
                input: if depth == 0 { 1.0 / d } else { 1.0 },
                layers: (1..=depth)
                    .map(|l| match (l == 1, l == depth) {
                        (true, true) => c * c / d,
                        (true, false) => c * m / d,
                        (false, true) => c * c / m,
                        (false, false) => c,
                    })
                    .collect(),
            },
        }
    }

    /// The constants read off the forward scales of a network directly:
    /// `s0 = beta_1^2` (`beta_out^2` at depth 0), `k_l = (beta_{l+1} gamma_l)^2 m`. Equal to
    /// [`Self::convention`] up to rounding (tested): an independent route through
    /// [`MlpConfig::scales`].
    pub fn from_layer_scales(scales: &LayerScales, m: usize) -> Self {
        let depth = scales.gamma.len();
        let beta_next = |l: usize| {
            if l < depth {
                scales.beta[l]
            } else {
                scales.beta_out
            }
        };
        Self {
            input: scales
                .beta
                .first()
                .map_or(scales.beta_out * scales.beta_out, |b| b * b),
            layers: (0..depth)
                .map(|l| (beta_next(l + 1) * scales.gamma[l]).powi(2) * m as f64)
                .collect(),
        }
    }

    /// The constants of `cfg`'s network, or why the recursion does not describe it.
    /// `cfg.input_dim` must be the inputs' dimension. A network with several outputs has
    /// `Theta_L` per output (summed: `k Theta_L`): angles and kappa are those of `Theta_L`.
    pub fn of(cfg: &MlpConfig) -> Result<Self, NotCovered> {
        if cfg.parameterization != Parameterization::Ntk {
            return Err(NotCovered::Parameterization(cfg.parameterization));
        }
        if cfg.bias {
            return Err(NotCovered::Bias);
        }
        if cfg.normalization != Normalization::None {
            return Err(NotCovered::Normalization(cfg.normalization));
        }
        if cfg.convention == NtkConvention::Official
            && cfg.depth >= 2
            && !cfg.activation().is_homogeneous()
        {
            return Err(NotCovered::NoLimit(cfg.activation));
        }
        if cfg.input_dim == 0 {
            return Err(NotCovered::UnknownInputDim);
        }
        Ok(Self::convention(
            cfg.convention,
            &cfg.activation(),
            cfg.input_dim,
            cfg.width,
            cfg.depth,
        ))
    }

    /// The depth `L`.
    pub fn depth(&self) -> usize {
        self.layers.len()
    }

    /// True when these are the paper convention's constants for `act` (exactly).
    pub fn is_paper(&self, act: &Activation) -> bool {
        self.input == 1.0 && self.layers.iter().all(|&k| k == act.c())
    }
}

/// Why the infinite-width recursion does not describe a network ([`Scaling::of`]).
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum NotCovered {
    #[error(
        "the infinite-width recursion is for the ntk parameterization (the network is {})",
        ntk_names::spelled(.0)
    )]
    Parameterization(Parameterization),
    #[error("the infinite-width recursion is for networks without biases")]
    Bias,
    #[error(
        "the infinite-width recursion is for networks without normalization layers (the \
         network has {})",
        ntk_names::spelled(.0)
    )]
    Normalization(Normalization),
    #[error("the input dimension is unknown")]
    UnknownInputDim,
    /// The `official` convention at depth `L >= 2` with an activation that is not
    /// positively homogeneous: its second layer's pre-activations have variance
    /// `~ c m ||x||^2 / d` (the module doc's `k_1 = c m / d`), growing without bound with the
    /// width `m`, so the network has no infinite-width limit; [`Scaling::convention`] still
    /// gives the width-`m` mean-field recursion (seventy-third hostile round, D1).
    #[error(
        "under convention = \"official\" the second layer's pre-activations have variance \
         about c m |x|^2 / d, growing with the width m; {}, so this network has no \
         infinite-width limit (the paper and unit_variance conventions have one, and so have \
         relu, leaky_relu and linear under official)",
        match .0 {
            // Of degree 2: the growth is squared each layer (hundred-and-thirteenth hostile
            // round, N1: "not positively homogeneous" said of it).
            ActivationKind::ReluSquared => "relu_squared is positively homogeneous of degree 2, \
                not 1, so each layer squares it"
                .to_string(),
            kind => format!("{} is not positively homogeneous", ntk_names::spelled(kind)),
        }
    )]
    NoLimit(ActivationKind),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table of the module doc equals the constants read off `MlpConfig::scales` (the
    /// forward's own numbers) to rounding, for every convention, activation and depth.
    #[test]
    fn table_matches_the_forward_scales() {
        for convention in [
            NtkConvention::Paper,
            NtkConvention::Official,
            NtkConvention::UnitVariance,
        ] {
            for kind in ActivationKind::all() {
                for depth in 0..5 {
                    let cfg = MlpConfig::new(7, 300, depth, kind).with_convention(convention);
                    let want = Scaling::from_layer_scales(&cfg.scales(), cfg.width);
                    let got = Scaling::convention(convention, &cfg.activation(), 7, 300, depth);
                    // `of` gives the same constants, but refuses the `official` network that
                    // has no infinite-width limit (D1 of the seventy-third hostile round).
                    let no_limit = convention == NtkConvention::Official
                        && depth >= 2
                        && !cfg.activation().is_homogeneous();
                    match Scaling::of(&cfg) {
                        Ok(of) => assert!(!no_limit && of == got, "{convention:?} {kind} {depth}"),
                        Err(e) => assert!(
                            no_limit && e == NotCovered::NoLimit(kind),
                            "{convention:?} {kind} {depth}: {e}"
                        ),
                    }
                    assert_eq!(got.depth(), depth);
                    let close = |a: f64, b: f64| (a - b).abs() <= 1e-14 * a.abs().max(b.abs());
                    assert!(
                        close(got.input, want.input),
                        "{convention:?} {kind} {depth}"
                    );
                    for (a, b) in got.layers.iter().zip(&want.layers) {
                        assert!(close(*a, *b), "{convention:?} {kind} L{depth}: {a} {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn unsupported_networks_say_why() {
        let cfg = MlpConfig::new(3, 8, 2, ActivationKind::Gelu);
        assert_eq!(
            Scaling::of(&cfg.clone().with_bias(true)).unwrap_err(),
            NotCovered::Bias
        );
        let standard = cfg
            .clone()
            .with_parameterization(Parameterization::Standard);
        let e = Scaling::of(&standard).unwrap_err();
        assert_eq!(e, NotCovered::Parameterization(Parameterization::Standard));
        assert!(e.to_string().contains("(the network is standard)"), "{e}");
        let e = Scaling::of(&cfg.clone().with_convention(NtkConvention::Official)).unwrap_err();
        assert!(
            e.to_string().contains(
                "gelu is not positively homogeneous, so this network has no \
                 infinite-width limit"
            ),
            "{e}"
        );
        let e = Scaling::of(&cfg.with_normalization(Normalization::LayerNorm)).unwrap_err();
        assert!(
            e.to_string().ends_with("(the network has layer_norm)"),
            "{e}"
        );
    }
}
