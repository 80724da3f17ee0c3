"""The measured angles of experiments/fig1 and experiments/fig1_activations against the
infinite-width theory, recomputed from their committed fig1.csv: at each point (depth,
theta_in) of one width, the one-sample t-test of the seeds' phi minus the theory (two-sided,
n - 1 degrees of freedom) with the 95% confidence interval of the mean gap; the points of
one width (4 depths x 9 angles) are a family, corrected by Holm (experiments/welch.py). A
point differs from the theory where the corrected p < 0.05; otherwise it is not
distinguishable from it with these seeds. Standard library only.

    python3 experiments/fig1/against_theory.py
"""
import csv
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXPERIMENTS = os.path.dirname(HERE)
sys.path.insert(0, EXPERIMENTS)
from welch import holm, t_quantile, t_sf_two_sided  # noqa: E402 (experiments/welch.py)

TABLES = [("relu", "fig1/fig1.csv")] + [
    (a, f"fig1_activations/{a}/fig1.csv") for a in ("gelu", "tanh", "relu_squared")]


def family(path, width):
    """[(depth, theta_in, seeds, mean gap, ci_low, ci_high, p, p_holm)] for one width."""
    points = {}
    for r in csv.DictReader(open(os.path.join(EXPERIMENTS, path))):
        if r["width"] == width:
            key = (int(r["depth"]), float(r["theta_in_deg"]))
            points.setdefault(key, []).append(float(r["phi_deg"]) - float(r["theory_phi_deg"]))
    rows = []
    for (depth, theta), gaps in sorted(points.items()):
        m, se = statistics.fmean(gaps), statistics.stdev(gaps) / math.sqrt(len(gaps))
        half = t_quantile(0.975, len(gaps) - 1) * se
        p = t_sf_two_sided(m / se, len(gaps) - 1) if se > 0 else None
        rows.append([depth, theta, len(gaps), m, m - half, m + half, p])
    for row, p in zip(rows, holm([r[6] for r in rows])):
        row.append(p)
    return rows


if __name__ == "__main__":
    for activation, path in TABLES:
        for width in ("512", "4096"):
            rows = family(path, width)
            differ = [r for r in rows if r[7] is not None and r[7] < 0.05]
            raw = sum(1 for r in rows if r[6] is not None and r[6] < 0.05)
            print(f"{activation}, width {width}: {len(differ)} of {len(rows)} points differ from the "
                  f"theory after Holm ({raw} at raw p < 0.05)")
            for d, theta, n, m, lo, hi, p, ph in differ:
                print(f"  depth {d}, theta_in {theta:g}: gap {m:+.2f} deg (95% CI {lo:+.2f} to {hi:+.2f}), "
                      f"p = {p:.2g}, Holm p = {ph:.2g}")
