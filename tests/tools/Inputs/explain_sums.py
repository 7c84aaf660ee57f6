"""Checks seam-run --explain-kernels JSON: per class, the parts sum to the
delta within 2% (and 1 ns); prints a summary for FileCheck."""
import json
import sys

e = json.load(open(sys.argv[1]))["kernel_explanation"]
parts = ("body_s", "round_trip_s", "lost_fusion_s", "lost_overlap_s",
         "launch_host_s")
ok = True
for c in e["classes"]:
    p = c["per_call"]
    total = sum(p[k] for k in parts)
    if abs(total - p["delta_s"]) > 0.02 * abs(p["delta_s"]) + 1e-9:
        ok = False
        print("mismatch", c["kernel"], c["window"], total, p["delta_s"])
    steps = c["step_s"]
    if set(steps) != {"fused", "no-fusion", "round-trip", "boundary", "kernel"}:
        ok = False
        print("variants", sorted(steps))
print("classes", len(e["classes"]))
print("sums ok" if ok else "sums WRONG")
fa = [c for c in e["classes"] if c["kernel"] == "flash-attn"][0]
# Issue 34's bar for the seed kernel: its body alone at most 1.25x the
# compiler's attention alone.
print("flash-attn body within 1.25x of the compiler's alone:",
      fa["kernel_body_alone"]["device_s"] <=
      1.25 * fa["compiler_body_alone"]["device_s"])
