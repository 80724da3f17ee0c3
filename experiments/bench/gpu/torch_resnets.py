#!/usr/bin/env python3
"""PyTorch's CIFAR ResNet steps on the GPU for many configs in one process (one import of
torch, one CUDA context): for each DEPTH:VARIANT argument, eager and whole-step CUDA graph
(experiments/train_bench/pytorch_resnet_step.py's networks and timing), f32 with TF32 off
(and on with --tf32), batch 128; one JSON line per timing on stdout.

    python3 experiments/bench/gpu/torch_resnets.py 20:batch_norm 110:fixup ...
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "train_bench"))

import torch  # noqa: E402

import pytorch_resnet_step as prs  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("configs", nargs="+", help="DEPTH:VARIANT")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--tf32", action="store_true")
    a = p.parse_args()
    dev = torch.device("cuda")
    precision = "tf32" if prs.set_fp32_precision(a.tf32) == "tf32" else "f32"
    torch.backends.cudnn.benchmark = False
    name = torch.cuda.get_device_name(dev)
    for c in a.configs:
        depth, variant = c.split(":")
        depth = int(depth)
        for engine in ("eager", "graph"):
            torch.manual_seed(0)
            model = prs.ResNet(depth, variant).to(dev)
            model.train()
            opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, dampening=0.0,
                                  weight_decay=0.0, nesterov=False)
            x = (torch.rand(a.batch, 3, 32, 32) * 2 - 1).to(dev)
            y = torch.randint(0, 10, (a.batch,)).to(dev)
            try:
                if engine == "graph":
                    s, first, last = prs.time_graphed_steps(model, opt, x, y, 3, a.steps)
                else:
                    s, first, last = prs.time_sgd_steps(model, opt, x, y, 3, a.steps, dev)
                err = None
            except Exception as e:  # a capture that fails is reported, not fatal
                s, first, last, err = None, None, None, repr(e)
            print(json.dumps({
                "model": prs.describe(depth, variant), "depth": depth, "variant": variant,
                "backend": "pytorch-cuda", "device_name": name, "torch": torch.__version__,
                "precision": precision, "engine": engine, "batch": a.batch, "steps": a.steps,
                "seconds_per_step": s, "first_loss": first, "last_loss": last, "error": err,
            }), flush=True)


if __name__ == "__main__":
    main()
