"""Running the tunekit CLI from the search scripts: one clear error line instead of a traceback.

`fail(prog, message)` prints "prog: message" on standard error and exits with status 2; `json_of`
runs a tunekit command and returns its JSON output, failing with tunekit's own message (or the
reason the command could not run) prefixed by `what`.
"""

import json
import os
import subprocess
import sys


def fail(prog, message):
    print(f"{prog}: {message}", file=sys.stderr)
    sys.exit(2)


def output_of(prog, cmd, what):
    """stdout of `cmd` (a tunekit command line); fails with `what` and the reason."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        fail(prog, f"cannot run --tunekit '{cmd[0]}': {e.strerror or e}")
    if done.returncode != 0:
        reason = done.stderr.strip() or done.stdout.strip()
        fail(prog, f"{what}: tunekit failed (exit {done.returncode}): {reason}")
    return done.stdout


def json_of(prog, cmd, what):
    """The JSON printed by `cmd`; fails when the command fails or prints something else."""
    out = output_of(prog, cmd, what)
    try:
        return json.loads(out)
    except ValueError:
        fail(prog, f"{what}: --tunekit '{cmd[0]}' did not print tunekit's JSON")


def check_data_files(prog, tunekit, paths):
    """Every data file exists, is read by tunekit (one run of one evaluation) and their base
    names differ (results are kept per base name)."""
    names = {}
    for p in paths:
        name = os.path.basename(p)
        if name in names and names[name] != p:
            fail(prog, f"'{names[name]}' and '{p}' have the same file name; give each space once")
        names[name] = p
        output_of(prog, [tunekit, "simulate", "--data", p, "--strategy", "random", "--budget", "1", "--runs", "1",
                         "--threads", "1", "--no-score"], p)


def check_settings(prog, tunekit, path, settings, what):
    """tunekit's auto accepts `settings` (a JSON object of known, valid settings, no key twice):
    one short run on `path`."""
    output_of(prog, [tunekit, "simulate", "--data", path, "--strategy", "auto", "--settings", settings,
                     "--budget", "1", "--runs", "1", "--threads", "1", "--no-score"], f"{what} '{settings}'")
