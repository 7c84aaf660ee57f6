"""The engine that runs many seam-run points on Dask distributed.

Used by bench/seam-sweep (grids from a spec or flags) and bench/reproduce.py
(the main job). A *point* is one seam-run invocation: its arguments, plus
the contents of any input files it names (.mlir models, configs), which
travel with the task so that workers on other machines need only seam's
binaries, at the same path or under --seam-bin.

    eng = Engine(seam_bin="build/bin")          # embedded LocalCluster
    eng = Engine(seam_bin=..., scheduler="tcp://host:8786")
    fut = eng.submit(Point(["--model", "fnet-base", ...]))
    res = fut.result()                           # a Result

Each task runs `seam-run --quiet --json F ARGS --compile-threads 1` in a
scratch directory of its worker and returns the parsed JSON, or the error's
first line. One compile thread per point: the points run side by side, one
per worker and the workers one per core, so a point's own thread pool would
only contend with the other points for the cores (an exclusive point, which
runs alone, keeps seam-run's default, a thread per core). The figures do not
depend on it. A point is keyed by a hash of its arguments, its files'
contents and the seam build (the SHA-256 of the seam-run binary the workers
run), so a sweep can resume.

Runs under Debian's /usr/bin/python3 (python3-dask, python3-distributed).
"""
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time

import cloudpickle

# Tasks are pickled by value, so workers need not import this file (a
# separately started `dask worker` on another machine has no bench/ on its
# path).
cloudpickle.register_pickle_by_value(sys.modules[__name__])


class SweepError(Exception):
    """A user-facing error: its message is printed as one line."""


# -- fields of seam-run's JSON that are not modelled --------------------------
# Wall-clock: measured on this machine while seam-run runs.
#   compile.*_s                  the compiler's own phases (cold_s, graph_s..)
#   runs.N.compile_s             the compile time paid in run N
#   runs.N.steps.M.compile_s     ... in step M
#   runs.N.steps.0.latency_s     a run's first step includes its compile
#   runs.N.steps.M.fallback_s    host-fallback ops, run for real on this CPU
# Compile-cache state (depends on what an earlier point left in a shared
# cache, not on this point):
#   compile.instructions, compile.programs, compile.kernel_programs,
#   compile.kernel_bodies, compile.decide_simulated, compile.decide_cached
#   runs.N.cold, runs.N.cache_hits, runs.N.cache_corrupt, runs.N.compiled_units
# The invocation's own paths: files.* (the files seam-run read and wrote).
# Everything else is modelled: the emulator's figures. Those are compared
# figure for figure; floats to a relative 1e-9 or 1e-12 absolute (1 ps):
# the step's parts are differences of host-timeline instants that sit after
# the measured compile, so their last bits can differ between two runs of
# the same point (other_s: 0 or 3e-17 s).
CACHE_STATE = ("compile.instructions", "compile.programs",
               "compile.kernel_programs", "compile.kernel_bodies",
               "compile.decide_simulated", "compile.decide_cached")
RUN_CACHE_STATE = ("cold", "cache_hits", "cache_corrupt", "compiled_units")


def is_unmodelled(field):
    """True for a flattened field that is wall-clock or cache state."""
    parts = field.split(".")
    if parts[0] == "files":
        return True
    if parts[0] == "compile":
        return field.endswith("_s") or field in CACHE_STATE
    if parts[0] == "runs" and len(parts) >= 3:
        if len(parts) == 3:
            return parts[2] == "compile_s" or parts[2] in RUN_CACHE_STATE
        if len(parts) == 5 and parts[2] == "steps":
            return (parts[4] in ("compile_s", "fallback_s") or
                    (parts[3] == "0" and parts[4] == "latency_s"))
    return False


def same_figure(a, b, rel=1e-9):
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return False
        return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-12
    return a == b


def modelled_diff(a, b):
    """Modelled fields on which two flattened results differ (sorted)."""
    keys = set(k for k in a if not is_unmodelled(k)) | \
        set(k for k in b if not is_unmodelled(k))
    return sorted(k for k in keys if not same_figure(a.get(k), b.get(k)))


def flatten(x, prefix="", out=None):
    """seam-run's JSON as one level: nested keys joined by '.', lists of
    objects by index (runs.0.steps.1.latency_s); lists of plain values
    (warnings, kernels) stay lists."""
    if out is None:
        out = {}
    if isinstance(x, dict):
        for k, v in x.items():
            flatten(v, prefix + "." + k if prefix else k, out)
    elif isinstance(x, list) and any(isinstance(e, (dict, list)) for e in x):
        for i, v in enumerate(x):
            flatten(v, "%s.%d" % (prefix, i), out)
    else:
        out[prefix] = x
    return out


# Columns of a sweep's result row that describe the point; a figure of
# seam-run's JSON with one of these names (model, tp, target, mode, kernels)
# goes under "seam.<name>" (seam-run's `kernels` is the list it inserted,
# the point's the set it asked for).
PARAM_COLUMNS = ["model", "seq", "batch", "tp", "target", "mode", "kernels",
                 "layers", "steps", "runs", "extra", "cache", "key",
                 "seam_build", "status", "error", "wall_s", "worker"]


def row_figures(result_json):
    """seam-run's JSON as the figures of a result row: flattened, with the
    names that are parameter columns prefixed by 'seam.'."""
    return {("seam." + k if k in PARAM_COLUMNS else k): v
            for k, v in flatten(result_json).items()}


# -- points -------------------------------------------------------------------
class Point:
    """One seam-run invocation. `args` are seam-run's arguments; an argument
    that names a local file listed in `files` is shipped by content and
    replaced by the worker's copy. `params` describe the point in result
    rows. `cache`: None (a fresh compile cache, so the first run is cold, as
    a lone seam-run) or "shared" (one cache per worker machine and seam
    build, shared by its workers). `outputs`: directories the point writes
    (--output-dir) that must exist on the client after it ran: only with
    workers that share this machine's file system."""

    def __init__(self, args, params=None, files=(), cache=None):
        self.args = [str(a) for a in args]
        self.params = dict(params or {})
        self.cache = cache
        self.files = {}
        for f in files:
            try:
                with open(f, "rb") as fh:
                    self.files[f] = fh.read()
            except OSError as e:
                raise SweepError("cannot read %s: %s" % (f, e.strerror))

    def key(self, build):
        h = hashlib.sha256()
        h.update(json.dumps([self.args, self.cache, build]).encode())
        for name in sorted(self.files):
            h.update(os.path.basename(name).encode() + b"\0")
            h.update(hashlib.sha256(self.files[name]).digest())
        return h.hexdigest()[:20]

    def task(self, build):
        return {"args": self.args, "cache": self.cache, "build": build,
                "files": {n: c for n, c in self.files.items()}}


class Result:
    def __init__(self, d):
        self.ok = d["ok"]
        self.json = d.get("json")
        self.error = d.get("error", "")
        self.wall_s = d.get("wall_s", 0.0)
        self.cpu_s = d.get("cpu_s", 0.0)  # seam-run's user + system time
        self.worker = d.get("host", "")


def _seam_run_path(seam_bin):
    return os.path.join(os.path.abspath(os.path.expanduser(seam_bin)),
                        "seam-run")


def build_identity(seam_bin):
    """(SHA-256 of seam-run under seam_bin, None) or (None, why not)."""
    path = _seam_run_path(seam_bin)
    if not os.path.isfile(path):
        return None, "no seam-run in %s" % os.path.dirname(path)
    if not os.access(path, os.X_OK):
        return None, "%s is not executable" % path
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16], None


def run_task(task, seam_bin, threads=0):
    """Runs on a worker: one seam-run (--compile-threads `threads` unless the
    point sets it; 0: seam-run's default). Never raises for a failing seam-run:
    the error's first line is the result."""
    import socket
    t0 = time.time()
    host = socket.gethostname()
    try:  # the worker's address: which worker ran the point
        from distributed import get_worker
        host = get_worker().address
    except (ImportError, ValueError):
        pass
    work = tempfile.mkdtemp(prefix="seam-sweep-")
    try:
        exe = _seam_run_path(seam_bin)
        if not os.access(exe, os.X_OK):
            return {"ok": False, "host": host, "wall_s": 0.0,
                    "error": "no executable seam-run in %s on %s" % (
                        os.path.dirname(exe), host)}
        args = list(task["args"])
        for name, content in task["files"].items():
            local = os.path.join(work, os.path.basename(name))
            with open(local, "wb") as f:
                f.write(content)
            args = [local if a == name else
                    a[:-len(name)] + local if a.endswith("=" + name) else a
                    for a in args]
        if task["cache"] == "shared":
            cache = os.path.join(tempfile.gettempdir(),
                                 "seam-sweep-cache-" + task["build"])
            os.makedirs(cache, exist_ok=True)
            args = ["--cache-dir", cache] + args
        out = os.path.join(work, "result.json")
        import resource
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cmd = [exe, "--quiet", "--json", out] + args
        if threads and not any(a.split("=")[0] == "--compile-threads"
                               for a in args):
            cmd += ["--compile-threads", str(threads)]
        # seam-run gets SIGTERM if its worker dies (killed, or its cluster
        # closed on a Ctrl-C) instead of running on alone.
        setpriv = shutil.which("setpriv")  # util-linux
        if setpriv:
            cmd = [setpriv, "--pdeathsig", "TERM"] + cmd
        p = subprocess.run(cmd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        wall = time.time() - t0
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        if p.returncode != 0:
            err = error_line(p.stderr) or "exit status %d" % p.returncode
            if p.returncode < 0:
                err = "seam-run killed by signal %d" % -p.returncode
            return {"ok": False, "host": host, "wall_s": wall,
                    "error": err.strip()[:400]}
        with open(out) as f:
            return {"ok": True, "host": host, "wall_s": wall,
                    "cpu_s": cpu, "json": json.load(f)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def error_line(stderr):
    """The one line that says why seam-run failed: its first line that is
    neither progress ("seam-run: [4.4 s] ...") nor a warning; a line that
    ends in ':' is joined with the next."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    lines = [l for l in lines if not l.startswith("seam-run: [") and
             "warning:" not in l]
    if not lines:
        return ""
    err = lines[0]
    if err.endswith(":") and len(lines) > 1:
        err += " " + lines[1]
    return err


def _sigint_ignoring_python():
    """A temporary executable that runs this Python with SIGINT ignored."""
    fd, path = tempfile.mkstemp(prefix="seam-sweep-python-", suffix=".sh")
    with os.fdopen(fd, "w") as f:
        f.write("#!/bin/sh\n# seam-sweep's Dask workers: Ctrl-C is the "
                "client's to handle\ntrap '' INT\nexec %s \"$@\"\n" %
                sys.executable)
    os.chmod(path, 0o755)
    return path


def _worker_identity(seam_bin):
    import socket
    b, why = build_identity(seam_bin)
    return {"host": socket.gethostname(), "build": b, "error": why}


# -- the engine -----------------------------------------------------------------
class Engine:
    """A Dask client: an embedded LocalCluster (workers = the machine's
    cores, one thread each) or an existing scheduler."""

    def __init__(self, seam_bin, scheduler=None, workers=None,
                 connect_timeout=5.0, point_threads=1):
        logging.getLogger("distributed").setLevel(logging.ERROR)
        # Imported here: a missing python3-distributed is one clear line.
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise SweepError("python3-distributed is not installed "
                             "(tools/setup-debian.sh installs it)")
        self.seam_bin = os.path.abspath(os.path.expanduser(seam_bin))
        # seam-run --compile-threads of a point that is not exclusive
        self.point_threads = point_threads
        self.cluster = None
        import threading
        self._gate = threading.Condition()
        self._inflight = 0          # points submitted and not finished
        self._excl_waiting = 0      # exclusive points waiting to start
        self._excl_running = False
        if scheduler:
            if "://" not in scheduler:
                scheduler = "tcp://" + scheduler
            try:
                self.client = Client(scheduler, timeout=connect_timeout)
            except (OSError, TimeoutError) as e:
                raise SweepError("cannot connect to the Dask scheduler at %s "
                                 "within %gs (%s)" % (
                                     scheduler, connect_timeout,
                                     str(e).splitlines()[0][:160] or
                                     type(e).__name__))
            except ValueError as e:
                raise SweepError("bad scheduler address %s: %s" % (
                    scheduler, str(e).splitlines()[0][:160]))
        else:
            self.build, why = build_identity(self.seam_bin)
            if why:
                raise SweepError(why + " (--seam-bin)")
            n = workers or os.cpu_count() or 1
            # The worker processes ignore SIGINT from their first
            # instruction: a Ctrl-C reaches the whole process group, and
            # only the client is to act on it (stop, close the cluster);
            # workers that caught it would die printing tracebacks. They
            # are spawned through a shell that ignores it and execs Python
            # (an ignored SIGINT stays ignored in Python and in the
            # seam-runs they start). SIGINT is blocked here while the
            # cluster starts, so a Ctrl-C then interrupts the client once
            # the cluster is up, and it closes the cluster.
            import multiprocessing
            import signal
            self._wrapper = _sigint_ignoring_python()
            multiprocessing.set_executable(self._wrapper)
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                self.cluster = LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True,
                    dashboard_address=":0", silence_logs=logging.ERROR)
            finally:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
            self.client = Client(self.cluster)
        try:
            self.build = self._check_workers(connect_timeout)
        except SweepError:
            self.close()
            raise

    def _check_workers(self, timeout):
        """Every worker must run the same seam build; it is the points'
        build identity."""
        try:
            self.client.wait_for_workers(1, timeout=timeout * 6)
        except (TimeoutError, OSError):
            raise SweepError("the Dask scheduler has no workers (waited %gs)"
                             % (timeout * 6))
        ids = self.client.run(_worker_identity, self.seam_bin)
        builds = set()
        for addr, i in sorted(ids.items()):
            if i["error"]:
                raise SweepError("worker %s (%s): %s (--seam-bin)" % (
                    addr, i["host"], i["error"]))
            builds.add(i["build"])
        if len(builds) > 1:
            raise SweepError("workers run different seam builds (seam-run "
                             "SHA-256 %s)" % ", ".join(sorted(builds)))
        return builds.pop()

    def workers(self):
        return len(self.client.scheduler_info()["workers"])

    def submit(self, point, key=None, exclusive=False):
        """A future of the point's Result dict (see Result). An exclusive
        point runs alone: it waits for every point in flight to finish, and
        later points wait for it (for wall-clock figures, such as a cold
        compile or a host-fallback op run on this CPU, that other runs on
        the machine would slow). Blocks until the point may start."""
        self._gate_enter(exclusive)
        try:
            fut = self.client.submit(
                run_task, point.task(self.build), self.seam_bin,
                0 if exclusive else self.point_threads,
                key=key or ("seam-excl-" if exclusive else "seam-") +
                point.key(self.build), pure=False)
        except BaseException:
            self._gate_leave(exclusive)
            raise
        fut.add_done_callback(lambda _: self._gate_leave(exclusive))
        return fut

    def _gate_enter(self, exclusive):
        with self._gate:
            if exclusive:
                self._excl_waiting += 1
                while self._excl_running or self._inflight:
                    self._gate.wait()
                self._excl_waiting -= 1
                self._excl_running = True
            else:
                while self._excl_running or self._excl_waiting:
                    self._gate.wait()
            self._inflight += 1

    def _gate_leave(self, exclusive):
        with self._gate:
            self._inflight -= 1
            if exclusive:
                self._excl_running = False
            self._gate.notify_all()

    def run(self, point, exclusive=False):
        """Runs one point and waits: its Result."""
        return Result(self.submit(point, exclusive=exclusive).result())

    def close(self):
        try:
            self.client.close(timeout=10)
        except Exception:
            pass
        if self.cluster is not None:
            try:
                self.cluster.close(timeout=10)
            except Exception:
                pass
            self.cluster = None
            import multiprocessing
            multiprocessing.set_executable(sys.executable)
            try:
                os.unlink(self._wrapper)
            except OSError:
                pass
