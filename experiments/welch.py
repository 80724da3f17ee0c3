"""Welch's t-test with the Student t distribution's tail from the regularized incomplete
beta function (Numerical Recipes' continued fraction, Lentz's method), standard library
only, for the experiments' table scripts. The Rust tools' own test is ntk_runs::stats;
checked values: t = 2, 10 degrees of freedom: p = 0.0734; t = 2.776, 4: p = 0.0500.

    sys.path.insert(0, <experiments dir>); from welch import welch
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
    test a difference against), or values whose spread overflows a float (as
    ntk_runs::stats::welch)."""
    if len(a) < 2 or len(b) < 2:
        return None
    try:
        va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
        se = math.sqrt(va + vb)
        d = statistics.fmean(a) - statistics.fmean(b)
    except (OverflowError, ValueError):
        return None
    if not (se > 0.0) or not math.isfinite(se) or not math.isfinite(d):
        return None
    t = d / se
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return t, df, incbeta(df / 2.0, 0.5, df / (df + t * t))


if __name__ == "__main__":
    assert abs(incbeta(5.0, 0.5, 10 / 14) - 0.0734) < 1e-4
    assert abs(incbeta(2.0, 0.5, 4 / (4 + 2.776 ** 2)) - 0.0500) < 1e-4
    t, df, p = welch([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert abs(p - 0.021311641128756) < 1e-9, p
    assert welch([2.0, 2.0], [2.0, 2.0]) is None, "constant samples: no test"
    assert welch([10.0, 10.0, 10.0], [12.0, 12.0, 12.0]) is None
    assert welch([1.0], [2.0, 3.0]) is None, "one seed: no spread"
    assert welch([1e300, -1e300], [1.0, 2.0]) is None or math.isfinite(welch([1e300, -1e300], [1.0, 2.0])[2])
    print("welch: checks pass")
