#!/usr/bin/env bash
# Runs seam's libFuzzer targets (tests/fuzz) for a while.
#
#   tools/fuzz.sh [--build DIR] [--only NAME] [--jobs N] [SECONDS]
#
# SECONDS (default 60) is the total, split evenly over the targets
# (program-loader, import-config, import-onnx, mlir-pipeline); with --only NAME one target
# gets all of it. clang-19 and libclang-rt-19-dev (libFuzzer) are installed
# from Debian if missing. The build (default build-fuzz, the `fuzz` preset:
# clang-19, ASan+UBSan+libFuzzer) is configured and built first if needed.
# Each target starts from its kept corpus (tests/fuzz/corpus/NAME and
# regressions/NAME, read-only) plus a working corpus in DIR/fuzz-work/NAME that
# grows across runs. A crash leaves its input in DIR/fuzz-work/NAME-artifacts/
# and makes the script exit non-zero; keep such an input in
# tests/fuzz/regressions/NAME once it is fixed. Prints the executions per
# target.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$src/build-fuzz"
only=""
jobs=1
seconds=60
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) seconds="$1"; shift ;;
  esac
done
targets=(program-loader import-config import-onnx mlir-pipeline)
[ -n "$only" ] && targets=("$only")

# The fuzz preset's compiler and libFuzzer runtime come from Debian; they are
# not among the normal build's packages (it does not need them).
bash "$src/tools/setup-debian.sh" clang-19 libclang-rt-19-dev

if [ ! -f "$build/build.ninja" ]; then
  (cd "$src" && cmake --preset fuzz -B "$build" >/dev/null)
fi
bins=()
for t in "${targets[@]}"; do bins+=("fuzz-$t"); done
ninja -C "$build" -j"$jobs" "${bins[@]}" >/dev/null

per=$(( seconds / ${#targets[@]} ))
[ "$per" -lt 1 ] && per=1
# allow_user_poisoning=0: the LLVM headers compiled into seam poison
# BumpPtrAllocator slabs that the uninstrumented libMLIR then hands out (a
# false use-after-poison); leaks of the MLIR registries at exit are not ours.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
for t in "${targets[@]}"; do
  work="$build/fuzz-work/$t"
  art="$build/fuzz-work/$t-artifacts"
  mkdir -p "$work" "$art"
  log="$build/fuzz-work/$t.log"
  dict=()
  [ -f "$src/tests/fuzz/$t.dict" ] && dict=(-dict="$src/tests/fuzz/$t.dict")
  set +e
  "$build/bin/fuzz-$t" "${dict[@]}" -max_total_time="$per" -timeout=20 -rss_limit_mb=3072 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$art/" \
    "$work" "$src/tests/fuzz/corpus/$t" "$src/tests/fuzz/regressions/$t" \
    >"$log" 2>&1
  rc=$?
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  if [ $rc -ne 0 ]; then
    echo "fuzz $t: FAILED after ${runs:-?} executions ($cov); see $log, input in $art/"
    grep -m3 -E 'ERROR|FINDING|runtime error' "$log" || true
    status=1
  else
    echo "fuzz $t: ${runs:-?} executions in ${per}s, no crash ($cov)"
  fi
done
exit $status
