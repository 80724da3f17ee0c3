//! Activation functions `s`: one file each, one registry.
//!
//! An activation is a type implementing [`ActivationFn`]: its name (the type's entry in the
//! registry below), its parameter if it has one (NormReLU's kink `b`, LeakyReLU's slope
//! `alpha`), `s` and `s'` on scalars and on tensors (model forward, the probe's hand-written
//! backward) and in place on the host engines' columns, its kinks and smooth window (for
//! quadrature), its Gaussian moments (which fix the NTK parameterization's scale constant
//! `c = 1 / E[s(Z)^2]`, Liu & Hui Eq. 1), its dual kernel in closed form where one is known
//! (the infinite-width theory integrates the others), and how figures draw it ([`Look`]).
//!
//! The registry ([`registry!`] at the end of this file) lists every activation once, one
//! line each; [`ActivationKind`] (the config names), [`Activation`] (the resolved value) and
//! every list of activations in the tools derive from it. Adding an activation is one file
//! in this directory and one registry line: the MLPs, the norm-free ResNets (`[resnet]
//! variant = "normalized"`, the activation normalized by [`Normalized`]) and every engine
//! then run it (the cuDNN engine where [`ActivationFn::cuda`] gives its CUDA form).

use burn::tensor::Tensor;
use ntk_numerics::linalg::Real;
use serde::{Deserialize, Serialize};
use std::fmt;

use crate::normal;

/// Gaussian moments of an activation, `Z ~ N(0, 1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments {
    /// `E[s(Z)]`.
    pub mean: f64,
    /// `E[s(Z)^2]`.
    pub second: f64,
    /// `E[Z s(Z)]`, the first Hermite coefficient.
    pub z_s: f64,
}

impl Moments {
    /// The NTK scale constant `c = 1 / E[s(Z)^2]` (Liu & Hui, Eq. 1): 2 for ReLU, 1 for the
    /// identity and for any normalized activation.
    pub fn c(&self) -> f64 {
        1.0 / self.second
    }

    /// Agarwal et al.'s coefficient of non-linearity of the normalized activation
    /// `(s - E s) / sd(s)`: `mu = 1 - E[Z s(Z)]^2 / Var s(Z)`, the share of the Hermite
    /// energy above degree one: 0 for the identity, `1 - pi / (2 (pi - 1)) ~ 0.2665` for ReLU,
    /// always in `[0, 1]`.
    pub fn nonlinearity(&self) -> f64 {
        let var = self.second - self.mean * self.mean;
        1.0 - self.z_s * self.z_s / var
    }
}

/// One hidden layer of the infinite-width recursion in the paper convention
/// (`ntk_kernel::theory::dual` derives it): for pre-activations `(u, v)` jointly Gaussian
/// with covariance `[[q1, c12], [c12, q2]]`, `Sigma = c E[s(u) s(v)]` and
/// `Sigma_dot = c E[s'(u) s'(v)]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualKernel {
    /// `Sigma = c E[s(u) s(v)]`: the next layer's embedding kernel.
    pub sigma: f64,
    /// `Sigma_dot = c E[s'(u) s'(v)]`: the backpropagation factor of the NTK recursion.
    pub sigma_dot: f64,
}

/// The moments of `s(sqrt(q) Z)` at one variance `q`: the raw material of Agarwal et al.'s
/// transfer functions (`ntk_kernel::theory::transfer`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaledMoments {
    /// `m(q) = E[s(sqrt(q) Z)]`.
    pub mean: f64,
    /// `N(q) = E[s(sqrt(q) Z)^2]`.
    pub second: f64,
    /// `N'(q)`, the derivative of `second` in `q`.
    pub second_slope: f64,
}

/// `rho = c12 / sqrt(q1 q2)`, clamped to `[-1, 1]`; exactly `+-1` when `|c12| = q1 = q2`
/// (a diagonal entry, where `q / (sqrt q sqrt q)` could round to `1 - 2^-53` and cost the
/// ReLU closed form `acos`'s `sqrt(2 eps) ~ 1.5e-8`), and 0 when an input is zero.
pub fn correlation(q1: f64, q2: f64, c12: f64) -> f64 {
    if q1 <= 0.0 || q2 <= 0.0 {
        return 0.0;
    }
    if q1 == q2 && c12.abs() == q1 {
        return c12.signum();
    }
    (c12 / (q1.sqrt() * q2.sqrt())).clamp(-1.0, 1.0)
}

/// An activation family's one real parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    /// Its symbol in the papers and in words (`norm_relu(b=-0.2)`): `b`, `alpha`.
    pub symbol: &'static str,
    /// What it is, for messages and help: "the kink".
    pub meaning: &'static str,
    /// The value when a config gives none.
    pub default: f64,
    /// The accepted closed interval.
    pub range: (f64, f64),
}

/// A marker shape, for figures (`ntk_plot` draws it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
}

/// How every figure draws an activation: the name the papers use, one colour (RGB) and one
/// marker, the same in the probe's sweeps and the trainer's curves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Look {
    pub label: &'static str,
    pub rgb: (u8, u8, u8),
    pub shape: Shape,
}

/// One activation function `s` (a unit type, or one carrying its resolved parameter).
/// Defaults cover what most activations share: no parameter, no kink, not homogeneous,
/// moments and dual kernel by quadrature, the host loop through `f64`.
pub trait ActivationFn: Copy + fmt::Debug + PartialEq + Send + Sync + 'static {
    /// The family's parameter, if it has one.
    const PARAM: Option<Param> = None;
    /// How figures draw it.
    const LOOK: Look;

    /// The activation with its parameter (`None`: [`Param::default`]; already checked
    /// against [`Param::range`] by whoever read it).
    fn with_param(param: Option<f64>) -> Self;
    /// The parameter's value (`Some` exactly when [`Self::PARAM`] is).
    fn param(&self) -> Option<f64> {
        None
    }

    /// `s(x)` on a scalar.
    fn eval(&self, x: f64) -> f64;
    /// `s'(x)` on a scalar (the right-continuous choice at a kink is irrelevant: kinks have
    /// probability zero under a Gaussian pre-activation).
    fn derivative(&self, x: f64) -> f64;
    /// `s` applied elementwise to a tensor (keeps its dtype and autodiff graph).
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D>;
    /// `s'` applied elementwise to a tensor (the probe's backward; no autodiff involved).
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D>;

    /// Points where `s` or `s'` is not smooth (quadrature splits there).
    fn kinks(&self) -> Vec<f64> {
        Vec::new()
    }
    /// The half-width `W` (in units of the pre-activation) outside which `s` and `s'` are
    /// affine to f64 precision (`ntk_kernel::theory::dual`'s split rule refines its panels
    /// only inside it); 0 for piecewise polynomial activations.
    fn smooth_window(&self) -> f64 {
        0.0
    }
    /// True for positively homogeneous activations (`s(a x) = a s(x)`, `a > 0`): for these a
    /// per-layer constant factors out of the NTK and leaves kappa and all angles unchanged.
    fn is_homogeneous(&self) -> bool {
        false
    }
    /// The moments in closed form, where one is known.
    fn closed_moments(&self) -> Option<Moments> {
        None
    }
    /// `(Sigma, Sigma_dot)` in closed form with `c = 1 / E[s(Z)^2]`, where one is known.
    fn closed_dual(&self, _q1: f64, _q2: f64, _c12: f64) -> Option<DualKernel> {
        None
    }
    /// [`ScaledMoments`] at variance `q > 0` in closed form, where one is known.
    fn closed_scaled_moments(&self, _q: f64) -> Option<ScaledMoments> {
        None
    }
    /// True for an activation normalized by construction (`E[s(Z)] = 0`, `E[s(Z)^2] = 1`:
    /// NormReLU, SELU), which a norm-free ResNet applies as it is; any other is normalized
    /// there ([`Normalized`]).
    fn is_normalized(&self) -> bool {
        false
    }
    /// `s` and `s'` in CUDA C, for the kernels the cuDNN engine compiles with NVRTC
    /// ([`Cuda`]); `None`: the cuDNN engine does not run this activation (the others do).
    fn cuda(&self) -> Option<Cuda> {
        None
    }
    /// In place over a column of pre-activations `z` held in `a`: `a = gamma s(z)` and
    /// `slope = gamma s'(z)` (the host engines' forward). By default through `f64`.
    fn activate_host<T: Real>(&self, gamma: f64, a: &mut [T], slope: &mut [T]) {
        for (a, s) in a.iter_mut().zip(slope) {
            let v = a.f64();
            *a = T::of(self.eval(v) * gamma);
            *s = T::of(self.derivative(v) * gamma);
        }
    }
}

/// An activation in CUDA C (f32): two expressions the cuDNN engine's kernels inline
/// (`ntk_engine::cudnn::kernels`). `value` is `s(z)` in the `float z`; `slope` is `s'(z)` in
/// `z` and `s`, the value `s(z)` already computed (SELU's slope reads it and evaluates no
/// second exponential). Parameters appear as literals ([`cuda_float`]). NaN must propagate
/// (a diverged step reaches the loss): write `z < b ? b : z`, not `fmaxf(z, b)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cuda {
    pub value: String,
    pub slope: String,
}

/// `x` rounded to f32 as a CUDA C literal that reads back to the same f32: `(-1.5907658f)`.
pub fn cuda_float(x: f64) -> String {
    format!("({:?}f)", x as f32)
}

/// A parameter outside its family's range, or given to a family without one.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ParamError {
    #[error("{kind} takes no parameter ({takes})")]
    None { kind: ActivationKind, takes: String },
    #[error("{kind}'s {meaning} {symbol} = {value:?} must be finite, in [{lo}, {hi}]")]
    Range {
        kind: ActivationKind,
        meaning: &'static str,
        symbol: &'static str,
        value: f64,
        lo: f64,
        hi: f64,
    },
}

/// Why [`Activation::read_words`] refuses its words.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WordsError {
    /// Not a family's name, nor `name(symbol=value)` with a number.
    #[error("not an activation")]
    Unknown,
    /// A family's parameter outside its range, or given to a family without one.
    #[error(transparent)]
    Param(ParamError),
    /// A nonzero parameter too small for f64, which reads it as 0.
    #[error(
        "{given} is nonzero but reads as 0 in f64 (below its smallest number): give 0, or a value f64 holds"
    )]
    Underflow { given: String },
    /// A family's parameter under another symbol (`leaky_relu(b=0.1)`).
    #[error("{kind}'s parameter is {expected}, not {given}")]
    Symbol {
        kind: ActivationKind,
        given: String,
        expected: &'static str,
    },
}

/// Declares the activations: each entry is `Variant => module::Type`, the type living in
/// `module.rs` of this directory. Generates the module declarations, [`ActivationKind`] (the
/// config names, serde's snake_case of the variant) and [`Activation`] (the resolved value),
/// with every method of [`ActivationFn`] dispatched once.
macro_rules! registry {
    ($( $(#[$attr:meta])* $variant:ident => $module:ident :: $ty:ident ),* $(,)?) => {
        $( mod $module; pub use $module::$ty; )*

        /// The activation family, by name as it appears in configs.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum ActivationKind {
            $( $(#[$attr])* $variant, )*
        }

        /// A concrete activation `s`, with its parameter resolved.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum Activation {
            $( $variant($ty), )*
        }

        impl ActivationKind {
            /// The family's parameter, if it has one.
            pub fn param(self) -> Option<Param> {
                match self { $( Self::$variant => <$ty as ActivationFn>::PARAM, )* }
            }
            /// How figures draw the family.
            pub fn look(self) -> Look {
                match self { $( Self::$variant => <$ty as ActivationFn>::LOOK, )* }
            }
        }

        impl Activation {
            /// Resolves a kind with its parameter (`None`: the family's default). The
            /// parameter is not checked here: [`Self::checked`] does.
            pub fn new(kind: ActivationKind, param: Option<f64>) -> Self {
                match kind { $( ActivationKind::$variant => Self::$variant(<$ty>::with_param(param)), )* }
            }
            pub fn kind(&self) -> ActivationKind {
                match self { $( Self::$variant(_) => ActivationKind::$variant, )* }
            }
            /// The parameter's value (`Some` exactly for families with one).
            pub fn param(&self) -> Option<f64> {
                match self { $( Self::$variant(a) => a.param(), )* }
            }
            pub fn is_homogeneous(&self) -> bool {
                match self { $( Self::$variant(a) => a.is_homogeneous(), )* }
            }
            pub fn kinks(&self) -> Vec<f64> {
                match self { $( Self::$variant(a) => a.kinks(), )* }
            }
            pub fn smooth_window(&self) -> f64 {
                match self { $( Self::$variant(a) => a.smooth_window(), )* }
            }
            pub fn eval(&self, x: f64) -> f64 {
                match self { $( Self::$variant(a) => a.eval(x), )* }
            }
            pub fn derivative(&self, x: f64) -> f64 {
                match self { $( Self::$variant(a) => a.derivative(x), )* }
            }
            pub fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
                match self { $( Self::$variant(a) => a.forward(x), )* }
            }
            pub fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
                match self { $( Self::$variant(a) => a.derivative_tensor(x), )* }
            }
            pub fn closed_moments(&self) -> Option<Moments> {
                match self { $( Self::$variant(a) => a.closed_moments(), )* }
            }
            pub fn closed_dual(&self, q1: f64, q2: f64, c12: f64) -> Option<DualKernel> {
                match self { $( Self::$variant(a) => a.closed_dual(q1, q2, c12), )* }
            }
            pub fn closed_scaled_moments(&self, q: f64) -> Option<ScaledMoments> {
                match self { $( Self::$variant(a) => a.closed_scaled_moments(q), )* }
            }
            pub fn is_normalized(&self) -> bool {
                match self { $( Self::$variant(a) => a.is_normalized(), )* }
            }
            pub fn cuda(&self) -> Option<Cuda> {
                match self { $( Self::$variant(a) => a.cuda(), )* }
            }
            pub fn activate_host<T: Real>(&self, gamma: f64, a: &mut [T], slope: &mut [T]) {
                match self { $( Self::$variant(f) => f.activate_host(gamma, a, slope), )* }
            }
        }
    };
}

impl ActivationKind {
    /// Every family, in registry order.
    pub fn all() -> Vec<Self> {
        ntk_names::all()
    }

    /// The config's name (the serde name: [`ntk_names`]).
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }

    pub fn parse(name: &str) -> Option<Self> {
        ntk_names::parse(name)
    }

    /// Every family's name, joined for a message: "relu, linear, ...".
    pub fn list() -> String {
        ntk_names::names::<Self>().join(", ")
    }

    /// `param` checked for this family: `None` is always fine (the default); a value needs a
    /// family with a parameter and a finite value in its range.
    pub fn check_param(self, param: Option<f64>) -> Result<(), ParamError> {
        let Some(value) = param else { return Ok(()) };
        let Some(p) = self.param() else {
            let takes: Vec<String> = Self::all()
                .into_iter()
                .filter_map(|k| {
                    k.param()
                        .map(|p| format!("{k} takes {} {}", p.meaning, p.symbol))
                })
                .collect();
            return Err(ParamError::None {
                kind: self,
                takes: takes.join(", "),
            });
        };
        let (lo, hi) = p.range;
        if !(value.is_finite() && (lo..=hi).contains(&value)) {
            return Err(ParamError::Range {
                kind: self,
                meaning: p.meaning,
                symbol: p.symbol,
                value,
                lo,
                hi,
            });
        }
        Ok(())
    }
}

impl fmt::Display for ActivationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Activation {
    /// A kind with its parameter, checked ([`ActivationKind::check_param`]).
    pub fn checked(kind: ActivationKind, param: Option<f64>) -> Result<Self, ParamError> {
        kind.check_param(param)?;
        Ok(Self::new(kind, param))
    }

    /// Reads the words [`Display`](fmt::Display) writes: a family's name (`relu`, its
    /// default parameter) or `name(symbol=value)` (`norm_relu(b=-0.2)`,
    /// `leaky_relu(alpha=0.1)`); the parameter's one-word meaning is read as its symbol
    /// (`norm_relu(kink=-0.2)`, as the config key `model.kink` and the flag `--kink` say it;
    /// twenty-fifth hostile round, N7); `None` for anything else or a parameter out of range.
    pub fn parse_words(words: &str) -> Option<Self> {
        Self::read_words(words).ok()
    }

    /// [`Self::parse_words`] with the reason it refuses: words that name no activation, or a
    /// family's parameter out of its range, the range named (round 91, N6: `leaky_relu(alpha=2)`
    /// was refused without `[-1, 1]`).
    pub fn read_words(words: &str) -> Result<Self, WordsError> {
        let words = words.trim();
        let Some((name, rest)) = words.split_once('(') else {
            return ActivationKind::parse(words)
                .map(|k| Self::new(k, None))
                .ok_or(WordsError::Unknown);
        };
        let kind = ActivationKind::parse(name.trim()).ok_or(WordsError::Unknown)?;
        let Some(p) = kind.param() else {
            // A family without a parameter: said so, with those that take one.
            return Err(kind
                .check_param(Some(0.0))
                .err()
                .map_or(WordsError::Unknown, WordsError::Param));
        };
        let (symbol, value) = rest
            .strip_suffix(')')
            .and_then(|r| r.split_once('='))
            .ok_or(WordsError::Unknown)?;
        let symbol = symbol.trim();
        if symbol != p.symbol && (symbol != p.meaning || p.meaning.contains(' ')) {
            return Err(WordsError::Symbol {
                kind,
                given: symbol.to_string(),
                expected: p.symbol,
            });
        }
        let text = value.trim();
        let value: f64 = text.parse().map_err(|_| WordsError::Unknown)?;
        // A nonzero number that f64 holds as 0 is not taken as 0 without a word
        // (ninety-fifth hostile round, N7: `leaky_relu(alpha=1e-400)` ran as ReLU).
        let mantissa = text.split(['e', 'E']).next().unwrap_or("");
        if value == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
            return Err(WordsError::Underflow {
                given: text.to_string(),
            });
        }
        Self::checked(kind, Some(value)).map_err(WordsError::Param)
    }

    /// The moments in closed form where one is known, else by quadrature.
    pub fn moments(&self) -> Moments {
        self.closed_moments()
            .unwrap_or_else(|| self.moments_by_quadrature())
    }

    /// The moments by quadrature alone (the independent check of [`Self::moments`]).
    pub fn moments_by_quadrature(&self) -> Moments {
        let kinks = self.kinks();
        Moments {
            mean: normal::expect(|z| self.eval(z), &kinks),
            second: normal::expect(|z| self.eval(z).powi(2), &kinks),
            z_s: normal::expect(|z| z * self.eval(z), &kinks),
        }
    }

    /// `c = 1 / E[s(Z)^2]`.
    pub fn c(&self) -> f64 {
        self.moments().c()
    }

    /// How figures draw it.
    pub fn look(&self) -> Look {
        self.kind().look()
    }

    /// The name a run's labels and tables give it: the family's name at its default
    /// parameter (`relu`, `norm_relu`, `leaky_relu`), with the parameter otherwise
    /// (`leaky_relu(alpha=0.3)`), so that two parameters of one family are never one label
    /// (twenty-eighth hostile round, N2) and every default's label is the family's.
    pub fn label(&self) -> String {
        if self.kind().param().map(|p| p.default) == self.param() {
            self.kind().name().to_string()
        } else {
            self.to_string()
        }
    }

    /// The parameter in words for a legend, `symbol = value` to 3 decimals (`b = -1.591`);
    /// `None` for a family without one.
    pub fn param_words(&self) -> Option<String> {
        let (p, v) = (self.kind().param()?, self.param()?);
        Some(format!("{} = {v:.3}", p.symbol))
    }

    /// `Var[c s(Z)^2]`, the per-unit variance of the squared-norm ratio
    /// `||alpha_l||^2 / ||alpha_{l-1}||^2` for unit-variance pre-activations: the relative
    /// fluctuation of a width-`m` layer's norm is `sqrt(this / m)`.
    pub fn norm_ratio_variance(&self) -> f64 {
        let c = self.c();
        normal::expect(|z| (c * self.eval(z).powi(2) - 1.0).powi(2), &self.kinks())
    }
}

impl fmt::Display for Activation {
    /// The family's name, with its parameter when it has one: `relu`, `norm_relu(b=-0.2)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind();
        match (kind.param(), self.param()) {
            (Some(p), Some(v)) => write!(f, "{kind}({}={v})", p.symbol),
            _ => f.write_str(kind.name()),
        }
    }
}

registry! {
    Relu => relu::Relu,
    /// The identity: the "linear network" of Liu & Hui Eq. (3).
    Linear => linear::Linear,
    /// Normalized ReLU with a kink at `b` (Agarwal, Awasthi, Kale).
    NormRelu => norm_relu::NormRelu,
    /// `x Phi(x)`, the exact (erf) GELU.
    Gelu => gelu::Gelu,
    Tanh => tanh::Tanh,
    /// `max(x, 0)^2`.
    ReluSquared => relu_squared::ReluSquared,
    Selu => selu::Selu,
    Erf => erf::Erf,
    LeakyRelu => leaky_relu::LeakyRelu,
    /// `x sigma(x)`, the logistic SiLU (swish).
    Silu => silu::Silu,
}

mod normalized;
pub use normalized::Normalized;

pub use norm_relu::NORM_RELU_DEFAULT_B;
pub use selu::{SELU_ALPHA, SELU_LAMBDA};

#[cfg(test)]
mod tests {
    use super::*;

    /// A label is the family's name at the default parameter and carries any other
    /// (twenty-eighth hostile round, N2: `leaky_relu(alpha=0.3)` was labelled `leaky_relu`);
    /// two parameters of one family never share a label.
    #[test]
    fn labels_name_a_parameter_other_than_the_default() {
        for kind in ActivationKind::all() {
            assert_eq!(Activation::new(kind, None).label(), kind.name());
            if let Some(p) = kind.param() {
                let [lo, hi] = [p.range.0, p.range.1].map(|v| Activation::new(kind, Some(v)));
                assert_ne!(lo.label(), hi.label(), "{kind}");
                assert!(lo.label().starts_with(&format!("{}(", kind.name())), "{lo}");
                assert_eq!(Activation::new(kind, Some(p.default)).label(), kind.name());
            }
        }
    }

    /// Every family's words read back to the same activation, at its default and at the ends
    /// of its parameter's range.
    #[test]
    fn words_round_trip() {
        for kind in ActivationKind::all() {
            let mut acts = vec![Activation::new(kind, None)];
            if let Some(p) = kind.param() {
                acts.extend([p.range.0, p.range.1].map(|v| Activation::new(kind, Some(v))));
            }
            for act in acts {
                let words = act.to_string();
                assert_eq!(Activation::parse_words(&words), Some(act), "{words}");
            }
        }
        assert_eq!(
            Activation::new(ActivationKind::LeakyRelu, Some(0.1)).to_string(),
            "leaky_relu(alpha=0.1)"
        );
        assert_eq!(
            Activation::parse_words("norm_relu(b=-0.2)"),
            Some(Activation::new(ActivationKind::NormRelu, Some(-0.2)))
        );
        // The parameter's one-word meaning too (round 25's N7).
        assert_eq!(
            Activation::parse_words("norm_relu(kink=-0.2)"),
            Activation::parse_words("norm_relu(b=-0.2)")
        );
        for bad in [
            "leaky_relu(negative slope=0.1)",
            "relu(b=1)",
            "leaky_relu(b=0.1)",
            "leaky_relu(alpha=2)",
            "leaky_relu(alpha=nan)",
            "leaky_relu(alpha=0.1",
            "swish",
        ] {
            assert_eq!(Activation::parse_words(bad), None, "{bad}");
        }
    }

    /// A parameter for a family without one names the families that take one; one out of
    /// range names the family, the parameter and the range.
    #[test]
    fn parameters_are_checked() {
        let e = ActivationKind::Relu.check_param(Some(0.1)).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("relu takes no parameter"), "{text}");
        assert!(text.contains("norm_relu takes kink b"), "{text}");
        assert!(
            text.contains("leaky_relu takes negative slope alpha"),
            "{text}"
        );
        let e = ActivationKind::LeakyRelu
            .check_param(Some(1.5))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "leaky_relu's negative slope alpha = 1.5 must be finite, in [-1, 1]"
        );
        assert!(ActivationKind::LeakyRelu.check_param(Some(-1.0)).is_ok());
        assert!(ActivationKind::Relu.check_param(None).is_ok());
        // Words say why they are refused (round 91, N6): the range, a family without a
        // parameter, a parameter under another symbol; anything else is no activation.
        let said = |w: &str| Activation::read_words(w).unwrap_err().to_string();
        assert_eq!(
            said("leaky_relu(alpha=2)"),
            "leaky_relu's negative slope alpha = 2.0 must be finite, in [-1, 1]"
        );
        assert!(said("relu(alpha=0.1)").starts_with("relu takes no parameter"));
        assert_eq!(
            said("leaky_relu(b=0.1)"),
            "leaky_relu's parameter is alpha, not b"
        );
        // A nonzero value that reads as 0 (ninety-fifth hostile round, N7); 0 written any
        // way, and a subnormal, are read.
        assert!(said("leaky_relu(alpha=1e-400)").starts_with("1e-400 is nonzero but reads as 0"));
        for zero in ["0", "0.0", "-0e5", "0e-400"] {
            let w = format!("leaky_relu(alpha={zero})");
            assert!(Activation::read_words(&w).is_ok(), "{w}");
        }
        assert!(Activation::read_words("leaky_relu(alpha=1e-310)").is_ok());
        for w in [
            "bogus",
            "leaky_relu(alpha=x)",
            "leaky_relu(alpha=0.1",
            "Relu",
        ] {
            assert_eq!(said(w), "not an activation", "{w}");
        }
        assert_eq!(
            Activation::read_words(" norm_relu(kink = -0.5) ").unwrap(),
            Activation::new(ActivationKind::NormRelu, Some(-0.5))
        );
    }

    /// Each family's parameter is `Some` exactly when the family declares one, and the
    /// closed-form moments of a parameterized family hold over its range (quadrature), up to
    /// `|param| = 2`: beyond, NormReLU's `lambda_b` grows like `e^{b^2/4}` and amplifies the
    /// quadrature's own error past 1e-12 (7.6e-10 in the second moment at `b = 4`).
    #[test]
    fn parameters_and_moments_over_the_range() {
        for kind in ActivationKind::all() {
            let Some(p) = kind.param() else {
                assert_eq!(Activation::new(kind, None).param(), None);
                continue;
            };
            assert_eq!(Activation::new(kind, None).param(), Some(p.default));
            let (lo, hi) = p.range;
            for v in [lo, lo / 4.0, 0.0, hi / 4.0, hi] {
                if v.abs() > 2.0 {
                    continue;
                }
                let act = Activation::new(kind, Some(v));
                let (Some(closed), quad) = (act.closed_moments(), act.moments_by_quadrature())
                else {
                    continue;
                };
                for (a, b) in [
                    (closed.mean, quad.mean),
                    (closed.second, quad.second),
                    (closed.z_s, quad.z_s),
                ] {
                    assert!((a - b).abs() < 1e-12, "{act}: {closed:?} against {quad:?}");
                }
            }
        }
    }
}
