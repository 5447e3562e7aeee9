#!/bin/sh
# tools/guest/wakeup-lead.py on excerpts of two traced runs of the real 6.1
# on one LLC (tools/guest/traced/wakeup-lead.log, stop 73, hackbench -f 6):
# the threads' first 400 events, and the processes' first 600 and 600 from
# the 10000th, relabelled lp6_2_later (leads past +-50 ms, resched flags
# already pending, wakeups from the other CPU), against the expected
# report. In an excerpt a worker may switch too seldom to be seen (lt6_1's
# 5 senders).
set -eu
src=$1
exec sh "$src/tests/tools/golden_output.sh" "$src" wakeup_lead \
  python3 "$src/tools/guest/wakeup-lead.py" --min-switches 1 "$src/tools/guest/traced/wakeup-lead.log"
