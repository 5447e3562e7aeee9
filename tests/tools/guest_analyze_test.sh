#!/bin/sh
# tools/guest/analyze.py on a trimmed serial log of a real guest boot (6.1,
# CFS, under QEMU; stop 62): an unsampled run and a sampled one, against the
# expected lines. Needs python3, which the build does not: skipped (77)
# without it.
set -eu
src=$1
command -v python3 > /dev/null || exit 77
python3 "$src/tools/guest/analyze.py" "$src/tests/tools/guest_serial_cfs61.log" > "${TMPDIR:-/tmp}/guest_analyze.$$"
if [ "${SCHEDLAB_UPDATE_GOLDEN:-}" = 1 ]; then
  cp "${TMPDIR:-/tmp}/guest_analyze.$$" "$src/tests/tools/guest_analyze.out"
fi
diff -u "$src/tests/tools/guest_analyze.out" "${TMPDIR:-/tmp}/guest_analyze.$$"
rm -f "${TMPDIR:-/tmp}/guest_analyze.$$"
