#!/usr/bin/env python3
"""Side by side on a real C++ kernel: Kernel Tuner 1.5 and `tunekit tune-kernel`, in one run.

Both tools tune the same source file (examples/kernels/matmul/matmul.cpp by default), the same
space and restrictions, with the same budget of trials, the same compiler flags (the spec's plus
-march=native) and OpenMP threads (--threads). Kernel Tuner runs with lang="C": it compiles each
configuration with g++ and calls it in-process through ctypes. Its C backend takes the kernel's
time from the function's return value (milliseconds), so the script appends a timing shim to the
source text, `float <entry>_timed(...)`, that calls the entry once between two steady_clock
reads; the kernel itself is unchanged. Kernel Tuner verifies each configuration against the
outputs of the spec's reference kernel (built with the same flags, called once through ctypes)
with the spec's atol.

Printed per tool and strategy: best time found (and GFLOP/s), trials, failed trials, wall-clock
tuning time, and the overhead per trial = (wall - compile time - time in kernel calls) / trials.
Kernel calls: Kernel Tuner's `times` of every configuration plus its verification call, and its
first configuration twice (its warm-up); tunekit's mean cost x (warmup + number x repeat).
Both walls include the reference outputs: tunekit builds and runs the reference kernel in its
run, so Kernel Tuner's wall adds the script's compile and call of it (printed apart).
Kernel Tuner's compile_time is its own per-configuration figure; tunekit's is the "build_cost"
of each record of its log (the builder's own timing of that trial's compile).
tunekit builds one configuration at a time here (--tunekit-n-parallel 1), as Kernel Tuner does:
with parallel builds the compile time overlaps and the split of the wall time means nothing.

Usage (see docs/kernels.md, "Side by side"):
    python3 -m venv build-compare/kt-venv
    build-compare/kt-venv/bin/pip install -r scripts/kernel_tuner_compare.requirements.txt
    build-compare/kt-venv/bin/python scripts/kernel_tuner_kernel_compare.py \
        --tunekit build/tools/cli/tunekit --budget 60
Smoke test (tiny): add --size 256 --budget 4.
"""

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_compare_common as kc  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
C_TYPES = {"float32": "const float*", "float64": "const double*", "int32": "int", "int64": "long"}
OUT_TYPES = {"float32": "float*", "float64": "double*"}


def timed_shim(spec):
    """C++ text appended to the source: <entry>_timed(args) returns one call's milliseconds."""
    params, names = [], []
    for a in spec["arguments"]:
        if "value" in a:
            t = C_TYPES[a["dtype"]]
        else:
            t = OUT_TYPES[a["dtype"]] if a.get("output") else C_TYPES[a["dtype"]]
        params.append("%s %s" % (t, a["name"]))
        names.append(a["name"])
    e = spec["entry"]
    return ("\n#include <chrono>\n"
            'extern "C" float %s_timed(%s) {\n'
            "  const auto t0 = std::chrono::steady_clock::now();\n"
            "  %s(%s);\n"
            "  return std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now()"
            " - t0).count();\n}\n") % (e, ", ".join(params), e, ", ".join(names))


def reference_outputs(spec, args, flags):
    """Outputs of the spec's reference kernel on copies of `args` (None for inputs)."""
    ref = spec.get("verify", {}).get("reference")
    if not isinstance(ref, dict) or "source" not in ref:
        return None
    with tempfile.TemporaryDirectory() as d:
        so = os.path.join(d, "ref.so")
        subprocess.run(["g++"] + flags + ["-shared", "-fPIC", kc.spec_path(spec, ref["source"]),
                        "-o", so], check=True)
        lib = ctypes.CDLL(so)
        fn = getattr(lib, ref.get("entry", spec["entry"]))
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        cargs = [a.ctypes.data_as(ctypes.c_void_p) if isinstance(a, np.ndarray)
                 else (ctypes.c_int(int(a)) if a.dtype == np.int32 else ctypes.c_long(int(a)))
                 for a in copies]
        fn(*cargs)
    return [c if spec["arguments"][i].get("output") else None for i, c in enumerate(copies)]


def run_kernel_tuner(spec, args_ns):
    import kernel_tuner

    warnings.filterwarnings("ignore", message="None of the tunable parameters specify thread")

    params, restrictions = kc.space_params(spec)
    flags = list(spec.get("flags", [])) + ["-march=native"]
    args = kc.fill_arrays(spec, args_ns.size, args_ns.seed)
    # The reference's compile and call count in the wall, as tunekit's do in its own.
    t_ref = time.perf_counter()
    answer = reference_outputs(spec, args, flags)
    reference_s = time.perf_counter() - t_ref
    source = open(kc.spec_path(spec, spec["source"])).read() + timed_shim(spec)
    verify = spec.get("verify", {})
    iterations = kc.kernel_calls_per_trial(spec) - spec.get("timing", {}).get("warmup", 1)
    t0 = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        spec["entry"] + "_timed", source, (1,), args, params, lang="C",
        compiler_options=flags, restrictions=restrictions or None, answer=answer,
        atol=verify.get("atol", 1e-6), iterations=iterations,
        strategy=args_ns.kt_strategy, strategy_options={"max_fevals": args_ns.budget},
        verbose=False, quiet=True)
    wall = time.perf_counter() - t0 + reference_s
    row = summarise_kernel_tuner(spec, results, wall, args_ns.size)
    row["reference_s"] = reference_s
    return row


def summarise_kernel_tuner(spec, results, wall, size):
    ok = [r for r in results if "__error__" not in r and isinstance(r.get("time"), float)]
    best = min(ok, key=lambda r: r["time"]) if ok else None
    compile_s = sum(r.get("compile_time", 0) for r in results) / 1e3
    kernel_s = sum(sum(r.get("times", [])) + r["time"] for r in ok) / 1e3
    if ok:  # Kernel Tuner benchmarks its first configuration once more as a warm-up
        first = ok[0]
        kernel_s += (sum(first.get("times", [])) + first["time"]) / 1e3
        compile_s += first.get("compile_time", 0) / 1e3
    n = max(len(results), 1)
    params, _ = kc.space_params(spec)
    return {
        "tool": "kernel_tuner",
        "trials": len(results),
        "failed": len(results) - len(ok),
        "best_s": best["time"] / 1e3 if best else None,
        "best_config": {k: best[k] for k in params} if best else None,
        "wall_s": wall,
        "build_s": compile_s,
        "kernel_s": kernel_s,
        "overhead_per_trial_s": (wall - compile_s - kernel_s) / n,
        "kt_framework_plus_strategy_per_trial_s":
            statistics.mean(r.get("framework_time", 0) + r.get("strategy_time", 0)
                            for r in results) / 1e3 if results else None,
        "kt_verification_per_trial_s":
            statistics.mean(r.get("verification_time", 0) for r in results) / 1e3
            if results else None,
    }


def print_table(spec, rows, size):
    print()
    print("| tool | strategy | trials (failed) | best ms | best GFLOP/s | tuning wall s | "
          "compile s | kernel s | overhead/trial ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        best = r["best_s"]
        g = kc.gflops(spec, best, size)
        print("| %s | %s | %d (%d) | %s | %s | %.1f | %.1f | %.1f | %.1f |" % (
            r["tool"], r["strategy"], r["trials"], r["failed"],
            "%.2f" % (best * 1e3) if best else "-", "%.1f" % g if g else "-", r["wall_s"],
            r["build_s"], r["kernel_s"],
            r["overhead_per_trial_s"] * 1e3))
    for r in rows:
        print("%s %s best config: %s" % (r["tool"], r["strategy"], r["best_config"]))
        if r.get("trials_without_build_cost"):
            print("  tunekit: %d record(s) without build_cost (no build ran), counted 0 s" %
                  r["trials_without_build_cost"])
        if "outside_trials_per_trial_s" in r:
            print("  tunekit: sum of all_cost (build + run) %.1f s; wall outside it per trial: "
                  "%.1f ms" % (
                r["all_cost_s"], r["outside_trials_per_trial_s"] * 1e3))
        if "reference_s" in r:
            print("  Kernel Tuner: reference outputs (compile + one call) %.1f s, in its wall as "
                  "tunekit's reference build and run are in tunekit's" % r["reference_s"])
        if "kt_framework_plus_strategy_per_trial_s" in r:
            print("  Kernel Tuner's own framework_time + strategy_time per trial: %.1f ms, "
                  "verification_time per trial: %.1f ms" % (
                      r["kt_framework_plus_strategy_per_trial_s"] * 1e3,
                      r["kt_verification_per_trial_s"] * 1e3))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", default=os.path.join(ROOT, "examples/kernels/matmul/matmul.json"))
    ap.add_argument("--tunekit", default=os.path.join(ROOT, "build/tools/cli/tunekit"))
    ap.add_argument("--budget", type=int, default=60, help="trials per tool and strategy")
    ap.add_argument("--kt-strategy", default="random_sample")
    ap.add_argument("--tunekit-strategies", default="random,auto",
                    help="comma-separated tunekit strategies (random matches random_sample)")
    ap.add_argument("--tunekit-isolations", default="worker,process",
                    help="tunekit's isolation modes to run (comma-separated): worker (the "
                         "default: a warm worker, replaced after a failed trial), process (a "
                         "forked child per trial)")
    ap.add_argument("--tunekit-n-parallel", type=int, default=1,
                    help="tunekit's parallel builds (default 1: one at a time, as Kernel Tuner "
                         "builds, so that its wall time splits into compile, kernel and overhead; "
                         "0 = one per CPU, tunekit's own default)")
    ap.add_argument("--threads", type=int, default=2, help="OMP_NUM_THREADS of both tools")
    ap.add_argument("--size", type=int, help="override every int32 scalar (smoke tests)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work-dir", default=os.path.join(ROOT, "build-compare/kernel-compare"))
    ap.add_argument("--skip-kernel-tuner", action="store_true")
    ap.add_argument("--skip-tunekit", action="store_true")
    ap.add_argument("--json", help="also write the rows here")
    a = ap.parse_args()

    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    spec = kc.load_spec(a.spec)
    rows = []
    print("CPU: %s; %d OpenMP threads; budget %d trials" % (kc.cpu_name(), a.threads, a.budget))
    if not a.skip_kernel_tuner:
        r = run_kernel_tuner(spec, a)
        r["strategy"] = a.kt_strategy
        rows.append(r)
    if not a.skip_tunekit:
        for iso in a.tunekit_isolations.split(","):
            for s in a.tunekit_strategies.split(","):
                r = kc.run_tunekit(a.tunekit, spec, a.work_dir, strategy=s, budget=a.budget,
                                   size=a.size, seed=a.seed, env=dict(os.environ),
                                   n_parallel=a.tunekit_n_parallel, isolation=iso)
                r["strategy"] = s
                r["tool"] = "tunekit (%s)" % iso
                rows.append(r)
    print_table(spec, rows, a.size)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
