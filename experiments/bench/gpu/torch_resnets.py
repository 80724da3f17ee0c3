#!/usr/bin/env python3
"""PyTorch's CIFAR ResNet steps, default and tuned, for many configs in few processes: for
each DEPTH:VARIANT argument (experiments/train_bench/pytorch_resnet_step.py's networks and
timing), f32 with TF32 off (on with --tf32), batch 128, one JSON line per timing on stdout.

    python3 experiments/bench/gpu/torch_resnets.py 20:batch_norm 110:fixup ...
    python3 experiments/bench/gpu/torch_resnets.py --device cpu --steps 2 --batch 8 8:batch_norm

The peer is PyTorch as a performance-minded user runs it (issue 63 item 1): for every config,

    group    cudnn_benchmark  layout          engine
    default  false            nchw            eager, graph    PyTorch as it starts
    tuned    true             nchw            eager, graph    cuDNN's autotuner on
    tuned    true             channels_last   eager, graph    model and input channels_last

"graph" is the whole step (zero_grad, forward, backward, SGD) captured as one CUDA graph and
replayed. Every row records `cudnn_benchmark` and `layout`, and `status`: ok, failed (with
`error`), not applicable (a CUDA graph on the CPU) or skipped (--deadline-s reached).

The two groups run in two child processes, one after the other: PyTorch keeps one cache of
convolution plans per process, keyed by shape, layout, precision and determinism but not by
the autotuner flag (aten/src/ATen/native/cudnn/Conv_v8.cpp's run_single_conv looks it up
before asking either the heuristics or the search, and stores what either chose). In one
process, default rows after tuned ones would run the tuned plans, and tuned rows after
default ones would never search. NCHW and channels_last are different keys, so both
layouts share the tuned process.

Warm-up (--warmup, default 5): the autotuner searches on the first step that meets a shape.
In the tuned process the first row of each layout (and precision) pays the search (cudnnFind
over up to torch.backends.cudnn.benchmark_limit = 10 engine configs for each of the ~6
convolution shapes of these networks, forward, backward data and backward filter: about a
second or two on an H200), and every later row reuses the plans (all depths and variants
share the same shapes at one batch size). Eager rows take 5 untimed steps: the first is the
search, the second runs the chosen plans for the first time (their workspaces settle in the
caching allocator), the other three are steady steps, margin against one more allocation.
Graph rows take PyTorch's documented warm-up before capture (3 eager steps on a side stream,
which include the search if it has not happened yet), the capture, then 5 untimed replays.
`untimed_seconds` is each row's wall time outside the timed steps (model to the device,
warm-up, capture), so the search shows in the first tuned row of each layout.

--device cpu is a smoke test of the plumbing (meaningless figures): eager rows only, graph
rows reported as not applicable; the autotuner flag is set and recorded as on CUDA (the CPU
ignores it), channels_last is real on the CPU too.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "train_bench"))

# (group, cudnn_benchmark, layout, engine), in the order each group runs them for a config.
ROWS = (
    ("default", False, "nchw", "eager"),
    ("default", False, "nchw", "graph"),
    ("tuned", True, "nchw", "eager"),
    ("tuned", True, "nchw", "graph"),
    ("tuned", True, "channels_last", "eager"),
    ("tuned", True, "channels_last", "graph"),
)
GROUPS = ("default", "tuned")


def run_group(a, group, start):
    """One group's rows for every config, in this process; one JSON line each."""
    import torch

    import pytorch_resnet_step as prs

    dev = torch.device(a.device)
    if dev.type == "cuda":
        precision = "tf32" if prs.set_fp32_precision(a.tf32) == "tf32" else "f32"
        name = torch.cuda.get_device_name(dev)
    else:
        precision, name = "f32", "cpu"
        if a.threads:
            torch.set_num_threads(a.threads)
    try:
        cudnn = torch.backends.cudnn.version()
    except Exception:  # no cuDNN in this build
        cudnn = None
    rows = [r for r in ROWS if r[0] == group]
    for c in a.configs:
        depth, variant = c.split(":")
        depth = int(depth)
        for _, bench, layout, engine in rows:
            torch.backends.cudnn.benchmark = bench
            s = first = last = err = None
            untimed = None
            if a.deadline_s and time.monotonic() - start > a.deadline_s:
                status = "skipped"
                err = f"deadline: past --deadline-s {a.deadline_s:g} before this row"
            elif engine == "graph" and dev.type != "cuda":
                status = "not applicable"
            else:
                t0 = time.perf_counter()
                try:
                    torch.manual_seed(0)
                    fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
                    model = prs.ResNet(depth, variant).to(dev, memory_format=fmt)
                    model.train()
                    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9,
                                          dampening=0.0, weight_decay=0.0, nesterov=False)
                    x = (torch.rand(a.batch, 3, 32, 32) * 2 - 1).to(dev, memory_format=fmt)
                    y = torch.randint(0, 10, (a.batch,)).to(dev)
                    if engine == "graph":
                        s, first, last = prs.time_graphed_steps(model, opt, x, y, a.warmup, a.steps)
                    else:
                        s, first, last = prs.time_sgd_steps(model, opt, x, y, a.warmup, a.steps, dev)
                    untimed = time.perf_counter() - t0 - s * a.steps
                    status = "ok"
                except Exception as e:  # a capture that fails is reported, not fatal
                    s, first, last, status, err = None, None, None, "failed", repr(e)
                finally:
                    model = opt = x = y = None
            print(json.dumps({
                "model": prs.describe(depth, variant), "depth": depth, "variant": variant,
                "backend": "pytorch-" + dev.type, "device_name": name, "torch": torch.__version__,
                "cudnn": cudnn, "precision": precision, "engine": engine,
                "cudnn_benchmark": bench, "layout": layout, "group": group,
                "batch": a.batch, "steps": a.steps, "warmup": a.warmup,
                "seconds_per_step": s, "untimed_seconds": untimed,
                "first_loss": first, "last_loss": last, "status": status, "error": err,
            }), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("configs", nargs="+", help="DEPTH:VARIANT")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                   help="cpu: a smoke test of the plumbing (graph rows not applicable)")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=20, help="timed steps a row")
    p.add_argument("--warmup", type=int, default=5,
                   help="untimed steps a row (graph: replays after the capture)")
    p.add_argument("--tf32", action="store_true", help="TF32 on (CUDA matmuls and convolutions)")
    p.add_argument("--groups", default="default,tuned",
                   help="comma-separated: default (autotuner off, NCHW), tuned (autotuner on, "
                        "NCHW and channels_last); each runs in its own process")
    p.add_argument("--deadline-s", type=float, default=0.0,
                   help="start no row after this many seconds (0: none); later rows are "
                        "written with status skipped")
    p.add_argument("--threads", type=int, default=0, help="CPU threads (--device cpu)")
    p.add_argument("--in-process", action="store_true",
                   help="run the one group named by --groups in this process (what the "
                        "parent asks of each child)")
    a = p.parse_args()
    start = time.monotonic()
    groups = [g for g in a.groups.split(",") if g]
    bad = [g for g in groups if g not in GROUPS]
    if bad or not groups:
        p.error(f"--groups: expected some of {','.join(GROUPS)}, got {a.groups!r}")
    if a.tf32 and a.device != "cuda":
        p.error("--tf32 needs --device cuda")
    for c in a.configs:
        d, _, v = c.partition(":")
        if not d.isdigit() or not v:
            p.error(f"config {c!r}: expected DEPTH:VARIANT")
    if a.in_process:
        if len(groups) != 1:
            p.error("--in-process runs one group")
        run_group(a, groups[0], start)
        return 0
    rc = 0
    for g in groups:
        cmd = [sys.executable, os.path.abspath(__file__), "--in-process", "--groups", g,
               "--device", a.device, "--batch", str(a.batch), "--steps", str(a.steps),
               "--warmup", str(a.warmup), "--threads", str(a.threads)]
        if a.tf32:
            cmd.append("--tf32")
        if a.deadline_s:
            # The child's clock starts at its own start: pass what is left of ours (at least
            # a hair, so that a child started late skips every row instead of running them).
            cmd += ["--deadline-s", f"{max(a.deadline_s - (time.monotonic() - start), 1e-3):.3f}"]
        sys.stdout.flush()
        r = subprocess.run(cmd + a.configs)
        rc = rc or r.returncode
    return rc


if __name__ == "__main__":
    sys.exit(main())
