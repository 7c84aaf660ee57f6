"""Checks the `roofline` object of a seam-run --json file.

    roofline.py FILE [FLOOR_S BOUND]

Prints one line per check that holds and exits non-zero at the first that
does not: every floor is positive and a lower bound of what was measured
(fraction in (0, 1]), the step floor is the sum of its launches' floors, the
DMA figures are consistent and every byte that must cross HBM did (ratio >=
1). With FLOOR_S and BOUND, the step's floor must be FLOOR_S (relative 1e-9)
and its bound BOUND.
"""
import json
import sys


def check(ok, what):
    if not ok:
        print("FAILED: " + what)
        sys.exit(1)
    print("ok: " + what)


def main(argv):
    with open(argv[1]) as f:
        j = json.load(f)
    rf = j["roofline"]
    step, dma, programs = rf["step"], rf["dma"], rf["programs"]
    check(step["floor_s"] > 0, "step floor > 0")
    check(0 < step["fraction"] <= 1, "0 < step fraction <= 1")
    check(abs(step["fraction"] - step["floor_s"] / j["warm_step_s"]) < 1e-9,
          "step fraction = floor / warm step")
    check(0 < step["device_fraction"] <= 1, "0 < device fraction <= 1")
    check(step["fraction"] <= step["device_fraction"],
          "fraction of the step <= fraction of its device time")
    total = sum(p["floor_s"] * p["launches_per_step"] for p in programs)
    check(abs(total - step["floor_s"]) <= 1e-9 * step["floor_s"],
          "step floor = sum of launch floors")
    for p in programs:
        check(p["floor_s"] == max(p["te_s"], p["elementwise_s"], p["dma_s"]),
              "%s: floor = max of its terms" % p["name"])
        check(0 < p["fraction"] <= 1, "%s: 0 < fraction <= 1" % p["name"])
        check(p["bound"] in ("TE", "DMA") or set(p["bound"].split("+")) <=
              {"VE", "SE", "GP"}, "%s: bound names engines" % p["name"])
    check(dma["bytes_per_rank_per_step"] > 0 and
          dma["transfers_per_rank_per_step"] > 0, "DMA moved bytes")
    check(dma["ratio"] >= 1, "every byte that must cross HBM did")
    check(abs(dma["mean_transfer_bytes"] * dma["transfers_per_rank_per_step"] -
              dma["bytes_per_rank_per_step"]) < 1e-6 *
          dma["bytes_per_rank_per_step"], "mean transfer = bytes / transfers")
    if len(argv) > 3:
        want = float(argv[2])
        check(abs(step["floor_s"] - want) <= 1e-9 * want,
              "step floor %.9g s = %s s" % (step["floor_s"], argv[2]))
        check(step["bound"] == argv[3], "bound %s" % step["bound"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
