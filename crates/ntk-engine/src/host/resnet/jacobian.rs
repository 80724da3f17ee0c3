//! Per-sample model gradients of a [`HostResNet`] in evaluation mode, the rows of the
//! Jacobian from which the empirical NTK is formed:
//!
//! `J[(i, o), p] = d f_o(x_i) / d theta_p`, and `Theta(x_i, x_j) = sum_o J[(i, o)] . J[(j, o)]`
//! (Jacot et al. 2018, Eq. 2, summed over the outputs `o`).
//!
//! BatchNorm normalizes with its running statistics here (as Burn's `valid()` network and
//! [`ntk_model::ResNet`] in evaluation mode do), so a sample's outputs depend on that sample
//! alone and its gradient is a backward of one image: one forward per image, then one
//! backward per output from the cotangent `e_o` (the forward's trace is read, not changed,
//! by a backward). Images run in parallel on rayon's threads, each with its own workspace
//! and the BLAS single-threaded ([`ntk_numerics::linalg::single_threaded`], set here).
//!
//! Cost per image: a forward (`F` multiply-adds, 41M for ResNet-20) and `k` backwards
//! (`2F` each), so `(1 + 2k) F` for `k` outputs: 21 `F` for CIFAR's ten classes; the Gram
//! product of the rows adds `n^2 k P` more (`P` parameters) for the whole kernel.

use rayon::prelude::*;

use ntk_numerics::linalg::{Real, single_threaded};

use super::HostResNet;

impl<T: Real> HostResNet<T> {
    /// The per-sample gradients of the evaluation-mode outputs `outputs` of the `n` flat CHW
    /// rows `x` into `rows`, row-major `[i][o][p]` (`n * outputs.len()` rows of
    /// [`Self::num_params`] values, parameters in [`Self::theta`]'s order): every entry is
    /// overwritten.
    ///
    /// # Panics
    /// When `x` or `rows` has the wrong length or an output index is out of range.
    pub fn per_sample_gradients(&self, x: &[f64], n: usize, outputs: &[usize], rows: &mut [T]) {
        let (p, k, d) = (self.theta.len(), self.head.classes, self.stem.input.image());
        assert_eq!(x.len(), n * d, "per_sample_gradients: inputs of n images");
        assert_eq!(
            rows.len(),
            n * outputs.len() * p,
            "per_sample_gradients: rows buffer"
        );
        assert!(
            outputs.iter().all(|&o| o < k),
            "per_sample_gradients: output index beyond {k} classes"
        );
        if n == 0 || outputs.is_empty() || p == 0 {
            return;
        }
        let running: Vec<f64> = self.running.iter().map(|v| v.f64()).collect();
        single_threaded(|| {
            rows.par_chunks_mut(outputs.len() * p)
                .enumerate()
                .for_each_init(
                    || (self.new_workspace(1), vec![T::of(0.0); k]),
                    |(ws, cotangent), (i, image_rows)| {
                        self.forward_into(&x[i * d..(i + 1) * d], ws, Some(&running));
                        for (&o, row) in outputs.iter().zip(image_rows.chunks_mut(p)) {
                            cotangent.iter_mut().for_each(|v| *v = T::of(0.0));
                            cotangent[o] = T::of(1.0);
                            self.backward_from(cotangent, row, ws);
                        }
                    },
                );
        });
    }
}
