//! [`CudnnResNet`]: a CIFAR ResNet's SGD step on the device, the GPU counterpart of the host
//! engine (`crate::host::resnet`, `ntk-train`'s `host::resnet`), computing what it
//! computes layer for layer:
//!
//! - forward in training mode: cuDNN's convolutions, cuDNN's BatchNorm with the batch's
//!   statistics, the engine's kernels for ReLU and the norm-free variants' activation (with the border gain),
//!   Fixup's scalars, the option-A shortcuts and merges, pooling; the classifier on cuBLAS;
//! - the summed cross-entropy, the hits, and the cotangent `(softmax - onehot) / B`;
//! - backward to every parameter's gradient (cuDNN's backward passes, the kernels' adjoints,
//!   Fixup's scalar gradients as f64 sums);
//! - BatchNorm's running statistics (Burn's rule, biased variance) and Burn's SGD rule on all
//!   parameters at once, both skipped on the device when the loss is not finite.
//!
//! The whole step, from the copy of the batch out of pinned memory to the copy of the loss
//! back, is captured once per batch size as a CUDA graph and replayed: the parameters,
//! momenta and maps stay on the device at fixed addresses. Parameters live in the host
//! engine's order except the convolutions' weights ([`crate::cudnn::plan::device_order`]).

use std::collections::HashMap;
use std::ffi::c_void;

use crate::host::resnet::{BlockKind, Bn, HostResNet, Slot, StemKind};
use cudarc::cublas::sys as blas;
use cudarc::driver::{CudaGraph, sys};
use ntk_model::ResNet;
use ntk_numerics::backend::Fp32Precision;

use crate::cudnn::dev::{DevBuf, DevPtr};
use crate::cudnn::dnn::{self, BnPtrs, Conv, Tensor};
use crate::cudnn::error::{self, Error, Result};
use crate::cudnn::gpu::{Arg, Gpu, blocks, null, ptr};
use crate::cudnn::plan::{self, Maps};
use crate::loss::Loss;

use Arg::{F32, F64, I32, I64};

mod backward;
mod forward;

pub use crate::sgd::Sgd;
/// What one step saw ([`crate::StepResult`]): the summed loss over the batch (NaN when not
/// finite) and the correct predictions of the forward before the update.
pub type Step = crate::stepper::StepResult;

/// A block's maps on the device (see [`plan::BlockMaps`]).
#[derive(Clone, Copy, Debug)]
struct BlockPtrs {
    a: DevBuf<f32>,
    b: DevBuf<f32>,
    c: DevBuf<f32>,
    y: DevBuf<f32>,
    /// A downsampling block's extra map (`plan::BlockMaps::e`; none elsewhere).
    e: Option<DevBuf<f32>>,
    /// The border gains of conv1 and conv2 (none without the border gain).
    gain1: Option<DevBuf<f32>>,
    gain2: Option<DevBuf<f32>>,
}

/// Pinned host buffers the step's copies read and write.
struct Pinned {
    x: *mut f32,
    labels: *mut i32,
    hyper: *mut f32,
    out: *mut f64,
    ok: *mut i32,
    logits: *mut f32,
}

/// Device memory.
struct Dev {
    theta: DevBuf<f32>,
    grad: DevBuf<f32>,
    velocity: DevBuf<f32>,
    running: DevBuf<f32>,
    /// 1 at Fixup's scalars when they train at their own rate (none: no such mask).
    scalar_mask: Option<DevBuf<u8>>,
    input: DevBuf<f32>,
    labels: DevBuf<i32>,
    /// The step's rates and first-step flag (`[lr, lr_scalar, first, 0]`).
    hyper: DevBuf<f32>,
    /// The summed loss and the hits.
    out: DevBuf<f64>,
    /// Whether the loss was finite (the update runs only then).
    ok: DevBuf<i32>,
    /// Two partial sums per block.
    part: DevBuf<f64>,
    stem_a: DevBuf<f32>,
    stem_h: DevBuf<f32>,
    stem_gain: Option<DevBuf<f32>>,
    blocks: Vec<BlockPtrs>,
    g_out: DevBuf<f32>,
    g_in: DevBuf<f32>,
    dz: DevBuf<f32>,
    dh: DevBuf<f32>,
    t1: DevBuf<f32>,
    pooled: DevBuf<f32>,
    da: DevBuf<f32>,
    logits: DevBuf<f32>,
    dl: DevBuf<f32>,
    /// Each BatchNorm's pointers, by its gamma's slot.
    bns: HashMap<usize, BnPtrs>,
    bn_momentum: HashMap<usize, (f64, usize)>,
    dummy: (DevBuf<f32>, DevBuf<f32>),
}

/// The descriptors, algorithms, workspace and graph for one batch size.
struct Plan {
    n: usize,
    stem: Conv,
    blocks: Vec<(Conv, Conv)>,
    /// BatchNorm's `[1, c, 1, 1]` parameter descriptors, by `c`.
    params: HashMap<usize, Tensor>,
    /// The convolutions' workspace (the largest any of them needs).
    ws: DevBuf<u8>,
    graph: Option<CudaGraph>,
    /// Steps run eagerly so far (the graph is captured after the first).
    eager: usize,
}

/// A CIFAR ResNet's parameters, momenta and training step on an NVIDIA GPU (f32).
pub struct CudnnResNet {
    gpu: Gpu,
    /// The layout, and the host copy written back by [`Self::sync_host`].
    net: HostResNet<f32>,
    order: Vec<usize>,
    sgd: Sgd,
    /// The loss its steps' gradients are of (the cross-entropy or the square loss).
    loss: Loss,
    cap: usize,
    d: usize,
    dev: Dev,
    pinned: Pinned,
    plans: HashMap<usize, Plan>,
    algos: dnn::AlgoCache,
    /// No finite step yet since the momenta were (re)set: the next one sets `v = g`.
    first: bool,
    /// Capture each step as a CUDA graph (`NTK_CUDNN_GRAPH=0` turns it off).
    graphs: bool,
    /// cuDNN's BatchNorm mode for training (`NTK_CUDNN_BN`).
    bn_mode: dnn::BnMode,
    /// How the convolutions' and the head's f32 products round (`ieee` unless asked).
    fp32: Fp32Precision,
}

impl CudnnResNet {
    /// The engine for `net` on GPU `ordinal`, training with `sgd` on `loss`, for batches of
    /// at most `cap` rows, its f32 products rounded as `fp32` says (`ieee`: as the host
    /// engine's; `tf32`: on the tensor cores).
    pub fn new(
        net: &ResNet,
        (sgd, loss): (Sgd, Loss),
        cap: usize,
        ordinal: usize,
        fp32: Fp32Precision,
    ) -> Result<Self> {
        let host = HostResNet::<f32>::read(net);
        Self::from_host(host, (sgd, loss), cap, ordinal, fp32)
    }

    /// As [`Self::new`], from the host engine's copy of the network.
    pub fn from_host(
        net: HostResNet<f32>,
        (sgd, loss): (Sgd, Loss),
        cap: usize,
        ordinal: usize,
        fp32: Fp32Precision,
    ) -> Result<Self> {
        let mut gpu = Gpu::new(ordinal, net.normalized)?;
        gpu.set_fp32(fp32)?;
        let order = plan::device_order(&net);
        let maps = Maps::new(&net, cap);
        let p = net.num_params();
        let d = net.stem.input.image();
        let k = net.head.classes;
        let theta = gpu.alloc(p)?;
        let grad = gpu.alloc(p)?;
        let velocity = gpu.alloc(p)?;
        let running = gpu.alloc(net.running.len())?;
        let scalars = if sgd.scalar_lr_scale == 1.0 {
            Vec::new()
        } else {
            net.fixup_scalars()
        };
        let scalar_mask = if scalars.is_empty() {
            None
        } else {
            let m = gpu.alloc::<u8>(p)?;
            let mut mask = vec![0u8; p];
            // The scalars are not convolution weights: the same index on the device.
            scalars.iter().for_each(|&i| mask[i] = 1);
            // SAFETY: `upload`'s contract: `m` was just allocated with `p` bytes on this
            // `gpu` and `mask` is `p` bytes; `mask` lives until after the `sync` on the
            // next line, so it outlives the copy.
            unsafe { gpu.upload(m, &mask)? };
            gpu.sync()?;
            Some(m)
        };
        let gain = |gpu: &mut Gpu, g: &Option<Vec<f32>>| -> Result<Option<DevBuf<f32>>> {
            match g {
                Some(v) => {
                    let at = gpu.alloc(v.len())?;
                    gpu.write(at, v)?;
                    Ok(Some(at))
                }
                None => Ok(None),
            }
        };
        let stem_gain = gain(&mut gpu, &net.stem.gain)?;
        let mut blocks = Vec::with_capacity(net.blocks.len());
        for (b, m) in net.blocks.iter().zip(&maps.blocks) {
            blocks.push(BlockPtrs {
                a: gpu.alloc(m.a)?,
                b: gpu.alloc(m.b)?,
                c: gpu.alloc(m.c)?,
                y: gpu.alloc(m.y)?,
                e: if m.e > 0 { Some(gpu.alloc(m.e)?) } else { None },
                gain1: gain(&mut gpu, &b.conv1.gain)?,
                gain2: gain(&mut gpu, &b.conv2.gain)?,
            });
        }
        let bn_list = plan::batch_norms(&net);
        let widest = bn_list.iter().map(|b| b.gamma.len).max().unwrap_or(1);
        let dummy = (gpu.alloc(widest)?, gpu.alloc(widest)?);
        let mut bns = HashMap::new();
        let mut bn_momentum = HashMap::new();
        for b in &bn_list {
            let c = b.gamma.len;
            bns.insert(
                b.gamma.at,
                BnPtrs {
                    gamma: theta.at(b.gamma.at),
                    beta: theta.at(b.beta.at),
                    dgamma: grad.at(b.gamma.at),
                    dbeta: grad.at(b.beta.at),
                    mean: running.at(b.running),
                    var: running.at(b.running + c),
                    save_mean: gpu.alloc(c)?.ptr(),
                    save_inv_std: gpu.alloc(c)?.ptr(),
                    eps: b.eps,
                },
            );
            bn_momentum.insert(b.gamma.at, (b.momentum, c));
        }
        let dev = Dev {
            theta,
            grad,
            velocity,
            running,
            scalar_mask,
            input: gpu.alloc(maps.input)?,
            labels: gpu.alloc(cap)?,
            hyper: gpu.alloc(4)?,
            out: gpu.alloc(2)?,
            ok: gpu.alloc(1)?,
            part: gpu.alloc(2 * crate::cudnn::gpu::MAX_BLOCKS as usize)?,
            stem_a: gpu.alloc(maps.stem)?,
            stem_h: gpu.alloc(maps.stem)?,
            stem_gain,
            blocks,
            g_out: gpu.alloc(maps.largest)?,
            g_in: gpu.alloc(maps.largest)?,
            dz: gpu.alloc(maps.largest)?,
            dh: gpu.alloc(maps.largest)?,
            t1: gpu.alloc(maps.largest)?,
            pooled: gpu.alloc(maps.pooled)?,
            da: gpu.alloc(maps.pooled)?,
            logits: gpu.alloc(maps.logits)?,
            dl: gpu.alloc(maps.logits)?,
            bns,
            bn_momentum,
            dummy,
        };
        let pinned = Pinned {
            x: gpu.pinned(4 * cap * d)?.cast(),
            labels: gpu.pinned(4 * cap)?.cast(),
            hyper: gpu.pinned(16)?.cast(),
            out: gpu.pinned(16)?.cast(),
            ok: gpu.pinned(4)?.cast(),
            logits: gpu.pinned(4 * cap * k)?.cast(),
        };
        let graphs = std::env::var("NTK_CUDNN_GRAPH").map_or(true, |v| v != "0");
        let bn_mode = dnn::BnMode::from_env()?;
        let engine = Self {
            gpu,
            net,
            order,
            sgd,
            loss,
            cap,
            d,
            dev,
            pinned,
            plans: HashMap::new(),
            algos: dnn::AlgoCache::new(),
            first: true,
            graphs,
            bn_mode,
            fp32,
        };
        engine.upload_state()?;
        Ok(engine)
    }

    /// The device's name, for the log.
    pub fn device_name(&self) -> &str {
        &self.gpu.name
    }

    /// The loss its steps' gradients are of.
    pub fn loss(&self) -> Loss {
        self.loss
    }

    /// cuDNN's BatchNorm mode for training (`NTK_CUDNN_BN`).
    pub fn bn_mode(&self) -> dnn::BnMode {
        self.bn_mode
    }

    /// How its f32 products round (`ieee` unless the user asked for `tf32`).
    pub fn fp32_precision(&self) -> Fp32Precision {
        self.fp32
    }

    /// The most rows a batch may have.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Trainable parameters.
    pub fn num_params(&self) -> usize {
        self.net.num_params()
    }

    fn upload_state(&self) -> Result<()> {
        self.gpu.write(
            self.dev.theta,
            &plan::to_device(&self.net.theta, &self.order),
        )?;
        self.gpu.write(self.dev.running, &self.net.running)
    }

    /// A parameter's values in `theta`.
    fn w(&self, s: Slot) -> DevPtr<f32> {
        self.dev.theta.slot(s.at, s.len).ptr()
    }

    /// A parameter's gradient in `grad`.
    fn g(&self, s: Slot) -> DevPtr<f32> {
        self.dev.grad.slot(s.at, s.len).ptr()
    }

    fn plan(&mut self, n: usize) -> Result<Plan> {
        if let Some(p) = self.plans.remove(&n) {
            return Ok(p);
        }
        let h = self.gpu.cudnn;
        let net = &self.net;
        let cache = &mut self.algos;
        let s = net.stem.input;
        let fp32 = self.fp32;
        let stem = Conv::new(
            h,
            cache,
            fp32,
            n,
            [s.c, s.h, s.w],
            net.stem.output.c,
            1,
            false,
        )?;
        let mut blocks = Vec::with_capacity(net.blocks.len());
        let mut params = HashMap::new();
        for b in &net.blocks {
            let (i, o) = (b.conv1.input, b.conv2.input);
            let c1 = Conv::new(
                h,
                cache,
                fp32,
                n,
                [i.c, i.h, i.w],
                b.conv1.output.c,
                b.conv1.stride,
                true,
            )?;
            let c2 = Conv::new(
                h,
                cache,
                fp32,
                n,
                [o.c, o.h, o.w],
                b.conv2.output.c,
                1,
                true,
            )?;
            blocks.push((c1, c2));
        }
        for bn in plan::batch_norms(net) {
            let c = bn.gamma.len;
            if let std::collections::hash_map::Entry::Vacant(e) = params.entry(c) {
                e.insert(Tensor::new([1, c, 1, 1])?);
            }
        }
        let bytes = blocks
            .iter()
            .flat_map(|(a, b)| [a.workspace, b.workspace])
            .chain([stem.workspace])
            .max()
            .unwrap_or(0);
        let ws = self.gpu.alloc::<u8>(bytes)?;
        Ok(Plan {
            n,
            stem,
            blocks,
            params,
            ws,
            graph: None,
            eager: 0,
        })
    }

    fn launch(&self, name: &'static str, n: usize, args: &mut [Arg]) -> Result<()> {
        self.gpu.launch(name, blocks(n), args)
    }

    /// `name` over `n` elements writing two sums per block, then `finish` into `out0`,
    /// `out1` (none: not wanted).
    fn sums(
        &self,
        name: &'static str,
        n: usize,
        args: &mut Vec<Arg>,
        out0: Option<DevPtr<f32>>,
        out1: Option<DevPtr<f32>>,
    ) -> Result<()> {
        let grid = blocks(n).min(crate::cudnn::gpu::SUM_BLOCKS);
        args.push(ptr(self.dev.part));
        args.push(I64(n as i64));
        self.gpu.launch(name, grid, args)?;
        self.gpu.launch_with(
            "finish",
            1,
            crate::cudnn::gpu::THREADS,
            &mut [ptr(self.dev.part), I32(grid as i32), ptr(out0), ptr(out1)],
        )
    }

    /// `C (m x n) = op(A) op(B)`, column-major, on cuBLAS; `(ptr, ld)` per matrix.
    fn gemm(
        &self,
        (ta, tb): (bool, bool),
        (m, n, k): (usize, usize, usize),
        a: (DevPtr<f32>, usize),
        b: (DevPtr<f32>, usize),
        c: (DevPtr<f32>, usize),
    ) -> Result<()> {
        let op = |t: bool| {
            if t {
                blas::cublasOperation_t::CUBLAS_OP_T
            } else {
                blas::cublasOperation_t::CUBLAS_OP_N
            }
        };
        let (one, zero) = (1f32, 0f32);
        // SAFETY: `self.gpu.cublas` is the live handle (on the stream the buffers were
        // allocated on) in its default host pointer mode, so `&one`/`&zero` are read during
        // the call, while they live. This private fn does not check the device operands;
        // its callers (engine/forward.rs and backward.rs) pass the head's `[f, k]` weight
        // (or gradient) slot of `theta`/`grad`, `pooled` and `da` of `cap f` values and
        // `logits` and `dl` of `cap k`, with `n <= cap`: each `(m, n, k)` / leading-
        // dimension pair there stays inside those lengths.
        Ok(error::cublas("sgemm", unsafe {
            blas::cublasSgemm_v2(
                self.gpu.cublas,
                op(ta),
                op(tb),
                m as i32,
                n as i32,
                k as i32,
                &one,
                a.0.void() as *const f32,
                a.1 as i32,
                b.0.void() as *const f32,
                b.1 as i32,
                &zero,
                c.0.void() as *mut f32,
                c.1 as i32,
            )
        })?)
    }

    /// Writes `x` (`n` rows of `d`) and `labels` into the pinned staging buffers, padded with
    /// zero rows to `rows`.
    fn stage(&mut self, x: &[f64], labels: &[usize], rows: usize) -> Result<()> {
        let n = x.len() / self.d.max(1);
        if x.len() != n * self.d || rows > self.cap || n > rows {
            return Err(Error::Batch {
                rows: n,
                d: x.len().checked_div(n).unwrap_or(0),
                cap: self.cap,
                want: self.d,
            });
        }
        // SAFETY: `pinned.x` is `gpu`'s pinned allocation of `4 cap d` bytes (page-aligned,
        // zeroed by `Gpu::pinned`, so initialized f32), and `rows <= cap` was checked
        // above; no other reference to it lives now (`&mut self`), and no copy reads it now
        // (every path that enqueues one waits in `Gpu::sync` before returning `Ok`; see
        // `inputs` for the error case).
        let xs = unsafe { std::slice::from_raw_parts_mut(self.pinned.x, rows * self.d) };
        xs.iter_mut()
            .zip(x.iter().map(|&v| v as f32).chain(std::iter::repeat(0.0)))
            .for_each(|(o, v)| *o = v);
        // SAFETY: as for `xs`: `pinned.labels` holds `cap` zero-initialized `i32`, `rows <=
        // cap`, and nothing else reads or writes it now.
        let ls = unsafe { std::slice::from_raw_parts_mut(self.pinned.labels, rows) };
        ls.iter_mut()
            .zip(labels.iter().map(|&l| l as i32).chain(std::iter::repeat(0)))
            .for_each(|(o, v)| *o = v);
        Ok(())
    }

    /// Enqueues the copies of the staged batch (and the hyperparameters) to the device.
    /// Every caller has staged `n <= cap` rows first ([`Self::stage`]): the copies below
    /// rely on it.
    fn inputs(&self, n: usize) -> Result<()> {
        // SAFETY: `upload`'s contract, per copy: `pinned.x` holds `cap d` and `dev.input`
        // `cap d` f32 (`plan::Maps::input`), `pinned.labels` and `dev.labels` `cap` values of
        // 4 bytes, `pinned.hyper` and `dev.hyper` 4 f32, and `n <= cap`; the pinned buffers
        // are zero-initialized at allocation and live as long as `gpu`, so as long as any
        // graph that replays these copies. The slices are shared borrows that end here; the
        // host writes the buffers again only in `stage` and `step`, after `Gpu::sync` (or
        // after an error, when a copy still queued would read values being rewritten: wrong
        // inputs, not freed memory).
        unsafe {
            self.gpu.upload(
                self.dev.input,
                std::slice::from_raw_parts(self.pinned.x, n * self.d),
            )?;
            self.gpu.upload(
                self.dev.labels,
                std::slice::from_raw_parts(self.pinned.labels, n),
            )?;
            self.gpu.upload(
                self.dev.hyper,
                std::slice::from_raw_parts(self.pinned.hyper, 4),
            )
        }
    }

    /// Enqueues the copies of the loss, the hits and the flag back to pinned memory.
    /// The host reads the copies' targets only after [`Gpu::sync`].
    fn outputs(&self) -> Result<()> {
        // SAFETY: `download`'s contract, per copy: `dev.out` holds 16 bytes and `pinned.out`
        // two f64, `dev.ok` and `pinned.ok` 4 bytes each (one `i32`); the pinned buffers are
        // zero-initialized and live as long as `gpu` (so as any graph replaying these
        // copies), and the `&mut` slices end here: the host reads the targets only after
        // `Gpu::sync`, through fresh slices.
        unsafe {
            self.gpu.download(
                std::slice::from_raw_parts_mut(self.pinned.out, 2),
                self.dev.out,
            )?;
            self.gpu.download(
                std::slice::from_raw_parts_mut(self.pinned.ok, 1),
                self.dev.ok,
            )
        }
    }

    /// The whole step, enqueued.
    fn enqueue_step(&self, plan: &Plan) -> Result<()> {
        self.inputs(plan.n)?;
        self.forward(plan, true)?;
        self.enqueue_loss(plan.n)?;
        self.backward(plan)?;
        self.update()?;
        self.outputs()
    }

    /// One SGD step on `y.len()` rows `x` (flat CHW, f64 as the data sets hold them) at
    /// learning rate `lr`: the loss and hits of the forward before the update. A non-finite
    /// loss leaves the network as it was.
    pub fn step(&mut self, x: &[f64], y: &[usize], lr: f64) -> Result<Step> {
        let n = y.len();
        self.stage(x, y, n)?;
        // SAFETY: `pinned.hyper` holds 4 zero-initialized f32 (16 bytes); the last step
        // ended in `Gpu::sync`, so no copy reads it now, and no other reference to it lives
        // (`&mut self`).
        let hyper = unsafe { std::slice::from_raw_parts_mut(self.pinned.hyper, 4) };
        hyper.copy_from_slice(&[
            lr as f32,
            (lr * self.sgd.scalar_lr_scale) as f32,
            if self.first { 1.0 } else { 0.0 },
            0.0,
        ]);
        let mut plan = self.plan(n)?;
        let r = self.run_step(&mut plan);
        self.plans.insert(n, plan);
        r?;
        // SAFETY: `pinned.out` holds two initialized f64 (16 bytes, zeroed at allocation,
        // then written by the step's copy); `run_step` ended in `Gpu::sync`, so that copy
        // is done and nothing writes it while `out` lives.
        let out = unsafe { std::slice::from_raw_parts(self.pinned.out, 2) };
        // SAFETY: `pinned.ok` is a zero-initialized, aligned `i32` of `gpu`'s pinned
        // memory, written only by the step's copy, which `Gpu::sync` in `run_step` has
        // waited for.
        let ok = unsafe { *self.pinned.ok } != 0;
        if ok {
            self.first = false;
        }
        Ok(Step {
            loss_sum: if ok { out[0] } else { f64::NAN },
            correct: out[1] as usize,
        })
    }

    fn run_step(&self, plan: &mut Plan) -> Result<()> {
        if plan.graph.is_none() && self.graphs && plan.eager >= 1 {
            plan.graph = self.capture(plan)?;
        }
        match &plan.graph {
            Some(g) => error::driver("replaying the step's graph", g.launch())?,
            None => {
                self.enqueue_step(plan)?;
                plan.eager += 1;
            }
        }
        self.gpu.sync()
    }

    /// The step captured as a CUDA graph (nothing runs while capturing).
    fn capture(&self, plan: &Plan) -> Result<Option<CudaGraph>> {
        let s = &self.gpu.stream;
        error::driver(
            "beginning the capture",
            s.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
        )?;
        let enqueued = self.enqueue_step(plan);
        let graph = error::driver(
            "ending the capture",
            s.end_capture(sys::CUgraphInstantiate_flags(0)),
        );
        enqueued?;
        Ok(graph?)
    }

    /// The training-mode logits (BatchNorm with the batch's statistics; nothing updated) of
    /// `n <= capacity` rows, row-major `[n, classes]`.
    pub fn logits(&mut self, x: &[f64], n: usize) -> Result<Vec<f32>> {
        self.stage(x, &[], n)?;
        let plan = self.plan(n)?;
        let r = self.inputs(n).and_then(|()| self.forward(&plan, true));
        self.plans.insert(n, plan);
        r?;
        self.gpu.read(self.dev.logits, n * self.net.head.classes)
    }

    /// The summed loss, the hits and the gradient of every parameter (the host engine's
    /// order) on `y.len()` rows `x`; nothing updated.
    pub fn gradient(&mut self, x: &[f64], y: &[usize]) -> Result<(Step, Vec<f32>)> {
        let n = y.len();
        self.stage(x, y, n)?;
        let plan = self.plan(n)?;
        let r = self
            .inputs(n)
            .and_then(|()| self.forward(&plan, true))
            .and_then(|()| self.enqueue_loss(n))
            .and_then(|()| self.backward(&plan))
            .and_then(|()| self.outputs());
        self.plans.insert(n, plan);
        r?;
        let grad = self.gpu.read(self.dev.grad, self.net.num_params())?;
        // SAFETY: `pinned.out` holds two initialized f64; the copy `outputs` enqueued is
        // done (`Gpu::read` above synchronized the stream), and nothing writes it while
        // `out` lives.
        let out = unsafe { std::slice::from_raw_parts(self.pinned.out, 2) };
        Ok((
            Step {
                loss_sum: out[0],
                correct: out[1] as usize,
            },
            plan::to_host(&grad, &self.order),
        ))
    }

    /// Evaluation-mode logits (BatchNorm with its running statistics) of `n` rows `x`,
    /// [`Self::capacity`] rows at a time: `f(logits, rows)` per chunk.
    pub fn eval_logits(
        &mut self,
        x: &[f64],
        n: usize,
        mut f: impl FnMut(&[f32], std::ops::Range<usize>),
    ) -> Result<()> {
        let (cap, d, k) = (self.cap, self.d, self.net.head.classes);
        let mut plan = None;
        let mut start = 0;
        while start < n {
            let rows = start..(start + cap).min(n);
            self.stage(&x[rows.start * d..rows.end * d], &[], cap)?;
            let p = match plan.take() {
                Some(p) => p,
                None => self.plan(cap)?,
            };
            let r = self
                .inputs(cap)
                .and_then(|()| self.forward(&p, false))
                // SAFETY: `download`'s contract: `dev.logits` holds `cap k` f32
                // (`plan::Maps::logits`), exactly the destination's length; `pinned.logits`
                // holds `cap k` zero-initialized f32 of `gpu`'s pinned memory, which
                // outlives the copy, and the host touches it only after the `sync` below.
                .and_then(|()| unsafe {
                    self.gpu.download(
                        std::slice::from_raw_parts_mut(self.pinned.logits, cap * k),
                        self.dev.logits,
                    )
                });
            plan = Some(p);
            r?;
            self.gpu.sync()?;
            // SAFETY: `pinned.logits` holds `cap k` initialized f32 and `rows.len() <=
            // cap`; the copy into it is done (`sync` above) and the next one is enqueued
            // only after `f` has returned and this borrow ended.
            let logits = unsafe { std::slice::from_raw_parts(self.pinned.logits, rows.len() * k) };
            f(logits, rows.clone());
            start = rows.end;
        }
        if let Some(p) = plan {
            self.plans.insert(cap, p);
        }
        Ok(())
    }

    /// The parameters (the host engine's order and layout) and running statistics, read
    /// back into the host copy.
    pub fn sync_host(&mut self) -> Result<&HostResNet<f32>> {
        let theta = self.gpu.read(self.dev.theta, self.net.num_params())?;
        self.net.theta = plan::to_host(&theta, &self.order);
        self.net.running = self.gpu.read(self.dev.running, self.net.running.len())?;
        Ok(&self.net)
    }

    /// Writes the parameters and running statistics into `net` (the ResNet they were read
    /// from).
    pub fn write_into(&mut self, net: &mut ResNet) -> Result<()> {
        self.sync_host()?;
        self.net.write_into(net);
        Ok(())
    }

    /// Replaces the parameters (host order) and running statistics.
    pub fn set_state(&mut self, theta: &[f32], running: &[f32]) -> Result<()> {
        self.net.theta.copy_from_slice(theta);
        self.net.running.copy_from_slice(running);
        self.upload_state()
    }

    /// The momentum buffers in the host engine's order, as f64: empty before the first
    /// finite step and without momentum (as the host engine's).
    pub fn velocity(&self) -> Result<Vec<f64>> {
        if self.first || self.sgd.momentum <= 0.0 {
            return Ok(Vec::new());
        }
        let v = self.gpu.read(self.dev.velocity, self.net.num_params())?;
        Ok(plan::to_host(&v, &self.order)
            .into_iter()
            .map(f64::from)
            .collect())
    }

    /// Restores momentum buffers written by [`Self::velocity`] (or the host engine's).
    pub fn set_velocity(&mut self, flat: &[f64]) -> Result<()> {
        let p = self.net.num_params();
        if flat.is_empty() {
            self.first = true;
            return self.gpu.write(self.dev.velocity, &vec![0.0; p]);
        }
        if flat.len() != p {
            return Err(Error::MomentumSize {
                have: flat.len(),
                want: p,
            });
        }
        let host: Vec<f32> = flat.iter().map(|&v| v as f32).collect();
        self.gpu
            .write(self.dev.velocity, &plan::to_device(&host, &self.order))?;
        self.first = false;
        Ok(())
    }
}

// SAFETY: `CudnnResNet` is not `Send` on its own only for raw pointers: the cuDNN/cuBLAS
// handles and kernel functions in `gpu`, its pinned host buffers (`pinned`, allocated and
// freed by `gpu`) and the captured graphs. All of them are owned by this value alone (never
// handed out), so sending it moves their sole ownership; and it is not `Sync`, so it is
// used from one thread at a time, which cuDNN and cuBLAS allow for a handle (no concurrent
// use). A CUDA call made on a thread where the context is not current fails with an error,
// not undefined behaviour.
unsafe impl Send for CudnnResNet {}

#[allow(dead_code)]
fn _assert_c_void(_: *mut c_void) {}
