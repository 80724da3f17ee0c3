//! Whether a kernel's diagonal `K(x, x)` underflows the precision it was formed in: an entry
//! between 0 and the smallest normal number has lost digits, and an exact 0 at a nonzero
//! input is an underflow wherever it can be told from the network's own 0 (a sample no unit
//! of a ReLU layer passes). The trainer's tracked NTK and its `[prediction]` kernels ask here,
//! and the probe's range check scales its layers as [`pow2_normalized`] does
//! (hundred-and-first hostile round, D3; hundred-and-second, D4: a subnormal kernel at
//! initialization gave kappa 13184.8 for 13166.6, an all-zero one "singular, rank 0").

use burn::module::Module;
use ntk_data::inputs::Inputs;
use ntk_model::Net;
use ntk_model::export::Named;
use ntk_numerics::backend::Precision;
use ntk_numerics::kernel::Kernel;

/// A diagonal entry that underflows: its sample (the input's row), its value, and why a 0
/// is an underflow (empty for a subnormal entry, which is one by itself).
#[derive(Clone, Debug, PartialEq)]
pub struct Underflow {
    pub sample: usize,
    pub value: f64,
    pub why: String,
}

/// Where a kernel came from, for telling its 0 from the network's own.
pub enum Formed<'a, E> {
    /// The infinite-width kernel (formed in f64): positive at every nonzero input, so a 0
    /// there is always an underflow.
    Theory,
    /// The network's own kernel, in `precision`; `again` forms the kernel of another
    /// network (this one with its layers scaled by powers of two, [`pow2_normalized`]) on
    /// some of the inputs, as this one's was formed.
    Empirical {
        net: &'a Net,
        precision: Precision,
        again: &'a dyn Fn(&Net, &Inputs) -> Result<Kernel, E>,
        /// The outputs the kernel is of: those it sums, or its one; a full kernel's rows
        /// are each one's ([`OutputMode::outputs`](ntk_numerics::kernel::OutputMode::outputs)).
        outputs: &'a [usize],
    },
}

/// The first sample of `inputs` whose diagonal entry of `k` (the kernel of the `inputs.n`
/// samples, `k.size / n` rows each: one per output for a full-output kernel) underflows, if
/// any.
///
/// A network's exact 0 is told from an underflow for an MLP without biases or normalization
/// ([`pow2_normalized`]: its layers scaled by powers of two, the first by the input's scale
/// too, keep a 0 of its own and undo an underflow). Any other network's 0 is left as the
/// measurement it is.
pub fn first_underflowing_sample<E>(
    inputs: &Inputs,
    k: &Kernel,
    formed: Formed<'_, E>,
) -> Result<Option<Underflow>, E> {
    let normal = match &formed {
        Formed::Theory
        | Formed::Empirical {
            precision: Precision::F64,
            ..
        } => f64::MIN_POSITIVE,
        Formed::Empirical { .. } => f64::from(f32::MIN_POSITIVE),
    };
    let per = (k.size / inputs.n.max(1)).max(1);
    let diagonal = |k: &Kernel, i: usize| k.data[i * k.size + i];
    if let Some(i) = (0..k.size).find(|&i| diagonal(k, i) > 0.0 && diagonal(k, i) < normal) {
        return Ok(Some(Underflow {
            sample: i / per,
            value: diagonal(k, i),
            why: String::new(),
        }));
    }
    let d = inputs.d;
    let nonzero = |sample: usize| {
        inputs.x[sample * d..(sample + 1) * d]
            .iter()
            .any(|v| *v != 0.0)
    };
    let zero_at = |sample: usize| (0..per).find(|&o| diagonal(k, sample * per + o) == 0.0);
    let zeros: Vec<usize> = (0..inputs.n)
        .filter(|&s| nonzero(s) && zero_at(s).is_some())
        .collect();
    let Some(&first) = zeros.first() else {
        return Ok(None);
    };
    let Formed::Empirical {
        net,
        again,
        outputs,
        ..
    } = formed
    else {
        return Ok(Some(Underflow {
            sample: first,
            value: 0.0,
            why: " (the infinite-width kernel is positive at every nonzero input, so the 0 is \
                  an underflow)"
                .to_string(),
        }));
    };
    if squares_its_scale(net) {
        let Some(proofs) = renormalized_proofs(net, inputs, &zeros) else {
            return Ok(None);
        };
        return Ok(zeros.iter().zip(proofs).find_map(|(&sample, proof)| {
            proof.why_underflow().map(|why| Underflow {
                sample,
                value: 0.0,
                why,
            })
        }));
    }
    // The network with its layers scaled by powers of two, the first by each input's own
    // ([`pow2_normalized`]): positive there where the 0 is an underflow, 0 where it is the
    // network's own. One network per power of two among the inputs, each on its inputs as one
    // batch (a network without normalization forms each `K(x, x)` from its input alone). One
    // power for the whole set left a row at 1e-60 among unit rows unproved, and the inputs
    // scaled instead proved nothing for tanh (hundred-and-third hostile round, D4; a tanh
    // network at 1e-200 was "singular, rank 0").
    let groups = pow2_groups(inputs, &zeros);
    // A network linear in its input's scale (no activation between input and output, or a
    // positively homogeneous one: ReLU, leaky ReLU, the identity) is proved on its inputs
    // scaled by the power of two instead: `K(c x, c x) = c^2 K(x, x)` exactly, and a linear
    // network's kernel formed through the inputs' Gram matrix (`ntk_kernel::host::linear`), or
    // a depth-0 network's `|x|^2`, underflows whatever its layers' scale (hundred-and-sixth
    // hostile round, D4: both were written "rank 0" at inputs of 1e-200).
    let by_inputs = linear_in_input_scale(net);
    let how = proof_scaling(by_inputs);
    let mut proved: Option<(usize, String)> = None;
    let d = inputs.d;
    for (e, samples) in &groups {
        let Some((scaled, some)) = scaled_for(net, by_inputs, *e, inputs, samples) else {
            return Ok(None);
        };
        let k_again = again(&scaled, &some)?;
        // The pass that proves a 0: of the proof network where it is the network up to
        // positive scales (linear in its input's scale), else of the network itself, as given
        // (a non-homogeneous proof network is another function: its units saturate or turn
        // linear where the network's do not, and cancel there; hundred-and-twentieth hostile
        // round, D2, hundred-and-twenty-first, D2).
        let params = host_params(if by_inputs { &scaled } else { net });
        for (r, &sample) in samples.iter().enumerate() {
            let Some(o) = zero_at(sample) else { continue };
            if proved.as_ref().is_some_and(|(s, _)| *s < sample) {
                continue;
            }
            let top = diagonal(&k_again, r * per + o);
            let row = &inputs.x[sample * d..(sample + 1) * d];
            let why = if top > 0.0 {
                format!(
                    " (the same network with {how}, which keeps a 0 of the network's own such \
                     as a dead ReLU layer, has K(x, x) = {top:.3e} here, so the 0 is an \
                     underflow, not a sample the network does not pass)"
                )
            } else if let Some(lost) = params.as_ref().and_then(|p| {
                // A full kernel's row is one output's; a summed or single one's, its outputs.
                let of = if per > 1 { &[o][..] } else { outputs };
                lost_in_proof(p, row, (*e, by_inputs), of)
            }) {
                format!(" ({})", proof_words(&lost, by_inputs.then_some(how)))
            } else {
                continue;
            };
            proved = Some((sample, why));
        }
    }
    Ok(proved.map(|(sample, why)| Underflow {
        sample,
        value: 0.0,
        why,
    }))
}

/// The inputs whose diagonal `K(x, x)` ([`crate::host::diagonal`]: one forward and backward,
/// no kernel, in `precision` as the structured route forms it; each of `outputs` alone when
/// `per_output`, else their sum) is below `precision`'s smallest normal number at some
/// output: the first with a subnormal entry alone, else every nonzero input with an entry of
/// exactly 0 that is an underflow by [`zeros_that_underflow`] (each where the network cannot
/// be scaled to tell), for the caller to check on its kernel. `None` where the structured
/// route does not apply. ntk-train's dry run and ntk-probe's range check ask here.
///
/// A row's smallest entry over the outputs counts: a full-output kernel whose sum is normal
/// may hold one output's subnormal entry (hundred-and-ninth hostile round, D1). Every zero is
/// proved, however many (D2 there: the first 256 alone left a live row's 0 after 256 dead
/// ones), by one more diagonal, not a kernel per row.
pub fn suspects(
    mlp: &ntk_model::Mlp,
    inputs: &Inputs,
    outputs: &[usize],
    per_output: bool,
    precision: Precision,
) -> Option<Vec<usize>> {
    if crate::structured::unsupported_reason(mlp).is_some() {
        return None;
    }
    let normal = smallest_normal(precision);
    let diagonal = entries(mlp, inputs, outputs, per_output, precision);
    if let Some(i) = diagonal
        .iter()
        .position(|row| row.iter().any(|v| *v > 0.0 && *v < normal))
    {
        return Some(vec![i]);
    }
    let d = inputs.d;
    let zeros: Vec<usize> = (0..inputs.n)
        .filter(|&i| {
            diagonal[i].contains(&0.0) && inputs.x[i * d..(i + 1) * d].iter().any(|v| *v != 0.0)
        })
        .collect();
    let net = Net::Mlp(mlp.clone());
    Some(
        zeros_that_underflow(&net, inputs, &zeros, (outputs, per_output), &diagonal)
            .unwrap_or(zeros),
    )
}

/// `precision`'s smallest normal number, widened to f64.
fn smallest_normal(precision: Precision) -> f64 {
    match precision {
        Precision::F32 => f64::from(f32::MIN_POSITIVE),
        Precision::F64 => f64::MIN_POSITIVE,
    }
}

/// Each input's diagonal entries in `precision` ([`crate::host::diagonal::diagonals`], formed
/// in the precision as the structured route forms them).
fn entries(
    mlp: &ntk_model::Mlp,
    inputs: &Inputs,
    outputs: &[usize],
    per_output: bool,
    precision: Precision,
) -> Vec<Vec<f64>> {
    use crate::host::diagonal::{Formed, diagonals};
    let x = (inputs.x.as_slice(), inputs.n);
    match precision {
        Precision::F32 => diagonals::<f32>(mlp, x, outputs, per_output, Formed::InPrecision),
        Precision::F64 => diagonals::<f64>(mlp, x, outputs, per_output, Formed::InPrecision),
    }
}

/// Of the `rows` of `inputs` whose diagonal entry is 0 at some output (`diagonal`: every
/// input's entries, as [`suspects`] read them), those where the 0 is an underflow: where the
/// same network in f64 with its layers scaled by powers of two ([`pow2_normalized`], one
/// network per power of two among the rows' largest entries; a network linear in its input's
/// scale on its inputs scaled instead, [`linear_in_input_scale`]), which keeps a 0 of the
/// network's own, has a positive entry at that output. The proof [`first_underflowing_sample`]
/// makes with a kernel, made with the diagonal; for ReLU^2, whose scale squares at every
/// layer, the network renormalized at each input ([`renormalized_proofs`]). `None` where the
/// network cannot be scaled to tell (biases, normalization: see [`pow2_normalized`]).
fn zeros_that_underflow(
    net: &Net,
    inputs: &Inputs,
    rows: &[usize],
    (outputs, per_output): (&[usize], bool),
    diagonal: &[Vec<f64>],
) -> Option<Vec<usize>> {
    // On the host in f64, whatever the run's device and precision: the first layer's weights
    // scaled by an input's scale (2^664 at 1e-200) pass f32's range.
    let host = net.clone().to_device(&burn::tensor::Device::flex());
    let net = &crate::compute::with_precision(&host, Precision::F64);
    if squares_its_scale(net) {
        let proofs = renormalized_proofs(net, inputs, rows)?;
        return Some(
            rows.iter()
                .zip(proofs)
                .filter(|(_, proof)| *proof != Proof::Dead)
                .map(|(&r, _)| r)
                .collect(),
        );
    }
    let by_inputs = linear_in_input_scale(net);
    let groups = pow2_groups(inputs, rows);
    let mut live = Vec::new();
    for (e, group) in &groups {
        let Some((Net::Mlp(scaled), some)) = scaled_for(net, by_inputs, *e, inputs, group) else {
            return None;
        };
        let proof = entries(&scaled, &some, outputs, per_output, Precision::F64);
        // As in `first_underflowing_sample`: the network itself where it is not linear in its
        // input's scale.
        let params = match by_inputs {
            true => host_params(&Net::Mlp(scaled.clone())),
            false => host_params(net),
        };
        let d = inputs.d;
        for (i, &r) in group.iter().enumerate() {
            let zero = diagonal[r]
                .iter()
                .zip(&proof[i])
                .filter(|(v, _)| **v == 0.0);
            let lost = || {
                // Each output apart: only those whose entry is 0 (hundred-and-twentieth
                // hostile round, D1); summed: all of them.
                let zero: Vec<usize> = match per_output {
                    true => (outputs.iter().zip(&diagonal[r]))
                        .filter(|(_, v)| **v == 0.0)
                        .map(|(o, _)| *o)
                        .collect(),
                    false => outputs.to_vec(),
                };
                params
                    .as_ref()
                    .and_then(|p| {
                        let x = &inputs.x[r * d..(r + 1) * d];
                        lost_in_proof(p, x, (*e, by_inputs), &zero)
                    })
                    .is_some()
            };
            let mut zero = zero.peekable();
            if zero.peek().is_some() && (zero.any(|(_, p)| *p > 0.0) || lost()) {
                live.push(r);
            }
        }
    }
    live.sort_unstable();
    Some(live)
}

/// The `rows` of `inputs` grouped by the binary exponent of their largest magnitude, for one
/// scaled network per group ([`scaled_for`]); a row holding a value that is not finite is
/// left out (its kernel is no underflow).
fn pow2_groups(inputs: &Inputs, rows: &[usize]) -> Vec<(i32, Vec<usize>)> {
    let d = inputs.d;
    let mut groups: Vec<(i32, Vec<usize>)> = Vec::new();
    for &r in rows {
        let largest = inputs.x[r * d..(r + 1) * d]
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        if !largest.is_finite() {
            continue;
        }
        let e = libm::ilogb(largest);
        match groups.iter_mut().find(|g| g.0 == e) {
            Some(g) => g.1.push(r),
            None => groups.push((e, vec![r])),
        }
    }
    groups
}

/// How the network that proves a 0 was scaled ([`pow2_normalized`]; `by_inputs`: the inputs
/// scaled instead of the first layer, [`linear_in_input_scale`]), for the messages that name
/// the proof.
pub fn proof_scaling(by_inputs: bool) -> &'static str {
    if by_inputs {
        "each layer's weights scaled by a power of two (their largest entry into [1, 2)) and \
         the input by its own (the network is linear in its input's scale)"
    } else {
        "each layer's weights scaled by a power of two (their largest entry into [1, 2), the \
         first layer's by the input's scale too)"
    }
}

/// Whether `net` is an MLP whose activation is positively homogeneous of a degree above 1
/// (ReLU^2: `s(a z) = a^2 s(z)`), whose activations' scale squares at every layer: its zeros
/// are proved on the network renormalized at each input ([`renormalized_proofs`]).
pub fn squares_its_scale(net: &Net) -> bool {
    matches!(net, Net::Mlp(m) if matches!(m.activation(), ntk_model::activation::Activation::ReluSquared(_)))
}

/// What the network renormalized at one input ([`renormalized_proofs`]) says of its 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Proof {
    /// A unit of its last hidden layer is live beyond what the pass lost, and the layer's
    /// `|a_L|^2` there is this positive value, so `K(x, x) > 0` and the 0 is an underflow.
    Live(f64),
    /// Its last hidden layer is 0 with nothing lost on the way: the 0 is the network's own.
    Dead,
    /// Its last hidden layer is live at no unit beyond what the pass lost, but not 0 to
    /// within it either: the 0 cannot be told from an underflow. The first value the pass
    /// lost ([`Lost`]).
    Unresolved(Lost),
}

/// The first value the renormalized pass ([`renormalized_proofs`]) could not hold: one
/// below f64's smallest normal number, whose loss bounds what each unit may be off by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lost {
    /// The input's entry `entry` (`value`), scaled with the input by `2^-shift` to keep its
    /// largest entry `largest` in range (an input past `2^960`).
    InputEntry {
        entry: usize,
        value: f64,
        largest: f64,
        shift: i32,
    },
    /// At layer `layer` (0: the first hidden layer's pre-activations), a weight `weight` (its
    /// layer's largest scaled into `[1, 2)`) times a value `value` (an input entry at layer
    /// 0, else an activation of the renormalized layer before).
    Product {
        layer: usize,
        weight: f64,
        value: f64,
    },
    /// At layer `layer`, a live unit's pre-activation `value` (the layer's largest in
    /// `[1, 2)`), whose square is below f64's smallest normal number.
    Square { layer: usize, value: f64 },
    /// At layer `layer`, a pre-activation `value` beside the layer's largest live one
    /// `largest` that falls below f64's smallest normal number, formed or scaled.
    PreActivation {
        layer: usize,
        value: f64,
        largest: f64,
    },
    /// At hidden layer `layer`, the activation's value (`slope`: its derivative) at the
    /// pre-activation `at`, nonzero there, below f64's smallest normal number.
    Activation { layer: usize, at: f64, slope: bool },
    /// At layer `layer`, a product of a nonzero weight or slope `factor` and a nonzero
    /// backward signal `signal` below f64's smallest normal number.
    Backward {
        layer: usize,
        factor: f64,
        signal: f64,
    },
    /// Layer `layer`'s term of `K(x, x)` (its input's `|a|^2` times its backward signal's
    /// `|delta|^2`; `layer` = the depth: the output layer's `|a_L|^2`) is positive: the
    /// largest magnitudes of its two nonzero factors. Not a loss: a proof that the 0 is an
    /// underflow.
    Term {
        layer: usize,
        input: f64,
        /// `None` for the readout, whose term is `|a_L|^2` alone.
        signal: Option<f64>,
    },
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Self::InputEntry {
                entry,
                value,
                largest,
                shift,
            } => write!(
                f,
                "the input's entry {entry} ({value:.3e}) falls below f64's smallest normal \
                 number once the input is scaled by 2^-{shift} to keep its largest entry \
                 ({largest:.3e}) in range"
            ),
            Self::Product {
                layer,
                weight,
                value,
            } => write!(
                f,
                "at layer {layer}, the product of a weight {weight:.3e} (its layer's largest \
                 weight scaled into [1, 2)) and {} {value:.3e} falls below f64's smallest \
                 normal number",
                if layer == 0 {
                    "an input entry"
                } else {
                    "an activation (its layer renormalized)"
                }
            ),
            Self::Square { layer, value } => write!(
                f,
                "at layer {layer}, a live pre-activation {value:.3e} times the layer's largest \
                 squares to below f64's smallest normal number"
            ),
            Self::PreActivation {
                layer,
                value,
                largest,
            } => write!(
                f,
                "at layer {layer}, a pre-activation {value:.3e} beside the layer's largest \
                 {largest:.3e} falls below f64's smallest normal number"
            ),
            Self::Activation { layer, at, slope } => write!(
                f,
                "at layer {layer}, the activation's {} at the pre-activation {at:.3e}, nonzero \
                 there, falls below f64's smallest normal number",
                if slope { "slope" } else { "value" }
            ),
            Self::Backward {
                layer,
                factor,
                signal,
            } => write!(
                f,
                "at layer {layer}, the backward signal's product of {factor:.3e} and \
                 {signal:.3e} falls below f64's smallest normal number"
            ),
            Self::Term {
                layer,
                input,
                signal: Some(signal),
            } => write!(
                f,
                "layer {layer}'s term of K(x, x), its input's |a|^2 times its backward signal's \
                 |delta|^2, has both factors nonzero (largest magnitudes {input:.3e} and \
                 {signal:.3e}), so K(x, x) > 0 there and its 0 is an underflow"
            ),
            Self::Term {
                input,
                signal: None,
                ..
            } => write!(
                f,
                "the readout layer's term of K(x, x), its input's |a_L|^2, is positive (its \
                 largest magnitude {input:.3e}), so K(x, x) > 0 there and its 0 is an underflow"
            ),
        }
    }
}

impl Proof {
    /// Why the 0 counts as an underflow (`None`: it is the network's own), for a refusal.
    pub fn reason(self) -> Option<String> {
        match self {
            Self::Dead => None,
            Self::Live(top) => Some(format!(
                "the same network renormalized at this input, each layer's live \
                 pre-activations scaled by a power of two, the largest into [1, 2), as the \
                 activation squares its scale at every layer, which keeps a 0 of the network's \
                 own such as a dead layer, reaches its last hidden layer with |a_L|^2 = \
                 {top:.3e}, not 0: K(x, x) > 0 there, so the 0 is an underflow"
            )),
            Self::Unresolved(lost) => Some(format!(
                "the 0 cannot be proved the network's own: in the same network renormalized at \
                 this input, each layer's live pre-activations scaled by a power of two, \
                 {lost}, and its last hidden layer is 0 only to within what was lost there, \
                 so whether a unit is live cannot be told and the 0 counts as an underflow"
            )),
        }
    }

    /// What may let the 0 be told, for a refusal that gives one (`None`: a live value, whose
    /// remedy is the caller's). Only an input past `2^960` is scaled in the pass; a product
    /// or a square is lost whatever the inputs' or the weights' overall scale.
    pub fn remedy(self) -> Option<&'static str> {
        match self {
            Self::Unresolved(Lost::InputEntry { .. }) => {
                Some("rescale the inputs (toward unit norm)")
            }
            Self::Unresolved(_) => Some(SPAN_REMEDY),
            _ => None,
        }
    }

    /// [`Self::reason`] in parentheses, as [`Underflow::why`] holds it.
    fn why_underflow(self) -> Option<String> {
        self.reason().map(|r| format!(" ({r})"))
    }
}

/// What may let a 0 be told where a value within the input or the weights was lost: their
/// span, not their overall scale (the proofs scale by powers of two).
pub const SPAN_REMEDY: &str = "no overall rescaling of the weights or the inputs changes this \
     (the proof scales by powers of two); weights or input entries that span less than f64 \
     holds can be told";

/// The binary exponent past which an input's largest entry is scaled down before the first
/// layer (its products with weights up to 2 summed over any fan-in stay finite) or below
/// which it is scaled up.
const INPUT_RANGE: i32 = 960;

/// For each of the `rows` of `inputs`, what `net` (an MLP without biases or normalization
/// whose activation squares its scale, [`squares_its_scale`]) renormalized at that input says
/// of its 0 ([`Proof`]): its weights scaled as [`pow2_normalized`] scales them (each layer's
/// largest into `[1, 2)`), the input's row as given (scaled by a power of two only past
/// `2^±960`), and at every layer the row's pre-activations by the power of two that brings
/// the largest positive one into `[1, 2)` (a negative one is dead whatever its size: ReLU^2
/// is 0 there), on the host in f64. Positive factors keep every pre-activation's sign, so a
/// dead unit stays dead, and ReLU^2's `K_o(x, x)` is positive at every output exactly where
/// `a_L` is not 0 (its output layer's term is `|a_L|^2`, and where `a_L` is 0 every slope
/// `2 z` of the last layer is too, so no signal passes back).
///
/// Values the pass cannot hold are bounded, not guessed: each unit carries a bound `E` on
/// what it may be off by from values that fell below f64's smallest normal number (an input
/// entry scaled out of range, a product `w a`, a square `z^2`: each within `2^-1074`),
/// carried through the layers (`E' = beta sum_j |w_j| E_j`, a square's `(|z| + E)^2 - z^2`).
/// A unit with `z > E` is live for certain, one with `z < -E` dead; the 0 is the network's
/// own where the last hidden layer is 0 with `E = 0` everywhere ([`Proof::Dead`]), an
/// underflow where a unit there is live for certain ([`Proof::Live`]), and
/// [`Proof::Unresolved`] otherwise. Rounding within f64's range (`1 + 2^-60 - 1 = 0` at a
/// kink) is the network's own arithmetic, as every f64 evaluation of it, and not counted.
/// Hundred-and-fourteenth hostile round, D4: the weights scaled once for all rows left unit
/// inputs' activations at `2^(-2^L)`; hundred-and-sixteenth, D3: each layer scaled by its
/// largest magnitude, a dead unit's 1e150, took the live units' 1e-160 to 0 with it;
/// hundred-and-seventeenth, D5: any weight below 2^-400 or input entry below 2^-300 of its
/// largest made a dead network's own 0 "unresolved", where no product was lost. `None` where
/// [`pow2_normalized`] is.
pub fn renormalized_proofs(net: &Net, inputs: &Inputs, rows: &[usize]) -> Option<Vec<Proof>> {
    use ntk_engine::host::mlp::Params;
    let host = net.clone().to_device(&burn::tensor::Device::flex());
    let host = crate::compute::with_precision(&host, Precision::F64);
    let Ok(Some(Net::Mlp(mlp))) = pow2_normalized(&host, 1.0) else {
        return None;
    };
    let params = Params::<f64>::read(&mlp);
    let d = inputs.d;
    Some(
        rows.iter()
            .map(|&r| proof_at(&params, &inputs.x[r * d..(r + 1) * d]))
            .collect(),
    )
}

/// The most a value below f64's smallest normal number is off by: an operation's result in
/// the subnormal range (or flushed to 0) is within half its unit, `2^-1075`, of the exact.
const SUBNORMAL_ERROR: f64 = f64::from_bits(1); // 2^-1074

/// A bound `b` on what a value may be off by, rounded up to [`SUBNORMAL_ERROR`] where it is
/// positive in exact arithmetic (`positive`) but fell below it.
fn at_least_subnormal(b: f64, positive: bool) -> f64 {
    if positive && b < SUBNORMAL_ERROR {
        SUBNORMAL_ERROR
    } else {
        b
    }
}

/// A unit's pre-activation sum `sum_j w_j a_j` (its weights' column `w`, the layer's input
/// `a`) as both proofs form it, with the products of a nonzero weight and a nonzero value
/// that f64 loses below its smallest normal number: how many, and the first.
struct Dot {
    sum: f64,
    lost: usize,
    first_lost: Option<(f64, f64)>,
}

impl Dot {
    fn of(w: &[f64], a: &[f64]) -> Self {
        let mut dot = Self {
            sum: 0.0,
            lost: 0,
            first_lost: None,
        };
        for (&wj, &aj) in w.iter().zip(a) {
            let p = wj * aj;
            dot.sum += p;
            if wj != 0.0 && aj != 0.0 && p.abs() < f64::MIN_POSITIVE {
                dot.lost += 1;
                dot.first_lost.get_or_insert((wj, aj));
            }
        }
        dot
    }
}

/// [`renormalized_proofs`] at one input `x`.
fn proof_at(params: &ntk_engine::host::mlp::Params<f64>, x: &[f64]) -> Proof {
    let tiny = f64::MIN_POSITIVE;
    let mut first: Option<Lost> = None;
    // The input, scaled only where its products could leave f64's range.
    let largest = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let e = if largest > 0.0 && largest.is_finite() {
        let e = libm::ilogb(largest);
        if e > INPUT_RANGE {
            e - INPUT_RANGE
        } else if e < -INPUT_RANGE {
            e + INPUT_RANGE
        } else {
            0
        }
    } else {
        0
    };
    let mut a: Vec<f64> = x.iter().map(|v| libm::scalbn(*v, -e)).collect();
    let mut err: Vec<f64> = x
        .iter()
        .zip(&a)
        .enumerate()
        .map(|(entry, (&v, &s))| {
            if v != 0.0 && s.abs() < tiny && e != 0 {
                first.get_or_insert(Lost::InputEntry {
                    entry,
                    value: v,
                    largest,
                    shift: e,
                });
                SUBNORMAL_ERROR
            } else {
                0.0
            }
        })
        .collect();
    for l in 0..params.depth() {
        let layer = params.layer(l);
        let (w, beta) = (layer.w(), layer.beta());
        let fan_out = layer.fan_out();
        let mut z = vec![0.0f64; fan_out];
        let mut ez = vec![0.0f64; fan_out];
        for u in 0..fan_out {
            let col = w.col_as_slice(u);
            let dot = Dot::of(col, &a);
            let mut bound: f64 = col
                .iter()
                .zip(&err)
                .map(|(&wj, &ej)| at_least_subnormal(wj.abs() * ej, wj != 0.0 && ej > 0.0))
                .sum();
            if let Some((weight, value)) = dot.first_lost {
                first.get_or_insert(Lost::Product {
                    layer: l,
                    weight,
                    value,
                });
                bound += dot.lost as f64 * SUBNORMAL_ERROR;
            }
            z[u] = beta * dot.sum;
            ez[u] = at_least_subnormal(beta * bound, bound > 0.0);
            if z[u] != 0.0 && z[u].abs() < tiny {
                first.get_or_insert(Lost::PreActivation {
                    layer: l,
                    value: z[u],
                    largest: z.iter().fold(0.0f64, |m, v| m.max(*v)),
                });
                ez[u] += SUBNORMAL_ERROR;
            }
        }
        // The layer's scale: its largest positive pre-activation into [1, 2).
        let top = z
            .iter()
            .filter(|v| **v > 0.0)
            .fold(0.0f64, |m, v| m.max(*v));
        let s = if top > 0.0 && top.is_finite() {
            libm::ilogb(top)
        } else {
            0
        };
        let gamma = params.gamma()[l];
        for u in 0..fan_out {
            let v = libm::scalbn(z[u], -s);
            let mut b = at_least_subnormal(libm::scalbn(ez[u], -s), ez[u] > 0.0);
            // A live value the layer's scale takes below the normal range (hundred-and-
            // eighteenth hostile round, D1: 2^-1080 beside 2^500 became 0, "dead" for certain).
            if z[u] > 0.0 && v < tiny {
                first.get_or_insert(Lost::PreActivation {
                    layer: l,
                    value: z[u],
                    largest: top,
                });
                b += SUBNORMAL_ERROR;
            }
            let (value, bound) = if v > b {
                let sq = gamma * v * v;
                let mut bound = at_least_subnormal(gamma * b * (2.0 * v + b), b > 0.0);
                if sq < tiny {
                    first.get_or_insert(Lost::Square { layer: l, value: v });
                    bound += (gamma + 1.0) * SUBNORMAL_ERROR;
                }
                (sq, bound)
            } else if v < -b {
                (0.0, 0.0)
            } else {
                // Live or dead by less than what was lost: the value may be anything up to
                // the bound's square.
                let at_most = gamma * (v.abs() + b) * (v.abs() + b);
                (
                    if v > 0.0 { gamma * v * v } else { 0.0 },
                    at_least_subnormal(at_most, b > 0.0),
                )
            };
            z[u] = value;
            ez[u] = bound;
        }
        a = z;
        err = ez;
    }
    // Units live for certain: above their bound.
    let top: f64 = a
        .iter()
        .zip(&err)
        .filter(|(v, b)| **v > **b)
        .map(|(v, _)| v * v)
        .sum();
    // Every bound comes with its first loss recorded; a bound without one (none known) is
    // unresolved all the same.
    let unknown = Lost::PreActivation {
        layer: params.depth(),
        value: 0.0,
        largest: 0.0,
    };
    match (top > 0.0, err.iter().any(|b| *b > 0.0)) {
        (true, _) => Proof::Live(top),
        (false, true) => Proof::Unresolved(first.unwrap_or(unknown)),
        (false, false) => Proof::Dead,
    }
}

/// Why the proof network `params` (an MLP's layers scaled by powers of two,
/// [`pow2_normalized`], for a network linear in its input's scale; else the network itself,
/// as given) cannot show its 0 at the input `row` (scaled by `2^-e` where
/// `by_inputs`, [`scaled_for`]) to be the network's own, for the kernel of `outputs`: the
/// first value its forward or backward pass loses below f64's smallest normal number (a
/// nonzero input entry the scale takes there, a product of a nonzero weight and a nonzero
/// value, a pre-activation, an activation's value or slope where the activation is not 0 by
/// itself, a backward product), or a layer whose term of `K(x, x)` (its input's `|a|^2`
/// times its backward signal's `|delta|^2`, the output layer's `|a_L|^2`) has both factors
/// nonzero, so that `K(x, x) > 0` though f64 forms it as 0. `None`: the 0 is the network's
/// own. Hundred-and-eighteenth hostile round, D2 (ReLU's proof scaled (2^500, 2^-580, 0) to
/// (1, 0, 0) and wrote all zeros for a kernel of 1.674e299); hundred-and-nineteenth, D1 (a
/// GELU unit's value 1e-200 squared to 0) and D2 (a live ReLU unit of 1e-170 read by an
/// output weight of 1e-170). Rounding within the range is not counted.
fn lost_in_proof(
    params: &ntk_engine::host::mlp::Params<f64>,
    row: &[f64],
    (e, by_inputs): (i32, bool),
    outputs: &[usize],
) -> Option<Lost> {
    let tiny = f64::MIN_POSITIVE;
    let largest = row.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let top = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let nonzero = |v: &[f64]| v.iter().any(|x| *x != 0.0);
    let act = params.activation();
    // An activation that is 0 with a slope of 0 below 0 by itself (ReLU): a 0 there is its own.
    let dead_below = {
        let (mut a, mut s) = ([-1.0f64], [0.0f64]);
        act.activate_host(1.0, &mut a, &mut s);
        a[0] == 0.0 && s[0] == 0.0
    };

    // The forward pass: each layer's input (the row first) and slopes.
    let mut inputs: Vec<Vec<f64>> = Vec::with_capacity(params.depth() + 1);
    let mut slopes: Vec<Vec<f64>> = Vec::with_capacity(params.depth());
    let mut a: Vec<f64> = Vec::with_capacity(row.len());
    for (entry, &v) in row.iter().enumerate() {
        let scaled = if by_inputs { libm::scalbn(v, -e) } else { v };
        // A subnormal entry as given is exact: only what the scale loses counts (hundred-and-
        // nineteenth hostile round, N1: "scaled by 2^-0").
        if by_inputs && e != 0 && v != 0.0 && scaled.abs() < tiny {
            return Some(Lost::InputEntry {
                entry,
                value: v,
                largest,
                shift: e,
            });
        }
        a.push(scaled);
    }
    for l in 0..params.depth() {
        let layer = params.layer(l);
        let (w, beta) = (layer.w(), layer.beta());
        let mut z = vec![0.0f64; layer.fan_out()];
        for (u, zu) in z.iter_mut().enumerate() {
            let dot = Dot::of(w.col_as_slice(u), &a);
            if let Some((weight, value)) = dot.first_lost {
                return Some(Lost::Product {
                    layer: l,
                    weight,
                    value,
                });
            }
            *zu = beta * dot.sum;
        }
        if let Some(&v) = z.iter().find(|v| **v != 0.0 && v.abs() < tiny) {
            return Some(Lost::PreActivation {
                layer: l,
                value: v,
                largest: top(&z),
            });
        }
        let (mut value, mut slope) = (z.clone(), vec![0.0f64; z.len()]);
        act.activate_host(params.gamma()[l], &mut value, &mut slope);
        for ((&at, &v), &s) in z.iter().zip(&value).zip(&slope) {
            let own_zero = at == 0.0 || (dead_below && at < 0.0);
            if !own_zero && (v.abs() < tiny || s.abs() < tiny) {
                return Some(Lost::Activation {
                    layer: l,
                    at,
                    slope: v.abs() >= tiny,
                });
            }
        }
        inputs.push(std::mem::replace(&mut a, value));
        slopes.push(slope);
    }
    inputs.push(a);
    // The output layer's term, |a_L|^2, whatever the output.
    let depth = params.depth();
    if nonzero(&inputs[depth]) {
        return Some(Lost::Term {
            layer: depth,
            input: top(&inputs[depth]),
            signal: None,
        });
    }
    // The backward pass of each output: delta_l = slope_l (beta_{l+1} W_{l+1} delta_{l+1}).
    for &o in outputs {
        let mut delta: Vec<f64> = (0..params.output().fan_out())
            .map(|u| f64::from(u8::from(u == o)))
            .collect();
        for l in (0..depth).rev() {
            let above = params.layer(l + 1);
            let (w, beta) = (above.w(), above.beta());
            let mut next = vec![0.0f64; w.nrows()];
            for (j, nj) in next.iter_mut().enumerate() {
                let mut g = 0.0f64;
                for (u, &du) in delta.iter().enumerate() {
                    let wj = w[(j, u)];
                    let p = wj * du;
                    if wj != 0.0 && du != 0.0 && p.abs() < tiny {
                        return Some(Lost::Backward {
                            layer: l + 1,
                            factor: wj,
                            signal: du,
                        });
                    }
                    g += p;
                }
                let g = beta * g;
                let s = slopes[l][j];
                let p = g * s;
                if g != 0.0 && s != 0.0 && p.abs() < tiny {
                    return Some(Lost::Backward {
                        layer: l,
                        factor: s,
                        signal: g,
                    });
                }
                *nj = p;
            }
            delta = next;
            if nonzero(&inputs[l]) && nonzero(&delta) {
                return Some(Lost::Term {
                    layer: l,
                    input: top(&inputs[l]),
                    signal: Some(top(&delta)),
                });
            }
        }
    }
    None
}

/// What the pow2 proof says of a 0 where [`lost_in_proof`] found `lost` (its pass on the
/// network scaled as `how` says, or on the network itself, as given, where `how` is `None`:
/// an activation not linear in its input's scale; hundred-and-twenty-second hostile round,
/// N1): an underflow proved by a positive term, or a 0 that cannot be proved the network's
/// own (hundred-and-twentieth hostile round, N2: the two were said at once).
pub fn proof_words(lost: &Lost, how: Option<&str>) -> String {
    let pass = match how {
        Some(how) => format!("in the same network in f64 with {how}"),
        None => "in the network's own pass in f64, its weights as given".to_string(),
    };
    match lost {
        Lost::Term { .. } => format!("{pass}, {lost}"),
        _ => format!(
            "the 0 cannot be proved the network's own: {pass}, {lost}, so the 0 may be that \
             loss and counts as an underflow"
        ),
    }
}

/// What may let the 0 that [`lost_in_proof`] refused as `lost` be told: a positive term
/// below the range is brought into it by rescaling the inputs or the weights (`fix`, the
/// caller's words for that); a value lost within the network only by a smaller span
/// ([`SPAN_REMEDY`]; hundred-and-twentieth hostile round, D3).
pub fn proof_remedy<'a>(lost: &Lost, fix: &'a str) -> &'a str {
    match lost {
        Lost::Term { .. } => fix,
        _ => SPAN_REMEDY,
    }
}

/// [`lost_in_proof`] of the proof network `scaled` at the input `row` (scaled by its own
/// power of two where `by_inputs`) for the kernel of `outputs`, for ntk-probe's check of one
/// row.
pub fn proof_loses(scaled: &Net, row: &[f64], by_inputs: bool, outputs: &[usize]) -> Option<Lost> {
    let largest = row.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let e = if largest > 0.0 && largest.is_finite() {
        libm::ilogb(largest)
    } else {
        0
    };
    lost_in_proof(&host_params(scaled)?, row, (e, by_inputs), outputs)
}

/// `net`'s parameters on the host in f64, for [`lost_in_proof`]; `None` for a network that is
/// not an MLP.
fn host_params(net: &Net) -> Option<ntk_engine::host::mlp::Params<f64>> {
    let host = net.clone().to_device(&burn::tensor::Device::flex());
    match crate::compute::with_precision(&host, Precision::F64) {
        Net::Mlp(mlp) => Some(ntk_engine::host::mlp::Params::<f64>::read(&mlp)),
        _ => None,
    }
}

/// The network and inputs that prove the underflows of one group of `inputs` (`rows`, their
/// largest magnitudes of binary exponent `e`): `net`'s layers scaled by powers of two
/// ([`pow2_normalized`]), the first by `2^e` too, on the rows as given; or, for a network
/// linear in its input's scale (`by_inputs`, [`linear_in_input_scale`]), its layers so scaled
/// on the rows scaled by `2^-e`. `None` where the network cannot be scaled to tell.
fn scaled_for(
    net: &Net,
    by_inputs: bool,
    e: i32,
    inputs: &Inputs,
    rows: &[usize],
) -> Option<(Net, Inputs)> {
    let input_scale = if by_inputs { 1.0 } else { libm::scalbn(1.0, e) };
    let Ok(Some(scaled)) = pow2_normalized(net, input_scale) else {
        return None;
    };
    let mut some = inputs.select(rows);
    if by_inputs {
        some.x.iter_mut().for_each(|v| *v = libm::scalbn(*v, -e));
    }
    Some((scaled, some))
}

/// Whether `net` is an MLP linear in its input's scale (depth 0, or a positively homogeneous
/// activation: ReLU, leaky ReLU, the identity), whose underflow is proved on the input
/// scaled by a power of two rather than by its first layer's weights
/// ([`first_underflowing_sample`]): a linear network's kernel is formed through the inputs'
/// Gram matrix, a depth-0 network's is `|x|^2` times its weights.
pub fn linear_in_input_scale(net: &Net) -> bool {
    matches!(net, Net::Mlp(m) if m.depth() == 0 || m.activation().is_homogeneous())
}

/// `net` with each layer's weights scaled by the power of two that brings their largest
/// magnitude into `[1, 2)` (a layer of zeros as it is), for an MLP without biases or
/// normalization, where that keeps a 0 diagonal of the network's own and undoes an
/// underflow: with a positively homogeneous activation (ReLU, leaky ReLU, the identity,
/// ReLU^2: `s(a z) = a^p s(z)`, `a > 0`) each layer's output scales by one positive factor
/// and every pre-activation keeps its sign, so a dead unit stays dead, exactly; with the other
/// activations (tanh, erf, GELU, SiLU, SELU, NormReLU), which vanish at isolated points only,
/// a 0 diagonal (every unit of the last hidden layer at 0) at a nonzero input needs a layer of
/// zero weights or an exact cancellation, and the scaling keeps a layer of zeros.
///
/// `None` for other networks: an MLP with biases (its output bias's own gradient makes every
/// diagonal positive), a normalized one (whose 0 no scaling proves its own: thirty-seventh
/// hostile round, D1), a ResNet, an ONNX graph. The scaled weights are normal numbers whatever
/// the file's scale, so the kernel they give underflows only where a unit-scale network's
/// would. The first layer's weights are scaled by the power of two of the input's
/// `largest_entry` as well (the same as scaling the input, without biases), so that an input
/// far from unit scale does not underflow the layers either (hundredth hostile round, D3:
/// ReLU^2 at an input norm of 1e-60, a kernel of about 1e-480, exactly 0 in f64, was taken
/// for the network's own 0 and reported "singular: rank 0").
pub fn pow2_normalized(
    net: &Net,
    largest_entry: f64,
) -> Result<Option<Net>, ntk_model::ModelError> {
    let Net::Mlp(mlp) = net else {
        return Ok(None);
    };
    let normalized = !mlp.batch_norms.is_empty() || !mlp.layer_norms.is_empty();
    if normalized || mlp.layers.iter().any(|l| l.bias.is_some()) {
        return Ok(None);
    }
    // Every tensor is a layer's weights.
    let tensors = net.tensors();
    let mut get = |name: &str, _: &[usize]| -> Result<Vec<f64>, ntk_model::ModelError> {
        let v = tensors
            .iter()
            .find(|t| t.0 == name)
            .map(|t| t.2.clone())
            .unwrap_or_default();
        let m = v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        if m == 0.0 || !m.is_finite() {
            return Ok(v);
        }
        let input = match name {
            "layers.0.weight" if largest_entry > 0.0 && largest_entry.is_finite() => {
                libm::ilogb(largest_entry)
            }
            _ => 0,
        };
        let e = libm::ilogb(m) + input;
        Ok(v.iter().map(|x| libm::scalbn(*x, -e)).collect())
    };
    Ok(Some(net.clone().with_tensors(&mut get)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bias-free MLP of `kind` on 3 inputs (`width`, depth 2, one output, seed 1) whose
    /// weights are `rule(name, out, in)` in PyTorch's layout, `[out, in]`.
    fn given(
        kind: ntk_model::ActivationKind,
        width: usize,
        rule: impl Fn(&str, usize, usize) -> f64,
    ) -> Net {
        given_outputs(kind, (width, 1), rule)
    }

    /// [`given`] with `outputs` outputs.
    fn given_outputs(
        kind: ntk_model::ActivationKind,
        (width, outputs): (usize, usize),
        rule: impl Fn(&str, usize, usize) -> f64,
    ) -> Net {
        use burn::tensor::{DType, Device};
        let cfg = ntk_model::MlpConfig {
            output_dim: outputs,
            ..ntk_model::MlpConfig::new(3, width, 2, kind)
                .with_seed(1)
                .with_bias(false)
        };
        let mlp = ntk_model::Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
        let mut get = |name: &str, shape: &[usize]| -> Result<Vec<f64>, ntk_model::ModelError> {
            let (out, inn) = (shape[0], shape[1]);
            Ok((0..out * inn)
                .map(|e| rule(name, e / inn, e % inn))
                .collect())
        };
        Net::Mlp(mlp).with_tensors(&mut get).unwrap()
    }

    fn inputs(rows: &[[f64; 2]]) -> Inputs {
        Inputs {
            x: rows.iter().flatten().copied().collect(),
            n: rows.len(),
            d: 2,
            labels: vec![0; rows.len()],
            description: "test rows".into(),
            source_rows: None,
        }
    }

    fn kernel(diagonal: &[f64]) -> Kernel {
        let size = diagonal.len();
        let mut data = vec![0.0; size * size];
        for (i, v) in diagonal.iter().enumerate() {
            data[i * size + i] = *v;
        }
        Kernel { size, data }
    }

    #[test]
    fn a_subnormal_diagonal_is_an_underflow_and_a_normal_one_is_not() {
        let x = inputs(&[[1.0, 0.0], [0.0, 1.0]]);
        let found = first_underflowing_sample::<()>(&x, &kernel(&[1.0, 1e-310]), Formed::Theory);
        assert_eq!(found.unwrap().unwrap().sample, 1);
        let fine = first_underflowing_sample::<()>(&x, &kernel(&[1.0, 3e-308]), Formed::Theory);
        assert_eq!(fine.unwrap(), None);
    }

    #[test]
    fn the_theory_s_zero_is_an_underflow_at_a_nonzero_input_only() {
        let x = inputs(&[[0.0, 0.0], [1e-200, 0.0]]);
        let found = first_underflowing_sample::<()>(&x, &kernel(&[0.0, 0.0]), Formed::Theory)
            .unwrap()
            .unwrap();
        assert_eq!((found.sample, found.value), (1, 0.0));
        assert!(found.why.contains("positive at every nonzero input"));
        let zero_row = inputs(&[[0.0, 0.0], [1.0, 0.0]]);
        let none = first_underflowing_sample::<()>(&zero_row, &kernel(&[0.0, 2.0]), Formed::Theory);
        assert_eq!(none.unwrap(), None);
    }

    /// A row's smallest entry over the outputs counts, and every zero is proved, however
    /// many (hundred-and-ninth hostile round, D1 and D2), checked against the diagonals
    /// themselves: a width-1 ReLU network is dead at exactly one of `v` and `-v`.
    #[test]
    fn suspects_read_each_output_and_prove_every_zero() {
        use burn::tensor::{DType, Device};
        use ntk_model::{ActivationKind, Mlp, MlpConfig};
        let cfg = MlpConfig::new(2, 1, 1, ActivationKind::Relu)
            .with_seed(1)
            .with_bias(false)
            .with_output_dim(3);
        let mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
        let all = [0, 1, 2];
        let v = [0.6, -0.8];
        let unit = entries(
            &mlp,
            &inputs(&[v, [-v[0], -v[1]]]),
            &all,
            true,
            Precision::F64,
        );
        let (live, dead) = if unit[0][0] > 0.0 {
            (v, [-v[0], -v[1]])
        } else {
            ([-v[0], -v[1]], v)
        };
        let at = |r: [f64; 2], t: f64| [r[0] * t, r[1] * t];
        let mut rows: Vec<[f64; 2]> = (0..300)
            .map(|i| at(dead, 1e-200 * (1.0 + i as f64 / 1e3)))
            .collect();
        rows.extend([at(live, 1e-170), [1.0, 0.5]]);
        let many = inputs(&rows);
        assert_eq!(
            suspects(&mlp, &many, &[0], false, Precision::F64),
            Some(vec![300])
        );
        let d = entries(&mlp, &many, &all, true, Precision::F64);
        assert!(
            d[..300]
                .iter()
                .chain([&d[300]])
                .all(|r| r.iter().all(|e| *e == 0.0))
        );
        let k = entries(&mlp, &inputs(&[live]), &all, true, Precision::F64).remove(0);
        let kmin = k.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(k.iter().sum::<f64>() >= 3.0 * kmin);
        let s = (f64::MIN_POSITIVE / (1.5 * kmin)).sqrt();
        let few = inputs(&[at(dead, s / 2.0), at(live, s), [1.0, 0.5]]);
        let d = entries(&mlp, &few, &all, true, Precision::F64);
        assert!(
            d[1].iter().any(|e| *e > 0.0 && *e < f64::MIN_POSITIVE),
            "{d:?}"
        );
        assert_eq!(
            suspects(&mlp, &few, &all, true, Precision::F64),
            Some(vec![1])
        );
        // The sum over outputs is normal; the dead row's 0 is the network's own.
        assert_eq!(
            suspects(&mlp, &few, &all, false, Precision::F64),
            Some(vec![])
        );
    }

    /// The hundred-and-fourteenth hostile round, D4: a ReLU^2 network whose every unit is
    /// live (positive weights, a positive input) but whose activations square down to 0 in
    /// f64 by depth 12. Its weights already have their largest entry in `[1, 2)`, so the
    /// weights' scaling alone changed nothing and proved the 0 the network's own; the layers
    /// scaled along a forward pass give a positive entry, so the 0 is an underflow.
    #[test]
    fn relu_squared_s_zero_is_proved_an_underflow_along_a_forward_pass() {
        use burn::tensor::{DType, Device};
        use ntk_model::{ActivationKind, Mlp, MlpConfig};
        let cfg = MlpConfig::new(2, 4, 12, ActivationKind::ReluSquared)
            .with_seed(1)
            .with_bias(false);
        let mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
        // One strong path through unit 0 of each layer, every other weight 2^-30.
        let mut get = |_: &str, shape: &[usize]| -> Result<Vec<f64>, ntk_model::ModelError> {
            let count: usize = shape.iter().product();
            Ok((0..count)
                .map(|i| if i == 0 { 1.0 } else { libm::scalbn(1.0, -30) })
                .collect())
        };
        let Net::Mlp(mlp) = Net::Mlp(mlp).with_tensors(&mut get).unwrap() else {
            unreachable!()
        };
        let x = inputs(&[[1.0, 1.0]]);
        let own = entries(&mlp, &x, &[0], false, Precision::F64);
        assert_eq!(own[0][0], 0.0, "the network's own diagonal underflows");
        let net = Net::Mlp(mlp.clone());
        let old = pow2_normalized(&net, 1.0).unwrap().unwrap();
        let Net::Mlp(old) = old else { unreachable!() };
        assert_eq!(
            entries(&old, &x, &[0], false, Precision::F64)[0][0],
            0.0,
            "the weights' scaling alone does not undo it"
        );
        let proofs = renormalized_proofs(&net, &x, &[0]).unwrap();
        assert!(matches!(proofs[0], Proof::Live(v) if v > 0.0), "{proofs:?}");
        assert_eq!(
            suspects(&mlp, &x, &[0], false, Precision::F64),
            Some(vec![0])
        );
        // The kernel's route asks the same of its kernel's 0, for every row at once.
        let again = |_: &Net, _: &Inputs| -> Result<Kernel, ()> { unreachable!() };
        let two = inputs(&[[-1.0, -1.0], [1.0, 1.0]]);
        let found = first_underflowing_sample(
            &two,
            &kernel(&[0.0, 0.0]),
            Formed::Empirical {
                net: &net,
                precision: Precision::F64,
                again: &again,
                outputs: &[0],
            },
        )
        .unwrap()
        .unwrap();
        assert_eq!(found.sample, 1, "{found:?}");
        assert!(found.why.contains("renormalized"), "{found:?}");
        // A dead unit stays dead: the input negated reaches no unit (every weight positive),
        // and its 0 is the network's own.
        let dead = inputs(&[[-1.0, -1.0]]);
        assert_eq!(entries(&mlp, &dead, &[0], false, Precision::F64)[0][0], 0.0);
        assert_eq!(
            suspects(&mlp, &dead, &[0], false, Precision::F64),
            Some(vec![])
        );
    }

    /// The hundred-and-sixteenth hostile round, D3: a dead unit's pre-activation (1e150) far
    /// above the live units' (1e-160) set the layer's scale, and the live units vanished in
    /// the proof as in the network: an underflow (K(x, x) = 1.7e-662 by mpmath) accepted as
    /// the network's own 0. The scale is the live units' now (1e-200 beside 1e150 too: the
    /// input is not scaled below 2^960); where a live value is lost even so (1e-315 beside
    /// 1e300, scaled by 2^-36 to 0), the 0 counts as an underflow and says which;
    /// a dead row is still the network's own, and so is the row whose first layer is dead
    /// with a pre-activation of 1e-160 beside 1e150 (hundred-and-seventeenth, D5).
    #[test]
    fn relu_squared_s_proof_scales_by_the_live_units() {
        // Unit 0 reads -x_0, the others x_1; then the identity, then a sum.
        let net = given(
            ntk_model::ActivationKind::ReluSquared,
            16,
            |name, o, i| match name {
                "layers.0.weight" if o == 0 => [-1.0, 0.0, 0.0][i],
                "layers.0.weight" => [0.0, 1.0, 0.0][i],
                "layers.1.weight" => f64::from(u8::from(o == i)),
                _ => 1.0,
            },
        );
        let Net::Mlp(mlp) = &net else { unreachable!() };
        let x = Inputs {
            x: vec![
                1e150, 1e-160, 0.0, 1e150, 1e-200, 0.0, 0.0, -1.0, 0.0, 1e300, 1e-315, 0.0, 1e150,
                -1e-160, 0.0,
            ],
            n: 5,
            d: 3,
            labels: vec![0; 5],
            description: "test rows".into(),
            source_rows: None,
        };
        // Row 3's |x|^2 (1e600) passes f64, but its term is formed at a power of two
        // (hundred-and-twenty-second hostile round, D2): its own is 0, as every row's.
        let own = entries(mlp, &x, &[0], false, Precision::F64);
        assert!(own.iter().all(|r| r[0] == 0.0), "{own:?}");
        let proofs = renormalized_proofs(&net, &x, &[0, 1, 2, 3, 4]).unwrap();
        assert!(matches!(proofs[0], Proof::Live(_)), "{proofs:?}");
        assert!(matches!(proofs[1], Proof::Live(_)), "{proofs:?}");
        assert_eq!(proofs[2], Proof::Dead, "{proofs:?}");
        let Proof::Unresolved(lost) = proofs[3] else {
            panic!("{proofs:?}")
        };
        assert_eq!(
            lost,
            Lost::InputEntry {
                entry: 1,
                value: 1e-315,
                largest: 1e300,
                shift: 36
            }
        );
        let said = proofs[3].reason().unwrap();
        assert!(
            said.contains("the input's entry 1 (") && said.contains("2^-36"),
            "{said}"
        );
        assert_eq!(
            proofs[3].remedy(),
            Some("rescale the inputs (toward unit norm)")
        );
        assert_eq!(proofs[4], Proof::Dead, "{proofs:?}");
        // Row 3's 0 is unresolved (its input entry lost to the scale): a suspect, refused as
        // the underflow it may be, no longer as an overflow of |x|^2 its kernel does not have.
        assert_eq!(
            suspects(mlp, &x, &[0], false, Precision::F64),
            Some(vec![0, 1, 3]),
        );
    }

    /// The hundred-and-seventeenth hostile round, D5: a dead second layer beside a weight of
    /// 1e-130 (below the old rule's 2^-400 of its largest) is the network's own 0, as no
    /// product is lost; so is one whose first layer's units read a product 1e-320 (subnormal,
    /// but within 2^-1075 of the exact: live for certain). A product lost to 0 (a weight 1e-30
    /// times an input entry 1e-300) leaves the 0 unresolved, saying so, and no overall
    /// rescaling is advised.
    #[test]
    fn relu_squared_s_proof_counts_only_values_it_loses() {
        let net_of = |first: [[f64; 3]; 2], tiny: f64| {
            given(
                ntk_model::ActivationKind::ReluSquared,
                4,
                |name, o, i| match name {
                    "layers.0.weight" => first[usize::from(o > 0)][i],
                    // Every second-layer unit dead at a live first layer.
                    "layers.1.weight" if o == 0 && i == 0 => tiny,
                    "layers.1.weight" => -1.0,
                    _ => 1.0,
                },
            )
        };
        let x = Inputs {
            x: vec![1.0, 1e-300, 0.0],
            n: 1,
            d: 3,
            labels: vec![0],
            description: "a unit row".into(),
            source_rows: None,
        };
        let live = [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]];
        for tiny in [-1e-130, 1e-130] {
            let net = net_of(live, tiny);
            let Net::Mlp(mlp) = &net else { unreachable!() };
            assert_eq!(entries(mlp, &x, &[0], false, Precision::F64)[0][0], 0.0);
            assert_eq!(renormalized_proofs(&net, &x, &[0]).unwrap(), [Proof::Dead]);
        }
        let net = net_of([[1.0, 0.0, 0.0], [0.0, 1e-20, 0.0]], -1.0);
        assert_eq!(renormalized_proofs(&net, &x, &[0]).unwrap(), [Proof::Dead]);
        // Unit 0 dead (-x_0), the others 1e-30 x_1 = 1e-330, lost to 0: the second layer is
        // dead only to within that.
        let net = net_of([[-1.0, 0.0, 0.0], [0.0, 1e-30, 0.0]], -1.0);
        let proofs = renormalized_proofs(&net, &x, &[0]).unwrap();
        let Proof::Unresolved(Lost::Product {
            layer: 0,
            weight,
            value,
        }) = proofs[0]
        else {
            panic!("{proofs:?}")
        };
        assert_eq!((weight, value), (1e-30, 1e-300));
        let said = proofs[0].reason().unwrap();
        assert!(
            said.contains("at layer 0, the product of a weight 1.000e-30"),
            "{said}"
        );
        assert!(!proofs[0].remedy().unwrap().contains("toward unit norm"));
    }

    /// The hundred-and-eighteenth hostile round, D1 and D2: unit 1 of the first layer reads
    /// 2^-500 x 2^-580 (live, lost to 0 in f64 beside unit 0's 2^-500 x 2^500) and the second
    /// layer's unit 0 reads it alone: the exact K(x, x) is positive (ReLU: 1.674e299, the first
    /// layer's |x|^2 term), but f64 forms 0. ReLU^2's renormalized pass took the unit below
    /// 2^-1075 of its layer's largest and called it dead; ReLU's proof scaled the input to
    /// (1, 0, 0) and found its 0 again. Both count it as an underflow now, naming the loss.
    #[test]
    fn a_live_unit_lost_below_f64_s_range_is_no_own_zero() {
        use ntk_model::ActivationKind;
        let x = Inputs {
            x: vec![libm::scalbn(1.0, 500), libm::scalbn(1.0, -580), 0.0],
            n: 1,
            d: 3,
            labels: vec![0],
            description: "the row".into(),
            source_rows: None,
        };
        for kind in [ActivationKind::ReluSquared, ActivationKind::Relu] {
            let w = libm::scalbn(1.0, -500);
            let net = given(kind, 16, |name, o, i| match name {
                "layers.0.weight" => match o {
                    0 => [w, 0.0, 0.0][i],
                    1 => [0.0, w, 0.0][i],
                    _ => [-w, 0.0, 0.0][i],
                },
                "layers.1.weight" if o == 0 => f64::from(u8::from(i == 1)),
                "layers.1.weight" => -f64::from(u8::from(i == 0)),
                _ => 1.0,
            });
            let Net::Mlp(mlp) = &net else { unreachable!() };
            let own = entries(mlp, &x, &[0], false, Precision::F64);
            assert_eq!(own[0][0], 0.0, "{kind:?}: f64 forms 0");
            assert_eq!(
                suspects(mlp, &x, &[0], false, Precision::F64),
                Some(vec![0]),
                "{kind:?}"
            );
            if kind == ActivationKind::ReluSquared {
                let proofs = renormalized_proofs(&net, &x, &[0]).unwrap();
                assert!(
                    matches!(
                        proofs[0],
                        Proof::Unresolved(Lost::PreActivation { layer: 0, .. })
                    ),
                    "{proofs:?}"
                );
            } else {
                let by_inputs = linear_in_input_scale(&net);
                assert!(by_inputs);
                let scaled = pow2_normalized(&net, 1.0).unwrap().unwrap();
                let lost = proof_loses(&scaled, &x.x, by_inputs, &[0]);
                assert!(
                    matches!(
                        lost,
                        Some(Lost::InputEntry {
                            entry: 1,
                            shift: 500,
                            ..
                        })
                    ),
                    "{lost:?}"
                );
            }
        }
    }

    /// The hundred-and-nineteenth hostile round, D1: a GELU layer whose units all sit far
    /// below 0 gives values whose squares (or the values themselves) f64 cannot hold, and the
    /// proof network's 0 was taken as the network's own; D2: a live ReLU unit of 1e-170 read
    /// by an output weight of 1e-170 (K(x, x) = 2.5e-341 exactly) likewise. Both are
    /// underflows now (a layer's term with both factors nonzero, or a value lost); a GELU
    /// network whose last two layers are 0 keeps its own 0.
    #[test]
    fn every_activation_s_proof_checks_its_values_and_terms() {
        use ntk_model::ActivationKind;
        let x = Inputs {
            x: vec![1.0, 1.0, 1.0],
            n: 1,
            d: 3,
            labels: vec![0],
            description: "the row".into(),
            source_rows: None,
        };
        let own = |net: &Net| {
            let Net::Mlp(mlp) = net else { unreachable!() };
            entries(mlp, &x, &[0], false, Precision::F64)[0][0]
        };
        let suspect = |net: &Net| {
            let Net::Mlp(mlp) = net else { unreachable!() };
            suspects(mlp, &x, &[0], false, Precision::F64)
        };
        // GELU: every first-layer unit at w (z far below 0), the identity, then ones.
        for w in [-12.0, -60.0] {
            let net = given(ActivationKind::Gelu, 16, |name, o, i| match name {
                "layers.0.weight" => w,
                "layers.1.weight" => f64::from(u8::from(o == i)),
                _ => 1.0,
            });
            assert_eq!(own(&net), 0.0, "w {w}: f64 forms 0");
            assert_eq!(suspect(&net), Some(vec![0]), "w {w}");
        }
        let dead = given(ActivationKind::Gelu, 16, |name, _, _| match name {
            "layers.0.weight" => 1.0,
            _ => 0.0,
        });
        assert_eq!(own(&dead), 0.0);
        assert_eq!(suspect(&dead), Some(vec![]), "a GELU network's own 0");
        // ReLU: unit 0 reads 1e-170 x_0 (live), the others x_1 - x_0 (dead at (1, 0, 0)); the
        // identity; the output reads unit 0 by 1e-170.
        let x0 = Inputs {
            x: vec![1.0, 0.0, 0.0],
            ..x.clone()
        };
        let net = given(ActivationKind::Relu, 16, |name, o, i| match name {
            "layers.0.weight" if o == 0 => [1e-170, 1.0, 0.0][i],
            "layers.0.weight" => [-1.0, 1.0, 0.0][i],
            "layers.1.weight" => f64::from(u8::from(o == i)),
            _ if i == 0 => 1e-170,
            _ => 1.0,
        });
        let Net::Mlp(mlp) = &net else { unreachable!() };
        assert_eq!(entries(mlp, &x0, &[0], false, Precision::F64)[0][0], 0.0);
        assert_eq!(
            suspects(mlp, &x0, &[0], false, Precision::F64),
            Some(vec![0])
        );
    }

    /// The hundred-and-twentieth hostile round, D1: with each output's kernel apart, output
    /// 0's own 0 (its readout row 0, the last hidden layer tanh(0) = 0) was refused because
    /// output 1 is live; only the zero outputs are proved now. D2: SELU's and erf's proof
    /// network saturated where the network is near-linear (units at -62 and -59 both at
    /// SELU's -lambda alpha), their difference 0 where the network's is not: the pass of a
    /// network not linear in its input's scale is the network's own now, whose last layer is
    /// live (its readout term positive).
    #[test]
    fn a_zero_output_is_proved_alone_and_a_non_homogeneous_proof_is_the_network_s_own() {
        use ntk_model::ActivationKind;
        let x = Inputs {
            x: vec![0.3, -1.1, 0.7],
            n: 1,
            d: 3,
            labels: vec![0],
            description: "the row".into(),
            source_rows: None,
        };
        let net = given_outputs(ActivationKind::Tanh, (16, 2), |name, o, i| match name {
            "layers.0.weight" => 0.1 * (1 + (o * 3 + i) % 5) as f64,
            "layers.1.weight" => 0.0,
            _ => f64::from(u8::from(o == 1)),
        });
        let Net::Mlp(mlp) = &net else { unreachable!() };
        let both = entries(mlp, &x, &[0, 1], true, Precision::F64);
        assert!(both[0][0] == 0.0 && both[0][1] > 0.0, "{both:?}");
        assert_eq!(
            suspects(mlp, &x, &[0, 1], true, Precision::F64),
            Some(vec![]),
            "output 0's own 0"
        );
        // Units reading -19 and -18 times the row (1.9 x 2^-600 at every entry), the next
        // layer each unit's a_0 - a_1, a readout of zeros.
        let tiny = Inputs {
            x: vec![1.9 * libm::scalbn(1.0, -600); 3],
            ..x.clone()
        };
        for kind in [ActivationKind::Selu, ActivationKind::Erf] {
            let net = given(kind, 16, |name, o, i| match name {
                "layers.0.weight" if o % 2 == 0 => -19.0,
                "layers.0.weight" => -18.0,
                "layers.1.weight" => [1.0, -1.0].get(i).copied().unwrap_or(0.0),
                _ => 0.0,
            });
            let Net::Mlp(mlp) = &net else { unreachable!() };
            assert_eq!(entries(mlp, &tiny, &[0], false, Precision::F64)[0][0], 0.0);
            assert_eq!(
                suspects(mlp, &tiny, &[0], false, Precision::F64),
                Some(vec![0]),
                "{kind:?}"
            );
        }
    }
}
