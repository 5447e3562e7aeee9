#!/bin/sh
# tools/probes/role-charges.py on the excerpts of stop 73's traced runs of
# the real 6.1 on one LLC (tools/guest/traced/wakeup-lead.log, the same
# excerpts wakeup_lead_test.sh reads): each role's runs by how they began,
# split at their sched_switch lines and as sched_stat_runtime charged them,
# against the expected report. In excerpts this short the shares are not a
# run's; the test pins the reading.
# Needs python3, which the build does not: skipped (77) without it.
set -eu
src=$1
command -v python3 > /dev/null || exit 77
python3 "$src/tools/probes/role-charges.py" --min-switches 1 "$src/tools/guest/traced/wakeup-lead.log" \
  > "${TMPDIR:-/tmp}/role_charges.$$"
if [ "${SCHEDLAB_UPDATE_GOLDEN:-}" = 1 ]; then
  cp "${TMPDIR:-/tmp}/role_charges.$$" "$src/tests/tools/role_charges.out"
fi
diff -u "$src/tests/tools/role_charges.out" "${TMPDIR:-/tmp}/role_charges.$$"
rm -f "${TMPDIR:-/tmp}/role_charges.$$"
