"""Per-call overhead of the pybind11 and nanobind builds of one trivial function.

Each variant is timed in interleaved rounds (one round = every variant once, in rotating order),
each round the best of 5 timeit repeats of N calls; the median over the rounds is printed in
ns per call. Run through run.sh, which builds the two modules first.
"""
import argparse
import os
import statistics
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cpu_info import cpu_name  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()

    import overhead_nanobind as nbm
    import overhead_pybind11 as pbm

    a = np.ones((4, 4), dtype=np.float32)
    b = np.ones((4, 4), dtype=np.float32)
    variants = {
        "pybind11 typed (array_t in, new array out)": lambda: pbm.typed(a, b),
        "nanobind typed (ndarray in, new NumPy array out)": lambda: nbm.typed(a, b),
        "pybind11 handles (dispatch only)": lambda: pbm.handles(a, b),
        "nanobind handles (dispatch only)": lambda: nbm.handles(a, b),
        "numpy.matmul 4x4 float32 (for scale)": lambda: np.matmul(a, b),
    }
    names = list(variants)
    samples = {n: [] for n in names}
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            t = min(timeit.repeat(variants[n], number=args.calls, repeat=5))
            samples[n].append(t / args.calls * 1e9)
    print(f"CPU: {cpu_name()}; Python {sys.version.split()[0]}, NumPy {np.__version__}")
    print(f"{'variant':52s} {'median ns/call':>15s} {'min':>8s} {'max':>8s}")
    for n in names:
        s = samples[n]
        print(f"{n:52s} {statistics.median(s):15.1f} {min(s):8.1f} {max(s):8.1f}")


if __name__ == "__main__":
    main()
