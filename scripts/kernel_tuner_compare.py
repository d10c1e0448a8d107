#!/usr/bin/env python3
"""Side-by-side replay of Kernel Tuner's strategies and tunekit's on brute-forced tuning data.

Both tools replay the same files (Kernel Tuner in simulation mode via tune_cache, tunekit through
`tunekit simulate`) with the same number of runs and evaluation budgets, and the script prints one
table per file: the mean fraction of optimum (t_opt / t_best after N unique evaluations) of every
strategy of both tools, plus the mean wall time of one replayed run.

Usage (see docs/search.md):
    python3 -m venv build-search/kt-venv
    build-search/kt-venv/bin/pip install -r scripts/kernel_tuner_compare.requirements.txt
    build-search/kt-venv/bin/python scripts/kernel_tuner_compare.py \
        --tunekit build-search/tools/cli/tunekit --runs 50 --budgets 50,100,200 \
        ../shared/data/tuning-caches/*.json.gz

Evaluations count unique configurations: a configuration Kernel Tuner evaluates again is served
from its cache and does not count (Kernel Tuner's max_fevals counts the same way). Run r seeds
Python's and NumPy's generators with r; tunekit's run r uses seed r.

With --confirm-runs N, tunekit's auto and the Kernel Tuner strategy that was best at each budget
are replayed again on N fresh seeds (--confirm-seed onwards, the same for both tools): the best
of many strategies on few runs is biased upwards, and the fresh runs report each mean with its
standard error and the difference of the two tools with its standard error.

With --score, every strategy of both tools is also scored by the methodology of Willemsen et al.
(FGCS 2024) with the budget counted in unique evaluations (scripts/methodology.py: the same
definitions as `tunekit simulate --score-budget evaluations`), with 95% bootstrap intervals over
the runs; every run then lasts the methodology budget of its file. After the last file the script
prints the scores aggregated over the files (their mean), the best Kernel Tuner strategy of each
file (chosen after the fact) and tunekit's auto minus it, per file and aggregated, with intervals.
--kt-cache DIR keeps every Kernel Tuner run (one small JSON file per file, strategy, seed and
evaluation budget) so that no run is replayed twice.
"""

import argparse
import gzip
import json
import math
import multiprocessing as mp
import os
import random
import subprocess
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import methodology  # noqa: E402

# Single-objective strategies of Kernel Tuner 1.5 that need no optional package.
DEFAULT_KT_STRATEGIES = [
    "random_sample", "genetic_algorithm", "simulated_annealing", "greedy_ils", "greedy_mls",
    "ordered_greedy_mls", "mls", "dual_annealing", "basinhopping", "diff_evo", "pso",
    "firefly_algorithm", "minimize", "bayes_opt", "hybrid_vndx", "adaptive_tabu_greywolf",
]


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def to_kernel_tuner_cache(doc):
    """Kernel Tuner cache dict of a file in either format (T4 files are converted)."""
    if "cache" in doc and "tune_params" in doc:
        return doc
    results = doc["results"]
    names = list(results[0]["configuration"].keys())
    values = {n: [] for n in names}
    for r in results:
        for n in names:
            v = r["configuration"][n]
            if v not in values[n]:
                values[n].append(v)
    for n in names:
        if all(isinstance(v, (int, float)) for v in values[n]):
            values[n].sort()
    cache = {}
    for r in results:
        cfg = r["configuration"]
        times = r.get("times", {})
        value = None
        for m in r.get("measurements", []):
            if m.get("name") == "time":
                value = m.get("value")
        if r.get("invalidity", "correct") != "correct" or not isinstance(value, (int, float)):
            value = {"compile": "CompilationFailedConfig"}.get(r.get("invalidity"), "RuntimeFailedConfig")
        entry = dict(cfg)
        entry.update({
            "time": value,
            "compile_time": times.get("compilation", 0),
            "verification_time": times.get("validation", 0),
            "benchmark_time": sum(times.get("runtimes", []) or [0]),
            "framework_time": times.get("framework", 0),
            "strategy_time": times.get("search_algorithm", 0),
        })
        cache[",".join(str(cfg[n]) for n in names)] = entry
    return {"device_name": "", "kernel_name": "t4", "problem_size": [1], "tune_params_keys": names,
            "tune_params": values, "objective": "time", "cache": cache}


def optimum(cache):
    return min(v["time"] for v in cache["cache"].values() if isinstance(v["time"], (int, float)) and v["time"] < 1e20)


def share_cache_reads():
    """Pool initializer for the quality runs: Kernel Tuner's read_cache keeps what it read, so a
    worker parses each cache file once instead of twice per run (its simulation runner copies
    every entry it returns, so sharing the parsed file changes no result; the timing runs do not
    use this)."""
    from kernel_tuner import interface, util
    read = util.read_cache
    memo = {}

    def read_cache(path, open_cache=True):
        if (path, open_cache) not in memo:
            memo[(path, open_cache)] = read(path, open_cache=open_cache)
        return memo[(path, open_cache)]
    util.read_cache = read_cache
    interface.util.read_cache = read_cache


def kt_run(args):
    """One Kernel Tuner replay: returns (objective of each unique evaluation in order, wall s)."""
    cache_path, strategy, seed, max_fevals, keys = args
    warnings.filterwarnings("ignore")
    import numpy as np
    from kernel_tuner import tune_cache
    random.seed(seed)
    np.random.seed(seed)
    start = time.perf_counter()
    try:
        results, _ = tune_cache(cache_path, strategy=strategy, strategy_options={"max_fevals": max_fevals},
                                verbose=False, quiet=True)
    except Exception as e:  # a strategy failing is reported, not fatal
        return None, time.perf_counter() - start, f"{type(e).__name__}: {e}"
    wall = time.perf_counter() - start
    seen, trace = set(), []
    for r in results:
        key = tuple(r[k] for k in keys)
        if key in seen:
            continue
        seen.add(key)
        t = r.get("time")
        trace.append(t if isinstance(t, (int, float)) and t < 1e20 and "__error__" not in r else math.nan)
    return trace, wall, None


def kt_cached_run(args):
    """kt_run through the run store of --kt-cache (None: no store)."""
    store, run_args = args
    if store:
        _, strategy, seed, max_fevals, _ = run_args
        path = os.path.join(store, strategy, f"seed{seed}_fevals{max_fevals}.json")
        if os.path.exists(path):
            with open(path) as f:
                d = json.load(f)
            return [math.nan if v is None else v for v in d["trace"]], d["wall_s"], None
    trace, wall, err = kt_run(run_args)
    if store and trace is not None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "w") as f:
            json.dump({"trace": [None if math.isnan(v) else v for v in trace], "wall_s": wall}, f)
        os.replace(path + ".tmp", path)
    return trace, wall, err


def kt_runs(plain, data_path, strategy, seeds, max_fevals, keys, jobs, cache_dir, stored_only=False):
    """Kernel Tuner runs of one strategy on the given seeds, from the run store when it has them
    (with `stored_only`, only the seeds the store has)."""
    store = os.path.join(cache_dir, os.path.basename(data_path)) if cache_dir else None
    if store and stored_only:
        seeds = [seed for seed in seeds
                 if os.path.exists(os.path.join(store, strategy, f"seed{seed}_fevals{max_fevals}.json"))]
    todo = [(store, (plain, strategy, seed, max_fevals, keys)) for seed in seeds]
    with mp.Pool(jobs, initializer=share_cache_reads) as pool:
        return pool.map(kt_cached_run, todo, chunksize=1)


def per_run_fractions(traces, opt, n):
    """Fraction of optimum of each run after its first n unique evaluations (0 without a success)."""
    out = []
    for trace in traces:
        vals = [t for t in trace[:n] if not math.isnan(t)]
        out.append(opt / min(vals) if vals else 0.0)
    return out


def fraction_of_optimum(traces, opt, n):
    return sum(per_run_fractions(traces, opt, n)) / len(traces)


def simulate_row(binary, path, strategy, budgets, runs, seed, threads, score=False, settings=None):
    """The strategy row of one `tunekit simulate --format json` report: without `score`, with
    --no-score; with it, scored with the budget in evaluations and every run's trace."""
    cmd = [binary, "simulate", "--data", path, "--strategy", strategy, "--budget", ",".join(map(str, budgets)),
           "--runs", str(runs), "--seed", str(seed), "--format", "json", "--threads", str(threads)]
    cmd += ["--score-budget", "evaluations", "--traces"] if score else ["--no-score"]
    if settings:
        cmd += ["--settings", settings]
    report = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return report[0]["strategies"][0]


def tunekit_results(binary, path, strategies, budgets, runs, threads, score=False, settings=None):
    out = {}
    for s in strategies:
        row = simulate_row(binary, path, s, budgets, runs, 0, threads, score, settings if s == "auto" else None)
        out[s] = {"foo": by_budget(row["fraction_of_optimum"]),
                  "foo_per_run": by_budget(row["fraction_of_optimum_per_run"])}
        if score:
            out[s]["traces"] = [[math.nan if v is None else v for v in t] for t in row["objective_ms_per_run"]]
            out[s]["score_cpp"] = row["score"]
        # Wall time of one complete replay, as Kernel Tuner's is measured: one process, one run,
        # including loading the data.
        walls = []
        for seed in range(3):
            start = time.perf_counter()
            subprocess.run([binary, "simulate", "--data", path, "--strategy", s, "--budget", str(max(budgets)),
                            "--runs", "1", "--seed", str(seed), "--threads", "1", "--no-score", "--format", "json"],
                           check=True, capture_output=True)
            walls.append(time.perf_counter() - start)
        out[s]["wall_s"] = sum(walls) / len(walls)
    return out


def by_budget(d):
    """A {budget: value} dict read from JSON, whose keys are strings, with integer keys."""
    return {int(b): v for b, v in d.items()}


def difference(a, k):
    """'a - k +- se' of two (mean, standard error) pairs of independent samples."""
    (ma, sa), (mk, sk) = a, k
    return f"{ma - mk:+.4f} +- {math.hypot(sa, sk):.4f}"


def mean_and_se(xs):
    """Mean and standard error of the mean (sample standard deviation / sqrt(n))."""
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, 0.0
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return m, math.sqrt(var / len(xs))


def confirm(binary, path, plain, keys, opt, strategies, budgets, runs, first_seed, jobs):
    """Replays tunekit auto and the given Kernel Tuner strategies on fresh seeds first_seed ..
    first_seed + runs - 1 (the same seeds for both tools). Returns {name: {budget: (mean, se)}}."""
    out = {}
    per_run = simulate_row(binary, path, "auto", budgets, runs, first_seed, jobs)["fraction_of_optimum_per_run"]
    out["tunekit auto"] = {b: mean_and_se(per_run[str(b)]) for b in budgets}
    for s in strategies:
        jobs_list = [(plain, s, first_seed + r, max(budgets), keys) for r in range(runs)]
        with mp.Pool(jobs) as pool:
            done = pool.map(kt_run, jobs_list)
        traces = [t for t, _, _ in done if t is not None]
        if len(traces) != runs:
            print(f"  kernel_tuner {s}: {runs - len(traces)} confirmation runs failed", file=sys.stderr)
        if traces:
            out[s] = {b: mean_and_se(per_run_fractions(traces, opt, b)) for b in budgets}
    return out


def read_kt_json(path, runs, budgets):
    """The earlier --json report whose Kernel Tuner rows --kt-json reuses; exits with one line naming
    the file when it cannot be read, is not such a report, or is from other runs or budgets."""
    try:
        with open(path) as f:
            old = json.load(f)
    except OSError as e:
        sys.exit(f"{path}: cannot read ({e.strerror})")
    except json.JSONDecodeError as e:
        sys.exit(f"{path}: not JSON ({e.msg} at line {e.lineno}, column {e.colno})")
    files = old.get("files") if isinstance(old, dict) else None
    if not isinstance(files, list) or not all(
            isinstance(fr, dict) and isinstance(fr.get("data"), str) and isinstance(fr.get("rows"), list) and
            all(isinstance(r, dict) and {"tool", "strategy", "foo", "wall_s"} <= r.keys() for r in fr["rows"])
            for fr in files):
        sys.exit(f"{path}: not a report of this script (need 'files', each with 'data' and 'rows')")
    if old.get("runs") != runs or sorted(old.get("budgets") or []) != sorted(budgets):
        sys.exit(f"{path}: its Kernel Tuner rows are from {old.get('runs')} runs with budgets "
                 f"{old.get('budgets')}, this run asks for {runs} runs with budgets {budgets}")
    return old


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else 0.5 * (xs[len(xs) // 2 - 1] + xs[len(xs) // 2])


def conversion_seconds(path):
    """Wall time Kernel Tuner needs before it can replay a T4 file: reading it and writing its
    cache format (0 for a Kernel Tuner cache file, which tune_cache reads directly)."""
    start = time.perf_counter()
    doc = load_json(path)
    if "cache" in doc and "tune_params" in doc:
        return 0.0
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(to_kernel_tuner_cache(doc), f)
    return time.perf_counter() - start


def timing(binary, path, plain, keys, kt_strategies, budget, repeats, settings=None):
    """Sequential, interleaved wall times of one replayed run from the given file: Kernel Tuner's
    tune_cache call (cache loading included, interpreter start-up and imports excluded; for a T4
    file plus the conversion to its cache format, which it cannot read otherwise) and one whole
    tunekit process (start-up, decompression and data loading included) running `auto` with
    `settings` (JSON text; None: its defaults).
    Returns {name: median seconds}."""
    walls = {s: [] for s in kt_strategies}
    walls["tunekit auto"] = []
    for rep in range(repeats):
        convert = conversion_seconds(path)
        for s in kt_strategies:
            trace, wall, err = kt_run((plain, s, rep, budget, keys))
            if trace is not None:
                walls[s].append(wall + convert)
        extra = ["--settings", settings] if settings else []
        start = time.perf_counter()
        subprocess.run([binary, "simulate", "--data", path, "--strategy", "auto", "--budget", str(budget),
                        "--runs", "1", "--seed", str(rep), "--threads", "1", "--no-score", "--format", "json"]
                       + extra, check=True, capture_output=True)
        walls["tunekit auto"].append(time.perf_counter() - start)
    return {s: median(w) for s, w in walls.items() if w}


def print_aggregate(files):
    """Scores aggregated over the files (their mean, with bootstrap intervals), the best Kernel
    Tuner strategy of each file (chosen after the fact) and tunekit's auto minus it."""
    names = {}
    for fr in files:
        for r in fr["rows"]:
            if "scored" in r:
                names.setdefault((r["tool"], r["strategy"]), []).append(r["scored"])
    print(f"### Methodology score (budget in evaluations) aggregated over {len(files)} files\n")
    print("| tool | strategy | mean score [95% CI] |\n|---|---|---|")
    for (tool, strat), scs in names.items():
        if len(scs) != len(files):
            continue
        m = sum(sc.score for sc in scs) / len(scs)
        lo, hi = methodology.interval(sum(sc.samples for sc in scs) / len(scs))
        print(f"| {tool} | {strat} | {m:.3f} [{lo:.3f}, {hi:.3f}] |")
    print("\n| file | auto [95% CI] | best Kernel Tuner strategy [95% CI] | auto minus it [95% CI] |\n|---|---|---|---|")
    diffs, autos, bests = [], [], []
    for fr in files:
        kt = [r for r in fr["rows"] if r["tool"] == "kernel_tuner" and "scored" in r]
        auto = next((r for r in fr["rows"] if r["tool"] == "tunekit" and r["strategy"] == "auto" and "scored" in r), None)
        if not kt or auto is None:
            continue
        best = max(kt, key=lambda r: r["scored"].score)
        a, b = auto["scored"], best["scored"]
        d = a.samples - b.samples
        diffs.append(d)
        autos.append(a)
        bests.append(b)
        ci = lambda sc: "[{:.3f}, {:.3f}]".format(*sc.interval())
        print(f"| {os.path.basename(fr['data'])} | {a.score:.3f} {ci(a)} | {best['strategy']} {b.score:.3f} {ci(b)} | "
              f"{a.score - b.score:+.3f} [{methodology.interval(d)[0]:+.3f}, {methodology.interval(d)[1]:+.3f}] |")
    if diffs:
        m = sum(a.score - b.score for a, b in zip(autos, bests)) / len(diffs)
        lo, hi = methodology.interval(sum(diffs) / len(diffs))
        ma = sum(a.score for a in autos) / len(autos)
        mb = sum(b.score for b in bests) / len(bests)
        print(f"| mean over the files | {ma:.3f} | {mb:.3f} | {m:+.3f} [{lo:+.3f}, {hi:+.3f}] |\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="+", help="brute-forced files (.json or .json.gz, Kernel Tuner cache or T4)")
    ap.add_argument("--tunekit", required=True, help="path of the tunekit program")
    ap.add_argument("--tunekit-strategies", default="auto,random,ga,sa,xgb")
    ap.add_argument("--kt-strategies", default=",".join(DEFAULT_KT_STRATEGIES))
    ap.add_argument("--budgets", default="50,100,200")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel Kernel Tuner runs")
    ap.add_argument("--json", help="also write all numbers to this file")
    ap.add_argument("--timing-repeats", type=int, default=5,
                    help="sequential timing of one replayed run per strategy (0 = skip)")
    ap.add_argument("--timing-only", action="store_true", help="skip the quality tables, only time one run")
    ap.add_argument("--timing-strategies", help="Kernel Tuner strategies to time (default: all compared)")
    ap.add_argument("--confirm-runs", type=int, default=0,
                    help="after each quality table, replay tunekit auto and Kernel Tuner's best strategy of every "
                         "budget again with this many runs on fresh seeds (0 = skip)")
    ap.add_argument("--confirm-seed", type=int, default=1000, help="first seed of the confirmation runs")
    ap.add_argument("--kt-json", help="reuse the Kernel Tuner rows of an earlier --json report (same runs and "
                                      "budgets) instead of replaying Kernel Tuner again")
    ap.add_argument("--score", action="store_true",
                    help="also score every strategy by the methodology (budget in evaluations, 95%% bootstrap "
                         "intervals), runs lasting the methodology budget; aggregate over the files at the end")
    ap.add_argument("--kt-cache", help="directory keeping every Kernel Tuner run, reused by later runs of the script")
    ap.add_argument("--kt-stored-only", default="",
                    help="Kernel Tuner strategies (comma list) taken only from the runs --kt-cache holds, however "
                         "many of the --runs seeds that is (the table's runs column says how many)")
    ap.add_argument("--tunekit-settings", help="settings (JSON) of tunekit's auto")
    ap.add_argument("--tunekit-settings-per-file",
                    help="JSON file {data file name: settings of auto}, e.g. the setting that scripts/auto_loso.py "
                         "chose without that file (--picks-out); files it does not name use --tunekit-settings")
    ap.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples of the intervals")
    args = ap.parse_args()
    if args.runs < 1 or args.confirm_runs < 0 or args.jobs < 1 or args.timing_repeats < 0:
        ap.error("need --runs >= 1, --confirm-runs >= 0, --jobs >= 1 and --timing-repeats >= 0")

    stored_only = set(x for x in args.kt_stored_only.split(",") if x)
    per_file = {}
    if args.tunekit_settings_per_file:
        with open(args.tunekit_settings_per_file) as f:
            per_file = json.load(f)
    import kernel_tuner
    budgets = [int(b) for b in args.budgets.split(",")]
    old = read_kt_json(args.kt_json, args.runs, budgets) if args.kt_json else None
    kt_strategies = [s for s in args.kt_strategies.split(",") if s]
    tk_strategies = [s for s in args.tunekit_strategies.split(",") if s]
    report = {"kernel_tuner_version": kernel_tuner.__version__, "runs": args.runs, "budgets": budgets, "files": []}
    if args.timing_only:
        print(f"Kernel Tuner {kernel_tuner.__version__}; timing only, {args.timing_repeats} repeats\n")
    else:
        print(f"Kernel Tuner {kernel_tuner.__version__}; {args.runs} runs per strategy; budgets {budgets}\n")
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.data:
            doc = to_kernel_tuner_cache(load_json(path))
            opt = optimum(doc)
            keys = doc["tune_params_keys"]
            plain = os.path.join(tmp, os.path.basename(path).replace(".gz", "").replace(".json", "") + ".json")
            with open(plain, "w") as f:
                json.dump(doc, f)
            rows = []
            settings = per_file.get(os.path.basename(path), args.tunekit_settings)
            if args.timing_only:
                timed = args.timing_strategies.split(",") if args.timing_strategies else kt_strategies
                t = timing(args.tunekit, path, plain, keys, timed, max(budgets), args.timing_repeats, settings)
                print(f"### {os.path.basename(path)}: wall time of one replayed run of {max(budgets)} evaluations, "
                      f"median of {args.timing_repeats}, run one at a time\n")
                print("| tool | strategy | s/run |\n|---|---|---|")
                for name, v in sorted(t.items(), key=lambda kv: kv[1]):
                    tool, _, strat = name.partition(" ") if name.startswith("tunekit") else ("kernel_tuner", "", name)
                    print(f"| {tool} | {strat} | {v:.3f} |")
                print()
                report["files"].append({"data": path, "timing_s": t})
                continue
            earlier = None
            if old is not None:
                earlier = next((fr for fr in old["files"] if os.path.basename(fr["data"]) == os.path.basename(path)), None)
                if earlier is None:
                    sys.exit(f"{args.kt_json}: has no Kernel Tuner rows for {os.path.basename(path)} "
                             "(leave out --kt-json to replay Kernel Tuner on it)")
            if earlier is not None:
                for r in earlier["rows"]:
                    if r["tool"] == "kernel_tuner" and r["strategy"] in kt_strategies:
                        row = {"tool": r["tool"], "strategy": r["strategy"],
                               "foo": by_budget(r["foo"]), "wall_s": r["wall_s"]}
                        if "foo_per_run" in r:
                            row["foo_per_run"] = by_budget(r["foo_per_run"])
                        rows.append(row)
            space = methodology.space_of_cache(doc) if args.score else None
            run_fevals = max(max(budgets), space.fevals) if args.score else max(budgets)
            for s in ([] if earlier is not None else kt_strategies):
                started = time.perf_counter()
                done = kt_runs(plain, path, s, range(args.runs), run_fevals, keys, args.jobs, args.kt_cache,
                               s in stored_only)
                print(f"  {os.path.basename(path)}: kernel_tuner {s}, {len(done)} runs in "
                      f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
                errors = [e for _, _, e in done if e]
                traces = [t for t, _, _ in done if t is not None]
                if errors or not traces:
                    print(f"  kernel_tuner {s}: skipped ({errors[0] if errors else 'no result'})", file=sys.stderr)
                    continue
                walls = [w for _, w, _ in done]
                row = {"tool": "kernel_tuner", "strategy": s, "runs": len(traces),
                       "foo": {b: fraction_of_optimum(traces, opt, b) for b in budgets},
                       "foo_per_run": {b: per_run_fractions(traces, opt, b) for b in budgets},
                       "wall_s": sum(walls) / len(walls)}
                if args.score:
                    row["scored"] = methodology.Scored(space, traces, args.resamples, seed=1)
                rows.append(row)
            if settings:
                print(f"  tunekit auto on {os.path.basename(path)}: settings {settings}", file=sys.stderr)
            tk = tunekit_results(args.tunekit, path, tk_strategies, budgets, args.runs, args.jobs, args.score,
                                 settings)
            for s in tk_strategies:
                row = {"tool": "tunekit", "strategy": s, "runs": args.runs, "foo": tk[s]["foo"], "foo_per_run": tk[s]["foo_per_run"],
                       "wall_s": tk[s]["wall_s"]}
                if args.score:
                    row["scored"] = methodology.Scored(space, tk[s]["traces"], args.resamples, seed=2)
                    # The script's score of tunekit's runs is tunekit's own (the same definitions).
                    if abs(row["scored"].score - tk[s]["score_cpp"]) > 1e-6:
                        print(f"  warning: {s}: score {row['scored'].score:.6f} here, {tk[s]['score_cpp']:.6f} "
                              "from tunekit simulate", file=sys.stderr)
                rows.append(row)
            print(f"### {os.path.basename(path)} (optimum {opt:.4f} ms)\n")
            if args.score:
                print(f"methodology budget: {space.start_fevals}-{space.fevals} evaluations; score with its 95% "
                      f"bootstrap interval ({args.resamples} resamples of the runs)\n")
            if settings:
                print(f"tunekit auto settings: `{settings}`\n")
            score_head = " score [95% CI] | runs |" if args.score else ""
            print("| tool | strategy | " + " | ".join(f"FoO@{b}" for b in budgets) + " |" + score_head + " s/run |")
            print("|---|---|" + "---|" * len(budgets) + ("---|---|" if args.score else "") + "---|")
            for r in rows:
                cell = ""
                if args.score and "scored" not in r:
                    cell = " - | - |"
                elif args.score:
                    lo, hi = r["scored"].interval()
                    cell = f" {r['scored'].score:.3f} [{lo:.3f}, {hi:.3f}] | {r['runs']} |"
                print(f"| {r['tool']} | {r['strategy']} | " + " | ".join(f"{r['foo'][b]:.3f}" for b in budgets) +
                      f" |{cell} {r['wall_s']:.2f} |")
            kt_rows = [r for r in rows if r["tool"] == "kernel_tuner"]
            best = {b: max(kt_rows, key=lambda r: r["foo"][b]) for b in budgets} if kt_rows else {}
            if kt_rows and "auto" in tk:
                verdict = ", ".join(
                    f"@{b}: auto {tk['auto']['foo'][b]:.3f} vs {best[b]['strategy']} {best[b]['foo'][b]:.3f}" for b in budgets)
                fastest_kt = min(r["wall_s"] for r in kt_rows)
                timed_below = "; the timing below is the comparable figure" if args.timing_repeats > 0 else ""
                print(f"\nbest Kernel Tuner strategy per budget: {verdict}; s/run column (runs in parallel, "
                      f"indicative{timed_below}): tunekit auto "
                      f"{tk['auto']['wall_s']:.2f} s, fastest Kernel Tuner strategy {fastest_kt:.2f} s\n")
                if all("foo_per_run" in best[b] for b in budgets):
                    diffs = [f"@{b}: " + difference(mean_and_se(tk["auto"]["foo_per_run"][b]),
                                                    mean_and_se(best[b]["foo_per_run"][b])) for b in budgets]
                    print("auto minus the best Kernel Tuner strategy on these runs (+- one standard error): " +
                          ", ".join(diffs) + "\n")
            file_report = {"data": path, "optimum_ms": opt, "rows": rows, "tunekit_auto_settings": settings}
            if args.score:
                file_report["methodology_fevals"] = [space.start_fevals, space.fevals]
            if args.confirm_runs > 0 and kt_rows:
                # The best of many strategies on the same runs is biased upwards (the largest of several
                # noisy means); fresh seeds measure the chosen strategies without that bias.
                chosen = list(dict.fromkeys(best[b]["strategy"] for b in budgets))
                c = confirm(args.tunekit, path, plain, keys, opt, chosen, budgets, args.confirm_runs,
                            args.confirm_seed, args.jobs)
                file_report["confirmation"] = {"runs": args.confirm_runs, "first_seed": args.confirm_seed,
                                               "foo": {n: {str(b): v for b, v in d.items()} for n, d in c.items()}}
                last = args.confirm_seed + args.confirm_runs - 1
                print(f"Confirmation on fresh seeds {args.confirm_seed}-{last} ({args.confirm_runs} runs each, "
                      "mean +- standard error):\n")
                print("| tool | strategy | " + " | ".join(f"FoO@{b}" for b in budgets) + " |")
                print("|---|---|" + "---|" * len(budgets))
                for name, d in c.items():
                    tool, strat = ("tunekit", "auto") if name == "tunekit auto" else ("kernel_tuner", name)
                    print(f"| {tool} | {strat} | " + " | ".join(f"{d[b][0]:.4f} +- {d[b][1]:.4f}" for b in budgets) + " |")
                verdict = []
                for b in budgets:
                    name = best[b]["strategy"]
                    if name in c:
                        verdict.append(f"@{b}: auto - {name} = " + difference(c["tunekit auto"][b], c[name][b]))
                print("\nDifference on the fresh seeds: " + ", ".join(verdict) + "\n")
            if args.timing_repeats > 0:
                timed = args.timing_strategies.split(",") if args.timing_strategies else [r["strategy"] for r in kt_rows]
                t = timing(args.tunekit, path, plain, keys, timed, max(budgets), args.timing_repeats, settings)
                file_report["timing_s"] = t
                print(f"Wall time of one replayed run of {max(budgets)} evaluations, median of {args.timing_repeats}, "
                      "run one at a time:\n")
                print("| | " + " | ".join(t.keys()) + " |")
                print("|---|" + "---|" * len(t) + "")
                print("| s | " + " | ".join(f"{v:.3f}" for v in t.values()) + " |\n")
            report["files"].append(file_report)
    if args.score and not args.timing_only:
        print_aggregate(report["files"])
    for fr in report["files"]:
        for r in fr.get("rows", []):
            sc = r.pop("scored", None)
            if sc is not None:
                r["score"] = sc.score
                r["score_ci95"] = list(sc.interval())
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
