"""tunekit.tunable against torch.cuda.tunable's names and semantics and the C++ context."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tunekit
from tunekit import tunable

TORCH_NAMES = [
    "enable", "is_enabled", "tuning_enable", "tuning_is_enabled", "record_untuned_enable",
    "record_untuned_is_enabled", "set_max_tuning_duration", "get_max_tuning_duration",
    "set_max_tuning_iterations", "get_max_tuning_iterations", "set_filename", "get_filename",
    "set_numerical_check_tolerances", "set_rotating_buffer_size", "get_rotating_buffer_size",
    "get_results", "get_validators", "write_file_on_exit", "write_file", "read_file",
    "tune_gemm_in_file", "mgpu_tune_gemm_in_file",
]


def test_every_torch_cuda_tunable_function_exists():
    missing = [n for n in TORCH_NAMES if not callable(getattr(tunable, n, None))]
    assert missing == []
    assert sorted(tunable.__all__) == sorted(TORCH_NAMES)


@pytest.mark.parametrize("setter,getter", [
    ("enable", "is_enabled"),
    ("tuning_enable", "tuning_is_enabled"),
    ("record_untuned_enable", "record_untuned_is_enabled"),
])
def test_switches_reach_the_context(setter, getter):
    for value in (False, True, False):
        getattr(tunable, setter)(value)
        assert getattr(tunable, getter)() is value
        assert getattr(tunekit._tunekit.tunable, getter)() is value
    getattr(tunable, setter)()  # default argument: on
    assert getattr(tunable, getter)() is True
    getattr(tunable, setter)(False)


def test_limits_round_trip_and_negative_means_zero():
    tunable.set_max_tuning_duration(250)
    assert tunable.get_max_tuning_duration() == 250
    tunable.set_max_tuning_duration(-5)
    assert tunable.get_max_tuning_duration() == 0
    tunable.set_max_tuning_iterations(7)
    assert tunable.get_max_tuning_iterations() == 7
    tunable.set_max_tuning_iterations(-1)
    assert tunable.get_max_tuning_iterations() == 0


def test_rotating_buffer_is_set_in_mib_and_read_in_bytes():
    tunable.set_rotating_buffer_size(3)
    assert tunable.get_rotating_buffer_size() == 3 * 1024 * 1024
    tunable.set_rotating_buffer_size(0)
    assert tunable.get_rotating_buffer_size() == 0
    tunable.set_rotating_buffer_size(-1)  # the last-level cache this process can use
    assert tunable.get_rotating_buffer_size() > 0


def test_filename_ordinal_only_when_asked(tmp_path):
    tunable.set_filename(str(tmp_path / "res.csv"))
    assert tunable.get_filename() == str(tmp_path / "res.csv")
    tunable.set_filename(str(tmp_path / "res.csv"), insert_device_ordinal=True)
    assert tunable.get_filename() == str(tmp_path / "res0.csv")
    tunable.set_filename(str(tmp_path / "res_%d_x.csv"), True)
    assert tunable.get_filename() == str(tmp_path / "res_0_x.csv")


def test_numerical_check_tolerances():
    tunable.set_numerical_check_tolerances(True, 1e-3, 2e-3)
    assert tunekit._tunekit.tunable.get_numerical_check_tolerances() == (True, 1e-3, 2e-3)
    tunable.set_numerical_check_tolerances(False)
    assert tunekit._tunekit.tunable.get_numerical_check_tolerances()[0] is False
    with pytest.raises(tunekit.InvalidArgumentError, match="atol"):
        tunable.set_numerical_check_tolerances(True, 0.0, 1e-5)
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError
        tunable.set_numerical_check_tolerances(True, 1e-5, -1.0)
    # Numbers that fit no double, and what is no number, name the argument in one short line.
    with pytest.raises(tunekit.InvalidArgumentError, match=r"atol must be a real number.*\.\.\.$"):
        tunable.set_numerical_check_tolerances(True, 10**400, 1e-5)
    with pytest.raises(tunekit.InvalidArgumentError, match="rtol must be a real number"):
        tunable.set_numerical_check_tolerances(True, 1e-5, "tight")


def test_validators_name_this_machine():
    keys = [k for k, _ in tunable.get_validators()]
    assert "TUNEKIT_VERSION" in keys and "CPU_MODEL" in keys and "OPENBLAS_VERSION" in keys
    assert all(isinstance(v, str) for _, v in tunable.get_validators())


def test_tuning_a_problem_adds_a_result_to_memory_and_file(tmp_path):
    path = tmp_path / "tuned.csv"
    tunable.set_filename(str(path))
    a = np.ones((13, 3), np.float32)  # a shape no other test tunes
    b = np.ones((3, 19), np.float32)
    before = len(tunable.get_results())
    tunekit.matmul(a, b)
    results = tunable.get_results()
    assert len(results) == before + 1
    mine = [r for r in results if r[:2] == ("GemmTunableOp_float_NN", "nn_19_13_3_ld_19_3_19")]
    assert len(mine) == 1 and isinstance(mine[0][3], float)
    text = path.read_text()
    assert text.startswith("Validator,") and "GemmTunableOp_float_NN,nn_19_13_3_ld_19_3_19," in text
    # Tuning off: a new problem runs Default and adds nothing.
    tunable.tuning_enable(False)
    tunekit.matmul(np.ones((14, 3), np.float32), b)
    assert len(tunable.get_results()) == before + 1


def test_write_then_read_round_trip(tmp_path):
    tunekit.matmul(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    assert tunable.write_file(str(one)) is True
    tunable.set_filename(str(two))
    assert tunable.write_file() is True
    assert one.read_bytes() == two.read_bytes()  # as upstream: byte-identical
    assert tunable.read_file(str(one)) is True
    assert tunable.read_file(str(tmp_path / "missing.csv")) is False


def test_read_file_of_a_bad_file_names_file_and_line(tmp_path):
    good = tmp_path / "good.csv"
    tunable.write_file(str(good))
    lines = good.read_text().splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines + ["GemmTunableOp_float_NN,this is not a result"]) + "\n")
    with pytest.raises(tunekit.ParseError) as info:
        tunable.read_file(str(bad))
    message = str(info.value)
    assert str(bad) in message and f":{len(lines) + 1}" in message
    assert "\n" not in message and info.value.code == "parse error"
    assert isinstance(info.value, tunekit.TunekitError) and isinstance(info.value, ValueError)


def test_read_file_of_another_environment_is_refused(tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("Validator,TUNEKIT_VERSION,0.0.0-elsewhere\n"
                     "GemmTunableOp_float_NN,nn_4_4_4_ld_4_4_4,Default,0.01\n")
    with pytest.raises(tunekit.ValidatorMismatchError, match="other.csv"):
        tunable.read_file(str(other))


def test_write_file_into_a_missing_folder_raises(tmp_path):
    with pytest.raises(tunekit.NotFoundError) as info:
        tunable.write_file(str(tmp_path / "no" / "such" / "dir.csv"))
    assert isinstance(info.value, FileNotFoundError) and "no/such/dir.csv" in str(info.value)
    with pytest.raises(tunekit.FileIOError) as info:
        tunable.write_file(str(tmp_path))  # a folder
    assert isinstance(info.value, OSError)


def test_write_file_on_exit(tmp_path):
    path = tmp_path / "exit.csv"
    code = f"""
import numpy as np, tunekit
from tunekit import tunable
tunable.set_filename({str(path)!r})
tunable.set_max_tuning_iterations(1); tunable.set_max_tuning_duration(1)
tunable.tuning_enable(False)
tunable.write_file_on_exit(True)
"""
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ.copy())
    assert path.read_text().startswith("Validator,")


def _in_fresh_process(env_extra, code):
    env = os.environ.copy()
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_environment_wins_over_the_calls(tmp_path):
    env = {
        "TUNEKIT_ENABLED": "0", "TUNEKIT_TUNING": "0", "TUNEKIT_RECORD_UNTUNED": "1",
        "TUNEKIT_MAX_TUNING_DURATION_MS": "123", "TUNEKIT_MAX_TUNING_ITERATIONS": "45",
        "TUNEKIT_ROTATING_BUFFER_SIZE": "2", "TUNEKIT_FILENAME": str(tmp_path / "env.csv"),
    }
    code = """
import json
from tunekit import tunable as t
t.enable(True); t.tuning_enable(True); t.record_untuned_enable(False)
t.set_max_tuning_duration(1); t.set_max_tuning_iterations(1); t.set_rotating_buffer_size(0)
t.set_filename('api.csv')
print(json.dumps([t.is_enabled(), t.tuning_is_enabled(), t.record_untuned_is_enabled(),
                  t.get_max_tuning_duration(), t.get_max_tuning_iterations(),
                  t.get_rotating_buffer_size(), t.get_filename()]))
"""
    got = _in_fresh_process(env, code)
    assert got == [False, False, True, 123, 45, 2 * 1024 * 1024, str(tmp_path / "env0.csv")]


def test_a_malformed_variable_is_reported():
    code = """
import json
from tunekit import _tunekit
print(json.dumps(_tunekit.tunable.environment_error()))
"""
    message = _in_fresh_process({"TUNEKIT_MAX_TUNING_ITERATIONS": "lots"}, code)
    assert "TUNEKIT_MAX_TUNING_ITERATIONS" in message
