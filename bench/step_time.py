#!/usr/bin/python3
"""Emulator speed on a whole model (issue 5, item 3): wall time of one full
flux2-klein step (25 blocks, TP=4, compile mode, timing-only).

seam-run's JSON gives the cold compile time but not the wall time of the
simulation, so this script times seam-run from outside:

  A. the issue's command, --steps 2 --runs 1: process wall time, and that
     wall minus the cold compile the JSON reports (what is left is
     seam-import, loading, weight set-up, two simulated steps, the report);
  B. per step, the difference between --steps 3 and --steps 1 runs (each
     minus its own compile), divided by 2: the wall time of one simulated
     step alone, fixed costs cancelled.

Target (issue 5): one step < 2 s. Each command runs --repeats times; medians
are reported with min-max. Writes step_time.{md,csv,json} to --out.

    /usr/bin/python3 bench/step_time.py --build build --out results/step-time
"""
import argparse
import csv
import json
import os
import shutil
import statistics
import tempfile

import benchlib
from benchlib import log, markdown

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET_S = 2.0
BASE = ["--model", "flux2-klein", "--tp", "4", "--mode", "compile",
        "--runs", "1", "--timing-only"]


def run(seam_run, steps, tmp):
    j, wall = benchlib.seam_run_json(seam_run, BASE + ["--steps", str(steps)],
                                     os.path.join(tmp, "s.json"), cold_in=tmp)
    compile_s = j["compile"]["cold_s"]
    log("  %.2fs  --steps %d (compile %.3f s)" % (wall, steps, compile_s))
    return {"steps": steps, "wall_s": wall, "compile_s": compile_s,
            "rest_s": wall - compile_s,
            "simulated_step_s": j["warm_step_s"],
            "instructions": j["compile"]["instructions"]}


def stats(xs):
    return statistics.median(xs), min(xs), max(xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results",
                                                  "step-time"))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    seam_run = os.path.join(os.path.abspath(args.build), "bin", "seam-run")
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="seam-step-time-")
    load_start = os.getloadavg()
    runs = {1: [], 2: [], 3: []}
    for _ in range(max(1, args.repeats)):  # interleaved: noise hits all alike
        for steps in (1, 2, 3):
            runs[steps].append(run(seam_run, steps, tmp))
    load_end = os.getloadavg()
    shutil.rmtree(tmp, ignore_errors=True)

    per_step = [(b["rest_s"] - a["rest_s"]) / 2
                for a, b in zip(runs[1], runs[3])]
    rows = []

    def add(what, xs, note):
        m, lo, hi = stats(xs)
        rows.append({"measurement": what, "median_s": m, "min_s": lo,
                     "max_s": hi, "note": note})

    add("A. wall, --steps 2 (whole process)",
        [r["wall_s"] for r in runs[2]], "includes the cold compile")
    add("A. cold compile (JSON compile.cold_s)",
        [r["compile_s"] for r in runs[2]], "")
    add("A. wall minus compile, --steps 2",
        [r["rest_s"] for r in runs[2]],
        "import + load + 2 simulated steps + report")
    add("B. one simulated step: (rest(3 steps) - rest(1 step)) / 2",
        per_step, "fixed costs cancelled")
    sim = runs[2][0]["simulated_step_s"]

    header = ["measurement", "median s", "min-max s", "note"]
    lines = ["# flux2-klein step wall time (issue 5)", "",
             "seam-run %s; %d repeats; load average %.2f at start, %.2f at "
             "end (%d CPUs). The compiled step is %d instructions (static: "
             "loops stay loops) and simulates %.3f s of device time (the "
             "warm step)." %
             (" ".join(BASE), max(1, args.repeats), load_start[0],
              load_end[0], os.cpu_count() or 0,
              runs[2][0]["instructions"], sim), "",
             markdown(header, [[r["measurement"], "%.3f" % r["median_s"],
                                "%.3f-%.3f" % (r["min_s"], r["max_s"]),
                                r["note"]] for r in rows])]
    step = rows[3]["median_s"]
    upper = rows[2]["median_s"] / 2
    lines += ["", "One step: %.3f s (B), at most %.3f s (A / 2): target "
              "< %.0f s %s." % (step, upper, TARGET_S,
                                "met" if max(step, upper) < TARGET_S
                                else "NOT met")]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(args.out, "step_time.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "step_time.csv"), "w",
              newline="") as f:
        w = csv.DictWriter(f, fieldnames=["measurement", "median_s", "min_s",
                                          "max_s", "note"])
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "step_time.json"), "w") as f:
        json.dump({"command": BASE, "repeats": max(1, args.repeats),
                   "loadavg_start": load_start, "loadavg_end": load_end,
                   "target_s": TARGET_S, "rows": rows,
                   "runs": {str(k): v for k, v in runs.items()}}, f,
                  indent=2)
    log("wrote %s/step_time.{md,csv,json}" % args.out)


if __name__ == "__main__":
    main()
