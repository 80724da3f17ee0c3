"""Welch's t-test with the Student t distribution's tail from the regularized incomplete
beta function (Numerical Recipes' continued fraction, Lentz's method), standard library
only, for the experiments' table scripts; with the 95% confidence interval of the
difference (`compare`), Holm's correction of a family of p-values (`holm`) and the two
one-sided tests of equivalence against a stated margin (`tost`), as the rules of
experiments/README.md ("How a verdict is tested") and the Rust tools' ntk_runs::stats
(welch.rs, holm.rs, equivalence.rs) define them. Checked values: t = 2, 10 degrees of
freedom: p = 0.0734; t = 2.776, 4: p = 0.0500; t_{4, 0.975} = 2.7764; R's
p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02.

    sys.path.insert(0, <experiments dir>); from welch import welch, compare, holm, tost
"""
import math
import statistics


def betacf(a, b, x):
    """The continued fraction of the regularized incomplete beta function."""
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
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * betacf(a, b, x) / a
    return 1.0 - front * betacf(b, a, 1.0 - x) / b


def welch(a, b):
    """Welch's t-test of two samples: (t, degrees of freedom, two-sided p), or None where
    there is no test: fewer than two values on a side, two constant samples (no spread to
    test a difference against), or values that are not finite or whose difference or its
    standard error is beyond a float's range (as ntk_runs::stats::welch; the test itself is
    computed on the samples scaled by a power of two, so a tiny or huge scale is no obstacle)."""
    test = _difference_error_df(a, b)
    if test is None:
        return None
    _, _, df, t_of = test
    t = t_of(0.0)
    return t, df, incbeta(df / 2.0, 0.5, df / (df + t * t))


ALPHA = 0.05


def t_sf_two_sided(t, df):
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    return incbeta(df / 2.0, 0.5, df / (df + t * t)) if math.isfinite(t) else 0.0


def t_quantile(q, df):
    """The q quantile of Student's t (0.5 < q < 1), by bisection on the two-sided tail."""
    target, lo, hi = 2.0 * (1.0 - q), 0.0, 1.0
    while t_sf_two_sided(hi, df) > target:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if t_sf_two_sided(mid, df) > target else (lo, mid)
    return 0.5 * (lo + hi)


class Compare:
    """Welch's test of mean(a) - mean(b): the difference, its standard error, t, the
    Welch-Satterthwaite degrees of freedom, the two-sided p and the 95% confidence interval
    (ci_low, ci_high) of the difference."""

    def __init__(self, d, se, df, t):
        self.d, self.se, self.df = d, se, df
        self.t = t(0.0)
        self.p = min(1.0, t_sf_two_sided(self.t, df))
        half = t_quantile(1.0 - ALPHA / 2.0, df) * se
        self.ci_low, self.ci_high = d - half, d + half


def _difference_error_df(a, b):
    if len(a) < 2 or len(b) < 2:
        return None
    # On both samples scaled by one power of two (exact), their largest magnitude into
    # [1, 2), as ntk_runs::stats::welch: t and the degrees of freedom are free of the scale,
    # and the squares of the spread neither underflow (thirty-fifth hostile round, N3:
    # samples near 1e-300 read as constant) nor overflow; d and se are scaled back, and t is
    # formed at the scaled samples' scale (thirty-sixth, D2: from d and se scaled back into
    # subnormal numbers p was 0.076 for 0.088). Returns (d, se, df, t) with t(shift) =
    # (d - shift) / se.
    m = max((abs(v) for v in list(a) + list(b)), default=0.0)
    e = math.frexp(m)[1] - 1 if 0.0 < m < math.inf else 0
    a, b = [math.ldexp(v, -e) for v in a], [math.ldexp(v, -e) for v in b]
    # Less one reference value, the pooled mean at that scale (as ntk_runs::stats::welch):
    # exact for values within a factor of two of it, so that samples differing in their last
    # bits keep their difference, which the means rounded to floats lost (seventy-first
    # hostile round, N2: t -0.583 for -0.389).
    try:
        reference = sum(a + b) / (len(a) + len(b))
    except (OverflowError, ValueError):
        return None
    # Each value less the reference, with that subtraction's rounding error (Knuth's
    # two-sum, exact), which the means add back: a value that absorbed the reference lost it
    # where the others kept it (eighty-fifth hostile round, D9: [1e17, -1e17] against [1, 2]
    # gave d = -0.75). Where every subtraction is exact the error is 0.
    def less(x):
        s, lost = [], 0.0
        for v in x:
            d = v - reference
            back = d - v
            lost += (v - (d - back)) + (-reference - back)
            s.append(d)
        return s, lost / len(x)
    # Each sample's spread about its own mean, from its values at the scale (not less the
    # reference, whose rounding a spread far below it would take: hundred-and-twenty-fourth
    # hostile round, N2).
    try:
        va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    except (OverflowError, ValueError, ZeroDivisionError):
        return None
    (a, lost_a), (b, lost_b) = less(a), less(b)
    try:
        se_scaled = math.sqrt(va + vb)
        d_scaled = (statistics.fmean(a) + lost_a) - (statistics.fmean(b) + lost_b)
        se, d = math.ldexp(se_scaled, e), math.ldexp(d_scaled, e)
        # Inside the try: squares of a spread beyond 1e154 overflow (ninth hostile round:
        # [1e153, -1e153] raised OverflowError), where the Rust side's degrees of freedom
        # are NaN and it has no test either.
        df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    except (OverflowError, ValueError, ZeroDivisionError):
        return None
    if not (se_scaled > 0.0) or not math.isfinite(se) or not math.isfinite(d) or not math.isfinite(df):
        return None

    def t(shift):
        try:
            shift_scaled = math.ldexp(shift, -e)
        except OverflowError:
            shift_scaled = math.copysign(math.inf, shift)
        return (d_scaled - shift_scaled) / se_scaled

    return d, se, df, t


def compare(a, b):
    """Welch's test of two samples with the 95% confidence interval of the difference of
    their means (a Compare), or None where welch() has no test."""
    test = _difference_error_df(a, b)
    return None if test is None else Compare(*test)


def holm(ps):
    """Holm's step-down adjusted p-values of a family, in the order given; None and NaN
    entries (comparisons without a test) are not members of the family and come back None
    (as ntk_runs::stats::holm, and as R's p.adjust leaves NA out of its n). A p-value outside
    [0, 1] is a caller's error, refused (hundred-and-twenty-sixth hostile round, N5)."""
    for i, p in enumerate(ps):
        if p is not None and not math.isnan(p) and not 0.0 <= p <= 1.0:
            raise ValueError(f"holm: p-value {p!r} (entry {i}) is outside [0, 1]")
    tested = sorted(((p, i) for i, p in enumerate(ps) if p is not None and not math.isnan(p)))
    out, running, m = [None] * len(ps), 0.0, len(tested)
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def tost(a, b, margin):
    """The two one-sided tests (Schuirmann) of |mean(a) - mean(b)| < margin with Welch's
    standard error: (p, ci_low, ci_high), p the larger one-sided p-value (equivalent at
    level ALPHA where p < ALPHA), the interval the 90% one of the difference; None without a
    positive, finite margin or a Welch test (as ntk_runs::stats::tost)."""
    test = _difference_error_df(a, b)
    if test is None or not (0.0 < margin < math.inf):
        return None
    d, se, df, t_of = test

    def upper_tail(t):  # P(T >= t)
        half = 0.5 * t_sf_two_sided(t, df)
        return half if t >= 0 else 1.0 - half

    p = max(upper_tail(t_of(-margin)), 1.0 - upper_tail(t_of(margin)))
    half = t_quantile(1.0 - ALPHA, df) * se
    return p, d - half, d + half


if __name__ == "__main__":
    assert abs(incbeta(5.0, 0.5, 10 / 14) - 0.0734) < 1e-4
    assert abs(incbeta(2.0, 0.5, 4 / (4 + 2.776 ** 2)) - 0.0500) < 1e-4
    t, df, p = welch([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert abs(p - 0.021311641128756) < 1e-9, p
    assert welch([2.0, 2.0], [2.0, 2.0]) is None, "constant samples: no test"
    assert welch([10.0, 10.0, 10.0], [12.0, 12.0, 12.0]) is None
    assert welch([1.0], [2.0, 3.0]) is None, "one seed: no spread"
    assert welch([1e300, -1e300], [1.0, 2.0]) is None or math.isfinite(welch([1e300, -1e300], [1.0, 2.0])[2])
    # Free of the scale, as ntk_runs::stats: a spread whose square overflows (1e153) or
    # underflows (1e-300) is tested as at unit scale (no OverflowError, no "constant").
    unit = welch([0.1, 0.2, 0.4], [0.15, 0.21, 0.5, 0.7])
    for scale in (1e-300, 1e-200, 1e153, 1e300):
        got = welch([v * scale for v in (0.1, 0.2, 0.4)], [v * scale for v in (0.15, 0.21, 0.5, 0.7)])
        assert all(abs(g - u) < 1e-9 * max(1.0, abs(u)) for g, u in zip(got, unit)), (scale, got, unit)
    assert abs(welch([1e153, -1e153], [1.0, 2.0])[1] - 1.0) < 1e-9
    # Subnormal samples (multiples of 2^-1074, exact): the same t, p and TOST p as at unit
    # scale (thirty-sixth hostile round, D2: p 0.076 for 0.088).
    u = 5e-324
    unit, tiny = welch([3, 7, 8], [10, 13, 20]), welch([3 * u, 7 * u, 8 * u], [10 * u, 13 * u, 20 * u])
    assert all(abs(g - w) < 1e-12 for g, w in zip(tiny, unit)), (tiny, unit)
    unit = tost([3, 7, 8], [10, 13, 20], 12.0)
    tiny = tost([3 * u, 7 * u, 8 * u], [10 * u, 13 * u, 20 * u], 12 * u)
    assert abs(unit[0] - tiny[0]) < 1e-12, (unit, tiny)
    assert compare([1e153, -1e153], [1.0, 2.0]).p <= 1.0
    c = compare([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    half = 2.7764451051977987 * math.sqrt(2.0 / 3.0)  # scipy.stats.t.ppf(0.975, 4)
    assert abs(c.ci_low + 3.0 + half) < 1e-9 and abs(c.ci_high + 3.0 - half) < 1e-9, vars(c)
    assert abs(c.p - 0.021311641128756) < 1e-9 and abs(c.df - 4.0) < 1e-12
    assert abs(t_quantile(0.95, 4.0) - 2.1318467863266504) < 1e-9  # scipy.stats.t.ppf(0.95, 4)
    got = holm([0.01, 0.04, None, 0.03, 0.005])
    for g, w in zip(got, [0.03, 0.06, None, 0.06, 0.02]):
        assert (g is None and w is None) or abs(g - w) < 1e-15, got
    assert holm([0.6, 0.7]) == [1.0, 1.0] and holm([]) == []
    # NaN is no test, wherever it stands (ninth hostile round, W03): R's
    # p.adjust(c(NA, 0.01), "holm") = NA 0.01.
    assert holm([math.nan, 0.01]) == [None, 0.01]
    assert holm([0.01, math.nan, 0.02]) == [0.02, None, 0.02]
    # ntk_runs::stats::equivalence's check: means 0.1 apart, Welch se = sqrt(2/3) * 0.1, 4 df.
    a, b = [1.0, 1.1, 1.2], [0.9, 1.0, 1.1]
    assert tost(a, b, 1.0)[0] < ALPHA and tost(a, b, 0.05)[0] > ALPHA
    se = math.sqrt(2.0 / 3.0) * 0.1
    want = max(0.5 * t_sf_two_sided((0.1 + 0.05) / se, 4.0), 1.0 - 0.5 * t_sf_two_sided((0.1 - 0.05) / se, 4.0))
    assert abs(tost(a, b, 0.05)[0] - want) < 1e-12
    assert tost(a, b, 0.0) is None and tost([1.0, 1.0], [1.0, 1.0], 1.0) is None
    print("welch: checks pass")
