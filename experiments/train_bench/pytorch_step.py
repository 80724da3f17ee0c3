#!/usr/bin/env python3
"""The training step `ntk-train bench` times, in PyTorch eager, for comparison on the same
machine: an MLP 784-512x10-10 (ReLU, NTK parameterization as the official code: every layer
scaled by sqrt(2 / fan_in) after its matrix product), cross-entropy, SGD with momentum 0.9,
batch 500, random inputs in [-1, 1]. The loss is read every step (as our loop does).

    python3 experiments/train_bench/pytorch_step.py [--device cpu|cuda] [--threads 2] [--json]

`--json` also prints one JSON line (the fields of `ntk-train bench`'s, backend
"pytorch-" + device). On CUDA the matrix products are IEEE f32 (PyTorch's default for
matmuls; no TF32).
"""
import argparse
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def time_sgd_steps(model, opt, x, y, warmup, steps, dev):
    """Seconds per SGD step (zero_grad, cross-entropy forward, backward, opt.step, the loss
    read every step as our loop does), after `warmup` untimed steps; also the first and the
    last loss read."""
    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    first = None
    for _ in range(warmup):
        v = step()
        first = v if first is None else first
    sync(dev)
    t = time.perf_counter()
    last = None
    for _ in range(steps):
        last = step()
    sync(dev)
    return (time.perf_counter() - t) / max(steps, 1), first, last


class Mlp(nn.Module):
    def __init__(self, d, width, depth, k):
        super().__init__()
        sizes = [d] + [width] * depth + [k]
        self.layers = nn.ModuleList(
            nn.Linear(a, b, bias=False) for a, b in zip(sizes[:-1], sizes[1:])
        )
        for layer in self.layers:
            nn.init.normal_(layer.weight)
        self.scales = [math.sqrt(2.0 / a) for a in sizes[:-1]]

    def forward(self, x):
        for layer, s in zip(self.layers[:-1], self.scales[:-1]):
            x = F.relu(layer(x) * s)
        return self.layers[-1](x) * self.scales[-1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--input-dim", type=int, default=784)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--json", action="store_true", help="also print one JSON line")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    torch.manual_seed(0)
    model = Mlp(a.input_dim, a.width, a.depth, 10).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.rand(a.batch, a.input_dim, device=dev) * 2 - 1
    y = torch.randint(0, 10, (a.batch,), device=dev)
    s, _, last = time_sgd_steps(model, opt, x, y, 2, a.steps, dev)
    sizes = [a.input_dim] + [a.width] * a.depth + [10]
    macs = sum(u * v for u, v in zip(sizes[:-1], sizes[1:]))
    flops = a.batch * (6 * macs - 2 * sizes[0] * sizes[1])
    print(
        f"pytorch {torch.__version__} {a.device} threads {torch.get_num_threads()}: "
        f"{s:.4f} s/step, {a.batch / s:.0f} samples/s, {flops / s / 1e9:.1f} GFLOP/s"
    )
    if a.json:
        print(json.dumps({
            "model": f"mlp {'-'.join(map(str, sizes))} relu",
            "backend": "pytorch-" + dev.type,
            "device_name": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
            "torch": torch.__version__,
            "precision": "f32",
            "engine": "eager",
            "threads": torch.get_num_threads(),
            "input_dim": a.input_dim,
            "batch": a.batch,
            "steps": a.steps,
            "seconds_per_step": s,
            "samples_per_second": a.batch / s,
            "gflop_per_step": flops / 1e9,
            "gflops": flops / s / 1e9,
            "last_loss": last,
        }), flush=True)


if __name__ == "__main__":
    main()
