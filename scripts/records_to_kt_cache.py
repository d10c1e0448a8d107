#!/usr/bin/env python3
"""Writes a Kernel Tuner cache file (replay data for `tunekit simulate`) from a tunekit tuning log
of an exhaustive `tune-kernel` run: one entry per configuration record, its time the mean of the
record's costs in ms, a failed record as RuntimeFailedConfig; parameter values from the spec.

Usage: python3 scripts/records_to_kt_cache.py SPEC.json LOG.json OUT.json
"""
import json
import sys


def main():
    spec_path, log_path, out_path = sys.argv[1:4]
    with open(spec_path) as f:
        params = json.load(f)["space"]["params"]
    keys = list(params)
    cache = {}
    with open(log_path) as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            cfg = {name: value for name, _, value in rec["config"]["entity"]}
            costs, error_no, all_cost = rec["result"][0], rec["result"][1], rec["result"][2]
            entry = dict(cfg)
            entry["time"] = 1e3 * sum(costs) / len(costs) if error_no == 0 else "RuntimeFailedConfig"
            entry["compile_time"] = 1e3 * rec.get("build_cost", 0.0)
            entry["benchmark_time"] = 1e3 * max(0.0, all_cost - rec.get("build_cost", 0.0))
            entry["verification_time"] = entry["framework_time"] = entry["strategy_time"] = 0
            cache[",".join(str(cfg[k]) for k in keys)] = entry
    doc = {"device_name": "", "kernel_name": rec["input"][1], "problem_size": [1], "tune_params_keys": keys,
           "tune_params": params, "objective": "time", "cache": cache}
    with open(out_path, "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
