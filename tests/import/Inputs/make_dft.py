"""Writes small ONNX DFT models (opset 17) and numpy's answers for them.

Usage: make_dft.py OUT_DIR (see ../onnx-dft.test).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def model(path, shape, attrs, extra_inputs=(), out_shape=None):
    inputs = ["x"] + list(extra_inputs)
    node = helper.make_node("DFT", inputs, ["y"], **attrs)
    inits = []
    if extra_inputs:
        inits.append(helper.make_tensor("n", TensorProto.INT64, [], [4]))
    g = helper.make_graph(
        [node], "dft",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, path)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    # A real signal's onesided transform over axis -2 (the last signal
    # axis): numpy's rfft.
    x = rng.standard_normal((2, 3, 12, 1)).astype(np.float32)
    np.save(os.path.join(out, "x.npy"), x)
    f = np.fft.rfft(x[..., 0].astype(np.float64), axis=2)
    np.save(os.path.join(out, "want.npy"), np.stack([f.real, f.imag], -1))
    model(os.path.join(out, "onesided.onnx"), [2, 3, 12, 1],
          {"axis": -2, "onesided": 1}, out_shape=[2, 3, 7, 2])
    model(os.path.join(out, "length.onnx"), [2, 3, 12, 1], {"axis": 2},
          extra_inputs=["n"])
    model(os.path.join(out, "inverse_real.onnx"), [2, 3, 12, 1],
          {"axis": 1, "inverse": 1})
    model(os.path.join(out, "bad_axis.onnx"), [2, 3, 12, 2], {"axis": 3})


if __name__ == "__main__":
    main()
