#!/usr/bin/env python3
"""Kernel Tuner's adaptive_tabu_greywolf with its repair step varied, on brute-forced data.

The strategy repairs an invalid child with the *first* valid neighbour that
Searchspace.get_neighbors returns (adjacent, then Hamming, then strictly-adjacent). That list
follows the order of the search space's configuration list, which Kernel Tuner's constraint
solver builds with parameter values descending. This script replays the strategy with that
repair ("original"), with a uniformly random valid neighbour ("random-repair") and with the last
one in the list ("last-repair"), so the effect of the list order can be measured.

Usage: atgw_repair_ablation.py FILE.json [--variants original,random-repair,last-repair]
                               [--runs 50] [--budget 200] [--jobs N]
FILE is a Kernel Tuner cache file (uncompressed; Kernel Tuner cannot read .gz). Run r uses
seed r, as scripts/kernel_tuner_compare.py does; it prints the mean fraction of optimum after 50,
100 and 200 unique evaluations per variant.
"""
import argparse
import multiprocessing as mp
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_tuner_compare as ktc  # noqa: E402


def _repair_with(choose):
    def repair(self, sol):
        if not self.constraint_aware or self.searchspace.is_param_config_valid(tuple(sol)):
            return sol
        for method in ("adjacent", "Hamming", "strictly-adjacent"):
            valid = [nb for nb in self.searchspace.get_neighbors(tuple(sol), neighbor_method=method)
                     if self.searchspace.is_param_config_valid(nb)]
            if valid:
                return list(choose(valid))
        return self.sample_valid()
    return repair


VARIANTS = {
    "original": None,
    "random-repair": _repair_with(random.choice),
    "last-repair": _repair_with(lambda valid: valid[-1]),
}


def _run(args):
    variant = args[-1]
    import kernel_tuner.strategies.gen_adaptive_tabu_greywolf as atgw
    if VARIANTS[variant] is not None:
        atgw.AdaptiveTabuGreyWolf.repair = VARIANTS[variant]
    return ktc.kt_run(args[:-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("--variants", default="original,random-repair,last-repair")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    doc = ktc.load_json(args.data)
    opt = ktc.optimum(doc)
    keys = doc["tune_params_keys"]
    budgets = [b for b in (50, 100, 200) if b <= args.budget]
    print("| variant | " + " | ".join(f"FoO@{b}" for b in budgets) + " |")
    print("|---|" + "---|" * len(budgets))
    for variant in args.variants.split(","):
        if variant not in VARIANTS:
            sys.exit(f"unknown variant '{variant}' (known: {', '.join(VARIANTS)})")
        jobs = [(args.data, "adaptive_tabu_greywolf", seed, args.budget, keys, variant) for seed in range(args.runs)]
        with mp.Pool(args.jobs) as pool:
            done = pool.map(_run, jobs)
        failed = [err for trace, _, err in done if trace is None]
        if failed:
            sys.exit(f"{variant}: {failed[0]}")
        traces = [trace for trace, _, _ in done]
        print(f"| {variant} | " + " | ".join(f"{ktc.fraction_of_optimum(traces, opt, b):.4f}" for b in budgets) + " |")


if __name__ == "__main__":
    main()
