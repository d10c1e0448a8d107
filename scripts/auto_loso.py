#!/usr/bin/env python3
"""Leave-one-space-out (LOSO) choice of the settings of tunekit's default strategy `auto`.

Every candidate setting is replayed on every file (`tunekit simulate --strategy auto --settings ...
--score-budget evaluations`, the same runs for every candidate) and scored by the methodology of
Willemsen et al. with the budget in evaluations. For each file that may be held out, the setting
chosen is the one with the best mean score over the *other* files (the training files); its score
on the held-out file is the held-out figure (on the runs of the choice's seeds; --heldout-runs adds
runs of it on other seeds). The setting shipped is the one with the best mean over all files.

Usage (see docs/search.md, "Held-out evaluation"):
    python3 scripts/auto_loso.py --tunekit build/tools/cli/tunekit --runs 40 --seed 10000 \\
        --candidates '{"stall": 0}' '{"stall": 25}' ... --hold-out FILE ... --train-only FILE ... \\
        [--no-regression FILE ... [--baseline '{"stall": 0}']] [--cache loso.json] \\
        [--heldout-runs 100 --heldout-seed 0]

With --no-regression, only candidates that do not fall behind the baseline on those files (paired
runs, by more than one standard error of a --table-runs mean) are eligible for any choice.
--cache keeps every (candidate, file) result, so a rerun replays only what is missing.
"""

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import methodology  # noqa: E402
import tunekit_run  # noqa: E402

PROG = "auto_loso"


def simulate(binary, path, settings, runs, seed, threads, *options):
    """The JSON row of one `tunekit simulate` of auto at budgets 50, 100 and 200 evaluations."""
    cmd = [binary, "simulate", "--data", path, "--strategy", "auto", "--settings", settings,
           "--budget", "50,100,200", "--runs", str(runs), "--seed", str(seed), "--threads", str(threads),
           "--format", "json", *options]
    return tunekit_run.json_of(PROG, cmd, path)[0]["strategies"][0]


def replay(binary, path, settings, runs, seed, threads, traces):
    """One `tunekit simulate` of auto: {"score": ..., "foo": {budget: mean}} and, with `traces`,
    "traces": the objective of every evaluation of every run."""
    row = simulate(binary, path, settings, runs, seed, threads, "--score-budget", "evaluations", "--traces")
    out = {"score": row["score"], "foo": row["fraction_of_optimum"]}
    if traces:
        out["traces"] = row["objective_ms_per_run"]
    return out


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tunekit", required=True)
    ap.add_argument("--candidates", nargs="+", required=True, help="settings of auto, one JSON object each")
    ap.add_argument("--hold-out", nargs="+", required=True, help="files that are held out in turn")
    ap.add_argument("--train-only", nargs="*", default=[], help="files that are always in the training set")
    ap.add_argument("--runs", type=int, default=40, help="runs per candidate and file for the choice")
    ap.add_argument("--seed", type=int, default=10000, help="first seed of the runs of the choice")
    ap.add_argument("--heldout-runs", type=int, default=0, help="runs of the chosen setting on its held-out file")
    ap.add_argument("--heldout-seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache", help="JSON file keeping every result")
    ap.add_argument("--picks-out", help="write {held-out file name: setting chosen without it} to this JSON file "
                                        "(kernel_tuner_compare.py --tunekit-settings-per-file reads it)")
    ap.add_argument("--no-regression", nargs="*", default=[],
                    help="files on which a candidate may not fall behind --baseline by more than one standard "
                         "error of a --table-runs mean, at any budget; the others are not eligible")
    ap.add_argument("--baseline", default='{"stall": 0}', help="settings of auto the check compares with")
    ap.add_argument("--regression-runs", type=int, default=1000, help="paired runs of the check")
    ap.add_argument("--regression-seed", type=int, default=1000, help="first seed of the check's runs")
    ap.add_argument("--table-runs", type=int, default=200, help="runs behind the figures the check protects")
    args = ap.parse_args()
    for option, text in [("--candidates", c) for c in args.candidates] + [("--baseline", args.baseline)]:
        try:
            if not isinstance(json.loads(text), dict):
                raise ValueError("not an object")
        except ValueError as e:
            tunekit_run.fail(PROG, f"{option}: '{text}' is not a JSON object of settings ({e})")
    if min(args.runs, args.regression_runs, args.table_runs) < 2 or args.heldout_runs == 1:
        tunekit_run.fail(PROG, "need --runs, --regression-runs and --table-runs >= 2 and --heldout-runs 0 or >= 2")
    if min(args.seed, args.regression_seed, args.heldout_seed) < 0 or args.threads < 1:
        tunekit_run.fail(PROG, "need seeds >= 0 and --threads >= 1")
    if len(set(args.hold_out + args.train_only)) < 2:
        tunekit_run.fail(PROG, "need at least two files (--hold-out and --train-only): one to hold out, one to train on")
    for option, path in (("--cache", args.cache), ("--picks-out", args.picks_out)):
        if path and (os.path.isdir(path) or not os.path.isdir(os.path.dirname(os.path.abspath(path)))):
            tunekit_run.fail(PROG, f"{option} '{path}': not a file in an existing folder")
    check_inputs(args)
    return args


def check_inputs(args):
    """Every file and setting is accepted by tunekit before the first measured run."""
    files = list(dict.fromkeys(args.hold_out + args.train_only + args.no_regression))
    tunekit_run.check_data_files(PROG, args.tunekit, files)
    for c in args.candidates:
        tunekit_run.check_settings(PROG, args.tunekit, files[0], c, "--candidates")
    if args.no_regression:
        tunekit_run.check_settings(PROG, args.tunekit, files[0], args.baseline, "--baseline")


class Results:
    """Every (file, settings, runs, seed) replay, kept in the --cache file when one is given."""

    def __init__(self, args):
        self.args = args
        self.cache = {}
        if args.cache and os.path.exists(args.cache):
            try:
                with open(args.cache) as f:
                    self.cache = json.load(f)
            except (OSError, ValueError) as e:
                tunekit_run.fail(PROG, f"--cache '{args.cache}': not readable JSON ({e})")
            if not isinstance(self.cache, dict) or not all(isinstance(v, dict) for v in self.cache.values()):
                tunekit_run.fail(PROG, f"--cache '{args.cache}': not a cache of auto_loso.py (a JSON object of results)")

    @staticmethod
    def key(path, settings, runs, seed):
        return f"{os.path.basename(path)}|{json.dumps(json.loads(settings), sort_keys=True)}|{runs}|{seed}"

    def get(self, path, settings, runs, seed, traces=False):
        key = self.key(path, settings, runs, seed)
        if key not in self.cache or (traces and "traces" not in self.cache[key]):
            r = replay(self.args.tunekit, path, settings, runs, seed, self.args.threads, traces)
            print(f"  {os.path.basename(path)} {settings}: score {r['score']:.3f}", file=sys.stderr, flush=True)
            self.cache[key] = r
            self.save()
        return self.cache[key]

    def per_run(self, path, settings, runs, seed):
        """{budget: fraction of optimum of every run} (no score, no traces)."""
        key = self.key(path, settings, runs, seed) + "|per_run"
        if key not in self.cache:
            row = simulate(self.args.tunekit, path, settings, runs, seed, self.args.threads, "--no-score")
            self.cache[key] = row["fraction_of_optimum_per_run"]
            print(f"  {os.path.basename(path)} {settings}: {runs} paired runs", file=sys.stderr, flush=True)
            self.save()
        return self.cache[key]

    def save(self):
        if self.args.cache:
            with open(self.args.cache + ".tmp", "w") as f:
                json.dump(self.cache, f)
            os.replace(self.args.cache + ".tmp", self.args.cache)


def regression_check(args, results):
    """The candidates eligible for the choice: on every --no-regression file and budget, the mean
    paired difference to --baseline is at least minus one standard error of a --table-runs mean
    (the baseline's per-run standard deviation over sqrt(table runs)). Prints the differences in
    those standard errors."""
    if not args.no_regression:
        return list(args.candidates)
    print(f"Regression check: mean paired difference to `{args.baseline}` over {args.regression_runs} runs "
          f"(seeds {args.regression_seed}-{args.regression_seed + args.regression_runs - 1}), in standard errors "
          f"of a {args.table_runs}-run mean, fraction of optimum at 50 / 100 / 200 evaluations:\n")
    names = [os.path.basename(p) for p in args.no_regression]
    print("| settings | " + " | ".join(names) + " | eligible |\n|---|" + "---|" * (len(names) + 1))
    eligible = []
    for c in args.candidates:
        cells, ok = [], True
        for p in args.no_regression:
            base = results.per_run(p, args.baseline, args.regression_runs, args.regression_seed)
            cand = results.per_run(p, c, args.regression_runs, args.regression_seed)
            ratios = []
            for b in ("50", "100", "200"):
                se = methodology.mean_sd(base[b])[1] / math.sqrt(args.table_runs)
                diff = methodology.mean_sd([y - x for x, y in zip(base[b], cand[b])])[0]
                ratios.append(diff / se if se > 0 else (0.0 if diff >= 0 else -math.inf))
            ok = ok and min(ratios) >= -1.0
            cells.append(" / ".join(f"{r:+.2f}" for r in ratios))
        print(f"| `{c}` | " + " | ".join(cells) + f" | {'yes' if ok else 'no'} |")
        if ok:
            eligible.append(c)
    print()
    if not eligible:
        tunekit_run.fail(PROG, "no candidate passes the regression check")
    return eligible


def score_table(args, files, score):
    names = [os.path.basename(p).replace(".json.gz", "").replace(".json", "") for p in files]
    print(f"Methodology score (budget in evaluations) of each candidate, {args.runs} runs per file, "
          f"seeds {args.seed}-{args.seed + args.runs - 1}:\n")
    print("| settings | " + " | ".join(names) + " | mean |\n|---|" + "---|" * (len(files) + 1))
    for c in args.candidates:
        vals = [score[(c, p)] for p in files]
        print(f"| `{c}` | " + " | ".join(f"{v:.3f}" for v in vals) + f" | {sum(vals) / len(vals):.3f} |")


def heldout_runs(args, results, picks):
    last = args.heldout_seed + args.heldout_runs - 1
    print(f"Held-out runs: the setting chosen without each file, {args.heldout_runs} runs on it, seeds "
          f"{args.heldout_seed}-{last} (score with its 95% bootstrap interval):\n")
    print("| held-out file | setting | score [95% CI] | FoO@50 | FoO@100 | FoO@200 |\n|---|---|---|---|---|---|")
    for h in args.hold_out:
        r = results.get(h, picks[h], args.heldout_runs, args.heldout_seed, traces=True)
        sp = methodology.space_of_file(h)
        sc = methodology.Scored(sp, [[float("nan") if v is None else v for v in t] for t in r["traces"]])
        lo, hi = sc.interval()
        print(f"| {os.path.basename(h)} | `{picks[h]}` | {sc.score:.3f} [{lo:.3f}, {hi:.3f}] | " +
              " | ".join(f"{r['foo'][b]:.3f}" for b in ("50", "100", "200")) + " |")


def main():
    args = parse_args()
    results = Results(args)
    files = args.hold_out + args.train_only
    score = {(c, p): results.get(p, c, args.runs, args.seed)["score"] for c in args.candidates for p in files}
    score_table(args, files, score)
    print()
    eligible = regression_check(args, results)

    def chosen(training):
        return max(eligible, key=lambda c: sum(score[(c, p)] for p in training) / len(training))

    print(f"| held-out file | setting chosen on the other files | its training mean | held-out score "
          f"({args.runs} runs of the choice) |\n|---|---|---|---|")
    picks = {}
    for h in args.hold_out:
        training = [p for p in files if p != h]
        c = picks[h] = chosen(training)
        mean = sum(score[(c, p)] for p in training) / len(training)
        print(f"| {os.path.basename(h)} | `{c}` | {mean:.3f} | {score[(c, h)]:.3f} |")
    if args.picks_out:
        with open(args.picks_out, "w") as f:
            json.dump({os.path.basename(h): c for h, c in picks.items()}, f, indent=1)
    print(f"\nchosen on all files (shipped): `{chosen(files)}`\n")
    if args.heldout_runs > 0:
        heldout_runs(args, results, picks)


if __name__ == "__main__":
    main()
