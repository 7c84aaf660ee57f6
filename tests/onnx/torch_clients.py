#!/usr/bin/python3
"""PyTorch clients: real torch modules exported to ONNX and run by seam.

  torch_clients.py export OUTDIR      (needs python3-torch) writes, per
                                      client, NAME.onnx, NAME.x.npy (the
                                      input) and NAME.y.npy (torch's output)
  torch_clients.py check SEAM_BIN DIR runs each model through seam-run
                                      --functional, compares with torch's
                                      output (fp32 rel-L2 <= 1e-4) and prints
                                      which fusions fired and what is left on
                                      the host

The exported models are committed (tests/onnx/torch/), so CI needs no torch;
`export` regenerates them where torch is installed. The clients:
  encoder  nn.TransformerEncoderLayer (d 128, 2 heads, GELU, post-norm),
           eval, batch_first, as torch 1.13 exports it at opset 13
  llama    a Llama-style block: RMSNorm, rotate-half RoPE, attention,
           SwiGLU MLP
  flux_mlp a Flux-style MLP: linear, tanh-GELU, linear
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

S, D, H = 128, 128, 2
CLIENTS = ["encoder", "llama", "flux_mlp"]


def build(name):
    import torch
    from torch import nn
    torch.manual_seed(0)
    if name == "encoder":
        return nn.TransformerEncoderLayer(D, H, dim_feedforward=4 * D,
                                          dropout=0.0, activation="gelu",
                                          batch_first=True).eval()
    if name == "flux_mlp":
        return nn.Sequential(nn.Linear(D, 4 * D),
                             nn.GELU(approximate="tanh"),
                             nn.Linear(4 * D, D)).eval()

    class RMSNorm(nn.Module):
        def __init__(self, d, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(1 + 0.1 * torch.randn(d))

        def forward(self, x):
            r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
            return x * r * self.weight

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            hd = D // H
            self.norm1, self.norm2 = RMSNorm(D), RMSNorm(D)
            self.q = nn.Linear(D, D, bias=False)
            self.k = nn.Linear(D, D, bias=False)
            self.v = nn.Linear(D, D, bias=False)
            self.o = nn.Linear(D, D, bias=False)
            self.gate = nn.Linear(D, 3 * D, bias=False)
            self.up = nn.Linear(D, 3 * D, bias=False)
            self.down = nn.Linear(3 * D, D, bias=False)
            inv = 10000.0 ** (-torch.arange(0, hd, 2).float() / hd)
            ang = torch.arange(S).float()[:, None] * inv[None, :]
            ang = torch.cat([ang, ang], -1)
            self.register_buffer("cos", ang.cos())
            self.register_buffer("sin", ang.sin())

        def rope(self, x):
            half = x.shape[-1] // 2
            rot = torch.cat([-x[..., half:], x[..., :half]], -1)
            return x * self.cos + rot * self.sin

        def forward(self, x):
            b = x.shape[0]
            h = self.norm1(x)

            def heads(t):
                return t.view(b, S, H, D // H).transpose(1, 2)
            q = self.rope(heads(self.q(h)))
            k = self.rope(heads(self.k(h)))
            v = heads(self.v(h))
            s = q @ k.transpose(-2, -1) / (D // H) ** 0.5
            a = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, S, D)
            x = x + self.o(a)
            h = self.norm2(x)
            return x + self.down(nn.functional.silu(self.gate(h)) *
                                 self.up(h))
    return Llama().eval()


def export(outdir):
    import torch
    os.makedirs(outdir, exist_ok=True)
    for name in CLIENTS:
        m = build(name)
        x = torch.randn(1, S, D, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            y = m(x)
        torch.onnx.export(m, (x,), os.path.join(outdir, name + ".onnx"),
                          input_names=["x"], output_names=["y"],
                          opset_version=13, do_constant_folding=True)
        np.save(os.path.join(outdir, name + ".x.npy"), x.numpy())
        np.save(os.path.join(outdir, name + ".y.npy"), y.numpy())
        print(f"exported {name}")


def check(seam_bin, d):
    seam_run = os.path.join(seam_bin, "seam-run")
    seam_import = os.path.join(seam_bin, "seam-import")
    seam_opt = os.path.join(seam_bin, "seam-opt")
    bad = 0
    with tempfile.TemporaryDirectory(prefix="seam-torch-") as tmp:
        for name in CLIENTS:
            model = os.path.join(d, name + ".onnx")
            mlir = os.path.join(tmp, name + ".mlir")
            subprocess.run([seam_import, model, "-o", mlir], check=True)
            r = subprocess.run([seam_opt, mlir, "-seam-pipeline", "-o",
                                os.devnull], capture_output=True, text=True)
            fired = {}
            for m in re.finditer(r"seam-recognize: (.*?) recognised as "
                                 r"(a packed QKV|\w+)", r.stderr):
                kind = "packed qkv" if m.group(2).startswith("a ") \
                    else m.group(2)
                fired[kind] = fired.get(kind, 0) + 1
            host = re.findall(r"seam-place-on-host: (seam\.\w+)", r.stderr)
            out = os.path.join(tmp, name)
            r = subprocess.run([seam_run, model, "--functional", "--steps", "1",
                                "--runs", "1", "--quiet", "--input",
                                "x=" + os.path.join(d, name + ".x.npy"),
                                "--output-dir", out],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{name}: seam-run failed: {r.stderr.strip()}")
                bad += 1
                continue
            files = sorted(f for f in os.listdir(out) if f.endswith(".npy"))
            got = np.load(os.path.join(out, "y.npy" if "y.npy" in files
                                       else files[0]))
            want = np.load(os.path.join(d, name + ".y.npy"))
            err = float(np.linalg.norm(got.astype(np.float64) - want) /
                        np.linalg.norm(want))
            # Every op recognised: nothing may be left on the host.
            ok = err <= 1e-4 and not host
            bad += not ok
            fusions = ", ".join(f"{v} {k}" for k, v in sorted(fired.items()))
            hosts = ", ".join(sorted(set(host))) or "none"
            print(f"{name}: rel-L2 vs torch {err:.2e} "
                  f"{'PASS' if ok else 'FAIL'}; recognised: {fusions or 'none'}"
                  f"; on the host: {hosts}")
    return 1 if bad else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "export":
        export(sys.argv[2])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
