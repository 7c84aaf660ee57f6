#!/usr/bin/python3
"""A FLUX single-stream block in torch, the same block seam-import builds from
a config: the pair that compares an ONNX import with a config import.

  flux_block.py export DIR [CONFIG]   (needs python3-torch) writes
                                      flux_single.onnx (at the shapes of
                                      DIR/flux_single.json, or of CONFIG,
                                      copied there), its inputs
                                      flux_single.{img,txt,vec}.npy and
                                      torch's output flux_single.y.npy
  flux_block.py check SEAM_BIN DIR    seam-run --functional on the ONNX
                                      model (without kernels and with
                                      qkv,flash-attn) against torch (fp32
                                      rel-L2 <= 1e-4), and the ops seam-pipeline
                                      leaves for the ONNX import equal to
                                      those of the config import (DIR's
                                      flux_single.json)
  flux_block.py roofline SEAM_BIN DIR the roofline fraction (seam-run --json,
                                      trn2, compile mode) of both imports and
                                      their ratio (exit 1 outside 0.95 ..
                                      1.05); --kernels K runs with kernels
                                      K; --markdown for the report

The module is tools/seam-import/Flux.cpp's single-stream block at the shapes
of DIR/flux_single.json (num_layers 0, num_single_layers 1, float32), in
diffusers' order (FluxSingleTransformerBlock, FluxAttnProcessor): the
streams concatenated (text first); adaLN-Zero-single modulation (silu(vec)
-> linear -> shift, scale, gate; norm(x) * (1 + scale) + shift); the
tanh-GELU MLP; q / k / v projections split into heads, then qk RMSNorm,
then rotate-half RoPE; explicit softmax attention (torch 1.13 has no
scaled_dot_product_attention); proj_out over the concatenation of attention
and MLP; x + gate * proj_out. Random weights (the config import draws its
own). Exported at opset 13, so the layer norm and every fused op arrive as
primitives that seam-recognize has to put back together. The committed
model (tests/onnx/torch/) keeps CI free of torch.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

NAME = "flux_single"
INPUTS = ["img", "txt", "vec"]


def config(d):
    with open(os.path.join(d, NAME + ".json")) as f:
        return json.load(f)


def build(cfg):
    import torch
    from torch import nn
    torch.manual_seed(0)
    H, hd = cfg["num_attention_heads"], cfg["attention_head_dim"]
    D = H * hd
    M = int(round(D * cfg["mlp_ratio"]))
    S = cfg["img_seq"] + cfg["txt_seq"]
    eps, theta = cfg["eps"], cfg["rope_theta"]

    class RMSNorm(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight = nn.Parameter(1 + 0.1 * torch.randn(n))

        def forward(self, x):
            r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
            return x * r * self.weight

    class SingleStream(nn.Module):
        def __init__(self):
            super().__init__()
            self.silu = nn.SiLU()
            self.linear = nn.Linear(D, 3 * D, bias=False)  # norm.linear
            self.norm = nn.LayerNorm(D, eps=eps, elementwise_affine=False)
            self.to_q = nn.Linear(D, D, bias=False)
            self.to_k = nn.Linear(D, D, bias=False)
            self.to_v = nn.Linear(D, D, bias=False)
            self.norm_q, self.norm_k = RMSNorm(hd), RMSNorm(hd)
            self.proj_mlp = nn.Linear(D, M, bias=False)
            self.act_mlp = nn.GELU(approximate="tanh")
            self.proj_out = nn.Linear(D + M, D, bias=False)
            # Rotate-half tables over the joint sequence, as seam's
            # rope_cos / rope_sin params: angle(s, i) = s * theta^(-2i/hd).
            inv = theta ** (-torch.arange(0, hd, 2).double() / hd)
            ang = torch.arange(S).double()[:, None] * inv[None, :]
            ang = torch.cat([ang, ang], -1)
            self.register_buffer("cos", ang.cos().float())
            self.register_buffer("sin", ang.sin().float())

        def rope(self, x):
            half = x.shape[-1] // 2
            rot = torch.cat([-x[..., half:], x[..., :half]], -1)
            return x * self.cos + rot * self.sin

        def forward(self, img, txt, vec):
            x = torch.cat([txt, img], 1)
            b = x.shape[0]
            emb = self.linear(self.silu(vec))
            shift, scale, gate = emb.chunk(3, dim=1)
            h = self.norm(x) * (1 + scale[:, None]) + shift[:, None]
            mlp = self.act_mlp(self.proj_mlp(h))

            def heads(t):
                return t.view(b, S, H, hd).transpose(1, 2)
            # diffusers' FluxAttnProcessor order: project, split heads,
            # then the qk norms, then rope.
            q = heads(self.to_q(h))
            k = heads(self.to_k(h))
            v = heads(self.to_v(h))
            q, k = self.norm_q(q), self.norm_k(k)
            q, k = self.rope(q), self.rope(k)
            s = q @ k.transpose(-2, -1) / hd ** 0.5
            a = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, S, D)
            out = self.proj_out(torch.cat([a, mlp], 2))
            return x + gate[:, None] * out
    return SingleStream().eval()


def export(d, cfg_path=None):
    """Exports the block at DIR/flux_single.json's shapes (or CONFIG's,
    copied to DIR/flux_single.json)."""
    import torch
    if cfg_path:
        os.makedirs(d, exist_ok=True)
        with open(cfg_path) as f:
            text = f.read()
        with open(os.path.join(d, NAME + ".json"), "w") as f:
            f.write(text)
    cfg = config(d)
    m = build(cfg)
    D = cfg["num_attention_heads"] * cfg["attention_head_dim"]
    g = torch.Generator().manual_seed(1)
    args = (torch.randn(1, cfg["img_seq"], D, generator=g),
            torch.randn(1, cfg["txt_seq"], D, generator=g),
            torch.randn(1, D, generator=g))
    with torch.no_grad():
        y = m(*args)
    torch.onnx.export(m, args, os.path.join(d, NAME + ".onnx"),
                      input_names=INPUTS, output_names=["joint"],
                      opset_version=13, do_constant_folding=True)
    for n, a in zip(INPUTS, args):
        np.save(os.path.join(d, f"{NAME}.{n}.npy"), a.numpy())
    np.save(os.path.join(d, NAME + ".y.npy"), y.numpy())
    print(f"exported {NAME}")


def tools(seam_bin):
    return {t: os.path.join(seam_bin, t)
            for t in ["seam-run", "seam-import", "seam-opt"]}


# Attributes that say what a fused op does; names, locations, values, the
# parameters' seeds and initialisers do not.
ATTRS = ["activation", "scale_offset", "seam.fused_qkv", "causal", "rope",
         "scale", "bias", "dim", "perm", "offsets", "axes"]
OP = re.compile(r"^\s*(?:%[\w#:]+(?:, %[\w#:]+)* = )?seam\.(\w+)\b(.*)$")


def fused_ops(t, model, tmp, tag):
    """Every seam op seam-pipeline leaves (parameters, the outlined
    programs' ops) as 'op{attrs} : result type' entries, sorted: what the
    device runs, on what shapes. Returns (ops, stderr of the pipeline)."""
    mlir = os.path.join(tmp, tag + ".mlir")
    out = os.path.join(tmp, tag + ".fused.mlir")
    subprocess.run([t["seam-import"]] + model + ["-o", mlir], check=True)
    r = subprocess.run([t["seam-opt"], mlir, "-seam-pipeline",
                        "-mlir-elide-elementsattrs-if-larger=1",
                        "-mlir-elide-resource-strings-if-larger=1",
                        "-o", out], capture_output=True, text=True,
                       check=True)
    ops = []
    with open(out) as f:
        for line in f:
            m = OP.match(line)
            if not m:
                continue
            name, rest = m.group(1), m.group(2)
            # The text before the type: attributes and operand keywords
            # (`scale %g`, `rope(...)`), not a parameter's name or value.
            body = re.sub(r'"[^"]*"', "", rest.rsplit(" : ", 1)[0])
            if name == "param":
                body = ""
            attrs = [a for a in ATTRS
                     if re.search(r"(?<![\w.])%s\b" % re.escape(a), body)]
            result = rest.rsplit("->", 1)[-1] if "->" in rest else \
                rest.rsplit(" : ", 1)[-1]
            ops.append(name + ("{" + ",".join(attrs) + "}" if attrs else "")
                       + " : " + result.strip())
    return sorted(ops), r.stderr


def check(seam_bin, d):
    t = tools(seam_bin)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="seam-flux-block-") as tmp:
        model = os.path.join(d, NAME + ".onnx")
        for kernels in ["", "qkv,flash-attn"]:
            out = os.path.join(tmp, "out" + kernels.replace(",", "-"))
            cmd = [t["seam-run"], model, "--functional", "--steps", "1",
                   "--runs", "1", "--quiet", "--output-dir", out]
            cmd += ["--kernels", kernels] if kernels else []
            for n in INPUTS:
                cmd += ["--input",
                        f"{n}={os.path.join(d, f'{NAME}.{n}.npy')}"]
            what = f"{NAME}" + (f" --kernels {kernels}" if kernels else "")
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{what}: seam-run failed: {r.stderr.strip()}")
                bad += 1
                continue
            got = np.load(os.path.join(out, "joint.npy")).astype(np.float64)
            want = np.load(os.path.join(d, NAME + ".y.npy")).astype(
                np.float64)
            err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
            ok = err <= 1e-4
            bad += not ok
            print(f"{what}: rel-L2 vs torch {err:.2e} "
                  f"{'PASS' if ok else 'FAIL'} (<= 1e-4)")
        onnx_ops, stderr = fused_ops(t, [model], tmp, "onnx")
        cfg_ops, _ = fused_ops(t, ["--config", os.path.join(d, NAME + ".json")],
                               tmp, "config")
        host = re.findall(r"seam-place-on-host: (seam\.\w+)", stderr)

        def histogram(ops):
            h = {}
            for o in ops:
                h[o] = h.get(o, 0) + 1
            return h
        ho, hc = histogram(onnx_ops), histogram(cfg_ops)
        same = ho == hc and not host
        bad += not same
        print(f"{NAME}: ops after seam-pipeline, ONNX import vs config "
              f"import: {'SAME' if same else 'DIFFERENT'}")
        kinds = {}
        for k in sorted(set(ho) | set(hc)):
            op = k.split(" : ")[0]
            a, c = kinds.get(op, (0, 0))
            kinds[op] = (a + ho.get(k, 0), c + hc.get(k, 0))
            if ho.get(k, 0) != hc.get(k, 0):
                print(f"  differs: {k}: onnx {ho.get(k, 0)}, config "
                      f"{hc.get(k, 0)}")
        print("  " + ", ".join(f"{v[0]} {k}" if v[0] == v[1] else
                               f"{k} onnx {v[0]} / config {v[1]}"
                               for k, v in sorted(kinds.items())))
        if host:
            print(f"  left on the host (ONNX import): "
                  f"{', '.join(sorted(set(host)))}")
    return 1 if bad else 0


def roofline(seam_bin, d, markdown=False, kernels=None):
    """seam-run --json of both imports (trn2, compile mode, tp 1, fp32,
    with `kernels` when given): the step's floor over the warm step
    (fraction), and over the step's device time (device fraction)."""
    t = tools(seam_bin)
    rows = []
    with tempfile.TemporaryDirectory(prefix="seam-flux-roof-") as tmp:
        for tag, model in [("config", ["--config", os.path.join(
                d, NAME + ".json")]),
                           ("onnx", [os.path.join(d, NAME + ".onnx")])]:
            js = os.path.join(tmp, tag + ".json")
            subprocess.run([t["seam-run"]] + model + [
                "--target", "trn2", "--mode", "compile", "--steps", "3",
                "--runs", "1", "--quiet", "--json", js] +
                (["--kernels", kernels] if kernels else []), check=True,
                capture_output=True)
            with open(js) as f:
                j = json.load(f)
            st = j["roofline"]["step"]
            rows.append((tag, j["warm_step_s"], st["floor_s"],
                         st["fraction"], st["device_fraction"], st["bound"],
                         st["host_ops_excluded"]))
    c, o = rows
    ratio = o[3] / c[3]
    dratio = o[4] / c[4]
    if markdown:
        print("| import | warm step ms | floor ms | fraction | device "
              "fraction | bound | host ops |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r[0]} | {r[1] * 1e3:.4f} | {r[2] * 1e3:.4f} | "
                  f"{100 * r[3]:.1f}% | {100 * r[4]:.1f}% | {r[5]} | {r[6]} |")
        print(f"| ONNX / config | | | {ratio:.3f} | {dratio:.3f} | | |")
    else:
        for r in rows:
            print(f"{r[0]}: warm step {r[1] * 1e3:.4f} ms, floor "
                  f"{r[2] * 1e3:.4f} ms, fraction {100 * r[3]:.1f}%, device "
                  f"fraction {100 * r[4]:.1f}%, bound {r[5]}, host ops "
                  f"{r[6]}")
        print(f"ONNX / config: fraction {ratio:.3f}, device fraction "
              f"{dratio:.3f}")
    return 0 if abs(ratio - 1) <= 0.05 else 1


def main():
    a = sys.argv[1:]
    md = "--markdown" in a
    a = [x for x in a if x != "--markdown"]
    kernels = None
    if "--kernels" in a and a.index("--kernels") + 1 < len(a):
        i = a.index("--kernels")
        kernels = a[i + 1]
        a = a[:i] + a[i + 2:]
    if len(a) in (2, 3) and a[0] == "export":
        export(*a[1:])
        return 0
    if len(a) == 3 and a[0] == "check":
        return check(a[1], a[2])
    if len(a) == 3 and a[0] == "roofline":
        return roofline(a[1], a[2], md, kernels)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
