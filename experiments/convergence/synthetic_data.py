"""The synthetic set of the convergence experiment, as CSV files for `data.dataset = "file"`:
n = 2000 training and 1000 test points of N(0, I_5) (Liu & Hui's synthetic inputs, d = 5),
each with a random label 0 or 1 (independent of its input: the network must memorize them,
the regime where the smallest eigenvalues of the NTK set the pace). Deterministic: Python's
`random` with seed 47. Standard library only.

    python3 experiments/convergence/synthetic_data.py runs/convergence_synthetic/data
"""
import os
import random
import sys


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = random.Random(47)
    d = 5
    for name, n in [("train", 2000), ("test", 1000)]:
        with open(os.path.join(out, f"{name}_x.csv.tmp"), "w") as f:
            for _ in range(n):
                f.write(",".join(repr(rng.gauss(0.0, 1.0)) for _ in range(d)) + "\n")
        with open(os.path.join(out, f"{name}_y.csv.tmp"), "w") as f:
            for _ in range(n):
                f.write(f"{rng.randrange(2)}\n")
        for kind in ("x", "y"):
            os.replace(os.path.join(out, f"{name}_{kind}.csv.tmp"), os.path.join(out, f"{name}_{kind}.csv"))


if __name__ == "__main__":
    main(sys.argv[1])
