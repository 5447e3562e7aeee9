#!/bin/sh
# tools/probes/write-tail.py on excerpts of stop 82's traced runs of the
# real 6.1 on one LLC with its write(2) calls traced
# (tools/guest/traced/write-tail.log: the first 1000 events of a threaded
# and of a process run of hackbench -f 6, runs-write-tail-trace.txt),
# against the expected report. The figures are the excerpts', not the
# runs' (tools/guest/measured-write-tail/ keeps those).
set -eu
src=$1
exec sh "$src/tests/tools/golden_output.sh" "$src" write_tail \
  python3 "$src/tools/probes/write-tail.py" "$src/tools/guest/traced/write-tail.log"
