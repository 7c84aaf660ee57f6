#!/usr/bin/env bash
# The main job (`make demo`): rebuild every published table beside the
# published figures on the bundled models, with plots, under results/.
set -euo pipefail
build=${1:-build}
out=${SEAM_RESULTS:-results}
# Debian's python3 (numpy, matplotlib from apt), not whatever python3 is first
# on PATH.
/usr/bin/python3 bench/reproduce.py --build "$build" --out "$out"
# ONNX import: conformance on ONNX's node tests, the PyTorch clients.
/usr/bin/python3 bench/onnx_report.py "$build" "$out"
