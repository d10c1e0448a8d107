"""Offline tuning from Python: tune_gemm_in_file and mgpu_tune_gemm_in_file on small untuned
files (lines of the PyTorch TunableOp fixture in tests/data/tunableop)."""

import os
import re

import numpy as np
import pytest

import tunekit
from tunekit import tunable

from conftest import DATA_DIR


def dims_product(params):
    m, n, k = (int(t) for t in params.split("_")[1:4])
    batch = re.search(r"_B_(\d+)_", params)
    return m * n * k * (int(batch.group(1)) if batch else 1)


def small_fixture_lines():
    """The fixture's problems of at most 2^20 multiply-adds (the others take seconds each)."""
    with open(os.path.join(DATA_DIR, "tunableop", "untuned_mixed_ops.csv")) as f:
        lines = [line.strip() for line in f if line.strip()]
    return [line for line in lines if dims_product(line.split(",")[1]) <= 1 << 20]


@pytest.fixture
def untuned(tmp_path):
    lines = small_fixture_lines() + [
        "GemmTunableOp_float_TN,tn_8_12_16_ld_16_16_8",
        "ScaledGemmTunableOp_Float8_e4m3fn_Float8_e4m3fn_Half_TN,tn_16_16_16_ld_16_16_16_rw_0_bias_None",
    ]
    path = tmp_path / "untuned0.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, [line for line in lines if not line.startswith("Scaled")]


def test_fixture_has_small_problems():
    assert len(small_fixture_lines()) >= 2


def test_tune_gemm_in_file_adds_every_problem(tmp_path, untuned):
    path, problems = untuned
    results = tmp_path / "offline.csv"
    tunable.set_filename(str(results))
    with pytest.warns(UserWarning, match="ScaledGemm"):
        tunable.tune_gemm_in_file(str(path))
    text = results.read_text()
    body = [line for line in text.splitlines() if not line.startswith("Validator,")]
    assert text.startswith("Validator,")
    tuned = {tuple(line.split(",")[:2]) for line in body}
    for line in problems:
        op, params = line.split(",")[:2]
        if "_ld_" in params:  # old-format lines are stored in the current form
            assert (op, params) in tuned
    assert len(body) == len(problems)
    in_memory = {r[:2] for r in tunable.get_results()}
    assert tuned <= in_memory
    # Again: every problem already has a result, nothing is appended.
    with pytest.warns(UserWarning, match="ScaledGemm"):
        tunable.tune_gemm_in_file(str(path))
    assert results.read_text() == text


def test_tune_gemm_in_file_needs_tuning_on(untuned):
    tunable.tuning_enable(False)
    with pytest.raises(tunekit.InvalidArgumentError, match="tuning enabled"):
        tunable.tune_gemm_in_file(str(untuned[0]))


def test_tune_gemm_in_file_refuses_while_recording_untuned_problems(untuned):
    # No result is written while recording: tuning would lose every winner.
    tunable.record_untuned_enable(True)
    try:
        with pytest.raises(tunekit.InvalidArgumentError, match="record_untuned_enable"):
            tunable.tune_gemm_in_file(str(untuned[0]))
    finally:
        tunable.record_untuned_enable(False)


def test_tune_gemm_in_file_of_a_missing_file(tmp_path):
    with pytest.raises(tunekit.NotFoundError, match="nothing.csv"):
        tunable.tune_gemm_in_file(str(tmp_path / "nothing.csv"))


def test_the_tuned_winner_is_dispatched(tmp_path):
    untuned = tmp_path / "one.csv"
    untuned.write_text("GemmTunableOp_float_NN,nn_6_4_5_ld_6_5_6\n")
    tunable.tune_gemm_in_file(str(untuned))
    ops = {r[:2] for r in tunable.get_results()}
    assert ("GemmTunableOp_float_NN", "nn_6_4_5_ld_6_5_6") in ops
    # torch frame: C (4 x 6) = A (4 x 5) @ B (5 x 6) is BLAS nn_6_4_5.
    a, b = np.ones((4, 5), np.float32), np.ones((5, 6), np.float32)
    count = len(tunable.get_results())
    np.testing.assert_allclose(tunekit.matmul(a, b), a @ b)
    assert len(tunable.get_results()) == count  # a hit: nothing new tuned


def test_mgpu_tune_gemm_in_file_over_two_processes(tmp_path, untuned, monkeypatch):
    path, problems = untuned
    monkeypatch.chdir(tmp_path)
    tunable.set_filename(str(tmp_path / "res.csv"))
    env_base = tmp_path / "res.csv"
    monkeypatch.setenv("TUNEKIT_MAX_TUNING_ITERATIONS", "1")
    monkeypatch.setenv("TUNEKIT_MAX_TUNING_DURATION_MS", "1")
    monkeypatch.setenv("TUNEKIT_ROTATING_BUFFER_SIZE", "0")
    workers = min(2, tunekit._tunekit.offline.device_count())
    with pytest.warns(UserWarning, match="ScaledGemm"):
        tunable.mgpu_tune_gemm_in_file(str(tmp_path / "untuned?.csv"), workers)
    per_worker = [tmp_path / f"res{r}.csv" for r in range(workers)]
    assert all(p.exists() and p.stat().st_size > 0 for p in per_worker)
    full = [tmp_path / f"res_full{r}.csv" for r in range(workers)]
    texts = [p.read_text() for p in full]
    assert all(t == texts[0] for t in texts)
    body = [line for line in texts[0].splitlines() if not line.startswith("Validator,")]
    assert len(body) == len(problems)
    assert env_base.exists() is False  # only the ordinal files and the gathered ones


def test_mgpu_count_rules(untuned):
    count = tunekit._tunekit.offline.device_count()
    for bad in (0, -1, count + 1, 1.5):
        with pytest.raises(tunekit.InvalidArgumentError, match="num_gpus must be between 1 and"):
            tunable.mgpu_tune_gemm_in_file(str(untuned[0]), bad)
    with pytest.raises(tunekit.NotFoundError, match="no file matches .*absent"):
        tunable.mgpu_tune_gemm_in_file(str(untuned[0].parent / "absent?.csv"), 1)


def test_ctrl_c_stops_tune_gemm_in_file_keeping_the_results(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    untuned = tmp_path / "many.csv"
    untuned.write_text("".join(f"GemmTunableOp_float_NN,nn_{m}_3_5_ld_{m}_5_{m}\n"
                               for m in range(1, 201)))
    results = tmp_path / "interrupted.csv"
    code = f"""
from tunekit import tunable
tunable.set_filename({str(results)!r})
tunable.set_max_tuning_iterations(1); tunable.set_max_tuning_duration(1)
tunable.set_rotating_buffer_size(0)
try:
    tunable.tune_gemm_in_file({str(untuned)!r})
except KeyboardInterrupt:
    raise SystemExit(42)
raise SystemExit(0)
"""
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if results.exists() and results.read_text().count("GemmTunableOp_float_NN") >= 2:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 42
    tuned = results.read_text().count("GemmTunableOp_float_NN")
    assert 2 <= tuned < 200
