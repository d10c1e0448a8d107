#!/usr/bin/env python3
"""Two settings of tunekit's `auto` on the same runs: fraction of optimum per budget (mean, and the
paired difference of the runs of the same seed, with standard errors), the methodology score with
the budget in evaluations (95% bootstrap intervals; the difference's interval resamples the
seeds, so both settings' runs of a seed stay together) and the runs that stalled: below the optimum at
the last budget without any improvement since the budget before it.

Usage (see docs/search.md, "Held-out evaluation"):
    python3 scripts/compare_auto_settings.py --tunekit build/tools/cli/tunekit --runs 100 --seed 0 \\
        --before '{"stall": 0}' --after '{}' FILE ...
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import methodology  # noqa: E402
import tunekit_run  # noqa: E402

PROG = "compare_auto_settings"


def mean_se(xs):
    m, sd = methodology.mean_sd(xs)
    return m, sd / math.sqrt(len(xs))


class HelpFormat(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    pass


def fail(message):
    tunekit_run.fail(PROG, message)


def parse_budgets(text):
    """--budgets as increasing positive integers (strings, as tunekit's JSON keys them)."""
    try:
        budgets = [int(b) for b in text.split(",")]
    except ValueError:
        fail(f"--budgets '{text}': not a comma list of integers")
    if min(budgets) < 1 or any(x >= y for x, y in zip(budgets, budgets[1:])):
        fail(f"--budgets '{text}': need increasing evaluations >= 1, each once")
    return [str(b) for b in budgets]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormat)
    ap.add_argument("data", nargs="+")
    ap.add_argument("--tunekit", required=True, help="the tunekit CLI (build/tools/cli/tunekit)")
    ap.add_argument("--before", required=True, help="settings of auto (JSON)")
    ap.add_argument("--after", required=True, help="settings of auto (JSON)")
    ap.add_argument("--budgets", default="50,100,200", help="evaluations, a comma list")
    ap.add_argument("--runs", type=int, default=100, help="runs per setting and file")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first run")
    ap.add_argument("--threads", type=int, default=1, help="tunekit simulate --threads")
    args = ap.parse_args()
    if args.runs < 2 or args.seed < 0 or args.threads < 1:
        fail("need --runs >= 2 (for standard errors), --seed >= 0 and --threads >= 1")
    budgets = parse_budgets(args.budgets)
    tunekit_run.check_data_files(PROG, args.tunekit, args.data)
    for name in ("before", "after"):
        tunekit_run.check_settings(PROG, args.tunekit, args.data[0], getattr(args, name), f"--{name}")
    print(f"auto `{args.before}` (before) against `{args.after}` (after), {args.runs} runs, seeds "
          f"{args.seed}-{args.seed + args.runs - 1}; mean +- standard error, the difference paired by seed\n")
    print("| file | " + " | ".join(f"FoO@{b} before / after / difference" for b in budgets) +
          " | score before [95% CI] | score after [95% CI] | score difference [95% CI]"
          " | stalled runs before / after |\n|---|" + "---|" * (len(budgets) + 4))
    for path in args.data:
        rows = {}
        for name, settings in (("before", args.before), ("after", args.after)):
            cmd = [args.tunekit, "simulate", "--data", path, "--strategy", "auto", "--settings", settings,
                   "--budget", ",".join(budgets), "--runs", str(args.runs), "--seed", str(args.seed), "--threads",
                   str(args.threads), "--score-budget", "evaluations", "--format", "json", "--traces"]
            rows[name] = tunekit_run.json_of(PROG, cmd, f"--{name} on {path}")[0]["strategies"][0]
        space = methodology.space_of_file(path)
        cells = []
        for b in budgets:
            x, y = rows["before"]["fraction_of_optimum_per_run"][b], rows["after"]["fraction_of_optimum_per_run"][b]
            (mx, sx), (my, sy), (md, sd) = mean_se(x), mean_se(y), mean_se([q - p for p, q in zip(x, y)])
            cells.append(f"{mx:.5f} +- {sx:.5f} / {my:.5f} +- {sy:.5f} / {md:+.5f} +- {sd:.5f}")
        scored = {}
        for name in ("before", "after"):
            traces = [[math.nan if v is None else v for v in t] for t in rows[name]["objective_ms_per_run"]]
            sc = scored[name] = methodology.Scored(space, traces)
            lo, hi = sc.interval()
            cells.append(f"{sc.score:.3f} [{lo:.3f}, {hi:.3f}]")
        # The same bootstrap weights resample both (same seed, same number of runs): paired.
        lo, hi = methodology.interval(scored["after"].samples - scored["before"].samples)
        cells.append(f"{scored['after'].score - scored['before'].score:+.3f} [{lo:+.3f}, {hi:+.3f}]")
        def stalled(row):
            a, b = row["fraction_of_optimum_per_run"][budgets[-2]], row["fraction_of_optimum_per_run"][budgets[-1]]
            return sum(1 for p, q in zip(a, b) if q == p and q < 1.0)
        cells.append(f"{stalled(rows['before'])} / {stalled(rows['after'])}" if len(budgets) > 1 else "-")
        print(f"| {os.path.basename(path)} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
