//! The backward pass of the step on the device, to every parameter's gradient (cuDNN's
//! backward passes, the activation kernels' adjoints, Fixup's scalar gradients as f64
//! sums), then BatchNorm's running statistics and the SGD update of all parameters at once.

use super::*;

impl CudnnResNet {
    pub(super) fn bn_backward(
        &self,
        plan: &Plan,
        conv: &Conv,
        bn: &Bn,
        x: DevBuf<f32>,
        dy: DevBuf<f32>,
        dx: DevBuf<f32>,
    ) -> Result<()> {
        let b = &self.dev.bns[&bn.gamma.at];
        let param = &plan.params[&bn.gamma.len];
        dnn::bn_backward(self.gpu.cudnn, self.bn_mode, &conv.y, param, x, dy, dx, b)
    }

    /// Enqueues the backward from `dev.dl` to every parameter's gradient in `dev.grad`.
    pub(super) fn backward(&self, plan: &Plan) -> Result<()> {
        let n = plan.n;
        let net = &self.net;
        let d = &self.dev;
        let (f, k) = (net.head.features, net.head.classes);
        // dW^T (k x f, column-major = dW row-major [f, k]) = dl^T (k x n) pooled (n x f).
        self.gemm(
            (false, true),
            (k, f, n),
            (d.dl.ptr(), k),
            (d.pooled.ptr(), f),
            (self.g(net.head.w), k),
        )?;
        // da^T (f x n, column-major = da row-major [n, f]) = W (f x k) dl^T (k x n).
        self.gemm(
            (true, false),
            (f, n, k),
            (self.w(net.head.w), k),
            (d.dl.ptr(), k),
            (d.da.ptr(), f),
        )?;
        if let Some(b2) = net.head.bias2 {
            let mut a = vec![ptr(d.da)];
            self.sums("total", n * f, &mut a, Some(self.g(b2)), None)?;
        }
        let stem = net.stem.output.with_n(n);
        let last = net.blocks.last().map_or(stem, |b| b.conv2.output.with_n(n));
        let len = last.len();
        self.launch(
            "unpool",
            len,
            &mut [
                ptr(d.g_out),
                ptr(d.da),
                I32(last.pixels() as i32),
                F32(1.0 / last.pixels() as f32),
                I64(len as i64),
            ],
        )?;
        let (mut g_out, mut g_in) = (d.g_out, d.g_in);
        for k in (0..net.blocks.len()).rev() {
            let x = if k == 0 { d.stem_h } else { d.blocks[k - 1].y };
            self.block_backward(plan, k, x, g_out, g_in)?;
            std::mem::swap(&mut g_out, &mut g_in);
        }
        self.stem_backward(plan, g_out)
    }

    pub(super) fn block_backward(
        &self,
        plan: &Plan,
        k: usize,
        x: DevBuf<f32>,
        dy: DevBuf<f32>,
        g_in: DevBuf<f32>,
    ) -> Result<()> {
        let (h, ws, n) = (self.gpu.cudnn, plan.ws, plan.n);
        let blk = &self.net.blocks[k];
        let (c1, c2) = &plan.blocks[k];
        let p = self.dev.blocks[k];
        let d = &self.dev;
        let (inp, out) = (blk.conv1.input.with_n(n), blk.conv1.output.with_n(n));
        let (len, in_len) = (out.len() as i64, inp.len() as i64);
        let sc = blk.shortcut;
        let adjoint = |src: DevBuf<f32>, acc: bool| -> Result<()> {
            self.launch(
                "shortcut_adjoint",
                inp.len(),
                &mut [
                    ptr(g_in),
                    ptr(src),
                    I32(out.c as i32),
                    I32(out.h as i32),
                    I32(out.w as i32),
                    I32(inp.c as i32),
                    I32(inp.h as i32),
                    I32(inp.w as i32),
                    I32(sc.downsamples() as i32),
                    I32(acc as i32),
                    I64(in_len),
                ],
            )
        };
        match &blk.kind {
            BlockKind::BatchNorm { bn1, bn2 } => {
                self.launch(
                    "relu_mask",
                    out.len(),
                    &mut [ptr(d.dz), ptr(dy), ptr(p.y), I64(len)],
                )?;
                adjoint(d.dz, false)?;
                self.bn_backward(plan, c2, bn2, p.c, d.dz, d.t1)?;
                c2.backward_filter(h, ws, p.b, d.t1, self.g(blk.w2))?;
                c2.backward_data(h, ws, self.w(blk.w2), d.t1, d.dh, false)?;
                self.launch(
                    "relu_mask",
                    out.len(),
                    &mut [ptr(d.dh), null(), ptr(p.b), I64(len)],
                )?;
                self.bn_backward(plan, c1, bn1, p.a, d.dh, d.t1)?;
                c1.backward_filter(h, ws, x, d.t1, self.g(blk.w1))?;
                c1.backward_data(h, ws, self.w(blk.w1), d.t1, g_in, true)
            }
            BlockKind::Normalized => {
                let carried = if sc.downsamples() { sc.input.c } else { out.c };
                let mut a = vec![
                    ptr(d.dz),
                    ptr(dy),
                    ptr(p.c),
                    ptr(p.y),
                    I32(out.c as i32),
                    I32(out.pixels() as i32),
                    I32(carried as i32),
                    I64(len),
                ];
                self.launch("merge_act_backward", out.len(), &mut a)?;
                adjoint(d.dz, false)?;
                if let Some(gain2) = p.gain2 {
                    self.launch(
                        "scale_gain",
                        out.len(),
                        &mut [ptr(d.dz), ptr(gain2), I32(out.pixels() as i32), I64(len)],
                    )?;
                }
                c2.backward_filter(h, ws, p.b, d.dz, self.g(blk.w2))?;
                c2.backward_data(h, ws, self.w(blk.w2), d.dz, d.dh, false)?;
                let mut a = vec![
                    ptr(d.dh),
                    ptr(p.a),
                    ptr(p.b),
                    ptr(p.gain1),
                    I32(out.pixels() as i32),
                    I64(len),
                ];
                self.launch("act_backward", out.len(), &mut a)?;
                c1.backward_filter(h, ws, x, d.dh, self.g(blk.w1))?;
                c1.backward_data(h, ws, self.w(blk.w1), d.dh, g_in, true)
            }
            BlockKind::Fixup {
                b1a,
                b1b,
                b2a,
                scale,
                b2b,
            } => {
                let e = p.e.expect("a Fixup block's map e (plan::BlockMaps)");
                let mut a = vec![ptr(dy), ptr(p.y), ptr(p.c), ptr(d.dz), ptr(self.w(*scale))];
                self.sums(
                    "fixup_out_backward",
                    out.len(),
                    &mut a,
                    Some(self.g(*scale)),
                    Some(self.g(*b2b)),
                )?;
                c2.backward_filter(h, ws, e, d.dz, self.g(blk.w2))?;
                c2.backward_data(h, ws, self.w(blk.w2), d.dz, d.dh, false)?;
                let mut a = vec![ptr(d.dh), ptr(p.b)];
                self.sums(
                    "mask_sums",
                    out.len(),
                    &mut a,
                    Some(self.g(*b2a)),
                    Some(self.g(*b1b)),
                )?;
                c1.backward_filter(h, ws, p.a, d.dh, self.g(blk.w1))?;
                c1.backward_data(h, ws, self.w(blk.w1), d.dh, g_in, false)?;
                if sc.downsamples() {
                    adjoint(dy, true)?;
                    self.sums(
                        "total",
                        inp.len(),
                        &mut vec![ptr(g_in)],
                        Some(self.g(*b1a)),
                        None,
                    )
                } else {
                    self.sums(
                        "total",
                        inp.len(),
                        &mut vec![ptr(g_in)],
                        Some(self.g(*b1a)),
                        None,
                    )?;
                    adjoint(dy, true)
                }
            }
        }
    }

    pub(super) fn stem_backward(&self, plan: &Plan, dh: DevBuf<f32>) -> Result<()> {
        let (h, ws, n) = (self.gpu.cudnn, plan.ws, plan.n);
        let net = &self.net;
        let d = &self.dev;
        let out = net.stem.output.with_n(n);
        let len = out.len() as i64;
        let dz = match &net.stem_kind {
            StemKind::BatchNorm(bn) => {
                self.launch(
                    "relu_mask",
                    out.len(),
                    &mut [ptr(dh), null(), ptr(d.stem_h), I64(len)],
                )?;
                self.bn_backward(plan, &plan.stem, bn, d.stem_a, dh, d.t1)?;
                d.t1
            }
            StemKind::Normalized => {
                let mut a = vec![
                    ptr(dh),
                    ptr(d.stem_a),
                    ptr(d.stem_h),
                    ptr(d.stem_gain),
                    I32(out.pixels() as i32),
                    I64(len),
                ];
                self.launch("act_backward", out.len(), &mut a)?;
                dh
            }
            StemKind::Fixup { bias } => {
                let mut a = vec![ptr(dh), ptr(d.stem_h)];
                self.sums("mask_sums", out.len(), &mut a, None, Some(self.g(*bias)))?;
                dh
            }
        };
        plan.stem
            .backward_filter(h, ws, d.input, dz, self.g(net.stem_w))
    }

    /// Enqueues BatchNorm's running statistics and the SGD update (both skipped on the
    /// device when the loss was not finite).
    pub(super) fn update(&self) -> Result<()> {
        let d = &self.dev;
        for (at, b) in &d.bns {
            let (m, c) = d.bn_momentum[at];
            self.launch(
                "bn_running",
                c,
                &mut [
                    ptr(b.mean),
                    ptr(b.var),
                    ptr(b.save_mean),
                    ptr(b.save_inv_std),
                    F64(m),
                    F64(b.eps),
                    ptr(d.ok),
                    I32(c as i32),
                ],
            )?;
        }
        let s = self.sgd;
        let p = self.net.num_params();
        self.launch(
            "sgd",
            p,
            &mut [
                ptr(d.theta),
                ptr(d.grad),
                ptr(d.velocity),
                ptr(d.scalar_mask),
                ptr(d.hyper),
                ptr(d.ok),
                F32(s.momentum as f32),
                F32(s.weight_decay as f32),
                I32((s.weight_decay > 0.0) as i32),
                I32((s.momentum > 0.0) as i32),
                I32(s.nesterov as i32),
                I64(p as i64),
            ],
        )
    }
}
