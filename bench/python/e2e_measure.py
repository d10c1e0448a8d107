"""Measurements around the model benchmark (llama_e2e.py): memory read bandwidth, the share of
a stock decode step in matrix products, the override's cost per call, and thread-pool
interference between torch's kernels and tunekit's."""
import statistics
import time

import torch

_GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")


def read_bandwidth(gib=1.0, repeats=7):
    """Bytes per second of a summing read of a `gib` GiB float tensor (median of `repeats`),
    with torch's threads: the read bound of a decode step is its weight bytes at this rate."""
    x = torch.ones(int(gib * (1 << 30)) // 4)
    x.sum()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        x.sum()
        times.append(time.perf_counter() - t)
    return x.numel() * 4 / statistics.median(times)


def decode_step_gemm_share(model, prompt):
    """Share of one stock batch-1 decode step's CPU time (self time of every op, profiled)
    spent in aten::mm/addmm/bmm/baddbmm."""
    from torch.profiler import ProfilerActivity, profile

    ids = torch.randint(1, 32000, (1, prompt), generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        out = model(ids, use_cache=True)
        nxt = out.logits[:, -1:].argmax(-1)
        model(nxt, past_key_values=out.past_key_values, use_cache=True)  # warm
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            model(nxt, past_key_values=out.past_key_values, use_cache=True)
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


def pool_interference(tt, dtype, rounds=41):
    """How much a tunekit-served product slows when a torch kernel on torch's OpenMP pool ran
    just before it: the product (4096 x 4096 weights, 1 token) timed alone, and right after a
    torch elementwise op over 64 MiB; medians and their ratio (1.0: no interference)."""
    tt.enable()
    w = torch.randn(4096, 4096).to(dtype)
    x = torch.randn(1, 4096).to(dtype)
    big = torch.randn(16 << 20)
    torch.nn.functional.linear(x, w)  # tuned (or loaded) before timing
    alone, after = [], []
    with torch.inference_mode():
        for i in range(rounds):
            t = time.perf_counter()
            torch.nn.functional.linear(x, w)
            alone.append(time.perf_counter() - t)
            big.mul_(1.0)
            t = time.perf_counter()
            torch.nn.functional.linear(x, w)
            after.append(time.perf_counter() - t)
    tt.disable()
    a, b = statistics.median(alone), statistics.median(after)
    return {"alone_us": a * 1e6, "after_torch_us": b * 1e6, "ratio": b / a}
