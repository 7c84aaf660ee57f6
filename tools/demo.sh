#!/usr/bin/env bash
# The main job (`make demo`): import the bundled models and compile them
# through the graph pipeline in eager and compile mode, with and without
# kernels, printing the report of each. Later stages (emulated runs, the
# published tables) extend this script.
set -euo pipefail
build=${1:-build}
bin="$build/bin"
out=${SEAM_RESULTS:-results}
mkdir -p "$out"

run() { # model import-flags mode kernels
  local model=$1 flags=$2 mode=$3 kernels=$4
  echo "== $model ($flags) mode=$mode kernels=${kernels:-none}"
  "$bin/seam-import" --model "$model" $flags \
    | "$bin/seam-opt" --seam-pipeline="mode=$mode kernels=$kernels" \
        -seam-report -o "$out/$model.$mode.${kernels:-vanilla}.mlir" 2>&1 \
    | grep -v "remark:" || true
}

for mode in eager compile; do
  for k in "" qkv flash-attn qkv,flash-attn; do
    run flux2-klein "--tp 4" "$mode" "$k"
  done
done
echo "== flux2-klein --tp 4, kernels=rope: where the published RoPE kernel applies"
"$bin/seam-import" --model flux2-klein --tp 4 \
  | "$bin/seam-opt" --seam-insert-kernels=kernels=rope -o /dev/null 2>&1 \
  | grep -E "kernel 'rope'" | sed -E 's/^[^:]*:[0-9]+:[0-9]+: remark: //' | sort | uniq -c
for k in "" fourier-mix; do run fnet-base "" compile "$k"; done
for k in "" fftconv; do run hyena "" compile "$k"; done
echo "IR written to $out/"
