#!/usr/bin/env python3
"""Leave-one-space-out (LOSO) choice of the settings of tunekit's default strategy `auto`.

Every candidate setting is replayed on every file (`tunekit simulate --strategy auto --settings ...
--score-budget evaluations`, the same runs for every candidate) and scored by the methodology of
Willemsen et al. with the budget in evaluations. For each file that may be held out, the setting
chosen is the one with the best mean score over the *other* files (the training files); its score
on the held-out file, on seeds the choice did not use, is the held-out figure. The setting shipped
is the one with the best mean over all files.

Usage (see docs/search.md, "Held-out evaluation"):
    python3 scripts/auto_loso.py --tunekit build/tools/cli/tunekit --runs 40 --seed 10000 \\
        --candidates '{"stall": 0}' '{"stall": 25}' ... --hold-out FILE ... --train-only FILE ... \\
        [--cache loso.json] [--heldout-runs 100 --heldout-seed 0]

--cache keeps every (candidate, file) result, so a rerun replays only what is missing.
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import methodology  # noqa: E402


def replay(binary, path, settings, runs, seed, threads, traces):
    """One `tunekit simulate` of auto: {"score": ..., "foo": {budget: mean}} and, with `traces`,
    "traces": the objective of every evaluation of every run."""
    cmd = [binary, "simulate", "--data", path, "--strategy", "auto", "--settings", settings,
           "--budget", "50,100,200", "--runs", str(runs), "--seed", str(seed), "--threads", str(threads),
           "--score-budget", "evaluations", "--format", "json", "--traces"]
    row = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)[0]["strategies"][0]
    out = {"score": row["score"], "foo": row["fraction_of_optimum"]}
    if traces:
        out["traces"] = row["objective_ms_per_run"]
    return out


def main():
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
    args = ap.parse_args()

    cache = {}
    if args.cache and os.path.exists(args.cache):
        with open(args.cache) as f:
            cache = json.load(f)

    def result(path, settings, runs, seed, traces=False):
        key = f"{os.path.basename(path)}|{json.dumps(json.loads(settings), sort_keys=True)}|{runs}|{seed}"
        if key not in cache or (traces and "traces" not in cache[key]):
            r = replay(args.tunekit, path, settings, runs, seed, args.threads, traces)
            print(f"  {os.path.basename(path)} {settings}: score {r['score']:.3f}", file=sys.stderr, flush=True)
            cache[key] = r
            if args.cache:
                with open(args.cache + ".tmp", "w") as f:
                    json.dump(cache, f)
                os.replace(args.cache + ".tmp", args.cache)
        return cache[key]

    files = args.hold_out + args.train_only
    names = [os.path.basename(p).replace(".json.gz", "").replace(".json", "") for p in files]
    score = {(c, p): result(p, c, args.runs, args.seed)["score"] for c in args.candidates for p in files}

    print(f"Methodology score (budget in evaluations) of each candidate, {args.runs} runs per file, "
          f"seeds {args.seed}-{args.seed + args.runs - 1}:\n")
    print("| settings | " + " | ".join(names) + " | mean |\n|---|" + "---|" * (len(files) + 1))
    for c in args.candidates:
        vals = [score[(c, p)] for p in files]
        print(f"| `{c}` | " + " | ".join(f"{v:.3f}" for v in vals) + f" | {sum(vals) / len(vals):.3f} |")

    def chosen(training):
        return max(args.candidates, key=lambda c: sum(score[(c, p)] for p in training) / len(training))

    print("\n| held-out file | setting chosen on the other files | its training mean | held-out score "
          f"({args.runs} runs of the choice) |\n|---|---|---|---|")
    picks = {}
    for h in args.hold_out:
        training = [p for p in files if p != h]
        c = chosen(training)
        picks[h] = c
        mean = sum(score[(c, p)] for p in training) / len(training)
        print(f"| {os.path.basename(h)} | `{c}` | {mean:.3f} | {score[(c, h)]:.3f} |")
    if args.picks_out:
        with open(args.picks_out, "w") as f:
            json.dump({os.path.basename(h): c for h, c in picks.items()}, f, indent=1)
    shipped = chosen(files)
    print(f"\nchosen on all files (shipped): `{shipped}`\n")

    if args.heldout_runs > 0:
        last = args.heldout_seed + args.heldout_runs - 1
        print(f"Held-out runs: the setting chosen without each file, {args.heldout_runs} runs on it, seeds "
              f"{args.heldout_seed}-{last} (score with its 95% bootstrap interval):\n")
        print("| held-out file | setting | score [95% CI] | FoO@50 | FoO@100 | FoO@200 |\n|---|---|---|---|---|---|")
        for h in args.hold_out:
            r = result(h, picks[h], args.heldout_runs, args.heldout_seed, traces=True)
            sp = methodology.space_of_file(h)
            sc = methodology.Scored(sp, [[float("nan") if v is None else v for v in t] for t in r["traces"]])
            lo, hi = sc.interval()
            print(f"| {os.path.basename(h)} | `{picks[h]}` | {sc.score:.3f} [{lo:.3f}, {hi:.3f}] | " +
                  " | ".join(f"{r['foo'][b]:.3f}" for b in ("50", "100", "200")) + " |")


if __name__ == "__main__":
    main()
