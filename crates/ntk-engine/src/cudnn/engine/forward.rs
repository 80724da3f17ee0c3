//! The forward pass of the step on the device, in training or evaluation mode: the stem,
//! each residual block (convolutions, BatchNorm or Fixup's scalars, the activation kernels,
//! the shortcuts), pooling and the classifier; then the summed cross-entropy, the hits and
//! the cotangent the backward pass starts from.

use super::*;

impl CudnnResNet {
    pub(super) fn bn_forward(
        &self,
        plan: &Plan,
        conv: &Conv,
        bn: &Bn,
        x: DevBuf<f32>,
        y: DevBuf<f32>,
        training: bool,
    ) -> Result<()> {
        let b = &self.dev.bns[&bn.gamma.at];
        let param = &plan.params[&bn.gamma.len];
        if training {
            let (h, mode) = (self.gpu.cudnn, self.bn_mode);
            dnn::bn_train(h, mode, &conv.y, param, x, y, b, self.dev.dummy)
        } else {
            dnn::bn_infer(self.gpu.cudnn, &conv.y, param, x, y, b)
        }
    }

    /// Enqueues the forward of the `plan.n` rows in `dev.input` to the logits.
    pub(super) fn forward(&self, plan: &Plan, training: bool) -> Result<()> {
        let (h, ws, n) = (self.gpu.cudnn, plan.ws, plan.n);
        let net = &self.net;
        let d = &self.dev;
        let out = net.stem.output.with_n(n);
        let len = out.len();
        let fixup = matches!(net.stem_kind, StemKind::Fixup { .. });
        let z = if fixup { d.stem_h } else { d.stem_a };
        plan.stem.forward(h, ws, d.input, self.w(net.stem_w), z)?;
        match &net.stem_kind {
            StemKind::BatchNorm(bn) => {
                self.bn_forward(plan, &plan.stem, bn, d.stem_a, d.stem_h, training)?;
                self.launch("relu_inplace", len, &mut [ptr(d.stem_h), I64(len as i64)])?;
            }
            StemKind::Normalized => {
                let mut a = vec![
                    ptr(d.stem_a),
                    ptr(d.stem_h),
                    ptr(d.stem_gain),
                    I32(out.pixels() as i32),
                    I64(len as i64),
                ];
                self.launch("act_forward", len, &mut a)?;
            }
            StemKind::Fixup { bias } => {
                self.launch(
                    "bias_relu",
                    len,
                    &mut [ptr(d.stem_h), ptr(self.w(*bias)), I64(len as i64)],
                )?;
            }
        }
        let mut x = d.stem_h;
        for k in 0..net.blocks.len() {
            self.block_forward(plan, k, x, training)?;
            x = d.blocks[k].y;
        }
        let last = net.blocks.last().map_or(out, |b| b.conv2.output.with_n(n));
        let (f, classes) = (net.head.features, net.head.classes);
        let bias2 = net.head.bias2.map(|s| self.w(s));
        let nc = n * f;
        self.launch(
            "pool",
            nc,
            &mut [
                ptr(d.pooled),
                ptr(x),
                I32(last.pixels() as i32),
                ptr(bias2),
                I64(nc as i64),
            ],
        )?;
        // logits^T (k x n, column-major) = W^T (k x f: W row-major [f, k]) pooled^T (f x n).
        self.gemm(
            (false, false),
            (classes, n, f),
            (self.w(net.head.w), classes),
            (d.pooled.ptr(), f),
            (d.logits.ptr(), classes),
        )?;
        let m = n * classes;
        self.launch(
            "add_bias_rows",
            m,
            &mut [
                ptr(d.logits),
                ptr(self.w(net.head.b)),
                I32(classes as i32),
                I64(m as i64),
            ],
        )
    }

    pub(super) fn block_forward(
        &self,
        plan: &Plan,
        k: usize,
        x: DevBuf<f32>,
        training: bool,
    ) -> Result<()> {
        let (h, ws, n) = (self.gpu.cudnn, plan.ws, plan.n);
        let blk = &self.net.blocks[k];
        let (c1, c2) = &plan.blocks[k];
        let p = self.dev.blocks[k];
        let out = blk.conv1.output.with_n(n);
        let len = out.len() as i64;
        let sc = blk.shortcut;
        let geometry = [
            I32(out.c as i32),
            I32(out.h as i32),
            I32(out.w as i32),
            I32(sc.input.c as i32),
            I32(sc.input.h as i32),
            I32(sc.input.w as i32),
            I32(sc.downsamples() as i32),
        ];
        match &blk.kind {
            BlockKind::BatchNorm { bn1, bn2 } => {
                c1.forward(h, ws, x, self.w(blk.w1), p.a)?;
                self.bn_forward(plan, c1, bn1, p.a, p.b, training)?;
                self.launch("relu_inplace", out.len(), &mut [ptr(p.b), I64(len)])?;
                c2.forward(h, ws, p.b, self.w(blk.w2), p.c)?;
                self.bn_forward(plan, c2, bn2, p.c, p.y, training)?;
                let mut a = vec![ptr(p.y), ptr(x)];
                a.extend(geometry);
                a.push(I64(len));
                self.launch("shortcut_add_relu", out.len(), &mut a)
            }
            BlockKind::Normalized => {
                c1.forward(h, ws, x, self.w(blk.w1), p.a)?;
                let mut a = vec![
                    ptr(p.a),
                    ptr(p.b),
                    ptr(p.gain1),
                    I32(out.pixels() as i32),
                    I64(len),
                ];
                self.launch("act_forward", out.len(), &mut a)?;
                c2.forward(h, ws, p.b, self.w(blk.w2), p.c)?;
                let mut a = vec![ptr(p.c), ptr(p.y), ptr(x), ptr(p.gain2)];
                a.extend(geometry);
                a.push(I64(len));
                self.launch("merge_act_forward", out.len(), &mut a)
            }
            BlockKind::Fixup {
                b1a,
                b1b,
                b2a,
                scale,
                b2b,
            } => {
                let e = p.e.expect("a Fixup block's map e (plan::BlockMaps)");
                let inp = blk.conv1.input.with_n(n).len();
                self.launch(
                    "add_scalar",
                    inp,
                    &mut [ptr(p.a), ptr(x), ptr(self.w(*b1a)), I64(inp as i64)],
                )?;
                c1.forward(h, ws, p.a, self.w(blk.w1), p.b)?;
                self.launch(
                    "bias_relu",
                    out.len(),
                    &mut [ptr(p.b), ptr(self.w(*b1b)), I64(len)],
                )?;
                self.launch(
                    "add_scalar",
                    out.len(),
                    &mut [ptr(e), ptr(p.b), ptr(self.w(*b2a)), I64(len)],
                )?;
                c2.forward(h, ws, e, self.w(blk.w2), p.c)?;
                let xs = if sc.downsamples() { p.a } else { x };
                let mut a = vec![
                    ptr(p.y),
                    ptr(p.c),
                    ptr(self.w(*scale)),
                    ptr(self.w(*b2b)),
                    ptr(xs),
                ];
                a.extend(geometry);
                a.push(I64(len));
                self.launch("fixup_out", out.len(), &mut a)
            }
        }
    }

    /// Enqueues the loss of the logits against `dev.labels` (the engine's: `softmax_ce` or
    /// `square_error`), its cotangent and the classifier bias's gradient.
    pub(super) fn enqueue_loss(&self, n: usize) -> Result<()> {
        let d = &self.dev;
        let k = self.net.head.classes;
        let kernel = match self.loss {
            Loss::CrossEntropy => "softmax_ce",
            Loss::Mse => "square_error",
        };
        self.gpu.launch_with(
            kernel,
            1,
            crate::cudnn::gpu::THREADS,
            &mut [
                ptr(d.logits),
                ptr(d.labels),
                I32(n as i32),
                I32(k as i32),
                ptr(d.dl),
                ptr(self.g(self.net.head.b)),
                ptr(d.out),
                ptr(d.ok),
            ],
        )
    }
}
