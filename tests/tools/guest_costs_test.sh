#!/bin/sh
# tools/guest/costs.c, built for this machine and run with short rounds:
# every measurement tools/guest/fit-profile.py reads is printed, each a
# positive figure, and so is the read of messages CPU 1 wrote (not fitted:
# set beside the read of messages written on the reading CPU), as are the
# calls while the other end streams and the clock's cost they subtract. (What it measures on this machine is not checked: the
# figures that matter are the guest's. The interruptions of a running loop
# are not required: a quiet CPU may show none in the short window.) Needs
# a C compiler and CPUs 0 and 1: skipped (77) without them (costs.c
# itself exits 77 when it may not run on both).
set -eu
src=$1
command -v cc > /dev/null || exit 77
bin=${TMPDIR:-/tmp}/schedlab_costs.$$
cc -O2 -o "$bin" "$src/tools/guest/costs.c"
"$bin" 0.02 5 > "$bin.out" || { status=$?; rm -f "$bin" "$bin.out"; exit $status; }
status=0
for name in getppid unix_stream_write_100 unix_stream_read_100 unix_stream_write_1000 unix_stream_write_100_over_20 \
            unix_stream_read_100_over_20 pipe_write_4 pipe_read_4 pipe_round_trip_same_cpu pipe_round_trip_cpu0_cpu1 \
            line_round_trip_cpu0_cpu1 unix_stream_read_100_over_20_written_on_cpu1 \
            unix_stream_write_100_streaming_to_cpu0 unix_stream_read_100_streaming_from_cpu1 clock_pair; do
  awk -v n="$name" '$1 == "COST" && $2 == n && $3 > 0 { found = 1 } END { exit !found }' "$bin.out" \
    || { echo "costs.c printed no positive $name"; status=1; }
done
grep -q '^COST interruptions_per_s ' "$bin.out" || { echo "costs.c printed no interruptions_per_s"; status=1; }
[ $status = 0 ] || cat "$bin.out"
rm -f "$bin" "$bin.out"
exit $status
