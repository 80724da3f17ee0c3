"""The depth tests behind the Fig. 2 verdicts (experiments/fig2/README.md), recomputed from
each set's committed results.csv, and those of experiments/activations (one family per
activation). Standard library only.

    python3 experiments/fig2/steps.py                  # every set below
    python3 experiments/fig2/steps.py synthetic_20seeds mnist_whole60k_gpu
    python3 experiments/fig2/steps.py --pools          # all 60,000 images against 10,000

A family is one set's comparisons of one measure under one protocol for one activation: the
network's neighbouring depths L against L + 1 (kappa from depth 1, the angle from the
inputs' own at depth 0), plus the spans the README quotes (`SPANS`, `EXTRA_SPANS`), and for
the whole 60,000-image kernel the linear network's angle (`LINEAR_EXTRA`). Each comparison
is Welch's t-test of the deeper network against the shallower, two-sided, unpaired (the
seeds of two depths share the data, not the network), with the 95% confidence interval of
the difference; the family's p-values are corrected by Holm (experiments/welch.py), and a
verdict counts corrected p < 0.05 only. Kappa is tested on log10 (it spans decades and its
seed spread is multiplicative, the rule of experiments/README.md for such measures; its
interval is then a ratio of geometric means), angles in degrees. `--linear` tests kappa
itself instead (the scale of the 20-seed table's p-values as first published), to show
where the scale would change a verdict. `--pools` compares the slope in depth of the block
mean over all 60,000 images with the 10,000-image one, and the block mean at n = 10,000
with n = 2000. Singular kernels (kappa infinite)
are not tested.
"""
import csv
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXPERIMENTS = os.path.dirname(HERE)
sys.path.insert(0, EXPERIMENTS)
from welch import compare, holm  # noqa: E402 (experiments/welch.py)

SETS = ["synthetic", "synthetic_20seeds", "mnist", "fmnist", "mnist_n10000", "fmnist_n10000",
        "mnist_blocks60k", "fmnist_blocks60k", "mnist_whole60k_gpu",
        "../activations/synthetic", "../activations/mnist"]
# Spans (shallow, deep) the READMEs quote beside the neighbouring steps (first depth to
# last by default); they join the family, and a span whose shallow end is singular is left
# out. The 20 seeds' 6 -> 10 was chosen after the steps beyond 6 were seen unresolved.
SPANS = {"kappa": [(1, 10)], "angle": [(0, 10)]}
EXTRA_SPANS = {"synthetic_20seeds": {"kappa": [(6, 10)]},
               "mnist_whole60k_gpu": {"kappa": [(5, 10)], "angle": [(1, 10)]},
               "../activations/synthetic": {"kappa": [(2, 10)]}}
LINEAR_EXTRA = {"mnist_whole60k_gpu"}  # the linear angle, depth 1 against 10, and ReLU against linear at 10


def load(path):
    """{(protocol, activation, depth): {"kappa": [...], "angle": [...]}} over the seeds."""
    out = {}
    for r in csv.DictReader(open(os.path.join(path, "results.csv"))):
        cell = out.setdefault((r["protocol"], r["activation"], int(r["depth"])), {"kappa": [], "angle": []})
        if r["kappa"] not in ("", "inf") and r["singular"] != "true":
            cell["kappa"].append(float(r["kappa"]))
        if r["min_grad_angle_deg"]:
            cell["angle"].append(float(r["min_grad_angle_deg"]))
    return out


def mean(v):
    return sum(v) / len(v)


def families(name, linear=False):
    """Yields (protocol, activation, measure, scale, rows) per family; each row a dict with
    the comparison, the means, the change of the means in percent, raw and Holm p, the
    95% confidence interval of the difference on the test's scale, and the verdict."""
    path = os.path.join(HERE, name)
    data = load(path)
    log = not linear
    protocols = sorted({k[0] for k in data})
    activations = sorted({k[1] for k in data} - {"linear"})
    for activation in activations:
        all_depths = sorted(k[2] for k in data if k[0] == protocols[0] and k[1] == activation)
        for measure in ("kappa", "angle"):
            depths = [d for d in all_depths if d >= (1 if measure == "kappa" else 0)]
            # The angle is a property of the whole set: one family, from the whole protocol.
            for protocol in (protocols if measure == "kappa" else [p for p in ("whole", "blocks") if p in protocols][:1]):
                pairs = [((activation, d), (activation, d + 1)) for d in depths if d + 1 in depths]
                spans = SPANS[measure] + EXTRA_SPANS.get(name, {}).get(measure, [])
                pairs += [((activation, a), (activation, b)) for a, b in spans
                          if a in depths and b in depths]
                if measure == "angle" and name in LINEAR_EXTRA:
                    pairs += [(("linear", 1), ("linear", 10)), (("linear", 10), (activation, 10))]
                rows = []
                for shallow, deep in pairs:
                    a = data.get((protocol,) + deep, {}).get(measure, [])
                    b = data.get((protocol,) + shallow, {}).get(measure, [])
                    if len(a) < 2 or len(b) < 2 or (shallow, deep) in [(r["from"], r["to"]) for r in rows]:
                        continue
                    scale = (lambda x: math.log10(x)) if (measure == "kappa" and log) else float
                    test = compare([scale(x) for x in a], [scale(x) for x in b])
                    rows.append({"from": shallow, "to": deep, "n_from": len(b), "n_to": len(a),
                                 "mean_from": mean(b), "mean_to": mean(a),
                                 "change_pct": 100.0 * (mean(a) / mean(b) - 1.0),
                                 "test": test})
                ps = holm([r["test"].p if r["test"] else None for r in rows])
                for r, p in zip(rows, ps):
                    r["p_holm"] = p
                    t = r["test"]
                    r["verdict"] = ("untested" if t is None else "not distinguishable" if p >= 0.05
                                    else ("higher" if t.d > 0 else "lower"))
                if rows:
                    yield protocol, activation, measure, ("log10" if measure == "kappa" and log else "linear"), rows


def fmt_ci(r, scale):
    """The 95% interval of the change: in percent of the shallower mean on the linear scale,
    as a ratio of geometric means on log10, in degrees for angles."""
    t = r["test"]
    if scale == "log10":
        return f"x{10 ** t.ci_low:.3g}..x{10 ** t.ci_high:.3g}"
    if r["measure"] == "angle":
        return f"{t.ci_low:+.2f}..{t.ci_high:+.2f} deg"
    return f"{100 * t.ci_low / r['mean_from']:+.0f}%..{100 * t.ci_high / r['mean_from']:+.0f}%"


def pools():
    """The slope in depth of the block mean over all 60,000 images against the 10,000
    class-balanced ones: per seed, log10 kappa at depth 10 minus at depth 1 (ReLU, blocks),
    Welch's t between the pools, the two data sets a family (Holm)."""
    rows = []
    for name in ("mnist", "fmnist"):
        slopes = []
        for pool in (f"{name}_blocks60k", f"{name}_n10000"):
            by_seed = {}
            for r in csv.DictReader(open(os.path.join(HERE, pool, "results.csv"))):
                if r["protocol"] == "blocks" and r["activation"] == "relu" and r["depth"] in ("1", "10"):
                    by_seed.setdefault(r["seed"], {})[r["depth"]] = math.log10(float(r["kappa"]))
            slopes.append([v["10"] - v["1"] for v in by_seed.values()])
        rows.append((name, slopes, compare(*slopes)))
    for (name, slopes, t), p in zip(rows, holm([r[2].p for r in rows])):
        print(f"{name}: log10 kappa from depth 1 to 10, all 60,000 {mean(slopes[0]):.2f} against "
              f"10,000 {mean(slopes[1]):.2f} decades; difference 95% CI {t.ci_low:+.2f} to "
              f"{t.ci_high:+.2f}, p = {t.p:.2f}, Holm p = {p:.2f}")
    # The block mean at n = 10,000 against n = 2000 (ReLU, depths 1 and 10; one family).
    rows = []
    for name in ("mnist", "fmnist"):
        large, small = load(os.path.join(HERE, f"{name}_n10000")), load(os.path.join(HERE, name))
        for depth in (1, 10):
            a = [math.log10(x) for x in large[("blocks", "relu", depth)]["kappa"]]
            b = [math.log10(x) for x in small[("blocks", "relu", depth)]["kappa"]]
            rows.append((name, depth, compare(a, b)))
    for (name, depth, t), p in zip(rows, holm([r[2].p for r in rows])):
        print(f"{name}, depth {depth}: block mean at n = 10,000 over n = 2000, ratio of geometric "
              f"means {10 ** t.d:.2f} (95% CI {10 ** t.ci_low:.2f} to {10 ** t.ci_high:.2f}), "
              f"p = {t.p:.2f}, Holm p = {p:.2f}")


def main(argv):
    linear = "--linear" in argv
    if "--pools" in argv:
        return pools()
    names = [a for a in argv if not a.startswith("--")] or SETS
    for name in names:
        for protocol, activation, measure, scale, rows in families(name, linear):
            resolved = sum(1 for r in rows if r["verdict"] not in ("not distinguishable", "untested"))
            raw = sum(1 for r in rows if r["test"] and r["test"].p < 0.05)
            print(f"\n## {name}: {activation}, {measure} ({scale}), {protocol}: "
                  f"{resolved} of {len(rows)} resolved after Holm ({raw} at raw p < 0.05)")
            print("| comparison | seeds | means | change | p | Holm p | 95% CI | verdict |")
            print("|---|---|---|---|---|---|---|---|")
            for r in rows:
                r["measure"] = measure
                t = r["test"]
                label = (f"{r['from'][1]} -> {r['to'][1]}" if r["from"][0] == r["to"][0]
                         else f"{r['from'][0]} {r['from'][1]} -> {r['to'][0]} {r['to'][1]}")
                print(f"| {label} | {r['n_from']}, {r['n_to']} | {r['mean_from']:.4g} -> {r['mean_to']:.4g} | "
                      f"{r['change_pct']:+.1f}% | {t.p:.2g} | {r['p_holm']:.2g} | {fmt_ci(r, scale)} | {r['verdict']} |")


if __name__ == "__main__":
    main(sys.argv[1:])
