"""Checks seam-run's step readout in its --json.

  readout.py sums FILE       every step's host parts sum to its latency
  readout.py corrupt DIR     flips one byte in the middle of each cache entry
  readout.py trace FILE      what a --trace holds: kinds of spans, cores,
                             programs shown with loop spans, compile events
"""
import json
import os
import sys

PARTS = ["compile_s", "tracing_s", "kernel_call_s", "launch_s", "transfer_s", "sync_s",
         "step_end_wait_s", "fallback_s", "other_s"]


def main(argv):
    if argv[1] == "sums":
        with open(argv[2]) as f:
            r = json.load(f)
        for i, run in enumerate(r["runs"]):
            for j, s in enumerate(run["steps"]):
                total = sum(s[k] for k in PARTS)
                if abs(total - s["latency_s"]) > 1e-9 * max(1, s["latency_s"]):
                    print("run %d step %d: parts %.9f != latency %.9f"
                          % (i, j, total, s["latency_s"]))
                    return 1
                if abs(s["other_s"]) > 1e-9:
                    print("run %d step %d: other %.9f" % (i, j, s["other_s"]))
                    return 1
        print("sums OK")
        return 0
    if argv[1] == "corrupt":
        n = 0
        for root, _, files in os.walk(argv[2]):
            for name in files:
                path = os.path.join(root, name)
                with open(path, "r+b") as f:
                    data = bytearray(f.read())
                    data[len(data) // 2] ^= 0xFF
                    f.seek(0)
                    f.write(data)
                n += 1
        print("corrupted %d entries" % n)
        return 0
    if argv[1] == "trace":
        with open(argv[2]) as f:
            events = json.load(f)["traceEvents"]
        spans = [e for e in events if e["ph"] == "X" and e["pid"] > 0]
        loops = [e for e in spans if e["name"].endswith(" loop")]
        launches = [e for e in spans if e["cat"] == "launch"]
        insts = [e for e in spans if e not in loops and e not in launches]
        host = [e for e in events if e["ph"] == "X" and e["pid"] == 0]
        print("host %s loops %s instructions %s launches %s" % (
            "yes" if host else "no", "yes" if loops else "no",
            "yes" if insts else "no", "yes" if launches else "no"))
        print("cores %s" % sorted({e["pid"] - 1 for e in spans}))
        print("loop programs %s" % sorted(
            {e["args"]["program"] for e in loops}))
        print("compile events %d" % sum(
            1 for e in host if e["cat"] == "compile"))
        steps = [e["name"] for e in host if e["cat"] == "step"]
        print("steps %s" % steps)
        stamped = [e["ts"] for e in events if "ts" in e]
        print("first ts %.6f" % min(stamped))
        starts = {e["id"]: e for e in events if e["ph"] == "s"}
        ends = [e for e in events if e["ph"] == "f"]
        # Every arrow: from the host to a core, not before its launch.
        ok = all(e["id"] in starts and starts[e["id"]]["pid"] == 0 and
                 e["pid"] > 0 and e["ts"] >= starts[e["id"]]["ts"]
                 for e in ends)
        print("flows %d %s" % (len(ends), "host->device" if ok else "BAD"))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
