//! What a run is given beside its config and data ([`Given`]): its network with
//! `probe.weights` loaded, the blocks of `probe.blocks`, and the two files' digests, each
//! file read once (the digest and the content from the same bytes) and checked before any
//! work, so that `--dry-run` refuses what the run would.
//!
//! A given file is read as [`super::given_file`] reads it (a regular file no larger than
//! what the run can use: the network's values in f64 plus a header for `probe.weights`, a
//! few dozen bytes a sample for `probe.blocks`). Every error names the key and the file;
//! a safetensors header whose tensors' bytes overlap or leave gaps is refused naming the same
//! tensor on every run and dry run ([`check_offsets`]); given weights must match the network
//! both ways (`ntk_model::export::load_bytes`: each of its tensors in the file with its
//! shape, and each tensor of the file one it uses, so that a file of another architecture is
//! refused naming the tensors it would leave unread);
//! given weights are refused when a tensor holds a value that is not finite (in the file,
//! or once in the network's precision), a nonzero value that is subnormal or 0 once in the
//! network's precision, or a BatchNorm variance is negative, naming the tensor and the entry.
//! Last, the kernel of one input alone, as the run computes it, must be in the run's
//! precision's range: the largest norm's finite (an overflow), the diagonals of the smallest
//! nonzero norm and of the largest at least the precision's smallest normal number or a 0 of
//! the network's own (an underflow, issue 65 item 6), and in f32 both kernels equal to f64's
//! within a rounding allowance (an
//! intermediate that underflows and is scaled up, which the diagonal's size does not show),
//! and, for an MLP without normalization, every input's diagonal finite ([`overflowing_row`]:
//! given weights can overflow inputs other than the largest), each refused before any work
//! naming the row, its norm and the fix ([`check_kernel_range`], which a sweep's points call
//! too).

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
                // The indices count the samples drawn (inputs.npy's rows): said where a subset
                // moved them off the file's rows (hundred-and-thirty-third hostile round,
                // second review, D1: a blocks file of the file's rows was applied to a random
                // subset's positions, with no word), before the file is checked, so that a
                // refusal's indices are read so too (hundred-and-thirty-fourth, N2).
                let moved = inputs
                    .source_rows
                    .as_ref()
                    .is_some_and(|rows| rows.iter().enumerate().any(|(i, &row)| i != row));
                if moved {
                    eprintln!(
                        "note: probe.blocks = {}: its indices count the {} samples drawn, in \
                         their drawn order (the rows of inputs.npy), not the rows of the data \
                         file: {} moved them",
                        ntk_runs::quote::controls_escaped(&path.display().to_string()),
                        inputs.n,
                        ntk_runs::quote::controls_escaped(&inputs.description)
                    );
                }
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
                check_offsets(&bytes).map_err(|reason| Error::Config {
                    key: "probe.weights",
                    value: name.clone(),
                    reason: format!("not a safetensors file: {reason}"),
                })?;
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
                let shown = ntk_runs::quote::controls_escaped(&name);
                let differences = ntk_model::export::config_differences(&net, &bytes)
                    .unwrap_or_else(|why| {
                        eprintln!(
                            "warning: probe.weights = {shown}: the config the file records \
                             (its ntk_model_config metadata) cannot be compared ({why}), so it \
                             is not compared with this run's: its weights are used as they are"
                        );
                        Vec::new()
                    });
                if !differences.is_empty() {
                    let said: Vec<String> = differences
                        .iter()
                        .map(|(key, file, ours)| format!("{key}: {file} -> {ours}"))
                        .collect();
                    eprintln!(
                        "warning: probe.weights = {}: the file was saved from a network whose \
                         config differs from this run's ({}): its weights are used as they are",
                        shown,
                        said.join(", ")
                    );
                }
                check_finite(&net, path, compute.precision)?;
                if compute.precision != Precision::F64 {
                    // The file's own values, in f64, beside the network's.
                    let wide = ntk_kernel::compute::with_precision(&net, Precision::F64);
                    let file = ntk_model::export::load_bytes(wide, &bytes, &name).map_err(|e| {
                        Error::Config {
                            key: "probe.weights",
                            value: name.clone(),
                            reason: e.to_string(),
                        }
                    })?;
                    check_underflow(&net, &file, path, compute.precision)?;
                }
                (net, Some(digest))
            }
            None => (net, None),
        };
        check_kernel_range(cfg, inputs, compute, &net)?;
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

/// One tensor's entry in a safetensors header, as far as its place in the data goes.
#[derive(serde::Deserialize)]
struct Entry {
    #[allow(dead_code)]
    dtype: String,
    #[allow(dead_code)]
    shape: Vec<usize>,
    data_offsets: (usize, usize),
}

/// A JSON object's entries in the order the file writes them.
struct InFileOrder(Vec<(String, serde_json::Value)>);

impl<'de> serde::Deserialize<'de> for InFileOrder {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = InFileOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = m.next_entry()? {
                    entries.push(entry);
                }
                Ok(InFileOrder(entries))
            }
        }
        d.deserialize_map(Entries)
    }
}

/// The tensors' places in the data of a safetensors file (`bytes`), checked as the
/// safetensors crate checks them, but naming the same tensor on every run: the crate reads
/// the header into a hash map, so of tensors with equal `data_offsets` it named one at random.
/// Here the tensors are taken by their offsets, ties in the header's order, and each must begin
/// where the one before it ends (the data holds them without gap or overlap); a name listed
/// twice is refused by name. A header this cannot read is left to the crate's own (fixed)
/// messages.
fn check_offsets(bytes: &[u8]) -> Result<(), String> {
    let Some(header) = bytes
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
        .and_then(|n| usize::try_from(n).ok())
        .and_then(|n| bytes.get(8..8usize.checked_add(n)?))
    else {
        return Ok(());
    };
    let Ok(InFileOrder(entries)) = serde_json::from_slice::<InFileOrder>(header) else {
        return Ok(());
    };
    // A tensor whose own offsets disagree with its data type and shape is named first: the
    // gap or overlap it leaves was blamed on the tensor after it (hundred-and-forty-first
    // hostile round, N3).
    if let Some(culprit) = ntk_model::export::size_culprit(bytes) {
        return Err(culprit);
    }
    let mut tensors: Vec<(&str, (usize, usize))> = Vec::new();
    for (name, value) in &entries {
        if name == "__metadata__" {
            continue;
        }
        let Ok(entry) = serde_json::from_value::<Entry>(value.clone()) else {
            return Ok(());
        };
        if tensors.iter().any(|(n, _)| n == name) {
            return Err(format!("tensor `{name}` is listed twice in the header"));
        }
        tensors.push((name, entry.data_offsets));
    }
    // A stable sort: tensors at equal offsets stay in the header's order.
    tensors.sort_by_key(|t| t.1);
    let mut before: Option<(&str, (usize, usize))> = None;
    for &(name, (s, e)) in &tensors {
        let start = before.map_or(0, |b| b.1.1);
        let after = match before {
            Some((b, (bs, be))) => format!("tensor `{b}` (data_offsets [{bs}, {be}])"),
            None => "the data's start (offset 0)".to_string(),
        };
        let why = if e < s {
            "end before they begin".to_string()
        } else if s < start {
            format!("overlap {after}")
        } else if s > start {
            format!("leave bytes {start}..{s} unused after {after}")
        } else {
            before = Some((name, (s, e)));
            continue;
        };
        return Err(format!(
            "invalid offset for tensor `{name}`: its data_offsets [{s}, {e}] {why}; each \
             tensor's bytes begin where the one before them in the data ends"
        ));
    }
    // Bytes after the last tensor's (eighty-third hostile round, N4: the crate's "incomplete
    // metadata, file not fully covered" read as a file cut short). A file shorter than its
    // offsets say is left to the crate's message.
    let data = bytes.len() - 8 - header.len();
    let end = before.map_or(0, |b| b.1.1);
    if end < data {
        return Err(format!(
            "{} byte(s) after the last tensor's data: the tensors' data_offsets end at {end}, \
             the data holds {data} bytes (something appended to the file, or a header that \
             leaves a tensor out)",
            data - end
        ));
    }
    Ok(())
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
                ntk_model::export::unravel(i, &shape),
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

/// Refuses given weights whose nonzero value (`file`: the network with the file's values in
/// f64) is below the smallest normal number of the network's `precision` once held there
/// (`net`): subnormal, it keeps fewer than the precision's digits, or it is 0 (thirty-fifth
/// hostile round, D2: weights scaled by 1e-50 were all 0 in f32, and the kernel of that
/// network, 0, was reported as "rank 0"). As a value beyond the precision's range is refused
/// ([`check_finite`]), naming the file, the tensor and the entry.
fn check_underflow(net: &Net, file: &Net, path: &Path, precision: Precision) -> crate::Result<()> {
    let normal = match precision {
        Precision::F64 => f64::MIN_POSITIVE,
        _ => f64::from(f32::MIN_POSITIVE),
    };
    for ((name, shape, held), (_, _, given)) in net.tensors().into_iter().zip(file.tensors()) {
        if let Some(i) = (0..held.len()).find(|&i| given[i] != 0.0 && held[i].abs() < normal) {
            return Err(Error::Config {
                key: "probe.weights",
                value: path.display().to_string(),
                reason: format!(
                    "tensor `{name}` (shape {shape:?}) holds {:e} at index {:?}, which is {:e} \
                     in {precision} (probe.precision), below its smallest normal number \
                     {normal:e}: the value underflows, losing its digits or vanishing; \
                     rescale the weights or probe in f64",
                    given[i],
                    ntk_model::export::unravel(i, &shape),
                    held[i]
                ),
            });
        }
    }
    Ok(())
}

/// Refuses, before any work (a dry run too), inputs and weights whose kernel overflows or
/// underflows the run's precision, by the kernel of one input alone computed as the run
/// computes it: that of the largest norm must be finite (its diagonal entry bounds every entry
/// of a positive semi-definite kernel), and the diagonal entry `K(x, x)` of the smallest
/// nonzero norm must be in the precision's normal range, at least its smallest normal
/// number `lambda` (`f32::MIN_POSITIVE`, `f64::MIN_POSITIVE`); in a precision coarser than
/// f64, last, the kernel of both inputs must agree with the same network's in f64 to within
/// a rounding allowance ([`check_kernel_accuracy`]).
///
/// Why `lambda`: with gradual underflow a product carries, beside its relative rounding
/// `u`, an absolute error of at most `u lambda` (Higham, eq. 2.8), so the `m` products summed
/// into `K(x, x)` are off by at most `m u K(x, x)` from rounding and `m u lambda` from
/// underflow; at `K(x, x) >= lambda` underflow adds no more than rounding's own bound, and
/// every entry `K(x, y)` (rounding `m u sqrt(K(x, x) K(y, y))`) is as safe. Below it the
/// kernel silently loses digits (inputs scaled by 1e-21 in f32: kappa 1.4% off) or vanishes
/// ("rank 0"). A zero input is legitimate (its row may be 0) and is passed over; a diagonal of
/// exactly 0 in f32 is the network's own (a ReLU network dead on that input) when the same
/// network in f64 gives 0 too (and the input is not itself below the underflow scale). The
/// error names the data, the row and its norm, and the fix.
///
/// What the diagonal's size guarantees and what it does not. Off the diagonal nothing more
/// can overflow: every Gram factor the routes form obeys `|G(x, y)| <= sqrt(G(x, x) G(y,
/// y))` (Cauchy-Schwarz), so `|K(x, y)| <= sqrt(K(x, x) K(y, y))` and each off-diagonal
/// product is bounded by the diagonal ones'. An off-diagonal entry may underflow (a tiny
/// `K(x, y)` beside normal diagonals) harmlessly: its absolute error `m u lambda` is below
/// rounding's `m u sqrt(K(x, x) K(y, y))`, and only the kernel's error in norm moves its
/// spectrum (Weyl). What the diagonal's size cannot see is an intermediate that underflows
/// and is then multiplied by a large factor: the structured route's `K = sum_l (A A^T) .*
/// (D D^T)` with a layer's inputs at 1e-21 (their Gram `A A^T` about 1e-42, subnormal in f32,
/// three digits) times backpropagated factors at 1e18 (`D D^T` about 1e37) has a normal
/// `K(x, x)` about 1e-5 carrying a relative error of 3e-4, not f32's 6e-8 (given weights
/// scaled so: rank 16 reported for a kernel of rank 4). The same holds for a subnormal
/// activation scaled up by the next layer's weights. No bound on the diagonal's magnitude
/// excludes this, so the kernel is compared with f64's, which has no such underflow at these
/// scales.
/// With BatchNorm's batch statistics (one sample has none) the two inputs are one batch
/// ([`check_batch_pair`]). An MLP without normalization has every input's diagonal checked
/// for an overflow as well ([`overflowing_row`]).
pub(crate) fn check_kernel_range(
    cfg: &ProbeConfig,
    inputs: &Inputs,
    compute: &Compute,
    net: &Net,
) -> crate::Result<()> {
    let batch = cfg.probe.batch_norm_statistics == Some(BnStatistics::Batch);
    if inputs.n == 0 {
        return Ok(());
    }
    let d = inputs.d.max(1);
    // Scaled by the largest entry, so that neither tiny nor huge rows round their squares
    // to 0 or infinity.
    let norm = |r: usize| {
        let row = &inputs.x[r * d..(r + 1) * d];
        let m = row.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        if m == 0.0 || !m.is_finite() {
            return m;
        }
        m * row.iter().map(|v| (v / m) * (v / m)).sum::<f64>().sqrt()
    };
    let row = (0..inputs.n)
        .max_by(|&a, &b| norm(a).total_cmp(&norm(b)))
        .unwrap_or(0);
    let kernel_of =
        |row: usize, compute: &Compute, net: &Net, scaled: bool| -> crate::Result<KernelResult> {
            let mut one = inputs.select(&[row]);
            if scaled && let Some((x, _)) = ntk_kernel::theory::row_angle::pow2_scaled(&one.x) {
                one.x = x;
            }
            probe_kernel(cfg, net, &one, compute, &mut host::HostCache::default())
        };
    if batch {
        let smallest = (0..inputs.n)
            .filter(|&r| norm(r) > 0.0)
            .min_by(|&a, &b| norm(a).total_cmp(&norm(b)));
        return match smallest.filter(|&s| s != row) {
            Some(small) => check_batch_pair(cfg, inputs, compute, net, [row, small]),
            None => Ok(()),
        };
    }
    let largest = kernel_of(row, compute, net, false)?;
    let k = &largest.kernel;
    // The theory's kernel has no diagonal formed ahead of it ([`overflowing_row`]): the
    // largest input's K(x, x), n times over, bounds its trace, which bounds lambda_max; past
    // f64's range the run may refuse lambda_max once the kernel is formed, said now as the
    // other routes say it (hundred-and-thirteenth hostile round, D3: SELU's theory at rows of
    // norm 1e154, rc 0 from the dry run with no note, refused by the run).
    if cfg.probe.method == Method::Theory && k.data.iter().all(|v| v.is_finite()) {
        let top = (0..k.size).map(|i| k.get(i, i)).fold(0.0, f64::max);
        if !(top * inputs.n as f64).is_finite() {
            eprintln!(
                "note: {}: the infinite-width K(x, x) of the largest input, {top:.3e}, times n \
                 = {} passes f64's largest number: the kernel's trace, and so its lambda_max, \
                 may too, which the run refuses once the kernel is formed; rescale the inputs \
                 down",
                ntk_runs::quote::controls_escaped(&inputs.description),
                inputs.n
            );
        }
    }
    let overflow = if k.data.iter().all(|v| v.is_finite()) {
        overflowing_row(cfg, inputs, compute, net)
    } else {
        Some((row, None))
    };
    let Some((row, value)) = overflow else {
        // The outputs the kernel is of, for the proof of a 0 (`check_kernel_normal`).
        let outputs = cfg.probe.output.outputs(net.spec().classes());
        let smallest = (0..inputs.n)
            .filter(|&r| norm(r) > 0.0)
            .min_by(|&a, &b| norm(a).total_cmp(&norm(b)));
        let mut checked = vec![(row, norm(row), largest)];
        if let Some(small) = smallest {
            let result = kernel_of(small, compute, net, false)?;
            check_kernel_normal(
                inputs,
                compute,
                (net, cfg.probe.weights.as_deref(), &outputs),
                (small, norm(small), "the smallest nonzero"),
                &result,
                &kernel_of,
            )?;
            if small != row {
                checked.push((small, norm(small), result));
            }
        }
        // The largest norm's too: where the smallest is dead (its 0 the network's own), the
        // others may still underflow (thirty-fifth hostile round, D2).
        if smallest.is_some_and(|small| small != row) {
            check_kernel_normal(
                inputs,
                compute,
                (net, cfg.probe.weights.as_deref(), &outputs),
                (row, norm(row), "the largest"),
                &checked[0].2,
                &kernel_of,
            )?;
        }
        // And every input whose own `K(x, x)`, read off the diagonal at each output, is
        // subnormal or an underflowing 0: a live row of a tiny norm beside a dead smallest one
        // kept its subnormal 1.4e-319 (hundred-and-eighth hostile round, D3).
        for r in underflow_candidates(cfg, inputs, compute, net) {
            if Some(r) == smallest || r == row {
                continue;
            }
            check_kernel_normal(
                inputs,
                compute,
                (net, cfg.probe.weights.as_deref(), &outputs),
                (r, norm(r), "its K(x, x) below the normal range"),
                &kernel_of(r, compute, net, false)?,
                &kernel_of,
            )?;
        }
        return check_kernel_accuracy(inputs, compute, net, &checked, &kernel_of);
    };
    // The theory's kernel has no weights: said as `ntk-probe theory` says it, with the layer
    // its recursion leaves f64's range at (hundred-and-tenth hostile round, D3: "the seeded
    // network's weights", "1/fan_in").
    if cfg.probe.method == Method::Theory
        && let Net::Mlp(m) = net
    {
        let depth = m.depth();
        let leaves = ntk_kernel::theory::Scaling::of(m.config())
            .ok()
            .and_then(|scaling| {
                let dual = ntk_kernel::theory::DualEvaluator::new(m.activation());
                ntk_kernel::theory::layer_leaving_range_of(&dual, &scaling, &inputs.x, d)
            });
        let at = match leaves {
            Some(l) => format!("at layer {l} of {depth}"),
            None => "at its last layer".to_string(),
        };
        return Err(Error::Config {
            key: "model.depth",
            value: depth.to_string(),
            reason: format!(
                "{}: {}, of norm {:.3e}: the infinite-width recursion of {} \
                 (probe.method = \"theory\") leaves f64's range {at}, so its kernel K(x, x) \
                 is not finite (overflow); a shallower network",
                inputs.description,
                inputs.row_words(row),
                norm(row),
                m.activation()
            ),
        });
    }
    let what = match value {
        Some(v) if v.is_finite() => format!(
            "K(x, x) = {v:.3e} within the rounding allowance of {}'s largest number",
            compute.precision
        ),
        // What overflows may be the square norm of the output layer's inputs, which the
        // kernel's routes form before its scale beta^2 = 1/fan_in (thirty-eighth hostile
        // round, D1: refused at K(x, x) = 2.9e307, a sixth of f64's largest number, with a
        // message that said K(x, x) was not finite); a hidden layer's factors are formed at
        // powers of two (hundred-and-twenty-second, D2).
        _ => format!(
            "K(x, x) that is not finite in {} as the run forms it (K(x, x) itself, or the \
             square norm |a_L|^2 of the output layer's inputs, formed before its scale \
             1/fan_in and so up to fan_in times larger)",
            compute.precision
        ),
    };
    let at = format!(
        "{}: {}, of norm {:.3e}, has a kernel entry {what} (overflow)",
        inputs.description,
        inputs.row_words(row),
        norm(row),
    );
    if compute.precision == Precision::F32 {
        return Err(Error::Config {
            key: "probe.precision",
            value: "\"f32\"".into(),
            reason: match &cfg.probe.weights {
                Some(p) => format!(
                    "{at} with the weights of probe.weights = {}; rescale the inputs or the \
                     weights, or probe in f64",
                    p.display()
                ),
                None => format!("{at}; rescale the inputs or probe in f64"),
            },
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

/// [`check_kernel_range`] with BatchNorm's batch statistics, which one sample alone has not:
/// the kernel of the two inputs `rows` (the largest norm and the smallest nonzero one) as a
/// batch must be finite, and its diagonal at least the precision's smallest normal number
/// (thirty-seventh hostile round, D1: a BatchNorm MLP's weights scaled by 1e-100 gave "rank
/// 0" under batch statistics, where this check was skipped). A 0 there cannot be told from
/// an underflow (a normalized network), so it is refused with the rest.
fn check_batch_pair(
    cfg: &ProbeConfig,
    inputs: &Inputs,
    compute: &Compute,
    net: &Net,
    rows: [usize; 2],
) -> crate::Result<()> {
    let two = inputs.select(&rows);
    let k = probe_kernel(cfg, net, &two, compute, &mut host::HostCache::default())?.kernel;
    let normal = match compute.precision {
        Precision::F64 => f64::MIN_POSITIVE,
        _ => f64::from(f32::MIN_POSITIVE),
    };
    // The sample of the kernel's index `i` (one per output with probe.output = "full").
    let at = |i: usize| rows[(i / (k.size / 2).max(1)).min(1)];
    if let Some(i) = k.data.iter().position(|v| !v.is_finite()) {
        return Err(Error::Config {
            key: "probe.batch_norm_statistics",
            value: "\"batch\"".into(),
            reason: format!(
                "{}: rows {} and {} (counted from 0, as numpy indexes them) as a batch have a kernel entry that is not finite in {} \
                 (overflow, at row {}); rescale the inputs or the weights",
                inputs.description,
                inputs.source_row(rows[0]),
                inputs.source_row(rows[1]),
                compute.precision,
                inputs.source_row(at(i / k.size))
            ),
        });
    }
    if let Some(i) = (0..k.size).find(|&i| k.data[i * k.size + i] < normal) {
        return Err(Error::Config {
            key: "probe.batch_norm_statistics",
            value: "\"batch\"".into(),
            reason: format!(
                "{}: rows {} and {} (counted from 0, as numpy indexes them) as a batch: row {} has a kernel entry K(x, x) = {:.3e}, \
                 below the smallest normal {} number ({normal:.3e}): the kernel underflows, \
                 its entries losing digits or vanishing (a 0 of the network's own cannot be \
                 told from an underflow in a normalized network); rescale the weights or the \
                 inputs",
                inputs.description,
                inputs.source_row(rows[0]),
                inputs.source_row(rows[1]),
                inputs.source_row(at(i)),
                k.data[i * k.size + i],
                compute.precision
            ),
        });
    }
    Ok(())
}

/// The kernel of one row (`row`, the data's row index), in `compute`'s precision with `net`.
/// The last argument: the row scaled by the power of two that brings its largest magnitude
/// into `[1, 2)` (false: as it is), for a network linear in its input's scale ([`ntk_kernel::underflow::linear_in_input_scale`]).
type KernelOf<'a> = dyn Fn(usize, &Compute, &Net, bool) -> crate::Result<KernelResult> + 'a;

/// [`check_kernel_range`]'s underflow half: the kernel of the input `row` of the smallest
/// nonzero `norm` alone must have its diagonal entries at or above the smallest that its
/// route forms without underflow, or exactly 0 where the network in f64 gives 0 too. That
/// smallest is the precision's smallest normal number `lambda` where the kernel's products are
/// formed in the run's precision (the structured routes, host and device); the theory forms
/// its kernel in f64 (f64's `lambda`); the autodiff route forms it in f64 from gradients in
/// the run's precision, whose underflow (an absolute error of at most `u lambda` each) moves
/// `K(x, x) = sum g^2` by at most `2 u lambda sum |g| <= 2 u lambda sqrt(P K(x, x))` over `P`
/// parameters, within rounding's `u K(x, x)` from `K(x, x) >= 4 P lambda^2` on.
fn check_kernel_normal(
    inputs: &Inputs,
    compute: &Compute,
    (net, weights, outputs): (&Net, Option<&Path>, &[usize]),
    (row, norm, which): (usize, f64, &str),
    result: &KernelResult,
    kernel_of: &KernelOf<'_>,
) -> crate::Result<()> {
    let (normal, limit) = match compute.precision {
        Precision::F64 => (f64::MIN_POSITIVE, "f64::MIN_POSITIVE".to_string()),
        _ => (
            f64::from(f32::MIN_POSITIVE),
            "f32::MIN_POSITIVE".to_string(),
        ),
    };
    let k = &result.kernel;
    let (smallest, limit) = match result.route {
        Route::Theory => (
            f64::MIN_POSITIVE,
            format!(
                "f64::MIN_POSITIVE = {:.3e}: the theory's kernel is formed in f64",
                f64::MIN_POSITIVE
            ),
        ),
        Route::Autodiff if compute.precision != Precision::F64 => {
            let p: usize = net.tensors().iter().map(|t| t.2.len()).sum();
            (
                4.0 * p as f64 * normal * normal,
                format!(
                    "4 P lambda^2 = {:.3e} with the {p} parameters and lambda = {limit}: the \
                     autodiff route forms the kernel in f64 from gradients in {}",
                    4.0 * p as f64 * normal * normal,
                    compute.precision
                ),
            )
        }
        _ => (
            normal,
            format!(
                "the smallest normal {} number, {limit} = {normal:.3e}",
                compute.precision
            ),
        ),
    };
    let lambda = normal;
    let normal = smallest;
    let diagonal: Vec<f64> = (0..k.size).map(|i| k.data[i * k.size + i]).collect();
    let Some(&low) = diagonal.iter().min_by(|a, b| a.total_cmp(b)) else {
        return Ok(());
    };
    if low >= normal {
        return Ok(());
    }
    // A full kernel's row has one entry per output: the one refused is named (hundred-and-
    // twenty-first hostile round, N1: "row 0 has a kernel entry K(x, x) = 0" of two outputs,
    // one the network's own 0). The smallest entry's, unless a proof below names another.
    let per_output = diagonal.len() > 1;
    let mut output = diagonal.iter().position(|v| *v == low);
    // A diagonal of exactly 0 may be the network's own (no gradient on this input): so it is
    // when the input's own squared norm is a normal number of the precision (else the input
    // itself underflows: in f32 below a norm of about 1.1e-19, in f64 1.5e-154) and the
    // network in f64, its weight tensors scaled by powers of two where that keeps a zero of
    // its own ([`ntk_kernel::underflow::pow2_normalized`]), gives exactly 0 as well (thirty-fifth hostile round, D2:
    // weights scaled by 1e-85, whose kernel underflows to 0 in f64, were "rank 0").
    let input_normal = norm >= lambda.sqrt();
    // What the zero diagonal is, where the comparison below tells: (why, fix).
    let mut told: Option<(String, &str)> = None;
    if low == 0.0 && result.route == Route::Theory {
        // The infinite-width kernel has no dead unit: its diagonal is positive at every
        // nonzero input, so its 0 is always an underflow.
        told = Some((
            "; the infinite-width kernel is positive at every nonzero input, so the 0 is an \
             underflow"
                .to_string(),
            // Deep layers can take a unit input's kernel to 0 (ReLU^2 at depth 100:
            // hundred-and-tenth hostile round, N3).
            "rescale the inputs (toward unit norm), or a shallower network",
        ));
    } else if low == 0.0 && diagonal.iter().all(|v| *v == 0.0 || *v >= normal) {
        let f64c = Compute {
            precision: Precision::F64,
            ..compute.clone()
        };
        let wide = match compute.precision {
            Precision::F64 => Some(net.clone()),
            _ => f64c
                .device
                .supports_dtype(burn::tensor::FloatDType::F64)
                .then(|| ntk_kernel::compute::with_precision(net, Precision::F64)),
        };
        let Some(wide) = wide else {
            return Ok(());
        };
        // The network in f64 with its layers scaled by powers of two where that keeps a 0 of
        // its own ([`ntk_kernel::underflow::pow2_normalized`]: an MLP without biases or normalization); any other
        // network's 0 cannot be told from an underflow (thirty-seventh hostile round, D1:
        // a BatchNorm MLP's weights scaled by 1e-140 gave 0 where the kernel is 2.4e-281,
        // a normal number, and scaling its layers did not undo it), so it is refused.
        let d = inputs.d;
        let largest_entry = inputs.x[row * d..(row + 1) * d]
            .iter()
            .fold(0.0_f64, |m, v| m.max(v.abs()));
        // A network linear in its input's scale is proved on its input scaled instead, as
        // `ntk_kernel::underflow` proves the trainer's; with that proof an input whose own
        // square underflows is told too (hundred-and-seventh hostile round, D3: a dead ReLU
        // network's own 0 at a row of 1e-200 was refused as an underflow).
        let by_inputs = ntk_kernel::underflow::linear_in_input_scale(&wide);
        let first = if by_inputs { 1.0 } else { largest_entry };
        // The tool's own weights are at their init's scale: the inputs are what to rescale
        // (hundred-and-second hostile round: inputs of norm 1e-60 were told to "rescale the
        // weights").
        let fix = match (weights, compute.precision) {
            (Some(_), Precision::F64) => "rescale the weights or the inputs (toward unit norm)",
            (Some(_), _) => "rescale the weights or the inputs (toward unit norm), or probe in f64",
            (None, Precision::F64) => "rescale the inputs (toward unit norm)",
            (None, _) => "rescale the inputs (toward unit norm) or probe in f64",
        };
        // ReLU^2 squares its scale at every layer: proved on the network renormalized at this
        // input (hundred-and-fourteenth hostile round, D4; hundred-and-sixteenth, D3).
        let squares = ntk_kernel::underflow::squares_its_scale(&wide)
            .then(|| ntk_kernel::underflow::renormalized_proofs(&wide, inputs, &[row]))
            .flatten()
            .and_then(|p| p.first().copied());
        if let Some(proof) = squares {
            let Some(reason) = proof.reason() else {
                return Ok(());
            };
            // A value lost within the pass is no matter of overall scale (hundred-and-
            // seventeenth hostile round, D5: "rescale toward unit norm" at a unit row).
            told = Some((format!("; {reason}"), proof.remedy().unwrap_or(fix)));
        } else {
            let original = wide.clone();
            let scaled = ntk_kernel::underflow::pow2_normalized(&wide, first)?;
            let provable = scaled.is_some();
            // Neither provable nor a normal input: not told, refused below as an underflow.
            if provable || input_normal {
                let wide = scaled.unwrap_or(wide);
                let (top, at) = if compute.precision == Precision::F64 && !provable {
                    (0.0, None)
                } else {
                    // A full kernel's row per output: only the outputs whose entry is 0 are
                    // proved (hundred-and-twentieth hostile round, D1: output 1's 3.675 made
                    // output 0's own 0 an underflow).
                    let k64 = kernel_of(row, &f64c, &wide, by_inputs)?.kernel;
                    (0..k64.size)
                        .filter(|&i| k64.size != diagonal.len() || diagonal[i] == 0.0)
                        .map(|i| (k64.data[i * k64.size + i], Some(i)))
                        .fold((0.0, None), |m, e| if e.0 > m.0 { e } else { m })
                };
                if top > 0.0 && per_output {
                    output = at;
                }
                let how = ntk_kernel::underflow::proof_scaling(by_inputs);
                // A 0 of the proof network may be a value it lost below f64's normal range
                // (hundred-and-eighteenth hostile round, D2).
                let lost = (provable && top == 0.0)
                    .then(|| {
                        let x = &inputs.x[row * d..(row + 1) * d];
                        // A full kernel's zero outputs alone; a summed or single one's, all.
                        let zero: Vec<usize> = match diagonal.len() {
                            1 => outputs.to_vec(),
                            _ => (0..diagonal.len())
                                .filter(|&o| diagonal[o] == 0.0)
                                .collect(),
                        };
                        // The proof network where it is the network up to positive scales,
                        // else the network itself (`ntk_kernel::underflow::proof_loses`).
                        let of = if by_inputs { &wide } else { &original };
                        if !per_output {
                            return ntk_kernel::underflow::proof_loses(of, x, by_inputs, &zero);
                        }
                        // Each zero output alone, so that the refusal names the one it proves.
                        zero.iter().find_map(|&o| {
                            let lost = ntk_kernel::underflow::proof_loses(of, x, by_inputs, &[o]);
                            lost.inspect(|_| output = Some(o))
                        })
                    })
                    .flatten();
                told = Some(match (provable, top > 0.0, lost) {
            (true, false, Some(lost)) => (
                format!(
                    "; {}",
                    ntk_kernel::underflow::proof_words(&lost, by_inputs.then_some(how))
                ),
                ntk_kernel::underflow::proof_remedy(&lost, fix),
            ),
            (true, false, None) => return Ok(()),
            (true, true, _) => (
                format!(
                    "; the same network in f64 with {how}, which keeps a zero of the network's \
                     own, such as a dead ReLU layer, has K(x, x) = {top:.3e}, so the 0 is an \
                     underflow"
                ),
                fix,
            ),
            (false, true, _) => (
                format!(
                    "; the same network in f64 has K(x, x) = {top:.3e}, so the 0 is an underflow"
                ),
                "rescale the weights or inputs, or probe in f64",
            ),
            (false, false, _) => (
                "; a 0 of this network's own (no gradient at this input) cannot be told from an \
                 underflow here: only an MLP without biases or normalization can be scaled to \
                 tell them apart"
                    .to_string(),
                // A structural 0 (a normalization's scale and shift 0) no rescaling helps
                // (eighty-seventh hostile round, N5).
                "rescale the weights or the inputs if they are far from unit scale; a network \
                 whose gradient is 0 here by construction (a layer of zero weights, a \
                 normalization's scale and shift 0) has no kernel to condition at this input",
            ),
        });
            }
        }
    }
    // Given weights named in every case, f64 too (eighty-seventh hostile round, N5).
    let told = told.map(|(why, fix)| match weights {
        Some(p) => (
            format!("{why}; the weights are probe.weights = {}", p.display()),
            fix,
        ),
        None => (why, fix),
    });
    // Given weights may be the cause as much as the inputs: named, as the overflow's
    // refusal names them (eighty-third hostile round, D3: weights scaled by 1e-10 were
    // refused with advice to rescale inputs of unit norm).
    let (why, fix) = told.unwrap_or_else(|| match weights {
        Some(p) => (
            format!(", with the weights of probe.weights = {}", p.display()),
            match compute.precision {
                Precision::F64 => "rescale the weights or the inputs (toward unit norm)",
                _ => "rescale the weights or the inputs (toward unit norm), or probe in f64",
            },
        ),
        None => (
            String::new(),
            match (result.route, compute.precision) {
                (Route::Theory, _) => {
                    "rescale the inputs (toward unit norm), or a shallower network"
                }
                (_, Precision::F64) => "rescale the inputs (toward unit norm)",
                _ => "rescale the inputs (toward unit norm) or probe in f64",
            },
        ),
    });
    let entry = match output.filter(|_| per_output) {
        Some(o) => format!("K(x, x) of output {o} = {:.3e}", diagonal[o]),
        None => format!("K(x, x) = {low:.3e}"),
    };
    Err(Error::Config {
        key: "probe.precision",
        value: format!("\"{}\"", compute.precision),
        reason: format!(
            "{}: {}, of norm {norm:.3e} ({which}), has a kernel entry {entry}, below \
             {limit}: the kernel underflows, its entries losing digits or vanishing{why}; {fix}",
            inputs.description,
            inputs.row_words(row)
        ),
    })
}

/// The first input whose kernel overflows the run's precision, by every input's diagonal
/// `K(x, x)` ([`ntk_kernel::host::diagonal`], one forward and backward over all inputs in
/// the run's precision, `O(n P)` work, the diagonal formed as the route forms it: in that
/// precision on the structured routes, from the gradient's entries summed in f64 on the
/// autodiff route), with its value: for an MLP without normalization
/// (whose kernel is the structured formula, whichever route forms it). An entry beyond the
/// precision's largest number divided by `1 + 4 m u` ([`rounding_allowance`]) counts: the
/// route forms the same sums in another order, within that rounding. Given weights can make
/// an input other than the largest-norm one overflow (thirty-seventh hostile round, D3: a
/// weight of 1e300 on a unit dead at that input), which the run would refuse after its work
/// and `--dry-run` did not. `None` for other networks (a ResNet's or a normalized MLP's
/// diagonal costs its Jacobian: the two inputs [`check_kernel_range`] computes stand for
/// them) and for the theory (no weights: its kernel grows with the input's norm).
fn overflowing_row(
    cfg: &ProbeConfig,
    inputs: &Inputs,
    compute: &Compute,
    net: &Net,
) -> Option<(usize, Option<f64>)> {
    let Net::Mlp(mlp) = net else {
        return None;
    };
    if cfg.probe.method == Method::Theory
        || ntk_kernel::structured::unsupported_reason(mlp).is_some()
    {
        return None;
    }
    let outputs = cfg.probe.output.outputs(mlp.config().output_dim);
    let per_output = cfg.probe.output == OutputMode::Full;
    let (x, n) = (&inputs.x, inputs.n);
    use ntk_kernel::host::diagonal::{Formed, largest_diagonal};
    // The autodiff route sums the gradient's squares in f64 (its kernel's largest number is
    // f64's); the structured routes form everything in the run's precision.
    let formed = match cfg.probe.method {
        Method::Autodiff => Formed::FromGradients,
        _ => Formed::InPrecision,
    };
    let largest = match (formed, compute.precision) {
        (Formed::FromGradients, _) | (_, Precision::F64) => f64::MAX,
        (Formed::InPrecision, Precision::F32) => f64::from(f32::MAX),
    };
    let diagonal = match compute.precision {
        Precision::F32 => largest_diagonal::<f32>(mlp, (x, n), &outputs, per_output, formed),
        Precision::F64 => largest_diagonal::<f64>(mlp, (x, n), &outputs, per_output, formed),
    };
    let limit = largest / (1.0 + rounding_allowance(net, compute.precision).1);
    // Every entry in range, but their sum, the kernel's trace, out of f64's: lambda_max is
    // at most the trace and at least its n-th, so it may pass f64's range, which the run
    // refuses once the kernel is formed (ninety-ninth hostile round, D3). Said before any
    // work, so that the dry run does not say only "new".
    if diagonal.iter().all(|v| *v <= limit) && !diagonal.iter().sum::<f64>().is_finite() {
        eprintln!(
            "note: {}: the kernel's trace (the sum of its diagonal K(x, x)) passes f64's \
             largest number, so its lambda_max may too, which the run refuses once the kernel \
             is formed; rescale the inputs or the weights down",
            ntk_runs::quote::controls_escaped(&inputs.description)
        );
    }
    // A NaN counts as an overflow too.
    let row = diagonal.iter().position(|v| v.is_nan() || *v > limit)?;
    Some((row, Some(diagonal[row])))
}

/// The inputs whose diagonal `K(x, x)` is below the precision's smallest normal number at
/// some output ([`ntk_kernel::underflow::suspects`], as ntk-train's dry run takes them: the
/// first subnormal one, else every zero the network scaled by powers of two proves an
/// underflow, however many), each for [`check_kernel_normal`] to check on its kernel; none
/// for a network the diagonal does not cover; the theory's by
/// [`theory_underflow_candidates`].
fn underflow_candidates(
    cfg: &ProbeConfig,
    inputs: &Inputs,
    compute: &Compute,
    net: &Net,
) -> Vec<usize> {
    let Net::Mlp(mlp) = net else {
        return Vec::new();
    };
    if cfg.probe.method == Method::Theory {
        return theory_underflow_candidates(mlp, inputs);
    }
    let outputs = cfg.probe.output.outputs(mlp.config().output_dim);
    let per_output = cfg.probe.output == OutputMode::Full;
    ntk_kernel::underflow::suspects(mlp, inputs, &outputs, per_output, compute.precision)
        .unwrap_or_default()
}

/// The first input whose infinite-width `K(x, x)`, the theory's kernel of that input alone
/// (its diagonal entry: each entry is formed from its pair alone), is below f64's smallest
/// normal number, for an activation in closed form (`n L` dual-kernel evaluations of about
/// 100 ns). The smallest norm's row is not always that input: ReLU^2's kernel goes as
/// `|x|^(2^(L+1))`, so a row one rounding below unit norm underflows from depth 63 where the
/// unit rows are 3e8 (hundred-and-twelfth hostile round, D3: its 0 was written, rank 2, rc
/// 0). None where the recursion is by quadrature (its kernel grows with the input's norm,
/// which the smallest norm's check covers) or does not cover the network.
fn theory_underflow_candidates(mlp: &ntk_model::Mlp, inputs: &Inputs) -> Vec<usize> {
    let Ok(scaling) = ntk_kernel::theory::Scaling::of(mlp.config()) else {
        return Vec::new();
    };
    let dual = ntk_kernel::theory::DualEvaluator::new(mlp.activation());
    if !dual.is_closed_form() {
        return Vec::new();
    }
    let d = inputs.d;
    (0..inputs.n)
        .find(|&r| {
            let row = &inputs.x[r * d..(r + 1) * d];
            row.iter().any(|v| *v != 0.0) && {
                let k = ntk_kernel::theory::infinite_width_kernels_scaled(
                    row,
                    1,
                    d,
                    &dual,
                    &scaling,
                    &|_| {},
                )
                .ntk;
                k.data[0] < f64::MIN_POSITIVE
            }
        })
        .into_iter()
        .collect()
}

/// `(m, 4 m u)`: the sum `m` over the network's weight tensors of their larger fan (a
/// matrix's rows or columns, a convolution's output channels or inputs per output), and the
/// allowance `4 m u` relative to the kernel's scale, `u` the `precision`'s unit roundoff: the
/// order of the worst-case rounding bound of the sums and products that form `K(x, x)`
/// through the forward pass, the backward pass and the Gram products (`m u` each).
fn rounding_allowance(net: &Net, precision: Precision) -> (usize, f64) {
    let m: usize = net
        .tensors()
        .iter()
        .filter(|t| t.1.len() >= 2)
        .map(|t| t.1[0].max(t.1[1..].iter().product()))
        .sum();
    (m, 4.0 * m as f64 * precision.epsilon() / 2.0)
}

/// [`check_kernel_range`]'s last part, in a precision coarser than f64: the kernel of each
/// `checked` input alone (row, norm, the kernel as the run computed it) must agree with the
/// same network's in f64, entry by entry, to within `4 m u` of `sqrt(K(x, x) K(y, y))` (the
/// f64 kernel's diagonal; the entries of one input's `k x k` kernel with `probe.output =
/// "full"`), where `u` is the precision's unit roundoff and `m` the sum over the network's
/// weight tensors of their larger fan (a matrix's rows or columns, a convolution's output
/// channels or inputs per output): the order of the worst-case rounding bound of the sums and
/// products that form `K(x, x)` through the forward pass, the backward pass and the Gram
/// products (`m u` each). Rounding alone stays far inside it (measured in f32: 4.5 u at depth 2
/// and width 24, 26 u at depth 6 and width 256, where the allowance is 288 u and 7,200 u); an
/// intermediate that underflows and is scaled up by a large factor, which the diagonal's size
/// cannot see (see [`check_kernel_range`]), breaks it by orders of magnitude. Passed over
/// where the route forms the kernel in f64 from f64 quantities (the theory) and where the
/// device holds no f64 (nothing to compare with). An f64 run has no wider precision to
/// compare with: there the diagonal's range is all that is checked.
fn check_kernel_accuracy(
    inputs: &Inputs,
    compute: &Compute,
    net: &Net,
    checked: &[(usize, f64, KernelResult)],
    kernel_of: &KernelOf<'_>,
) -> crate::Result<()> {
    if compute.precision == Precision::F64 {
        return Ok(());
    }
    let f64c = Compute {
        precision: Precision::F64,
        ..compute.clone()
    };
    if !f64c.device.supports_dtype(burn::tensor::FloatDType::F64) {
        return Ok(());
    }
    let (m, allowance) = rounding_allowance(net, compute.precision);
    let net64 = ntk_kernel::compute::with_precision(net, Precision::F64);
    for (row, norm, result) in checked {
        if result.route == Route::Theory {
            continue;
        }
        let k = &result.kernel;
        let k64 = kernel_of(*row, &f64c, &net64, false)?.kernel;
        let n = k.size;
        let worst = (0..n * n)
            .map(|e| {
                let (i, j) = (e / n, e % n);
                let scale = (k64.data[i * n + i] * k64.data[j * n + j]).abs().sqrt();
                let error = (k.data[e] - k64.data[e]).abs();
                (e, if error == 0.0 { 0.0 } else { error / scale })
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((e, relative)) = worst else {
            continue;
        };
        if relative <= allowance {
            continue;
        }
        let at = if n == 1 {
            "K(x, x)".to_string()
        } else {
            format!("K(x, x)[{}, {}]", e / n, e % n)
        };
        return Err(Error::Config {
            key: "probe.precision",
            value: format!("\"{}\"", compute.precision),
            reason: format!(
                "{}: {}, of norm {norm:.3e}, has a kernel entry {at} = {:.6e} in {} \
                 against {:.6e} in f64, a relative error of {relative:.1e}, beyond the \
                 rounding allowance 4 m u = {allowance:.1e} (m = {m}, the layers' larger fans \
                 summed): an intermediate of the kernel (a layer's inputs, its backpropagated \
                 factors, their Gram products) underflows {} and is scaled up by a large \
                 factor, which the diagonal's magnitude does not show (weights or inputs of \
                 very different scales); rescale the inputs or the weights, or probe in f64",
                inputs.description,
                inputs.row_words(*row),
                k.data[e],
                compute.precision,
                k64.data[e],
                compute.precision,
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_offsets;

    /// A safetensors file of F64 tensors of shape [2] with the given names and offsets, in
    /// this order in its header, and 16 bytes of data per tensor.
    fn file(tensors: &[(&str, [usize; 2])]) -> Vec<u8> {
        let entries: Vec<String> = tensors
            .iter()
            .map(|(n, [s, e])| {
                format!("\"{n}\":{{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[{s},{e}]}}")
            })
            .collect();
        let header = format!("{{\"__metadata__\":{{\"a\":\"b\"}},{}}}", entries.join(","));
        raw(&header, 16 * tensors.len())
    }

    /// A safetensors file of the header `header` and `data` bytes of zeros.
    fn raw(header: &str, data: usize) -> Vec<u8> {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend(header.as_bytes());
        bytes.extend(vec![0u8; data]);
        bytes
    }

    #[test]
    fn offsets_are_checked_naming_the_same_tensor_every_time() {
        let good = file(&[("b", [16, 32]), ("a", [0, 16]), ("c", [32, 48])]);
        assert_eq!(check_offsets(&good), Ok(()));
        // Four tensors on the same bytes: the second in the header is named, every time.
        let tied = file(&[
            ("w", [0, 16]),
            ("x", [0, 16]),
            ("y", [0, 16]),
            ("z", [0, 16]),
        ]);
        for _ in 0..2 {
            let e = check_offsets(&tied).unwrap_err();
            assert_eq!(
                e,
                "invalid offset for tensor `x`: its data_offsets [0, 16] overlap tensor `w` \
                 (data_offsets [0, 16]); each tensor's bytes begin where the one before them \
                 in the data ends"
            );
        }
        let gap = check_offsets(&file(&[("a", [0, 16]), ("b", [24, 40])])).unwrap_err();
        assert!(
            gap.contains("tensor `b`") && gap.contains("bytes 16..24 unused"),
            "{gap}"
        );
        // A tensor whose own offsets are short of its size is named, not the one after the
        // gap it leaves (hundred-and-forty-first hostile round, N3).
        let short = check_offsets(&file(&[("a", [0, 8]), ("b", [16, 32])])).unwrap_err();
        assert!(
            short.starts_with("tensor `a` (F64, shape [2])") && short.contains("take 16 bytes"),
            "{short}"
        );
        let first = check_offsets(&file(&[("a", [8, 24])])).unwrap_err();
        assert!(first.contains("after the data's start"), "{first}");
        let backwards = check_offsets(&file(&[("a", [0, 16]), ("b", [16, 8])])).unwrap_err();
        assert!(
            backwards.contains("`b`") && backwards.contains("end before"),
            "{backwards}"
        );
        let mut trailing = file(&[("a", [0, 16]), ("b", [16, 32])]);
        trailing.extend_from_slice(&[0; 5]);
        let e = check_offsets(&trailing).unwrap_err();
        assert!(e.contains("5 byte(s) after the last tensor's data"), "{e}");
        let twice = check_offsets(&file(&[("a", [0, 16]), ("a", [16, 32])])).unwrap_err();
        assert_eq!(twice, "tensor `a` is listed twice in the header");
        // What this does not read is left to the crate: a short file, a header that is not
        // JSON, an entry without its dtype.
        assert_eq!(check_offsets(b"abc"), Ok(()));
        assert_eq!(check_offsets(&raw("{{{{", 0)), Ok(()));
        let mut beyond = raw("{}", 0);
        beyond[0] = 200;
        assert_eq!(check_offsets(&beyond), Ok(()));
        let no_dtype =
            r#"{"a":{"shape":[2],"data_offsets":[0,16]},"b":{"shape":[2],"data_offsets":[0,16]}}"#;
        assert_eq!(check_offsets(&raw(no_dtype, 32)), Ok(()));
    }
}
