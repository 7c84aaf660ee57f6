#!/usr/bin/env bash
# Runs clang-tidy-19 (.clang-tidy at the root; tools/setup-debian.sh installs
# it) over the C++ translation units of the build's compile_commands.json, in
# parallel, and fails on any finding. Needs a configured and built build
# directory (the mlir-tblgen *.inc files are included by the sources).
#
#   tools/check-tidy.sh --all       every translation unit of the tree (CI)
#   tools/check-tidy.sh             the files changed since the merge base
#                                   with main, committed or not
#   tools/check-tidy.sh FILE...     these files (.cpp, or a .h: the .cpp files
#                                   that include it, from ninja's deps log)
#
# Options: --build DIR (default: build, or $BUILD), -j N (default: nproc),
# --fix (apply clang-tidy's fixes; review them).
#
# The whole tree: 138 translation units at up to ~13 CPU-seconds each (the
# MLIR-heavy ones; nearly all of it is parsing MLIR's headers), so at most
# ~30 CPU-minutes, ~15 minutes on CI's two cores: .ci/run checks it all.
#
# Files listed in .clang-tidy-ignore (one path per line, # comments) are not
# checked, nor are findings in them reported when a header of that list is
# included elsewhere: they are being rewritten, and are fixed and taken off
# the list when that work lands. The list is meant to become empty.
set -euo pipefail
cd "$(dirname "$0")/.."
CT=${CLANG_TIDY:-clang-tidy-19}
build=${BUILD:-build}
jobs=$(nproc)
mode=changed
fix=()
files=()
while [ $# -gt 0 ]; do
  case "$1" in
  --all) mode=all ;;
  --fix) fix=(--fix) ;;
  --build) build=$2; shift ;;
  -j) jobs=$2; shift ;;
  -*) echo "check-tidy: unknown option $1" >&2; exit 2 ;;
  *) mode=files; files+=("$1") ;;
  esac
  shift
done
db=$build/compile_commands.json
if [ ! -f "$db" ]; then
  echo "check-tidy: $db not found: configure and build first (make build)" >&2
  exit 2
fi
command -v "$CT" >/dev/null || {
  echo "check-tidy: $CT not found: run tools/setup-debian.sh" >&2
  exit 2
}

# The ignore list, as paths relative to the root.
ignored=()
if [ -f .clang-tidy-ignore ]; then
  mapfile -t ignored < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' .clang-tidy-ignore | grep -v '^$' || true)
fi

# Translation units of ours in the compilation database (relative paths).
root=$(pwd)
mapfile -t tus < <(/usr/bin/python3 - "$db" "$root" <<'EOF'
import json, os, sys
db, root = sys.argv[1], sys.argv[2]
seen = set()
for e in json.load(open(db)):
    f = os.path.normpath(os.path.join(e["directory"], e["file"]))
    if f.startswith(root + "/") and f not in seen:
        seen.add(f)
        print(os.path.relpath(f, root))
EOF
)

# The .cpp files that include header $1 (ninja's dependency log).
includers() {
  ninja -C "$build" -t deps 2>/dev/null | /usr/bin/python3 -c '
import os, sys
hdr = os.path.realpath(sys.argv[1]); root = sys.argv[2]; build = sys.argv[3]
src = None
for line in sys.stdin:
    if not line.startswith(" "):
        src = None
        continue
    p = line.strip()
    if not os.path.isabs(p):
        p = os.path.join(build, p)
    p = os.path.realpath(p)
    if p.endswith((".cpp", ".cc")):
        src = p
    elif p == hdr and src:
        print(os.path.relpath(src, root))
' "$1" "$root" "$(realpath "$build")" | sort -u
}

select_from() { # paths changed or named -> translation units
  local f
  for f in "$@"; do
    case "$f" in
    *.cpp) printf '%s\n' "$f" ;;
    *.h | *.def | *.inc) includers "$f" ;;
    esac
  done
}

case $mode in
all) want=("${tus[@]}") ;;
files) mapfile -t want < <(select_from "${files[@]}") ;;
changed)
  base=$(git merge-base HEAD main 2>/dev/null || git merge-base HEAD origin/main 2>/dev/null || true)
  if [ -z "$base" ]; then
    echo "check-tidy: no branch main to compare with: checking the whole tree"
    want=("${tus[@]}")
  else
    mapfile -t changed < <(git diff --name-only "$base" -- '*.cpp' '*.h' '*.def')
    echo "check-tidy: ${#changed[@]} C++ files changed since $(git rev-parse --short "$base") (merge base with main)"
    mapfile -t want < <(select_from "${changed[@]}")
  fi
  ;;
esac

# Keep translation units of the database, minus the ignore list.
is_ignored() {
  local p
  for p in "${ignored[@]}"; do
    # shellcheck disable=SC2053  # $p is a glob on purpose
    [[ $1 == $p ]] && return 0
  done
  return 1
}
declare -A intree=() dup=()
for f in "${tus[@]}"; do intree[$f]=1; done
run=()
for f in "${want[@]}"; do
  [ -n "${intree[$f]:-}" ] && [ -z "${dup[$f]:-}" ] || continue
  dup[$f]=1
  is_ignored "$f" || run+=("$f")
done

# Findings in an ignored header are not reported through its includers
# (the globs of the list as one regular expression).
exclude='^$'
for p in "${ignored[@]}"; do
  re=$(printf '%s' "$p" | sed -e 's/[.+^$()|{}]/\\&/g' -e 's/\*/[^\/]*/g' -e 's/?/[^\/]/g')
  exclude="$exclude|^$root/$re\$"
done

if [ ${#run[@]} -eq 0 ]; then
  echo "check-tidy: nothing to check"
  exit 0
fi
echo "check-tidy: ${#run[@]} translation units, $jobs jobs"
start=$(date +%s)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
printf '%s\n' "${run[@]}" | xargs -P "$jobs" -I{} sh -c '
  "$0" -p "$1" --quiet --header-filter=".*\\.h\$" --exclude-header-filter="$2" $3 "$4" \
    >"$5/$(echo "$4" | tr / _).log" 2>&1 || echo "$4" >>"$5/failed"' \
  "$CT" "$build" "$exclude" "${fix[*]:-}" {} "$out" || status=1
# One report per finding, even when a header is seen by many translation units.
cat "$out"/*.log | /usr/bin/python3 -c '
import re, sys
seen, block, keep = set(), [], False
def flush():
    if keep: sys.stdout.write("".join(block))
for line in sys.stdin:
    m = re.match(r"(\S+):(\d+):(\d+): (warning|error): .*\[([\w.,-]+)\]$", line)
    if m:
        flush()
        key = m.group(1, 2, 3, 5)
        keep = key not in seen
        seen.add(key)
        block = [line]
    elif re.match(r"\d+ warnings? (and \d+ errors? )?generated|Suppressed|Use -header-filter|Use -system-headers", line):
        continue
    else:
        block.append(line)
flush()
print(f"check-tidy: {len(seen)} findings", file=sys.stderr)
'
[ -f "$out/failed" ] && status=1
echo "check-tidy: $(($(date +%s) - start)) s"
if [ $status -ne 0 ]; then
  echo "check-tidy: findings in: $(sort "$out/failed" 2>/dev/null | tr '\n' ' ')" >&2
  exit 1
fi
echo "check-tidy: clean"
