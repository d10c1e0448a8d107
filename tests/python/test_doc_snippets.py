"""The code in README.md and docs/*.md works as shown.

* Every ```python block runs, as a fresh interpreter in an empty folder, with the built module and
  tiny tuning budgets (TUNEKIT_MAX_TUNING_DURATION_MS=1, TUNEKIT_MAX_TUNING_ITERATIONS=1), unless
  its first line says ``# not run by the docs test: <reason>``: it is then skipped with that
  reason.
* Every ```cpp block holding ``int main(`` is compiled against the built library and run the same
  way; other C++ blocks are fragments and are not compiled.
* Every ``tunekit`` command line in a ```sh block or after ``$ `` in a transcript names a command
  that exists, and each of its options appears in that command's --help.

Files are listed in NOT_CHECKED with a reason when their snippets cannot run yet.
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

tunekit = pytest.importorskip("tunekit")

REPO = Path(__file__).resolve().parents[2]
MODULE_DIR = Path(tunekit.__file__).resolve().parents[1]  # <build>/python
BUILD = MODULE_DIR.parent if (MODULE_DIR.parent / "CMakeCache.txt").is_file() else None
CLI = BUILD / "tools" / "cli" / "tunekit" if BUILD is not None else None
NOT_RUN = re.compile(r"^\s*(?:#|//) not run by the docs test: (.+)$")
NOT_CHECKED = {
    "docs/native.md": "its snippets are fragments of a longer text, edited in another branch",
}
# Commands whose next word is a sub-command of their own.
NESTED = {"db", "log", "results", "space"}


def documents():
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        name = path.relative_to(REPO).as_posix()
        if name not in NOT_CHECKED:
            yield name, path


def blocks():
    """(document, first line number, language, text) of every fenced block."""
    for name, path in documents():
        lines = path.read_text().splitlines()
        i = 0
        while i < len(lines):
            fence = re.match(r"^```(\w*)\s*$", lines[i])
            if not fence:
                i += 1
                continue
            start, language = i + 1, fence.group(1)
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                i += 1
            yield name, start + 1, language, "\n".join(lines[start:i]) + "\n"
            i += 1


def snippets(language):
    return [pytest.param(text, id=f"{name}:{line}")
            for name, line, lang, text in blocks() if lang == language]


def skip_reason(text):
    first = text.splitlines()[0] if text.strip() else ""
    match = NOT_RUN.match(first)
    return match.group(1) if match else None


def run_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUNEKIT_")}
    env.update(TUNEKIT_DB="off", TUNEKIT_SYSTEM_DB="off")
    env.update(PYTHONPATH=str(MODULE_DIR), PYTHONDONTWRITEBYTECODE="1",
               TUNEKIT_MAX_TUNING_DURATION_MS="1", TUNEKIT_MAX_TUNING_ITERATIONS="1",
               TUNEKIT_THREADS="1", TUNEKIT_CACHE_DIR=str(tmp_path / "kernel_cache"))
    return env


def require_build():
    if BUILD is None:
        pytest.skip(f"the module in {MODULE_DIR} is not a build's (no CMakeCache.txt beside it)")


@pytest.mark.parametrize("text", snippets("python"))
def test_python_snippet_runs(text, tmp_path):
    require_build()
    reason = skip_reason(text)
    if reason:
        pytest.skip(reason)
    (tmp_path / "snippet.py").write_text(text)
    run = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, env=run_env(tmp_path),
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, f"exit {run.returncode}\n{text}\n{run.stdout}\n{run.stderr}"


@pytest.mark.parametrize("text", snippets("cpp"))
def test_cpp_program_compiles_and_runs(text, tmp_path):
    require_build()
    reason = skip_reason(text)
    if reason:
        pytest.skip(reason)
    if "int main(" not in text:
        pytest.skip("a fragment (no main)")
    (tmp_path / "snippet.cpp").write_text(text)
    library = BUILD / "src"
    compile_ = subprocess.run(
        [os.environ.get("CXX", "c++"), "-std=c++20", "-O1", f"-I{REPO / 'include'}",
         f"-I{BUILD / 'include'}", "snippet.cpp", "-o", "snippet", f"-L{library}", "-ltunekit",
         f"-Wl,-rpath,{library}"], cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert compile_.returncode == 0, f"{text}\n{compile_.stderr}"
    run = subprocess.run(["./snippet"], cwd=tmp_path, env=run_env(tmp_path), capture_output=True,
                         text=True, timeout=240)
    assert run.returncode == 0, f"exit {run.returncode}\n{text}\n{run.stdout}\n{run.stderr}"


def command_lines():
    """Every tunekit command of ```sh blocks and of "$ " lines in other blocks."""
    found = []
    for name, line, language, text in blocks():
        if language not in ("sh", "bash", ""):
            continue
        for k, row in enumerate(text.splitlines()):
            if language == "" and not row.startswith("$ "):
                continue
            command = row[2:] if row.startswith("$ ") else row
            found.extend(pytest.param(words, id=f"{name}:{line + k}")
                         for words in tunekit_commands(command))
    return found


def tunekit_commands(command):
    """The argument lists of the tunekit calls in a shell line (up to the next |, &&, ;, >)."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return []
    calls, current = [], None
    for k, word in enumerate(words):
        if word in ("|", "||", "&&", ";") or word.startswith(">"):
            current = None
        elif current is not None:
            current.append(word)
        elif Path(word).name == "tunekit" and not (k > 0 and words[k - 1].startswith("-")):
            current = []
            calls.append(current)
    return [c for c in calls if c and not c[0].startswith("-")]


@pytest.mark.parametrize("words", command_lines())
def test_command_line_names_a_command_and_its_options(words):
    require_build()
    if not CLI.is_file():
        pytest.skip(f"{CLI} is not built")
    command = words[:2] if words[0] in NESTED and len(words) > 1 else words[:1]
    helped = subprocess.run([str(CLI), *command, "--help"], capture_output=True, text=True,
                            timeout=60)
    assert helped.returncode == 0, f"tunekit {' '.join(command)}: {helped.stderr}"
    for word in words[len(command):]:
        if re.match(r"^--?[A-Za-z]", word):
            option = word.split("=", 1)[0]
            assert re.search(rf"(^|[\s,]){re.escape(option)}\b", helped.stdout), \
                f"tunekit {' '.join(command)} has no option {option}"
