#!/usr/bin/env python3
"""The CIFAR ResNet training step `ntk-train bench --resnet DEPTH --variant V` times, in
PyTorch eager, for side-by-side timing on the same machine.

The network is ntk-model's ResNet (crates/ntk-model/src/resnet/), layer for layer:
He et al. 2016's 6n+2 CIFAR ResNet (a 3x3 stem, three stages of n basic blocks with 16, 32,
64 channels on 32x32, 16x16, 8x8 maps, global average pooling, a linear classifier),
option-A shortcuts (identity, or every second pixel with the new channels zero-padded; no
parameters), bias-free 3x3 convolutions with zero padding 1, and the three variants:

- batch_norm: stem relu(BN(conv x)); block relu(BN2(conv2(relu(BN1(conv1 x)))) + shortcut x);
  convolutions N(0, 2 / (9 c_in)); BN gamma 1, beta 0 (eps 1e-5, momentum 0.1, batch
  statistics in training mode, as Burn's BatchNorm).
- norm_relu: no normalization layers; NormReLU s(x) = lambda_b (max(x, b) - mu_b) with
  b = -1.5907658564 (E s(Z) = 0, E s(Z)^2 = 1); convolutions N(0, 1 / (9 c_in)), each
  multiplied by the border gain sqrt(9 / taps(p)) (ResNetConfig::border_rescale defaults to
  on for norm_relu); stem s(conv x); block s(merge(x, conv2(s(conv1 x)))) with
  merge = (x + r) / sqrt 2 on the channels the shortcut carries and r alone on the
  zero-padded ones.
- fixup: no normalization; per block scalar bias1a, bias1b, bias2a, bias2b (0) and scale (1):
  out = conv1(x + bias1a); out = relu(out + bias1b); out = conv2(out + bias2a);
  out = out * scale + bias2b; y = relu(out + identity), identity = shortcut(x + bias1a) when
  downsampling, else x; conv1 N(0, 2 / (9 c_in) / L) (L = 3n blocks), conv2 zero; stem
  relu(conv x + bias1), He init; head fc(pool(x) + bias2) with a zero classifier.
- selu: the norm_relu network with SELU (torch's nn.SELU, the same lambda and alpha as
  crates/ntk-model/src/activation.rs) in NormReLU's place: the same blocks, initialization,
  merge and border gain.

The classifier is N(0, 1 / 64) (zero for fixup), its bias zero. Weights come from torch's
generator, not our ChaCha8 streams: the same distributions, not the same numbers (timing
does not depend on them).

The step, as ntk-train's bench (crates/ntk-train/src/bench.rs): forward, mean cross-entropy,
backward, SGD with momentum 0.9 (dampening 0, no Nesterov), lr 0.01, weight decay 0 (the
bench's OptimConfig; --weight-decay 1e-4 gives He et al.'s), batch 128, f32, random inputs
uniform in [-1, 1] and random labels, the loss read every step (`loss.item()`, as our loop
does), `--warmup` untimed steps first. On CUDA, f32 is IEEE f32 by default (TF32 off for
matmuls and cuDNN convolutions; PyTorch's own default lets cuDNN use TF32): `--tf32` turns it
on. cuDNN's autotuner is off (PyTorch's default) unless `--cudnn-benchmark`.

    python3 experiments/train_bench/pytorch_resnet_step.py --device cuda --depth 110 \
        --variant batch_norm --batch 128 --steps 20 --warmup 3 [--json]
    python3 experiments/train_bench/pytorch_resnet_step.py --check   # structure self-test (CPU)
"""
import argparse
import json
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# The timed SGD step loop, shared with the MLP peer beside this file.
from pytorch_step import time_sgd_steps

# crates/ntk-model/src/activation.rs: NORM_RELU_DEFAULT_B.
NORM_RELU_DEFAULT_B = -1.590_765_856_4
VARIANTS = ("batch_norm", "norm_relu", "fixup", "selu")


def _pdf(x):
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _cdf(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def norm_relu_constants(b):
    """(mu_b, lambda_b) of activation.rs's NormRelu::new."""
    pdf, cdf = _pdf(b), _cdf(b)
    mu = b * cdf + pdf
    second = b * b * cdf + (1.0 - cdf) + b * pdf
    lam = (second - mu * mu) ** -0.5
    return mu, lam


class NormRelu(nn.Module):
    def __init__(self, b=NORM_RELU_DEFAULT_B):
        super().__init__()
        self.b = b
        self.mu, self.lam = norm_relu_constants(b)

    def forward(self, x):
        return (x.clamp_min(self.b) - self.mu) * self.lam


def taps_inside(n, stride, i):
    """layers.rs taps_inside: taps of a 3x3, padding-1 window at output i inside length n."""
    return sum(1 for t in range(3) if 1 <= i * stride + t <= n)


def border_gain(h, w, stride):
    """layers.rs border_gain: [1, 1, H_out, W_out] of sqrt(9 / taps(p))."""
    h_out, w_out = (h - 1) // stride + 1, (w - 1) // stride + 1
    # Kept in f64 and cast to the activations' dtype where it is used: built in the default
    # f32, an f64 model's gains were rounded to f32 (about 7e-8 off; twenty-sixth hostile
    # round, N9); an f32 model's are the same f32 values as before.
    g = torch.empty(1, 1, h_out, w_out, dtype=torch.float64)
    for i in range(h_out):
        for j in range(w_out):
            taps = taps_inside(h, stride, i) * taps_inside(w, stride, j)
            g[0, 0, i, j] = math.sqrt(9.0 / taps)
    return g


class Conv3x3(nn.Module):
    """layers.rs Conv3x3: bias-free, padding 1, weights N(0, std^2) (zeros when std == 0),
    optionally times the border gain of its input size."""

    def __init__(self, c_in, c_out, stride, std, size=None, gain=False):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(c_out, c_in, 3, 3))
        with torch.no_grad():
            if std == 0.0:
                self.weight.zero_()
            else:
                self.weight.normal_(0.0, std)
        self.stride = stride
        if gain:
            self.register_buffer("gain", border_gain(size, size, stride))
        else:
            self.gain = None

    def forward(self, x):
        y = F.conv2d(x, self.weight, None, self.stride, 1)
        return y if self.gain is None else y * self.gain.to(y.dtype)


def fan_in(c_in):
    return 9 * c_in


def subsample(x):
    return x[:, :, ::2, ::2]


def shortcut(x, downsample):
    """layers.rs shortcut: option A (subsample, channels doubled by zero padding)."""
    if not downsample:
        return x
    sub = subsample(x)
    return torch.cat([sub, torch.zeros_like(sub)], 1)


def scalar(value):
    return nn.Parameter(torch.full((1,), float(value)))


class BnBlock(nn.Module):
    def __init__(self, c_in, c_out, size):
        super().__init__()
        self.downsample = c_out != c_in
        stride = 2 if self.downsample else 1
        self.conv1 = Conv3x3(c_in, c_out, stride, math.sqrt(2.0 / fan_in(c_in)), size)
        self.bn1 = nn.BatchNorm2d(c_out, eps=1e-5, momentum=0.1)
        self.conv2 = Conv3x3(c_out, c_out, 1, math.sqrt(2.0 / fan_in(c_out)), size // stride)
        self.bn2 = nn.BatchNorm2d(c_out, eps=1e-5, momentum=0.1)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        r = self.bn2(self.conv2(h))
        return F.relu(r + shortcut(x, self.downsample))


class NormReluBlock(nn.Module):
    def __init__(self, c_in, c_out, size, act, gain):
        super().__init__()
        self.downsample = c_out != c_in
        stride = 2 if self.downsample else 1
        c = 1.0  # 1 / E[s(Z)^2] for NormReLU
        self.conv1 = Conv3x3(c_in, c_out, stride, math.sqrt(c / fan_in(c_in)), size, gain)
        self.conv2 = Conv3x3(
            c_out, c_out, 1, math.sqrt(c / fan_in(c_out)), size // stride, gain
        )
        self.act = act

    def forward(self, x):
        h = self.act(self.conv1(x))
        r = self.conv2(h)
        return self.act(merge(x, r, self.downsample))


def merge(x, r, downsample):
    """norm_relu.rs merge: (shortcut(x) + r) / sqrt 2 where the shortcut carries x, r where it
    is zero padding."""
    if not downsample:
        return (x + r) * (1.0 / math.sqrt(2.0))
    sub = subsample(x)
    carried = sub.shape[1]
    return torch.cat([(sub + r[:, :carried]) * (1.0 / math.sqrt(2.0)), r[:, carried:]], 1)


class FixupBlock(nn.Module):
    def __init__(self, c_in, c_out, size, num_blocks):
        super().__init__()
        self.downsample = c_out != c_in
        stride = 2 if self.downsample else 1
        std1 = math.sqrt(2.0 / fan_in(c_in)) / math.sqrt(num_blocks)
        self.bias1a = scalar(0.0)
        self.conv1 = Conv3x3(c_in, c_out, stride, std1, size)
        self.bias1b = scalar(0.0)
        self.bias2a = scalar(0.0)
        self.conv2 = Conv3x3(c_out, c_out, 1, 0.0, size // stride)
        self.scale = scalar(1.0)
        self.bias2b = scalar(0.0)

    def branch(self, x):
        out = self.conv1(x + self.bias1a)
        out = F.relu(out + self.bias1b)
        out = self.conv2(out + self.bias2a)
        return out * self.scale + self.bias2b

    def forward(self, x):
        if self.downsample:
            identity = shortcut(x + self.bias1a, True)
        else:
            identity = x
        return F.relu(self.branch(x) + identity)


class ResNet(nn.Module):
    def __init__(self, depth, variant, num_classes=10, base_width=16, image_size=32,
                 in_channels=3, kink=None, border_rescale=None):
        super().__init__()
        if depth < 8 or (depth - 2) % 6:
            raise ValueError(f"--depth {depth}: a CIFAR ResNet has 6n + 2 layers, n >= 1")
        if variant not in VARIANTS:
            raise ValueError(f"--variant {variant}: expected one of {', '.join(VARIANTS)}")
        self.depth, self.variant = depth, variant
        n = (depth - 2) // 6
        num_blocks = 3 * n
        normalized = variant in ("norm_relu", "selu")
        gain = normalized and (border_rescale is None or border_rescale)
        # selu: the norm_relu network with SELU (E s(Z) = 0, E s(Z)^2 = 1) in NormReLU's place.
        self.act = nn.SELU() if variant == "selu" else NormRelu(NORM_RELU_DEFAULT_B if kink is None else kink)
        c = 1.0 if normalized else 2.0
        self.stem = Conv3x3(in_channels, base_width, 1, math.sqrt(c / fan_in(in_channels)),
                            image_size, gain)
        self.stem_bn = nn.BatchNorm2d(base_width) if variant == "batch_norm" else None
        self.stem_bias = scalar(0.0) if variant == "fixup" else None
        blocks = []
        c_in, size = base_width, image_size
        for stage in range(3):
            c_out = base_width << stage
            for _ in range(n):
                if variant == "batch_norm":
                    blocks.append(BnBlock(c_in, c_out, size))
                elif normalized:
                    blocks.append(NormReluBlock(c_in, c_out, size, self.act, gain))
                else:
                    blocks.append(FixupBlock(c_in, c_out, size, num_blocks))
                if c_out != c_in:
                    size //= 2
                c_in = c_out
        self.blocks = nn.ModuleList(blocks)
        self.head_bias = scalar(0.0) if variant == "fixup" else None
        features = 4 * base_width
        self.classifier = nn.Linear(features, num_classes)
        with torch.no_grad():
            if variant == "fixup":
                self.classifier.weight.zero_()
            else:
                self.classifier.weight.normal_(0.0, math.sqrt(1.0 / features))
            self.classifier.bias.zero_()

    def forward_stem(self, x):
        z = self.stem(x)
        if self.stem_bn is not None:
            return F.relu(self.stem_bn(z))
        if self.stem_bias is not None:
            return F.relu(z + self.stem_bias)
        return self.act(z)

    def forward(self, x):
        h = self.forward_stem(x)
        for block in self.blocks:
            h = block(h)
        a = h.mean(dim=(2, 3))
        if self.head_bias is not None:
            a = a + self.head_bias
        return self.classifier(a)


def resnet_macs(depth, in_channels=3, base=16, size=32, classes=10):
    """bench.rs resnet_macs: multiply-adds of one forward on one image."""
    n = (depth - 2) // 6
    conv = lambda cin, cout, s: 9.0 * cin * cout * s * s  # noqa: E731
    macs = conv(in_channels, base, size)
    for stage in range(3):
        s = size / (1 << stage)
        w = base << stage
        for b in range(n):
            cin = (base << (stage - 1)) if (b == 0 and stage > 0) else w
            macs += conv(cin, w, s) + conv(w, w, s)
    return macs + 4 * base * classes


def describe(depth, variant):
    """ResNetConfig::describe for the default kink and border rescale."""
    return f"resnet-{depth} {variant}"


def set_fp32_precision(tf32):
    """IEEE f32 (or TF32) for CUDA matmuls and cuDNN convolutions; returns what was set."""
    prec = "tf32" if tf32 else "ieee"
    try:
        torch.backends.cuda.matmul.fp32_precision = prec
        torch.backends.cudnn.conv.fp32_precision = prec
        return prec
    except Exception:  # older torch: the legacy switches
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        return prec


def check():
    """Structure self-test against the counts and facts ntk-model's tests assert
    (crates/ntk-model/tests/resnet.rs): trainable parameters, MACs, Fixup's identity at init,
    NormReLU's moments."""
    ok = True

    def expect(what, got, want):
        nonlocal ok
        good = got == want if isinstance(want, int) else abs(got - want) <= 1e-6 * max(1.0, abs(want))
        print(f"{'ok  ' if good else 'FAIL'} {what}: {got} (expected {want})")
        ok &= good

    expected = {  # tests/resnet.rs parameter_counts_match_he_et_al (trainable)
        (20, "batch_norm"): 269_722, (20, "norm_relu"): 268_346, (20, "fixup"): 268_393,
        (110, "batch_norm"): 1_727_962, (110, "norm_relu"): 1_719_866,
        (110, "fixup"): 1_720_138,
    }
    for (depth, variant), want in expected.items():
        torch.manual_seed(0)
        net = ResNet(depth, variant)
        got = sum(p.numel() for p in net.parameters())
        expect(f"trainable parameters resnet-{depth} {variant}", got, want)
    expect("MACs resnet-20 (M, 40.6 +- 0.5)", round(resnet_macs(20) / 1e6, 1), 40.6)
    expect("MACs resnet-110 (M, 252.9 +- 1)", round(resnet_macs(110) / 1e6, 1), 252.9)
    # NormReLU moments by a fine quadrature on [-12, 12].
    act = NormRelu()
    z = torch.linspace(-12, 12, 2_000_001, dtype=torch.float64)
    w = torch.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) * (z[1] - z[0])
    s = (z.clamp_min(act.b) - act.mu) * act.lam
    expect("E s(Z) (NormReLU)", round(float((w * s).sum()), 6), 0.0)
    expect("E s(Z)^2 (NormReLU)", round(float((w * s * s).sum()), 6), 1.0)
    # Border gain: interior 1, edge sqrt(9/6), corner sqrt(9/4); stride 2 on 32: right edge
    # has all 3 taps (index 15 * 2 + 2 = 32 <= 32).
    g = border_gain(32, 32, 1)
    expect("border gain corner", round(float(g[0, 0, 0, 0]), 6), round(1.5, 6))
    expect("border gain edge", round(float(g[0, 0, 0, 5]), 6), round(math.sqrt(1.5), 6))
    expect("border gain interior", float(g[0, 0, 5, 5]), 1.0)
    g2 = border_gain(32, 32, 2)
    expect("border gain stride 2 last", float(g2[0, 0, 15, 15]), 1.0)
    expect("border gain stride 2 first", round(float(g2[0, 0, 0, 0]), 6), 1.5)
    # Fixup at init: zero logits; every block returns its shortcut.
    torch.manual_seed(0)
    net = ResNet(20, "fixup")
    x = torch.rand(4, 3, 32, 32) * 2 - 1
    with torch.no_grad():
        expect("fixup logits at init (max |z|)", float(net(x).abs().max()), 0.0)
        h = net.forward_stem(x)
        dev = 0.0
        for b in net.blocks:
            y = b(h)
            dev = max(dev, float((y - shortcut(h, b.downsample)).abs().max()))
            h = y
        expect("fixup blocks = shortcut at init (max dev)", dev, 0.0)
    # Shapes through every variant, and one training step runs.
    for variant in VARIANTS:
        torch.manual_seed(0)
        net = ResNet(20, variant)
        out = net(x)
        expect(f"logits shape {variant}", tuple(out.shape) == (4, 10), True)
        loss = F.cross_entropy(out, torch.tensor([0, 1, 2, 3]))
        loss.backward()
        finite = all(torch.isfinite(p.grad).all() for p in net.parameters() if p.grad is not None)
        expect(f"finite loss and gradients {variant}", bool(math.isfinite(loss.item()) and finite), True)
    # NormReLU scale at init: the stem's output has mean square ~1 (unit-variance inputs).
    torch.manual_seed(0)
    net = ResNet(20, "norm_relu")
    with torch.no_grad():
        xs = torch.randn(16, 3, 32, 32)
        ms = float(net.forward_stem(xs).pow(2).mean())
    expect(f"norm_relu stem mean square {ms:.3f} in [0.8, 1.2]", 0.8 <= ms <= 1.2, True)

    # tests/resnet.rs norm_relu_resnet110_keeps_unit_scale: with the border gain the last
    # block's mean square stays near the stem's (drift to ~1.11); zero-padded it falls
    # below 0.85 (~0.63 measured there).
    def last_over_stem(border_rescale, nets=4):
        r = 0.0
        for seed in range(nets):
            torch.manual_seed(seed)
            net = ResNet(110, "norm_relu", border_rescale=border_rescale)
            with torch.no_grad():
                h = net.forward_stem(torch.randn(2, 3, 32, 32))
                m0 = float(h.pow(2).mean())
                for b in net.blocks:
                    h = b(h)
                r += float(h.pow(2).mean()) / m0 / nets
        return r

    gained, padded = last_over_stem(True), last_over_stem(False, 2)
    expect(f"norm_relu-110 last/stem mean square {gained:.3f} in [0.9, 1.35]",
           0.9 <= gained <= 1.35, True)
    expect(f"norm_relu-110 zero-padded last/stem {padded:.3f} < 0.85", padded < 0.85, True)
    print("check:", "passed" if ok else "FAILED")
    return ok


def time_graphed_steps(model, opt, x, y, warmup, steps):
    """As `time_sgd_steps`, with the step (zero_grad, forward, backward, opt.step) captured
    once as a CUDA graph after three eager steps on a side stream (PyTorch's documented
    whole-network capture) and replayed, the loss read after every replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    first = None
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = F.cross_entropy(model(x), y)
        static_loss.backward()
        opt.step()
    for _ in range(warmup):
        graph.replay()
        static_loss.item()
    torch.cuda.synchronize()
    t = time.perf_counter()
    last = None
    for _ in range(steps):
        graph.replay()
        last = static_loss.item()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / max(steps, 1), first, last


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    p.add_argument("--depth", type=int, default=20, help="6n + 2")
    p.add_argument("--variant", default="batch_norm", choices=VARIANTS)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=20, help="timed steps")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--tf32", action="store_true", help="allow TF32 on CUDA (default: IEEE f32)")
    p.add_argument("--cudnn-benchmark", action="store_true", help="cuDNN autotuner on")
    p.add_argument("--graph", action="store_true",
                   help="CUDA: capture the whole step (forward, backward, SGD) as one CUDA graph "
                        "and time its replays (PyTorch's whole-network capture)")
    p.add_argument("--layout", default="nchw", choices=["nchw", "nhwc"],
                   help="activations' memory format: nchw (PyTorch's default) or nhwc "
                        "(torch.channels_last, oneDNN's blocked-friendly format on a CPU)")
    p.add_argument("--json", action="store_true", help="also print one JSON line")
    p.add_argument("--check", action="store_true", help="structure self-test, then exit")
    a = p.parse_args()
    if a.check:
        sys.exit(0 if check() else 1)
    if a.threads:
        torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    precision = "f32"
    if dev.type == "cuda":
        precision = "tf32" if set_fp32_precision(a.tf32) == "tf32" else "f32"
        torch.backends.cudnn.benchmark = a.cudnn_benchmark
    torch.manual_seed(0)
    fmt = torch.channels_last if a.layout == "nhwc" else torch.contiguous_format
    model = ResNet(a.depth, a.variant).to(dev, memory_format=fmt)
    model.train()
    opt = torch.optim.SGD(
        model.parameters(), lr=a.lr, momentum=a.momentum, dampening=0.0,
        weight_decay=a.weight_decay, nesterov=False,
    )
    x = (torch.rand(a.batch, 3, 32, 32) * 2 - 1).to(dev, memory_format=fmt)
    y = torch.randint(0, 10, (a.batch,)).to(dev)
    if a.graph and dev.type == "cuda":
        s, first, last = time_graphed_steps(model, opt, x, y, a.warmup, a.steps)
    else:
        s, first, last = time_sgd_steps(model, opt, x, y, a.warmup, a.steps, dev)
    engine = "graph" if a.graph and dev.type == "cuda" else "eager"
    flops = 6.0 * resnet_macs(a.depth) * a.batch
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    print(
        f"pytorch {torch.__version__} {a.device} ({name}) {engine} {precision} {a.layout}, "
        f"{describe(a.depth, a.variant)}, batch {a.batch}: {s:.4f} s/step, "
        f"{a.batch / s:.0f} samples/s, {flops / 1e9:.2f} GFLOP/step, {flops / s / 1e9:.1f} GFLOP/s",
        flush=True,
    )
    if a.json:
        print(json.dumps({
            "model": describe(a.depth, a.variant),
            "backend": "pytorch-" + dev.type,
            "device_name": name,
            "torch": torch.__version__,
            "precision": precision,
            "engine": engine,
            "cudnn_benchmark": bool(a.cudnn_benchmark),
            "layout": a.layout,
            "input_dim": 3 * 32 * 32,
            "batch": a.batch,
            "steps": a.steps,
            "warmup": a.warmup,
            "lr": a.lr,
            "momentum": a.momentum,
            "weight_decay": a.weight_decay,
            "params": sum(q.numel() for q in model.parameters()),
            "seconds_per_step": s,
            "samples_per_second": a.batch / s,
            "gflop_per_step": flops / 1e9,
            "gflops": flops / 1e9 / s,
            "first_loss": first,
            "last_loss": last,
        }), flush=True)


if __name__ == "__main__":
    main()
