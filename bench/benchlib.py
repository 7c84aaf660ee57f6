"""What bench/'s scripts share: logging, markdown tables, running seam-run.

Imported by reproduce.py, compile_time.py and step_time.py (all run with
Debian's /usr/bin/python3 from the repository root or anywhere else).
"""
import json
import os
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


# The Dask engine (bench/sweep.py) that seam_run_json runs its points on,
# when a script sets one (reproduce.py does); None: a local subprocess.
ENGINE = None


def _shipped_files(args):
    """Files a point reads that travel with its task: a model file
    (positional) and --input name=file.npy; other paths (--output-dir,
    --cache-dir) must be on a file system the workers share."""
    files, prev = [], None
    for a in args:
        path = a.split("=", 1)[1] if prev == "--input" and "=" in a else a
        if prev not in ("--output-dir", "--cache-dir", "--json",
                        "--trace") and not path.startswith("-") and \
                os.path.isfile(path):
            files.append(path)
        prev = a
    return files


def seam_run_json(seam_run, args, json_path, cold_in=None, exclusive=False):
    """Runs `seam-run --quiet --json json_path ARGS`; returns (its JSON, wall
    s). With `cold_in` (a directory) the run gets a fresh, empty compile
    cache there, so its first run compiles cold. With ENGINE set, the run
    is a task of its Dask cluster (seam-run from the engine's --seam-bin;
    a fresh compile cache unless ARGS name one) and `json_path` gets a copy
    of its JSON; `exclusive`: see submit_seam_run."""
    if ENGINE is not None:
        return submit_seam_run(seam_run, args, json_path, exclusive)()
    cmd = [seam_run, "--quiet", "--json", json_path]
    if cold_in:
        cmd += ["--cache-dir", tempfile.mkdtemp(prefix="cache-", dir=cold_in)]
    _, wall = run(cmd + list(args))
    with open(json_path) as f:
        return json.load(f), wall


def submit_seam_run(seam_run, args, json_path, exclusive=False):
    """seam_run_json started now, waited for later: returns a function that
    returns (its JSON, wall s) or raises RuntimeError. With ENGINE set the
    run starts at once on the cluster; without, when the function is
    called.

    Wall-clock figures must not be measured beside other runs: an
    `exclusive` run (one whose table shows its cold compile or compile-phase
    time) runs alone on the cluster, and a run that turns out to have
    host-fallback ops (timed for real on the CPU) is run again alone and
    that run's JSON returned."""
    if ENGINE is None:
        return lambda: seam_run_json(seam_run, args, json_path)
    import sweep
    point = sweep.Point(args, files=_shipped_files(args))
    fut = ENGINE.submit(point, exclusive=exclusive)

    def wait():
        res = sweep.Result(fut.result())
        if res.ok and not exclusive and \
                res.json.get("structure", {}).get("host_ops", 0) > 0:
            res = ENGINE.run(point, exclusive=True)
        if not res.ok:
            raise RuntimeError("command failed: seam-run %s\n%s" % (
                " ".join(args), res.error))
        log("  %.1fs  seam-run %s" % (res.wall_s, " ".join(args)[:150]))
        with open(json_path, "w") as f:
            json.dump(res.json, f)
        return res.json, res.wall_s
    return wait
