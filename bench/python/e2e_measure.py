"""Measurements around the model benchmark (llama_e2e.py): memory read bandwidth, the share of
a stock decode step in matrix products, the override's cost per call, and thread-pool
interference between torch's kernels and tunekit's."""
import statistics
import time

import torch

_GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")


def read_bandwidth(gib=1.0, repeats=7):
    """Bytes per second of a streaming read (amax) of a `gib` GiB float tensor, the best of
    `repeats`, with torch's threads: the read bound of a decode step is its weight bytes at
    this rate."""
    x = torch.ones(int(gib * (1 << 30)) // 4)
    x.amax()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        x.amax()
        times.append(time.perf_counter() - t)
    return x.numel() * 4 / min(times)


def decode_step_gemm_share(model, prompt):
    """Share of one stock batch-1 decode step's CPU time (self time of every op, profiled)
    spent in aten::mm/addmm/bmm/baddbmm."""
    from torch.profiler import ProfilerActivity, profile

    ids = torch.randint(1, 32000, (1, prompt), generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        out = model(ids, use_cache=True)
        nxt = out.logits[:, -1:].argmax(-1)
        cache = out.cache
        model(nxt, cache=cache, use_cache=True)  # warm
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            model(nxt, cache=cache, use_cache=True)
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    gemm = sum(e.self_cpu_time_total for e in events if e.key in _GEMM_OPS)
    return gemm / total if total else 0.0


def _per_call_us(fn, calls):
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls * 1e6


def gemm_overhead(tt, n=8, blocks=21, calls=2000):
    """The override's cost on a tiny float32 product (n x n @ n x n) run by PyTorch's own kernel
    both ways (tuning off: tunekit's Default): blocks of `calls` calls alternate stock and
    enabled; per-call medians and their difference."""
    from tunekit import tunable

    a, b = torch.randn(n, n), torch.randn(n, n)
    was_tuning = tunable.tuning_is_enabled()
    tunable.tuning_enable(False)
    stock, tuned = [], []
    try:
        for i in range(blocks):
            for mode in ((False, True) if i % 2 == 0 else (True, False)):
                tt.enable(mode)
                (tuned if mode else stock).append(_per_call_us(lambda: torch.mm(a, b), calls))
    finally:
        tt.disable()
        tunable.tuning_enable(was_tuning)
    s, t = statistics.median(stock), statistics.median(tuned)
    return {"shape": f"{n}x{n}x{n} float32", "stock_us": s, "tunekit_us": t,
            "overhead_us": statistics.median(x - y for x, y in zip(tuned, stock))}


def _timed_second(first, second):
    first()
    t = time.perf_counter()
    second()
    return time.perf_counter() - t


def pool_interference(tt, dtype, rounds=41):
    """Whether torch's OpenMP pool and tunekit's slow each other: a tunekit-served product
    (4096 x 4096 weights, 1 token) timed right after itself and right after a torch kernel on
    torch's pool (an elementwise op over 1 MiB: it wakes the pool but leaves the caches to the
    product), and that torch kernel right after itself and right after the product; then the torch
    kernel after torch's own product (stock: the cache misses a 64 MiB weight stream leaves
    behind, which are not pool interference). Medians in us; ratios "after the other" / "after
    itself" (1.0: no interference)."""
    tt.enable()
    w = torch.randn(4096, 4096).to(dtype)
    x = torch.randn(1, 4096).to(dtype)
    small = torch.randn(1 << 18)

    def gemm():
        torch.nn.functional.linear(x, w)

    def elementwise():
        small.mul_(1.0)

    gemm()  # tuned (or loaded) before timing
    pairs = {"gemm_after_gemm": (gemm, gemm), "gemm_after_torch": (elementwise, gemm),
             "torch_after_torch": (elementwise, elementwise), "torch_after_gemm": (gemm, elementwise)}
    times = {k: [] for k in pairs}
    with torch.inference_mode():
        for _ in range(rounds):
            for name, (first, second) in pairs.items():
                times[name].append(_timed_second(first, second))
        tt.disable()  # the same two pairs with torch's own product: what a stock model sees
        stock = {"stock_gemm_after_torch": (elementwise, gemm),
                 "torch_after_stock_gemm": (gemm, elementwise)}
        times.update({k: [] for k in stock})
        for _ in range(rounds):
            for name, (first, second) in stock.items():
                times[name].append(_timed_second(first, second))
    med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
    return {**{k + "_us": v for k, v in med.items()},
            "gemm_ratio": med["gemm_after_torch"] / med["gemm_after_gemm"],
            "torch_ratio": med["torch_after_gemm"] / med["torch_after_torch"],
            "torch_ratio_stock": med["torch_after_stock_gemm"] / med["torch_after_torch"]}


def python_override_overhead(n=8, blocks=21, calls=2000):
    """What a Python override registered with torch.library costs per call, the alternative to
    tunekit.torch's C++ extension: aten::mm's CPU kernel replaced by a Python function that only
    forwards to PyTorch's own mm.out (no tuning at all), against stock mm; medians in us."""
    a, b = torch.randn(n, n), torch.randn(n, n)

    def forward(x, w):
        return torch.ops.aten.mm.out(x, w, out=torch.empty(x.shape[0], w.shape[1]))

    stock, python = [], []
    for i in range(blocks):
        for use in ((False, True) if i % 2 == 0 else (True, False)):
            lib = None
            if use:
                lib = torch.library.Library("aten", "IMPL")
                lib.impl("mm", forward, "CPU")
            (python if use else stock).append(_per_call_us(lambda: torch.mm(a, b), calls))
            if lib is not None:
                lib._destroy()
    return {"stock_us": statistics.median(stock), "python_us": statistics.median(python),
            "overhead_us": statistics.median(p - s for p, s in zip(python, stock))}
