"""What bench/'s scripts share: logging, markdown tables, running seam-run.

Imported by reproduce.py, compile_time.py and step_time.py (all run with
Debian's /usr/bin/python3 from the repository root or anywhere else).
"""
import json
import subprocess
import sys
import tempfile
import time


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def markdown(header, rows):
    out = ["| " + " | ".join(str(h) for h in header) + " |",
           "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def run(cmd, **kw):
    """Runs `cmd`; returns (completed process, wall s). A non-zero exit
    raises RuntimeError with the command and the tail of its stderr."""
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    wall = time.time() - t0
    if p.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s" %
                           (p.returncode, " ".join(cmd), p.stderr[-4000:]))
    log("  %.1fs  %s" % (wall, " ".join(cmd)[:160]))
    return p, wall


def seam_run_json(seam_run, args, json_path, cold_in=None):
    """Runs `seam-run --quiet --json json_path ARGS`; returns (its JSON, wall
    s). With `cold_in` (a directory) the run gets a fresh, empty compile
    cache there, so its first run compiles cold."""
    cmd = [seam_run, "--quiet", "--json", json_path]
    if cold_in:
        cmd += ["--cache-dir", tempfile.mkdtemp(prefix="cache-", dir=cold_in)]
    _, wall = run(cmd + list(args))
    with open(json_path) as f:
        return json.load(f), wall
