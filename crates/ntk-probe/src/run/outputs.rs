//! The files of a probe's output set ([`write_outputs`]).

use super::*;

/// Writes summary.json, inputs.npy, ntk.npy, eigenvalues.npy, blocks.csv for the blocks
/// protocol (and weights.safetensors with the network's outputs on the inputs,
/// outputs.npy, `n x k`), each atomically; summary.json last, so its presence
/// means the run finished, with every other file of the set recorded in it by size and
/// SHA-256 (`summary.files`, [`ntk_runs::manifest`]: checked before the set is kept). Sweeps
/// pass no inputs or kernel (they keep only the summary, the eigenvalues and the blocks).
pub fn write_outputs(
    dir: &Path,
    summary: &mut Summary,
    inputs: Option<&Inputs>,
    kernel: Option<&Kernel>,
    eigenvalues: &[f64],
    blocks: Option<&[BlockRow]>,
    weights: Option<(&Net, &[f64])>,
) -> crate::Result<()> {
    let ctx = |action: &'static str, source: std::io::Error| Error::CannotWrite {
        dir: dir.to_path_buf(),
        action,
        source,
    };
    write_arrays(dir, inputs, kernel)?;
    npy::write_f64(
        &dir.join("eigenvalues.npy"),
        eigenvalues,
        &[eigenvalues.len() as u64],
    )
    .map_err(|e| ctx("write eigenvalues.npy", e))?;
    if let Some(blocks) = blocks {
        ntk_files::table::write_csv(&dir.join(crate::blocks::BLOCKS_FILE), blocks)?;
    }
    if let Some((net, outputs)) = weights {
        let dtype = if summary.precision == Precision::F64 {
            ExportDType::F64
        } else {
            ExportDType::F32
        };
        let path = dir.join("weights.safetensors");
        let given = summary
            .provenance
            .as_ref()
            .and_then(|p| p.config.get("probe.weights_digest"))
            .and_then(|v| v.as_str());
        match given {
            Some(digest) => ntk_model::export::save_given(net, &path, dtype, digest)?,
            None => ntk_model::export::save(net, &path, dtype)?,
        }
        let n = summary.n.max(1) as u64;
        npy::write_f64(
            &dir.join("outputs.npy"),
            outputs,
            &[n, outputs.len() as u64 / n],
        )
        .map_err(|e| ctx("write outputs.npy", e))?;
    }
    let others: Vec<&str> = OUTPUT_FILES
        .iter()
        .copied()
        .filter(|f| *f != "summary.json")
        .collect();
    summary.files = Some(
        ntk_runs::manifest::record(dir, &others).map_err(|e| ctx("record the set's files", e))?,
    );
    ntk_runs::provenance::SelfChecksum::seal(summary);
    let json = serde_json::to_string_pretty(summary).expect("summary serializes");
    ntk_files::io::atomic_write(&dir.join("summary.json"), json.as_bytes())
        .map_err(|e| ctx("write summary.json", e))
}

/// The output set's inputs.npy and ntk.npy, each atomically (the directory created first);
/// [`write_outputs`] writes them when given, and `run` writes them while the kernel's
/// spectrum is computed.
pub fn write_arrays(
    dir: &Path,
    inputs: Option<&Inputs>,
    kernel: Option<&Kernel>,
) -> crate::Result<()> {
    let ctx = |action: &'static str, source: std::io::Error| Error::CannotWrite {
        dir: dir.to_path_buf(),
        action,
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| ctx("create the output directory", e))?;
    if let Some(inputs) = inputs {
        npy::write_f64(
            &dir.join("inputs.npy"),
            &inputs.x,
            &[inputs.n as u64, inputs.d as u64],
        )
        .map_err(|e| ctx("write inputs.npy", e))?;
    }
    if let Some(kernel) = kernel {
        let s = kernel.size as u64;
        npy::write_f64(&dir.join("ntk.npy"), &kernel.data, &[s, s])
            .map_err(|e| ctx("write ntk.npy", e))?;
    }
    Ok(())
}
