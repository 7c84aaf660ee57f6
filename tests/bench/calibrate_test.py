#!/usr/bin/python3
"""bench/calibrate.py: a framework profile's calibrated figure is computed
from seam's own run of the named published row, never typed in.

Runs the solver against stand-in runs whose answer is known (a host-bound
step, linear in the figure; a step the device bounds until the host
catches up), reads published rows by path, and checks that each built-in
framework profile names rows that exist in the published figures.
"""
import json
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import calibrate  # noqa: E402


def seed_figures():
    shared = os.path.join(ROOT, "..", "shared", "reference",
                          "seed-results.json")
    path = shared if os.path.exists(shared) else os.path.join(
        ROOT, "bench", "seed-results.json")
    with open(path) as f:
        return json.load(f)


class Solve(unittest.TestCase):
    def test_host_bound_step_lands_in_one_correction(self):
        calls = []

        def run(v):  # 0.012 s of other host work + 2000 ops x v ns
            calls.append(v)
            return 0.012 + 2000 * v * 1e-9, 2000
        res = calibrate.solve(run, 0.824, 3000.0, 1e-9)
        self.assertAlmostEqual(res["value"], (0.824 - 0.012) / 2000 * 1e9,
                               places=3)
        self.assertAlmostEqual(res["error"], 1.0, places=6)
        self.assertEqual(res["iterations"], 2)  # prior, then the answer
        self.assertEqual(calls[0], 3000.0)

    def test_device_bound_start_converges_from_below(self):
        # The device bounds the step at 0.05 s until the host (ops x v)
        # exceeds it: the first correction undershoots, the next lands.
        def run(v):
            return max(0.05, 0.001 + 1000 * v * 1e-9), 1000
        res = calibrate.solve(run, 0.4, 0.0, 1e-9)
        self.assertAlmostEqual(res["seam"], 0.4, places=6)
        self.assertAlmostEqual(res["value"], 0.399 / 1000 * 1e9, places=3)
        self.assertGreaterEqual(res["iterations"], 2)
        values = [v for v, _ in res["history"]]
        self.assertEqual(values, sorted(values))  # from below

    def test_unreachable_rows_fail_clearly(self):
        with self.assertRaisesRegex(calibrate.CalibrationError,
                                    "above the published"):
            calibrate.solve(lambda v: (1.0 + v, 2), 0.5, 0.0)
        with self.assertRaisesRegex(calibrate.CalibrationError,
                                    "pays the figure 0 times"):
            calibrate.solve(lambda v: (0.1, 0), 0.5, 1.0)

    def test_units(self):
        self.assertEqual(calibrate.unit_scale("ns", "a.rows[0].kernel_ms"),
                         1e-6)
        self.assertEqual(calibrate.unit_scale("ns", "a.warm_s_per_step"),
                         1e-9)
        with self.assertRaises(calibrate.CalibrationError):
            calibrate.unit_scale("GB/s", "a.kernel_ms")

    def test_error_and_two_x(self):
        self.assertEqual(calibrate.error_text(3.0, 1.5), "2x")
        self.assertTrue(calibrate.off_by_more_than(3.1, 1.5))
        self.assertTrue(calibrate.off_by_more_than(0.7, 1.5))
        self.assertFalse(calibrate.off_by_more_than(2.9, 1.5))


class Rows(unittest.TestCase):
    def test_seed_value_reads_a_row_by_path(self):
        seed = {"a": {"rows": [{"x": 1.5}, {"x": 2}]}}
        self.assertEqual(calibrate.seed_value(seed, "a.rows[1].x"), 2.0)
        with self.assertRaisesRegex(calibrate.CalibrationError, "no item 5"):
            calibrate.seed_value(seed, "a.rows[5].x")
        with self.assertRaisesRegex(calibrate.CalibrationError, "no 'b'"):
            calibrate.seed_value(seed, "b.rows[0].x")

    def test_builtin_frameworks_name_published_rows(self):
        seed = seed_figures()
        for name in ("torch-xla-lazy", "torch-native-eager"):
            fw = calibrate.load_framework(ROOT, name)
            c = fw["calibration"]
            self.assertTrue(fw["figures"][c["figure"]].get("calibrated"))
            self.assertGreater(calibrate.seed_value(seed, c["row"]), 0)
            for row in c["held_out"]:
                self.assertGreater(calibrate.seed_value(seed, row), 0)
            self.assertNotIn(c["row"], c["held_out"])


if __name__ == "__main__":
    unittest.main()
