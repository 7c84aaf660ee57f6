"""Compares seam-run's --tp 2 outputs with its --tp 1 outputs and PyTorch's.

Usage: seam-run-onnx-tp.test.py TORCH_DIR OUT_DIR (see ../seam-run-onnx-tp.test).
"""
import os
import sys

import numpy as np


def rel_l2(x, ref):
    x = x.astype(np.float64)
    ref = ref.astype(np.float64)
    return float(np.linalg.norm(x - ref) / max(np.linalg.norm(ref), 1e-300))


def main():
    torch_dir, out = sys.argv[1], sys.argv[2]
    for model in ("encoder", "llama", "flux_mlp"):
        tp2 = np.load(os.path.join(out, model + "-2", "y.npy"))
        one = os.path.join(out, model + "-1", "y.npy")
        if os.path.exists(one):
            e = rel_l2(tp2, np.load(one))
            print(model, "tp2-vs-tp1", "ok" if e <= 1e-5 else "FAIL", e)
        e = rel_l2(tp2, np.load(os.path.join(torch_dir, model + ".y.npy")))
        print(model, "tp2-vs-torch", "ok" if e <= 1e-4 else "FAIL", e)


if __name__ == "__main__":
    main()
