"""The full spectrum of each convergence run's empirical NTK at initialization, and how the
run's initial residual and its targets project on the eigenvectors, for predictors.py.

For each run of experiments/convergence/mnist2000/convergence.csv it takes the run's own
config.toml ([data] and [model]: the same 2,000 images, width, depth, activation, seed)
and asks ntk-probe for the same network's kernel:

1. `ntk-probe ntk --set data.n=10 --save-weights`: the seeded draw of the weights (the draw
   does not depend on n), in f64;
2. the weights rounded to f32: ntk-train draws the same values but holds them in f32
   (train.precision = "f32") and widens them to f64 for its prediction, so the f64 draw
   itself gives a kernel 1e-9 off the run's, the rounded one the run's to 1e-13;
3. `ntk-probe ntk` in f64 on the 2,000 images with those weights (probe.weights,
   probe.output = "sum"): ntk.npy (the kernel summed over the 10 outputs), outputs.npy
   (the outputs f_0 at initialization).

Then, in numpy: K = ntk / 10 (ntk-train's per-output kernel, OutputMode::Sum / k), its
eigendecomposition K = V diag(lambda) V^T, the residual r_0 = f_0 - T (T one-hot, the labels
from the MNIST file), and per eigenvalue the energies sum_j (V^T r_0)_ij^2 and
sum_j (V^T T)_ij^2. Saved as mnist2000/spectra/<run id>.npy: float64, n x 3, columns
(lambda ascending, residual energy, target energy).

Checked against what the run recorded, into mnist2000/spectra/index.csv: lambda_min,
lambda_max and the rank (eigenvalues above n eps lambda_max) against the run's
predicted_spectrum.csv (kernel = empirical); the loss curve of the linearized model
L_t = sum_i e_i (1 - lr lambda_i / n)^(2t) / (2n) against its predicted.csv, every epoch;
and that curve's middle-half rate against convergence.csv's predicted_rate_empirical.

    export CARGO_TARGET_DIR=$HOME/.cache/ntk-target    # where ntk-probe is built
    RAYON_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python3 experiments/convergence/spectra.py

Resumable (a run whose .npy is there is skipped); `--only ID[,ID]` does those runs;
about 4 minutes of one core for the 36 runs (2.5 s at depth 1 to 13 s at depth 10 a run).
"""
import argparse
import csv
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(v)


def probe_config(run_cfg):
    """The probe's config for the run's network and data: [data] and [model] copied."""
    lines = []
    for section in ("data", "model"):
        lines.append(f"[{section}]")
        lines += [f"{k} = {toml_value(v)}" for k, v in run_cfg[section].items()]
    lines += ["[probe]", 'precision = "f64"', 'protocol = "whole"', 'output = "sum"']
    return "\n".join(lines) + "\n"


def round_weights_f32(src, dst):
    """A safetensors file of f64 tensors with every value rounded to f32 (kept as f64)."""
    b = Path(src).read_bytes()
    (size,) = struct.unpack("<Q", b[:8])
    header = json.loads(b[8:8 + size])
    data = bytearray(b[8 + size:])
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F64", (name, t["dtype"])
        s, e = t["data_offsets"]
        w = np.frombuffer(bytes(data[s:e]), dtype="<f8")
        data[s:e] = w.astype(np.float32).astype("<f8").tobytes()
    Path(dst).write_bytes(b[:8 + size] + bytes(data))


def mnist_labels(run_cfg, n):
    d = run_cfg["data"]
    if d["dataset"] != "mnist" or d.get("split", "train") != "train" or d["subset"] != "first":
        sys.exit(f"labels: only the first n of MNIST's training set, not {d}")
    root = Path(os.environ.get("NTK_DATA_DIR", ROOT / "datasets" / "data"))
    raw = (root / "mnist" / "train-labels-idx1-ubyte").read_bytes()
    assert struct.unpack(">I", raw[:4])[0] == 2049
    return np.frombuffer(raw[8:8 + n], dtype=np.uint8).astype(int)


def middle_rate(epochs, losses):
    """crates/ntk-train/src/convergence.rs middle_rate: the least-squares slope of -ln L
    over the epochs in [E/4, 3E/4]; 0 when ln L moves by less than 1e-6 there."""
    x = np.asarray(epochs, float)
    y = np.asarray(losses, float)
    last = x.max()
    m = (x >= last / 4) & (x <= 3 * last / 4)
    x, ly = x[m], np.log(y[m])
    slope = -np.sum((x - x.mean()) * (ly - ly.mean())) / np.sum((x - x.mean()) ** 2)
    return 0.0 if abs(slope * (x[-1] - x[0])) < 1e-6 else slope


def linearized_loss(lam, energy, lr, n, steps):
    """L after 0..steps-1 steps of r <- (I - lr K / n) r, from the spectrum."""
    w = (1.0 - lr * lam / n) ** 2
    out = np.empty(steps)
    cur = energy.astype(float).copy()
    for t in range(steps):
        out[t] = cur.sum() / (2 * n)
        cur *= w
    return out


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def one_run(probe, run_dir, out_npy, tmp):
    cfg = tomllib.loads((run_dir / "config.toml").read_text())
    n = cfg["data"]["n"]
    spec = next(r for r in read_csv(run_dir / "predicted_spectrum.csv") if r["kernel"] == "empirical")
    k = int(spec["outputs"])
    (tmp / "probe.toml").write_text(probe_config(cfg))
    env = dict(os.environ, RAYON_NUM_THREADS=os.environ.get("RAYON_NUM_THREADS", "1"),
               OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    quiet = dict(env=env, check=True, stdout=subprocess.DEVNULL)
    t0 = time.time()
    subprocess.run([probe, "ntk", "--config", str(tmp / "probe.toml"), "--out", str(tmp / "draw"),
                    "--set", "data.n=10", "--save-weights"], **quiet)
    round_weights_f32(tmp / "draw" / "weights.safetensors", tmp / "w32.safetensors")
    subprocess.run([probe, "ntk", "--config", str(tmp / "probe.toml"), "--out", str(tmp / "ntk"),
                    "--set", f"probe.weights={tmp / 'w32.safetensors'}",
                    # Given weights draw nothing: the seed is refused with them.
                    "--set", "model.seed=0", "--save-weights"], **quiet)
    t_probe = time.time() - t0
    kern = np.load(tmp / "ntk" / "ntk.npy") / k
    f0 = np.load(tmp / "ntk" / "outputs.npy")
    assert kern.shape == (n, n) and f0.shape == (n, k), (kern.shape, f0.shape)
    y = mnist_labels(cfg, n)
    targets = np.zeros((n, k))
    targets[np.arange(n), y] = 1.0
    r0 = f0 - targets
    lam, vec = np.linalg.eigh(kern)
    e_res = ((vec.T @ r0) ** 2).sum(axis=1)
    e_tgt = ((vec.T @ targets) ** 2).sum(axis=1)
    t_all = time.time() - t0
    np.save(out_npy, np.column_stack([lam, e_res, e_tgt]))
    shutil.rmtree(tmp / "draw")
    shutil.rmtree(tmp / "ntk")
    return cfg, spec, lam, e_res, t_probe, t_all


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="mnist2000", help="the experiment folder (default mnist2000)")
    ap.add_argument("--only", default="", help="run ids, comma-separated")
    ap.add_argument("--probe", default=None, help="the ntk-probe binary")
    args = ap.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR", str(ROOT / "target"))
    probe = args.probe or str(Path(target) / "debug" / "ntk-probe")
    base = HERE / args.set
    out = base / "spectra"
    out.mkdir(exist_ok=True)
    conv = {r["id"]: r for r in read_csv(base / "convergence.csv")}
    ids = [i for i in (args.only.split(",") if args.only else conv)]
    index_path = out / "index.csv"
    index = {r["id"]: r for r in read_csv(index_path)} if index_path.exists() else {}
    for rid in ids:
        run_dir = base / "runs" / rid
        npy = out / f"{rid}.npy"
        if npy.exists() and rid in index:
            continue
        with tempfile.TemporaryDirectory(prefix="ntk-spectra-") as tmp:
            cfg, spec, lam, e_res, t_probe, t_all = one_run(probe, run_dir, npy, Path(tmp))
        n = len(lam)
        lmin, lmax = float(spec["lambda_min"]), float(spec["lambda_max"])
        rank = int(np.sum(lam > n * np.finfo(float).eps * lam[-1]))
        lr = float(cfg["optim"]["lr"])
        pred = [r for r in read_csv(run_dir / "predicted.csv") if r["kernel"] == "empirical"]
        epochs = [int(r["epoch"]) for r in pred]
        committed = np.array([float(r["train_loss"]) for r in pred])
        ours = linearized_loss(lam, e_res, lr, n, len(pred))
        rate = middle_rate(epochs, ours)
        committed_rate = float(conv[rid]["predicted_rate_empirical"])
        index[rid] = {
            "id": rid,
            "n": n,
            "lambda_min": repr(float(lam[0])),
            "lambda_max": repr(float(lam[-1])),
            "rank": rank,
            "lambda_max_rel_diff": f"{abs(lam[-1] / lmax - 1):.3e}",
            "lambda_min_diff_over_lambda_max": f"{abs(lam[0] - lmin) / lmax:.3e}",
            # a singular kernel's lambda_min is rounding noise: compared only against lambda_max
            "lambda_min_rel_diff": f"{abs(lam[0] / lmin - 1):.3e}" if rank == n else "",
            "rank_committed": spec["rank"],
            "loss_curve_max_rel_diff": f"{np.max(np.abs(ours / committed - 1)):.3e}",
            "predicted_rate": repr(float(rate)),
            "predicted_rate_rel_diff": f"{abs(rate / committed_rate - 1):.3e}",
            "seconds": f"{t_all:.1f}",
        }
        r = index[rid]
        print(f"{rid}: lambda_max {r['lambda_max_rel_diff']} lambda_min {r['lambda_min_rel_diff'] or '-'} "
              f"rank {rank}/{spec['rank']} curve {r['loss_curve_max_rel_diff']} "
              f"rate {r['predicted_rate_rel_diff']} ({t_probe:.1f} s probe, {t_all:.1f} s)",
              flush=True)
        rows = [index[i] for i in conv if i in index]
        with open(index_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
