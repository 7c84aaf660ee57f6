#!/usr/bin/python3
"""seam-sweep's engine against serial seam-run: speedup and per-point
overhead (issue 38), measured in one run. A benchmark, not a test.

40 timing-only points (flux2-klein --layers 1: 5 lengths x 4 kernel sets x
2 modes, fresh compile cache each, as a lone seam-run) are run

  1. one after another, each a default seam-run subprocess (serial: what a
     user would otherwise run; its compile uses a thread per core);
  2. the same with --compile-threads 1 (serial -t1: one compile thread, as
     in a sweep's task);
  3. as tasks of an embedded LocalCluster with --workers workers (each
     seam-run --compile-threads 1: the points run side by side, see
     bench/sweep.py);
  4. both serial passes again, to bracket the machine's noise.

Printed: the serial totals, the sweep's time from first submit to last
result (and the LocalCluster's start-up, apart), the speedup against the
mean serial total (and against serial -t1), and the overhead per point: the
worker time not spent inside seam-run, (workers x sweep time - sum of the
tasks' seam-run wall times) / points. The tasks' seam-run times against the
serial ones show how much slower a seam-run is while another runs beside it
(contention, not the engine): the ceiling, workers x serial point time /
task point time, is the speedup an engine without overhead would reach. The
CPU time per point (user + system) against the serial -t1 one shows how much
of that is the hardware and kernel shared by the two runs (a run slowed only
by waiting for a core would use the same CPU time), and the cores used (CPU
time / wall time) how much of the machine the runs got. The sweep's modelled
figures are checked against the first serial pass's, point for point.

    bench/sweep_bench.py --seam-bin build/bin [--workers 2] [--json F]
"""
import argparse
import json
import os
import resource
import shutil
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


def serial(seam_run, pts, tmp, extra=()):
    """Total wall s, per-point wall s, seam-run CPU s (user + system);
    point i's JSON in tmp/s<i>.json."""
    walls = []
    c0 = children_cpu()
    t0 = time.time()
    for i, a in enumerate(pts):
        t = time.time()
        p = subprocess.run([seam_run, "--quiet", "--json",
                            os.path.join(tmp, "s%d.json" % i)] + a +
                           list(extra),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        if p.returncode:
            sys.exit("sweep_bench: seam-run %s failed: %s" % (
                " ".join(a), p.stderr.strip().splitlines()[:1]))
        walls.append(time.time() - t)
    return time.time() - t0, walls, children_cpu() - c0


def engine_cpu():
    """CPU s (user + system) used so far by this process and its
    descendants still running (the LocalCluster's scheduler, nannies and
    workers; not the seam-runs they waited for)."""
    hz = os.sysconf("SC_CLK_TCK")
    kids = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                st = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kids.setdefault(int(st[1]), []).append(
            (int(pid), (int(st[11]) + int(st[12])) / hz))
    total, todo = 0.0, [os.getpid()]
    while todo:
        for pid, cpu in kids.get(todo.pop(), []):
            total += cpu
            todo.append(pid)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return total + ru.ru_utime + ru.ru_stime


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


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
    dirs = {}
    for d in ("a1", "b1", "a2", "b2"):
        dirs[d] = os.path.join(tmp, d)
        os.mkdir(dirs[d])
    one = ["--compile-threads", "1"]
    load0 = load()

    s1, w1, c1 = serial(seam_run, pts, dirs["a1"])
    u1, v1, d1 = serial(seam_run, pts, dirs["b1"], one)
    t = time.time()
    try:
        eng = sweep.Engine(a.seam_bin, workers=a.workers)
    except sweep.SweepError as e:
        sys.exit("sweep_bench: error: %s" % e)
    startup = time.time() - t
    try:
        # Warm the workers (imports, first subprocess) outside the timing.
        eng.client.run(lambda: None)
        e0 = engine_cpu()
        t = time.time()
        futs = [eng.submit(sweep.Point(p)) for p in pts]
        res = [sweep.Result(f.result()) for f in futs]
        dist = time.time() - t
        # The engine's own CPU time: Dask's client, scheduler, nannies and
        # workers (their Python, the task's fork and exec), not seam-run's.
        eng_cpu = engine_cpu() - e0
    finally:
        eng.close()
    bad = [r.error for r in res if not r.ok]
    if bad:
        sys.exit("sweep_bench: %d point(s) failed: %s" % (len(bad), bad[0]))
    s2, w2, c2 = serial(seam_run, pts, dirs["a2"])
    u2, v2, d2 = serial(seam_run, pts, dirs["b2"], one)
    load1 = load()
    # The sweep's figures (one compile thread per point) against serial
    # default seam-runs': the modelled ones must be the same.
    differ = []
    for i, r in enumerate(res):
        with open(os.path.join(dirs["a1"], "s%d.json" % i)) as f:
            ref = sweep.flatten(json.load(f))
        diff = sweep.modelled_diff(ref, sweep.flatten(r.json))
        if diff:
            differ.append("%s: %s" % (" ".join(pts[i]), ", ".join(diff[:3])))
    if differ:
        sys.exit("sweep_bench: %d point(s) differ from serial seam-run: %s"
                 % (len(differ), differ[0]))

    ser = (s1 + s2) / 2
    ser1 = (u1 + u2) / 2
    task_sum = sum(r.wall_s for r in res)
    task_cpu = sum(r.cpu_s for r in res)
    # Cores the runs got: seam-run CPU time over wall time (serial: above 1
    # when the compile's thread pool runs beside the main thread; the
    # sweep: at most --workers). Other users of the machine lower it.
    overhead = (a.workers * dist - task_sum) / n

    def ms(x):
        return round(1e3 * x, 2)
    ser_pt = (sum(w1) + sum(w2)) / (2 * n)
    one_pt = (sum(v1) + sum(v2)) / (2 * n)
    task_pt = task_sum / n
    fig = {
        "points": n, "workers": a.workers, "cores": os.cpu_count(),
        "serial_s": [round(s1, 3), round(s2, 3)],
        "serial_threads1_s": [round(u1, 3), round(u2, 3)],
        "sweep_s": round(dist, 3), "cluster_startup_s": round(startup, 3),
        "speedup": round(ser / dist, 3),
        "speedup_vs_serial_threads1": round(ser1 / dist, 3),
        "speedup_with_startup": round(ser / (dist + startup), 3),
        "overhead_per_point_ms": ms(overhead),
        "serial_point_mean_ms": ms(ser_pt),
        "serial_threads1_point_mean_ms": ms(one_pt),
        "task_point_mean_ms": ms(task_pt),
        # The speedup the engine could reach with no overhead: the workers
        # times a serial point's time over a point's time inside a task.
        "ceiling": round(a.workers * ser_pt / task_pt, 3),
        "serial_cpu_point_mean_ms": ms((c1 + c2) / (2 * n)),
        "serial_threads1_cpu_point_mean_ms": ms((d1 + d2) / (2 * n)),
        "task_cpu_point_mean_ms": ms(task_cpu / n),
        "engine_cpu_point_mean_ms": ms(eng_cpu / n),
        "loadavg_before": load0, "loadavg_after": load1,
        "serial_cores_used": round((c1 + c2) / (s1 + s2), 3),
        "serial_threads1_cores_used": round((d1 + d2) / (u1 + u2), 3),
        "sweep_cores_used": round(task_cpu / dist, 3),
        "figures_identical": True,
    }
    print("%d points, %d workers on %d cores (load average before %s, "
          "after %s)" % (n, a.workers, os.cpu_count(), " ".join(load0),
                         " ".join(load1)))
    print("serial:      %.2f s, %.2f s (mean seam-run %.1f ms, CPU %.1f ms)"
          % (s1, s2, fig["serial_point_mean_ms"],
             fig["serial_cpu_point_mean_ms"]))
    print("serial -t1:  %.2f s, %.2f s (seam-run --compile-threads 1: mean "
          "%.1f ms, CPU %.1f ms)" % (
              u1, u2, fig["serial_threads1_point_mean_ms"],
              fig["serial_threads1_cpu_point_mean_ms"]))
    print("dask sweep:  %.2f s (+ %.2f s LocalCluster start-up); mean "
          "seam-run inside a task %.1f ms, CPU %.1f ms" % (
              dist, startup, fig["task_point_mean_ms"],
              fig["task_cpu_point_mean_ms"]))
    print("speedup:     %.2fx against serial seam-run (%.2fx counting "
          "start-up; %.2fx against serial -t1); ceiling %.2fx" % (
              fig["speedup"], fig["speedup_with_startup"],
              fig["speedup_vs_serial_threads1"], fig["ceiling"]))
    print("overhead:    %.1f ms per point (worker time outside seam-run); "
          "the engine's processes used %.1f ms CPU per point" % (
              fig["overhead_per_point_ms"], fig["engine_cpu_point_mean_ms"]))
    print("cores used:  serial %.2f, serial -t1 %.2f, sweep %.2f of %d "
          "(seam-run CPU s / wall s)" % (
              fig["serial_cores_used"], fig["serial_threads1_cores_used"],
              fig["sweep_cores_used"], a.workers))
    print("figures:     the sweep's modelled figures equal serial "
          "seam-run's, point for point")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(fig, f, indent=1)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
