"""Llama-2-7B's GEMMs tuned offline from Python, as torch.cuda.tunable does it: the problems a
run recorded (examples/workloads/llama2-7b_float_untuned.csv, TunableOp's untuned format) are
tuned with tunekit.tunable.tune_gemm_in_file, every winner appended to the results file as it is
found; a later process that sets the same results file dispatches tunekit.matmul to the
winners without tuning.

Usage: python examples/python/tune_llama_offline.py [--results FILE] [--limit N] [--fresh]
       [--max-duration MS] [--max-iterations N]
"""

import argparse
import os
import tempfile

import tunekit
from tunekit import tunable

HERE = os.path.dirname(os.path.abspath(__file__))
UNTUNED = os.path.join(HERE, "..", "workloads", "llama2-7b_float_untuned.csv")


def problems_file(limit):
    """The untuned file, or a copy of its first `limit` problems (smoke runs)."""
    if limit is None:
        return UNTUNED
    with open(UNTUNED) as f:
        lines = [line for line in f if line.strip()][:limit]
    fd, path = tempfile.mkstemp(prefix="llama_untuned_", suffix=".csv")
    with os.fdopen(fd, "w") as f:
        f.writelines(lines)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default="llama2-7b_float_results.csv",
                        help="results file (TunableOp CSV; kept results are not tuned again)")
    parser.add_argument("--limit", type=int, help="tune only the first N problems")
    parser.add_argument("--fresh", action="store_true",
                        help="delete the results file first (tune everything again)")
    parser.add_argument("--max-duration", type=int, default=30,
                        help="time budget per candidate, ms (default 30)")
    parser.add_argument("--max-iterations", type=int, default=100,
                        help="timed calls per candidate at most (default 100)")
    args = parser.parse_args()
    if args.fresh and os.path.exists(args.results):
        os.remove(args.results)

    tunable.enable(True)
    tunable.tuning_enable(True)
    tunable.record_untuned_enable(False)
    tunable.set_filename(args.results)
    tunable.set_max_tuning_duration(args.max_duration)
    tunable.set_max_tuning_iterations(args.max_iterations)
    tunable.tune_gemm_in_file(problems_file(args.limit))

    print(f"{'problem':<48} {'winner':<36} {'ms':>9}")
    for _op, params, solution, ms in tunable.get_results():
        print(f"{params:<48} {solution:<36} {ms:9.4f}")
    print(f"results: {tunable.get_filename()} (tunekit.tunable.set_filename() in the serving "
          "process makes tunekit.matmul dispatch to these winners)")


if __name__ == "__main__":
    main()
