"""Prints `same` when two seam-run JSON files agree in every modelled figure
(bench/sweep.py's rule: wall-clock and cache-state fields aside), else
`differ:` and the first fields that differ."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "bench"))
import sweep  # noqa: E402

a, b = (sweep.flatten(json.load(open(f))) for f in sys.argv[1:3])
diff = sweep.modelled_diff(a, b)
print("same (%d fields)" % len(a) if not diff else
      "differ: " + ", ".join(diff[:5]))
