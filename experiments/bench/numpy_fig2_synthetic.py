"""The peer of `configs/fig2_synthetic_bench.toml` in numpy: the synthetic Fig. 2 sweep as a
researcher writes it with numpy's float64 BLAS (issue 48 item 4's reference, 101 s when the
issue was filed).

Depths 0..10, ReLU and linear, the official code's 5 seeds, n = 2000 inputs of N(0, I_5),
width 512, the paper's NTK parameterization (weights N(0, 1), hidden activations scaled by
sqrt(c / m), c = 2 for ReLU and 1 for the identity, an unscaled scalar output), the whole
set's kernel in float64:

    K = sum_{l=1}^{L+1} (A_{l-1} A_{l-1}^T) o (G_l G_l^T)

with A_0 = X, A_l = sqrt(c/m) phi(H_l), H_l = A_{l-1} W_l^T, G_{L+1} = 1 and
G_l = sqrt(c/m) phi'(H_l) o (G_{l+1} W_{l+1}) (o: the Hadamard product). Every kernel's
spectrum by `numpy.linalg.eigvalsh` (LAPACK's dsyevd), kappa = lambda_max / lambda_min,
singular when lambda_min <= n eps lambda_max (then its rank is the count above that), and
the minimum pairwise gradient angle from K. numpy's `A @ A.T` is a SYRK (the symmetry used).

Same work as the probe's sweep, as a researcher's script does it (each network drawn and
its kernel formed from scratch, every eigenvalue). The weights are numpy's draws, not the
probe's, and so are the inputs unless `--inputs` gives the probe's (`inputs.npy` of
`ntk-probe run --config configs/synthetic_ntk.toml`): on those, the mean log10 kappa at
each depth is the probe's within the seeds' spread (checked 2026-11-27, 5 seeds: see
experiments/bench/README.md). Prints one line per kernel and the wall time; `--csv FILE`
writes the rows.

    OPENBLAS_NUM_THREADS=2 python experiments/bench/numpy_fig2_synthetic.py

The peer of one probe command (`ntk-probe ntk ... --depth 10 --out DIR`, issue 62 item 3),
as a whole process doing the same job: one kernel, and its files written as the probe
writes them (`inputs.npy`, `ntk.npy`, `eigenvalues.npy`, each fsynced):

    OPENBLAS_NUM_THREADS=2 python experiments/bench/numpy_fig2_synthetic.py \
        --seeds 1 --depth 10 --activation relu --save DIR
"""

import argparse
import math
import os
import sys
import time

import numpy as np

SEEDS = [1, 32, 111, 555, 666]


def kernel(x, depth, relu, rng, width):
    """The NTK of one network of `depth` hidden layers at a fresh draw, and its forward."""
    c = 2.0 if relu else 1.0
    gamma = math.sqrt(c / width)
    weights = []
    fan_in = x.shape[1]
    for _ in range(depth):
        weights.append(rng.standard_normal((width, fan_in)))
        fan_in = width
    w_out = rng.standard_normal(fan_in)

    acts = [x]
    slopes = []
    for w in weights:
        h = acts[-1] @ w.T
        if relu:
            slopes.append(gamma * (h > 0))
            acts.append(gamma * np.maximum(h, 0.0))
        else:
            slopes.append(np.full_like(h, gamma))
            acts.append(gamma * h)

    # The output layer's term: A_L A_L^T (G_{L+1} = 1).
    k = acts[-1] @ acts[-1].T
    g = slopes[-1] * w_out[None, :] if depth else None
    for l in range(depth, 0, -1):
        # Layer l's term: (A_{l-1} A_{l-1}^T) o (G_l G_l^T).
        k += (acts[l - 1] @ acts[l - 1].T) * (g @ g.T)
        if l > 1:
            g = slopes[l - 2] * (g @ weights[l - 1])
    return k


def save(directory, name, array):
    """`array` as `directory/name`, written and fsynced before it is renamed into place."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path + ".tmp", "wb") as f:
        np.save(f, array)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


def summarize(k, directory=None):
    n = k.shape[0]
    eig = np.linalg.eigvalsh(k)
    if directory:
        save(directory, "ntk.npy", k)
        save(directory, "eigenvalues.npy", eig)
    lmin, lmax = eig[0], eig[-1]
    threshold = n * np.finfo(np.float64).eps * lmax
    singular = lmin <= threshold
    rank = int(np.sum(eig > threshold))
    d = np.sqrt(np.diag(k))
    cos = k / d[:, None] / d[None, :]
    np.fill_diagonal(cos, -np.inf)
    angle = math.degrees(math.acos(min(1.0, float(cos.max()))))
    return lmin, lmax, singular, rank, angle


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--input-dim", type=int, default=5)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--max-depth", type=int, default=10)
    parser.add_argument("--seeds", type=int, nargs="*", default=SEEDS)
    parser.add_argument("--inputs", help="the n x d inputs (.npy) instead of numpy's own draw")
    parser.add_argument("--csv", help="write one row per kernel here")
    parser.add_argument("--depth", type=int, help="this depth only (default: 0..max-depth)")
    parser.add_argument(
        "--activation", choices=["relu", "linear"], help="this activation only (default: both)"
    )
    parser.add_argument("--save", help="write inputs.npy and each kernel's ntk.npy and eigenvalues.npy here")
    args = parser.parse_args()

    if args.inputs:
        x = np.load(args.inputs).astype(np.float64)
    else:
        x = np.random.default_rng(0).standard_normal((args.n, args.input_dim))
    rows = []
    start = time.perf_counter()
    if args.save:
        save(args.save, "inputs.npy", x)
    depths = [args.depth] if args.depth is not None else range(args.max_depth + 1)
    for act in [args.activation] if args.activation else ["relu", "linear"]:
        for seed in args.seeds:
            for depth in depths:
                t = time.perf_counter()
                rng = np.random.default_rng(seed)
                k = kernel(x, depth, act == "relu", rng, args.width)
                lmin, lmax, singular, rank, angle = summarize(k, args.save)
                kappa = math.inf if singular else lmax / lmin
                secs = time.perf_counter() - t
                rows.append((act, seed, depth, lmin, lmax, kappa, singular, rank, angle, secs))
                print(
                    f"{act:6} seed {seed:3} depth {depth:2}: kappa {kappa:.4e} "
                    f"rank {rank} angle {angle:.3f} deg {secs:.2f} s",
                    flush=True,
                )
    wall = time.perf_counter() - start
    print(f"numpy sweep: {len(rows)} kernels in {wall:.1f} s", flush=True)
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("activation,seed,depth,lambda_min,lambda_max,kappa,singular,rank,min_angle_deg,seconds\n")
            for r in rows:
                f.write(",".join(str(v) for v in r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
