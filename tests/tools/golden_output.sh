#!/bin/sh
# A tool's report against its expected one: runs COMMAND... (a python3
# script and its arguments) and compares what it prints with
# tests/tools/NAME.out; SCHEDLAB_UPDATE_GOLDEN=1 rewrites that file.
# Needs python3, which the build does not: skipped (77) without it.
#
#   golden_output.sh SOURCE_DIR NAME COMMAND...
set -eu
src=$1 name=$2
shift 2
command -v python3 > /dev/null || exit 77
out="${TMPDIR:-/tmp}/$name.$$"
"$@" > "$out"
if [ "${SCHEDLAB_UPDATE_GOLDEN:-}" = 1 ]; then cp "$out" "$src/tests/tools/$name.out"; fi
status=0
diff -u "$src/tests/tools/$name.out" "$out" || status=1
rm -f "$out"
exit $status
