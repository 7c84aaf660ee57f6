#!/usr/bin/python3
"""The main job's ONNX section: ONNX's node tests per op (the conformance
table) and the PyTorch clients against torch, appended to the report.

  onnx_report.py BUILD OUT
"""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
src = os.path.dirname(here)


def main():
    build, out = sys.argv[1], sys.argv[2]
    bindir = os.path.join(build, "bin")
    table = os.path.join(out, "onnx-ops.md")
    node = subprocess.run(
        ["/usr/bin/python3", os.path.join(src, "tests/onnx/node_tests.py"),
         os.path.join(bindir, "seam-run"), "--table", table],
        capture_output=True, text=True)
    summary = [l for l in node.stdout.splitlines()
               if l.startswith("node tests:")]
    torch = subprocess.run(
        ["/usr/bin/python3", os.path.join(src, "tests/onnx/torch_clients.py"),
         "check", bindir, os.path.join(src, "tests/onnx/torch")],
        capture_output=True, text=True)
    with open(table) as f:
        ops = f.read()
    text = ["", "## ONNX import: ONNX's node tests and PyTorch clients", ""]
    text += [f"- {s}" for s in summary]
    text += ["- PyTorch clients (torch 1.13 exports, opset 13), seam-run "
             "--functional against torch's output (fp32, pass at rel-L2 <= "
             "1e-4 with no op left on the host):"]
    text += [f"  - {l}" for l in torch.stdout.splitlines()]
    text += ["", ops]
    report = os.path.join(out, "report.md")
    with open(report, "a") as f:
        f.write("\n".join(text) + "\n")
    print("\n".join(text))
    return node.returncode or torch.returncode


if __name__ == "__main__":
    sys.exit(main())
