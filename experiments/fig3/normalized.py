"""Liu & Hui's Fig. 3 at a learning rate normalised by each network's lambda_max.

At a fixed rate, depth also scales the NTK's largest eigenvalue (3.5x from depth 1 to 10
on the MNIST runs' 200 tracked images at init, 4.2x on Fashion-MNIST), so "deeper
converges faster at lr 10" mixes depth with a larger effective step. The queue lines
`norm_fig3_*` (experiments/seeds/queue.txt) train each depth d at
c * lambda_max(1) / lambda_max(d) for c = 10 and 30 (depth 1's rates; lambda_max the mean
over the committed seeds' kernels at init), 3 fresh seeds, into <set>_normalized/runs.
This script reads each run's metrics.csv and writes <set>_normalized/normalized.csv: per
level c and depth, the final training loss (mean, sd over seeds) and, for every pair of
depths at the same level, Welch's t on log10 of the losses with its 95% confidence
interval, Holm-corrected over the level's 15 pairs (experiments/README.md, "How a verdict
is tested"). Standard library only.

    python3 experiments/fig3/normalized.py [mnist|fmnist ...]
"""
import csv
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from welch import compare, holm, welch  # noqa: E402 (experiments/welch.py)

# Depth 1's rates: the levels c of the normalised rate (see the module doc).
LEVELS = (10.0, 30.0)


def runs(set_name):
    """(depth, lr, seed, final loss or None if it diverged) of every run."""
    root = os.path.join(HERE, f"{set_name}_normalized", "runs")
    out = []
    for name in sorted(os.listdir(root)):
        cfg = os.path.join(root, name, "metrics.csv")
        summary = os.path.join(root, name, "summary.json")
        if not os.path.exists(summary):
            continue
        depth = int(name[len("depth"):len("depth") + 3])
        seed = int(name.rsplit("_seed", 1)[1])
        lr = float(_config_lr(os.path.join(root, name, "config.toml")))
        rows = list(csv.DictReader(open(cfg)))
        loss = float(rows[-1]["train_loss"]) if rows else math.nan
        diverged = bool(json.load(open(summary)).get("diverged"))
        out.append((depth, lr, seed, None if diverged or not math.isfinite(loss) else loss))
    return out


def _config_lr(path):
    section = ""
    for line in open(path):
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[optim]" and line.startswith("lr"):
            return line.split("=", 1)[1].strip()
    raise ValueError(f"{path}: no optim.lr")


def level_of(depth, lr, by_depth):
    """The level c whose rate at `depth` is `lr` (the smaller rate is level 10)."""
    rates = sorted(by_depth[depth])
    return LEVELS[rates.index(lr)]


def main(sets):
    for set_name in sets:
        rs = runs(set_name)
        by_depth = {}
        for depth, lr, _, _ in rs:
            by_depth.setdefault(depth, set()).add(lr)
        table = {}
        for depth, lr, seed, loss in rs:
            key = (level_of(depth, lr, by_depth), depth)
            table.setdefault(key, {"lr": lr, "losses": [], "diverged": 0})
            if loss is None:
                table[key]["diverged"] += 1
            else:
                table[key]["losses"].append(loss)
        rows = []
        for level in LEVELS:
            depths = sorted(d for (c, d) in table if c == level)
            pairs = [(a, b) for i, a in enumerate(depths) for b in depths[i + 1:]]
            tests = []
            for a, b in pairs:
                la = [math.log10(v) for v in table[(level, a)]["losses"]]
                lb = [math.log10(v) for v in table[(level, b)]["losses"]]
                tests.append((welch(la, lb), compare(la, lb)))
            adjusted = holm([t[0][2] if t[0] else None for t in tests])
            for depth in depths:
                t = table[(level, depth)]
                sd = statistics.stdev(t["losses"]) if len(t["losses"]) > 1 else math.nan
                rows.append({"level": level, "depth_a": depth, "depth_b": "", "lr_a": t["lr"],
                             "seeds_a": len(t["losses"]), "diverged_a": t["diverged"],
                             "mean_a": statistics.fmean(t["losses"]) if t["losses"] else "",
                             "sd_a": sd, "log10_ratio": "", "ci_low": "", "ci_high": "",
                             "p": "", "p_holm": "", "verdict_holm": ""})
            for (a, b), (test, ci), q in zip(pairs, tests, adjusted):
                verdict = ("untested" if q is None else "not distinguishable" if q >= 0.05
                           else "a lower" if test[0] < 0 else "a higher")
                rows.append({"level": level, "depth_a": a, "depth_b": b,
                             "lr_a": table[(level, a)]["lr"], "seeds_a": "", "diverged_a": "",
                             "mean_a": "", "sd_a": "",
                             "log10_ratio": ci.d if ci else "",
                             "ci_low": ci.ci_low if ci else "", "ci_high": ci.ci_high if ci else "",
                             "p": test[2] if test else "", "p_holm": "" if q is None else q,
                             "verdict_holm": verdict})
        out = os.path.join(HERE, f"{set_name}_normalized", "normalized.csv")
        with open(out + ".tmp", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        os.replace(out + ".tmp", out)
        print(f"== {set_name}: {out}")
        for level in LEVELS:
            per = [r for r in rows if r["level"] == level and r["depth_b"] == ""]
            pairs = [r for r in rows if r["level"] == level and r["depth_b"] != ""]
            line = ", ".join(f"d{r['depth_a']} {r['mean_a']:.3g}" + (f" ({r['diverged_a']} div)" if r["diverged_a"] else "") for r in per if r["mean_a"] != "")
            counts = {}
            for r in pairs:
                counts[r["verdict_holm"]] = counts.get(r["verdict_holm"], 0) + 1
            print(f"  c = {level:g}: {line}; Holm: {counts}")
            for r in pairs:
                if abs(r["depth_b"] - r["depth_a"]) and [x["depth_a"] for x in per].index(r["depth_b"]) == [x["depth_a"] for x in per].index(r["depth_a"]) + 1:
                    print(f"    {r['depth_a']} -> {r['depth_b']}: log10 ratio {r['log10_ratio']:.3f} "
                          f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}], p {r['p']:.3g}, Holm {r['p_holm']:.3g}: {r['verdict_holm']}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["mnist", "fmnist"])
