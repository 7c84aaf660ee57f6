#!/usr/bin/python3
"""seam-sweep's engine against serial seam-run: speedup and per-point
overhead (issue 38), measured in one run. A benchmark, not a test.

40 timing-only points (flux2-klein --layers 1: 5 lengths x 4 kernel sets x
2 modes, fresh compile cache each, as a lone seam-run) are run

  1. one after another, each a seam-run subprocess (serial);
  2. as tasks of an embedded LocalCluster with --workers workers;
  3. serially again, to bracket the machine's noise.

Printed: both serial totals, the sweep's time from first submit to last
result (and the LocalCluster's start-up, apart), the speedup against the
mean serial total, and the overhead per point: the worker time not spent
inside seam-run, (workers x sweep time - sum of the tasks' seam-run wall
times) / points. The tasks' seam-run times against the serial ones show
how much slower a seam-run is while another runs beside it (contention,
not the engine), and the cores used (seam-run CPU time / wall time) show
how much of the machine the runs got while others used it.

    bench/sweep_bench.py --seam-bin build/bin [--workers 2] [--json F]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sweep  # noqa: E402

SEQ = [128, 256, 512, 1024, 2048]
KERNELS = ["none", "qkv", "flash-attn", "qkv,flash-attn"]
MODES = ["eager", "compile"]


def points():
    out = []
    for s in SEQ:
        for k in KERNELS:
            for m in MODES:
                out.append(["--model", "flux2-klein", "--layers", "1",
                            "--target", "trn2", "--seq", str(s),
                            "--kernels", k, "--mode", m, "--steps", "2",
                            "--runs", "1"])
    return out


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def serial(seam_run, pts, tmp):
    """Total wall s, per-point wall s, seam-run CPU s (user + system)."""
    walls = []
    c0 = children_cpu()
    t0 = time.time()
    for i, a in enumerate(pts):
        t = time.time()
        p = subprocess.run([seam_run, "--quiet", "--json",
                            os.path.join(tmp, "s%d.json" % i)] + a,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        if p.returncode:
            sys.exit("sweep_bench: seam-run %s failed: %s" % (
                " ".join(a), p.stderr.strip().splitlines()[:1]))
        walls.append(time.time() - t)
    return time.time() - t0, walls, children_cpu() - c0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seam-bin", default=os.path.join(os.path.dirname(HERE),
                                                       "build", "bin"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    seam_run = os.path.join(os.path.abspath(a.seam_bin), "seam-run")
    pts = points()
    n = len(pts)
    tmp = tempfile.mkdtemp(prefix="sweep-bench-")
    with open("/proc/loadavg") as f:
        load0 = f.read().split()[:3]

    s1, w1, c1 = serial(seam_run, pts, tmp)
    t = time.time()
    try:
        eng = sweep.Engine(a.seam_bin, workers=a.workers)
    except sweep.SweepError as e:
        sys.exit("sweep_bench: error: %s" % e)
    startup = time.time() - t
    try:
        # Warm the workers (imports, first subprocess) outside the timing.
        eng.client.run(lambda: None)
        t = time.time()
        futs = [eng.submit(sweep.Point(p)) for p in pts]
        res = [sweep.Result(f.result()) for f in futs]
        dist = time.time() - t
    finally:
        eng.close()
    bad = [r.error for r in res if not r.ok]
    if bad:
        sys.exit("sweep_bench: %d point(s) failed: %s" % (len(bad), bad[0]))
    s2, w2, c2 = serial(seam_run, pts, tmp)
    with open("/proc/loadavg") as f:
        load1 = f.read().split()[:3]

    ser = (s1 + s2) / 2
    task_sum = sum(r.wall_s for r in res)
    task_cpu = sum(r.cpu_s for r in res)
    # Cores the runs got: seam-run CPU time over wall time (serial: at most
    # 1; the sweep: at most --workers). Other users of the machine lower it.
    overhead = (a.workers * dist - task_sum) / n
    fig = {
        "points": n, "workers": a.workers, "cores": os.cpu_count(),
        "serial_s": [round(s1, 3), round(s2, 3)],
        "sweep_s": round(dist, 3), "cluster_startup_s": round(startup, 3),
        "speedup": round(ser / dist, 3),
        "speedup_with_startup": round(ser / (dist + startup), 3),
        "overhead_per_point_ms": round(overhead * 1e3, 2),
        "serial_point_mean_ms": round(1e3 * (sum(w1) + sum(w2)) / (2 * n), 2),
        "task_point_mean_ms": round(1e3 * task_sum / n, 2),
        "loadavg_before": load0, "loadavg_after": load1,
        "serial_cores_used": round((c1 + c2) / (s1 + s2), 3),
        "sweep_cores_used": round(task_cpu / dist, 3),
        "seam_run_cpu_s": {"serial": [round(c1, 3), round(c2, 3)],
                           "sweep": round(task_cpu, 3)},
    }
    print("%d points, %d workers on %d cores (load average before %s, "
          "after %s)" % (n, a.workers, os.cpu_count(), " ".join(load0),
                         " ".join(load1)))
    print("serial:      %.2f s, %.2f s (mean seam-run %.1f ms)" % (
        s1, s2, fig["serial_point_mean_ms"]))
    print("dask sweep:  %.2f s (+ %.2f s LocalCluster start-up); mean "
          "seam-run inside a task %.1f ms" % (dist, startup,
                                              fig["task_point_mean_ms"]))
    print("speedup:     %.2fx (%.2fx counting start-up)" % (
        fig["speedup"], fig["speedup_with_startup"]))
    print("overhead:    %.1f ms per point (worker time outside seam-run)" %
          fig["overhead_per_point_ms"])
    print("cores used:  serial %.2f, sweep %.2f of %d (seam-run CPU s / "
          "wall s; seam-run CPU s: serial %.2f, %.2f; sweep %.2f)" % (
              fig["serial_cores_used"], fig["sweep_cores_used"], a.workers,
              c1, c2, task_cpu))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(fig, f, indent=1)


if __name__ == "__main__":
    main()
