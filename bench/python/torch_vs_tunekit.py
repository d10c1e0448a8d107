"""Stock PyTorch against tunekit on nn.Linear GEMMs: the project's honest CPU baseline.

What it measures: for every problem (out x tokens x in, the Llama-2-7B projections by default)
the wall time of one call of

* ``torch.nn.functional.linear(x, W)`` (x: tokens x in, W: out x in; torch's own CPU kernel,
  MKL's sgemm for float32 and oneDNN's matmul for bfloat16; the kernel torch ran is read from
  torch's oneDNN verbose log during the correctness call), and
* ``tunekit.matmul(x, W.T)`` on the same torch CPU tensors (DLPack, no copy: checked with the
  engine's copy counter), dispatched to the winner stored for that exact problem in the tuned
  results file given with ``--results`` (tuning off, as a user runs a tuned model).

How: both contenders run alternately in one process, call by call, and which goes first
alternates every pair. Weights and inputs are rotated over ``--rotate-mb`` MB of copies
(k = ceil(rotate bytes / (W bytes + x bytes)), at most 1024) so that the weights do not sit in
cache between calls: call j of the run (both contenders counted) uses copy j mod k, i.e. pair i
runs its first call on copy 2i mod k and its second on copy 2i+1 mod k. (With one copy for both
calls of a pair, the second call finds W in cache whenever W fits in the last-level cache:
torch's bf16 2048 x 1 x 1024 (W 4 MiB) took 0.42 ms cold and 0.19 ms right after itself, one
thread on the 2-vCPU AMD EPYC with its 32 MiB L3, and the paired ratios split into two modes by
call order. ``--same-copy-per-pair`` keeps that scheme, pair i on copy i mod k for both.) Every
copy is warmed up first (untimed calls of both). Each call is timed alone with
time.perf_counter_ns() immediately around it (the W.T view is made beforehand; the result is
freed after the clock is read); the garbage collector is off while timing. The number of pairs
is scaled from the warm-up so that a problem takes about ``--target-s`` seconds (at least 5
pairs), unless ``--repeats`` fixes it.

Reported per problem: the median call time of each, the paired ratio (the median over pairs of
torch_time / tunekit_time: > 1 means tunekit is faster) with its quartiles, and the solution
tunekit dispatched to; per dtype, the geometric mean of the paired ratios and the number of
problems with a ratio >= 0.98 ("tie or better").

Dispatch is verified, not assumed: the results file is read with tunable.read_file (a file of
another environment, e.g. tuned with other threads, raises instead of silently running Default),
the exact signature tunekit.matmul(x, W.T) computes (GemmTunableOp_<dtype>_TN,
tn_<out>_<tokens>_<in>_ld_<in>_<in>_<out>) is looked up in tunable.get_results(), and the first
call of each problem runs with record-untuned on: a miss would append the call's real signature
to a private untuned file, and a stored solution that cannot run (unknown name, failed prepare,
refused call) would log a "using Default" warning into a private log; either is reported loudly.

Outputs are compared once per problem before timing: |torch - tunekit| <= tol * (|x| @ |W|^T)
(+ torch's bf16 output rounding, 2^-8 |y|, for bfloat16), tol = 1e-4 for both dtypes (fp32
accumulation); a mismatch is an error (not timed, exit status 1).

bfloat16: torch returns bfloat16, tunekit.matmul float32 (its documented result, the problem
GemmTunableOp_BFloat16_float_TN: tune the bf16 workload with --dtype bf16_float); each is timed
as users call it.

Usage (the module from the build, two threads for both libraries):

    PYTHONPATH=build/python python3 bench/python/torch_vs_tunekit.py --results tuned.csv
        [--dtype float32|bfloat16|both] [--threads 2] [--repeats N] [--rotate-mb 256]
        [--workload FILE ...] [--shapes 'M,N,K;...'] [--json OUT.json] [--target-s 1]
        [--same-copy-per-pair]

M, N, K as in the untuned files: M = out_features, N = tokens, K = in_features. The results file
must have been tuned with the same thread count (its THREADS validator).
"""

import argparse
import contextlib
import datetime
import gc
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_info import cpu_name  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_WORKLOADS = {
    "float32": os.path.join(REPO, "examples/workloads/llama2-7b_float_untuned.csv"),
    "bfloat16": os.path.join(REPO, "examples/workloads/llama2-7b_bf16_untuned.csv"),
}
# TunableOp's dtype token -> ours. A workload's BFloat16 problems (upstream's: bf16 C) are run as
# tunekit.matmul runs bfloat16 arrays, with a float32 result: tunekit's BFloat16_float.
OP_DTYPES = {"float": "float32", "BFloat16": "bfloat16", "BFloat16_float": "bfloat16"}
DTYPE_TOKENS = {"float32": "float", "bfloat16": "BFloat16_float"}  # what tunekit.matmul dispatches
TORCH_KERNEL = {"float32": "MKL sgemm", "bfloat16": "oneDNN matmul"}  # what torch should run
MAX_COPIES = 1024
MAX_PAIRS = 100_000
TIE = 0.98
TOL = 1e-4
SIGNATURE = re.compile(r"^tn_(\d+)_(\d+)_(\d+)_ld_(\d+)_(\d+)_(\d+)$")


# --------------------------------------------------------------------------------------------
# Problems


@dataclass(frozen=True)
class Problem:
    """y (tokens x out) = x (tokens x in) @ W^T, W out x in; BLAS frame m = out, n = tokens."""

    dtype: str
    m: int
    n: int
    k: int

    @property
    def op_signature(self) -> str:
        return f"GemmTunableOp_{DTYPE_TOKENS[self.dtype]}_TN"

    @property
    def params_signature(self) -> str:
        return f"tn_{self.m}_{self.n}_{self.k}_ld_{self.k}_{self.k}_{self.m}"

    @property
    def label(self) -> str:
        return f"{self.m} x {self.n} x {self.k}"


def read_workload(path: str, dtypes: List[str]) -> List[Problem]:
    """The nn.Linear problems of a TunableOp untuned or results file, in the given dtypes.
    Lines of another layout (not TN with ld = in, in, out) are skipped with a note."""
    problems = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.strip().split(",")
            if len(fields) < 2 or not fields[0].startswith("GemmTunableOp_"):
                continue
            token, _, trans = fields[0][len("GemmTunableOp_"):].rpartition("_")
            match = SIGNATURE.match(fields[1])
            dtype = OP_DTYPES.get(token)
            if dtype is None or trans != "TN" or match is None:
                print(f"note: {path}:{number}: not an nn.Linear GEMM we can run, skipped: "
                      f"{fields[0]},{fields[1]}", file=sys.stderr)
                continue
            m, n, k, lda, ldb, ldc = map(int, match.groups())
            if (lda, ldb, ldc) != (k, k, m):
                print(f"note: {path}:{number}: leading dimensions are not those of contiguous "
                      f"x and W, skipped: {fields[1]}", file=sys.stderr)
                continue
            if dtype in dtypes:
                problems.append(Problem(dtype, m, n, k))
    return problems


def parse_shapes(text: str, dtypes: List[str]) -> List[Problem]:
    """'M,N,K;M,N,K' (M = out, N = tokens, K = in) for each dtype."""
    shapes = []
    for item in filter(None, (s.strip() for s in text.split(";"))):
        parts = [int(p) for p in item.split(",")]
        if len(parts) != 3 or min(parts) < 1:
            raise SystemExit(f"--shapes: expected M,N,K with positive sizes, got '{item}'")
        shapes.append(parts)
    return [Problem(d, m, n, k) for d in dtypes for m, n, k in shapes]


def select_problems(args) -> List[Problem]:
    """The problems to run, duplicates dropped, in file order."""
    dtypes = ["float32", "bfloat16"] if args.dtype == "both" else [args.dtype]
    if args.shapes:
        problems = parse_shapes(args.shapes, dtypes)
    elif args.workload:
        problems = [p for path in args.workload for p in read_workload(path, dtypes)]
    else:
        problems = [p for d in dtypes for p in read_workload(DEFAULT_WORKLOADS[d], [d])]
    return list(dict.fromkeys(problems))


# --------------------------------------------------------------------------------------------
# Environment and settings


def prepare_environment(threads: int, scratch: str) -> None:
    """Sets tunekit's variables before the module is first used (they are read then): the
    thread count, and a private untuned file and log so that misses and dispatch warnings of
    the verification calls can be read back."""
    env = os.environ
    if env.get("TUNEKIT_THREADS", str(threads)) != str(threads):
        raise SystemExit(f"TUNEKIT_THREADS={env['TUNEKIT_THREADS']} in the environment but "
                         f"--threads {threads}: unset it or pass the same count")
    env["TUNEKIT_THREADS"] = str(threads)
    for name in ("TUNEKIT_UNTUNED_FILENAME", "TUNEKIT_VERBOSE_FILENAME"):
        if name in env:
            print(f"note: {name} is replaced by a private file for the dispatch check",
                  file=sys.stderr)
    env["TUNEKIT_UNTUNED_FILENAME"] = os.path.join(scratch, "untuned.csv")
    env["TUNEKIT_VERBOSE_FILENAME"] = os.path.join(scratch, "tunekit.log")


def configure_tunekit(tunable, results: str) -> None:
    """Loads the results file and turns tuning off; exits when a TUNEKIT_* variable overrides
    what the benchmark needs or the file cannot be used."""
    problem = tunable._c.environment_error()
    if problem:
        raise SystemExit(f"tunekit's environment is invalid: {problem}")
    tunable.enable(True)
    tunable.tuning_enable(False)
    tunable.record_untuned_enable(False)
    tunable.set_filename(results)
    checks = [(tunable.is_enabled(), "TUNEKIT_ENABLED turns TunableOp off"),
              (not tunable.tuning_is_enabled(), "TUNEKIT_TUNING keeps tuning on"),
              (not tunable.record_untuned_is_enabled(), "TUNEKIT_RECORD_UNTUNED is set"),
              (os.path.abspath(tunable.get_filename()) == os.path.abspath(results),
               f"TUNEKIT_FILENAME overrides --results ({tunable.get_filename()})")]
    for ok, why in checks:
        if not ok:
            raise SystemExit(f"cannot benchmark the tuned dispatch: {why}; unset it")
    if not os.path.isfile(results):
        raise SystemExit(f"--results {results}: no such file")
    try:
        tunable.read_file(results)
    except ValueError as e:  # ParseError, ValidatorMismatchError
        raise SystemExit(f"--results {results} cannot be used here: {e}")


def validators(tunable) -> dict:
    return dict(tunable.get_validators())


# --------------------------------------------------------------------------------------------
# Header


def lscpu_fields() -> dict:
    """lscpu's vendor, family and model ({} without lscpu)."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True,
                              env=dict(os.environ, LC_ALL="C")).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    wanted = {"Vendor ID": "vendor", "CPU family": "family", "Model": "model"}
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in wanted:
            out[wanted[key.strip()]] = value.strip()
    return out


def torch_libraries(torch) -> List[str]:
    """torch's BLAS and oneDNN lines of torch.__config__.show()."""
    keys = ("Math Kernel Library", "MKL-DNN", "oneDNN", "OpenBLAS", "BLAS_INFO")
    lines = []
    for line in torch.__config__.show().splitlines():
        line = line.strip(" -")
        if line.startswith("Build settings"):
            found = re.search(r"BLAS_INFO=([^,]+)", line)
            if found:
                lines.append(f"BLAS_INFO={found.group(1)}")
        elif any(k in line for k in keys):
            lines.append(line)
    return lines


def header(args, torch, tunable, np) -> dict:
    """What the run ran on, printed and kept for the JSON."""
    v = validators(tunable)
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu_name(), "lscpu": lscpu_fields(), "python": platform.python_version(),
        "torch": torch.__version__, "torch_libraries": torch_libraries(torch),
        "numpy": np.__version__, "tunekit": v.get("TUNEKIT_VERSION", "?"),
        "tunekit_validators": v, "torch_threads": torch.get_num_threads(),
        "tunekit_threads": v.get("THREADS", "?"), "omp_num_threads":
        os.environ.get("OMP_NUM_THREADS", "unset"), "rotate_mb": args.rotate_mb,
        "same_copy_per_pair": args.same_copy_per_pair,
        "results": os.path.abspath(args.results),
    }
    libs = ", ".join(f"{k[:-len('_VERSION')].lower()} {val}" for k, val in v.items()
                     if k.endswith("_VERSION") and k != "TUNEKIT_VERSION")
    scheme = ("both calls of a pair on one copy" if args.same_copy_per_pair
              else "a fresh copy per call")
    print(f"torch vs tunekit: nn.Linear GEMMs, {info['date']}")
    print(f"CPU: {info['cpu']}; lscpu: " +
          ", ".join(f"{k} {val}" for k, val in info["lscpu"].items()))
    print(f"Python {info['python']}, NumPy {info['numpy']}, torch {info['torch']} "
          f"({'; '.join(info['torch_libraries'])})")
    print(f"tunekit {info['tunekit']} ({libs}; ISA {v.get('CPU_ISA', '?')})")
    print(f"threads: torch.get_num_threads() = {info['torch_threads']}, tunekit THREADS = "
          f"{info['tunekit_threads']} (OMP_NUM_THREADS {info['omp_num_threads']}); "
          f"rotation over {args.rotate_mb:g} MB of W and x copies, {scheme}")
    print(f"results file: {info['results']} ({len(tunable.get_results())} results; "
          "tuning off)")
    print("calls: torch.nn.functional.linear(x, W) against tunekit.matmul(x, W.T) on the same "
          "torch CPU tensors (DLPack);")
    print("       bfloat16: torch returns bfloat16, tunekit float32 (its documented result).")
    print("ratio: median over pairs of torch_time / tunekit_time (> 1: tunekit faster); "
          "[q1, q3] its quartiles")
    return info


# --------------------------------------------------------------------------------------------
# Operands, checks and dispatch verification


def make_copies(torch, p: Problem, rotate_mb: float):
    """k copies of (x, W, W.T) of the problem's dtype, k = ceil(rotate / (W + x bytes))."""
    dt = getattr(torch, p.dtype)
    gen = torch.Generator().manual_seed(p.m * 1_000_003 + p.n * 1009 + p.k)
    x = torch.randn(p.n, p.k, generator=gen).to(dt)
    w = (torch.randn(p.m, p.k, generator=gen) / math.sqrt(p.k)).to(dt)
    pair_bytes = (x.numel() + w.numel()) * x.element_size()
    count = max(1, min(MAX_COPIES, math.ceil(rotate_mb * 2**20 / pair_bytes)))
    copies = [(x, w)] + [(x.clone(), w.clone()) for _ in range(count - 1)]
    return [(xc, wc, wc.T) for xc, wc in copies]


@contextlib.contextmanager
def captured_stdout(box: list):
    """Captures file descriptor 1 (where oneDNN prints its verbose lines) into box[0]."""
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 1)
        try:
            yield
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
            f.seek(0)
            box.append(f.read().decode(errors="replace"))


def torch_call_with_kernel(torch, x, w):
    """F.linear(x, w) once, with the kernel torch ran: the oneDNN primitive from torch's
    oneDNN verbose log, else torch's BLAS (MKL here)."""
    box = []
    try:
        with captured_stdout(box), torch.backends.mkldnn.verbose(
                torch.backends.mkldnn.VERBOSE_ON):
            y = torch.nn.functional.linear(x, w)
    except (AttributeError, RuntimeError):
        return torch.nn.functional.linear(x, w), "?"
    impls = [line.split(",")[6] for line in box[0].splitlines()
             if ",primitive,exec," in line and len(line.split(",")) > 6]
    return y, ("oneDNN " + impls[-1]) if impls else "BLAS (no oneDNN primitive)"


def mismatch(torch, p: Problem, x, w, y_torch, y_tunekit) -> float:
    """Worst |torch - tunekit| over its tolerance (> 1: a mismatch)."""
    s = torch.mm(x.abs().float(), w.abs().float().t())
    bound = TOL * s + 1e-30
    if p.dtype == "bfloat16":
        bound += 2.0**-8 * y_torch.float().abs()
    err = (y_torch.float() - y_tunekit).abs() / bound
    return float(err.max()) if not torch.isnan(err).any() else math.inf


class DispatchProbe:
    """Reads back what tunekit wrote to the private untuned file and log since the last look."""

    def __init__(self, scratch: str):
        self.scratch = scratch
        self.offsets = {}

    def new_lines(self, stem: str) -> List[str]:
        """New lines of the files whose names start with `stem` (tunekit inserts the device
        ordinal into the untuned file's name)."""
        lines = []
        for name in sorted(os.listdir(self.scratch)):
            if not name.startswith(stem):
                continue
            path = os.path.join(self.scratch, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                f.seek(self.offsets.get(path, 0))
                lines += f.read().splitlines()
                self.offsets[path] = f.tell()
        return lines


@dataclass
class Verification:
    solution: Optional[str]  # the stored solution, None without a tuned entry
    tuned_ms: Optional[float]
    problems: List[str] = field(default_factory=list)  # why it is not the tuned zero-copy call

    @property
    def hit(self) -> bool:
        return self.solution is not None and not self.problems


def first_call(tunekit, tunable, probe: DispatchProbe, p: Problem, x, wt):
    """tunekit.matmul's first call of the problem, with record-untuned on; returns the result
    and what the call's dispatch shows."""
    stored = {(r[0], r[1]): r for r in tunable.get_results()}
    entry = stored.get((p.op_signature, p.params_signature))
    v = Verification(entry[2] if entry else None, entry[3] if entry else None)
    if entry is None:
        v.problems.append(f"NO TUNED ENTRY for {p.op_signature},{p.params_signature}")
    probe.new_lines("untuned")
    probe.new_lines("tunekit.log")
    copies = tunekit._tunekit._copies()
    tunable.record_untuned_enable(True)
    try:
        y = tunekit.matmul(x, wt)
    finally:
        tunable.record_untuned_enable(False)
    if tunekit._tunekit._copies() != copies:
        v.problems.append("an operand was COPIED (not zero-copy)")
    for line in probe.new_lines("untuned"):
        v.problems.append(f"the call MISSED: it recorded {line}")
    for line in probe.new_lines("tunekit.log"):
        print(f"  {line}", file=sys.stderr)
        if p.params_signature in line or "Default" in line:
            v.problems.append(f"dispatch warning: {line}")
    return y, v


# --------------------------------------------------------------------------------------------
# Timing


def timed(fn, a, b) -> int:
    """ns of one fn(a, b); the result is freed after the clock is read."""
    start = time.perf_counter_ns()
    result = fn(a, b)
    end = time.perf_counter_ns()
    del result
    return end - start


def warm_up(f_torch, f_tunekit, copies):
    """Untimed calls of both on every copy (at least 3 each); returns both warm medians in ns."""
    t_torch, t_tunekit = [], []
    for i in range(max(3, len(copies))):
        x, w, wt = copies[i % len(copies)]
        t_torch.append(timed(f_torch, x, w))
        t_tunekit.append(timed(f_tunekit, x, wt))
    return statistics.median(t_torch[1:]), statistics.median(t_tunekit[1:])


def run_pairs(f_torch, f_tunekit, copies, pairs: int, same_copy: bool):
    """pairs alternating calls, torch first on even i; pair i's calls use copies 2i and 2i+1
    mod k (both copy i mod k with same_copy)."""
    t_torch, t_tunekit = [0] * pairs, [0] * pairs
    k = len(copies)
    gc.disable()
    try:
        for i in range(pairs):
            first, second = (i, i) if same_copy else (2 * i, 2 * i + 1)
            x1, w1, wt1 = copies[first % k]
            x2, w2, wt2 = copies[second % k]
            if i % 2 == 0:
                t_torch[i] = timed(f_torch, x1, w1)
                t_tunekit[i] = timed(f_tunekit, x2, wt2)
            else:
                t_tunekit[i] = timed(f_tunekit, x1, wt1)
                t_torch[i] = timed(f_torch, x2, w2)
    finally:
        gc.enable()
    return t_torch, t_tunekit


def pair_count(args, warm_torch: float, warm_tunekit: float) -> int:
    if args.repeats:
        return args.repeats
    per_pair_s = (warm_torch + warm_tunekit) / 1e9
    return max(5, min(MAX_PAIRS, round(args.target_s / max(per_pair_s, 1e-9))))


def summarize(t_torch, t_tunekit) -> dict:
    ratios = [a / b for a, b in zip(t_torch, t_tunekit)]
    q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios[0],) * 3
    return {"torch_ms": statistics.median(t_torch) / 1e6,
            "tunekit_ms": statistics.median(t_tunekit) / 1e6,
            "ratio": statistics.median(ratios), "ratio_q1": q1, "ratio_q3": q3,
            "pairs": len(ratios)}


# --------------------------------------------------------------------------------------------
# One problem


def bench_problem(args, torch, tunekit, tunable, probe, p: Problem) -> dict:
    """Checks, verifies and times one problem; returns its record."""
    copies = make_copies(torch, p, args.rotate_mb)
    x, w, wt = copies[0]
    y_torch, torch_kernel = torch_call_with_kernel(torch, x, w)
    y_tunekit, v = first_call(tunekit, tunable, probe, p, x, wt)
    err = mismatch(torch, p, x, w, y_torch, torch.from_numpy(y_tunekit))
    record = {"dtype": p.dtype, "m": p.m, "n": p.n, "k": p.k, "copies": len(copies),
              "torch_kernel": torch_kernel, "solution": v.solution, "tuned_ms": v.tuned_ms,
              "tuned_entry_hit": v.hit, "dispatch_problems": v.problems,
              "max_error_over_tolerance": err, "error": None,
              "op_signature": p.op_signature, "params_signature": p.params_signature}
    del y_torch, y_tunekit
    hit = f"hit -> {v.solution} (tuned {v.tuned_ms:.4g} ms)" if v.hit else \
        "NOT THE TUNED ZERO-COPY DISPATCH"
    print(f"{p.dtype} {p.label}: torch ran {torch_kernel}; tunekit "
          f"{p.op_signature},{p.params_signature} {hit}; {len(copies)} copies; "
          f"max error {err:.3g} of tolerance")
    for why in v.problems:
        print(f"  !!! {why}")
    if not err <= 1.0:
        record["error"] = f"MISMATCH: error {err:.3g} x the tolerance"
        print(f"  !!! ERROR: {record['error']}; not timed")
        return record
    f_torch, f_tunekit = torch.nn.functional.linear, tunekit.matmul
    warm = warm_up(f_torch, f_tunekit, copies)
    record.update(summarize(*run_pairs(f_torch, f_tunekit, copies, pair_count(args, *warm),
                                       args.same_copy_per_pair)))
    return record


# --------------------------------------------------------------------------------------------
# Report


def print_table(dtype: str, records: List[dict]) -> dict:
    """The dtype's table and summary line; returns the summary."""
    print(f"\n{dtype}: torch {TORCH_KERNEL[dtype]} (expected) vs tunekit tuned dispatch")
    print(f"{'problem (out x tokens x in)':28s} {'torch ms':>10s} {'tunekit ms':>10s} "
          f"{'ratio':>7s} {'[q1, q3]':>15s} {'pairs':>6s} {'copies':>6s}  tunekit solution")
    for r in records:
        label = f"{r['m']} x {r['n']} x {r['k']}"
        solution = r["solution"] if r["tuned_entry_hit"] else \
            f"NOT HIT ({r['solution'] or 'no tuned entry'}; Default runs on a miss)"
        if r["error"]:
            print(f"{label:28s} {r['error']}  {solution}")
            continue
        print(f"{label:28s} {r['torch_ms']:10.4f} {r['tunekit_ms']:10.4f} {r['ratio']:7.3f} "
              f"[{r['ratio_q1']:5.3f}, {r['ratio_q3']:5.3f}] {r['pairs']:6d} {r['copies']:6d}"
              f"  {solution}")
    timed_ = [r for r in records if not r["error"]]
    summary = {"problems": len(records), "timed": len(timed_),
               "geomean_ratio": math.exp(statistics.fmean(math.log(r["ratio"]) for r in timed_))
               if timed_ else None,
               "tie_or_better": sum(r["ratio"] >= TIE for r in timed_),
               "not_hit": sum(not r["tuned_entry_hit"] for r in records),
               "errors": sum(bool(r["error"]) for r in records)}
    if timed_:
        print(f"geometric mean of the paired ratios: {summary['geomean_ratio']:.3f} over "
              f"{len(timed_)} problems; tie or better (ratio >= {TIE}): "
              f"{summary['tie_or_better']} of {len(timed_)}")
    if summary["not_hit"]:
        print(f"!!! {summary['not_hit']} problem(s) did not run as the tuned zero-copy "
              "dispatch (see above)")
    if summary["errors"]:
        print(f"!!! {summary['errors']} problem(s) failed the correctness check")
    return summary


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", required=True, help="tunekit results CSV (tuned)")
    parser.add_argument("--dtype", choices=["float32", "bfloat16", "both"], default="both")
    parser.add_argument("--threads", type=int, default=2, help="threads of both libraries")
    parser.add_argument("--repeats", type=int, help="timed pairs per problem (>= 5; default: "
                        "scaled to --target-s)")
    parser.add_argument("--target-s", type=float, default=1.0,
                        help="seconds per problem when --repeats is not given (default 1)")
    parser.add_argument("--rotate-mb", type=float, default=256.0,
                        help="MiB of W and x copies rotated through (default 256)")
    parser.add_argument("--same-copy-per-pair", action="store_true",
                        help="both calls of a pair on one copy (the second finds W in cache "
                        "when it fits there)")
    parser.add_argument("--workload", nargs="+", help="untuned/results files of problems "
                        "(default: the Llama-2-7B float and bf16 files)")
    parser.add_argument("--shapes", help="'M,N,K;...' (out, tokens, in) instead of workloads")
    parser.add_argument("--json", help="also write the numbers to this JSON file")
    args = parser.parse_args()
    if args.repeats is not None and args.repeats < 5:
        parser.error("--repeats must be at least 5")
    if args.threads < 1:
        parser.error("--threads must be >= 1")
    if not (math.isfinite(args.rotate_mb) and args.rotate_mb >= 0):
        parser.error("--rotate-mb must be a finite number >= 0")
    if not (math.isfinite(args.target_s) and args.target_s > 0):
        parser.error("--target-s must be a finite number > 0")
    for path in args.workload or []:
        if not os.path.isfile(path):
            parser.error(f"--workload {path}: no such file")
    if args.json and not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
        parser.error(f"--json {args.json}: its folder does not exist")
    if args.shapes:
        try:
            parse_shapes(args.shapes, ["float32"])
        except ValueError as e:
            parser.error(f"--shapes {args.shapes!r}: {e} (expected 'M,N,K;...' of positive integers)")
    return args


def store_run(tunekit, records) -> None:
    """Stores the medians of the run in the user tuning database (TUNEKIT_DB), where
    `tunekit report` shows them beside `tunekit compare`'s runs (docs/report.md)."""
    rows = []
    for r in records:
        if r["error"] or "torch_ms" not in r:
            continue
        rows.append((r["op_signature"], r["params_signature"], "torch", "torch", r["torch_ms"]))
        rows.append((r["op_signature"], r["params_signature"], "tuned", "tuned", r["tunekit_ms"]))
    if not rows:
        return
    try:
        where = tunekit._tunekit.report.store_comparison(rows, "torch")
    except tunekit.TunekitError as e:
        print(f"note: the run was not stored in the tuning database: {e}", file=sys.stderr)
        return
    if where:
        print(f"run stored in the tuning database {where} (tunekit report shows it)")


def main() -> int:
    args = parse_args()
    problems = select_problems(args)
    if not problems:
        raise SystemExit("no problems to run")
    with tempfile.TemporaryDirectory(prefix="torch_vs_tunekit_") as scratch:
        prepare_environment(args.threads, scratch)
        import numpy as np

        try:
            import torch
        except ImportError:
            raise SystemExit(
                "torch_vs_tunekit: PyTorch is not installed for this interpreter "
                "(pip install torch; scripts/install-deps.sh does not install it)"
            ) from None
        try:
            import tunekit
            from tunekit import tunable
        except ImportError:
            raise SystemExit(
                "torch_vs_tunekit: the tunekit module is not importable "
                "(PYTHONPATH=build/python after the build, or pip install .)"
            ) from None

        torch.set_num_threads(args.threads)
        configure_tunekit(tunable, args.results)
        info = header(args, torch, tunable, np)
        probe = DispatchProbe(scratch)
        records = [bench_problem(args, torch, tunekit, tunable, probe, p) for p in problems]
        store_run(tunekit, records)
    info["process_threads"] = len(os.listdir("/proc/self/task"))
    summaries = {}
    for dtype in dict.fromkeys(r["dtype"] for r in records):
        summaries[dtype] = print_table(dtype, [r for r in records if r["dtype"] == dtype])
    print(f"\nOS threads in the process after the run: {info['process_threads']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"header": info, "problems": records, "summary": summaries}, f, indent=1)
    # A mismatch, or a call that did not run the tuned entry (the figures would not be what they
    # claim), fails the run.
    return 1 if any(r["error"] or not r["tuned_entry_hit"] for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
