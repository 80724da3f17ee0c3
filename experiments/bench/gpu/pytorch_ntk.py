#!/usr/bin/env python3
"""The PyTorch peer of `ntk-probe bench`: the structured empirical NTK of the bench's MLP, on
the GPU, in f32, timed; then its extreme eigenvalues in f64 through cuSOLVER.

The network is the bench's (crates/ntk-probe/src/bench.rs: MlpConfig::new(d, width, depth,
relu), i.e. crates/ntk-model/src/config.rs's defaults): ReLU, input dimension d = 5, width
m = 512, depth L hidden layers, scalar output, no biases, NTK parameterization in the
`paper` convention (Liu & Hui Eq. 1): weights i.i.d. N(0, 1), stored [fan_in, fan_out],

    z_l = a_{l-1} W_l,   a_l = sqrt(2 / m) relu(z_l),   f = a_L W_out,   a_0 = x

(beta_l = 1, gamma_l = sqrt(c / m) with c = 2, beta_out = 1). The kernel, as
crates/ntk-probe/src/structured.rs computes it, never forming the Jacobian:

    K = sum_l (beta_l^2 A_{l-1} A_{l-1}^T) .* (D_l D_l^T) + beta_out^2 A_L A_L^T,
    D_L = (beta_out W_out[:, 0])^T .* gamma_L relu'(Z_L),
    D_{l-1} = beta_l (D_l W_l^T) .* gamma_{l-1} relu'(Z_{l-1})

(one batched forward, a hand-written batched backward), here as full n x n products on the
device (ours computes the upper staircase in row blocks). Inputs are n standard Gaussian
points. Weights and inputs come from torch's generator (seeds --seed, --data-seed), not our
ChaCha8 streams: the same distributions, not the same numbers, so lambda_min and kappa
agree with ours in scale, not digit for digit.

Timed, each synchronized: (a) the formation, best of --repeats after one warm-up;
(b) lambda_min, lambda_max (kappa) by torch.linalg.eigvalsh on K cast to float64 on the
device (cuSOLVER), the cast included, after a small warm-up solve; (c) for reference
torch.linalg.cholesky_ex of K.double() alone, and of the f32 K (`cholesky_f32_s`; its
`info` > 0 when f32 cannot factor K).

`--from DIR` takes the inputs and weights from an `ntk-probe ntk --save-weights` output
directory (inputs.npy, weights.safetensors; the network of its summary.json, which must be
this one: relu, paper convention, no bias, scalar output) instead of drawing them, so that
the kernel is ours exactly; the JSON then also holds the relative error against our
DIR/ntk.npy and our lambda_min, lambda_max and kappa from DIR/summary.json.

`--check` instead compares the structured K with the per-sample Jacobian NTK from
torch.func (vmap of jacrev, K = J J^T) on --check-n points (default 64), in float64 and
float32, prints the relative Frobenius errors and exits non-zero when they exceed 1e-10
(f64) or 1e-4 (f32).

    python3 experiments/bench/gpu/pytorch_ntk.py --n 2000 --depth 10 --width 512 \
        --input-dim 5 --repeats 3 --device cuda --json
    python3 experiments/bench/gpu/pytorch_ntk.py --check --device cuda
"""
import argparse
import json
import math
import os
import struct
import sys
import time

import torch

EPS_F32 = 2.0 ** -23


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def timed(dev, fn):
    """fn()'s result and its seconds, the device synchronized before and after."""
    sync(dev)
    t = time.perf_counter()
    result = fn()
    sync(dev)
    return result, time.perf_counter() - t


def ieee_f32():
    """IEEE f32 matrix products on CUDA (no TF32; PyTorch's default for matmuls, made
    explicit). Returns what was set."""
    try:
        torch.backends.cuda.matmul.fp32_precision = "ieee"
    except Exception:  # older torch: the legacy switch
        torch.backends.cuda.matmul.allow_tf32 = False
    return "ieee"


def network(d, width, depth, seed, dev, dtype):
    """Hidden weights W_1..W_L ([d, m], then [m, m]) and W_out ([m, 1] or [d, 1] at depth
    0), all N(0, 1), drawn on the CPU (device-independent) and moved."""
    g = torch.Generator().manual_seed(seed)
    sizes = [d] + [width] * depth + [1]
    ws = [torch.randn(a, b, generator=g, dtype=torch.float64) for a, b in zip(sizes[:-1], sizes[1:])]
    ws = [w.to(dev, dtype) for w in ws]
    return ws[:-1], ws[-1]


def inputs(n, d, seed, dev, dtype):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g, dtype=torch.float64).to(dev, dtype)


def load_probe(path, dev, dtype):
    """Inputs [n, d] and weights ([fan_in, fan_out]) of an `ntk-probe ntk --save-weights`
    directory: inputs.npy (float64) and weights.safetensors (`layers.{i}.weight` as
    [out, in], PyTorch's layout), read with numpy and a few lines of safetensors parsing."""
    import numpy as np

    x = torch.from_numpy(np.load(os.path.join(path, "inputs.npy"))).to(dev, dtype)
    with open(os.path.join(path, "weights.safetensors"), "rb") as f:
        raw = f.read()
    size = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + size])
    types = {"F64": np.float64, "F32": np.float32}
    layers = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        start, end = t["data_offsets"]
        w = np.frombuffer(raw[8 + size + start:8 + size + end], dtype=types[t["dtype"]])
        layers[name] = w.reshape(t["shape"])
    count = len([k for k in layers if k.startswith("layers.") and k.endswith(".weight")])
    if count != len(layers):
        raise SystemExit(f"{path}: biases or normalization layers are not supported here")
    ws = [torch.from_numpy(layers[f"layers.{i}.weight"].T.copy()).to(dev, dtype) for i in range(count)]
    if ws[-1].shape[1] != 1:
        raise SystemExit(f"{path}: the output layer has {ws[-1].shape[1]} outputs; expected 1")
    return x, ws[:-1], ws[-1]


def structured_ntk(x, ws, w_out, gamma):
    """K (n x n) by the structured formula: one forward, the batched backward, Grams."""
    a, z = [x], []
    h = x
    for w in ws:
        pre = h @ w
        z.append(pre)
        h = torch.relu(pre) * gamma
        a.append(h)
    k = a[-1] @ a[-1].T  # beta_out = 1
    if ws:
        # D_L = W_out[:, 0]^T .* gamma relu'(Z_L), the same row for every sample.
        d = (z[-1] > 0).to(x.dtype) * (gamma * w_out[:, 0])
        for i in range(len(ws) - 1, -1, -1):
            g = a[i] @ a[i].T
            g.mul_(d @ d.T)
            k.add_(g)
            if i > 0:
                d = (d @ ws[i].T).mul_((z[i - 1] > 0).to(x.dtype)).mul_(gamma)
    return k


def jacobian_ntk(x, ws, w_out, gamma):
    """The reference: per-sample gradients from torch.func, K = J J^T."""
    from torch.func import jacrev, vmap

    def f(params, xi):
        h = xi
        for w in params[:-1]:
            h = torch.relu(h @ w) * gamma
        return (h @ params[-1])[0]

    params = tuple(ws) + (w_out,)
    jac = vmap(jacrev(f), in_dims=(None, 0))(params, x)
    n = x.shape[0]
    j = torch.cat([t.reshape(n, -1) for t in jac], 1)
    return j @ j.T


def structured_gflop(n, d, m, depth):
    """crates/ntk-probe/src/bench.rs structured_flops with the full n^2 (fraction 1)."""
    if depth == 0:
        return (2.0 * n * d + n * n * 2.0 * d) / 1e9
    forward = 2.0 * n * (d * m + (depth - 1) * m * m + m)
    backward = 2.0 * n * (depth - 1) * m * m
    grams = 2.0 * n * n * (d + 2.0 * depth * m)
    elementwise = 3.0 * depth * n * n
    return (forward + backward + grams + elementwise) / 1e9


def check(a, dev):
    gamma = math.sqrt(2.0 / a.width)
    results = {}
    ok = True
    for name, dtype, tol in (("f64", torch.float64, 1e-10), ("f32", torch.float32, 1e-4)):
        x = inputs(a.check_n, a.input_dim, a.data_seed, dev, dtype)
        ws, w_out = network(a.input_dim, a.width, a.depth, a.seed, dev, dtype)
        k = structured_ntk(x, ws, w_out, gamma).double()
        x64 = x.double()
        ws64, w_out64 = [w.double() for w in ws], w_out.double()
        ref = jacobian_ntk(x64, ws64, w_out64, gamma)
        err = float(torch.linalg.norm(k - ref) / torch.linalg.norm(ref))
        sym = float(torch.linalg.norm(k - k.T) / torch.linalg.norm(k))
        good = err <= tol
        ok &= good
        results[name] = {"relative_error": err, "asymmetry": sym, "tolerance": tol, "ok": good}
        print(
            f"{'ok  ' if good else 'FAIL'} structured vs torch.func Jacobian NTK, {name} kernel, "
            f"n={a.check_n} d={a.input_dim} width={a.width} depth={a.depth}: relative "
            f"Frobenius error {err:.3e} (tolerance {tol:g}), asymmetry {sym:.1e}",
            flush=True,
        )
    if a.json:
        print(json.dumps({
            "kind": "check", "backend": "pytorch-" + dev.type, "torch": torch.__version__,
            "n": a.check_n, "depth": a.depth, "width": a.width, "d": a.input_dim,
            "ok": ok, **{f"relative_error_{k}": v["relative_error"] for k, v in results.items()},
        }), flush=True)
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--input-dim", type=int, default=5)
    p.add_argument("--repeats", type=int, default=3, help="timed formations (best is kept)")
    p.add_argument("--device", default="cuda")
    p.add_argument("--seed", type=int, default=1, help="weights (the bench's MlpConfig seed)")
    p.add_argument("--data-seed", type=int, default=0, help="inputs")
    p.add_argument("--no-eigen", action="store_true", help="time the formation only")
    p.add_argument("--from", dest="source", metavar="DIR",
                   help="inputs and weights of an `ntk-probe ntk --save-weights` directory")
    p.add_argument("--json", action="store_true", help="also print one JSON line")
    p.add_argument("--check", action="store_true", help="structured vs torch.func, then exit")
    p.add_argument("--check-n", type=int, default=64)
    a = p.parse_args()
    dev = torch.device(a.device)
    if dev.type == "cuda":
        ieee_f32()
    if a.check:
        sys.exit(0 if check(a, dev) else 1)

    dtype = torch.float32
    ours = {}
    if a.source:
        with open(os.path.join(a.source, "summary.json")) as f:
            summary = json.load(f)
        want = {"activation": "relu", "convention": "paper", "parameterization": "ntk"}
        for key, value in want.items():
            if summary.get(key) != value:
                raise SystemExit(f"{a.source}: {key} is {summary.get(key)}, expected {value}")
        x, ws, w_out = load_probe(a.source, dev, dtype)
        a.n, a.input_dim = x.shape
        a.depth = len(ws)
        a.width = ws[0].shape[1] if ws else a.width
        ours = {f"ours_{k}": summary.get(k) for k in
                ("lambda_min", "lambda_max", "kappa", "singular", "precision", "backend",
                 "engine", "eigen", "kernel_seconds", "eigen_seconds")}
    else:
        x = inputs(a.n, a.input_dim, a.data_seed, dev, dtype)
        ws, w_out = network(a.input_dim, a.width, a.depth, a.seed, dev, dtype)
    gamma = math.sqrt(2.0 / a.width)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"

    # (a) formation: one warm-up, then the best of the repeats.
    k = structured_ntk(x, ws, w_out, gamma)
    sync(dev)
    times = []
    for _ in range(max(a.repeats, 1)):
        del k
        k, seconds = timed(dev, lambda: structured_ntk(x, ws, w_out, gamma))
        times.append(seconds)
    formation = min(times)
    gflop = structured_gflop(a.n, a.input_dim, a.width, a.depth)
    row = {
        "kind": "ntk",
        "n": a.n, "d": a.input_dim, "width": a.width, "depth": a.depth,
        "precision": "f32", "backend": "pytorch-" + dev.type, "engine": "eager",
        "device_name": name, "torch": torch.__version__,
        "gflop": gflop, "formation_s": formation, "formation_all_s": times,
        "gflops_per_s": gflop / formation,
        "trace": float(k.double().trace()),
        "source": a.source or f"torch generator, seeds {a.seed} (weights) and {a.data_seed} (inputs)",
        **ours,
    }
    if a.source and os.path.exists(os.path.join(a.source, "ntk.npy")):
        import numpy as np

        ref = torch.from_numpy(np.load(os.path.join(a.source, "ntk.npy"))).to(dev, torch.float64)
        row["relative_error_vs_ours"] = float(torch.linalg.norm(k.double() - ref) / torch.linalg.norm(ref))
        del ref

    if not a.no_eigen:
        if dev.type == "cuda":
            try:
                row["linalg_library"] = str(torch.backends.cuda.preferred_linalg_library())
            except Exception:
                pass
        # Warm-up of the solvers (library handles, workspaces) on a small SPD matrix.
        w = torch.eye(64, device=dev, dtype=torch.float64) * 2.0
        torch.linalg.eigvalsh(w)
        torch.linalg.cholesky_ex(w)
        torch.linalg.cholesky_ex(w.float())
        sync(dev)

        # (b) the extreme eigenvalues, f64 on the device, the cast included.
        t = time.perf_counter()
        k64 = k.double()
        ev = torch.linalg.eigvalsh(k64)
        lam_min, lam_max = float(ev[0]), float(ev[-1])
        row["eigvalsh_s"] = time.perf_counter() - t
        del ev

        # (c) Cholesky alone, of the f64 copy and of the f32 kernel.
        (l64, info), row["cholesky_s"] = timed(dev, lambda: torch.linalg.cholesky_ex(k64))
        row["cholesky_info"] = int(info)
        del l64, k64
        (l32, info32), row["cholesky_f32_s"] = timed(dev, lambda: torch.linalg.cholesky_ex(k))
        row["cholesky_f32_info"] = int(info32)
        del l32

        kappa = lam_max / lam_min if lam_min > 0 else float("inf")
        row.update({
            "lambda_min": lam_min, "lambda_max": lam_max, "kappa": kappa,
            # crates/ntk-probe/src/spectrum.rs's rule for a kernel built in f32.
            "resolved_in_f32": lam_min > a.n * EPS_F32 * lam_max,
        })

    line = (
        f"pytorch {torch.__version__} {a.device} ({name}) structured NTK f32, n {a.n}, d "
        f"{a.input_dim}, width {a.width}, depth {a.depth}: formation {formation:.4f} s "
        f"(best of {len(times)}; {gflop:.1f} GFLOP, {gflop / formation:.0f} GFLOP/s)"
    )
    if "eigvalsh_s" in row:
        line += (
            f", eigvalsh f64 {row['eigvalsh_s']:.3f} s, cholesky f64 {row['cholesky_s']:.4f} s "
            f"(info {row['cholesky_info']}), f32 {row['cholesky_f32_s']:.4f} s (info "
            f"{row['cholesky_f32_info']}); lambda_min {row['lambda_min']:.6g}, lambda_max "
            f"{row['lambda_max']:.6g}, kappa {row['kappa']:.6g}"
        )
    if "relative_error_vs_ours" in row:
        line += (
            f"; against our kernel ({a.source}): relative error {row['relative_error_vs_ours']:.3e},"
            f" our lambda_min {row.get('ours_lambda_min')}, lambda_max {row.get('ours_lambda_max')}"
        )
    print(line, flush=True)
    if a.json:
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
