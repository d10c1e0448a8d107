#!/usr/bin/env python3
"""A real model through tunekit.torch: Hugging Face LlamaForCausalLM with Llama-2-7B's dimensions.

The model is built from a LlamaConfig (hidden 4096, intermediate 11008, 32 heads, vocabulary
32000, --layers layers; random weights from a fixed seed, nothing downloaded). Each round runs a
greedy `generate` of --new-tokens tokens after a --prompt-token prompt once stock and once with
tunekit.torch enabled, the order alternating round by round, after one tuning run (online
tuning into --results, or the file as it is when it holds the problems already). Per batch it
prints the median prefill time and decode rate of both modes and their paired ratios
(stock / tunekit for times), whether the generated token ids agree, the share of the model's
GEMM FLOPs tunekit served (with the reasons for the rest), the decode rate's share of the read
bound (weights read per decode step at the bandwidth measured here), and the share of a stock
decode step spent in matrix products (torch.profiler). --overhead measures the override's cost
per call on a tiny product; --pools the thread-pool interference between torch and tunekit.

  python bench/python/llama_e2e.py --dtype float32 --batch 1 16 --results llama_t2.csv
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_measure import (decode_step_gemm_share, gemm_overhead, pool_interference,  # noqa: E402
                         python_override_overhead, read_bandwidth)


def build_model(dtype, layers, attention):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=4096, intermediate_size=11008, num_attention_heads=32,
                         num_key_value_heads=32, num_hidden_layers=layers, vocab_size=32000,
                         max_position_embeddings=4096, attn_implementation=attention)
    model = LlamaForCausalLM(config).to(dtype).eval()
    return model


class Clock:
    """A generate() streamer that timestamps the prompt and every new token."""

    def __init__(self):
        self.stamps = []

    def put(self, _value):
        self.stamps.append(time.perf_counter())

    def end(self):
        pass


def generate(model, ids, new_tokens):
    clock = Clock()
    with torch.inference_mode():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens,
                             min_new_tokens=new_tokens, do_sample=False, pad_token_id=0,
                             streamer=clock)
    s = clock.stamps
    prefill_ms = (s[1] - s[0]) * 1e3
    decode_tps = (len(s) - 2) * ids.shape[0] / (s[-1] - s[1])
    return out[:, ids.shape[1]:], prefill_ms, decode_tps


def weight_bytes(model):
    """Bytes a decode step reads: every parameter but the embedding table (rows are gathered)."""
    embed = model.get_input_embeddings().weight
    return sum(p.numel() * p.element_size() for p in model.parameters() if p is not embed)


def run_batch(model, tt, args, batch):
    from tunekit import tunable

    seen = len(tunable.get_confirmations())
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 32000, (batch, args.prompt), generator=g)
    tt.enable()
    generate(model, ids, args.new_tokens)  # tunes every problem once (online) or loads them
    rows = {"stock": [], "tunekit": []}
    tokens = {}
    for r in range(args.rounds):
        order = ("stock", "tunekit") if r % 2 == 0 else ("tunekit", "stock")
        for mode in order:
            tt.enable(mode == "tunekit")
            if mode == "tunekit":
                tt.reset_stats()
            out, prefill, decode = generate(model, ids, args.new_tokens)
            rows[mode].append((prefill, decode))
            tokens[mode] = out
            if mode == "tunekit":
                served = tt.stats()
    tt.disable()
    res = summarise(rows, tokens, served, batch)
    res["confirmations"] = [list(c) for c in tunable.get_confirmations()[seen:]]
    return res


def summarise(rows, tokens, served, batch):
    pre = [s[0] / t[0] for s, t in zip(rows["stock"], rows["tunekit"])]
    dec = [t[1] / s[1] for s, t in zip(rows["stock"], rows["tunekit"])]
    total = sum(f for _, f in served.values())
    return {
        "batch": batch,
        "prefill_ms": {m: statistics.median(x[0] for x in v) for m, v in rows.items()},
        "decode_tokens_per_s": {m: statistics.median(x[1] for x in v) for m, v in rows.items()},
        "prefill_ratio": statistics.median(pre),
        "decode_ratio": statistics.median(dec),
        "decode_ratios": dec,
        "tokens_identical": bool(torch.equal(tokens["stock"], tokens["tunekit"])),
        "token_agreement": float((tokens["stock"] == tokens["tunekit"]).float().mean()),
        "gemm_flops_served": served["served"][1] / total if total else 0.0,
        "fell_through": {k: v for k, v in served.items() if k != "served" and v[0]},
    }


def print_batch(res, dtype, bound_tps):
    p, d = res["prefill_ms"], res["decode_tokens_per_s"]
    print(f"{dtype} batch {res['batch']}: prefill stock {p['stock']:.0f} ms, tunekit "
          f"{p['tunekit']:.0f} ms (paired {res['prefill_ratio']:.3f}x); decode stock "
          f"{d['stock']:.2f} tok/s, tunekit {d['tunekit']:.2f} tok/s (paired "
          f"{res['decode_ratio']:.3f}x, rounds {', '.join(f'{x:.3f}' for x in res['decode_ratios'])})")
    print(f"  tokens identical: {res['tokens_identical']}; agreement {res['token_agreement']:.3f}; "
          f"GEMM FLOPs served by tunekit {100 * res['gemm_flops_served']:.1f}%"
          + (f"; fell through: {res['fell_through']}" if res["fell_through"] else ""))
    lost = [c for c in res["confirmations"] if not c[5]]
    print(f"  confirmed in place against torch: {len(res['confirmations']) - len(lost)} winners "
          f"kept, {len(lost)} lost to torch's kernel"
          + "".join(f"\n    {c[1]}: {c[2]} {c[3]:.3f} ms, torch {c[4]:.3f} ms" for c in lost))
    if res["batch"] == 1:
        print(f"  read bound {bound_tps:.2f} tok/s: stock at {100 * d['stock'] / bound_tps:.0f}%, "
              f"tunekit at {100 * d['tunekit'] / bound_tps:.0f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--attention", choices=["sdpa", "eager"], default="sdpa",
                    help="sdpa: PyTorch's fused attention kernel (its products are not aten "
                    "matrix products); eager: attention through matmul (bmm)")
    ap.add_argument("--results", default="llama_e2e_results.csv",
                    help="tunekit results file: tuned online on the first run, read afterwards")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--overhead", action="store_true", help="override cost per tiny product")
    ap.add_argument("--pools", action="store_true", help="torch/tunekit thread-pool interference")
    ap.add_argument("--no-profile", action="store_true", help="skip the stock decode profile")
    args = ap.parse_args()
    if min(args.batch) < 1 or args.prompt < 1 or args.new_tokens < 2 or args.rounds < 1:
        ap.error("--batch, --prompt and --rounds must be >= 1, --new-tokens >= 2")
    torch.set_num_threads(args.threads)
    import tunekit.torch as tt
    from tunekit import tunable

    tunable.set_filename(args.results)
    dtype = getattr(torch, args.dtype)
    print(f"torch {torch.__version__}, {args.threads} threads, CPU: {cpu_name()}; "
          f"validators {tt.validators()}")
    report = {"dtype": args.dtype, "cpu": cpu_name(), "threads": args.threads, "batches": []}
    if args.overhead:
        report["overhead"] = gemm_overhead(tt)
        print(f"override cost per call ({report['overhead']['shape']}): "
              f"{report['overhead']['overhead_us']:.2f} us (stock {report['overhead']['stock_us']:.2f} us, "
              f"through tunekit {report['overhead']['tunekit_us']:.2f} us)")
        report["python_override"] = python_override_overhead()
        print(f"a torch.library Python override that only forwards to mm.out: "
              f"{report['python_override']['overhead_us']:.2f} us per call")
    model = build_model(dtype, args.layers, args.attention)
    bound = read_bandwidth() / weight_bytes(model)
    report["read_bound_tokens_per_s"] = bound
    if not args.no_profile:
        report["stock_decode_gemm_share"] = decode_step_gemm_share(model, args.prompt)
        print(f"stock decode step (batch 1): {100 * report['stock_decode_gemm_share']:.0f}% of its "
              "time in matrix products (torch.profiler)")
    for batch in args.batch:
        res = run_batch(model, tt, args, batch)
        print_batch(res, args.dtype, bound)
        report["batches"].append(res)
    if args.pools:
        report["pools"] = pool_interference(tt, dtype)
        print(f"thread pools: {report['pools']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)


def cpu_name():
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        info = f.read()
    fields = {}
    for line in info.splitlines():
        if ":" in line:
            k, v = (x.strip() for x in line.split(":", 1))
            fields.setdefault(k, v)
    return f"{fields.get('model name', '?')} (family {fields.get('cpu family')} model {fields.get('model')})"


if __name__ == "__main__":
    main()
