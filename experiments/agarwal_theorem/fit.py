"""Agarwal, Awasthi & Kale's main theorem, measured: fits the per-layer rate at which the NTK's
condition number goes to 1 with depth, and sets it beside the rates the coefficient of
non-linearity mu predicts.

    python3 experiments/agarwal_theorem/fit.py          # numpy and matplotlib

Reads the committed sweep tables `<name>/results.csv` beside this file (theory_b0,
theory_fast, theory_slow, theory_same_mu: the infinite-width NTK, `probe.method = "theory"`;
finite, finite_b0, finite_deep: the empirical NTK at widths 512-4096, 3 seeds) and writes
`rates.csv`, `kappa_vs_depth.{png,svg}` and `correlation_vs_depth.{png,svg}` beside them.
README.md explains every column and the verdict.

What is derived here, independently of the Rust code (numpy quadrature):
- the normalized activation's Hermite energies a_k^2 (k = 0..K), its dual activation
  f(rho) = sum_k a_k^2 rho^k and f'(rho) = sum_k k a_k^2 rho^(k-1);
- mu = 1 - a_1^2 (Agarwal et al., Def. 3.1; `ntk-probe activations` prints the same to 3
  decimals) and beta = f'(1) = c E[s'(Z)^2] (the NTK's diagonal growth per layer);
- the predicted per-layer rates: ln(1 - mu/2), the contraction Lemma C.5 gives for
  |rho| <= 1/2 (the factor the theorem's bound iterates: reconstructed, our copy lost the
  formulas); ln(1 - mu) = ln f'(0), the exact asymptotic rate of the top-layer kernel's
  correlations (Thm 3.2's quantity); ln((1 - mu) / beta), the exact asymptotic rate of the
  NTK's normalized off-diagonal entries and so of kappa - 1 (Thm 3.4 / Cor. 3.5's quantity),
  up to a factor linear in L;
- the infinite-width series of the most correlated input pair, rho_L = f^L(rho_0) (top-layer
  kernel) and Theta_L(rho_0) / Theta_L(1) (NTK), which is held here against the project's own
  theory (`min_grad_angle_deg` of the theory sweeps) as a check of both.
"""
import csv
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from welch import t_quantile  # noqa: E402  (experiments/welch.py, standard library only)

THEORY = ["theory_b0", "theory_fast", "theory_slow", "theory_same_mu"]
FINITE = ["finite_b0", "finite", "finite_deep"]
WIDTHS = [512, 1024, 2048, 4096]
# The fit window at infinite width: the depths where the theory's kappa - 1 is resolved
# (>= 1e-8: results.csv writes kappa with 11 significant digits, so kappa - 1 is rounded at
# 5e-11 absolute, below 0.5% of the smallest value used) and the kernel is already within
# 1% of the identity's conditioning (<= 1e-2: the asymptotic regime, where the correlations
# are small and the contraction is f'(0)'s).
RESOLVED, ASYMPTOTIC = 1e-8, 1e-2
# At finite width the theorem "stops holding" at the first depth where the seeds' mean of
# ln(kappa - 1) exceeds the infinite-width value by more than ln 2 (a factor of 2).
STOP_FACTOR = 2.0
K_HERMITE = 300

NAMES = {  # key: (label, colour as in ntk_plot::style where the activation has one)
    "norm_relu": ("NormReLU (b = -1.59)", (140, 86, 75)),
    "selu": ("SELU", (227, 119, 194)),
    "tanh": ("tanh", (148, 103, 189)),
    "erf": ("erf", (23, 128, 128)),
    "norm_relu_b0": ("NormReLU (b = 0)", (214, 39, 40)),
    "norm_relu_mu_tanh": ("NormReLU (b = -0.90, μ of tanh)", (23, 190, 207)),
    "relu": ("ReLU (uncentred)", (127, 127, 127)),
}
# The kinks of the three NormReLU sweeps: the paper's (its scale is SELU's), the normalized
# ReLU's, and the one whose mu equals tanh's (theory_same_mu.toml).
KINKS = {-1.5907658564: "norm_relu", 0.0: "norm_relu_b0", -0.8995761217: "norm_relu_mu_tanh"}
MEASURED = ["norm_relu", "selu", "tanh", "erf", "norm_relu_b0"]  # at infinite and finite width
NORMALIZED = MEASURED + ["norm_relu_mu_tanh"]  # at infinite width


# ---------------------------------------------------------------------------------------
# The activations and their dual kernels, derived here.

def _phi(x):
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _Phi(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def norm_relu(b):
    """NormReLU s_b(x) = lambda_b (max(x, b) - mu_b) (shared/reference/theory.md)."""
    mu = b * _Phi(b) + _phi(b)
    second = b * b * _Phi(b) + (1 - _Phi(b)) + b * _phi(b)
    lam = (second - mu * mu) ** -0.5
    return (lambda x: lam * (np.maximum(x, b) - mu)), (lambda x: lam * (x > b)), [b]


SELU_L, SELU_A = 1.0507009873554805, 1.6732632423543772
ACTIVATIONS = {
    "norm_relu": norm_relu(-1.5907658564),
    "norm_relu_b0": norm_relu(0.0),
    "norm_relu_mu_tanh": norm_relu(-0.8995761217),
    "selu": (lambda x: np.where(x > 0, SELU_L * x, SELU_L * SELU_A * np.expm1(np.minimum(x, 0))),
             lambda x: np.where(x > 0, SELU_L, SELU_L * SELU_A * np.exp(np.minimum(x, 0))), [0.0]),
    "tanh": (np.tanh, lambda x: 1 / np.cosh(x) ** 2, []),
    "erf": (np.vectorize(math.erf), lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x), []),
}


def gauss_nodes(kinks, zmax=12.0, panel=0.25, order=32):
    """Composite Gauss-Legendre on [-zmax, zmax], split at the kinks, weighted by N(0, 1)'s
    density: exact to rounding for piecewise smooth integrands (mass beyond 12 is 4e-33)."""
    xg, wg = np.polynomial.legendre.leggauss(order)
    cuts = sorted(set([-zmax, zmax] + [k for k in kinks if -zmax < k < zmax]))
    xs, ws = [], []
    for a, b in zip(cuts[:-1], cuts[1:]):
        edges = np.linspace(a, b, max(1, int(math.ceil((b - a) / panel))) + 1)
        for lo, hi in zip(edges[:-1], edges[1:]):
            xs.append(0.5 * (hi - lo) * xg + 0.5 * (hi + lo))
            ws.append(0.5 * (hi - lo) * wg)
    x = np.concatenate(xs)
    return x, np.concatenate(ws) * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)


class Dual:
    """The Hermite energies of sqrt(c) s, c = 1 / E[s(Z)^2] (the networks' scale), and what
    follows from them."""

    def __init__(self, key):
        s, ds, kinks = ACTIVATIONS[key]
        x, w = gauss_nodes(kinks)
        sx = s(x)
        self.mean = float(w @ sx)
        c = 1.0 / float(w @ sx ** 2)
        # Orthonormal Hermite polynomials h_k = He_k / sqrt(k!) by their recurrence.
        h = np.zeros((K_HERMITE + 1, x.size))
        h[0], h[1] = 1.0, x
        for k in range(1, K_HERMITE):
            h[k + 1] = (x * h[k] - math.sqrt(k) * h[k - 1]) / math.sqrt(k + 1)
        self.a2 = (h @ (w * sx)) ** 2 * c
        self.mu = 1.0 - self.a2[1]  # sum_k a_k^2 = 1 by the normalization
        self.beta = c * float(w @ ds(x) ** 2)  # f'(1) = sum_k k a_k^2, without truncation
        self.tail = 1.0 - self.a2.sum()  # the energy beyond K_HERMITE

    def f(self, rho):
        return float(np.polynomial.polynomial.polyval(rho, self.a2))

    def fprime(self, rho):
        k = np.arange(1, K_HERMITE + 1)
        return float(np.polynomial.polynomial.polyval(rho, k * self.a2[1:]))

    def series(self, rho0, depth):
        """(rho_l, r_l) for l = 0..depth: the top-layer kernel's correlation f^l(rho0) and
        the NTK's normalized entry Theta_l(rho0) / Theta_l(1) of one pair of unit inputs
        (Theta_l = Theta_{l-1} f'(rho_{l-1}) + f(rho_{l-1}); diagonal: f(1) = 1,
        f'(1) = beta). Valid for |rho0| well below 1, where the truncated series converges."""
        rho, theta, diag = rho0, rho0, 1.0
        rhos, rs = [rho0], [rho0]
        for _ in range(depth):
            theta = theta * self.fprime(rho) + self.f(rho)
            diag = diag * self.beta + 1.0
            rho = self.f(rho)
            rhos.append(rho)
            rs.append(theta / diag)
        return np.array(rhos), np.array(rs)


# ---------------------------------------------------------------------------------------
# The tables.

def key_of(activation):
    if activation.startswith("norm_relu"):
        return KINKS[float(activation.split("b=")[1].rstrip(")"))]
    return activation


def read(names):
    rows = []
    for name in names:
        path = os.path.join(HERE, name, "results.csv")
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                r["sweep"] = name
                r["key"] = key_of(r["activation"])
                r["depth"] = int(r["depth"])
                r["seed"] = int(r["seed"])
                r["width"] = int(r["width"])
                r["kappa"] = float(r["kappa"])
                r["seconds"] = float(r["seconds"])
                rows.append(r)
    return rows


def cos_deg(angle):
    return math.cos(math.radians(float(angle)))


def ols(x, y):
    """Least-squares slope of y on x with its 95% confidence interval (Student t, n - 2
    degrees of freedom, from the residuals): (slope, low, high, n)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = x.size
    if n < 3:
        return None
    xm = x - x.mean()
    slope = float(xm @ (y - y.mean()) / (xm @ xm))
    resid = y - y.mean() - slope * xm
    se = math.sqrt(float(resid @ resid) / (n - 2) / float(xm @ xm))
    half = t_quantile(0.975, n - 2) * se
    return slope, slope - half, slope + half, n


def over_seeds(slopes):
    """Mean of per-seed slopes with the 95% interval of the mean (Student t, seeds - 1)."""
    s = np.asarray(slopes, float)
    if s.size < 2:
        return None
    m, sd = float(s.mean()), float(s.std(ddof=1))
    half = t_quantile(0.975, s.size - 1) * sd / math.sqrt(s.size)
    return m, m - half, m + half, s.size, sd


def fmt(v, spec=".5f"):
    return "" if v is None or (isinstance(v, float) and not math.isfinite(v)) else format(v, spec)


def main():
    theory = read(THEORY)
    finite = read(FINITE)
    duals = {k: Dual(k) for k in NORMALIZED}

    # The inputs' largest correlation, from layer 0 of any finite network's embedding angles
    # (all sweeps use the same 64 inputs: synthetic N(0, I_32), seed 0, unit norm).
    rho0 = cos_deg(finite[0]["embedding_min_angle_deg"].split(";")[0])

    # Infinite width: kappa - 1 and the largest NTK correlation per depth.
    inf = {}
    for r in theory:
        inf.setdefault(r["key"], {})[r["depth"]] = (r["kappa"] - 1.0, cos_deg(r["min_grad_angle_deg"]))

    # Check: the project's theory kernel against the Hermite series of the same pair.
    check = {}
    for key in NORMALIZED:
        depths = sorted(inf[key])
        rhos, rs = duals[key].series(rho0, max(depths))
        rel = [abs(inf[key][L][1] - rs[L]) / rs[L] for L in depths if rs[L] > 1e-6]
        check[key] = max(rel)

    # Finite width: per (key, width), per depth, per seed.
    fin = {}
    deepest = {}
    for r in finite:
        fin.setdefault((r["key"], r["width"]), {}).setdefault(r["depth"], {})[r["seed"]] = (
            r["kappa"] - 1.0, cos_deg(r["min_grad_angle_deg"]))
        k = (r["key"], r["width"], r["seed"])
        if r["depth"] > deepest.get(k, (0, None))[0]:
            deepest[k] = (r["depth"], [cos_deg(a) for a in r["embedding_min_angle_deg"].split(";")])

    out_rows = []
    preds = {}
    for key in NORMALIZED:
        d = duals[key]
        preds[key] = (math.log(1 - d.mu / 2), math.log(1 - d.mu), math.log((1 - d.mu) / d.beta))
    base = lambda key: {  # noqa: E731
        "activation": NAMES[key][0], "mu": fmt(duals[key].mu, ".6f"), "beta": fmt(duals[key].beta, ".6f"),
        "pred_bound_ln(1-mu/2)": fmt(preds[key][0]), "pred_topkernel_ln(1-mu)": fmt(preds[key][1]),
        "pred_ntk_ln((1-mu)/beta)": fmt(preds[key][2]),
    }

    for key in NORMALIZED:
        # --- infinite width, NTK kappa - 1 (Cor. 3.5) and largest NTK correlation (Thm 3.4)
        depths = sorted(inf[key])
        win = [L for L in depths if RESOLVED <= inf[key][L][0] <= ASYMPTOTIC]
        k1 = ols(win, [math.log(inf[key][L][0]) for L in win])
        k1L = ols(win, [math.log(inf[key][L][0] / L) for L in win])
        rc = ols(win, [math.log(inf[key][L][1]) for L in win])
        # the prediction for the plain slope: ln((1 - mu)/beta) plus the slope of ln L itself
        # over the same depths (kappa - 1 ~ C L ((1 - mu)/beta)^L)
        with_l = preds[key][2] + ols(win, [math.log(L) for L in win])[0]
        for quantity, fit, fitL in (("ntk_kappa_minus_1", k1, k1L), ("ntk_max_correlation", rc, None)):
            row = base(key)
            row["pred_ntk_with_L_factor"] = fmt(with_l)
            row.update({"width": "inf", "quantity": quantity, "seeds": 1,
                        "window": f"{win[0]}-{win[-1]}" if win else "", "points": len(win),
                        "slope": fmt(fit and fit[0]), "ci_low": fmt(fit and fit[1]), "ci_high": fmt(fit and fit[2]),
                        "slope_over_L": fmt(fitL and fitL[0]), "ci_low_over_L": fmt(fitL and fitL[1]),
                        "ci_high_over_L": fmt(fitL and fitL[2]),
                        "theory_check_max_rel": fmt(check[key], ".1e") if quantity == "ntk_max_correlation" else ""})
            out_rows.append(row)
        # --- infinite width, top-layer kernel (Thm 3.2), derived from the Hermite series
        rhos, _ = duals[key].series(rho0, max(depths))
        wl = [l for l in range(1, len(rhos)) if RESOLVED <= rhos[l] <= ASYMPTOTIC]
        ck = ols(wl, [math.log(rhos[l]) for l in wl])
        row = base(key)
        row.update({"width": "inf", "quantity": "topkernel_max_correlation (derived)", "seeds": 1,
                    "window": f"{wl[0]}-{wl[-1]}" if wl else "", "points": len(wl),
                    "slope": fmt(ck and ck[0]), "ci_low": fmt(ck and ck[1]), "ci_high": fmt(ck and ck[2])})
        out_rows.append(row)

        # --- finite widths
        for width in WIDTHS:
            series = fin.get((key, width))
            if not series:
                continue
            fd = sorted(series)
            seeds = sorted(series[fd[0]])
            stop = None
            for L in fd:
                m = np.mean([math.log(series[L][s][0]) for s in seeds])
                if m > math.log(inf[key][L][0]) + math.log(STOP_FACTOR):
                    stop = L
                    break
            early = [L for L in fd if stop is None or L < stop]
            per_seed = [ols(early, [math.log(series[L][s][0]) for L in early]) for s in seeds]
            fit = over_seeds([p[0] for p in per_seed]) if all(per_seed) else None
            th = ols(early, [math.log(inf[key][L][0]) for L in early])
            means = {L: float(np.exp(np.mean([math.log(series[L][s][0]) for s in seeds]))) for L in fd}
            floor_L = min(means, key=means.get)
            row = base(key)
            row.update({"width": width, "quantity": "ntk_kappa_minus_1", "seeds": len(seeds),
                        "window": f"{early[0]}-{early[-1]}" if early else "", "points": len(early),
                        "slope": fmt(fit and fit[0]), "ci_low": fmt(fit and fit[1]), "ci_high": fmt(fit and fit[2]),
                        "theory_slope_same_window": fmt(th and th[0]),
                        "stop_depth": "" if stop is None else stop,
                        "deepest_measured": fd[-1],
                        "floor": fmt(means[floor_L], ".4g"), "floor_depth": floor_L,
                        "theory_at_floor_depth": fmt(inf[key][floor_L][0], ".4g")})
            out_rows.append(row)
            # the top-layer kernel's largest correlation, layer by layer, from each seed's
            # deepest network (its embedding angles)
            layers = [deepest[(key, width, s)][1] for s in seeds]
            nl = min(len(v) for v in layers) - 1
            stop_ck = None
            for l in range(1, nl + 1):
                vals = [v[l] for v in layers]
                if min(vals) > 0 and np.mean(np.log(vals)) > math.log(rhos[l]) + math.log(STOP_FACTOR):
                    stop_ck = l
                    break
            mean_ck = {l: float(np.mean([v[l] for v in layers])) for l in range(1, nl + 1)}  # may be <= 0
            fl = min(mean_ck, key=mean_ck.get)
            row = base(key)
            row.update({"width": width, "quantity": "topkernel_max_correlation", "seeds": len(seeds),
                        "stop_depth": "" if stop_ck is None else stop_ck, "deepest_measured": nl,
                        "floor": fmt(mean_ck[fl], ".4g"), "floor_depth": fl,
                        "theory_at_floor_depth": fmt(rhos[fl], ".4g")})
            out_rows.append(row)

    cols = ["activation", "mu", "beta", "width", "quantity", "seeds", "window", "points", "slope", "ci_low",
            "ci_high", "slope_over_L", "ci_low_over_L", "ci_high_over_L", "theory_slope_same_window",
            "pred_bound_ln(1-mu/2)", "pred_topkernel_ln(1-mu)", "pred_ntk_ln((1-mu)/beta)", "pred_ntk_with_L_factor", "stop_depth",
            "deepest_measured", "floor", "floor_depth", "theory_at_floor_depth", "theory_check_max_rel"]
    with open(os.path.join(HERE, "rates.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for r in out_rows:
            w.writerow({c: r.get(c, "") for c in cols})

    # The budget: the probe's own seconds per point (kernel and eigenvalues), per sweep.
    budget = {}
    for r in theory + finite:
        budget[r["sweep"]] = budget.get(r["sweep"], 0.0) + r["seconds"]
    print("rho_0 (largest input correlation) = %.6f" % rho0)
    for key in NORMALIZED:
        d = duals[key]
        print(f"{key:13s} mu {d.mu:.6f} beta {d.beta:.6f} mean {d.mean:+.1e} Hermite tail {d.tail:.1e} "
              f"theory check {check[key]:.1e}")
    for name, s in budget.items():
        print(f"budget {name}: {s:.0f} s over {sum(1 for r in theory + finite if r['sweep'] == name)} points")
    print(f"budget total: {sum(budget.values()):.0f} s")
    for r in out_rows:
        print(r["activation"], r["width"], r["quantity"], r.get("window", ""), r.get("slope", ""),
              f"[{r.get('ci_low', '')}, {r.get('ci_high', '')}]", "L:", r.get("slope_over_L", ""),
              "pred", r["pred_topkernel_ln(1-mu)"], r["pred_ntk_ln((1-mu)/beta)"],
              "withL", r.get("pred_ntk_with_L_factor", ""), "same-window theory", r.get("theory_slope_same_window", ""),
              "stop", r.get("stop_depth", ""), "floor", r.get("floor", ""), r.get("floor_depth", ""))

    figures(inf, fin, duals, rho0, preds, out_rows, deepest, theory)


# ---------------------------------------------------------------------------------------
# The figures.

def figures(inf, fin, duals, rho0, preds, out_rows, deepest, theory):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.titlesize": 9.5, "axes.labelsize": 9, "legend.fontsize": 7,
                         "svg.fonttype": "none", "axes.grid": True, "grid.alpha": 0.25})
    col = {k: tuple(c / 255 for c in v[1]) for k, v in NAMES.items()}
    wcol = {512: "#c8b400", 1024: "#35b779", 2048: "#31688e", 4096: "#440154"}
    ell = {k: -1.0 / preds[k][2] for k in NORMALIZED}  # the NTK's predicted decay length, layers
    ell_ck = {k: -1.0 / preds[k][1] for k in NORMALIZED}  # the top-layer kernel's

    # Figure 1: kappa - 1. (a) infinite width against depth in units of the predicted decay
    # length (a rate set by (1 - mu)/beta makes every curve end parallel to the guide);
    # (b)-(f) each activation at finite widths beside its infinite-width curve.
    fig, axes = plt.subplots(2, 3, figsize=(11, 6.8), constrained_layout=True)
    ax = axes[0, 0]
    for key in NORMALIZED:
        depths = np.array(sorted(inf[key]))
        y = np.array([inf[key][L][0] for L in depths])
        ok = y >= RESOLVED
        ax.semilogy(depths[ok] / ell[key], y[ok], "-o", ms=2.5, lw=1.1, color=col[key],
                    label=f"{NAMES[key][0]}: ℓ = {ell[key]:.2f} layers")
    # the guide: the prediction's shape C (L/l) e^(-L/l), through 10x NormReLU (b = 0)'s deepest
    # window point, so that it runs beside the curves
    k0 = "norm_relu_b0"
    L1 = max(L for L in inf[k0] if RESOLVED <= inf[k0][L][0] <= ASYMPTOTIC)
    x1, y1 = L1 / ell[k0], 10 * inf[k0][L1][0]
    x = np.linspace(6, 24, 50)
    ax.semilogy(x, y1 * (x / x1) * np.exp(-(x - x1)), "--", color="k", lw=1.0,
                label="the prediction's shape, ∝ (L/ℓ)·e^(−L/ℓ)")
    ax.axhline(RESOLVED, color="0.5", lw=0.6, ls=":")
    ax.set_xlim(0, 27)
    ax.set_ylim(1e-9, 1e6)
    ax.set_xlabel("depth / predicted decay length, L/ℓ with ℓ = −1/ln((1−μ)/β)")
    ax.set_ylabel("κ(NTK) − 1 (dimensionless)")
    ax.set_title("(a) infinite width, all six activations")
    ax.legend(loc="upper right", frameon=True, fontsize=6.3)

    for ax, key in zip(axes.flat[1:], MEASURED):
        span = max(L for (k, w) in fin if k == key for L in fin[(k, w)])
        depths = sorted(L for L in inf[key] if L <= span)
        y = np.array([inf[key][L][0] for L in depths])
        ok = y >= RESOLVED
        ax.semilogy(np.array(depths)[ok], y[ok], "-", color="k", lw=1.6, label="infinite width")
        for width in WIDTHS:
            series = fin.get((key, width))
            if not series:
                continue
            fd = sorted(series)
            vals = np.array([[series[L][s][0] for s in sorted(series[L])] for L in fd])
            gm = np.exp(np.log(vals).mean(axis=1))
            ax.fill_between(fd, vals.min(axis=1), vals.max(axis=1), color=wcol[width], alpha=0.18, lw=0)
            ax.semilogy(fd, gm, "-o", ms=2.5, lw=1.1, color=wcol[width], label=f"width {width}")
            stop = next((r["stop_depth"] for r in out_rows if r["activation"] == NAMES[key][0]
                         and r["width"] == width and r["quantity"] == "ntk_kappa_minus_1"), "")
            if stop != "":
                ax.plot([stop], [gm[fd.index(stop)]], marker="x", ms=7, mew=1.6, color=wcol[width], ls="none")
        d = duals[key]
        ax.set_title(f"({'bcdef'[MEASURED.index(key)]}) {NAMES[key][0]}: μ = {d.mu:.3f}, β = {d.beta:.3f}")
        ax.set_xlabel("depth L (hidden layers)")
        ax.set_ylabel("κ(NTK) − 1 (dimensionless)")
        ax.set_xlim(0, span + 1)
        if span <= 16:
            ax.set_xticks([1, 4, 8, 12, 16])
        ax.plot([], [], "x", color="0.3", mew=1.6, label="first depth > 2× infinite width")
        ax.legend(loc="lower left", frameon=True)
    fig.suptitle("NTK condition number against depth (n = 64 unit-norm inputs from N(0, I₃₂)); "
                 "finite width: geometric mean of 3 seeds, band: min–max", fontsize=10)
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(HERE, f"kappa_vs_depth.{ext}"), dpi=200)
    plt.close(fig)

    # Figure 2: the largest off-diagonal correlation, top-layer kernel (Thm 3.2) and NTK
    # (Thm 3.4), each against depth in units of its own predicted decay length.
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.3), constrained_layout=True)
    for key in NORMALIZED:
        depths = sorted(inf[key])
        rhos, rs = duals[key].series(rho0, max(depths))
        ls = np.arange(len(rhos))
        ok = rhos >= RESOLVED
        axes[0].semilogy(ls[ok] / ell_ck[key], rhos[ok], "-", color=col[key], lw=1.3,
                         label=f"{NAMES[key][0]}: ℓ = {ell_ck[key]:.1f} layers")
        for width, mk in ((4096, "o"), (512, "^")):
            lay = [deepest[(key, width, s)][1] for s in (0, 1, 2) if (key, width, s) in deepest]
            if lay:
                nl = min(len(v) for v in lay)
                m = np.mean(np.array([v[:nl] for v in lay]), axis=0)
                axes[0].semilogy(np.arange(1, nl) / ell_ck[key], m[1:], mk, ms=3, color=col[key],
                                 mfc="none" if width == 512 else col[key])
        y = np.array([inf[key][L][1] for L in depths])
        ok = y >= RESOLVED
        axes[1].semilogy(np.array(depths)[ok] / ell[key], y[ok], "o", ms=3, color=col[key],
                         label=f"{NAMES[key][0]}: ℓ = {ell[key]:.2f} layers")
        ok = rs >= RESOLVED
        axes[1].semilogy(ls[ok] / ell[key], rs[ok], "-", color=col[key], lw=0.9)
    axes[0].plot([], [], "o", color="0.3", ms=3, label="width 4096, mean of 3 seeds")
    axes[0].plot([], [], "^", color="0.3", mfc="none", ms=3, label="width 512, mean of 3 seeds")
    axes[0].plot([], [], "-", color="0.3", label="infinite width (Hermite series, fit.py)")
    axes[1].plot([], [], "o", color="0.3", ms=3, label="infinite width (the probe's theory)")
    axes[1].plot([], [], "-", color="0.3", label="Hermite series (fit.py), same pair")
    rhos, rs = duals[k0].series(rho0, 200)
    x = np.linspace(3, 10, 20)
    axes[0].semilogy(x, 5 * rhos[int(6 * ell_ck[k0])] * np.exp(-(x - int(6 * ell_ck[k0]) / ell_ck[k0])), "--",
                     color="k", lw=1.0, label="the prediction's shape, ∝ e^(−L/ℓ)")
    x = np.linspace(6, 24, 20)
    x1 = 12 * ell[k0]
    axes[1].semilogy(x, 10 * rs[int(x1)] * (x / (int(x1) / ell[k0])) * np.exp(-(x - int(x1) / ell[k0])), "--",
                     color="k", lw=1.0, label="the prediction's shape, ∝ (L/ℓ)·e^(−L/ℓ)")
    axes[0].set_xlim(0, 10)
    axes[1].set_xlim(0, 27)
    axes[0].set_xlabel("depth / predicted decay length, L/ℓ with ℓ = −1/ln(1−μ)")
    axes[1].set_xlabel("depth / predicted decay length, L/ℓ with ℓ = −1/ln((1−μ)/β)")
    axes[0].set_title("(a) top-layer kernel (Thm 3.2): largest correlation ρ_L over the pairs")
    axes[1].set_title("(b) NTK (Thm 3.4): largest Θ_L(x, y) / Θ_L(x, x) over the pairs")
    axes[0].set_ylim(1e-5, 2)
    axes[1].set_ylim(1e-8, 2)
    for ax, loc in zip(axes, ("lower left", "upper right")):
        ax.set_ylabel("largest off-diagonal correlation (dimensionless)")
        ax.legend(loc=loc, fontsize=6.5)
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(HERE, f"correlation_vs_depth.{ext}"), dpi=200)
    plt.close(fig)


if __name__ == "__main__":
    main()
