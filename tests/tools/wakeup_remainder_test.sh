#!/bin/sh
# tools/probes/wakeup-remainder.py on 200 lines of a native trace of this
# machine's 6.18 (stop 84; tools/probes/futex-wake-all.c waking two
# sleepers a round, converted by host-write-tail.sh --convert at the
# trace's rate of 2.5962 ticks a nanosecond), against the expected report:
# 7 spans from a local wakee's wakeup line to the next wakee's waking line,
# 1 from a remote one's, and 2 from a last wakeup line to futex()'s sys_exit.
# 10 lines made by hand at the end count for none of them: another task's
# waking line after a wakeup, a remote last wakeup before futex()'s
# sys_exit, and a local one before another call's.
set -eu
src=$1
command -v python3 > /dev/null || exit 77
log="${TMPDIR:-/tmp}/wakeup_remainder.$$.log"
sh "$src/tools/probes/host-write-tail.sh" --convert fw2_1 2.5962 < "$src/tests/tools/host_trace_futex_tsc.txt" > "$log"
status=0
sh "$src/tests/tools/golden_output.sh" "$src" wakeup_remainder python3 "$src/tools/probes/wakeup-remainder.py" "$log" || status=1
rm -f "$log"
exit $status
