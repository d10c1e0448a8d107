"""Helpers shared by the real-kernel side-by-side scripts (kernel_tuner_kernel_compare.py,
metaschedule_compare.py): reading a `tunekit tune-kernel` spec, running tunekit on a copy of it
and summarising its log.

The log is AutoTVM v0.2 JSON lines: "result" is [costs, error_no, all_cost, timestamp] with costs
in seconds per call (one entry per kept repeat) and all_cost the trial's wall seconds (build and
run). Each trial's build seconds are the record's "build_cost" key, tunekit's extension written
next to "space_hash" whenever a build ran (measure_batch takes it from the builder); a record
without it (no build ran) counts 0.
"""

import json
import os
import shlex
import statistics
import subprocess
import time


def cpu_name():
    """The "model name" of /proc/cpuinfo (figures name the CPU they ran on)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def load_spec(path):
    with open(path) as f:
        spec = json.load(f)
    spec["_dir"] = os.path.dirname(os.path.abspath(path))
    return spec


def spec_path(spec, rel):
    return rel if os.path.isabs(rel) else os.path.join(spec["_dir"], rel)


def scalar_values(spec, size=None):
    """Scalar arguments by name; `size` overrides every int32 scalar (a square problem)."""
    out = {}
    for a in spec["arguments"]:
        if "value" in a:
            out[a["name"]] = size if (size and a["dtype"] in ("int32", "int")) else a["value"]
    return out


def eval_expr(text, scalars):
    if isinstance(text, (int, float)):
        return text
    return eval(str(text), {"__builtins__": {}}, dict(scalars))


def space_params(spec):
    space = spec["space"]
    params = space.get("params", space.get("parameters"))
    if isinstance(params, list):
        params = {p["name"]: p["values"] for p in params}
    return {k: list(v) for k, v in params.items()}, list(space.get("restrictions", []))


def valid_configs(spec):
    """Every point of the space that passes the restrictions (Python evaluation)."""
    import itertools

    params, restrictions = space_params(spec)
    names = list(params)
    out = []
    for values in itertools.product(*(params[n] for n in names)):
        cfg = dict(zip(names, values))
        if all(eval(r, {"__builtins__": {}}, dict(cfg)) for r in restrictions):
            out.append(cfg)
    return out


def compile_command(spec, config, out_path, march="native", compiler="g++"):
    cmd = [compiler] + list(spec.get("flags", [])) + ["-shared", "-fPIC", "-march=" + march]
    cmd += ["-D%s=%s" % (k, v) for k, v in config.items()]
    cmd += [spec_path(spec, spec["source"]), "-o", out_path]
    return cmd


def write_run_spec(spec, path, *, strategy, budget, log, size=None, seed=None, cache_dir=None,
                   n_parallel=None, isolation=None):
    """A copy of the spec for one tunekit run: absolute paths, the given strategy/budget/log."""
    doc = {k: v for k, v in spec.items() if not k.startswith("_")}
    doc["source"] = spec_path(spec, spec["source"])
    ref = doc.get("verify", {}).get("reference")
    if isinstance(ref, dict) and "source" in ref:
        doc["verify"] = dict(doc["verify"])
        doc["verify"]["reference"] = dict(ref, source=spec_path(spec, ref["source"]))
    if size:
        doc["arguments"] = [dict(a, value=size) if ("value" in a and a["dtype"] in ("int32", "int"))
                            else a for a in doc["arguments"]]
    doc["strategy"] = strategy
    doc["budget"] = budget
    doc["log"] = os.path.abspath(log)
    if isolation:
        doc["isolation"] = isolation
    if seed is not None:
        doc["seed"] = seed
    build = dict(doc.get("build", {}))
    if cache_dir:
        build["cache_dir"] = os.path.abspath(cache_dir)
    if n_parallel is not None:
        build["n_parallel"] = n_parallel
    if build:
        doc["build"] = build
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def read_log(path):
    recs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            r = json.loads(line)
            costs, error_no, all_cost, _ = r["result"][:4]
            cfg = {e[0]: e[2] for e in r["config"]["entity"]}
            build = r.get("build_cost")
            recs.append({"config": cfg, "costs": costs, "error_no": error_no,
                         "all_cost": all_cost, "build_cost": build})
    return recs


def run_tunekit(tunekit, spec, work, *, strategy, budget, size=None, seed=0, env=None,
                n_parallel=None, isolation=None):
    """Runs `tunekit tune-kernel` once on a fresh log and artefact cache; returns a summary.
    `isolation` overrides the spec's ("process", "worker", "in-process")."""
    os.makedirs(work, exist_ok=True)
    tag = "%s-%d" % (strategy, budget) + ("-" + isolation if isolation else "")
    log = os.path.join(work, "tunekit-%s.log.json" % tag)
    cache = os.path.join(work, "tunekit-cache-%s" % tag)
    for p in (log,):
        if os.path.exists(p):
            os.remove(p)
    subprocess.run(["rm", "-rf", cache], check=True)
    run_spec = os.path.join(work, "spec-%s.json" % tag)
    write_run_spec(spec, run_spec, strategy=strategy, budget=budget, log=log, size=size,
                   seed=seed, cache_dir=cache, n_parallel=n_parallel, isolation=isolation)
    cmd = [tunekit, "tune-kernel", run_spec]
    print("$", " ".join(shlex.quote(c) for c in cmd), flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t0
    with open(os.path.join(work, "tunekit-%s.out" % tag), "w") as f:
        f.write(proc.stdout)
    if proc.returncode != 0:
        raise RuntimeError("tunekit failed (exit %d):\n%s" % (proc.returncode, proc.stdout[-3000:]))
    recs = read_log(log)
    return summarise_tunekit(spec, recs, wall, size)


def kernel_calls_per_trial(spec):
    t = spec.get("timing", {})
    return t.get("warmup", 1) + t.get("number", 4) * t.get("repeat", 3)


def summarise_tunekit(spec, recs, wall, size):
    ok = [r for r in recs if r["error_no"] == 0]
    best = min(ok, key=lambda r: statistics.mean(r["costs"])) if ok else None
    calls = kernel_calls_per_trial(spec)
    kernel_s = sum(statistics.mean(r["costs"]) * calls for r in ok)
    builds = [r["build_cost"] or 0.0 for r in recs]
    n = max(len(recs), 1)
    return {
        "tool": "tunekit",
        "trials": len(recs),
        "failed": len(recs) - len(ok),
        "best_s": statistics.mean(best["costs"]) if best else None,
        "best_config": best["config"] if best else None,
        "wall_s": wall,
        "build_s": sum(builds),
        "trials_without_build_cost": sum(1 for r in recs if r["build_cost"] is None),
        "kernel_s": kernel_s,
        "all_cost_s": sum(r["all_cost"] for r in recs),
        "overhead_per_trial_s": (wall - sum(builds) - kernel_s) / n,
        "outside_trials_per_trial_s": (wall - sum(r["all_cost"] for r in recs)) / n,
    }


def gflops(spec, seconds, size=None):
    if not seconds:
        return None
    return eval_expr(spec["flop"], scalar_values(spec, size)) / seconds / 1e9


def fill_arrays(spec, size=None, seed=0):
    """numpy arguments in call order (scalars as numpy scalars), fills as the spec asks."""
    import numpy as np

    rng = np.random.default_rng(seed)
    scalars = scalar_values(spec, size)
    dt = {"float32": np.float32, "float": np.float32, "float64": np.float64, "double": np.float64,
          "int32": np.int32, "int": np.int32, "int64": np.int64}
    out = []
    for a in spec["arguments"]:
        t = dt[a["dtype"]]
        if "value" in a:
            out.append(t(scalars[a["name"]]))
            continue
        n = int(eval_expr(a["size"], scalars))
        fill = a.get("fill", "random")
        if fill == "random":
            out.append(rng.uniform(-1, 1, n).astype(t))
        elif fill == "ones":
            out.append(np.ones(n, t))
        else:
            out.append(np.zeros(n, t))
    return out
