#!/usr/bin/env bash
# Checks that the C++ sources follow .clang-format (clang-format-19, from
# Debian: tools/setup-debian.sh installs it). Files listed in
# .clang-format-ignore are skipped (formatted when next edited, then removed
# from that list). `tools/check-format.sh --fix` formats them in place.
set -euo pipefail
cd "$(dirname "$0")/.."
CF=${CLANG_FORMAT:-clang-format-19}
mode=(--dry-run --Werror)
[ "${1:-}" = "--fix" ] && mode=(-i)
mapfile -t files < <(git ls-files '*.h' '*.cpp')
"$CF" "${mode[@]}" "${files[@]}"
echo "check-format: ${#files[@]} files checked (.clang-format-ignore lists the exceptions)"
