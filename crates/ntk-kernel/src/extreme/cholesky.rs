//! A blocked Cholesky factorization `K + s I = L L^T` whose `O(n^3)` work is device matrix
//! products, and the solves with its factor.
//!
//! Right-looking, one block column of width `b` at a time, on the Schur complement `S`
//! (`S = K` at the start):
//!
//! `S = [S_11 S_21^T; S_21 S_22]`, `L_11 = chol(S_11 + s I)` (on the host, `b x b`),
//! `L_21 = S_21 L_11^{-T}`, then `S <- S_22 - L_21 L_21^T`.
//!
//! The products `S_21 L_11^{-T}` and `L_21 L_21^T` run on the tensors' device: about
//! `n^3 / 3` multiply-adds in all (the trailing update is computed whole, not only its lower
//! triangle, so `2 n^3 / 3` are issued). The diagonal blocks travel to the host (`n b` values
//! in all), where the shift `s` is added: it passes unchanged down the diagonal of every
//! Schur complement, so adding it there is the same as factoring `K + s I`. Solves with `L`
//! use the explicit inverses of the diagonal blocks, so they too are matrix products.

use burn::tensor::{DType, Device, Tensor, TensorData};

/// One block column of `L`: rows `offset..n`.
struct Panel {
    offset: usize,
    /// `L_11^{-1}`, `b x b`, lower triangular.
    inverse: Tensor<2>,
    /// `L_21`, `(n - offset - b) x b`; `None` for the last block.
    below: Option<Tensor<2>>,
}

/// The factor `L` of `K + s I`, kept as its block columns.
pub struct Factor {
    panels: Vec<Panel>,
    n: usize,
}

/// Where a factorization stopped: the first row whose pivot was not positive (the matrix
/// plus shift is not numerically positive definite), or a non-finite block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Breakdown {
    pub row: usize,
}

/// Factors `k + shift I` (`k` symmetric, only its lower triangle's blocks are read) in block
/// columns of `block`.
pub fn factor(k: Tensor<2>, shift: f64, block: usize) -> Result<Factor, Breakdown> {
    let [n, cols] = k.dims();
    assert_eq!(n, cols, "factor: a square matrix");
    let block = block.max(1);
    let device = k.device();
    let dtype = k.dtype();
    let mut schur = k;
    let mut panels = Vec::with_capacity(n.div_ceil(block));
    for offset in (0..n).step_by(block) {
        let b = block.min(n - offset);
        let rest = n - offset - b;
        let s11: Vec<f64> = schur
            .clone()
            .narrow(0, 0, b)
            .narrow(1, 0, b)
            .try_into_vec_as()
            .map_err(|_| Breakdown { row: offset })?;
        let l11 = host_cholesky(&s11, b, shift).map_err(|j| Breakdown { row: offset + j })?;
        let inverse = upload(lower_inverse(&l11, b), b, &device, dtype);
        let below = (rest > 0).then(|| {
            let s21 = schur.clone().narrow(0, b, rest).narrow(1, 0, b);
            let l21 = s21.matmul(inverse.clone().transpose());
            schur = schur.clone().narrow(0, b, rest).narrow(1, b, rest)
                - l21.clone().matmul(l21.clone().transpose());
            l21
        });
        panels.push(Panel {
            offset,
            inverse,
            below,
        });
    }
    Ok(Factor { panels, n })
}

impl Factor {
    pub fn size(&self) -> usize {
        self.n
    }

    /// `L^{-1} v` for a block of vectors `v` (`n x m`), by forward substitution over the
    /// block rows: `y_k = L_kk^{-1} v_k`, then the rows below lose `L_21 y_k`.
    pub fn forward(&self, v: Tensor<2>) -> Tensor<2> {
        let mut rest = v;
        let mut parts = Vec::with_capacity(self.panels.len());
        for p in &self.panels {
            let b = p.inverse.dims()[0];
            let y = p.inverse.clone().matmul(rest.clone().narrow(0, 0, b));
            if let Some(l21) = &p.below {
                let rows = rest.dims()[0] - b;
                rest = rest.narrow(0, b, rows) - l21.clone().matmul(y.clone());
            }
            parts.push(y);
        }
        Tensor::cat(parts, 0)
    }

    /// `L^{-T} y`, by back substitution: `x_k = L_kk^{-T} (y_k - L_21^T x_{k+1..})`.
    pub fn backward(&self, y: Tensor<2>) -> Tensor<2> {
        let mut tail: Option<Tensor<2>> = None;
        for p in self.panels.iter().rev() {
            let b = p.inverse.dims()[0];
            let yk = y.clone().narrow(0, p.offset, b);
            let rhs = match (&p.below, &tail) {
                (Some(l21), Some(x)) => yk - l21.clone().transpose().matmul(x.clone()),
                _ => yk,
            };
            let xk = p.inverse.clone().transpose().matmul(rhs);
            tail = Some(match tail {
                Some(x) => Tensor::cat(vec![xk, x], 0),
                None => xk,
            });
        }
        tail.expect("a factor has at least one block")
    }

    /// `(K + s I)^{-1} v = L^{-T} L^{-1} v`.
    pub fn solve(&self, v: Tensor<2>) -> Tensor<2> {
        self.backward(self.forward(v))
    }

    /// `W = L^{-1}` as one dense (lower-triangular) `n x n` tensor, block column by block
    /// column: `W[j:, j] = L[j:, j:]^{-1} E_j` by forward substitution from block `j` on
    /// (`n^3 / 3` multiply-adds, as device products). Then `(K + s I)^{-1} v = W^T (W v)`
    /// is two matrix-vector products instead of `4 n / b` small ones: the better trade on a
    /// GPU, where each product costs a launch; on a CPU [`Factor::solve`] is cheaper.
    pub fn inverse(&self) -> Tensor<2> {
        let columns: Vec<Tensor<2>> = (0..self.panels.len())
            .map(|j| {
                let p = &self.panels[j];
                let b = p.inverse.dims()[0];
                let mut parts = Vec::with_capacity(self.panels.len() - j + 1);
                if p.offset > 0 {
                    let (device, dtype) = (p.inverse.device(), p.inverse.dtype());
                    parts.push(Tensor::zeros([p.offset, b], (&device, dtype)));
                }
                parts.push(p.inverse.clone());
                let mut rest = p
                    .below
                    .as_ref()
                    .map(|l21| l21.clone().matmul(p.inverse.clone()).neg());
                for q in &self.panels[j + 1..] {
                    let r = rest.take().expect("a block below the diagonal");
                    let bq = q.inverse.dims()[0];
                    let y = q.inverse.clone().matmul(r.clone().narrow(0, 0, bq));
                    if let Some(l21) = &q.below {
                        let rows = r.dims()[0] - bq;
                        rest = Some(r.narrow(0, bq, rows) - l21.clone().matmul(y.clone()));
                    }
                    parts.push(y);
                }
                Tensor::cat(parts, 0)
            })
            .collect();
        Tensor::cat(columns, 1)
    }
}

fn upload(values: Vec<f64>, b: usize, device: &Device, dtype: DType) -> Tensor<2> {
    Tensor::from_data(TensorData::new(values, [b, b]), (device, dtype))
}

/// The lower Cholesky factor of the row-major `b x b` block `a + shift I` in f64, or the
/// index of the first pivot that is not positive (or not finite).
pub fn host_cholesky(a: &[f64], b: usize, shift: f64) -> Result<Vec<f64>, usize> {
    let mut l = vec![0.0f64; b * b];
    for j in 0..b {
        let row_j = &l[j * b..j * b + j];
        let pivot = a[j * b + j] + shift - row_j.iter().map(|x| x * x).sum::<f64>();
        if !(pivot > 0.0 && pivot.is_finite()) {
            return Err(j);
        }
        let root = pivot.sqrt();
        l[j * b + j] = root;
        for i in j + 1..b {
            let dot: f64 = (0..j).map(|c| l[i * b + c] * l[j * b + c]).sum();
            l[i * b + j] = (a[i * b + j] - dot) / root;
        }
    }
    Ok(l)
}

/// The inverse of the row-major lower-triangular `b x b` matrix `l` (lower triangular too),
/// column by column: `L x = e_j`.
pub fn lower_inverse(l: &[f64], b: usize) -> Vec<f64> {
    let mut inv = vec![0.0f64; b * b];
    for j in 0..b {
        for i in j..b {
            let rhs = if i == j { 1.0 } else { 0.0 };
            let dot: f64 = (j..i).map(|c| l[i * b + c] * inv[c * b + j]).sum();
            inv[i * b + j] = (rhs - dot) / l[i * b + i];
        }
    }
    inv
}
