#!/bin/sh
# tools/probes/role-charges.py on the excerpts of stop 73's traced runs of
# the real 6.1 on one LLC (tools/guest/traced/wakeup-lead.log, the same
# excerpts wakeup_lead_test.sh reads): each role's runs by how they began,
# split at their sched_switch lines and as sched_stat_runtime charged them,
# against the expected report. In excerpts this short the shares are not a
# run's; the test pins the reading.
set -eu
src=$1
exec sh "$src/tests/tools/golden_output.sh" "$src" role_charges \
  python3 "$src/tools/probes/role-charges.py" --min-switches 1 "$src/tools/guest/traced/wakeup-lead.log"
