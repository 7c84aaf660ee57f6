#!/usr/bin/env bash
# Installs what seam needs from Debian's packages, and nothing from anywhere else.
# Idempotent: packages already installed are skipped; apt is only touched when
# something is missing.
#
#   tools/setup-debian.sh            the packages the build and tests need
#   tools/setup-debian.sh PKG...     exactly these (tools/fuzz.sh: clang-19 ...)
set -euo pipefail
pkgs=(llvm-19-dev libmlir-19-dev mlir-19-tools cmake ninja-build g++ make
      libgtest-dev libbenchmark-dev libeigen3-dev python3 python3-numpy
      python3-matplotlib python3-dask python3-distributed clang-format-19
      clang-tidy-19
      libmimalloc-dev libonnx-dev libprotobuf-dev libonnx-testdata python3-onnx)
[ $# -gt 0 ] && pkgs=("$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
