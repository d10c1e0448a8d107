"""AutoTVM's matrix-multiply tutorial on tunekit: a template with define_split on both axes of C
and define_knob("unroll"), tuned with XGBTuner, then the best configuration applied through
apply_history_best and re-timed against the kernel's untuned defaults.

The kernel is C++ (single-threaded, -O3 -march=native): C = A * B in tiles of tile_y x tile_x
elements of C, each row of a tile accumulated over K against the tile's panel of B, the
innermost (contiguous) loop unrolled `unroll` times. The
configuration reaches it as -D definitions: define_split("tile_y", M, num_outputs=2) gives
tile_y_0 (the outer extent) and tile_y_1 (the tile); the defaults under #ifndef are the untuned
parameters (8 x 8 tiles, no unrolling).

Usage: python examples/python/matmul_autotvm.py [--size 1024] [--trials 100] [--log PATH]
"""

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

import tunekit

SOURCE = r"""
#ifndef tile_y_1
#define tile_y_1 8
#endif
#ifndef tile_x_1
#define tile_x_1 8
#endif
#ifndef unroll
#define unroll 1
#endif
#define STR(x) #x
#define PRAGMA_UNROLL(n) _Pragma(STR(GCC unroll n))

extern "C" void matmul(int M, int N, int K, const float* A, const float* B, float* C) {
  for (int yo = 0; yo < M; yo += tile_y_1) {
    for (int xo = 0; xo < N; xo += tile_x_1) {
      // One tile of C: tile_y_1 rows of tile_x_1 elements, each accumulated over all of K
      // while the tile_x_1-wide panel of B is reused by the tile's rows.
      for (int y = yo; y < yo + tile_y_1; ++y) {
        float* c = C + (long)y * N + xo;
        for (int x = 0; x < tile_x_1; ++x) c[x] = 0.f;
        for (int k = 0; k < K; ++k) {
          const float a = A[(long)y * K + k];
          const float* b = B + (long)k * N + xo;
          PRAGMA_UNROLL(unroll)
          for (int x = 0; x < tile_x_1; ++x) c[x] += a * b[x];
        }
      }
    }
  }
}
"""


def kernel(M, N, K):
    return tunekit.Kernel(
        source=SOURCE, entry="matmul", flags=["-O3"],
        arguments=[tunekit.Scalar("M", M), tunekit.Scalar("N", N), tunekit.Scalar("K", K),
                   tunekit.Array("A", (M, K)), tunekit.Array("B", (K, N)),
                   tunekit.Array("C", (M, N), output=True)],
        verify={"atol": 1e-2, "rtol": 1e-3})


@tunekit.template("tutorial.matmul")
def matmul(M, N, K, dtype="float32"):
    cfg = tunekit.get_config()
    cfg.define_split("tile_y", M, num_outputs=2)
    cfg.define_split("tile_x", N, num_outputs=2)
    cfg.define_knob("unroll", [1, 2, 4, 8])
    cfg.add_flop(2 * M * N * K)
    return kernel(M, N, K)


def time_call(function, args, calls):
    """Median seconds of `calls` calls after one warm-up call."""
    function(*args)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1024, help="M = N = K (default 1024)")
    parser.add_argument("--trials", type=int, default=100, help="XGBTuner trials (default 100)")
    parser.add_argument("--log", help="tuning log (default: a new temporary file)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved re-timing rounds")
    args = parser.parse_args()
    n = args.size
    log = args.log or os.path.join(tempfile.mkdtemp(prefix="matmul_autotvm_"), "matmul.log")

    task = tunekit.task.create("tutorial.matmul", args=(n, n, n, "float32"), target="llvm")
    print(f"{task}: {len(task.config_space)} configurations")
    measure = tunekit.measure_option(builder=tunekit.LocalBuilder(timeout=60),
                                     runner=tunekit.LocalRunner(number=1, repeat=3, timeout=60))
    tuner = tunekit.tuner.XGBTuner(task, loss_type="reg")
    start = time.time()
    tuner.tune(n_trial=min(args.trials, len(task.config_space)), measure_option=measure,
               callbacks=[tunekit.callback.progress_bar(args.trials, prefix="[matmul]"),
                          tunekit.callback.log_to_file(log)])
    print(f"tuned in {time.time() - start:.1f} s; log: {log}")
    best = tuner.best_config
    print(f"best in the log: {best} ({tuner.best_flops / 1e9:.2f} GFLOP/s)")

    with tunekit.apply_history_best(log):
        tuned = matmul(n, n, n, "float32").compile()
    default = kernel(n, n, n).compile()  # no configuration: the source's defaults
    a = np.random.rand(n, n).astype(np.float32)
    b = np.random.rand(n, n).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    times = {"default": [], "tuned": []}
    for r in range(args.rounds):  # interleaved, so drift hits both alike
        for name, fn in (("default", default), ("tuned", tuned))[::1 if r % 2 == 0 else -1]:
            times[name].append(time_call(fn, (n, n, n, a, b, c), 3))
    expected = a @ b
    assert np.allclose(c, expected, rtol=1e-3, atol=1e-2), "the tuned kernel is wrong"
    flop = 2.0 * n ** 3
    t_default = statistics.median(times["default"])
    t_tuned = statistics.median(times["tuned"])
    print(f"untuned defaults (tile 8x8, unroll 1): {t_default * 1e3:8.2f} ms "
          f"{flop / t_default / 1e9:6.2f} GFLOP/s")
    print(f"tuned ({tuned.config}): {t_tuned * 1e3:8.2f} ms {flop / t_tuned / 1e9:6.2f} GFLOP/s")
    print(f"speed-up over the defaults: {t_default / t_tuned:.2f}x")


if __name__ == "__main__":
    main()
