"""Kernel Tuner's entry point on tunekit: tunekit.tune_kernel with NumPy arguments (their data
reaches the kernel), answer checks, restrictions, the cache log, results as Kernel Tuner returns
them, and clear errors for bad arguments."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tunekit

VECTOR_ADD = r"""
extern "C" void vector_add(float* c, const float* a, const float* b, int n) {
  for (int i0 = 0; i0 < n; i0 += block_size_x)
    for (int i = i0; i < i0 + block_size_x && i < n; ++i) c[i] = a[i] + b[i] + OFFSET;
}
"""

# A C++ function without extern "C": tune_kernel calls it through a shim.
SCALE = r"""
#include <vector>
void scale(float* x, float factor, int n) {
  std::vector<float> copy(x, x + n);
  for (int i = 0; i < n; i += unroll)
    for (int u = 0; u < unroll && i + u < n; ++u) x[i + u] = copy[i + u] * factor;
}
"""


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path / "cache"))


def vector_add_args(n=100):
    a = np.random.randn(n).astype(np.float32)
    b = np.random.randn(n).astype(np.float32)
    c = np.zeros_like(a)
    return [c, a, b, np.int32(n)], a + b


def test_results_list_every_configuration_in_milliseconds():
    args, expected = vector_add_args()
    results, env = tunekit.tune_kernel(
        "vector_add", VECTOR_ADD, 100, args, {"block_size_x": [1, 4, 16]},
        answer=[expected, None, None, None], atol=1e-5, iterations=3,
        compiler_options=["-O1"], defines={"OFFSET": 0})
    assert sorted(r["block_size_x"] for r in results) == [1, 4, 16]
    for row in results:
        assert isinstance(row["time"], float) and row["time"] > 0, row
        assert len(row["times"]) == 1  # 3 repeats, fastest and slowest dropped
    assert env["valid_configurations"] == 3 and env["measured"] == 3
    assert env["strategy"] == "grid"


def test_the_answer_is_checked_against_the_real_data():
    args, expected = vector_add_args()
    results, _ = tunekit.tune_kernel(
        "vector_add", VECTOR_ADD, 100, args, {"block_size_x": [2, 8]},
        answer=[expected, None, None, None], defines={"OFFSET": 1}, iterations=1)
    assert [r["time"] for r in results] == ["RuntimeFailedConfig"] * 2
    assert "answer" in results[0]["error"] and "argument 0 element" in results[0]["error"]


def test_restrictions_cache_and_a_mangled_function(tmp_path):
    x = np.arange(50, dtype=np.float32)
    cache = str(tmp_path / "scale")
    params = {"unroll": [1, 2, 3, 4]}
    args = [x, np.float32(2.0), np.int32(50)]
    answer = [x * 2.0, None, None]
    first, env = tunekit.tune_kernel("scale", SCALE, 50, args, params, answer=answer,
                                     restrictions=["unroll != 3"], cache=cache,
                                     strategy="random_sample",
                                     strategy_options={"max_fevals": 2}, iterations=1)
    assert len(first) == 2 and env["cache"] == cache + ".json"
    assert all(isinstance(r["time"], float) for r in first), first
    again, env = tunekit.tune_kernel("scale", SCALE, 50, args, params, answer=answer,
                                     restrictions=["unroll != 3"], cache=cache, iterations=1,
                                     metrics={"GB/s": lambda p: 400 / (p["time"] * 1e6)})
    assert env["resumed"] == 2 and env["measured"] == 1  # the third valid configuration only
    assert sorted(r["unroll"] for r in again) == [1, 2, 4]
    assert all("GB/s" in r for r in again)


def test_a_cache_log_that_cannot_grow_is_an_error(tmp_path):
    params = {"block_size_x": [1, 2, 4, 8, 16, 32]}
    args, _ = vector_add_args()
    # Built first, into the shared artefact cache: an artefact is larger than the limit below.
    tunekit.tune_kernel("vector_add", VECTOR_ADD, 100, args, params, iterations=1,
                        defines={"OFFSET": 0}, cache=str(tmp_path / "warm"))
    script = textwrap.dedent(f"""
        import resource, numpy as np, tunekit
        from test_tune_kernel import VECTOR_ADD, vector_add_args
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, resource.RLIM_INFINITY))
        args, _ = vector_add_args()
        try:
            tunekit.tune_kernel("vector_add", VECTOR_ADD, 100, args, {params!r}, iterations=1,
                                defines={{"OFFSET": 0}}, cache={str(tmp_path / "small")!r})
        except tunekit.FileIOError as e:
            print("raised:", e)
        else:
            print("no error")
        """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                         cwd=os.path.dirname(__file__), timeout=120)
    assert run.stdout.startswith("raised:"), run.stdout + run.stderr
    assert "small.json" in run.stdout and "are not in the log and are lost" in run.stdout
    assert os.path.getsize(tmp_path / "small.json") <= 1024


def test_bad_arguments_are_clear_errors():
    args, expected = vector_add_args()
    with pytest.raises(tunekit.DTypeError, match="argument 1 is a list"):
        tunekit.tune_kernel("vector_add", VECTOR_ADD, 100, [args[0], [1.0], args[2], args[3]],
                            {"block_size_x": [1]})
    with pytest.raises(tunekit.DTypeError, match="argument 0 has dtype float16"):
        tunekit.tune_kernel("vector_add", VECTOR_ADD, 100,
                            [np.zeros(4, np.float16)] + args[1:], {"block_size_x": [1]})
    with pytest.raises(tunekit.InvalidArgumentError, match="answer has 1 entries for 4"):
        tunekit.tune_kernel("vector_add", VECTOR_ADD, 100, args, {"block_size_x": [1]},
                            answer=[expected])
    with pytest.raises(tunekit.InvalidArgumentError, match="restrictions must be expressions"):
        tunekit.tune_kernel("vector_add", VECTOR_ADD, 100, args, {"block_size_x": [1]},
                            restrictions=lambda p: True)
    with pytest.raises(tunekit.NotFoundError, match="unknown"):
        tunekit.tune_kernel("vector_add", VECTOR_ADD, 100, args, {"block_size_x": [1]},
                            strategy="bogus")
    with pytest.raises(tunekit.UnsupportedError, match="observers"):
        tunekit.tune_kernel("vector_add", VECTOR_ADD, 100, args, {"block_size_x": [1]},
                            observers=[])


OPENCL_ADD = r"""
__kernel void vector_add(__global float* c, __global const float* a, __global const float* b,
                         int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
"""


def test_opencl_launch_sizes_follow_the_block_size():
    args, expected = vector_add_args(1000)
    try:
        results, _ = tunekit.tune_kernel("vector_add", OPENCL_ADD, 1000, args,
                                         {"block_size_x": [32, 64]}, lang="OpenCL",
                                         answer=[expected, None, None, None], iterations=1)
    except (tunekit.UnsupportedError, tunekit.RunError) as e:
        pytest.skip(f"no OpenCL here: {e}")
    if any(r.get("error", "").startswith("no OpenCL") for r in results):
        pytest.skip("no OpenCL device")
    assert [r["block_size_x"] for r in results] == [32, 64]
    assert all(isinstance(r["time"], float) for r in results), results


def test_tuning_after_the_gemm_libraries_loaded():
    # The GEMM layer loads BLIS with dlmopen; its libc copy clobbered thread-specific data of the
    # Python thread, and the artefact cache's OpenSSL digest then crashed the process. Engine
    # work now runs on a thread of its own.
    from tunekit import tunable

    tunable.get_validators()
    a = np.ones((8, 8), np.float32)
    tunekit.matmul(a, a)
    args, expected = vector_add_args(64)
    results, _ = tunekit.tune_kernel("vector_add", VECTOR_ADD, 64, args,
                                     {"block_size_x": [1, 8]}, defines={"OFFSET": 0},
                                     answer=[expected, None, None, None], iterations=1)
    assert all(isinstance(r["time"], float) for r in results), results
