"""tunekit.matmul and tunekit.gemm against NumPy: shapes, strides, batches, dtypes, zero-copy
outputs, and the errors bad operands raise."""

import itertools

import numpy as np
import pytest

import tunekit

RNG = np.random.default_rng(20261202)


def rand(shape, dtype=np.float32):
    return RNG.uniform(-1, 1, size=shape).astype(dtype)


def close(got, want, dtype=np.float32):
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


SHAPES_2D = [(1, 1, 1), (1, 7, 1), (7, 1, 5), (4, 4, 4), (3, 5, 2), (17, 13, 29), (64, 1, 33),
             (31, 37, 1), (2, 128, 3)]


@pytest.mark.parametrize("m,k,n", SHAPES_2D)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_2d_matches_numpy(no_tuning, m, k, n, dtype):
    a, b = rand((m, k), dtype), rand((k, n), dtype)
    c = tunekit.matmul(a, b)
    assert c.dtype == dtype and c.shape == (m, n)
    close(c, a @ b, dtype)


def test_tuned_problems_match_numpy():
    for m, k, n in [(4, 4, 4), (9, 5, 3), (16, 8, 32)]:
        a, b = rand((m, k)), rand((k, n))
        close(tunekit.matmul(a, b), a @ b)  # first call: tuned
        close(tunekit.matmul(a, b), a @ b)  # second call: the stored winner


@pytest.mark.parametrize("a_shape,b_shape", [
    ((5,), (5,)), ((5,), (5, 3)), ((4, 5), (5,)), ((2, 3, 5), (5,)), ((5,), (2, 5, 3)),
    ((3, 4, 5), (3, 5, 2)), ((1, 4, 5), (3, 5, 2)), ((3, 4, 5), (5, 2)), ((4, 5), (3, 5, 2)),
    ((2, 1, 4, 5), (3, 5, 6)), ((2, 3, 4, 5), (2, 3, 5, 6)), ((6, 1, 2, 3), (1, 5, 3, 2)),
])
def test_promotion_and_broadcasting_match_numpy(no_tuning, a_shape, b_shape):
    a, b = rand(a_shape), rand(b_shape)
    want = np.matmul(a, b)
    got = tunekit.matmul(a, b)
    assert type(got) is type(want) and got.shape == want.shape  # two vectors: a NumPy scalar
    close(got, want)


def views(x):
    """x as it is, transposed twice (Fortran order), as a slice with padding, reversed."""
    m, k = x.shape
    padded = np.zeros((m + 3, k + 5), x.dtype)
    padded[1:m + 1, 2:k + 2] = x
    fortran = np.asfortranarray(x)
    strided = np.zeros((2 * m, 3 * k), x.dtype)
    strided[::2, ::3] = x
    return {
        "c": x, "f": fortran, "padded": padded[1:m + 1, 2:k + 2], "every_other": strided[::2, ::3],
        "reversed": x[::-1, ::-1].copy()[::-1, ::-1], "negative": np.flip(np.flip(x, 0).copy(), 0),
    }


BLAS_LAYOUTS = {"c", "f", "padded"}  # one stride of one element, the other >= the extent


@pytest.mark.parametrize("la,lb", list(itertools.product(
    ["c", "f", "padded", "every_other", "negative"], repeat=2)))
def test_operand_layouts(no_tuning, la, lb):
    a, b = rand((6, 5)), rand((5, 7))
    copies = tunekit._tunekit._copies()
    got = tunekit.matmul(views(a)[la], views(b)[lb])
    close(got, a @ b)
    expected = (la not in BLAS_LAYOUTS) + (lb not in BLAS_LAYOUTS)
    assert tunekit._tunekit._copies() - copies == expected


@pytest.mark.parametrize("layout", ["c", "f", "padded", "every_other"])
def test_out_is_written_in_place(no_tuning, layout):
    a, b = rand((6, 5)), rand((5, 7))
    out = views(np.full((6, 7), np.nan, np.float32))[layout]
    base = out.base if out.base is not None else out
    result = tunekit.matmul(a, b, out=out)
    assert result is out
    assert np.shares_memory(result, base)
    close(out, a @ b)


def test_out_zero_copy_for_blas_layouts(no_tuning):
    a, b = rand((3, 4, 5)), rand((3, 5, 2))
    out = np.empty((3, 4, 2), np.float32)
    copies = tunekit._tunekit._copies()
    tunekit.matmul(a, b, out=out)
    col_major = np.empty((3, 2, 4), np.float32).transpose(0, 2, 1)  # each matrix column-major
    tunekit.matmul(a, b, out=col_major)
    assert tunekit._tunekit._copies() == copies
    close(out, a @ b)
    close(col_major, a @ b)
    tunekit.matmul(a, b, out=np.empty((3, 4, 4), np.float32)[:, :, ::2])
    assert tunekit._tunekit._copies() == copies + 1  # no BLAS layout: computed, copied back


def test_out_aliasing_an_input(no_tuning):
    a = rand((4, 4))
    b = rand((4, 4))
    want = a @ b
    tunekit.matmul(a, b, out=a)
    close(a, want)


def test_batched_strided_and_broadcast_operands(no_tuning):
    base = rand((4, 6, 10))
    a = base[:, :, ::2]  # (4, 6, 5), every other column
    b = np.broadcast_to(rand((5, 3)), (4, 5, 3))  # batch stride 0
    close(tunekit.matmul(a, b), np.matmul(a, b))
    c = rand((2, 3, 4, 5)).transpose(1, 0, 2, 3)  # batch dims not in C order
    d = rand((3, 2, 5, 6))
    close(tunekit.matmul(c, d), np.matmul(c, d))


def test_empty_dimensions(no_tuning):
    assert tunekit.matmul(rand((0, 3)), rand((3, 4))).shape == (0, 4)
    z = tunekit.matmul(rand((2, 0)), rand((0, 4)))
    assert z.shape == (2, 4) and not z.any()
    assert tunekit.matmul(rand((0, 2, 3)), rand((3, 4))).shape == (0, 2, 4)


def test_buffer_protocol_and_lists(no_tuning):
    a, b = rand((3, 4)), rand((4, 2))
    close(tunekit.matmul(memoryview(a), memoryview(b)), a @ b)
    got = tunekit.matmul(a.astype(np.float64).tolist(), b.astype(np.float64).tolist())
    close(got, a.astype(np.float64) @ b.astype(np.float64), np.float64)
    out = np.empty((3, 2), np.float32)
    tunekit.matmul(a, b, out=memoryview(out))
    close(out, a @ b)


class DLPackOnly:
    """Exposes only the DLPack protocol of an array (as a PyTorch tensor does)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, *args, **kwargs):
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_operands_and_output(no_tuning):
    a, b = rand((3, 4)), rand((4, 5))
    out = np.zeros((3, 5), np.float32)
    result = tunekit.matmul(DLPackOnly(a), DLPackOnly(b[:, ::-1].copy()[:, ::-1]),
                            out=DLPackOnly(out))
    assert isinstance(result, DLPackOnly)
    close(out, a @ b)


def to_bfloat16_bits(x):
    """Round-to-nearest-even float32 -> bfloat16 bit patterns (uint16)."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def from_bfloat16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def test_bfloat16_through_dlpack(no_tuning):
    a_bits, b_bits = to_bfloat16_bits(rand((5, 6))), to_bfloat16_bits(rand((6, 3)))
    a = tunekit._tunekit._bfloat16_dlpack_view(a_bits)
    b = tunekit._tunekit._bfloat16_dlpack_view(b_bits)
    got = tunekit.matmul(a, b)
    assert got.dtype == np.float32
    want = from_bfloat16_bits(a_bits).astype(np.float64) @ from_bfloat16_bits(b_bits)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_bfloat16_ml_dtypes_arrays(no_tuning):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = rand((4, 7)).astype(ml_dtypes.bfloat16)
    b = rand((7, 3)).astype(ml_dtypes.bfloat16)
    got = tunekit.matmul(a, b[:, ::-1].copy()[:, ::-1])
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    out = np.empty((2, 4, 3), np.float32)
    tunekit.matmul(np.stack([a, a]), b, out=out)
    np.testing.assert_allclose(out[1], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transa,transb", list(itertools.product("nt", repeat=2)))
@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (0.5, 2.0), (-1.0, 1.0)])
def test_gemm_blas_semantics(no_tuning, transa, transb, alpha, beta):
    m, k, n = 5, 4, 3
    a = rand((m, k)) if transa == "n" else rand((k, m))
    b = rand((k, n)) if transb == "n" else rand((n, k))
    c = rand((m, n))
    op = lambda x, t: x.T if t == "t" else x  # noqa: E731
    want = alpha * op(a, transa) @ op(b, transb) + beta * c
    assert tunekit.gemm(transa.upper(), transb, alpha, a, b, beta, c) is c
    close(c, want)


def test_gemm_beta_zero_ignores_nan_and_batches(no_tuning):
    a, b = rand((2, 3, 4)), rand((4, 5))
    c = np.full((2, 3, 5), np.nan, np.float32)
    tunekit.gemm(False, False, 2.0, a, b, 0.0, c)
    close(c, 2.0 * np.matmul(a, b))


@pytest.mark.parametrize("args,error,text", [
    ((np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)), tunekit.InvalidArgumentError,
     "shape (2, 3) and b of shape (4, 5) do not match"),
    ((np.ones((2, 3), np.int64), np.ones((3, 5), np.int64)), tunekit.DTypeError,
     "a has dtype int64"),
    ((np.ones((2, 3), np.float32), np.ones((3, 5), np.float64)), tunekit.DTypeError,
     "a is float32 and b is float64"),
    ((np.float32(1.0), np.ones((3,), np.float32)), tunekit.InvalidArgumentError,
     "a is 0-dimensional"),
    ((np.ones((2, 2, 3), np.float32), np.ones((3, 3, 4), np.float32)),
     tunekit.InvalidArgumentError, "batch dimensions of a (2, 2, 3) and b (3, 3, 4)"),
    ((object(), np.ones((3,), np.float32)), tunekit.DTypeError, "a has dtype object"),
    ((np.ones((2, 3), np.float16), np.ones((3, 2), np.float16)), tunekit.DTypeError,
     "float16"),
])
def test_bad_operands_raise_one_line(args, error, text):
    with pytest.raises(error) as info:
        tunekit.matmul(*args)
    message = str(info.value)
    assert text in message and message.startswith("tunekit.matmul: ") and "\n" not in message
    assert isinstance(info.value, tunekit.TunekitError)


def test_bad_outputs_raise():
    a, b = rand((2, 3)), rand((3, 4))
    with pytest.raises(tunekit.InvalidArgumentError, match=r"out has shape \(4, 2\); the result "
                       r"has shape \(2, 4\)"):
        tunekit.matmul(a, b, out=np.empty((4, 2), np.float32))
    with pytest.raises(tunekit.DTypeError, match="out has dtype float64; the result is float32"):
        tunekit.matmul(a, b, out=np.empty((2, 4), np.float64))
    read_only = np.empty((2, 4), np.float32)
    read_only.setflags(write=False)
    with pytest.raises(tunekit.InvalidArgumentError, match="out is read-only"):
        tunekit.matmul(a, b, out=read_only)
    with pytest.raises(tunekit.InvalidArgumentError, match="out is read-only"):
        tunekit.matmul(a, b, out=memoryview(bytes(32)).cast("f", (2, 4)))
    with pytest.raises(tunekit.DTypeError, match=r"out \(list\) is written in place"):
        tunekit.matmul(a, b, out=[[0.0] * 4] * 2)
    with pytest.raises(tunekit.InvalidArgumentError, match="transa must be 'n' or 't'"):
        tunekit.gemm("x", "n", 1.0, a, b, 0.0, np.empty((2, 4), np.float32))
    with pytest.raises(tunekit.InvalidArgumentError, match="gemm needs matrices"):
        tunekit.gemm("n", "n", 1.0, a[0], b, 0.0, np.empty((4,), np.float32))


def test_gil_is_released_during_the_gemm(no_tuning):
    """Another Python thread runs while one long matmul call (about 2 GFLOP) is in C++: without
    the GIL released it could only run before or after the call."""
    import threading
    import time

    a, b = rand((1024, 1024)), rand((1024, 1024))
    tunekit.matmul(a[:8], b)  # first-use costs (library start-up) outside the timed call
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.0002)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        time.sleep(0.01)
        start = time.perf_counter()
        tunekit.matmul(a, b)
        end = time.perf_counter()
    finally:
        stop.set()
        t.join()
    during = [x for x in ticks if start < x < end]
    assert len(during) >= 3, f"the other thread ran {len(during)} times in {end - start:.3f} s"


def test_threads_tune_and_dispatch_concurrently():
    """Several Python threads (the GIL released in each call) tuning and dispatching problems at
    once all get NumPy's answers."""
    import threading

    shapes = [(3 + i, 4, 5 + i) for i in range(4)]
    operands = [(rand((m, k)), rand((k, n))) for m, k, n in shapes]
    errors = []

    def work(a, b):
        try:
            for _ in range(20):
                close(tunekit.matmul(a, b), a @ b)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=ab) for ab in operands]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


THREAD_EXIT_CHILD = r"""
import sys
from concurrent.futures import ThreadPoolExecutor
import numpy as np
import tunekit
from tunekit import tunable
tunable.set_filename(sys.argv[1])
tunable.set_max_tuning_iterations(1)
a = np.ones((12, 12), np.float32)
with ThreadPoolExecutor(2) as pool:
    sums = list(pool.map(lambda _: float(tunekit.matmul(a, a)[0, 0]), range(4)))
import hashlib  # OpenSSL's keys come after the namespaces' (the order that crashed)
print(sums, hashlib.sha256(b"x").hexdigest()[:8], "done")
"""


def test_threads_that_ran_namespaced_libraries_exit_cleanly(tmp_path):
    """Tuning on threads that then exit runs the libraries loaded into dlmopen namespaces of
    their own (BLIS, the OpenBLAS copy) there; their C libraries' thread-specific data must not
    overwrite the main one's (libgomp aborted at thread exit, OpenSSL crashed)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("TUNEKIT_")}
    env.update(TUNEKIT_DB="off", TUNEKIT_SYSTEM_DB="off")
    proc = subprocess.run([sys.executable, "-c", THREAD_EXIT_CHILD, str(tmp_path / "r.csv")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("done"), proc.stdout + proc.stderr
