"""Call overhead of tunekit.matmul against numpy.matmul on a tuned 4x4x4 float32 problem.

Tunes the problem first (default budget, results in a temporary file), then times, interleaved
in one run, numpy.matmul(a, b), tunekit.matmul(a, b) and both with out= on the same arrays:
each round takes the best of 5 timeit repeats of --calls calls per variant (the order rotating
between rounds); the median over --rounds rounds is printed in ns per call, with tunekit's time
as a ratio of NumPy's (the issue's target: at most 1.5x).

Usage: PYTHONPATH=build/python python3 bench/python/matmul_overhead.py [--rounds 21] [--calls 20000]
"""

import argparse
import os
import statistics
import sys
import tempfile
import timeit

import numpy as np

import tunekit
from cpu_info import cpu_name
from tunekit import tunable


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="tunekit_overhead_")
    tunable.set_filename(os.path.join(tmp, "results.csv"))
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (4, 4)).astype(np.float32)
    b = rng.uniform(-1, 1, (4, 4)).astype(np.float32)
    out = np.empty((4, 4), np.float32)
    tunekit.matmul(a, b)  # tunes the problem
    winner = [r for r in tunable.get_results() if r[1].startswith("nn_4_4_4")]
    assert np.allclose(tunekit.matmul(a, b), a @ b, atol=1e-5)

    variants = {
        "numpy.matmul(a, b)": lambda: np.matmul(a, b),
        "tunekit.matmul(a, b)": lambda: tunekit.matmul(a, b),
        "numpy.matmul(a, b, out=c)": lambda: np.matmul(a, b, out=out),
        "tunekit.matmul(a, b, out=c)": lambda: tunekit.matmul(a, b, out=out),
    }
    names = list(variants)
    samples = {n: [] for n in names}
    for r in range(args.rounds):
        for n in names[r % len(names):] + names[:r % len(names)]:
            best = min(timeit.repeat(variants[n], number=args.calls, repeat=5))
            samples[n].append(best / args.calls * 1e9)
    median = {n: statistics.median(samples[n]) for n in names}

    print(f"CPU: {cpu_name()}; Python {sys.version.split()[0]}, NumPy {np.__version__}")
    if winner:
        print(f"problem: {winner[0][0]},{winner[0][1]} -> {winner[0][2]} ({winner[0][3]:.6f} ms)")
    print(f"{'variant':30s} {'median ns/call':>15s} {'min':>8s} {'max':>8s}")
    for n in names:
        s = samples[n]
        print(f"{n:30s} {median[n]:15.1f} {min(s):8.1f} {max(s):8.1f}")
    plain = median["tunekit.matmul(a, b)"] / median["numpy.matmul(a, b)"]
    with_out = median["tunekit.matmul(a, b, out=c)"] / median["numpy.matmul(a, b, out=c)"]
    print(f"ratio tunekit/numpy: {plain:.2f}x (new output), {with_out:.2f}x (out=); target <= 1.5x")


if __name__ == "__main__":
    main()
