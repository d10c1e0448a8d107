"""Bad input across the Python module gives tunekit's exceptions with one-line messages naming
the argument: unwritable logs, operands that are no arrays, non-real or non-finite GEMM scalars,
AutoTVM and Kernel Tuner arguments of the wrong shape, tunable settings out of range."""

import math
import re

import numpy as np
import pytest

import tunekit
from tunekit import Array, Scalar, tunable

COPY = r"""
#ifndef unroll
#define unroll 1
#endif
extern "C" void copy(float* y, const float* x, int n) {
  for (int i = 0; i < n; ++i) y[i] = x[i] * unroll / unroll;
}
"""


def copy_kernel(entry="copy"):
    return tunekit.Kernel(source=COPY, entry=entry, flags=["-O1"],
                          arguments=[Array("y", (8,), output=True), Array("x", (8,)),
                                     Scalar("n", 8)])


@tunekit.template("test.bad_input.copy")
def copy_template():
    cfg = tunekit.get_config()
    cfg.define_knob("unroll", [1, 2])
    return copy_kernel()


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path / "cache"))


# --- 1. log_to_file on a path that cannot be written -----------------------------------------

@pytest.mark.parametrize("where", ["missing_folder", "directory"])
def test_an_unwritable_log_is_refused_before_any_trial(tmp_path, where):
    path = tmp_path / "no" / "such" / "log.json" if where == "missing_folder" else tmp_path
    task = tunekit.task.create("test.bad_input.copy", args=())
    tuner = tunekit.tuner.GridSearchTuner(task)
    seen = []
    with pytest.raises(tunekit.FileIOError, match=re.escape(str(path))):
        tuner.tune(2, callbacks=[tunekit.callback.log_to_file(str(path)),
                                 lambda t, i, r: seen.append(len(i))])
    assert seen == [] and tuner.trial_count == 0


def test_tune_kernel_refuses_an_unwritable_cache(tmp_path):
    cache = str(tmp_path / "no" / "cache.json")
    x = np.ones(8, np.float32)
    with pytest.raises(tunekit.FileIOError, match="cache.json"):
        tunekit.tune_kernel("copy", COPY, 8, [np.zeros_like(x), x, np.int32(8)],
                            {"unroll": [1, 2]}, cache=cache)


# --- 2./3. matmul and gemm arguments ---------------------------------------------------------

F32 = np.ones((2, 2), np.float32)


@pytest.mark.parametrize("call", [
    lambda: tunekit.matmul(None, F32),
    lambda: tunekit.matmul(F32, None),
    lambda: tunekit.gemm("n", "n", 1.0, None, F32, 0.0, F32.copy()),
    lambda: tunekit.gemm("n", "n", 1.0, F32, F32, 0.0, None),
], ids=["matmul_a", "matmul_b", "gemm_a", "gemm_c"])
def test_none_is_no_array(call):
    with pytest.raises(tunekit.DTypeError, match=r"NoneType\) is not an array") as e:
        call()
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("alpha", [1j, np.complex64(1 + 1j), None, "2"])
def test_gemm_alpha_must_be_a_real_number(alpha):
    with pytest.raises(tunekit.DTypeError, match="^tunekit.gemm: alpha must be a real number"):
        tunekit.gemm("n", "n", alpha, F32, F32, 0.0, F32.copy())


@pytest.mark.parametrize("name", ["alpha", "beta"])
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_gemm_scalars_must_be_finite(name, value):
    scalars = {"alpha": 1.0, "beta": 0.0, name: value}
    with pytest.raises(tunekit.InvalidArgumentError,
                       match=f"^tunekit.gemm: {name} must be finite"):
        tunekit.gemm("n", "n", scalars["alpha"], F32, F32, scalars["beta"], F32.copy())


@pytest.mark.parametrize("name", ["alpha", "beta"])
def test_gemm_scalars_must_be_finite_in_the_operands_type(name, tmp_path):
    scalars = {"alpha": 1.0, "beta": 0.0, name: 1e300}
    c = F32.copy()
    with pytest.raises(tunekit.InvalidArgumentError,
                       match=rf"^tunekit.gemm: {name} = 1e\+300 is not finite in float32"):
        tunekit.gemm("n", "n", scalars["alpha"], F32, F32, scalars["beta"], c)
    np.testing.assert_array_equal(c, F32)  # nothing ran
    assert not (tmp_path / "results.csv").exists()  # nothing tuned, nothing stored
    big = np.ones((2, 2), np.float64)  # float64 holds it
    out = tunekit.gemm("n", "n", scalars["alpha"], big, big, scalars["beta"], big.copy())
    assert np.isfinite(out).all()


def test_gemm_takes_numpy_and_integer_scalars():
    c = np.ones((2, 2), np.float32)
    tunekit.gemm("n", "n", np.float32(2), F32, F32, 1, c)
    np.testing.assert_allclose(c, 5.0)


def test_gemm_names_its_output_c():
    with pytest.raises(tunekit.InvalidArgumentError, match="^tunekit.gemm: c has shape"):
        tunekit.gemm("n", "n", 1.0, F32, F32, 0.0, np.ones((3, 3), np.float32))
    with pytest.raises(tunekit.DTypeError, match="^tunekit.gemm: c has dtype float64"):
        tunekit.gemm("n", "n", 1.0, F32, F32, 0.0, np.ones((2, 2)))


def test_matmul_of_a_python_scalar_is_the_0d_error():
    with pytest.raises(tunekit.InvalidArgumentError, match="a is 0-dimensional"):
        tunekit.matmul(2.0, F32)


# --- 4. AutoTVM and Kernel Tuner arguments ---------------------------------------------------

def test_compile_of_a_missing_entry_is_not_found(tmp_path):
    with pytest.raises(tunekit.NotFoundError, match="entry 'nosuch'"):
        copy_kernel("nosuch").compile()
    source = tmp_path / "copy.cpp"
    source.write_text(COPY)
    kernel = tunekit.Kernel(source_file=str(source), entry="nosuch", flags=["-O1"],
                            arguments=[Array("y", (8,), output=True), Array("x", (8,)),
                                       Scalar("n", 8)])
    with pytest.raises(tunekit.NotFoundError,
                       match="entry .nosuch. is not a function of " + re.escape(str(source))):
        kernel.compile()


def test_tune_refuses_a_measure_option_without_builder_and_runner():
    task = tunekit.task.create("test.bad_input.copy", args=())
    with pytest.raises(tunekit.InvalidArgumentError, match="tunekit.measure_option"):
        tunekit.tuner.GridSearchTuner(task).tune(1, measure_option={})


def test_tune_kernel_iterations_is_named():
    x = np.ones(8, np.float32)
    with pytest.raises(tunekit.InvalidArgumentError, match="^tune_kernel: iterations"):
        tunekit.tune_kernel("copy", COPY, 8, [np.zeros_like(x), x, np.int32(8)],
                            {"unroll": [1]}, iterations=0)


def test_tune_kernel_tune_params_values_must_be_lists():
    x = np.ones(8, np.float32)
    with pytest.raises(tunekit.InvalidArgumentError, match="tune_params values must be lists"):
        tunekit.tune_kernel("copy", COPY, 8, [np.zeros_like(x), x, np.int32(8)], {"unroll": 4})


# --- 5. tunable settings ---------------------------------------------------------------------

@pytest.mark.parametrize("value", [math.nan, math.inf, "x"])
def test_tuning_limits_must_be_whole_numbers(value):
    with pytest.raises(tunekit.InvalidArgumentError, match="set_max_tuning_duration"):
        tunable.set_max_tuning_duration(value)
    with pytest.raises(tunekit.InvalidArgumentError, match="set_max_tuning_iterations"):
        tunable.set_max_tuning_iterations(value)


def test_settings_too_large_for_their_type_name_the_argument():
    before = tunable.get_rotating_buffer_size()
    with pytest.raises(tunekit.InvalidArgumentError,
                       match=r"^tunable\.set_rotating_buffer_size: buffer_size = 10+ is too large "
                             r"\(at most 17592186044415\)$"):
        tunable.set_rotating_buffer_size(10**15)
    assert tunable.get_rotating_buffer_size() == before
    with pytest.raises(tunekit.InvalidArgumentError,
                       match=r"^tunable\.set_max_tuning_iterations: iterations = 10+ is too "
                             r"large \(at most 9223372036854775807\)$"):
        tunable.set_max_tuning_iterations(10**30)
    with pytest.raises(tunekit.InvalidArgumentError, match=r"set_max_tuning_duration: duration"):
        tunable.set_max_tuning_duration(10**30)
    tunable.set_max_tuning_iterations(-10**30)  # negative: no limit, as -1
    assert tunable.get_max_tuning_iterations() == 0
    tunable.set_rotating_buffer_size(2**44 - 1)
    assert tunable.get_rotating_buffer_size() == (2**44 - 1) * 2**20


def test_a_file_name_with_nul_is_refused(tmp_path):
    before = tunable.get_filename()
    with pytest.raises(tunekit.InvalidArgumentError, match="NUL"):
        tunable.set_filename(str(tmp_path / "a\0b.csv"))
    assert tunable.get_filename() == before


def test_tolerances_are_ignored_when_the_check_is_disabled():
    tunable.set_numerical_check_tolerances(False, -1.0, math.nan)
    assert not tunable._c.get_numerical_check_tolerances()[0]
    with pytest.raises(tunekit.InvalidArgumentError):
        tunable.set_numerical_check_tolerances(True, -1.0)
