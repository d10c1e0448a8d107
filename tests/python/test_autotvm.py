"""AutoTVM's workflow on tunekit: templates, tasks, tuners, measure options, callbacks, logs,
resume, apply_history_best and its miss warning, failures as records, Ctrl-C, bad input.
Tiny kernels (a 16x16x16 matmul) and budgets of a few trials keep each test to seconds."""

import json
import os
import signal
import subprocess
import threading
import warnings

import numpy as np
import pytest

import tunekit
from tunekit import Array, Scalar

MATMUL = r"""
#ifndef tile_y_1
#define tile_y_1 4
#endif
#ifndef tile_x_1
#define tile_x_1 4
#endif
#ifndef crash
#define crash 0
#endif
extern "C" void matmul(int M, int N, int K, const float* A, const float* B, float* C) {
  if (crash) *(volatile int*)0 = 1;
  for (int yo = 0; yo < M; yo += tile_y_1)
    for (int xo = 0; xo < N; xo += tile_x_1)
      for (int y = yo; y < yo + tile_y_1 && y < M; ++y)
        for (int x = xo; x < xo + tile_x_1 && x < N; ++x) {
          float acc = 0.f;
          for (int k = 0; k < K; ++k) acc += A[y * K + k] * B[k * N + x];
          C[y * N + x] = acc;
        }
}
"""


def matmul_kernel(M, N, K):
    return tunekit.Kernel(
        source=MATMUL, entry="matmul", flags=["-O1"],
        arguments=[Scalar("M", M), Scalar("N", N), Scalar("K", K), Array("A", (M, K)),
                   Array("B", (K, N)), Array("C", (M, N), output=True)],
        verify={"atol": 1e-3, "rtol": 1e-4})


@tunekit.template("test.matmul")
def matmul(M, N, K):
    cfg = tunekit.get_config()
    cfg.define_split("tile_y", M, num_outputs=2)
    cfg.define_split("tile_x", N, num_outputs=2)
    cfg.define_knob("unroll", [1, 2])
    cfg.add_flop(2 * M * N * K)
    return matmul_kernel(M, N, K)


@tunekit.template("test.crashing")
def crashing(M):
    cfg = tunekit.get_config()
    cfg.define_knob("crash", [0, 1])
    cfg.define_knob("tile_y_1", [1, 2])
    return matmul_kernel(M, M, M)


@pytest.fixture
def measure(tmp_path):
    return tunekit.measure_option(
        builder=tunekit.LocalBuilder(n_parallel=2, timeout=60, cache_dir=str(tmp_path / "cache")),
        runner=tunekit.LocalRunner(number=1, repeat=1, timeout=10))


@pytest.fixture
def serial_measure(tmp_path):
    """One build at a time: every batch is one trial (the interruption tests count batches)."""
    return tunekit.measure_option(
        builder=tunekit.LocalBuilder(n_parallel=1, cache_dir=str(tmp_path / "cache")),
        runner=tunekit.LocalRunner(number=1, repeat=1))


def test_a_task_collects_the_template_space():
    task = tunekit.task.create("test.matmul", args=(16, 16, 16))
    space = task.config_space
    assert len(space) == 5 * 5 * 2 and space.range_length == 50
    assert task.flop == 2 * 16 ** 3
    assert task.target == "c -march=native"
    assert task.workload == ("test.matmul", 16, 16, 16)
    assert space["tile_y"].size == [-1, 1]  # the first entity while collecting
    assert [e.val for e in space.space_map["unroll"]] == [1, 2]
    cfg = space.get(7)  # mixed radix: tile_y is the least significant digit
    assert cfg["tile_y"].size == [-1, 4] and cfg["tile_x"].size == [-1, 2]
    # A split becomes <name>_0 (outer extent) ... <name>_<n-1> (innermost factor).
    assert cfg.defines == [("tile_y_0", "4"), ("tile_y_1", "4"), ("tile_x_0", "8"),
                           ("tile_x_1", "2"), ("unroll", "1")]
    with pytest.raises(IndexError):
        space.get(50)


def test_tune_logs_every_trial_and_the_best_is_applied(tmp_path, measure, capsys):
    log = str(tmp_path / "matmul.log")
    task = tunekit.task.create("test.matmul", args=(16, 16, 16))
    tuner = tunekit.tuner.RandomTuner(task, seed=3)
    tuner.tune(n_trial=4, measure_option=measure,
               callbacks=[tunekit.callback.progress_bar(4), tunekit.callback.log_to_file(log)])
    out = capsys.readouterr().out
    assert "Current/Best:" in out and "GFLOPS | Progress: (4/4)" in out
    pairs = list(tunekit.record.load_from_file(log))
    assert len(pairs) == 4
    assert all(res.error_no == tunekit.MeasureErrorNo.NO_ERROR for _, res in pairs)
    inp, res = pairs[0]
    assert inp.task.name == "test.matmul" and inp.task.args == (16, 16, 16)
    assert inp.target == "c -march=native" and len(res.costs) == 1
    best_inp, best_res = tuner.best_measure_pair
    assert best_res.mean == min(r.mean for _, r in pairs)
    assert tuner.best_flops == pytest.approx(task.flop / best_res.mean)

    with tunekit.apply_history_best(log) as context:
        kernel = matmul(16, 16, 16)
    assert context.hits == ["test.matmul"]
    assert str(kernel.config) == str(tuner.best_config)
    a = np.random.rand(16, 16).astype(np.float32)
    b = np.random.rand(16, 16).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    kernel.compile()(16, 16, 16, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    with pytest.raises(tunekit.InvalidArgumentError, match="argument 5 has 64 elements; the "
                                                           "kernel was tuned for 256"):
        kernel.compile()(16, 16, 16, a, b, np.zeros(64, np.float32))
    with pytest.raises(tunekit.DTypeError, match="argument 3 must be a C-contiguous numpy array "
                                                 "of float32"):
        kernel.compile()(16, 16, 16, a.T, b, c)

    cli = os.path.join(os.path.dirname(tunekit.__file__), "..", "..", "tools", "cli", "tunekit")
    if os.path.exists(cli):  # the build tree: the CLI reads the log the tuner wrote
        best = str(tmp_path / "best.log")
        done = subprocess.run([cli, "log", "best", log, "--out", best], capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stderr
        (line,) = [line for _, line in _lines(best)]
        assert json.loads(line)["config"] == tuner.best_config.to_json_dict()


def _lines(path):
    with open(path) as f:
        return [(i, line) for i, line in enumerate(f) if line.strip()]


def test_a_miss_inside_apply_history_best_warns_once_naming_the_task(tmp_path, measure):
    log = str(tmp_path / "matmul.log")
    task = tunekit.task.create("test.matmul", args=(16, 16, 16))
    tunekit.tuner.GridSearchTuner(task).tune(2, measure, callbacks=[
        tunekit.callback.log_to_file(log)])
    with tunekit.apply_history_best(log):
        with pytest.warns(RuntimeWarning, match=r"test\.matmul.*fallback configuration") as got:
            kernel = matmul(8, 8, 8)
            matmul(8, 8, 8)
    assert len([w for w in got if "Cannot find config" in str(w.message)]) == 1
    assert kernel.config.is_fallback and kernel.config.index == 0
    # Outside any context the template gives the fallback silently (the untuned kernel).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert matmul(16, 16, 16).config.index == 0


def test_a_crashing_configuration_is_a_failed_record(tmp_path, measure):
    log = str(tmp_path / "crash.log")
    task = tunekit.task.create("test.crashing", args=(8,))
    seen = []
    tuner = tunekit.tuner.GridSearchTuner(task)
    tuner.tune(4, measure, callbacks=[tunekit.callback.log_to_file(log),
                                      lambda t, inputs, results: seen.extend(results)])
    assert len(seen) == 4
    failed = [r for r in seen if r.error_no == tunekit.MeasureErrorNo.RUNTIME_DEVICE]
    assert len(failed) == 2 and "SIGSEGV" in failed[0].error_msg
    assert tuner.best_config["crash"].val == 0
    errors = [res.error_no for _, res in tunekit.record.load_from_file(log)]
    assert sorted(errors) == [0, 0, 4, 4]


def test_a_resumed_tuner_measures_only_new_configurations(tmp_path, measure):
    log = str(tmp_path / "resume.log")
    task = tunekit.task.create("test.matmul", args=(16, 16, 16))
    first = tunekit.tuner.RandomTuner(task, seed=1)
    first.tune(3, measure, callbacks=[tunekit.callback.log_to_file(log)])
    second = tunekit.tuner.RandomTuner(task, seed=1)  # same seed: would propose the same three
    assert second.load_history(tunekit.record.load_from_file(log)) == 3
    second.tune(2, measure, callbacks=[tunekit.callback.log_to_file(log)])
    indices = [inp.config.index for inp, _ in tunekit.record.load_from_file(log)]
    assert len(indices) == 5 and len(set(indices)) == 5
    assert second.trial_count == 5


def test_ctrl_c_stops_tuning_and_keeps_the_records(tmp_path, serial_measure):
    log = str(tmp_path / "interrupted.log")
    task = tunekit.task.create("test.matmul", args=(16, 16, 16))
    batches = []

    def interrupt(tuner, inputs, results):
        batches.append(len(inputs))
        if len(batches) == 2:
            raise KeyboardInterrupt

    tuner = tunekit.tuner.RandomTuner(task)
    with pytest.raises(KeyboardInterrupt):
        tuner.tune(10, serial_measure, callbacks=[interrupt, tunekit.callback.log_to_file(log)])
    # The log callback still wrote the interrupted batch; nothing ran after it.
    assert len(list(tunekit.record.load_from_file(log))) == 2
    assert tuner.trial_count == 2


def test_a_real_sigint_stops_tuning_after_the_batch_in_flight(tmp_path, serial_measure):
    log = str(tmp_path / "sigint.log")
    task = tunekit.task.create("test.matmul", args=(16, 16, 16))
    tuner = tunekit.tuner.GridSearchTuner(task)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            tuner.tune(50, serial_measure, callbacks=[tunekit.callback.log_to_file(log)])
    finally:
        timer.cancel()
    records = list(tunekit.record.load_from_file(log)) if os.path.exists(log) else []
    # Every finished trial is in the log, none failed (the worker did not get the signal), and
    # the run stopped long before its 50 trials.
    assert len(records) == tuner.trial_count < 50
    assert all(res.error_no == 0 for _, res in records)


def test_model_based_and_genetic_tuners_run(tmp_path, measure):
    task = tunekit.task.create("test.matmul", args=(16, 16, 16))
    xgb = tunekit.tuner.XGBTuner(task, loss_type="rank", plan_size=2)
    xgb.tune(4, measure, early_stopping=10)
    assert xgb.trial_count == 4 and xgb.best_config is not None
    ga = tunekit.tuner.GATuner(task, pop_size=4)
    ga.tune(2, measure)
    assert ga.trial_count == 2
    auto = tunekit.tuner.AutoTuner(task)
    auto.tune(2, measure)
    assert auto.best_flops > 0


def test_bad_input_is_one_clear_error():
    with pytest.raises(tunekit.NotFoundError, match="no template named 'nope'.*test.matmul"):
        tunekit.task.create("nope", args=(1,))

    @tunekit.template("test.not_a_kernel")
    def not_a_kernel(n):
        tunekit.get_config().define_knob("x", [1])
        return "int main() {}"

    with pytest.raises(TypeError, match="returned str; a template returns tunekit.Kernel"):
        tunekit.task.create("test.not_a_kernel", args=(1,))
    task = tunekit.task.create("test.matmul", args=(16, 16, 16))
    with pytest.raises(tunekit.NotFoundError, match="unknown.*'annealing'.*grid"):
        tunekit.tuner.Tuner(task, "annealing")
    with pytest.raises(tunekit.InvalidArgumentError, match="loss"):
        tunekit.tuner.XGBTuner(task, loss_type="hinge")
    with pytest.raises(TypeError, match="give a task"):
        tunekit.tuner.RandomTuner("test.matmul")
    with pytest.raises(TypeError, match="kernel argument must be"):
        tunekit.Kernel(source="x", entry="k", arguments=[3])
    with pytest.raises(tunekit.DTypeError, match="float16"):
        Array("h", 4, dtype="float16")
    with pytest.raises(RuntimeError, match="only valid inside a @tunekit.template"):
        tunekit.get_config()
    with pytest.raises(tunekit.NotFoundError, match="cannot open tuning log"):
        list(tunekit.record.load_from_file("/nonexistent/x.log"))

    @tunekit.template("test.bad_knob")
    def bad_knob(n):
        tunekit.get_config().define_knob("tile-x", [1, 2])
        return matmul_kernel(n, n, n)

    with pytest.raises(tunekit.InvalidArgumentError, match="'tile-x' is not a C identifier"):
        tunekit.task.create("test.bad_knob", args=(4,))

    @tunekit.template("test.bad_argument")
    def bad_argument(n):
        tunekit.get_config().define_knob("t", [1])
        return tunekit.Kernel(source=MATMUL, entry="matmul",
                              arguments=[{"name": "n", "dtype": "int32", "value": 1.5}])

    bad = tunekit.task.create("test.bad_argument", args=(4,))
    with pytest.raises(tunekit.InvalidArgumentError,
                       match=r"^template 'test.bad_argument': arguments\[0\]\.value: 1\.5 is not "
                             r"a whole number \(dtype int32\)$"):
        tunekit.tuner.RandomTuner(bad).tune(1, tunekit.measure_option())
