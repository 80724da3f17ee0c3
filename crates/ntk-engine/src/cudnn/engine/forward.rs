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
        x: u64,
        y: u64,
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
                self.launch("relu_inplace", len, &mut [Ptr(d.stem_h), I64(len as i64)])?;
            }
            StemKind::Normalized => {
                let mut a = vec![
                    Ptr(d.stem_a),
                    Ptr(d.stem_h),
                    Ptr(d.stem_gain),
                    I32(out.pixels() as i32),
                    I64(len as i64),
                ];
                self.launch("act_forward", len, &mut a)?;
            }
            StemKind::Fixup { bias } => {
                self.launch(
                    "bias_relu",
                    len,
                    &mut [Ptr(d.stem_h), Ptr(self.w(*bias)), I64(len as i64)],
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
        let bias2 = net.head.bias2.map_or(0, |s| self.w(s));
        let nc = n * f;
        self.launch(
            "pool",
            nc,
            &mut [
                Ptr(d.pooled),
                Ptr(x),
                I32(last.pixels() as i32),
                Ptr(bias2),
                I64(nc as i64),
            ],
        )?;
        // logits^T (k x n, column-major) = W^T (k x f: W row-major [f, k]) pooled^T (f x n).
        self.gemm(
            (false, false),
            (classes, n, f),
            (self.w(net.head.w), classes),
            (d.pooled, f),
            (d.logits, classes),
        )?;
        let m = n * classes;
        self.launch(
            "add_bias_rows",
            m,
            &mut [
                Ptr(d.logits),
                Ptr(self.w(net.head.b)),
                I32(classes as i32),
                I64(m as i64),
            ],
        )
    }

    pub(super) fn block_forward(
        &self,
        plan: &Plan,
        k: usize,
        x: u64,
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
                self.launch("relu_inplace", out.len(), &mut [Ptr(p.b), I64(len)])?;
                c2.forward(h, ws, p.b, self.w(blk.w2), p.c)?;
                self.bn_forward(plan, c2, bn2, p.c, p.y, training)?;
                let mut a = vec![Ptr(p.y), Ptr(x)];
                a.extend(geometry);
                a.push(I64(len));
                self.launch("shortcut_add_relu", out.len(), &mut a)
            }
            BlockKind::Normalized => {
                c1.forward(h, ws, x, self.w(blk.w1), p.a)?;
                let mut a = vec![
                    Ptr(p.a),
                    Ptr(p.b),
                    Ptr(p.gain1),
                    I32(out.pixels() as i32),
                    I64(len),
                ];
                self.launch("act_forward", out.len(), &mut a)?;
                c2.forward(h, ws, p.b, self.w(blk.w2), p.c)?;
                let mut a = vec![Ptr(p.c), Ptr(p.y), Ptr(x), Ptr(p.gain2)];
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
                let inp = blk.conv1.input.with_n(n).len();
                self.launch(
                    "add_scalar",
                    inp,
                    &mut [Ptr(p.a), Ptr(x), Ptr(self.w(*b1a)), I64(inp as i64)],
                )?;
                c1.forward(h, ws, p.a, self.w(blk.w1), p.b)?;
                self.launch(
                    "bias_relu",
                    out.len(),
                    &mut [Ptr(p.b), Ptr(self.w(*b1b)), I64(len)],
                )?;
                self.launch(
                    "add_scalar",
                    out.len(),
                    &mut [Ptr(p.e), Ptr(p.b), Ptr(self.w(*b2a)), I64(len)],
                )?;
                c2.forward(h, ws, p.e, self.w(blk.w2), p.c)?;
                let xs = if sc.downsamples() { p.a } else { x };
                let mut a = vec![
                    Ptr(p.y),
                    Ptr(p.c),
                    Ptr(self.w(*scale)),
                    Ptr(self.w(*b2b)),
                    Ptr(xs),
                ];
                a.extend(geometry);
                a.push(I64(len));
                self.launch("fixup_out", out.len(), &mut a)
            }
        }
    }

    /// Enqueues the loss of the logits against `dev.labels`, its cotangent and the
    /// classifier bias's gradient.
    pub(super) fn loss(&self, n: usize) -> Result<()> {
        let d = &self.dev;
        let k = self.net.head.classes;
        self.gpu.launch_with(
            "softmax_ce",
            1,
            crate::cudnn::gpu::THREADS,
            &mut [
                Ptr(d.logits),
                Ptr(d.labels),
                I32(n as i32),
                I32(k as i32),
                Ptr(d.dl),
                Ptr(self.g(self.net.head.b)),
                Ptr(d.out),
                Ptr(d.ok),
            ],
        )
    }
}
