#!/usr/bin/env python3
"""How the importer and the graph passes scale with the number of blocks.

For hyena at 64, 256, 1024 (and 4096 unless --quick) layers: the wall time
of seam-import, and each graph pass of seam-pipeline (seam-opt -mlir-timing,
remarks off) in eager and compile mode; then the cost per block at each size
as a ratio to the cost per block at 64 layers. A pass that is linear in
blocks stays near 1x; a quadratic one grows with the size (seam-form-regions
was 16x at 1024 layers before its hoisting stopped calling isBeforeInBlock
after every move). The best of --repeat runs is kept (the machine is shared).

  /usr/bin/python3 bench/graph_scaling.py --build build --out results/graph-scaling

Writes graph-scaling.md and graph-scaling.json under --out and prints the
table. Not a test: nothing here is timed by ctest.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import log, markdown, run  # noqa: E402

PASSES = ["SeamFuseQkv", "SeamInsertKernels", "SeamFuseRopeAttention",
          "SeamFormRegions", "SeamOutlineRegions"]
BASE = 64


def timings(text):
    """Wall seconds per name from an -mlir-timing report."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(\S.*?)\s*$", line)
        if m:
            out[m.group(2)] = float(m.group(1))
    return out


def measure(build, layers, mode, repeat, tmp):
    ir = os.path.join(tmp, "hyena-%d.mlir" % layers)
    best = {}
    for _ in range(repeat):
        _, wall = run([os.path.join(build, "bin", "seam-import"), "--model",
                       "hyena", "--layers", str(layers), "-o", ir])
        p, _ = run([os.path.join(build, "bin", "seam-opt"), ir,
                    "--seam-pipeline=mode=%s remarks=false" % mode,
                    "-mlir-timing", "-o", os.devnull])
        t = timings(p.stderr)
        t["seam-import"] = wall
        for k, v in t.items():
            best[k] = min(best.get(k, v), v)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="results/graph-scaling")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true",
                    help="64, 256 and 1024 layers only")
    args = ap.parse_args()
    sizes = [BASE, 256, 1024] + ([] if args.quick else [4096])
    os.makedirs(args.out, exist_ok=True)
    names = ["seam-import"] + PASSES
    results = {}
    for mode in ("eager", "compile"):
        for n in sizes:
            log("hyena, %d layers, %s" % (n, mode))
            results["%s/%d" % (mode, n)] = measure(args.build, n, mode,
                                                  args.repeat, args.out)
    rows = []
    for mode in ("eager", "compile"):
        base = results["%s/%d" % (mode, BASE)]
        for n in sizes:
            t = results["%s/%d" % (mode, n)]
            row = [mode, n]
            for name in names:
                per = t.get(name, 0.0) / n
                ratio = per / (base.get(name, 0.0) / BASE) \
                    if base.get(name) else float("nan")
                row.append("%.3f (%.1fx)" % (t.get(name, 0.0), ratio))
            rows.append(row)
    header = ["mode", "layers"] + ["%s s (per block vs %d)" % (n, BASE)
                                   for n in names]
    table = markdown(header, rows)
    print(table)
    with open(os.path.join(args.out, "graph-scaling.md"), "w") as f:
        f.write("# Graph passes vs blocks (hyena)\n\n"
                "Wall seconds, best of %d; in parentheses the cost per block "
                "as a multiple of the cost per block at %d layers.\n\n%s\n"
                % (args.repeat, BASE, table))
    with open(os.path.join(args.out, "graph-scaling.json"), "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)
    for n in sizes:
        os.remove(os.path.join(args.out, "hyena-%d.mlir" % n))


if __name__ == "__main__":
    main()
