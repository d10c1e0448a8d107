#!/usr/bin/env python3
"""Side by side with TVM MetaSchedule on the 1024-cubed fp32 matmul, 2 threads, in one run.

MetaSchedule (TVM 0.27, see ../shared/reference/peers.md "MetaSchedule on this CPU") tunes a
te.compute matmul C[i, j] = sum_k A[i, k] * B[k, j] (row-major, fp32) for --ms-trials trials
(default 256, 64 per iteration) on the target {"kind": "llvm", "mcpu": <this CPU>, "num-cores":
threads}; its best schedule is compiled from the tuning database and re-timed with
time_evaluator. Then `tunekit tune-kernel` tunes examples/kernels/matmul/matmul.json with --strategy
(default auto) for --tunekit-budget trials (default 64) on a fresh log and artefact cache; its best
configuration is rebuilt with the spec's flags and re-timed through ctypes the same way (median of --repeat calls after a warm-up, in a child process of its own). numpy's
A @ B (OpenBLAS) is timed as a reference, also in a child process. Printed: tuning wall-clock time and re-timed best GFLOP/s of both tools, and the ratio
of their walls.

Usage (see docs/kernels.md, "Side by side"):
    python3 -m venv build-compare/ms-venv
    build-compare/ms-venv/bin/pip install -r scripts/metaschedule_compare.requirements.txt
    build-compare/ms-venv/bin/python scripts/metaschedule_compare.py \
        --tunekit build/tools/cli/tunekit
Smoke test (tiny): --size 128 --ms-trials 4 --tunekit-budget 4.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_compare_common as kc  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def matmul_prim_func(n):
    from tvm import te

    a = te.placeholder((n, n), name="A", dtype="float32")
    b = te.placeholder((n, n), name="B", dtype="float32")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return te.create_prim_func([a, b, c])


def run_metaschedule(n, trials, threads, work_dir, repeat, timeout_s, build_timeout_s):
    import tvm
    import tvm.s_tir.meta_schedule as ms
    from tvm.target import codegen

    target = tvm.target.Target({"kind": "llvm", "mcpu": codegen.llvm_get_system_cpu(),
                                "num-cores": threads})
    func = matmul_prim_func(n)
    mod = tvm.IRModule({"main": func})
    subprocess.run(["rm", "-rf", work_dir], check=True)
    t0 = time.perf_counter()
    database = ms.tir_integration.tune_tir(
        mod, target, work_dir, max_trials_global=trials, num_trials_per_iter=min(64, trials),
        builder=ms.builder.LocalBuilder(timeout_sec=build_timeout_s),
        runner=ms.runner.LocalRunner(timeout_sec=timeout_s))
    wall = time.perf_counter() - t0
    sch = ms.tir_integration.compile_tir(database, mod, target)
    if sch is None:
        raise RuntimeError("MetaSchedule found no valid schedule")
    rt = tvm.compile(sch.mod, target=target).jit()
    dev = tvm.cpu()
    rng = np.random.default_rng(0)
    a = tvm.runtime.tensor(rng.uniform(-1, 1, (n, n)).astype("float32"), dev)
    b = tvm.runtime.tensor(rng.uniform(-1, 1, (n, n)).astype("float32"), dev)
    c = tvm.runtime.tensor(np.zeros((n, n), "float32"), dev)
    entry = getattr(rt, "entry_name", None) or "main"
    rt[entry](a, b, c)
    timer = rt.time_evaluator(entry, dev, number=1, repeat=repeat, min_repeat_ms=0)
    t = statistics.median(timer(a, b, c).results)
    err = np.abs(c.numpy() - a.numpy() @ b.numpy()).max()  # after timing: OpenBLAS's threads
    return {"tool": "MetaSchedule", "trials": trials, "wall_s": wall, "best_s": t,
            "max_abs_err": float(err), "target": str(target)}


# Re-timing runs in a child process of its own: in one process, libgomp's and OpenBLAS's thread
# pools (and TVM's) wait on each other, and 2-thread calls then took a scheduler tick (16 ms for
# a 128-cubed matmul that needs 0.1 ms) on a loaded machine.
RETIME_CHILD = r"""
import ctypes, random, statistics, sys, time
so, entry, m, n, k, repeat = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7])
rnd = random.Random(0)
a = (ctypes.c_float * (m * k))(*[rnd.uniform(-1, 1) for _ in range(m * k)])
b = (ctypes.c_float * (k * n))(*[rnd.uniform(-1, 1) for _ in range(k * n)])
c = (ctypes.c_float * (m * n))()
fn = getattr(ctypes.CDLL(so), entry)
fn(m, n, k, a, b, c)
times = []
for _ in range(repeat):
    t0 = time.perf_counter()
    fn(m, n, k, a, b, c)
    times.append(time.perf_counter() - t0)
print(statistics.median(times))
"""

NUMPY_CHILD = r"""
import statistics, sys, time
import numpy as np
n, repeat = map(int, sys.argv[1:3])
rng = np.random.default_rng(0)
a = rng.uniform(-1, 1, (n, n)).astype("float32")
b = rng.uniform(-1, 1, (n, n)).astype("float32")
a @ b
times = []
for _ in range(repeat):
    t0 = time.perf_counter()
    a @ b
    times.append(time.perf_counter() - t0)
print(statistics.median(times))
"""


def retime_tunekit_best(spec, config, n, repeat):
    """Median seconds of one n^3 call of `config` built with the spec's flags (the spec's
    matmul(M, N, K, A, B, C) signature), timed through ctypes in a child process."""
    with tempfile.TemporaryDirectory() as d:
        so = os.path.join(d, "best.so")
        subprocess.run(kc.compile_command(spec, config, so), check=True)
        out = subprocess.run([sys.executable, "-c", RETIME_CHILD, so, spec["entry"], str(n),
                              str(n), str(n), str(repeat)], check=True, capture_output=True,
                             text=True).stdout
    return float(out.split()[-1])


def time_numpy(n, repeat):
    out = subprocess.run([sys.executable, "-c", NUMPY_CHILD, str(n), str(repeat)], check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", default=os.path.join(ROOT, "examples/kernels/matmul/matmul.json"))
    ap.add_argument("--tunekit", default=os.path.join(ROOT, "build/tools/cli/tunekit"))
    ap.add_argument("--size", type=int, default=1024, help="M = N = K")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ms-trials", type=int, default=256)
    ap.add_argument("--tunekit-budget", type=int, default=64)
    ap.add_argument("--strategy", default="auto", help="tunekit's strategy")
    ap.add_argument("--repeat", type=int, default=20, help="calls timed when re-timing a best")
    ap.add_argument("--ms-timeout", type=float, default=30.0,
                    help="MetaSchedule's run timeout per candidate, s (TVM's default 30)")
    # Every batch starts fresh builder workers, and the first build in each imports
    # tvm.s_tir.tensor_intrin: 30-43 s on the 2-core AMD EPYC Zen 3, so with TVM's default of
    # 30 s every build of a batch timed out there and no schedule was found.
    ap.add_argument("--ms-build-timeout", type=float, default=120.0,
                    help="MetaSchedule's build timeout per candidate, s (includes the worker's "
                         "import of tvm.s_tir.tensor_intrin)")
    ap.add_argument("--work-dir", default=os.path.join(ROOT, "build-compare/metaschedule"))
    ap.add_argument("--skip-metaschedule", action="store_true")
    ap.add_argument("--skip-tunekit", action="store_true")
    a = ap.parse_args()

    # One thread count for everything: TVM's pool, OpenMP (tunekit's kernel), OpenBLAS (numpy).
    for v in ("TVM_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[v] = str(a.threads)
    spec = kc.load_spec(a.spec)
    flop = 2.0 * a.size ** 3
    rows = []
    if not a.skip_metaschedule:
        ms = run_metaschedule(a.size, a.ms_trials, a.threads, os.path.join(a.work_dir, "ms"),
                              a.repeat, a.ms_timeout, a.ms_build_timeout)
        print("MetaSchedule target %s, max |C - numpy| = %.2g" % (ms["target"], ms["max_abs_err"]))
        rows.append(ms)
    if not a.skip_tunekit:
        tk = kc.run_tunekit(a.tunekit, spec, os.path.join(a.work_dir, "tunekit"),
                            strategy=a.strategy, budget=a.tunekit_budget,
                            size=None if a.size == 1024 else a.size, env=dict(os.environ))
        tk["tool"] = "tunekit (%s)" % a.strategy
        tk["log_best_s"] = tk["best_s"]
        tk["best_s"] = retime_tunekit_best(spec, tk["best_config"], a.size, a.repeat)
        print("tunekit best config %s (log: %.2f ms)" % (tk["best_config"], tk["log_best_s"] * 1e3))
        rows.append(tk)
    np_s = time_numpy(a.size, a.repeat)

    print()
    print("%d^3 fp32 matmul, %d threads, %s" % (a.size, a.threads, kc.cpu_name()))
    print("| tool | trials | tuning wall s | s per trial | best ms (re-timed) | best GFLOP/s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %.0f | %.2f | %.2f | %.1f |" % (
            r["tool"], r["trials"], r["wall_s"], r["wall_s"] / max(r["trials"], 1),
            r["best_s"] * 1e3, flop / r["best_s"] / 1e9))
    print("| numpy (OpenBLAS) | - | - | - | %.2f | %.1f |" % (np_s * 1e3, flop / np_s / 1e9))
    if len(rows) == 2:
        print("tunekit wall / MetaSchedule wall = %.3f; tunekit best / MetaSchedule best "
              "(GFLOP/s) = %.2f" % (rows[1]["wall_s"] / rows[0]["wall_s"],
                                    rows[0]["best_s"] / rows[1]["best_s"]))



if __name__ == "__main__":
    main()
