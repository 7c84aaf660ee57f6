#!/usr/bin/python3
"""Roofline of the bundled models (issue 12): how far the generated code is
from the floor the graph's work allows.

For each configuration seam-run --json reports, per rank, the step's floor
(the sum of its launches' floors; each floor = max(TE flops / TE peak,
elementwise work / VE+SE+GpSimd peaks, bytes that must cross HBM / DMA
bandwidth), from the graph, never from the emitted instructions; see
passes/Roofline.cpp for the work conventions), the fraction of the warm step
it represents, the engine that bounds it, and the DMA traffic of the last
step against the bytes that must cross HBM. Host fallback ops are not device
work: they are excluded from the floor but stay in the warm step, so
"fraction" (floor / warm step) drops when the host dominates; "device
fraction" (floor / device time of the step) shows the device side alone.

    /usr/bin/python3 bench/roofline.py --build build --out results/roofline
    /usr/bin/python3 bench/roofline.py --smoke ...   # reduced models (ctest)

Writes roofline.{md,csv,json} to --out. reproduce.py includes the same table
in results/report.md.
"""
import argparse
import csv
import json
import os
import tempfile

import benchlib
from benchlib import log, markdown

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (model, label, seam-run arguments, model options of the smoke run)
CONFIGS = [
    ("flux2-klein", "compile", ["--tp", "4", "--target", "trn2", "--mode",
                                "compile"], "--layers 1"),
    ("flux2-klein", "eager", ["--tp", "4", "--target", "trn2", "--mode",
                              "eager"], "--layers 1"),
    ("fnet-base", "compile", ["--target", "trn2", "--mode", "compile"],
     "--layers 1 --seq 128"),
    ("fnet-base", "compile, fourier-mix", ["--target", "trn2", "--mode",
                                           "compile", "--kernels",
                                           "fourier-mix"],
     "--layers 1 --seq 128"),
    ("hyena", "compile", ["--target", "trn2", "--mode", "compile"],
     "--layers 1 --seq 256"),
    ("hyena", "compile, fftconv", ["--target", "trn2", "--mode", "compile",
                                   "--kernels", "fftconv"],
     "--layers 1 --seq 256"),
]

HEADER = ["model", "mode", "warm step ms", "floor ms", "fraction",
          "device fraction", "bound", "DMA bytes/rank/step",
          "must-cross bytes", "ratio", "transfers/rank/step", "mean transfer",
          "longest idle stretch of the bound engine (cause)"]

NOTES = [
    "floor = sum over the step's launches of max(TE, elementwise, DMA), per "
    "rank, from the graph's work (passes/Roofline.cpp): linear 2MKN, "
    "attention QK^T + PV, DFTs as real matmuls with the four-step "
    "contraction above 128 points; bytes that must cross HBM = each launch's "
    "parameters, inputs and outputs once; peaks from runtime/profiles",
    "fraction = floor / warm step latency (host costs included, host "
    "fallback ops excluded from the floor); device fraction = floor / device "
    "time of the last step",
    "DMA figures are of the last step, per rank: bytes moved by dma_copy "
    "(ratio = moved / must-cross) and the number of transfers",
    "eager's floor is above compile's for the same model: each program's "
    "activations cross HBM and each program is bounded by its own slowest "
    "term (flux2-klein: double-stream blocks are DMA-bound, single-stream "
    "TE-bound); kernels do the work of the op they replace, so a model's "
    "floor does not depend on --kernels (the host fallback ops they replace "
    "are excluded without them)",
    "host fallback ops are run for real on this CPU: warm steps of the rows "
    "that have them vary from run to run",
    "longest idle stretch: of the bound engine in the last step, on rank 0 "
    "(seam-run's roofline.idle): the launched unit, the time into the "
    "launch, the instruction that ended the stretch and what it waited for "
    "(the semaphore signalled last before it could issue: an engine's "
    "instruction or a DMA transfer, with its pc in the unit's listing, "
    "seam-run --dump-programs); 'to the launch's end' is the tail after the "
    "engine's last instruction; none for a DMA-bound step",
]


def human_bytes(b):
    for unit in ["B", "KB", "MB"]:
        if b < 1000:
            return ("%d %s" if unit == "B" else "%.3g %s") % (b, unit)
        b /= 1000.0
    return "%.3g GB" % b


def measure(seam_run, tmp, smoke=False, steps=2):
    """Runs every configuration; returns (rows, raw results by label)."""
    rows, raw = [], {}
    for model, label, args, smoke_import in CONFIGS:
        a = ["--model", model, "--steps", str(steps), "--runs", "1"] + args
        if smoke:
            a += smoke_import.split()
        name = "roofline-%s-%s" % (model, label.replace(", ", "-").replace(
            " ", "-"))
        j, _ = benchlib.seam_run_json(seam_run, a,
                                      os.path.join(tmp, name + ".json"))
        rf = j["roofline"]
        step, dma = rf["step"], rf["dma"]
        raw["%s %s" % (model, label)] = j
        rows.append([
            model, label, "%.3f" % (j["warm_step_s"] * 1e3),
            "%.3f" % (step["floor_s"] * 1e3),
            "%.1f%%" % (100 * step["fraction"]),
            "%.1f%%" % (100 * step["device_fraction"]),
            step["bound"] + (" (%d host ops excluded)" %
                             step["host_ops_excluded"]
                             if step["host_ops_excluded"] else ""),
            human_bytes(dma["bytes_per_rank_per_step"]),
            human_bytes(dma["must_cross_bytes_per_rank_per_step"]),
            "%.2fx" % dma["ratio"],
            "%.0f" % dma["transfers_per_rank_per_step"],
            human_bytes(dma["mean_transfer_bytes"]),
            rf["idle"]["cause"] if rf.get("idle") else "none"])
    return rows, raw


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results",
                                                  "roofline"))
    ap.add_argument("--smoke", action="store_true",
                    help="reduced models (one block, short sequences)")
    args = ap.parse_args()
    seam_run = os.path.join(os.path.abspath(args.build), "bin", "seam-run")
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="seam-roofline-")
    rows, raw = measure(seam_run, tmp, args.smoke)
    md = "\n".join(["# Roofline (trn2, per rank)", "", markdown(HEADER, rows),
                    ""] + ["- " + n for n in NOTES]) + "\n"
    print(md)
    with open(os.path.join(args.out, "roofline.md"), "w") as f:
        f.write(md)
    with open(os.path.join(args.out, "roofline.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        w.writerows(rows)
    with open(os.path.join(args.out, "roofline.json"), "w") as f:
        json.dump({k: v["roofline"] | {"warm_step_s": v["warm_step_s"]}
                   for k, v in raw.items()}, f, indent=1)
    log("wrote %s/roofline.{md,csv,json}" % args.out)


if __name__ == "__main__":
    main()
