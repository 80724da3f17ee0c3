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


def betacf(a, b, x):
    """The continued fraction of the regularized incomplete beta function (Lentz)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
    return h


def incbeta(a, b, x):
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * betacf(a, b, x) / a
    return 1.0 - front * betacf(b, a, 1.0 - x) / b


def welch(a, b):
    """Welch's t-test: (t, degrees of freedom, two-sided p)."""
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    t = (statistics.fmean(a) - statistics.fmean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return t, df, incbeta(df / 2.0, 0.5, df / (df + t * t))


print()
bn, nr = summaries("batch_norm"), summaries("norm_relu")
for what, key, f in [("log10 kappa", "kappa", math.log10), ("min gradient angle", "min_grad_angle_deg", float)]:
    a = [f(x[key]) for x in bn if x.get(key) is not None]
    b = [f(x[key]) for x in nr if x.get(key) is not None]
    t, df, p = welch(a, b)
    verdict = "alike" if p >= 0.05 else ("BatchNorm higher" if t > 0 else "NormReLU higher")
    print(f"{what}: BatchNorm {statistics.fmean(a):.3f} +- {statistics.stdev(a):.3f}, "
          f"NormReLU {statistics.fmean(b):.3f} +- {statistics.stdev(b):.3f}; "
          f"Welch t = {t:.2f}, df = {df:.1f}, p = {p:.4f}: {verdict}")
