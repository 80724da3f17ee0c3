//! Whether a kernel's diagonal `K(x, x)` underflows the precision it was formed in: an entry
//! between 0 and the smallest normal number has lost digits, and an exact 0 at a nonzero
//! input is an underflow wherever it can be told from the network's own 0 (a sample no unit
//! of a ReLU layer passes). The trainer's tracked NTK and its `[prediction]` kernels ask here
//! (hundred-and-first hostile round, D3; hundred-and-second, D4: a subnormal kernel at
//! initialization gave kappa 13184.8 for 13166.6, an all-zero one "singular, rank 0").

use ntk_data::inputs::Inputs;
use ntk_model::Net;
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
    /// The network's own kernel, in `precision`; `again` forms it on other inputs (the
    /// same inputs scaled by a power of two).
    Empirical {
        net: &'a Net,
        precision: Precision,
        again: &'a dyn Fn(&Inputs) -> Result<Kernel, E>,
    },
}

/// The first sample of `inputs` whose diagonal entry of `k` (the kernel of the `inputs.n`
/// samples, `k.size / n` rows each: one per output for a full-output kernel) underflows, if
/// any.
///
/// A network's exact 0 is told from an underflow for a network scale-free in its input (an
/// MLP without biases or normalization whose activation is positively homogeneous: `K(a x,
/// a y) = a^(2p) K(x, y)`, so a 0 of its own stays 0): the kernel of each such input scaled
/// by its own power of two (its largest magnitude into `[1, 2)`) is positive there where the
/// 0 is an underflow. Any other network's 0 is left as the measurement it is.
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
    let Formed::Empirical { net, again, .. } = formed else {
        return Ok(Some(Underflow {
            sample: first,
            value: 0.0,
            why: " (the infinite-width kernel is positive at every nonzero input, so the 0 is \
                  an underflow)"
                .to_string(),
        }));
    };
    let plain_mlp = matches!(net, Net::Mlp(m)
        if m.batch_norms.is_empty() && m.layer_norms.is_empty());
    if !plain_mlp || crate::scale::scale_dependence(net).is_some() {
        return Ok(None);
    }
    // Each such input scaled by its own power of two (its largest magnitude into [1, 2)),
    // the set of them as one batch: this network's `K(x, x)` is its input's alone. One power
    // for the whole set left a row at 1e-60 among unit rows unproved, the unit rows
    // overflowing where it came to unit scale (hundred-and-third hostile round, D4).
    let mut scaled = inputs.select(&zeros);
    let mut exponents = Vec::with_capacity(zeros.len());
    for row in scaled.x.chunks_mut(d.max(1)) {
        let largest = row.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if !largest.is_finite() {
            return Ok(None);
        }
        // A power of two, applied in two halves so that neither factor overflows (a largest
        // magnitude near f64's smallest subnormal needs 2^1074).
        let e = largest.log2().floor() as i32;
        let (half, rest) = (2f64.powi(-e / 2), 2f64.powi(-e - (-e / 2)));
        for v in row.iter_mut() {
            *v = *v * half * rest;
        }
        exponents.push(e);
    }
    let k_again = again(&scaled)?;
    for (r, &sample) in zeros.iter().enumerate() {
        let Some(o) = zero_at(sample) else { continue };
        let top = diagonal(&k_again, r * per + o);
        if top > 0.0 {
            return Ok(Some(Underflow {
                sample,
                value: 0.0,
                why: format!(
                    " (the same network on this input scaled by 2^{} has K(x, x) = {top:.3e}, \
                     so the 0 is an underflow, not a sample the network does not pass)",
                    -exponents[r]
                ),
            }));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(rows: &[[f64; 2]]) -> Inputs {
        Inputs {
            x: rows.iter().flatten().copied().collect(),
            n: rows.len(),
            d: 2,
            labels: vec![0; rows.len()],
            description: "test rows".into(),
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
}
