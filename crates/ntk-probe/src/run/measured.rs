//! The numbers of one protocol from each source of kernels ([`Measured`]): the whole set's
//! kernel formed once, each block's kernel from its own samples, or the whole set in tiles
//! (on the host, resumable from its phase files, or on a GPU).

use super::*;

/// What [`summarize_from`] takes from its source: the eigenvalue route, the conditioning,
/// the eigenvalues to save, the blocks, the angles, the kernel's method and engine, and the
/// seconds in kernels and in eigenvalues.
pub(super) struct Measured {
    pub(super) eigen: Eigen,
    pub(super) spec: ntk_numerics::spectrum::Summary,
    pub(super) eigenvalues: Vec<f64>,
    pub(super) blocks: Option<Vec<BlockRow>>,
    pub(super) angles: Angles,
    pub(super) route: (Method, Route),
    pub(super) kernel_seconds: f64,
    pub(super) eigen_seconds: f64,
    /// Seconds spent before [`summarize_from`] began (the whole kernel's).
    pub(super) before: f64,
    /// What the summary's note adds.
    pub(super) note: Option<String>,
    /// The whole-set f32 kernel's measured error, where it decided the kernel
    /// ([`Summary::measured_error`]).
    pub(super) measured_error: Option<f64>,
    /// The interval of κ the measured error or the bound allows ([`Decided::interval`]).
    pub(super) interval: Option<(f64, Option<f64>)>,
}

impl Measured {
    /// One protocol's numbers of the whole set's kernel.
    pub(super) fn whole(
        cfg: &ProbeConfig,
        protocol: Protocol,
        inputs: &Inputs,
        compute: &Compute,
        net: &Net,
        facts: &NetFacts,
        (result, kernel_seconds, given): (&KernelResult, f64, Option<&[Vec<usize>]>),
    ) -> crate::Result<Self> {
        let phase = Phase::start("eigenvalues");
        let mut second = F64Blocks::new(cfg, inputs, compute, net);
        let (eigen, spec, eigenvalues, blocks, decided) = protocol_spectrum(
            cfg,
            protocol,
            &result.kernel,
            (inputs.n, second.recheck(), given),
            compute,
            facts,
        )?;
        let eigen_seconds = phase.finish();
        Ok(Self {
            eigen,
            spec,
            eigenvalues,
            blocks,
            angles: Angles::measure(cfg, inputs, compute, net, (&result.kernel, result.route))?,
            route: (result.method, result.route),
            kernel_seconds,
            eigen_seconds,
            before: kernel_seconds,
            note: decided.note,
            measured_error: decided.measured_error,
            interval: decided.interval,
        })
    }

    /// The whole set's kernel formed tile by tile into its lower triangle and solved there
    /// (`probe.eigen = "tiled"`, [`ntk_kernel::extreme::tiled`]): the minimum gradient angle
    /// read from the tiles first, then Lanczos on `K`, the factorization in place and
    /// Lanczos on `K^{-1}`. Nothing of size `n x n` besides the tiles.
    ///
    /// On a GPU backend built with `cusolver` the kernel is formed whole on the device from
    /// the same factors and solved there ([`crate::solver::tiled_on_gpu`]).
    pub(super) fn tiled(
        cfg: &ProbeConfig,
        inputs: &Inputs,
        compute: &Compute,
        net: &Net,
        phases: Option<&Place>,
    ) -> crate::Result<Self> {
        use crate::phases::{Formed, PhaseFiles, Resumable};
        use ntk_kernel::extreme::{self, tiled::Tiled};
        let Net::Mlp(mlp) = net else {
            return Err(Error::Config {
                key: "probe.eigen",
                value: "tiled".into(),
                reason: "needs a plain MLP".into(),
            });
        };
        let outputs = cfg.probe.output.outputs(mlp.config().output_dim);
        let options = extreme::Options {
            block: TILE,
            ..Default::default()
        };
        // cuBLAS forms the kernel from the factors as they are: factors with a row far from
        // unit scale, whose terms the host's tiles keep by scaling each row, take the host's
        // route (hundred-and-twenty-second hostile round, "Open").
        let on_gpu = crate::solver::gpu_here(compute)
            .then(|| {
                let phase = Phase::start("the network's factors (host)");
                let source = host::tiles::TileSource::new(mlp, &inputs.x, inputs.n, &outputs);
                (source, phase.finish())
            })
            .filter(|(source, _)| !source.far());
        let (e, min, engine, kernel_seconds, eigen_seconds, note) =
            if let Some((source, factor_seconds)) = on_gpu {
                let w = crate::solver::tiled_on_gpu(&source, &options)?;
                (
                    w.extreme,
                    w.min_angle,
                    Route::Device,
                    factor_seconds + w.formation_seconds,
                    w.eigen_seconds,
                    "whole set on the GPU: the kernel formed whole by cuBLAS from the host \
                     engine's factors, potrf and Lanczos by cuSOLVER and cuBLAS (f64); \
                     lambda_min and lambda_max by Lanczos, a singular kernel's rank a lower \
                     bound; no ntk.npy",
                )
            } else {
                // The tiles fill the machine: no freed buffer may stay beside them.
                crate::freed::hand_back();
                let phase = Phase::start("kernel (its lower triangle, tile by tile)");
                let all = host::tiles::factor_bytes(mlp, inputs.n, outputs.len());
                let rows = tiled_group_rows(inputs.n, all);
                let mut source =
                    host::tiles::GroupedSource::new(mlp, &inputs.x, inputs.n, &outputs, rows, TILE);
                let diagonal = source.diagonal().to_vec();
                // Progress on stderr: stdout is the run's result (its table or `--json`).
                let progress = ntk_runs::progress::Reporter::beside_results();
                progress.log(&tiled_plan(&source, mlp, inputs));
                let mut files = match phases {
                    Some(place) => {
                        let bytes = super::phase_room(inputs);
                        PhaseFiles::open(place, (inputs.n, TILE), bytes)?
                    }
                    None => None,
                };
                let resumed = files.as_ref().and_then(|f| f.held().and(f.formed()));
                let mut tiles = match resumed {
                    Some(_) => Tiled::from_grouped_unfilled(&mut source, TILE, progress.clone()),
                    None => Tiled::from_grouped(&mut source, TILE, progress.clone()),
                };
                // Kept tiles are used only when they are the ones the state records (their
                // SHA-256); else they are said, dropped, and the kernel is formed again.
                let loaded = match resumed {
                    Some(formed) if files.as_mut().is_some_and(|f| f.load(&mut tiles)) => {
                        Some(formed)
                    }
                    Some(_) => {
                        tiles.refill();
                        None
                    }
                    None => None,
                };
                // What is kept, said once the tiles are read or dropped: never tiles the run
                // does not use (hundred-and-twenty-ninth hostile round, N3).
                if let Some(f) = &files {
                    progress.log(&f.describe());
                }
                let (min, formed_seconds) = match loaded {
                    Some(formed) => (formed.min_angle, formed.seconds),
                    None => (tiles.min_angle(&diagonal), 0.0),
                };
                // Equal inputs at 0 exactly, as the whole kernel's routes have them.
                let min = if diagonal.len() == inputs.n {
                    let gradient = |i: usize| diagonal[i] > 0.0 && diagonal[i].is_finite();
                    angles::with_equal_rows_at_0(min, &inputs.x, inputs.d, gradient)
                } else {
                    min
                };
                // A resumed kernel counts the seconds its formation took (in the run that
                // formed it) plus its reading; the total `seconds` are this process's.
                let kernel_seconds = formed_seconds + phase.finish();
                if loaded.is_none()
                    && let Some(f) = files.as_mut()
                {
                    let formed = Formed {
                        min_angle: min,
                        seconds: kernel_seconds,
                    };
                    f.save_kernel(&tiles, formed);
                }
                let phase = Phase::start("extreme eigenvalues (Cholesky in the tiles, Lanczos)");
                let mut operand = Resumable {
                    tiles: &mut tiles,
                    files: files.as_mut(),
                };
                // The phase files stay until the results are in place: the caller removes
                // them after its output set's commit ([`crate::phases::finish`]).
                let solved = extreme::solve(&mut operand, f64::EPSILON, &options);
                let e = match (solved, files.take()) {
                    (Ok(e), _) => e,
                    (Err(error), Some(f)) if crate::phases::refuses_the_kernel(&error) => {
                        f.refused(&error);
                        return Err(error.into());
                    }
                    (Err(error), _) => return Err(error.into()),
                };
                (
                    e,
                    min,
                    Route::Host,
                    kernel_seconds,
                    phase.finish(),
                    "whole set in tiles: the kernel's lower triangle formed tile by tile and \
                     factored in place (f64, host); lambda_min and lambda_max by Lanczos, a \
                     singular kernel's rank a lower bound; no ntk.npy",
                )
            };
        // Held to the rule of the other routes' angles: the tiles are f64 on either side.
        let resolution = angles::Resolution::new(Precision::F64, net.rounding_depth());
        let (min, min_note, min_unresolved) =
            super::reported::resolved_min(min, inputs, resolution);
        Ok(Self {
            eigen: Eigen::Tiled,
            spec: e.summary(),
            eigenvalues: vec![e.lambda_min, e.lambda_max],
            blocks: None,
            angles: Angles {
                min,
                embedding_min: None,
                pair_embedding: None,
                pair_grad: None,
                pair_grad_note: None,
                min_note,
                min_unresolved,
            },
            route: (Method::Structured, engine),
            kernel_seconds,
            eigen_seconds,
            before: 0.0,
            note: Some(note.to_string()),
            measured_error: None,
            interval: None,
        })
    }

    /// The blocks protocol, each block's kernel from its own samples.
    pub(super) fn per_block(
        cfg: &ProbeConfig,
        inputs: &Inputs,
        compute: &Compute,
        net: &Net,
        facts: &NetFacts,
        (cache, given): (&mut host::HostCache, Option<&[Vec<usize>]>),
    ) -> crate::Result<Self> {
        let phase = Phase::start("blocks (kernel and eigenvalues of each)");
        let mut route = (cfg.probe.method, Route::Host);
        let mut kernel_seconds = 0.0;
        let mut block_kernel = |samples: &[usize]| -> crate::Result<KernelResult> {
            let t = Instant::now();
            let r = probe_kernel(cfg, net, &inputs.select(samples), compute, cache)?;
            kernel_seconds += t.elapsed().as_secs_f64();
            route = (r.method, r.route);
            Ok(r)
        };
        let eps = compute.precision.epsilon();
        let members = crate::blocks::members(cfg, given, inputs.n, facts.seed)?;
        let mut second = F64Blocks::new(cfg, inputs, compute, net);
        let recheck = second.recheck();
        let b = crate::blocks::spectra_with(members, (eps, recheck), &mut |s: &[usize]| {
            block_kernel(s).map(|r| r.kernel)
        })?;
        let angles = Angles::of_pair(cfg, inputs, compute, net, &mut block_kernel)?;
        let seconds = phase.finish();
        Ok(Self {
            eigen: Eigen::Full,
            spec: b.summary,
            eigenvalues: b.eigenvalues,
            blocks: Some(b.rows),
            angles,
            route,
            kernel_seconds,
            eigen_seconds: seconds - kernel_seconds,
            before: 0.0,
            note: Some(
                "blocks protocol block by block: each block's kernel from its own samples, \
                 the whole set's kernel never formed; the angles over every pair (minimum \
                 gradient angle, embedding angles) are not measured"
                    .to_string(),
            ),
            measured_error: None,
            interval: None,
        })
    }
}
