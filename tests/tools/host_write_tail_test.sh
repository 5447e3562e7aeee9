#!/bin/sh
# tools/probes/host-write-tail.sh's conversion of a trace on the TSC clock
# into a guest log's layout (--convert), read by tools/probes/write-tail.py,
# against the expected report: 400 lines of a native trace of this
# machine's 6.18 (stop 83; perf bench sched messaging -g 1 -t, the events of
# runs-write-tail-trace.txt), whose one local waking write has a 0.52 us
# tail at the trace's rate of 2.596134 ticks a nanosecond, and 120 lines
# of a null system call's loop (stop 84; at 2.5961 ticks a nanosecond)
# with 9 more made by hand: a plain call; one with another task's line
# between its entry and exit, one returning another call's number, and
# one with a line on another CPU between (which counts): 61 null calls.
set -eu
src=$1
command -v python3 > /dev/null || exit 77
log="${TMPDIR:-/tmp}/host_write_tail.$$.log"
sh "$src/tools/probes/host-write-tail.sh" --convert ws6t_1 2.596134 < "$src/tests/tools/host_trace_tsc.txt" > "$log"
sh "$src/tools/probes/host-write-tail.sh" --convert null_1 2.5961 < "$src/tests/tools/host_trace_null_tsc.txt" >> "$log"
status=0
sh "$src/tests/tools/golden_output.sh" "$src" host_write_tail python3 "$src/tools/probes/write-tail.py" "$log" || status=1
rm -f "$log"
exit $status
