#!/bin/sh
# tools/guest/costs.c, built for this machine and run with short rounds:
# every measurement tools/guest/fit-profile.py reads is printed, each a
# positive figure. (What it measures on this machine is not checked: the
# figures that matter are the guest's.) Needs a C compiler and two CPUs:
# skipped (77) without them.
set -eu
src=$1
command -v cc > /dev/null || exit 77
[ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] || exit 77
bin=${TMPDIR:-/tmp}/schedlab_costs.$$
cc -O2 -o "$bin" "$src/tools/guest/costs.c"
"$bin" 0.02 5 > "$bin.out"
status=0
for name in getppid unix_stream_write_100 unix_stream_read_100 unix_stream_write_1000 unix_stream_write_100_over_20 \
            unix_stream_read_100_over_20 pipe_write_4 pipe_read_4 pipe_round_trip_same_cpu pipe_round_trip_cpu0_cpu1 \
            line_round_trip_cpu0_cpu1 interruption interruptions_per_s; do
  awk -v n="$name" '$1 == "COST" && $2 == n && $3 > 0 { found = 1 } END { exit !found }' "$bin.out" \
    || { echo "costs.c printed no positive $name"; status=1; }
done
[ $status = 0 ] || cat "$bin.out"
rm -f "$bin" "$bin.out"
exit $status
