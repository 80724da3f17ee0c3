"""The convergence experiment's tables in markdown, from the convergence.csv that
`ntk-train collect` writes (one row per run): per activation and depth, the mean and the
seeds' min..max of each measure, and Spearman's rank correlation over the depths between
1/kappa (the theory's speed) and what was measured. Standard library only.

    python3 experiments/convergence/table.py experiments/convergence/mnist2000/convergence.csv
"""
import csv
import sys
from collections import defaultdict


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def num(v):
    return float(v) if v not in ("", None) else None


def cell(values, fmt):
    v = [x for x in values if x is not None]
    if not v:
        return "-"
    m = sum(v) / len(v)
    if len(v) == 1 or max(v) == min(v):
        return fmt.format(m)
    return (fmt + " ({}..{})").format(m, fmt.format(min(v)), fmt.format(max(v)))


def main(path):
    rows = list(csv.DictReader(open(path)))
    groups = defaultdict(list)
    for r in rows:
        groups[(r["activation"], int(r["depth"]))].append(r)
    cols = [
        ("lr", "lr", "{:.3g}"),
        ("kappa", "kappa", "{:.3g}"),
        ("measured_rate", "measured rate (1e-3)", None),
        ("predicted_rate_empirical", "predicted, empirical (1e-3)", None),
        ("predicted_rate_theory", "predicted, infinite width (1e-3)", None),
        ("asymptotic_rate_empirical", "late rate from lambda_min (1e-3)", None),
        ("final_train_loss", "final loss", "{:.3f}"),
        ("predicted_final_train_loss_empirical", "predicted, empirical", "{:.3f}"),
        ("predicted_final_train_loss_theory", "predicted, infinite width", "{:.3f}"),
        ("max_log_deviation_empirical", "max abs ln(L/L_pred), empirical", "{:.3f}"),
        ("max_log_deviation_theory", "max abs ln(L/L_pred), infinite width", "{:.3f}"),
        ("final_test_accuracy", "test accuracy", "{:.3f}"),
        ("predicted_final_test_accuracy_empirical", "predicted", "{:.3f}"),
    ]
    seeds = sorted({r["seed"] for r in rows})
    print(f"Seeds {', '.join(seeds)}; each cell: mean (min..max over the seeds).\n")
    print("| activation | depth | " + " | ".join(c[1] for c in cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for (act, depth), rs in sorted(groups.items()):
        cells = []
        for key, _, fmt in cols:
            vals = [num(r[key]) for r in rs]
            if fmt is None:
                vals = [v * 1e3 if v is not None else None for v in vals]
                fmt = "{:.3f}"
            cells.append(cell(vals, fmt))
        print(f"| {act} | {depth} | " + " | ".join(cells) + " |")
    print()
    for act in sorted({a for a, _ in groups}):
        depths = sorted(d for a, d in groups if a == act)
        mean = lambda key, d: (lambda v: sum(v) / len(v) if v else None)(
            [num(r[key]) for r in groups[(act, d)] if num(r[key]) is not None]
        )
        inv = [mean("inverse_kappa", d) for d in depths]
        if any(v is None for v in inv):
            print(f"{act}: the kernel is singular at some depth: no rank correlation with 1/kappa")
            continue
        for key, what in [
            ("measured_rate", "the measured rate"),
            ("final_train_loss", "the final loss"),
        ]:
            print(
                f"{act}: Spearman's rank correlation over depths {depths} between 1/kappa and "
                f"{what}: {spearman(inv, [mean(key, d) for d in depths]):+.2f}"
            )


if __name__ == "__main__":
    main(sys.argv[1])
