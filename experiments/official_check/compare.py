"""Per-block kappa of the official code against the probe's, on the same inputs, weights and
blocks (work/ from run.sh): writes results.csv (one row per block) and prints the summary
table of README.md; then the statistical comparison (work/stat/ from statistical.sh, into
statistical.csv): Welch's t-test with the 95% confidence interval of the difference, and
the two one-sided tests of equivalence (TOST) against a margin of MARGIN of the official
mean. Without work/, both are recomputed from the committed results.csv and
statistical.csv. Standard library only."""
import csv
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The equivalence margin, a fraction of the official side's mean block kappa, stated before
# the equivalence test was first computed (but after the Welch comparison was published):
# the paper publishes the mean over 5 seeds, and with a per-seed spread of about 12% of the
# mean that number carries a standard error of about 5%; a difference under 10%, two such
# standard errors, is below what the published number resolves.
MARGIN = 0.10


def probe_kappas(path):
    with open(os.path.join(path, "blocks.csv")) as f:
        return [float(r["kappa"]) if r["kappa"] else float("inf") for r in csv.DictReader(f)]


rows = []
for draw in (0, 1):
    work = os.path.join(HERE, "work", f"draw{draw}")
    if not os.path.isdir(work):
        continue
    for name in sorted(f[:-5] for f in os.listdir(work) if f.endswith(".json")):
        off = json.load(open(os.path.join(work, name + ".json")))
        p64 = probe_kappas(os.path.join(work, f"probe_{name}_f64"))
        p32 = probe_kappas(os.path.join(work, f"probe_{name}_f32"))
        for b, (ko, k64, k32) in enumerate(zip(off["kappa"], p64, p32)):
            rows.append({"draw": draw, "depth": off["depth"], "seed": off["seed"], "block": b,
                         "official_kappa": ko, "probe_f64_kappa": k64, "probe_f32_kappa": k32,
                         "rel_official_vs_f64": abs(ko / k64 - 1.0),
                         "rel_f32_vs_f64": abs(k32 / k64 - 1.0),
                         "rel_official_vs_f32": abs(ko / k32 - 1.0),
                         "eps32_kappa": 2.0 ** -24 * k64})
if rows:
    with open(os.path.join(HERE, "results.csv.tmp"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    os.replace(os.path.join(HERE, "results.csv.tmp"), os.path.join(HERE, "results.csv"))
else:  # no work/: the committed table
    with open(os.path.join(HERE, "results.csv")) as f:
        rows = [{k: (int(v) if k in ("draw", "depth", "seed", "block") else float(v)) for k, v in r.items()}
                for r in csv.DictReader(f)]

print("| depth | blocks | kappa (probe, f64): range | official vs probe f64: max rel. diff | median | probe f32 vs f64: max rel. diff | official vs probe f32: max rel. diff | max of eps_f32 kappa |")
print("|---|---|---|---|---|---|---|---|")
for depth in sorted({r["depth"] for r in rows}):
    rs = [r for r in rows if r["depth"] == depth]
    rel = sorted(r["rel_official_vs_f64"] for r in rs)
    print(f"| {depth} | {len(rs)} | {min(r['probe_f64_kappa'] for r in rs):.4g} - "
          f"{max(r['probe_f64_kappa'] for r in rs):.4g} | {rel[-1]:.2e} | "
          f"{(rel[(len(rel) - 1) // 2] + rel[len(rel) // 2]) / 2:.2e} | "
          f"{max(r['rel_f32_vs_f64'] for r in rs):.2e} | {max(r['rel_official_vs_f32'] for r in rs):.2e} | "
          f"{max(r['eps32_kappa'] for r in rs):.2e} |")

# The statistical comparison (statistical.sh): each side's own initialization over many seeds.
stat = os.path.join(HERE, "work", "stat")
if os.path.isdir(os.path.join(stat, "probe")):
    off_dir = os.path.join(stat, "official")
    official = [json.load(open(os.path.join(off_dir, f)))["mean_kappa"]
                for f in sorted(os.listdir(off_dir)) if f.endswith(".json")]
    with open(os.path.join(stat, "probe", "results.csv")) as f:
        ours = [float(r["kappa"]) for r in csv.DictReader(f) if r["protocol"] == "blocks"]

    with open(os.path.join(HERE, "statistical.csv.tmp"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["side", "seed", "mean_block_kappa"])
        w.writerows([("official", i + 1, k) for i, k in enumerate(official)])
        w.writerows([("probe", i + 1, k) for i, k in enumerate(ours)])
    os.replace(os.path.join(HERE, "statistical.csv.tmp"), os.path.join(HERE, "statistical.csv"))
if os.path.exists(os.path.join(HERE, "statistical.csv")):
    import math
    import statistics
    with open(os.path.join(HERE, "statistical.csv")) as f:
        table = list(csv.DictReader(f))
    official = [float(r["mean_block_kappa"]) for r in table if r["side"] == "official"]
    ours = [float(r["mean_block_kappa"]) for r in table if r["side"] == "probe"]
    sys.path.insert(0, os.path.join(HERE, ".."))
    from welch import compare, tost  # experiments/welch.py
    test = compare(official, ours)
    print()
    print("| side | seeds | mean block kappa per seed: mean +- sd (se) |")
    print("|---|---|---|")
    for name, v in [("official (torch init)", official), ("probe (its own init)", ours)]:
        sd = statistics.stdev(v)
        print(f"| {name} | {len(v)} | {statistics.fmean(v):.5g} +- {sd:.3g} ({sd / math.sqrt(len(v)):.3g}) |")
    if test is None:
        print("\nWelch's t-test: none (a side without spread)")
    else:
        n = min(len(official), len(ours))
        margin = MARGIN * statistics.fmean(official)
        p_tost, low90, high90 = tost(official, ours, margin)
        print(f"\nWelch's t-test (official - probe): difference {test.d:.0f}, 95% CI {test.ci_low:.0f} "
              f"to {test.ci_high:.0f}, t = {test.t:.2f}, {test.df:.1f} degrees of freedom, p = {test.p:.3f}: "
              f"{f'not distinguishable with {n} seeds' if test.p >= 0.05 else 'different'}")
        print(f"TOST against +-{MARGIN:.0%} of the official mean (+-{margin:.0f}): 90% CI {low90:.0f} to "
              f"{high90:.0f}, p = {p_tost:.2g}: "
              f"{'similar within the margin' if p_tost < 0.05 else 'not shown similar'}")
