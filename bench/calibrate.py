"""Calibration of a framework profile's one calibrated figure.

A framework profile (runtime/profiles/frameworks/*.json) may mark one host
figure calibrated and name one published row (its `calibration` block). The
figure is then computed here, never typed in: seam runs the row's
configuration, and the figure is solved so that seam's figure for the row
equals the published one. Every other published row of that source is a
held-out prediction (`held_out`), reported with its error.

The figure is paid per unit of a count the run reports (traced ops, kernel
calls), so seam's row figure t(v) grows with the figure v at most as fast as
count x v (host costs overlap the device's work, so it can grow more slowly
while the device still bounds the step). The solve is the fixed point
v <- v + (published - t(v)) / count (in the row's unit) from the profile's prior: it lands in
one step where the step is host-bound and approaches from below otherwise.

Runs under Debian's /usr/bin/python3; no third-party modules.
"""
import json
import os
import re


class CalibrationError(Exception):
    pass


def load_framework(root, name):
    """The framework profile `name` (its JSON) from runtime/profiles/."""
    path = os.path.join(root, "runtime", "profiles", "frameworks",
                        name + ".json")
    with open(path) as f:
        return json.load(f)


def seed_value(seed, path):
    """The published figure at `path` ("flux2_klein.eager.rows[0].
    warm_s_per_step") in the published figures (seed-results.json)."""
    node = seed
    for part in path.split("."):
        m = re.fullmatch(r"([A-Za-z0-9_]+)(?:\[(\d+)\])?", part)
        if not m:
            raise CalibrationError("row '%s': bad part '%s'" % (path, part))
        key, index = m.group(1), m.group(2)
        if not isinstance(node, dict) or key not in node:
            raise CalibrationError("row '%s': no '%s' in the published "
                                   "figures" % (path, key))
        node = node[key]
        if index is not None:
            if not isinstance(node, list) or int(index) >= len(node):
                raise CalibrationError("row '%s': no item %s of '%s'" % (
                    path, index, key))
            node = node[int(index)]
    if not isinstance(node, (int, float)) or isinstance(node, bool):
        raise CalibrationError("row '%s' is not a number" % path)
    return float(node)


def solve(run, published, prior, scale=1.0, tol=1e-4, max_iter=6):
    """The figure value that makes run(value)'s figure equal `published`.

    run(value) -> (figure, count): seam's figure for the row (same unit as
    `published`) with the calibrated figure at `value`, and the count the
    figure is paid per (per step). `scale` converts the figure's unit to the
    row's (1e-9 for a figure in ns and a row in s). Returns a dict: value, seam (the row's
    figure at value), error (seam / published), iterations, history [(value,
    seam)]. Raises CalibrationError when the count is zero or the rest of
    the row already exceeds the published figure with the figure at 0.
    """
    if published <= 0:
        raise CalibrationError("published figure %r is not positive" %
                               published)
    value = float(prior)
    history = []
    for _ in range(max_iter):
        seam, count = run(value)
        history.append((value, seam))
        if abs(seam - published) <= tol * published:
            break
        if not count:
            raise CalibrationError("the row pays the figure 0 times: it "
                                   "cannot calibrate it")
        nxt = value + (published - seam) / (count * scale)
        if nxt < 0:
            if value == 0:
                raise CalibrationError(
                    "seam's row is %.6g with the figure at 0, above the "
                    "published %.6g: no non-negative value reaches it" % (
                        seam, published))
            nxt = 0.0
        value = nxt
    else:
        seam, _ = run(value)
        history.append((value, seam))
    return {"value": value, "seam": seam, "error": seam / published,
            "iterations": len(history), "history": history}


def error_text(seam, published):
    """seam / published as the tables print it."""
    if not published:
        return "-"
    return "%.3gx" % (seam / published)


def off_by_more_than(seam, published, factor=2.0):
    """Whether seam and published differ by more than `factor` either way."""
    if not published or not seam:
        return True
    r = seam / published
    return r > factor or r < 1.0 / factor


def unit_scale(figure_unit, row):
    """The factor from a figure in `figure_unit` to the unit of the
    published `row` (its name ends in _s or _ms)."""
    if figure_unit != "ns":
        raise CalibrationError("calibrated figure in '%s': only ns figures "
                               "are calibrated" % figure_unit)
    if row.endswith("_ms"):
        return 1e-6
    if row.endswith("_s") or row.endswith("_s_per_step"):
        return 1e-9
    raise CalibrationError("row '%s': unit unknown (its name ends in "
                           "neither _s nor _ms)" % row)
