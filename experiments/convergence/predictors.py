"""Which statistic of the NTK at initialization predicts the measured training rate of the
convergence experiment (issue 64, item 5)? numpy and matplotlib.

Reads mnist2000/convergence.csv (one row per run: `measured_rate`, the least-squares slope
of -ln L per step over steps 50-150) and each run's spectrum, mnist2000/spectra/<id>.npy
(written by spectra.py: the eigenvalues lambda_i of the run's own empirical per-output NTK
at initialization, ascending, and the energies e_i = sum_j (v_i . r_0j)^2 of its initial
residual r_0 = f_0 - T and t_i of its one-hot targets T on the eigenvectors v_i). At the
run's rate eta = n / lambda_max the linearized model's loss is

    L_t = (1 / 2n) sum_i e_i (1 - lambda_i / lambda_max)^(2t),

so direction i decays at -2 ln(1 - lambda_i / lambda_max), about 2 lambda_i / lambda_max a
step, and the mid-training rate depends on how much of r_0 lies where in the spectrum.

Statistics per run (eigenvalues at or below n eps lambda_max, the kernel's null space,
count as 0):
  inv_kappa          lambda_min / lambda_max (0 for a singular kernel: kappa infinite)
  eff_rank_trace     sum lambda / lambda_max
  eff_rank_entropy   exp(entropy of lambda / sum lambda)
  share_above_1_n    the fraction of eigenvalues above lambda_max / n
  median_ratio       lambda_median / lambda_max
  lambda2_ratio      lambda_2 / lambda_max (the second largest: after the first step,
                     which removes the top direction, no direction moves faster than
                     -2 ln(1 - lambda_2 / lambda_max) a step)
  residual_alignment r_0^T K r_0 / (lambda_max |r_0|^2) = sum e_i lambda_i / (lambda_max sum e_i)
  target_alignment   the same for the targets T (labels only, no f_0)
  tail_alignment     the same for r_0 without its component on the top eigenvector
                     (what is left after the first step)
  predicted_rate     the middle-half rate of L_t above (the linearized model: full spectrum
                     and projections), recomputed; spectra/index.csv checks it against
                     convergence.csv's predicted_rate_empirical
  predicted_rate_theory  the same from the infinite-width kernel (convergence.csv)

For each statistic against measured_rate, over all 36 runs, the 18 ReLU runs and the 18
linear ones: Spearman's rho with a 95% bootstrap CI (runs resampled, 10,000 draws) and a
two-sided permutation p (10,000 shuffles); the least-squares fit of ln(rate) on
ln(statistic) (slope, R^2; only where the statistic is positive in every run of the
group); and the within-configuration correlation: Pearson's r of ln(statistic) and
ln(rate) after each (activation, depth)'s mean over its 3 seeds is taken out (does the
statistic follow the seed-to-seed differences?). Writes mnist2000/predictors.csv,
mnist2000/predictor_stats.csv (the statistics per run), mnist2000/linear_vs_relu.csv
(Welch's tests of the final loss, on log10, and the rate: linear against ReLU at each
depth, depth 1 against 10 for each; Holm over those 8 per measure, and over all 66 pairs of
configurations per measure as compare.csv's family) and mnist2000/predictors.{png,svg}.

    python3 experiments/convergence/predictors.py
"""
import csv
import math
import sys
from itertools import combinations
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from welch import holm as holm_or_none, welch  # noqa: E402

BASE = HERE / "mnist2000"
GROUPS = {"all": ("linear", "relu"), "relu": ("relu",), "linear": ("linear",)}
DRAWS = 10_000
T_MID = (50, 150)

STATS = [
    ("depth", "the number of hidden layers (a baseline, not a spectral statistic)"),
    ("inv_kappa", "1/kappa = lambda_min/lambda_max"),
    ("eff_rank_trace", "effective rank sum(lambda)/lambda_max"),
    ("eff_rank_entropy", "entropy effective rank exp(H)"),
    ("share_above_1_n", "share of eigenvalues above lambda_max/n"),
    ("median_ratio", "lambda_median/lambda_max"),
    ("lambda2_ratio", "lambda_2/lambda_max"),
    ("residual_alignment", "r0'K r0/(lambda_max |r0|^2)"),
    ("target_alignment", "T'K T/(lambda_max |T|^2)"),
    ("tail_alignment", "as residual_alignment, r0 without the top eigenvector"),
    ("predicted_rate", "linearized model's rate (full spectrum, projections of r0)"),
    ("predicted_rate_theory", "linearized model's rate, infinite-width kernel"),
]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def middle_rate(losses):
    """convergence.rs middle_rate over epochs 1..E (the loss before epoch e's step)."""
    x = np.arange(1, len(losses) + 1, dtype=float)
    last = x[-1]
    m = (x >= last / 4) & (x <= 3 * last / 4)
    x, ly = x[m], np.log(np.asarray(losses)[m])
    slope = -np.sum((x - x.mean()) * (ly - ly.mean())) / np.sum((x - x.mean()) ** 2)
    return 0.0 if abs(slope * (x[-1] - x[0])) < 1e-6 else slope


def statistics(spec, lr, epochs):
    lam, e_res, e_tgt = spec.T
    n = len(lam)
    lmax = lam[-1]
    w = (1.0 - lr * lam / n) ** 2  # the raw eigenvalues, as ntk-train's prediction
    lam = np.where(lam > n * np.finfo(float).eps * lmax, lam, 0.0)
    singular = lam[0] == 0.0
    p = lam / lam.sum()
    nz = p > 0
    cur, losses = e_res.copy(), []
    for _ in range(epochs):
        losses.append(cur.sum() / (2 * n))
        cur = cur * w
    def align(e, lam=lam):
        return float(np.sum(e * lam) / (lmax * e.sum()))

    return {
        "kappa": math.inf if singular else lmax / lam[0],
        "rank": int(np.count_nonzero(lam)),
        "inv_kappa": 0.0 if singular else lam[0] / lmax,
        "eff_rank_trace": lam.sum() / lmax,
        "eff_rank_entropy": float(np.exp(-np.sum(p[nz] * np.log(p[nz])))),
        "share_above_1_n": float(np.mean(lam > lmax / n)),
        "median_ratio": float(np.median(lam) / lmax),
        "lambda2_ratio": lam[-2] / lmax,
        "residual_alignment": align(e_res),
        "target_alignment": align(e_tgt),
        "tail_alignment": align(e_res[:-1], lam[:-1]),
        "predicted_rate": middle_rate(losses),
        "residual_top_share": e_res[-1] / e_res.sum(),
        "residual_null_share": float(e_res[lam == 0].sum() / e_res.sum()),
        # the linearized losses: at init, after the first step's removal of the top
        # direction (w = 0 there), and the floor of a singular kernel (its null space)
        "initial_loss": e_res.sum() / (2 * n),
        "target_loss": e_tgt.sum() / (2 * n),
        "loss_without_top": e_res[:-1].sum() / (2 * n),
        "null_floor": float(e_res[lam == 0].sum() / (2 * n)),
    }


def ranks(x):
    """Ranks from 1, ties sharing their average rank."""
    _, inv, counts = np.unique(np.asarray(x, float), return_inverse=True, return_counts=True)
    first = np.cumsum(counts) - counts  # 0-based rank of each distinct value's first
    return (first + (counts + 1) / 2.0)[inv]


def pearson(a, b):
    a, b = a - a.mean(), b - b.mean()
    d = math.sqrt(np.sum(a * a) * np.sum(b * b))
    return float(np.sum(a * b) / d) if d > 0 else math.nan


def spearman(a, b):
    return pearson(ranks(a), ranks(b))


def spearman_inference(x, y, rng):
    if np.all(x == x[0]):  # a constant statistic (1/kappa = 0 of every singular kernel)
        return math.nan, math.nan, math.nan, math.nan
    rho = spearman(x, y)
    n = len(x)
    boot = []
    for _ in range(DRAWS):
        i = rng.integers(0, n, n)
        r = spearman(x[i], y[i])
        if not math.isnan(r):
            boot.append(r)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    rx, ry = ranks(x), ranks(y)
    perm = np.array([pearson(rx, rng.permutation(ry)) for _ in range(DRAWS)])
    p = (1 + np.sum(np.abs(perm) >= abs(rho) - 1e-12)) / (DRAWS + 1)
    return rho, lo, hi, p


def loglog(x, y):
    if np.any(x <= 0):
        return None
    lx, ly = np.log(x), np.log(y)
    slope, icpt = np.polyfit(lx, ly, 1)
    res = ly - (slope * lx + icpt)
    r2 = 1 - np.sum(res ** 2) / np.sum((ly - ly.mean()) ** 2)
    return slope, icpt, r2, float(np.sqrt(np.mean(res ** 2)))


def within_config(x, y, keys):
    if np.any(x <= 0):
        return math.nan
    lx, ly = np.log(x), np.log(y)
    for k in set(keys):
        m = np.array([kk == k for kk in keys])
        lx[m] -= lx[m].mean()
        ly[m] -= ly[m].mean()
    if np.max(np.abs(lx)) < 1e-12:  # constant within each configuration (depth)
        return math.nan
    return pearson(lx, ly)


def holm(ps):
    """welch.holm with NaN for a comparison without a test (in and out)."""
    return [math.nan if p is None else p for p in holm_or_none(ps)]


def tests(runs):
    """Welch's tests between configurations: the final loss on log10, the measured rate."""
    configs = sorted({(r["activation"], r["depth"]) for r in runs})
    sample = {
        (c, m): [r[m] for r in runs if (r["activation"], r["depth"]) == c]
        for c in configs for m in ("final_train_loss", "measured_rate")
    }
    planned = [(("linear", d), ("relu", d)) for d in (1, 2, 4, 6, 8, 10)]
    planned += [(("relu", 1), ("relu", 10)), (("linear", 1), ("linear", 10))]
    rows = []
    for measure, scale in (("final_train_loss", "log10"), ("measured_rate", "linear")):
        f = (lambda v: [math.log10(x) for x in v]) if scale == "log10" else list
        p_all = {}
        for a, b in combinations(configs, 2):
            t = welch(f(sample[a, measure]), f(sample[b, measure]))
            p_all[a, b] = p_all[b, a] = t[2] if t else math.nan
        keys = list(combinations(configs, 2))
        holm_all = dict(zip(keys, holm([p_all[k] for k in keys])))
        holm_all.update({(b, a): v for (a, b), v in list(holm_all.items())})
        res = [welch(f(sample[a, measure]), f(sample[b, measure])) for a, b in planned]
        hp = holm([t[2] for t in res])
        for (a, b), t, ph in zip(planned, res, hp):
            ma, mb = np.mean(sample[a, measure]), np.mean(sample[b, measure])
            rows.append({
                "measure": measure, "scale": scale,
                "activation_a": a[0], "depth_a": a[1], "mean_a": f"{ma:.6g}",
                "activation_b": b[0], "depth_b": b[1], "mean_b": f"{mb:.6g}",
                "t": f"{t[0]:.4f}", "df": f"{t[1]:.3f}", "p": f"{t[2]:.4g}",
                "p_holm": f"{ph:.4g}",
                "verdict_holm": ("a lower" if ma < mb else "a higher") if ph < 0.05
                else "not distinguishable",
                "p_holm_all_pairs": f"{holm_all[a, b]:.4g}",
            })
    return rows


def figure(runs, summary, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    plt.rcParams.update({"font.size": 9, "axes.titlesize": 9, "svg.fonttype": "none"})
    depths = sorted({r["depth"] for r in runs})
    cmaps = {"relu": plt.get_cmap("Oranges"), "linear": plt.get_cmap("Blues")}
    marker = {"relu": "o", "linear": "s"}
    color = lambda a, d: cmaps[a](0.35 + 0.6 * depths.index(d) / (len(depths) - 1))  # noqa: E731
    panels = [
        ("inv_kappa", r"$1/\kappa = \lambda_{\min} / \lambda_{\max}$"),
        ("eff_rank_trace", r"effective rank $\sum_i \lambda_i / \lambda_{\max}$"),
        ("eff_rank_entropy", r"entropy effective rank $e^{H(\lambda / \sum \lambda)}$"),
        ("share_above_1_n", r"share of eigenvalues above $\lambda_{\max} / n$"),
        ("predicted_rate", "rate of the linearized model, empirical NTK\n"
         r"(full spectrum and projections of $r_0$)"),
        ("predicted_rate_theory", "rate of the linearized model,\ninfinite-width NTK"),
    ]
    fig, axes = plt.subplots(2, 3, figsize=(10.5, 6.8), constrained_layout=True)
    rate = lambda v: 1e3 * v  # noqa: E731  (the axes in 1e-3 per step)
    y = np.array([rate(r["measured_rate"]) for r in runs])
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    for ax, (key, label) in zip(axes.flat, panels):
        is_rate = key.startswith("predicted_rate")
        for r in runs:
            x = rate(r[key]) if is_rate else r[key]
            if x <= 0:
                continue
            ax.scatter(x, rate(r["measured_rate"]), s=22, marker=marker[r["activation"]],
                       color=color(r["activation"], r["depth"]), edgecolor="k", linewidth=0.4,
                       zorder=3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(label + (r" ($10^{-3}$ per step)" if is_rate else ""))
        if ax in axes[:, 0]:
            ax.set_ylabel(r"measured rate, steps 50-150 ($10^{-3}$ per step)")
        s = {g: summary[key, g] for g in GROUPS}
        text = "\n".join(
            f"Spearman {name} {s[g]['spearman']:+.2f} "
            f"[{s[g]['spearman_ci_low']:+.2f}, {s[g]['spearman_ci_high']:+.2f}]"
            for g, name in (("all", "all"), ("relu", "ReLU"), ("linear", "linear"))
            if not math.isnan(s[g]["spearman"]))
        if key == "inv_kappa":
            text += "\nlinear: kernel singular, kappa infinite (not drawn)"
        ax.set_title(text, fontsize=8)
        if is_rate:
            xs = [rate(r[key]) for r in runs]
            lo, hi = min(y.min(), min(xs)) * 0.98, max(y.max(), max(xs)) * 1.02
            ax.plot([lo, hi], [lo, hi], color="0.4", lw=0.8, ls="--", zorder=1)
            ax.text(hi * 0.99, hi * 0.975, "y = x", ha="right", va="top", fontsize=8, color="0.3")
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = (ax.get_xlim() if axis is ax.xaxis else ax.get_ylim())
            if hi / lo < 50:  # a narrow range: plain ticks (1-2-5, or 0.5 steps), no exponents
                axis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9), numticks=30)
                                       if hi / lo < 3 else
                                       matplotlib.ticker.LogLocator(subs=(1, 2, 5), numticks=30))
                axis.set_major_formatter(fmt)
                axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.grid(True, which="both", lw=0.3, color="0.85")
    handles = [Line2D([], [], ls="", marker=marker[a], markersize=6, markeredgecolor="k",
                      markeredgewidth=0.4, color=color(a, d), label=f"{name}, depth {d}")
               for d in depths for a, name in (("relu", "ReLU"), ("linear", "linear"))]
    fig.legend(handles=handles, loc="outside lower center", ncol=6, frameon=False,
               title=r"MLPs of width 512, full-batch GD on 2,000 MNIST images at $\eta = n/\lambda_{\max}$;"
               " one point per run (3 seeds each)")
    fig.suptitle("Measured training rate against statistics of the empirical NTK at initialization")
    fig.savefig(path.with_suffix(".png"), dpi=200)
    fig.savefig(path.with_suffix(".svg"))


def main():
    conv = read_csv(BASE / "convergence.csv")
    index = {r["id"]: r for r in read_csv(BASE / "spectra" / "index.csv")}
    runs = []
    for c in conv:
        spec = np.load(BASE / "spectra" / f"{c['id']}.npy")
        r = {
            "id": c["id"], "activation": c["activation"], "depth": int(c["depth"]),
            "seed": int(c["seed"]), "lr": float(c["lr"]),
            "measured_rate": float(c["measured_rate"]),
            "final_train_loss": float(c["final_train_loss"]),
            "predicted_rate_empirical": float(c["predicted_rate_empirical"]),
            "predicted_rate_theory": float(c["predicted_rate_theory"]),
        }
        r.update(statistics(spec, r["lr"], int(c["epochs"])))
        assert abs(r["predicted_rate"] / r["predicted_rate_empirical"] - 1) < 1e-9, c["id"]
        assert float(index[c["id"]]["lambda_max_rel_diff"]) < 1e-10, c["id"]
        runs.append(r)
    write_csv(BASE / "predictor_stats.csv", [
        {k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()} for r in runs])

    rng = np.random.default_rng(64)
    out, summary = [], {}
    for key, meaning in STATS:
        for group, acts in GROUPS.items():
            sel = [r for r in runs if r["activation"] in acts]
            x = np.array([r[key] for r in sel])
            y = np.array([r["measured_rate"] for r in sel])
            rho, lo, hi, p = spearman_inference(x, y, rng)
            fit = loglog(x, y)
            wc = within_config(x, y, [(r["activation"], r["depth"]) for r in sel])
            row = {
                "statistic": key, "group": group, "runs": len(sel),
                "spearman": rho, "spearman_ci_low": lo, "spearman_ci_high": hi,
                "spearman_p_perm": p,
                "loglog_slope": fit[0] if fit else None,
                "loglog_intercept": fit[1] if fit else None,
                "loglog_r2": fit[2] if fit else None,
                "loglog_rms_ln": fit[3] if fit else None,
                "within_config_pearson": wc,
                "meaning": meaning,
            }
            summary[key, group] = row
            out.append({k: (f"{v:.4g}" if isinstance(v, float) and not math.isnan(v) else
                            "" if v is None or (isinstance(v, float) and math.isnan(v)) else v)
                        for k, v in row.items()})
    write_csv(BASE / "predictors.csv", out)
    write_csv(BASE / "linear_vs_relu.csv", tests(runs))
    figure(runs, summary, BASE / "predictors")

    print(f"{'statistic':<22}{'group':<7}{'rho':>6} {'95% CI':>14} {'p_perm':>8} "
          f"{'slope':>7} {'R2':>6} {'within':>7}")
    num = lambda v, f: format(float(v), f) if v != "" else "-"  # noqa: E731
    for row in out:
        print(f"{row['statistic']:<22}{row['group']:<7}{num(row['spearman'], '+6.2f'):>6} "
              f"[{num(row['spearman_ci_low'], '+.2f')},{num(row['spearman_ci_high'], '+.2f')}] "
              f"{num(row['spearman_p_perm'], '8.4f'):>8} {row['loglog_slope']:>7} "
              f"{row['loglog_r2']:>6} {row['within_config_pearson']:>7}")
    err = np.array([r["predicted_rate"] / r["measured_rate"] - 1 for r in runs])
    print("predicted/measured - 1: mean", f"{err.mean():+.3f}", "range",
          f"{err.min():+.3f}..{err.max():+.3f}")


if __name__ == "__main__":
    main()
