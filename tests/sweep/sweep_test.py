#!/usr/bin/python3
"""ctest cases of bench/seam-sweep, with real processes on 127.0.0.1.

    sweep_test.py BIN_DIR cluster   a `dask scheduler` and two `dask worker`s
                                    started here; a 24-point sweep through
                                    --scheduler, one worker SIGKILLed
                                    mid-sweep; every row against a serial
                                    seam-run of the same point
    sweep_test.py BIN_DIR errors    wrong scheduler address, missing seam
                                    binary: one clear line, within seconds
    sweep_test.py BIN_DIR resume    SIGINT mid-sweep, then a rerun runs only
                                    the points that were missing

Timing-only runs of flux2-klein cut to one block (--layers 1), so each point
takes a fraction of a second. Every wait is bounded; a case fails with one
line saying what did not hold.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SWEEP = os.path.join(ROOT, "bench", "seam-sweep")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import sweep  # noqa: E402

PY = "/usr/bin/python3"
# 3 lengths x 4 kernel sets x 2 modes = 24 points.
GRID = ["--model", "flux2-klein", "--layers", "1", "--target", "trn2",
        "--seq", "256,512,1024", "--kernels", "none", "--kernels", "qkv",
        "--kernels", "flash-attn", "--kernels", "qkv,flash-attn",
        "--mode", "eager,compile", "--steps", "2"]
NPOINTS = 24


class Failed(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failed(msg)


def log(msg):
    print("sweep_test: " + msg, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def read_rows(out):
    rows = []
    path = os.path.join(out, "results.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
    return rows


def wait_for(pred, timeout, what):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if pred():
            return
        time.sleep(0.02)
    raise Failed("timed out after %ds waiting for %s" % (timeout, what))


def against_serial(bin_dir, rows, tmp):
    """Each row's modelled figures against a lone seam-run of its point
    (fresh compile cache, one after another)."""
    seam_run = os.path.join(bin_dir, "seam-run")
    serials = []
    for i, r in enumerate(rows):
        args = ["--model", r["model"], "--layers", str(r["layers"]),
                "--target", r["target"], "--seq", str(r["seq"]),
                "--kernels", r["kernels"], "--mode", r["mode"],
                "--steps", str(r["steps"]), "--runs", str(r["runs"])]
        out = os.path.join(tmp, "serial-%d.json" % i)
        p = subprocess.run([seam_run, "--quiet", "--json", out] + args,
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "serial seam-run %s failed: %s" % (
            " ".join(args), p.stderr.strip()[:300]))
        with open(out) as f:
            serial = sweep.row_figures(json.load(f))
        check("warm_step_s" in r and isinstance(r["warm_step_s"], float),
              "row %s has no warm_step_s" % r["key"])
        figures = {k: v for k, v in r.items()
                   if k not in sweep.PARAM_COLUMNS}
        diff = sweep.modelled_diff(figures, serial)
        check(not diff, "point %s differs from a serial seam-run in %d "
              "modelled figure(s), e.g. %s: sweep %r, serial %r" % (
                  " ".join(args), len(diff), diff[0], r.get(diff[0]),
                  serial.get(diff[0])) if diff else "")
        # The sweep's row carries every figure of the JSON.
        missing = sorted(set(serial) - set(r))
        check(not missing, "row lacks figures %s" % missing[:5])
        serials.append((figures, serial))
    # The comparison can fail: two different points differ.
    check(sweep.modelled_diff(serials[0][0], serials[-1][1]),
          "different points compare equal")


def cluster_case(bin_dir, tmp):
    port = free_port()
    addr = "tcp://127.0.0.1:%d" % port
    procs = []
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
    devnull = subprocess.DEVNULL

    def start(cmd):
        p = subprocess.Popen(cmd, stdout=devnull, stderr=devnull, env=env,
                             cwd=tmp, start_new_session=True)
        procs.append(p)
        return p

    try:
        start([PY, "/usr/bin/dask", "scheduler", "--host", "127.0.0.1",
               "--port", str(port), "--no-dashboard"])
        workers = [start([PY, "/usr/bin/dask", "worker", addr,
                          "--nthreads", "1", "--no-nanny", "--no-dashboard",
                          "--name", "w%d" % i, "--local-directory", tmp])
                   for i in range(2)]

        def n_workers():
            from distributed import Client
            try:
                with Client(addr, timeout=2) as c:
                    return len(c.scheduler_info()["workers"])
            except OSError:
                return 0
        wait_for(lambda: n_workers() == 2, 60, "2 workers at " + addr)
        from distributed import Client
        with Client(addr, timeout=5) as c:
            names = {w["name"]: a for a, w in
                     c.scheduler_info()["workers"].items()}
        victim_addr = names["w1"]
        log("scheduler %s with 2 workers" % addr)

        # A worker without the binary: one line naming the worker.
        p = subprocess.run([SWEEP, "--scheduler", addr, "--seam-bin",
                            os.path.join(tmp, "no-bin"), "--out",
                            os.path.join(tmp, "nobin")] + GRID,
                           capture_output=True, text=True, timeout=60)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1 and
              "no seam-run in" in lines[0] and "worker" in lines[0],
              "missing binary on the workers: exit %d, stderr %r" % (
                  p.returncode, p.stderr[-500:]))
        log("missing binary on workers: %s" % lines[0])

        out = os.path.join(tmp, "cluster")
        t0 = time.time()
        sw = subprocess.Popen([SWEEP, "--scheduler", addr, "--seam-bin",
                               bin_dir, "--out", out, "--no-plots"] + GRID,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        # Kill one worker (SIGKILL, no nanny to restart it) once both have
        # finished points: the sweep is mid-way.
        victim = workers[1]

        def both_busy():
            ws = set(r.get("worker") for r in read_rows(out))
            return len(ws) >= 2 or sw.poll() is not None
        wait_for(both_busy, 60, "rows from both workers")
        before = len(read_rows(out))
        check(sw.poll() is None and before < NPOINTS,
              "the sweep ended before a worker could be killed")
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait(10)
        log("killed worker w1 after %d of %d points" % (before, NPOINTS))
        try:
            _, err = sw.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            sw.kill()
            raise Failed("the sweep did not finish within 120 s after the "
                         "worker was killed")
        rows = read_rows(out)
        log("sweep exit %d in %.1fs: %s" % (
            sw.returncode, time.time() - t0,
            err.strip().splitlines()[-1] if err.strip() else ""))
        check(sw.returncode == 0, "sweep exit %d: %s" % (sw.returncode,
                                                         err[-800:]))
        ok = [r for r in rows if r["status"] == "ok"]
        check(len(ok) == NPOINTS and len(set(r["key"] for r in ok)) ==
              NPOINTS, "%d ok rows of %d points" % (len(ok), NPOINTS))
        after = rows[before:]
        # At most the results w1 had sent before it died arrive late.
        late = [r for r in after if r["worker"] == victim_addr]
        check(len(set(r["worker"] for r in rows)) == 2 and len(late) <= 2,
              "%d rows from the killed worker arrived after the kill" %
              len(late))
        with open(os.path.join(out, "results.csv")) as f:
            check(sum(1 for _ in f) == NPOINTS + 1, "results.csv rows")
        against_serial(bin_dir, ok, tmp)
        log("%d rows, identical in every modelled figure to serial "
            "seam-run; %d finished on the surviving worker after the kill" %
            (len(ok), len(after) - len(late)))
    finally:
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(10)


def errors_case(bin_dir, tmp):
    port = free_port()  # nothing listens there
    cases = [
        ("wrong scheduler address",
         ["--scheduler", "tcp://127.0.0.1:%d" % port, "--seam-bin", bin_dir],
         "cannot connect to the Dask scheduler"),
        ("missing seam binary",
         ["--seam-bin", os.path.join(tmp, "no-such-dir")],
         "no seam-run in"),
        ("bad grid value", ["--seam-bin", bin_dir, "--seq", "12x"],
         "is not an integer"),
    ]
    for what, args, expect in cases:
        t0 = time.time()
        p = subprocess.run([SWEEP, "--out", os.path.join(tmp, "err")] +
                           GRID + args, capture_output=True, text=True,
                           timeout=60)
        dt = time.time() - t0
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1 and
              lines[0].startswith("seam-sweep: error: ") and
              expect in lines[0] and "Traceback" not in p.stderr,
              "%s: exit %d, stderr %r" % (what, p.returncode, p.stderr[-600:]))
        check(dt < 15, "%s: took %.1fs" % (what, dt))
        log("%s: %.1fs: %s" % (what, dt, lines[0]))


def resume_case(bin_dir, tmp):
    out = os.path.join(tmp, "resume")
    cmd = [SWEEP, "--workers", "2", "--seam-bin", bin_dir, "--out", out,
           "--no-plots"] + GRID
    # Its own process group, interrupted as a terminal's Ctrl-C does: SIGINT
    # to every process of the group (the sweep, its LocalCluster's workers
    # and their seam-runs).
    sw = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, start_new_session=True)
    wait_for(lambda: len(read_rows(out)) >= 6 or sw.poll() is not None, 90,
             "6 finished points")
    check(sw.poll() is None, "the sweep ended before it was interrupted")
    os.killpg(sw.pid, signal.SIGINT)
    try:
        _, err = sw.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        sw.kill()
        raise Failed("the sweep did not stop within 60 s of SIGINT")
    lines = err.strip().splitlines()
    check(sw.returncode == 130 and lines and "interrupted: " in lines[-1] and
          all(l.startswith("seam-sweep: ") for l in lines),
          "SIGINT: exit %d, stderr %r" % (sw.returncode, err[-600:]))
    first = [r for r in read_rows(out) if r["status"] == "ok"]
    check(0 < len(first) < NPOINTS, "%d points done before SIGINT" %
          len(first))
    log("SIGINT after %d of %d points: %s" % (
        len(first), NPOINTS, err.strip().splitlines()[-1]))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "rerun exit %d: %s" % (p.returncode,
                                                    p.stderr[-600:]))
    rows = read_rows(out)
    again = rows[len(read_rows_upto(rows, first)):]
    keys_first = set(r["key"] for r in first)
    rerun_keys = [r["key"] for r in again]
    check(not keys_first & set(rerun_keys),
          "the rerun ran %d finished point(s) again" %
          len(keys_first & set(rerun_keys)))
    ok = set(r["key"] for r in rows if r["status"] == "ok")
    check(len(ok) == NPOINTS and len(rerun_keys) == NPOINTS - len(first) and
          len(set(rerun_keys)) == len(rerun_keys),
          "after the rerun: %d of %d points ok, the rerun ran %d" % (
              len(ok), NPOINTS, len(rerun_keys)))
    check("%d done before, %d to run" % (len(first), NPOINTS - len(first))
          in p.stderr, "rerun did not report what it resumed: %r" %
          p.stderr[:300])
    log("rerun ran the %d missing points only" % len(rerun_keys))


def read_rows_upto(rows, first):
    """The rows written before the rerun: everything up to the last row of
    the interrupted sweep (it may also have left failed or torn rows)."""
    last = first[-1]["key"]
    for i, r in enumerate(rows):
        if r["key"] == last:
            return rows[:i + 1]
    return rows


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("cluster", "errors",
                                                 "resume"):
        print("usage: sweep_test.py BIN_DIR cluster|errors|resume",
              file=sys.stderr)
        return 2
    bin_dir, case = os.path.abspath(sys.argv[1]), sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="sweep-test-")
    t0 = time.time()
    try:
        {"cluster": cluster_case, "errors": errors_case,
         "resume": resume_case}[case](bin_dir, tmp)
    except Failed as e:
        print("sweep_test: FAILED (%s): %s" % (case, e), file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log("%s passed in %.1fs" % (case, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
