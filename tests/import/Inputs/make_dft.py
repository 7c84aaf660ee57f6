"""Writes small ONNX DFT models (opset 17), their inputs and numpy's answers.

Usage: make_dft.py OUT_DIR (see ../onnx-dft.test). For each case NAME:
NAME.onnx, NAME.x.npy (the input) and NAME.want.npy (numpy's transform in
float64, as ONNX's [..., 2] (re, im) pairs). `make_dft.py check SEAM_RUN
OUT_DIR NAME...` runs each case through seam-run --functional and compares
its output with numpy's (rel-L2 <= 1e-5).
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def model(path, shape, attrs, length=None, out_shape=None):
    inputs = ["x"] + (["n"] if length is not None else [])
    node = helper.make_node("DFT", inputs, ["y"], **attrs)
    inits = []
    if length is not None:
        inits.append(helper.make_tensor("n", TensorProto.INT64,
                                        np.shape(length),
                                        np.ravel(length).tolist()))
    g = helper.make_graph(
        [node], "dft",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, path)


def pairs(c):
    return np.stack([c.real, c.imag], -1)


def case(out, name, x, attrs, want, length=None):
    """x: the ONNX input ([..., 1] or [..., 2]); want: complex, float64."""
    np.save(os.path.join(out, name + ".x.npy"), x.astype(np.float32))
    np.save(os.path.join(out, name + ".want.npy"), pairs(want))
    model(os.path.join(out, name + ".onnx"), list(x.shape), attrs, length,
          out_shape=list(want.shape) + [2])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    real = rng.standard_normal((2, 3, 12, 1)).astype(np.float32)
    r64 = real[..., 0].astype(np.float64)
    cplx = rng.standard_normal((2, 10, 3, 2)).astype(np.float32)
    c64 = cplx[..., 0].astype(np.float64) + 1j * cplx[..., 1]
    # A real signal's onesided transform over axis -2: numpy's rfft.
    case(out, "onesided", real, {"axis": -2, "onesided": 1},
         np.fft.rfft(r64, axis=2))
    # dft_length: zero-padded (16 > 12), truncated (8 < 12), both with a
    # real and a complex signal; with onesided (16 points: 9 bins).
    case(out, "pad_real", real, {"axis": 2}, np.fft.fft(r64, 16, axis=2),
         length=16)
    case(out, "trunc_real", real, {"axis": 2}, np.fft.fft(r64, 8, axis=2),
         length=8)
    case(out, "pad_complex", cplx, {"axis": 1},
         np.fft.fft(c64, 13, axis=1), length=np.int64(13))
    case(out, "trunc_complex_inverse", cplx, {"axis": 1, "inverse": 1},
         np.fft.ifft(c64, 7, axis=1), length=7)
    case(out, "pad_onesided", real, {"axis": 2, "onesided": 1},
         np.fft.rfft(r64, 16, axis=2), length=16)
    # The inverse of a real signal (imaginary parts zero), over another
    # axis; onesided: its first N/2 + 1 bins (N = 12: 7; odd N = 3: 2;
    # padded to 15: 8).
    case(out, "inverse_real", real, {"axis": 1, "inverse": 1},
         np.fft.ifft(r64, axis=1))
    case(out, "inverse_onesided", real,
         {"axis": 2, "inverse": 1, "onesided": 1},
         np.fft.ifft(r64, axis=2)[:, :, :7])
    case(out, "inverse_onesided_odd", real,
         {"axis": 1, "inverse": 1, "onesided": 1},
         np.fft.ifft(r64, axis=1)[:, :2])
    case(out, "inverse_onesided_pad", real,
         {"axis": 2, "inverse": 1, "onesided": 1},
         np.fft.ifft(r64, 15, axis=2)[:, :, :8], length=15)
    # Refused, by name.
    model(os.path.join(out, "bad_axis.onnx"), [2, 3, 12, 2], {"axis": 3})
    model(os.path.join(out, "onesided_complex.onnx"), [2, 10, 3, 2],
          {"axis": 1, "onesided": 1, "inverse": 1})
    model(os.path.join(out, "length_zero.onnx"), [2, 3, 12, 1], {"axis": 2},
          length=0)
    model(os.path.join(out, "length_vector.onnx"), [2, 3, 12, 1],
          {"axis": 2}, length=np.array([4, 4], np.int64))


def check(seam_run, out, names):
    bad = 0
    for name in names:
        os.makedirs(os.path.join(out, "out"), exist_ok=True)
        res = os.path.join(out, "out", name)
        r = subprocess.run([seam_run, os.path.join(out, name + ".onnx"),
                            "--functional", "--input",
                            "x=" + os.path.join(out, name + ".x.npy"),
                            "--output-dir", res, "--steps", "1", "--runs",
                            "1", "--quiet"], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name}: FAIL seam-run: {r.stderr.strip()}")
            bad += 1
            continue
        y = np.load(os.path.join(res, "y.npy")).astype(np.float64)
        w = np.load(os.path.join(out, name + ".want.npy"))
        if y.shape != w.shape:
            print(f"{name}: FAIL shape {y.shape}, numpy {w.shape}")
            bad += 1
            continue
        e = np.linalg.norm(y - w) / np.linalg.norm(w)
        ok = e <= 1e-5
        bad += not ok
        print(f"{name}: {'ok' if ok else 'FAIL'} rel-L2 {e:.1e}")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4:]))
    main()
