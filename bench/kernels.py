#!/usr/bin/python3
"""Kernels against their roofline (issue 12, part 3).

1. build/bin/kernel_bench: every kernel on the sources' shapes, compiled by
   the real codegen and run timing-only on one emulated trn2 core: device
   time, Tensor-engine busy share of the run, and the share of the roofline
   floor (max of the algorithm's matmul work at full tiles and the bytes
   that must cross HBM once). With --baseline (an earlier kernel_bench
   --json file) each row also shows the time before and the speedup.
2. fftconv against the host fallback at every L of the reproduction's
   table (bench/reproduce.py section 6: H = 64, trn2, compile mode, 3
   steps; the warm step is the mean of the steps after the first), as
   seam-run measures both: the kernel's step (launch + device) and the
   host fallback's (sync, transfers and the FFTs run for real on this CPU).

Prints the tables and what they say about the targets (no threshold is
asserted: performance is reported, not tested), and writes markdown and
JSON under --out.

    bench/kernels.py --build build --out results/kernels
    bench/kernels.py --build build --baseline old-kernel-bench.json
"""
import argparse
import json
import os
import sys
import tempfile

import benchlib
from benchlib import log, markdown

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# bench/reproduce.py section 6 (the published constraints' table).
FFTCONV_LENGTHS = [64, 372, 784, 1134, 4096, 8192]
FFTCONV_CHANNELS = 64


def fft_size(length):
    return max(16, 1 << (2 * length - 1).bit_length())


def fftconv_module(length, channels):
    n = fft_size(length)
    u = "tensor<1x%dx%dxf32>" % (channels, length)
    return ("func.func @forward(%%u: %s, %%k: tensor<%dx%dxf32>, "
            "%%d: tensor<%dxf32>) -> %s {\n"
            "  %%y = seam.block \"hyena\" 0 -> %s {\n"
            "    %%c = seam.fftconv %%u, %%k, %%d {fft_size = %d : i64} : "
            "(%s, tensor<%dx%dxf32>, tensor<%dxf32>) -> %s\n"
            "    seam.yield %%c : %s\n  }\n  return %%y : %s\n}\n"
            % (u, channels, length, channels, u, u, n, u, channels, length,
               channels, u, u, u))


def steady(r):
    """Warm step latency (mean of the steps after the first), as
    reproduce.py computes it."""
    steps = r["runs"][-1]["steps"]
    lat = [s["latency_s"] for s in (steps[1:] if len(steps) > 1 else steps)]
    return sum(lat) / len(lat)


def kernel_rows(bench_bin, out, baseline):
    path = os.path.join(out, "kernel-bench.json")
    benchlib.run([bench_bin, "--json", path])
    with open(path) as f:
        rows = json.load(f)
    before = {}
    if baseline:
        with open(baseline) as f:
            before = {(r["kernel"], r["shape"]): r for r in json.load(f)}
    header = ["kernel", "shape", "device us", "TE busy", "of floor",
              "TE floor us", "DMA floor us", "instructions"]
    if before:
        header += ["before us", "TE busy before", "speedup"]
    table = []
    for r in rows:
        line = [r["kernel"], r["shape"], "%.2f" % r["device_us"],
                "%.0f%%" % (100 * r["te_busy"]),
                "%.0f%%" % (100 * r["of_floor"]), "%.2f" % r["te_floor_us"],
                "%.2f" % r["dma_floor_us"], r["instructions"]]
        b = before.get((r["kernel"], r["shape"]))
        if before:
            line += (["%.2f" % b["device_us"], "%.0f%%" % (100 * b["te_busy"]),
                      "%.1fx" % (b["device_us"] / r["device_us"])]
                     if b else ["-", "-", "-"])
        table.append(line)
    return rows, header, table


def fftconv_rows(seam_run, tmp):
    rows = []
    for length in FFTCONV_LENGTHS:
        path = os.path.join(tmp, "fftconv-%d.mlir" % length)
        with open(path, "w") as f:
            f.write(fftconv_module(length, FFTCONV_CHANNELS))
        common = [path, "--target", "trn2", "--mode", "compile", "--steps",
                  "3", "--runs", "1"]
        k, _ = benchlib.seam_run_json(
            seam_run, common + ["--kernels", "fftconv"],
            os.path.join(tmp, "k-%d.json" % length))
        h, _ = benchlib.seam_run_json(seam_run, common,
                                      os.path.join(tmp, "h-%d.json" % length))
        kt, ht = steady(k), steady(h)
        device = k["runs"][-1]["steps"][-1]["device_s"]
        rows.append({"L": length, "fft_size": fft_size(length),
                     "H": FFTCONV_CHANNELS, "kernel_ms": kt * 1e3,
                     "kernel_device_ms": device * 1e3, "host_ms": ht * 1e3,
                     "speedup": ht / kt if kt else None})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "kernels"))
    ap.add_argument("--baseline", default="",
                    help="an earlier kernel_bench --json file to compare with")
    args = ap.parse_args()
    bin_dir = os.path.join(os.path.abspath(args.build), "bin")
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="seam-kernels-")

    log("== kernel_bench")
    rows, header, table = kernel_rows(os.path.join(bin_dir, "kernel_bench"),
                                      out, args.baseline)
    text = ["## Kernels on one emulated trn2 core (timing-only)", "",
            markdown(header, table), ""]
    dft = [r for r in rows if r["kernel"].startswith("fft/n128 bf16")]
    for r in dft:
        bound = r["te_floor_us"] / r["dma_floor_us"]
        text.append(
            "- %s %s: TE busy %.0f%% of the run, %.0f%% of the roofline "
            "floor; its DMA floor (%.2f us: bf16 rows in, complex<f32> rows "
            "out) is %.1fx its TE floor, so no schedule keeps the TE busier "
            "than about %.0f%% on its DFT matmuls"
            % (r["kernel"], r["shape"], 100 * r["te_busy"],
               100 * r["of_floor"], r["dma_floor_us"], 1 / bound,
               100 * bound))

    log("== fftconv kernel vs host fallback")
    conv = fftconv_rows(os.path.join(bin_dir, "seam-run"), tmp)
    conv_header = ["L", "fft_size", "H", "kernel ms (step)",
                   "kernel device ms", "host fallback ms", "speedup"]
    conv_table = [[c["L"], c["fft_size"], c["H"], "%.4f" % c["kernel_ms"],
                   "%.4f" % c["kernel_device_ms"], "%.3f" % c["host_ms"],
                   "%.1fx" % c["speedup"]] for c in conv]
    text += ["## fftconv: kernel vs host fallback (trn2, H = %d)"
             % FFTCONV_CHANNELS, "", markdown(conv_header, conv_table), ""]
    device = [c["kernel_device_ms"] for c in conv]
    grows = all(b > a for a, b in zip(device, device[1:]))
    beats = all(c["kernel_ms"] < c["host_ms"] for c in conv)
    text.append("- kernel device time grows with H x L at every step of the "
                "table: %s (%s ms)" % ("yes" if grows else "no",
                                       ", ".join("%.4f" % d for d in device)))
    text.append("- kernel step beats the host fallback at every L: %s "
                "(smallest speedup %.1fx)"
                % ("yes" if beats else "no",
                   min(c["speedup"] for c in conv)))
    report = "\n".join(text) + "\n"
    print(report)
    with open(os.path.join(out, "kernels.md"), "w") as f:
        f.write(report)
    with open(os.path.join(out, "kernels.json"), "w") as f:
        json.dump({"kernels": rows, "fftconv_vs_host": conv}, f, indent=1)
    log("wrote %s/kernels.md, kernels.json, kernel-bench.json" % out)


if __name__ == "__main__":
    sys.exit(main())
