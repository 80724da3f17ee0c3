"""The NTK at initialization of ResNet-20 over 5 network seeds (seed 0 in
../ntk_resnet20_<variant>/, seeds 1-4 in <variant>/seed<S>/; BatchNorm with the batch's
own statistics, `batch_norm_batch`, has all its seeds 0-4 in batch_norm_batch/seed<S>/ and
is included once any of its summaries exist): per variant, kappa and the minimum gradient
angle with mean, standard deviation and standard error over the seeds, and the rank. A
singular kernel has no kappa: it is counted, never averaged. Then the tests, as
experiments/README.md ("How a verdict is tested") states them: each BatchNorm network
against NormReLU by Welch's t (log10 kappa; the angle in degrees) with the 95% confidence
interval of the difference, the comparisons of one measure a family corrected by Holm; a
difference counts where the corrected p < 0.05, otherwise it is not distinguishable with
these seeds. (Standard library only.)

    python3 experiments/agarwal_fig4/ntk_seeds/table.py
"""
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from welch import compare, holm  # noqa: E402 (experiments/welch.py)

HERE = os.path.dirname(os.path.abspath(__file__))


NAMES = {"batch_norm": "BatchNorm", "batch_norm_batch": "BatchNorm (batch statistics)",
         "norm_relu": "NormReLU", "fixup": "Fixup"}


def summaries(variant):
    """The variant's summaries, seed 0 first; only finished runs (their summary.json)."""
    paths = [os.path.join(HERE, "..", f"ntk_resnet20_{variant}", "summary.json"),
             os.path.join(HERE, variant, "seed0", "summary.json")]
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
VARIANTS = ["batch_norm", "norm_relu", "fixup"] + (["batch_norm_batch"] if summaries("batch_norm_batch") else [])
for variant in VARIANTS:
    s = summaries(variant)
    kappas = [x["kappa"] for x in s if x.get("kappa") is not None]
    singular = sum(1 for x in s if x.get("singular"))
    ranks = sorted({x["rank"] for x in s})
    angles = [x["min_grad_angle_deg"] for x in s if x.get("min_grad_angle_deg") is not None]
    logs = ", ".join(f"{math.log10(k):.2f}" for k in kappas) or "-"
    print(f"| {variant} | {len(s)} | {spread(kappas)} | {logs} | {singular} of {len(s)} | "
          f"{', '.join(map(str, ranks))} | {spread(angles)} |")


print()
PAIRS = [(v, "norm_relu") for v in ("batch_norm", "batch_norm_batch") if v in VARIANTS]
for what, key, f in [("log10 kappa", "kappa", math.log10), ("min gradient angle (deg)", "min_grad_angle_deg", float)]:
    tests = []
    for a_name, b_name in PAIRS:
        a = [f(x[key]) for x in summaries(a_name) if x.get(key) is not None]
        b = [f(x[key]) for x in summaries(b_name) if x.get(key) is not None]
        tests.append((a_name, b_name, a, b, compare(a, b)))
    corrected = holm([t[4].p if t[4] else None for t in tests])
    print(f"{what}: a family of {sum(1 for t in tests if t[4])} (Holm)")
    for (a_name, b_name, a, b, test), p_holm in zip(tests, corrected):
        head = f"  {NAMES[a_name]} ({len(a)} seeds) against {NAMES[b_name]} ({len(b)} seeds): "
        if test is None:
            print(head + "no test (fewer than two seeds, or no spread)")
            continue
        verdict = (f"not distinguishable with {min(len(a), len(b))} seeds" if p_holm >= 0.05
                   else (f"{NAMES[a_name]} higher" if test.d > 0 else f"{NAMES[b_name]} higher"))
        ratio = (f" (ratio of geometric means {10 ** test.d:.2f}, 95% CI {10 ** test.ci_low:.2f} to "
                 f"{10 ** test.ci_high:.2f})" if key == "kappa" else "")
        print(head + f"{statistics.fmean(a):.3f} +- {statistics.stdev(a):.3f} against "
              f"{statistics.fmean(b):.3f} +- {statistics.stdev(b):.3f}; difference {test.d:.3f}, "
              f"95% CI {test.ci_low:.3f} to {test.ci_high:.3f}{ratio}; Welch t = {test.t:.2f}, "
              f"df = {test.df:.1f}, p = {test.p:.4f}, Holm p = {p_holm:.4f}: {verdict}")
