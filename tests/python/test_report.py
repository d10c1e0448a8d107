"""tunekit.report() (the HTML page through the C++ code) and the progress of
tunable.tune_gemm_in_file: tqdm's bar when tqdm imports, plain lines without it."""
import re
import sys
import types

import pytest

import tunekit
from tunekit import tunable

PROBLEMS = ["GemmTunableOp_float_NN,nn_8_12_16_ld_8_16_8",
            "GemmTunableOp_float_TN,tn_8_12_16_ld_16_16_8"]


@pytest.fixture
def untuned(tmp_path):
    path = tmp_path / "untuned0.csv"
    path.write_text("\n".join(PROBLEMS) + "\n")
    return path


def test_plain_lines_without_tqdm(untuned, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    tunable.tune_gemm_in_file(str(untuned))
    err = capsys.readouterr().err.splitlines()
    lines = [line for line in err if line.startswith("[")]
    assert len(lines) == 2, err
    # "cached" when another test of this process tuned the problem already.
    assert re.match(r"\[1/2\] tune_gemm_in_file: " + re.escape(PROBLEMS[0]) + r": (tuned|cached) \S",
                    lines[0]), lines[0]
    assert lines[1].startswith("[2/2] tune_gemm_in_file: " + PROBLEMS[1])
    assert "(elapsed " in lines[1]


def test_tqdm_bar_when_installed(untuned, monkeypatch):
    updates = []

    class FakeTqdm:
        def __init__(self, total, desc, unit):
            updates.append(("new", total, desc, unit))

        def set_postfix_str(self, text, refresh=True):
            updates.append(("postfix", text))

        def update(self, n=1):
            updates.append(("update", n))

        def close(self):
            updates.append(("close",))

    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = FakeTqdm
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    tunable.tune_gemm_in_file(str(untuned))
    assert updates[0] == ("new", 2, "tune_gemm_in_file", "problem")
    assert [u for u in updates if u[0] == "update"] == [("update", 1)] * 2
    assert updates[-1] == ("close",)


def test_no_progress_when_asked(untuned, capsys):
    tunable.tune_gemm_in_file(str(untuned), progress=False)
    assert "[1/2]" not in capsys.readouterr().err


def test_report_of_a_results_file(tmp_path):
    # Problems no other test tuned in this process (those would not be written again).
    untuned = tmp_path / "untuned1.csv"
    untuned.write_text("GemmTunableOp_float_NN,nn_10_6_14_ld_10_14_10\n")
    tunable.tune_gemm_in_file(str(untuned), progress=False)
    out = tmp_path / "report.html"
    results = sorted(tmp_path.glob("results*.csv"))  # the device ordinal is inserted
    assert results
    try:
        written = tunekit.report(out, results=results, title="python report")
    except tunekit.NotFoundError as e:
        assert "libjs-chart.js" in str(e)
        pytest.skip(str(e))
    assert written == str(out)
    page = out.read_text()
    assert "<title>python report</title>" in page
    assert 'id="tunekit-data"' in page and "nn_10_6_14_ld_10_14_10" in page
    assert "Content-Security-Policy" in page


def test_report_of_a_missing_database(tmp_path):
    with pytest.raises(tunekit.TunekitError):
        tunekit.report(tmp_path / "r.html", db=tmp_path / "missing.db")


def test_report_refuses_to_overwrite_its_input(tmp_path):
    results = tmp_path / "only.csv"
    line = "GemmTunableOp_float_NN,nn_68_32_48_ld_68_48_68,Default,0.007\n"
    results.write_text(line)
    with pytest.raises(tunekit.InvalidArgumentError, match="is its input"):
        tunekit.report(results, results=results)
    assert results.read_text() == line
