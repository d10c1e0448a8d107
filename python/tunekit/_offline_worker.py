"""One worker process of tunekit.tunable.mgpu_tune_gemm_in_file:
``python -m tunekit._offline_worker PROBLEMS RANK RANKS BASE REPORT`` tunes its round-robin share
of the problems in PROBLEMS and writes its report (the C++ wire form) to REPORT."""

import os
import sys

from . import _tunekit


def main(argv) -> int:
    problems_path, rank, ranks, base, report_path = argv
    with open(problems_path, encoding="utf-8") as f:
        problems = f.read()
    report = _tunekit.offline.tune_worker(problems, int(rank), int(ranks), base)
    with open(report_path + ".tmp", "w", encoding="utf-8") as f:
        f.write(report)
    os.replace(report_path + ".tmp", report_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
