#!/usr/bin/python3
"""ONNX's backend node tests through seam-run --functional.

Each test of Debian's libonnx-testdata (data/node/*, data/pytorch-converted/*,
data/pytorch-operator/*) is a model.onnx with test_data_set_*/input_*.pb and
output_*.pb. A test runs when every op of its model is one seam claims
(CLAIMED below); seam-run executes it on the emulated device (or the host,
for primitives) and each output is compared with the expected one: it passes
at rel-L2 <= 1e-5, or within the backend tests' own tolerance
(numpy.testing.assert_allclose, rtol 1e-3, atol 1e-7) where that is looser.
NaN must appear where the expected output has it. Integer inputs (shapes,
axes, split sizes, indices) are bound into the model as constants: seam
compiles static graphs. Tests whose step inputs or outputs are not float32
(float64, int, bool) are not run: seam's steps take float32.

  node_tests.py SEAM_RUN [--data DIR] [--table FILE.md] [--json FILE]
                [--only SUBSTR] [--jobs N]

Exit status 1 when a test of a claimed op fails, or fewer than --min-pass
tests pass.
"""
import argparse
import collections
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

# The ops seam imports and runs, with every node test of theirs passing.
# (Ops seam imports only in part are in PARTIAL, with what is missing.)
CLAIMED = {
    "Abs", "Add", "Concat", "Constant", "Div", "Dropout", "Erf", "Exp",
    "Flatten", "Gemm", "Identity", "LayerNormalization", "Log", "LogSoftmax",
    "MatMul", "Max", "Min", "Mul", "Neg", "Pow", "Reciprocal", "ReduceMax",
    "ReduceMean", "ReduceSum", "Relu", "Reshape", "Shape", "Sigmoid",
    "Slice", "Softmax", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tanh",
    "Transpose", "Unsqueeze", "Cast", "Gather", "DFT",
}
PARTIAL = {
    "Gather": "constant indices only (an index tensor that is a graph input "
              "is refused)",
    "Slice": "unit steps, non-empty results",
    "Split": "non-empty parts",
    "Reshape": "no dimension of size 0",
    "Cast": "float to float on computed tensors (integer casts of constants "
            "fold)",
    "Dropout": "inference (no mask output)",
    "LayerNormalization": "seam.layer_norm over the last axis with Y only; "
                          "other axes and the Mean / InvStdDev outputs in "
                          "primitives (host)",
    "Pow": "a float base (an integer exponent tensor is a constant)",
    "DFT": "seam.fft / seam.ifft; dft_length a constant (pad / "
           "truncate); onesided of a real signal only (ONNX leaves it "
           "undefined for a complex one)",
}
SUITES = ["node", "pytorch-converted", "pytorch-operator"]
# Tests of claimed ops seam does not pass, and why. The run fails if one of
# them starts passing (remove it here) or another test fails.
EXPECTED_FAIL = {
    "node/test_reshape_allowzero_reordered": "a dimension of size 0 "
                                             "(seam does not run empty "
                                             "tensors)",
    "node/test_split_zero_size_splits": "a split of size 0 (empty tensors)",
    "node/test_slice_start_out_of_bounds": "an empty slice (empty tensors)",
    "node/test_slice_neg_steps": "a step of -1 (unit steps only)",
}


def load_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def rel_l2(got, want):
    got = got.astype(np.float64).ravel()
    want = want.astype(np.float64).ravel()
    den = np.linalg.norm(want)
    num = np.linalg.norm(got - want)
    if den == 0:
        return 0.0 if num == 0 else float("inf")
    return float(num / den)


def elem_types(values):
    return [v.type.tensor_type.elem_type if v.type.HasField("tensor_type")
            else None for v in values]


def dtype_problem(model):
    """Why seam cannot run this test's graph as typed (its step inputs and
    outputs are float32; integer inputs are bound as constants), or None."""
    init = {t.name for t in model.graph.initializer}
    for v, t in zip(model.graph.input, elem_types(model.graph.input)):
        if v.name in init:
            continue
        if t not in (TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32):
            return f"input '{v.name}' is " + \
                (TensorProto.DataType.Name(t) if t else "not a tensor")
    for v, t in zip(model.graph.output, elem_types(model.graph.output)):
        if t != TensorProto.FLOAT:
            return f"output '{v.name}' is " + \
                (TensorProto.DataType.Name(t) if t else "not a tensor")
    return None


def run_test(seam_run, test_dir, workdir):
    """Returns (status, detail): status is pass, fail or error."""
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    init = {t.name for t in model.graph.initializer}
    in_names = [i.name for i in model.graph.input if i.name not in init]
    out_names = [o.name for o in model.graph.output]
    sets = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
    if not sets:
        return "error", "no test_data_set"
    worst = 0.0
    for s in sets:
        ins = sorted(glob.glob(os.path.join(s, "input_*.pb")),
                     key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
        # Integer inputs (shapes, axes, split sizes, indices) are bound into
        # the model as initializers: seam compiles static graphs, so these
        # must be known at import, as an exporter's constants are.
        bound = onnx.ModelProto()
        bound.CopyFrom(model)
        floats = []
        for i, p in enumerate(ins):
            name, arr = load_tensor(p)
            name = name or in_names[i]
            if arr.dtype in (np.int64, np.int32):
                bound.graph.initializer.append(
                    numpy_helper.from_array(arr, name))
                keep = [v for v in bound.graph.input if v.name != name]
                del bound.graph.input[:]
                bound.graph.input.extend(keep)
            else:
                floats.append((name, arr))
        path = os.path.join(test_dir, "model.onnx")
        if len(floats) != len(ins):
            path = os.path.join(workdir, "bound.onnx")
            onnx.save(bound, path)
        args = [seam_run, path, "--functional", "--steps", "1", "--runs", "1",
                "--quiet"]
        for i, (name, arr) in enumerate(floats):
            npy = os.path.join(workdir, f"in{i}.npy")
            np.save(npy, arr)
            args += ["--input", f"{name}={npy}"]
        outdir = os.path.join(workdir, "out")
        os.makedirs(outdir, exist_ok=True)
        for f in glob.glob(os.path.join(outdir, "*.npy")):
            os.remove(f)
        args += ["--output-dir", outdir]
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            msg = (r.stderr.strip() or r.stdout.strip()).splitlines()
            return "error", msg[-1] if msg else f"exit {r.returncode}"
        outs = sorted(glob.glob(os.path.join(s, "output_*.pb")),
                      key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
        for i, p in enumerate(outs):
            _, want = load_tensor(p)
            name = out_names[i] if i < len(out_names) else f"output{i}"
            cands = [os.path.join(outdir, f"{name}.npy"),
                     os.path.join(outdir, f"output{i}.npy")]
            path = next((c for c in cands if os.path.exists(c)), None)
            if path is None:
                return "fail", f"no output file for '{name}'"
            got = np.load(path)
            if got.shape != want.shape:
                if got.size == want.size:
                    got = got.reshape(want.shape)
                else:
                    return "fail", f"'{name}': shape {got.shape}, " \
                                   f"expected {want.shape}"
            nan = np.isnan(want)
            if not np.array_equal(nan, np.isnan(got)):
                return "fail", f"'{name}': NaN where the expected has none " \
                               "(or the reverse)"
            got, want = got[~nan], want[~nan]
            err = rel_l2(got, want)
            worst = max(worst, err)
            close = np.allclose(got, want, rtol=1e-3, atol=1e-7)
            if not (err <= 1e-5 or close):
                return "fail", f"'{name}': rel-L2 {err:.3g}"
    return "pass", f"rel-L2 {worst:.2g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("seam_run")
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--table", help="write the per-op table (markdown)")
    ap.add_argument("--json", help="write every test's outcome")
    ap.add_argument("--only", help="tests whose name contains this")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--min-pass", type=int, default=0)
    ap.add_argument("--all", action="store_true",
                    help="also run tests with ops seam does not claim")
    a = ap.parse_args()
    if not os.path.isdir(a.data):
        print(f"node_tests: no ONNX test data at {a.data} "
              "(apt-get install libonnx-testdata)", file=sys.stderr)
        return 1
    tests = []
    for suite in SUITES:
        for d in sorted(glob.glob(os.path.join(a.data, suite, "*"))):
            if not os.path.exists(os.path.join(d, "model.onnx")):
                continue
            if a.only and a.only not in d:
                continue
            tests.append((suite, d))
    per_op = collections.defaultdict(lambda: collections.Counter())
    results = []
    todo = []
    for suite, d in tests:
        model = onnx.load(os.path.join(d, "model.onnx"))
        ops = sorted({n.op_type for n in model.graph.node})
        claimed = all(o in CLAIMED for o in ops)
        for o in ops:
            per_op[o]["tests"] += 1
        why = dtype_problem(model)
        if why and claimed:
            for o in ops:
                per_op[o]["dtype"] += 1
            results.append({"test": f"{suite}/{os.path.basename(d)}",
                            "ops": ops, "status": "skipped-dtype",
                            "detail": why})
        elif claimed or a.all:
            todo.append((suite, d, ops, claimed))
        else:
            results.append({"test": f"{suite}/{os.path.basename(d)}",
                            "ops": ops, "status": "skipped"})
    with tempfile.TemporaryDirectory(prefix="seam-onnx-") as tmp:
        def job(i_item):
            i, (suite, d, ops, claimed) = i_item
            w = os.path.join(tmp, str(i))
            os.makedirs(w)
            try:
                st, detail = run_test(a.seam_run, d, w)
            except subprocess.TimeoutExpired:
                st, detail = "error", "timed out"
            except Exception as e:  # test data this script cannot read
                st, detail = "error", f"test data: {type(e).__name__}: {e}"
            return {"test": f"{suite}/{os.path.basename(d)}", "ops": ops,
                    "status": st, "detail": detail, "claimed": claimed}
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            for r in ex.map(job, enumerate(todo)):
                results.append(r)
                for o in r["ops"]:
                    per_op[o]["run"] += 1
                    per_op[o]["passed"] += r["status"] == "pass"
    for r in results:
        if r["test"] in EXPECTED_FAIL and r["status"] in ("fail", "error"):
            r["status"] = "expected-fail"
            r["detail"] += f" (known: {EXPECTED_FAIL[r['test']]})"
        elif r["test"] in EXPECTED_FAIL and r["status"] == "pass":
            r["status"] = "unexpected-pass"
            r["detail"] = "listed in EXPECTED_FAIL but passes: remove it"
    failed = [r for r in results
              if r.get("claimed") and r["status"] in ("fail", "error",
                                                      "unexpected-pass")]
    known = sum(r["status"] == "expected-fail" for r in results)
    passed = sum(r["status"] == "pass" for r in results)
    ran = sum(not r["status"].startswith("skipped") for r in results)
    dtype = sum(r["status"] == "skipped-dtype" for r in results)
    for r in results:
        if r["status"] in ("fail", "error", "unexpected-pass",
                           "expected-fail"):
            print(f"{r['status'].upper()}: {r['test']} ({', '.join(r['ops'])})"
                  f": {r['detail']}")
    print(f"node tests: {passed} passed of {ran} run; not run: "
          f"{len(results) - ran - dtype} with an op seam does not claim, "
          f"{dtype} with a dtype seam's steps do not take (not float32); "
          f"{known} known failure(s) (EXPECTED_FAIL); "
          f"{len(failed)} other failure(s) of claimed ops")
    if a.table:
        with open(a.table, "w") as f:
            f.write("| ONNX op | seam | node tests passed / run | not run: "
                    "not float32 | suite tests using the op |\n"
                    "|---|---|---|---|---|\n")
            for o in sorted(per_op):
                c = per_op[o]
                status = ("supported" if o in CLAIMED and o not in PARTIAL
                          else f"partial: {PARTIAL[o]}" if o in PARTIAL
                          else "not supported")
                f.write(f"| {o} | {status} | {c['passed']} / {c['run']} | "
                        f"{c['dtype']} | {c['tests']} |\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if failed or passed < a.min_pass:
        if passed < a.min_pass:
            print(f"node tests: {passed} passed, fewer than {a.min_pass}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
