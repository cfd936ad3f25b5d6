"""bench/intervals.py: the 95% intervals of make bench's scripts (standard library only), one
definition for every section that states one: Student's t quantile, a mean's interval, and
Welch's interval for the sum or difference of two independent means. Statistics only: it runs
nothing and judges nothing.
"""
import math
import statistics

# Student t, two-sided 95% (0.975 quantile), by degrees of freedom; past 120 the normal's.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
        17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064,
        25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000,
        120: 1.980}


def t975(df):
    """The 0.975 quantile of Student t with df degrees of freedom (df >= 1): the table's entry
    at the largest tabulated df not above it (conservative), 1.960 beyond 120."""
    if df > 120:
        return 1.960
    return T975[max(k for k in T975 if k <= df)]


def mean_ci(xs):
    """-> (mean, half-width of the 95% interval, standard error) of xs; None under 2 values."""
    if len(xs) < 2:
        return None
    m = statistics.fmean(xs)
    se = statistics.stdev(xs) / math.sqrt(len(xs))
    return m, t975(len(xs) - 1) * se, se


def welch(a, b, sign):
    """-> (mean of a + sign x mean of b, the 95% half-width of that sum from Welch's t);
    None unless each side has 2 values."""
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1)) if se else 1
    return statistics.fmean(a) + sign * statistics.fmean(b), t975(max(1, int(df))) * se
