"""The NTK at initialization of ResNet-20 over 5 network seeds (seed 0 in
../ntk_resnet20_<variant>/, seeds 1-4 in <variant>/seed<S>/): per variant, kappa and the
minimum gradient angle with mean, standard deviation and standard error over the seeds, and
the rank. A singular kernel has no kappa: it is counted, never averaged (Standard library
only.)

    python3 experiments/agarwal_fig4/ntk_seeds/table.py
"""
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from welch import welch  # noqa: E402 (experiments/welch.py)

HERE = os.path.dirname(os.path.abspath(__file__))


def summaries(variant):
    paths = [os.path.join(HERE, "..", f"ntk_resnet20_{variant}", "summary.json")]
    paths += [os.path.join(HERE, variant, f"seed{s}", "summary.json") for s in range(1, 5)]
    return [json.load(open(p)) for p in paths if os.path.exists(p)]


def spread(values):
    if not values:
        return "-"
    m = statistics.fmean(values)
    if len(values) < 2:
        return f"{m:.4g} (one seed)"
    sd = statistics.stdev(values)
    return f"{m:.4g} +- {sd:.2g} (se {sd / math.sqrt(len(values)):.2g})"


print("| ResNet-20 | seeds | kappa: mean +- sd (se) | log10 kappa per seed | singular | rank | min gradient angle (deg): mean +- sd (se) |")
print("|---|---|---|---|---|---|---|")
for variant in ["batch_norm", "norm_relu", "fixup"]:
    s = summaries(variant)
    kappas = [x["kappa"] for x in s if x.get("kappa") is not None]
    singular = sum(1 for x in s if x.get("singular"))
    ranks = sorted({x["rank"] for x in s})
    angles = [x["min_grad_angle_deg"] for x in s if x.get("min_grad_angle_deg") is not None]
    logs = ", ".join(f"{math.log10(k):.2f}" for k in kappas) or "-"
    print(f"| {variant} | {len(s)} | {spread(kappas)} | {logs} | {singular} of {len(s)} | "
          f"{', '.join(map(str, ranks))} | {spread(angles)} |")


print()
bn, nr = summaries("batch_norm"), summaries("norm_relu")
for what, key, f in [("log10 kappa", "kappa", math.log10), ("min gradient angle", "min_grad_angle_deg", float)]:
    a = [f(x[key]) for x in bn if x.get(key) is not None]
    b = [f(x[key]) for x in nr if x.get(key) is not None]
    test = welch(a, b)
    if test is None:
        print(f"{what}: no test (a side without spread)")
        continue
    t, df, p = test
    verdict = "alike" if p >= 0.05 else ("BatchNorm higher" if t > 0 else "NormReLU higher")
    print(f"{what}: BatchNorm {statistics.fmean(a):.3f} +- {statistics.stdev(a):.3f}, "
          f"NormReLU {statistics.fmean(b):.3f} +- {statistics.stdev(b):.3f}; "
          f"Welch t = {t:.2f}, df = {df:.1f}, p = {p:.4f}: {verdict}")
