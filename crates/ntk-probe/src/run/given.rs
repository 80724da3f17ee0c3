//! What a run is given beside its config and data ([`Given`]): its network with
//! `probe.weights` loaded, the blocks of `probe.blocks`, and the two files' digests, each
//! file read once (the digest and the content from the same bytes) and checked before any
//! work, so that `--dry-run` refuses what the run would.
//!
//! A given file is read as [`super::given_file`] reads it (a regular file no larger than
//! what the run can use: the network's values in f64 plus a header for `probe.weights`, a
//! few dozen bytes a sample for `probe.blocks`). Every error names the key and the file;
//! given weights are refused when a tensor holds a value that is not finite (in the file,
//! or once in the network's precision) or a BatchNorm variance is negative, naming the
//! tensor and the entry. Last, the kernel of the input of
//! the largest norm alone, as the run computes it, must be finite in the run's precision
//! (an overflow refused before any work, naming the row and the weights).

use std::path::Path;

use ntk_model::Net;
use ntk_model::export::Named;
use ntk_runs::provenance;

use super::given_file::{HEADER_BYTES, blocks_limit, read_input};
use super::*;

/// The network of a run, its given blocks, and the digests of its given files.
pub struct Given {
    /// The configured network: the seeded draw, or `probe.weights` loaded into it.
    pub net: Net,
    /// The blocks of `probe.blocks` (a partition of the samples), when given.
    pub blocks: Option<Vec<Vec<usize>>>,
    /// SHA-256 of `probe.weights`.
    weights_digest: Option<String>,
    /// SHA-256 of `probe.blocks`.
    blocks_digest: Option<String>,
}

impl Given {
    /// The network of `cfg` on `inputs` (the seeded draw) with `probe.weights`
    /// loaded and checked, and `probe.blocks` read and checked against the `inputs.n`
    /// samples; each file read once.
    pub fn read(cfg: &ProbeConfig, inputs: &Inputs, compute: &Compute) -> crate::Result<Self> {
        let (blocks, blocks_digest) = match &cfg.probe.blocks {
            Some(path) => {
                let limit = blocks_limit(inputs.n);
                let bytes = read_input("probe.blocks", path, limit, "the samples' indices")?;
                let digest = provenance::sha256_hex(&bytes);
                let blocks = crate::blocks::parse_bytes(bytes, path, inputs.n)?;
                (Some(blocks), Some(digest))
            }
            None => (None, None),
        };
        let net = seeded_net(cfg, inputs, compute)?;
        let (net, weights_digest) = match &cfg.probe.weights {
            Some(path) => {
                let values: u64 = net.tensors().iter().map(|t| t.2.len() as u64).sum();
                let limit = HEADER_BYTES + 8 * values;
                let needs = format!("the network's {values} values in f64 and a header");
                let bytes = read_input("probe.weights", path, limit, &needs)?;
                let digest = provenance::sha256_hex(&bytes);
                let name = path.display().to_string();
                let net = ntk_model::export::load_bytes(net, &bytes, &name).map_err(|e| {
                    let reason = match e {
                        ntk_model::ModelError::Weights { reason, .. } => reason,
                        e => e.to_string(),
                    };
                    Error::Config {
                        key: "probe.weights",
                        value: name.clone(),
                        reason,
                    }
                })?;
                check_finite(&net, path, compute.precision)?;
                (net, Some(digest))
            }
            None => (net, None),
        };
        check_kernel_finite(cfg, inputs, compute, &net)?;
        Ok(Self {
            net,
            blocks,
            weights_digest,
            blocks_digest,
        })
    }

    /// The digests the provenance records: `probe.weights_digest`, `probe.blocks_digest`.
    pub(super) fn digests(&self) -> [(&'static str, Option<&str>); 2] {
        [
            ("probe.weights_digest", self.weights_digest.as_deref()),
            ("probe.blocks_digest", self.blocks_digest.as_deref()),
        ]
    }
}

/// Refuses given weights that hold a value that is not finite (in the file, or once held in
/// the network's `precision`: an f64 value beyond f32's range), or a negative BatchNorm
/// variance, naming the file, the tensor and the entry.
fn check_finite(net: &Net, path: &Path, precision: Precision) -> crate::Result<()> {
    let bad = |reason: String| Error::Config {
        key: "probe.weights",
        value: path.display().to_string(),
        reason,
    };
    for (name, shape, values) in net.tensors() {
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            let f32_note = if values[i].is_infinite() && precision == Precision::F32 {
                " in f32 (probe.precision = \"f32\"; the file's value is beyond f32's range)"
            } else {
                ""
            };
            return Err(bad(format!(
                "tensor `{name}` (shape {shape:?}) holds {} at index {:?}{f32_note}: the \
                 network's outputs and kernel would not be finite",
                values[i],
                unravel(i, &shape),
            )));
        }
        if name.ends_with("running_var")
            && let Some(i) = values.iter().position(|v| *v < 0.0)
        {
            return Err(bad(format!(
                "tensor `{name}` holds the variance {} at index [{i}]: a BatchNorm variance \
                 is never negative (its square root would be NaN)",
                values[i]
            )));
        }
    }
    Ok(())
}

/// The multi-index of the row-major flat index `i` in `shape`.
fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut at = vec![0; shape.len()];
    for (a, &d) in at.iter_mut().zip(shape).rev() {
        *a = i % d.max(1);
        i /= d.max(1);
    }
    at
}

/// Refuses, before any work (a dry run too), inputs and weights whose kernel overflows the
/// run's precision: the kernel of the input of the largest norm alone (its diagonal entry
/// bounds every entry of a positive semi-definite kernel), computed as the run computes it,
/// must be finite. The error names the data, the row and its norm, and the weights. Skipped
/// with BatchNorm's batch statistics (one sample has none; the normalization removes the
/// scale).
fn check_kernel_finite(
    cfg: &ProbeConfig,
    inputs: &Inputs,
    compute: &Compute,
    net: &Net,
) -> crate::Result<()> {
    let batch = cfg.probe.batch_norm_statistics == Some(BnStatistics::Batch);
    if batch || inputs.n == 0 {
        return Ok(());
    }
    let d = inputs.d.max(1);
    let norm = |r: usize| {
        inputs.x[r * d..(r + 1) * d]
            .iter()
            .map(|v| v * v)
            .sum::<f64>()
            .sqrt()
    };
    let row = (0..inputs.n)
        .max_by(|&a, &b| norm(a).total_cmp(&norm(b)))
        .unwrap_or(0);
    let one = inputs.select(&[row]);
    let k = probe_kernel(cfg, net, &one, compute, &mut host::HostCache::default())?;
    if k.kernel.data.iter().all(|v| v.is_finite()) {
        return Ok(());
    }
    let at = format!(
        "{}: row {row} (norm {:.3e}) has a kernel entry K(x, x) that is not finite in {} \
         (overflow)",
        inputs.description,
        norm(row),
        compute.precision
    );
    if compute.precision == Precision::F32 {
        return Err(Error::Config {
            key: "probe.precision",
            value: "\"f32\"".into(),
            reason: format!("{at}; rescale the inputs or probe in f64"),
        });
    }
    let weights = match &cfg.probe.weights {
        Some(p) => format!("the weights of probe.weights = {}", p.display()),
        None => "the seeded network's weights".into(),
    };
    Err(Error::Setting {
        setting: Some(format!("{at} with {weights} (weights and inputs finite)")),
        source: Box::new(ntk_numerics::Error::NonFiniteKernel.into()),
    })
}
