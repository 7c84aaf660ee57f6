#!/usr/bin/python3
"""Helpers for the seam-run end-to-end tests (Debian's numpy).

  npy.py inputs DIR           write x.npy, v.npy for Inputs/small.mlir
  npy.py check-small DIR OUT  compare OUT/output{0,1}.npy with float64
                              references of small.mlir; exit 1 over 1e-5
  npy.py compare A B TOL      compare every outputN.npy of directory B with
                              A's (rel-L2 over all of them); exit 1 over TOL
  npy.py complex-inputs DIR   write c.npy (complex64), x.npy for
                              Inputs/complex.mlir
  npy.py check-complex DIR OUT  compare OUT/output{0,1,2}.npy (dtype and
                              shape too) with complex.mlir's float64
                              references; exit 1 over 1e-5
  npy.py json FILE KEY...     print the value at the key path of a JSON file
"""
import json
import sys

import numpy as np


def small_ref(x, v):
    x = x.astype(np.float64)
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    n = (x - mu) / np.sqrt(var + 1e-5)
    y = n / (1 + np.exp(-n)) * v.astype(np.float64)[:, None, :] + x
    z = np.real(np.fft.fft2(y, axes=(1, 2)))
    return [y, z]


def complex_ref(c, x):
    c = c.astype(np.complex128)
    f = np.fft.fft(c, axis=1)
    return [f, 2 * np.real(np.fft.ifft(f, axis=1)),
            np.fft.fft(x.astype(np.float64), axis=1)]


def rel_l2(ref, got):
    return float(np.linalg.norm(ref - got) / np.linalg.norm(ref))


def main(argv):
    if argv[1] == "inputs":
        rng = np.random.default_rng(3)
        np.save(argv[2] + "/x.npy", rng.standard_normal((1, 256, 256)).astype(np.float32))
        np.save(argv[2] + "/v.npy", rng.uniform(-1, 1, (1, 256)).astype(np.float32))
        return 0
    if argv[1] == "check-small":
        x = np.load(argv[2] + "/x.npy")
        v = np.load(argv[2] + "/v.npy")
        worst = 0.0
        for i, ref in enumerate(small_ref(x, v)):
            got = np.load("%s/output%d.npy" % (argv[3], i))
            assert got.shape == ref.shape, (got.shape, ref.shape)
            err = rel_l2(ref, got)
            print("output%d %s rel-L2 %.2e" % (i, "x".join(map(str, got.shape)), err))
            worst = max(worst, err)
        print("OK" if worst <= 1e-5 else "FAIL")
        return 0 if worst <= 1e-5 else 1
    if argv[1] == "complex-inputs":
        rng = np.random.default_rng(5)
        c = (rng.standard_normal((2, 768, 3)) +
             1j * rng.standard_normal((2, 768, 3))).astype(np.complex64)
        np.save(argv[2] + "/c.npy", c)
        np.save(argv[2] + "/x.npy", rng.uniform(-1, 1, (4, 1000)).astype(np.float32))
        return 0
    if argv[1] == "check-complex":
        c = np.load(argv[2] + "/c.npy")
        x = np.load(argv[2] + "/x.npy")
        worst = 0.0
        for i, ref in enumerate(complex_ref(c, x)):
            got = np.load("%s/output%d.npy" % (argv[3], i))
            want = np.complex64 if np.iscomplexobj(ref) else np.float32
            assert got.dtype == want, (i, got.dtype, want)
            assert got.shape == ref.shape, (i, got.shape, ref.shape)
            err = rel_l2(ref, got.astype(ref.dtype))
            print("output%d %s %s rel-L2 %.2e" % (i, got.dtype, "x".join(map(str, got.shape)), err))
            worst = max(worst, err)
        print("OK" if worst <= 1e-5 else "FAIL")
        return 0 if worst <= 1e-5 else 1
    if argv[1] == "compare":
        import os
        names = sorted(f for f in os.listdir(argv[2]) if f.endswith(".npy"))
        assert names and names == sorted(
            f for f in os.listdir(argv[3]) if f.endswith(".npy")), "outputs differ"
        a = np.concatenate([np.load(os.path.join(argv[2], f)).astype(np.float64).ravel() for f in names])
        b = np.concatenate([np.load(os.path.join(argv[3], f)).astype(np.float64).ravel() for f in names])
        err = float(np.linalg.norm(a - b) / np.linalg.norm(a))
        ok = np.isfinite(b).all() and err <= float(argv[4])
        print("%d outputs rel-L2 %.2e: %s" % (len(names), err, "OK" if ok else "FAIL"))
        return 0 if ok else 1
    if argv[1] == "json":
        with open(argv[2]) as f:
            v = json.load(f)
        for k in argv[3:]:
            v = v[int(k)] if isinstance(v, list) else v[k]
        print(json.dumps(v))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
