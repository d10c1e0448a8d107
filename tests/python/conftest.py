"""Shared fixtures: every test starts from tunekit's default settings with a results file of its
own in pytest's temporary folder and tiny tuning budgets (1 timed call, 1 ms per candidate)."""

import os

import pytest

tunekit = pytest.importorskip("tunekit")
from tunekit import tunable  # noqa: E402

DATA_DIR = os.environ.get("TUNEKIT_TEST_DATA_DIR",
                          os.path.join(os.path.dirname(__file__), "..", "data"))


@pytest.fixture(autouse=True)
def fresh_settings(tmp_path):
    tunable.enable(True)
    tunable.tuning_enable(True)
    tunable.record_untuned_enable(False)
    tunable.set_filename(str(tmp_path / "results.csv"))
    tunable.set_max_tuning_duration(1)
    tunable.set_max_tuning_iterations(1)
    tunable.set_rotating_buffer_size(0)
    tunable.set_numerical_check_tolerances(True, 1e-4, 1e-4)
    yield
    tunable.write_file_on_exit(False)


@pytest.fixture
def no_tuning():
    """Dispatch without tuning (Default for every problem): for sweeps over many shapes."""
    tunable.tuning_enable(False)
    yield
    tunable.tuning_enable(True)
