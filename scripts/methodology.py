"""The methodology score of Willemsen, van Nieuwpoort and van Werkhoven (FGCS 2024) with the budget
counted in unique evaluations, and its bootstrap confidence intervals, for runs of any tool.

The definitions are those of tunekit's `methodology_score` with `--score-budget evaluations`
(docs/search.md, "Metrics"): the target t* = t_opt + (t_median - t_opt)(1 - p) gives the budget
fevals = ceil(i / (N + 1 - i)) evaluations (i valid configurations worse than t*, N valid ones),
the scored range starts at the fevals of p = 0.01, the random-search baseline without replacement
is the value at position round(M (N+1) / (M+1)) of all configurations ordered failed first, then
worst to best, and a strategy's curve is the value at the mean position of its runs' best after M
evaluations. The score is the mean over 1000 points of (f_s - f_r) / (f_opt - f_r).

A run is a list of the objective (ms) of each unique evaluation in order, NaN or None for a
failure. A run that stopped before the budget keeps its last best.
"""

import json
import math
import zlib

import numpy as np


class Space:
    """The recorded objectives of one brute-forced file: `times` holds every configuration's
    objective in ms, NaN for a failed one."""

    def __init__(self, times, cutoff=0.95, start_cutoff=0.01, resolution=1000):
        t = np.asarray(times, dtype=float)
        self.n = len(t)
        self.asc = np.sort(t[~np.isnan(t)])
        self.n_failed = self.n - len(self.asc)
        self.opt = float(self.asc[0])
        v = len(self.asc)
        self.median = float(self.asc[v // 2] if v % 2 else 0.5 * (self.asc[v // 2 - 1] + self.asc[v // 2]))
        self.fevals = self._fevals(cutoff)
        self.start_fevals = self._fevals(start_cutoff)
        points = max(2, resolution)
        x = self.start_fevals + (self.fevals - self.start_fevals) * np.arange(points) / (points - 1)
        draws = np.maximum(1, np.rint(x)).astype(np.int64)
        fr = np.array([self.random_expected(int(m)) for m in draws])
        keep = ~np.isnan(fr) & ~(np.abs(fr - self.opt) < 1e-12 * self.opt)
        self.draws, self.fr = draws[keep], fr[keep]
        self.no_result = min(self.n - 1, int(np.rint((self.n + 1) / 2.0)))

    def _fevals(self, p):
        target = self.opt + (self.median - self.opt) * (1.0 - p)
        v = len(self.asc)
        i = v - int(np.searchsorted(self.asc, target, side="right"))
        return int(math.ceil(i / (v + 1 - i)))

    def random_expected(self, draws):
        index = min(int(np.rint(draws * (self.n + 1) / (draws + 1.0))), self.n - 1)
        if index < self.n_failed:
            return math.nan
        return float(self.asc[len(self.asc) - 1 - (index - self.n_failed)])

    def positions(self, runs):
        """Runs x grid points: the position (failed first, then worst to best) of each run's best
        after the evaluations of each point of the grid."""
        out = np.empty((len(runs), len(self.draws)))
        for r, run in enumerate(runs):
            t = np.array([math.inf if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in run],
                         dtype=float)
            if len(t) == 0:
                out[r] = self.no_result
                continue
            best = np.minimum.accumulate(t)
            b = best[np.minimum(self.draws, len(t)) - 1]
            better = np.searchsorted(self.asc, b, side="left")
            pos = self.n_failed + (len(self.asc) - 1 - better).astype(float)
            out[r] = np.where(np.isinf(b), self.no_result, pos)
        return out

    def score_of_mean_positions(self, mean_pos):
        """Score of mean positions (one row per sample, one column per grid point)."""
        pos = np.clip(np.rint(mean_pos), self.n_failed, self.n - 1).astype(np.int64)
        fs = self.asc[len(self.asc) - 1 - (pos - self.n_failed)]
        return ((fs - self.fr) / (self.opt - self.fr)).mean(axis=-1)


def bootstrap_weights(runs, resamples, seed):
    """resamples x runs: how often each run is drawn in each resample, divided by runs."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, runs, size=(resamples, runs))
    w = np.zeros((resamples, runs))
    np.add.at(w, (np.repeat(np.arange(resamples), runs), idx.ravel()), 1.0)
    return w / runs


class Scored:
    """The score of one set of runs on one space, with `samples`, the scores of bootstrap
    resamples of the runs (for confidence intervals of scores and of their differences)."""

    def __init__(self, space, runs, resamples=2000, seed=0):
        p = space.positions(runs)
        self.score = float(space.score_of_mean_positions(p.mean(axis=0)))
        self.samples = space.score_of_mean_positions(bootstrap_weights(len(runs), resamples, seed) @ p)

    def interval(self, level=0.95):
        return interval(self.samples, level)


def interval(samples, level=0.95):
    """Percentile interval of bootstrap samples."""
    lo, hi = np.percentile(samples, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


def mean_sd(xs):
    """Mean and sample standard deviation (n - 1) of a list of at least two numbers."""
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def space_of_cache(doc):
    """A Space from a Kernel Tuner cache document (failures: strings or times >= 1e20) or a T4
    results document (failures: an invalidity other than "correct")."""
    times = []
    if "results" in doc and "cache" not in doc:
        for r in doc["results"]:
            t = next((m.get("value") for m in r.get("measurements", []) if m.get("name") == "time"), None)
            ok = r.get("invalidity", "correct") == "correct" and isinstance(t, (int, float))
            times.append(t if ok else math.nan)
        return Space(times)
    for v in doc["cache"].values():
        t = v.get("time")
        times.append(t if isinstance(t, (int, float)) and not isinstance(t, bool) and t < 1e20 else math.nan)
    return Space(times)


def space_of_file(path):
    """A Space from a Kernel Tuner cache file, plain or gzip-compressed JSON (told apart by the
    gzip magic bytes, as tunekit does, not by the name)."""
    with open(path, "rb") as f:
        data = f.read()
    text = b""
    while data[:2] == b"\x1f\x8b":  # each gzip member; bytes after the last are ignored
        member = zlib.decompressobj(wbits=31)
        text += member.decompress(data)
        data = member.unused_data
    return space_of_cache(json.loads(text or data))
