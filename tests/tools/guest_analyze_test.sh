#!/bin/sh
# tools/guest/analyze.py on trimmed serial logs of real guest boots under
# QEMU, against the expected lines: Debian's 6.1 (CFS; stop 62), an
# unsampled run and a sampled one; and the 6.1 of tools/guest/build-kernel.sh
# (seed 000's patch; stop 63) on two sockets, messaging and pipe runs with
# the feature off and on, read with /proc/schedstat's lines; one run of that
# 6.1's -io build booted as one socket (stop 72: messages in the window and
# a sender's cost a message, from each worker's /proc/.../io); and a native
# run that tools/probes/hackbench-snapshots.sh took on this project's
# machine (6.18). The last two keep only the fields analyze.py reads. Needs python3,
# which the build does not: skipped (77) without it.
set -eu
src=$1
command -v python3 > /dev/null || exit 77
{ python3 "$src/tools/guest/analyze.py" "$src/tests/tools/guest_serial_cfs61.log"
  python3 "$src/tools/guest/analyze.py" "$src/tests/tools/guest_serial_wic61.log"
  python3 "$src/tools/guest/analyze.py" "$src/tests/tools/guest_serial_io61_one_llc.log"
  python3 "$src/tools/guest/analyze.py" "$src/tests/tools/native_snapshots_618.log"; } > "${TMPDIR:-/tmp}/guest_analyze.$$"
if [ "${SCHEDLAB_UPDATE_GOLDEN:-}" = 1 ]; then
  cp "${TMPDIR:-/tmp}/guest_analyze.$$" "$src/tests/tools/guest_analyze.out"
fi
diff -u "$src/tests/tools/guest_analyze.out" "${TMPDIR:-/tmp}/guest_analyze.$$"
rm -f "${TMPDIR:-/tmp}/guest_analyze.$$"
