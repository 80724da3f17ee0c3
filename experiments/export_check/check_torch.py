#!/usr/bin/env python3
"""Our exported networks in PyTorch: the network rebuilt from `weights.safetensors` as the
project's PyTorch peer (experiments/train_bench/pytorch_resnet_step.py `ResNet`, every
variant; pytorch_step.py `Mlp` for the official code's ReLU MLP), its
outputs on the probe's inputs against ours (`outputs.npy`), and its NTK rebuilt with
torch.func (per-sample, per-output Jacobians, `vmap(jacrev)`, summed over the outputs as
the probe's `output = "sum"`) against ours (`ntk.npy`), all in float64 with BatchNorm in
evaluation mode, as the probe takes it.

A probe run directory, made by (see README.md here):

    ntk-probe ntk --config experiments/bench/probe_resnet20_n256.toml --out DIR \\
        --set data.n=16 --set 'probe.precision="f64"' --set 'resnet.variant="norm_relu"' \\
        --save-weights
    python3 experiments/export_check/check_torch.py DIR [DIR ...] [--json]

Prints one line per directory and exits 1 when a relative error exceeds --tol (default
1e-10: both sides are f64 sums over ~0.27M parameters, whose rounding is ~1e-13 relative).
"""
import argparse
import json
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "train_bench"))
from pytorch_resnet_step import ResNet  # noqa: E402
from pytorch_step import Mlp  # noqa: E402

DTYPES = {"F32": np.float32, "F64": np.float64}


def read_safetensors(path):
    """(name -> float64 array, metadata), from the safetensors format (8-byte header
    length, a JSON header of dtype, shape and byte offsets, then the data)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    data = raw[8 + n :]
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        lo, hi = meta["data_offsets"]
        dtype = DTYPES[meta["dtype"]]
        out[name] = np.frombuffer(data[lo:hi], dtype=dtype).reshape(meta["shape"]).astype(np.float64)
    return out, header.get("__metadata__", {})


def rebuild(run):
    """The peer network with the exported tensors (every parameter and buffer set, none
    left at the peer's own initialization)."""
    tensors, meta = read_safetensors(os.path.join(run, "weights.safetensors"))
    # The file carries the network's config (ntk_model::export): depth, variant, sizes.
    resnet = json.loads(meta["ntk_model_config"])
    if "variant" not in resnet:
        return rebuild_mlp(run, tensors, resnet)
    variant = resnet["variant"]
    net = ResNet(
        resnet["depth"],
        variant,
        num_classes=resnet.get("num_classes", 10),
        base_width=resnet.get("base_width", 16),
        image_size=resnet.get("image_size", 32),
        in_channels=resnet.get("in_channels", 3),
        kink=resnet.get("kink"),
        border_rescale=resnet.get("border_rescale"),
    ).double()
    state = {k: torch.from_numpy(v.copy()) for k, v in tensors.items()}
    missing, unexpected = net.load_state_dict(state, strict=False)
    # The peer's own extras: BatchNorm's batch counter (unused in evaluation mode) and the
    # border gains, which are functions of the shapes, not parameters.
    left = [k for k in missing if not k.endswith("num_batches_tracked") and not k.endswith(".gain")]
    if left or unexpected:
        raise SystemExit(f"{run}: tensors not matched: missing {left}, unexpected {unexpected}")
    net.eval()
    return net, resnet


def rebuild_mlp(run, tensors, cfg):
    """The MLP peer (pytorch_step.py `Mlp`: ReLU, NTK parameterization with the official code's
    sqrt(2 / fan_in) at every layer, no biases or normalization)."""
    want = {"activation": "relu", "parameterization": "ntk", "convention": "official",
            "normalization": "none", "bias": False}
    other = {k: cfg[k] for k, v in want.items() if cfg[k] != v}
    if other:
        raise SystemExit(f"{run}: the MLP peer is {want}; this network has {other}")
    net = Mlp(cfg["input_dim"], cfg["width"], cfg["depth"], cfg["output_dim"]).double()
    net.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in tensors.items()})
    net.eval()
    return net, dict(cfg, variant="mlp relu")


def torch_ntk(net, x):
    """The probe's `output = "sum"` kernel: K_ij = sum_o <df_o(x_i)/dp, df_o(x_j)/dp> over
    every parameter p and output o (the per-output kernels summed, not the kernel of the
    summed output)."""
    params = {k: v.detach() for k, v in net.named_parameters()}
    buffers = {k: v.detach() for k, v in net.named_buffers()}

    def f(p, xi):
        return torch.func.functional_call(net, (p, buffers), (xi.unsqueeze(0),))[0]

    jac = torch.func.vmap(torch.func.jacrev(f), in_dims=(None, 0))(params, x)
    n, k = x.shape[0], next(iter(jac.values())).shape[1]
    j = torch.cat([g.reshape(n, k, -1) for g in jac.values()], dim=2)
    return torch.einsum("iop,jop->ij", j, j)


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def check(run):
    net, resnet = rebuild(run)
    variant = resnet["variant"]
    x = np.load(os.path.join(run, "inputs.npy"))
    xt = torch.from_numpy(x).double()
    if "image_size" in resnet:
        c, s = resnet["in_channels"], resnet["image_size"]
        xt = xt.reshape(x.shape[0], c, s, s)
    with torch.no_grad():
        y = net(xt).numpy()
    ours_y = np.load(os.path.join(run, "outputs.npy"))
    k = torch_ntk(net, xt).detach().numpy()
    ours_k = np.load(os.path.join(run, "ntk.npy"))
    params = sum(p.numel() for p in net.parameters())
    return {
        "run": run,
        "variant": variant,
        "depth": resnet["depth"],
        "n": int(x.shape[0]),
        "parameters": int(params),
        "outputs_rel_err": rel(y, ours_y),
        "ntk_rel_err": rel(k, ours_k),
        "ntk_max": float(np.max(np.abs(ours_k))),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--tol", type=float, default=1e-10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    torch.set_default_dtype(torch.float64)
    bad = False
    rows = []
    for run in args.runs:
        r = check(run)
        rows.append(r)
        ok = r["outputs_rel_err"] <= args.tol and r["ntk_rel_err"] <= args.tol
        bad |= not ok
        if not args.json:
            print(
                f"{'ok ' if ok else 'BAD'} depth {r['depth']:>2} {r['variant']:<10} n={r['n']} "
                f"({r['parameters']} parameters): outputs rel. err. {r['outputs_rel_err']:.2e}, "
                f"NTK rel. err. {r['ntk_rel_err']:.2e} (max |K| {r['ntk_max']:.3e})"
            )
    if args.json:
        print(json.dumps(rows, indent=1))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
