#!/usr/bin/env bash
# Formats the tracked C++ sources (src, tests, bench) with clang-format and the repository's
# .clang-format:
#   scripts/format.sh            # rewrites the files in place
#   scripts/format.sh --check    # changes nothing; lists what is not formatted and fails if any
# CLANG_FORMAT overrides the program (default: clang-format, version 14 as in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format}
check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac
command -v "$clang_format" >/dev/null || { echo "format.sh: $clang_format not found (apt-get install clang-format)" >&2; exit 1; }

mapfile -t files < <(git ls-files -- 'src/*.[ch]pp' 'tests/*.[ch]pp' 'bench/*.[ch]pp')
if ((check)); then
  # --dry-run prints one warning per place that would change; -Werror makes them fail.
  report=$(mktemp)
  trap 'rm -f "$report"' EXIT
  if ! printf '%s\0' "${files[@]}" | xargs -0 -n 50 "$clang_format" --dry-run -Werror 2>"$report"; then
    grep -o '^[^:]*:[0-9]*:[0-9]*: error' "$report" | cut -d: -f1 | sort -u | sed 's/^/not formatted: /'
    echo "format.sh: run scripts/format.sh to format these files" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted"
else
  printf '%s\0' "${files[@]}" | xargs -0 -n 50 "$clang_format" -i
  echo "format.sh: formatted ${#files[@]} files"
fi
