#!/usr/bin/env python3
"""The tiled-matmul figure of docs/kernels.md ("Figures"), in one run of `tunekit tune-kernel`.

1. exhaustive: `--strategy grid` over every valid configuration of the spec's space (fresh log
   and artefact cache);
2. auto: `--strategy auto` for --budget trials (60), fresh log and cache;
3. re-timing, interleaved: a copy of the spec whose restrictions keep exactly three
   configurations -- the source's defaults (its `#ifndef P / #define P v` lines), the auto run's
   best and the exhaustive run's best -- measured by tunekit in --rounds separate runs (fresh log
   each, one shared artefact cache, a different seed and so a different order each round). Each
   configuration's time is the median over rounds of its per-round median cost.

Printed: the load (`uptime`) before each step, each step's wall time and best, the re-timing
table, best-of-auto / default speed-up and best-of-auto / exhaustive best. Only tunekit and
Python's standard library are needed.

Usage: python3 scripts/kernel_figures.py --tunekit build/tools/cli/tunekit
Smoke test: add --size 256 --budget 4 --exhaustive-budget 8 --rounds 2.
"""

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_compare_common as kc  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def source_defaults(spec):
    """Each tuned parameter's default in the source: `#ifndef P` followed by `#define P v`."""
    text = open(kc.spec_path(spec, spec["source"])).read()
    params, _ = kc.space_params(spec)
    out = {}
    for p in params:
        m = re.search(r"#ifndef %s\s*\n\s*#define %s\s+(\S+)" % (p, p), text)
        if not m:
            raise SystemExit("no default for %s in %s" % (p, spec["source"]))
        out[p] = int(m.group(1)) if m.group(1).lstrip("-").isdigit() else m.group(1)
    return out


def tune(tunekit, spec, work, tag, *, strategy, budget, size, seed=0, cache=None, quiet=False):
    """One `tune-kernel` run on a fresh log; returns (records, wall seconds). Without `cache`, a
    fresh artefact cache of its own."""
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, "%s.log.json" % tag)
    if os.path.exists(log):
        os.remove(log)
    if cache is None:
        cache = os.path.join(work, "cache-%s" % tag)
        subprocess.run(["rm", "-rf", cache], check=True)
    run_spec = os.path.join(work, "spec-%s.json" % tag)
    kc.write_run_spec(spec, run_spec, strategy=strategy, budget=budget, log=log, size=size,
                      seed=seed, cache_dir=cache)
    cmd = [tunekit, "tune-kernel", run_spec, "--top", "0" if quiet else "5"]
    if not quiet:
        print("$ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t0
    if not quiet:
        # The progress line is rewritten with carriage returns: keep its last state only.
        print("\n".join(line.split("\r")[-1] for line in proc.stdout.splitlines()), flush=True)
    if proc.returncode != 0:
        raise SystemExit("tunekit failed (exit %d):\n%s" % (proc.returncode, proc.stdout[-3000:]))
    return kc.read_log(log), wall


def best_of(recs):
    ok = [r for r in recs if r["error_no"] == 0]
    return min(ok, key=lambda r: statistics.mean(r["costs"])) if ok else None


def fmt_cfg(cfg):
    return " ".join("%s=%s" % kv for kv in cfg.items())


def only_these(spec, configs):
    """A copy of the spec whose restrictions keep exactly `configs`."""
    doc = dict(spec)
    space = dict(spec["space"])
    terms = ["(" + " and ".join("%s == %s" % kv for kv in c.items()) + ")" for c in configs]
    space["restrictions"] = list(space.get("restrictions", [])) + [" or ".join(terms)]
    doc["space"] = space
    return doc


def retime(tunekit, spec, work, labelled, rounds, size):
    """Median over `rounds` interleaved tunekit runs of each configuration's median cost."""
    distinct = []
    for _, cfg in labelled:
        if cfg not in distinct:
            distinct.append(cfg)
    sub = only_these(spec, distinct)
    cache = os.path.join(work, "cache-retime")
    subprocess.run(["rm", "-rf", cache], check=True)
    per_cfg = {json.dumps(c, sort_keys=True): [] for c in distinct}
    for r in range(rounds):
        recs, _ = tune(tunekit, sub, work, "retime", strategy="random", budget=len(distinct),
                       size=size, seed=r + 1, cache=cache, quiet=True)
        order = []
        for rec in recs:
            key = json.dumps(rec["config"], sort_keys=True)
            order.append(distinct.index(rec["config"]))
            if rec["error_no"] == 0:
                per_cfg[key].append(statistics.median(rec["costs"]))
        print("round %d: order %s" % (r + 1, order), flush=True)
    return {label: statistics.median(per_cfg[json.dumps(cfg, sort_keys=True)])
            for label, cfg in labelled}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", default=os.path.join(ROOT, "examples/kernels/matmul/matmul.json"))
    ap.add_argument("--tunekit", default=os.path.join(ROOT, "build/tools/cli/tunekit"))
    ap.add_argument("--budget", type=int, default=60, help="trials of the auto run")
    ap.add_argument("--exhaustive-budget", type=int,
                    help="trials of the grid run (default: every valid configuration)")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved re-timing rounds")
    ap.add_argument("--threads", type=int, default=2, help="OMP_NUM_THREADS")
    ap.add_argument("--size", type=int, help="override every int32 scalar (smoke tests)")
    ap.add_argument("--work-dir", default=os.path.join(ROOT, "build-compare/kernel-figures"))
    a = ap.parse_args()

    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    spec = kc.load_spec(a.spec)
    n_valid = len(kc.valid_configs(spec))
    exhaustive_budget = a.exhaustive_budget or n_valid
    print("CPU: %s (%d CPUs), %d OpenMP threads; %s: %d valid configurations" % (
        kc.cpu_name(), os.cpu_count(), a.threads, os.path.basename(a.spec), n_valid))
    print("load before the exhaustive run: %s" % uptime(), flush=True)
    grid, grid_wall = tune(a.tunekit, spec, a.work_dir, "exhaustive", strategy="grid",
                           budget=exhaustive_budget, size=a.size)
    print("load before the auto run: %s" % uptime(), flush=True)
    auto, auto_wall = tune(a.tunekit, spec, a.work_dir, "auto", strategy="auto", budget=a.budget,
                           size=a.size)
    best_grid, best_auto = best_of(grid), best_of(auto)
    default = source_defaults(spec)
    labelled = [("default", default), ("auto best (%d trials)" % a.budget, best_auto["config"]),
                ("exhaustive best", best_grid["config"])]
    print("load before the re-timing: %s" % uptime(), flush=True)
    times = retime(a.tunekit, spec, a.work_dir, labelled, a.rounds, a.size)
    print("load after the re-timing: %s" % uptime())
    report(spec, a, labelled, times, (len(grid), grid_wall, best_grid), (len(auto), auto_wall,
                                                                         best_auto))


def report(spec, a, labelled, times, grid, auto):
    print()
    for name, (n, wall, best) in (("exhaustive (grid)", grid), ("auto", auto)):
        print("%s: %d trials, %.0f s wall, best in its log %.2f ms: %s" % (
            name, n, wall, statistics.mean(best["costs"]) * 1e3, fmt_cfg(best["config"])))
    print()
    print("Re-timed, %d interleaved rounds (median of per-round medians):" % a.rounds)
    print("| configuration | parameters | ms | GFLOP/s |")
    print("|---|---|---|---|")
    for label, cfg in labelled:
        print("| %s | %s | %.2f | %.1f |" % (label, fmt_cfg(cfg), times[label] * 1e3,
                                           kc.gflops(spec, times[label], a.size)))
    t_default, t_auto, t_grid = (times[label] for label, _ in labelled)
    print()
    print("auto best / default speed-up: %.2fx (target >= 2x)" % (t_default / t_auto))
    print("auto best time / exhaustive best time: %.3f (target <= 1.10)" % (t_auto / t_grid))



if __name__ == "__main__":
    main()
