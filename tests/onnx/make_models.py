#!/usr/bin/python3
"""Small ONNX models for seam's import tests, built with onnx.helper.

  make_models.py OUTDIR

Each model exercises one behaviour: a two-layer MLP with torch's exported
GELU (tiny_mlp), a symbolic batch dimension (dynamic), an op seam does not
import (unsupported), an opset outside 6..17 (opset18), an integer graph
input (int_input), external data whose file is missing (external_missing),
and an encoder block as torch 1.13 exports nn.TransformerEncoderLayer's
math in primitives (encoder_block: layer norms expanded, packed in_proj,
head reshapes, softmax attention, Erf-GELU MLP).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def weight(name, shape, scale=0.1):
    return const(name, (rng.standard_normal(shape) * scale).astype(np.float32))


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def save(outdir, name, nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="seam-tests")
    onnx.save(m, os.path.join(outdir, name + ".onnx"))


def gelu(nodes, inits, x, out, p):
    inits += [const(p + ".sqrt2", np.float32(np.sqrt(2.0))),
              const(p + ".one", np.float32(1.0)),
              const(p + ".half", np.float32(0.5))]
    nodes += [helper.make_node("Div", [x, p + ".sqrt2"], [p + ".d"]),
              helper.make_node("Erf", [p + ".d"], [p + ".e"]),
              helper.make_node("Add", [p + ".e", p + ".one"], [p + ".a"]),
              helper.make_node("Mul", [x, p + ".a"], [p + ".m"]),
              helper.make_node("Mul", [p + ".m", p + ".half"], [out])]


def layer_norm_expanded(nodes, inits, x, out, p, d):
    inits += [const(p + ".two", np.float32(2.0)),
              const(p + ".eps", np.float32(1e-5)),
              weight(p + ".weight", [d], 1.0),
              weight(p + ".bias", [d])]
    mean = helper.make_node("ReduceMean", [x], [p + ".mean"], axes=[-1])
    nodes += [mean,
              helper.make_node("Sub", [x, p + ".mean"], [p + ".c"]),
              helper.make_node("Pow", [p + ".c", p + ".two"], [p + ".sq"]),
              helper.make_node("ReduceMean", [p + ".sq"], [p + ".var"],
                               axes=[-1]),
              helper.make_node("Add", [p + ".var", p + ".eps"], [p + ".ve"]),
              helper.make_node("Sqrt", [p + ".ve"], [p + ".sd"]),
              helper.make_node("Div", [p + ".c", p + ".sd"], [p + ".n"]),
              helper.make_node("Mul", [p + ".n", p + ".weight"], [p + ".ng"]),
              helper.make_node("Add", [p + ".ng", p + ".bias"], [out])]


def linear(nodes, inits, x, out, p, k, n):
    inits += [weight(p + ".weight", [k, n]), weight(p + ".bias", [n])]
    nodes += [helper.make_node("MatMul", [x, p + ".weight"], [p + ".mm"]),
              helper.make_node("Add", [p + ".mm", p + ".bias"], [out])]


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    # tiny_mlp: x [2, 8, 16] -> linear 32 -> gelu -> linear 16
    nodes, inits = [], []
    linear(nodes, inits, "x", "h", "fc1", 16, 32)
    gelu(nodes, inits, "h", "g", "act")
    linear(nodes, inits, "g", "y", "fc2", 32, 16)
    save(outdir, "tiny_mlp", nodes, [f32("x", [2, 8, 16])],
         [f32("y", [2, 8, 16])], inits)
    # dynamic: a symbolic batch
    save(outdir, "dynamic", [helper.make_node("Relu", ["x"], ["y"])],
         [f32("x", ["batch", 16])], [f32("y", ["batch", 16])], [])
    # unsupported: Conv
    save(outdir, "unsupported",
         [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")],
         [f32("x", [1, 1, 4, 4])], [f32("y", [1, 1, 4, 4])],
         [weight("w", [1, 1, 1, 1])])
    # opset 18
    save(outdir, "opset18", [helper.make_node("Relu", ["x"], ["y"])],
         [f32("x", [4])], [f32("y", [4])], [], opset=18)
    # an integer input
    save(outdir, "int_input", [helper.make_node("Relu", ["x"], ["y"])],
         [helper.make_tensor_value_info("x", TensorProto.INT64, [4])],
         [f32("y", [4])], [])
    # external data whose file is missing
    w = weight("w", [4, 4])
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "0"),
                 ("length", "64")):
        e = w.external_data.add()
        e.key, e.value = k, v
    save(outdir, "external_missing",
         [helper.make_node("MatMul", ["x", "w"], ["y"])],
         [f32("x", [2, 4])], [f32("y", [2, 4])], [w])
    # encoder_block: post-norm, as nn.TransformerEncoderLayer (gelu) in eval
    s, d, h = 128, 128, 2
    hd = d // h
    nodes, inits = [], []
    linear(nodes, inits, "x", "qkv", "attn.in_proj", d, 3 * d)
    inits += [const("split", np.array([d, d, d], np.int64)),
              const("heads", np.array([1, s, h, hd], np.int64)),
              const("merged", np.array([1, s, d], np.int64)),
              const("scale", np.float32(np.sqrt(hd)))]
    nodes += [helper.make_node("Split", ["qkv", "split"], ["q0", "k0", "v0"],
                               axis=2)]
    for t in ("q", "k", "v"):
        nodes += [helper.make_node("Reshape", [t + "0", "heads"], [t + "1"]),
                  helper.make_node("Transpose", [t + "1"], [t + "h"],
                                   perm=[0, 2, 1, 3])]
    nodes += [helper.make_node("Transpose", ["kh"], ["kt"], perm=[0, 1, 3, 2]),
              helper.make_node("MatMul", ["qh", "kt"], ["scores"]),
              helper.make_node("Div", ["scores", "scale"], ["scaled"]),
              helper.make_node("Softmax", ["scaled"], ["probs"], axis=-1),
              helper.make_node("MatMul", ["probs", "vh"], ["ctx"]),
              helper.make_node("Transpose", ["ctx"], ["ctx1"],
                               perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["ctx1", "merged"], ["ctx2"])]
    linear(nodes, inits, "ctx2", "attn_out", "attn.out_proj", d, d)
    nodes += [helper.make_node("Add", ["x", "attn_out"], ["res1"])]
    layer_norm_expanded(nodes, inits, "res1", "n1", "norm1", d)
    linear(nodes, inits, "n1", "ff1", "linear1", d, 4 * d)
    gelu(nodes, inits, "ff1", "ffg", "act")
    linear(nodes, inits, "ffg", "ff2", "linear2", 4 * d, d)
    nodes += [helper.make_node("Add", ["n1", "ff2"], ["res2"])]
    layer_norm_expanded(nodes, inits, "res2", "y", "norm2", d)
    save(outdir, "encoder_block", nodes, [f32("x", [1, s, d])],
         [f32("y", [1, s, d])], inits, opset=13)


if __name__ == "__main__":
    main(sys.argv[1])
