"""CTest's entry to the pytest suite: runs it in a fresh temporary folder (so the default
results and untuned files never land in the source tree) with the built module on sys.path.
Exits 77 (CTest: skipped) with a message when pytest or NumPy is missing.

Usage: run_pytest.py BUILD_PYTHON_DIR [pytest args...]
"""

import os
import subprocess
import sys
import tempfile


def main() -> int:
    module_dir = os.path.abspath(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("pytest", "numpy"):
        try:
            __import__(name)
        except ImportError:
            print(f"SKIPPED: {name} is not installed for {sys.executable} "
                  "(scripts/install-deps.sh installs it)")
            return 77
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([module_dir] + (
        [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    keep = ("TUNEKIT_TEST_DATA_DIR", "TUNEKIT_TORCH_BUILD_DIR")  # set by CTest for the suite
    for var in [v for v in env if v.startswith("TUNEKIT_") and v not in keep]:
        del env[var]  # the suite sets what it needs; a developer's settings must not leak in
    env["TUNEKIT_THREADS"] = "1"
    env["TUNEKIT_DB"] = env["TUNEKIT_SYSTEM_DB"] = "off"  # never the developer's databases
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the source tree
    with tempfile.TemporaryDirectory(prefix="tunekit_pytest_") as tmp:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", here] + sys.argv[2:]
        return subprocess.call(cmd, cwd=tmp, env=env)


if __name__ == "__main__":
    sys.exit(main())
