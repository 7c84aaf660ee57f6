#!/usr/bin/python3
"""The emulator against hardware (issue 42): the NKI tutorials' published
neuron-profile figures beside seam's for the same kernels.

Two AWS tutorials publish profiles measured on hardware for NKI kernels whose
source is public (aws-neuron-sdk nki/guides/tutorials/):
kernel-optimization.rst (fp32 matmul lhsT [8192, 4096] x rhs [8192, 8192],
platform_target trn2: engine activity of v2..v5) and fused_mamba.rst (device
time and VectorE activity of mamba_v1..v3; the instance is not named, so
both trn1 and trn2 are run). kernels/NkiTutorials.cpp rebuilds the kernels;
bench/kernel_bench runs them timing-only at the published shapes and
measures activity as neuron-profile defines it (the share of the execution
period in which the engine has work in flight; DMA: any queue). Nothing is
calibrated to these figures: they are held out.

    /usr/bin/python3 bench/nki_validation.py --build build --out results/nki

Writes nki-validation.{md,csv,json} to --out. reproduce.py includes the
table in results/report.md; docs/validation.md discusses it.
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

# The published figures (the tutorials' text). Mamba shapes are
# [batch, seq_len, channels, state] as the tutorial writes them.
MAMBA = [
    # (kernel, shape, device us, VectorE active %)
    ("nki-mamba-v1", "[1, 512, 256, 16] f32", 172.93, 98.71),
    ("nki-mamba-v1", "[1, 512, 4096, 16] f32", 2340.0, 92.16),
    ("nki-mamba-v2", "[1, 512, 4096, 16] f32", 1610.0, 99.63),
    ("nki-mamba-v2", "[1, 8192, 4096, 16] f32", 53330.0, 58.93),
    ("nki-mamba-v3", "[1, 8192, 4096, 16] f32", 27800.0, 94.85),
]
MATMUL_SHAPE = "lhsT [8192, 4096] rhs [8192, 8192] f32"
MATMUL = [
    # (kernel, engine key, published active %)
    ("nki-matmul-v2", "dma", 99.93),
    ("nki-matmul-v2", "te", 87.28),
    ("nki-matmul-v3", "dma", 99.73),
    ("nki-matmul-v3", "te", 99.85),
    ("nki-matmul-v4", "dma", 95.70),
    ("nki-matmul-v4", "te", 99.52),
    ("nki-matmul-v5", "dma", 21.54),
    ("nki-matmul-v5", "te", 99.50),
    ("nki-matmul-v5", "ve", 10.55),
]
ENGINE = {"te": "TensorE", "ve": "VectorE", "dma": "DMA"}
STEP_HEADER = ["step", "target", "figure", "published", "seam", "direction",
               "note"]

HEADER = ["case", "target", "figure", "published", "seam", "ratio / diff",
          "bound", "seam busy% (same engine)", "mechanism (outside a bound)"]

# The missing or mis-modelled mechanism named for a row outside its bound
# (docs/validation.md explains each), keyed by (kernel, shape or None,
# target, figure). Written after the rows were measured, to explain them;
# nothing in the model was changed to move them.
MECHANISM = {
    ("nki-mamba-v2", "[1, 8192, 4096, 16] f32", "trn1", "device time"):
        "spill behaviour: seam spills delta, u and the accumulator on every "
        "state, single-buffered (reloads serialize with VectorE); the "
        "compiler's spill choice is not public",
    ("nki-mamba-v2", "[1, 8192, 4096, 16] f32", "trn1", "VectorE active"):
        "spill behaviour (as above): 16 MiB of reload/spill per state at "
        "trn1's 272 GB/s leaves VectorE idle",
    ("nki-mamba-v2", "[1, 512, 4096, 16] f32", "trn2", "device time"):
        "VectorE throughput on trn2: the cycle formulas are the trn1 ISA "
        "reference's at 0.96 GHz; trn2's 256 fp32 lanes are not in them; "
        "scan cost estimated (2N)",
    ("nki-mamba-v3", "[1, 8192, 4096, 16] f32", "trn2", "device time"):
        "VectorE throughput on trn2 (as above)",
    ("nki-matmul-v2", None, "trn2", "TensorE active"):
        "the tutorial also gives 69.83% for this run (seam +4.15 pt); "
        "DMA-bound: TensorE waits for the rotating loads",
    ("nki-matmul-v4", None, "trn2", "DMA active"):
        "DMA descriptor cost: seam charges a fixed cost per transfer plus "
        "bytes at the sustained rate; 512 B-per-partition lhsT rows run "
        "below peak on hardware (nki-dma-bandwidth-guide), so hardware "
        "transfers stay active longer",
    ("nki-matmul-v5", None, "trn2", "TensorE active"):
        "load/compute overlap at block boundaries: SBUF is full (224 KiB), "
        "so the lhsT and rhs blocks are single buffers and each reload "
        "waits for the last matmul of the block before",
}


def mechanism(kernel, shape, target, figure):
    return MECHANISM.get((kernel, shape, target, figure)) or MECHANISM.get(
        (kernel, None, target, figure), "NOT NAMED")


STEP_NOTES = {
    "mamba v1 -> v2 [1, 512, 4096, 16]":
        "size of the step: seam's v1 reloads of delta and u (143 GB/s "
        "needed) overlap VectorE under the DMA bandwidth, so reordering "
        "saves little; on hardware they blocked VectorE (the tutorial's "
        "qSyncIO0 waits) and DMA efficiency of the reloads (descriptor "
        "cost) is not modelled",
}


def run_bench(kernel_bench, target, flt, tmp):
    path = os.path.join(tmp, "kb-%s-%s.json" % (target, flt))
    benchlib.run([kernel_bench, "--filter", flt, "--target", target,
                  "--json", path])
    with open(path) as f:
        return json.load(f)


def measure(kernel_bench, tmp):
    """{(target, kernel, shape): kernel_bench record}."""
    got = {}
    for target, flt in (("trn2", "nki-matmul"), ("trn1", "nki-mamba"),
                        ("trn2", "nki-mamba")):
        log("kernel_bench --filter %s --target %s" % (flt, target))
        for r in run_bench(kernel_bench, target, flt, tmp):
            got[(target, r["kernel"], r["shape"])] = r
    return got


def pct(x):
    return "%.2f%%" % x


def table(got):
    rows, raw = [], []
    time_ok2 = time_ok30 = time_n = 0
    act_ok = act_n = 0
    # Mamba: device time and VectorE activity, trn1 and trn2.
    for kernel, shape, pub_us, pub_ve in MAMBA:
        for target in ("trn1", "trn2"):
            r = got.get((target, kernel, shape))
            case = "%s %s" % (kernel, shape.replace(" f32", ""))
            if not r:
                rows.append([case, target, "device time", "%.2f us" % pub_us,
                             "FAILED", "", "", "", ""])
                continue
            us = r["device_us"]
            ratio = us / pub_us
            time_n += 1
            within2 = 0.5 <= ratio <= 2.0
            within30 = 0.7 <= ratio <= 1.3
            time_ok2 += within2
            time_ok30 += within30
            bound = ("within 30%" if within30 else
                     "within 2x" if within2 else "OUTSIDE 2x")
            rows.append([case, target, "device time", "%.2f us" % pub_us,
                         "%.2f us" % us, "%.2fx" % ratio, bound, "",
                         "" if within30 else
                         mechanism(kernel, shape, target, "device time")])
            ve = 100 * r["ve_active"]
            act_n += 1
            ok = abs(ve - pub_ve) <= 10
            act_ok += ok
            rows.append([case, target, "VectorE active", pct(pub_ve),
                         pct(ve), "%+.2f pt" % (ve - pub_ve),
                         "within 10 pt" if ok else "outside 10 pt",
                         pct(100 * r["ve_busy"]),
                         "" if ok else
                         mechanism(kernel, shape, target, "VectorE active")])
            raw.append({"case": case, "target": target, "published_us": pub_us,
                        "seam_us": us, "published_ve_active": pub_ve,
                        "seam_ve_active": ve, "record": r})
    # Matmul: engine activity on trn2.
    for kernel, eng, pub in MATMUL:
        r = got.get(("trn2", kernel, MATMUL_SHAPE))
        case = "%s [8192,4096]x[8192,8192]" % kernel
        if not r:
            rows.append([case, "trn2", ENGINE[eng] + " active", pct(pub),
                         "FAILED", "", "", "", ""])
            continue
        v = 100 * r[eng + "_active"]
        busy = 100 * r[{"te": "te_busy", "ve": "ve_busy",
                        "dma": "dma_queue_busy"}[eng]]
        act_n += 1
        ok = abs(v - pub) <= 10
        act_ok += ok
        rows.append([case, "trn2", ENGINE[eng] + " active", pct(pub), pct(v),
                     "%+.2f pt" % (v - pub),
                     "within 10 pt" if ok else "outside 10 pt",
                     pct(busy) + (" (DMA queues)" if eng == "dma" else ""),
                     "" if ok else mechanism(kernel, MATMUL_SHAPE, "trn2",
                                             ENGINE[eng] + " active")])
        raw.append({"case": case, "target": "trn2", "engine": eng,
                    "published_active": pub, "seam_active": v,
                    "device_us": r["device_us"], "record": r})
    # The optimisation steps.
    steps = []

    def step(label, target, a, b, pub_change, key="device_us", unit="time"):
        ra, rb = got.get((target,) + a), got.get((target,) + b)
        if not ra or not rb:
            steps.append([label, target, unit, pub_change, "FAILED", "", ""])
            return
        if key == "device_us":
            ch = 100.0 * (rb[key] / ra[key] - 1)
            txt = "%+.1f%%" % ch
            same = (ch < 0) == (pub_change < 0)
            pubtxt = "%+.0f%%" % pub_change
        else:
            va, vb = 100 * ra[key], 100 * rb[key]
            ch = vb - va
            txt = "%.2f%% -> %.2f%%" % (va, vb)
            same = (ch < 0) == (pub_change < 0)
            pubtxt = "99.93% -> 21.54%"
        note = ""
        if key == "device_us" and abs(ch - pub_change) > 15:
            note = STEP_NOTES.get(label, "")
        steps.append([label, target, unit, pubtxt, txt,
                      "same direction" if same else "OPPOSITE direction",
                      note])

    for target in ("trn1", "trn2"):
        step("mamba v1 -> v2 [1, 512, 4096, 16]", target,
             ("nki-mamba-v1", "[1, 512, 4096, 16] f32"),
             ("nki-mamba-v2", "[1, 512, 4096, 16] f32"), -31)
        step("mamba v2 -> v3 [1, 8192, 4096, 16]", target,
             ("nki-mamba-v2", "[1, 8192, 4096, 16] f32"),
             ("nki-mamba-v3", "[1, 8192, 4096, 16] f32"), -48)
    step("matmul v2 -> v5 DMA activity", "trn2",
         ("nki-matmul-v2", MATMUL_SHAPE), ("nki-matmul-v5", MATMUL_SHAPE),
         21.54 - 99.93, key="dma_active", unit="DMA active")
    # The matmul's device times (no published figure: context).
    for v in (2, 3, 4, 5):
        r = got.get(("trn2", "nki-matmul-v%d" % v, MATMUL_SHAPE))
        if r:
            steps.append(["matmul v%d device time (not published)" % v,
                          "trn2", "time", "-", "%.2f ms" % (r["device_us"] /
                                                            1e3),
                          "TE floor %.2f ms" % (r["te_floor_us"] / 1e3), ""])
    summary = {
        "time_rows": time_n, "time_within_2x": time_ok2,
        "time_within_30pct": time_ok30, "activity_rows": act_n,
        "activity_within_10pt": act_ok,
    }
    return rows, steps, summary, raw


def notes(summary):
    return [
        "Published: kernel-optimization.rst (trn2, fp32 lhsT [8192, 4096] x "
        "rhs [8192, 8192]) and fused_mamba.rst (instance not named: trn1 "
        "and trn2 both run). seam: bench/kernel_bench timing-only, one "
        "emulated core, kernels/NkiTutorials.cpp.",
        "Activity as neuron-profile defines it: the share of the execution "
        "period in which the engine has an instruction (DMA: any transfer "
        "on any queue) in flight; seam's busy% (sum of instruction times / "
        "run; DMA: queue-ns over 16 queues) beside it.",
        "Bounds (issue 42): device time within 2x on every row and within "
        "30%% on half: %d/%d within 2x, %d/%d within 30%%; activity within "
        "10 points on half: %d/%d." % (
            summary["time_within_2x"], summary["time_rows"],
            summary["time_within_30pct"], summary["time_rows"],
            summary["activity_within_10pt"], summary["activity_rows"]),
        "No constant was fitted to these figures; the rows outside a bound "
        "and their mechanism are in docs/validation.md.",
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "nki"))
    args = ap.parse_args()
    kb = os.path.join(os.path.abspath(args.build), "bin", "kernel_bench")
    os.makedirs(args.out, exist_ok=True)
    got = measure(kb, tempfile.mkdtemp(prefix="seam-nki-"))
    rows, steps, summary, raw = table(got)
    md = ["# NKI tutorials: published profiles against seam", "",
          markdown(HEADER, rows), "", "## Optimisation steps", "",
          markdown(STEP_HEADER, steps), ""]
    md += ["- " + n for n in notes(summary)]
    with open(os.path.join(args.out, "nki-validation.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(args.out, "nki-validation.csv"), "w",
              newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        w.writerows(rows)
    with open(os.path.join(args.out, "nki-validation.json"), "w") as f:
        json.dump({"rows": rows, "steps": steps, "summary": summary,
                   "raw": raw}, f, indent=1)
    print("\n".join(md))


if __name__ == "__main__":
    main()
