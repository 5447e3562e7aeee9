#!/bin/sh
# tools/guest/trace-layout.py on sched: traces of the patched 6.1 guest
# (tools/guest/traced/, stop 68), against the expected report: where
# hackbench's workers start and move, the GO's placements, and the kernel
# threads' wakeups. Needs python3, which the build does not: skipped (77)
# without it.
set -eu
src=$1
command -v python3 > /dev/null || exit 77
t="$src/tools/guest/trace-layout.py"
d="$src/tools/guest/traced"
{ python3 "$t" --events 12 --windows 5,10 "$d/start-trace.log"
  python3 "$t" --events 0 --windows 10,50,400,3200 "$d/migrations-trace.log"
  python3 "$t" --events 0 --windows 50 "$d/go-placement.log"
  python3 "$t" --events 4 --windows 10,800,3200 "$d/escape-trace.log"
  python3 "$t" --events 0 --kthreads "$d/kthread-wakeups.log"; } > "${TMPDIR:-/tmp}/trace_layout.$$"
if [ "${SCHEDLAB_UPDATE_GOLDEN:-}" = 1 ]; then
  cp "${TMPDIR:-/tmp}/trace_layout.$$" "$src/tests/tools/trace_layout.out"
fi
diff -u "$src/tests/tools/trace_layout.out" "${TMPDIR:-/tmp}/trace_layout.$$"
rm -f "${TMPDIR:-/tmp}/trace_layout.$$"
