#!/bin/sh
# tools/probes/wakeup-switch-split.py on two runs' JSON, trimmed to the keys
# it reads: seed 000's messaging (-g 10 -l 2000, seed 1) on haswell-2s8c2t
# (`schedlab perf bench ... --json`), and experiments/seed000-switch-cost.toml's 20
# repeats on the what-if experiments/whatif/haswell-2s8c2t-lkp-split.toml
# (`schedlab run ... --json`, the repeats' means), against the expected
# report: the shipped split puts a wakeup at 0.47 of a switch, the what-if
# at the 0.95 it was derived for.
# Needs python3 3.11 (tomllib), which the build does not: skipped (77) without it.
set -eu
src=$1
command -v python3 > /dev/null || exit 77
python3 -c 'import tomllib' 2> /dev/null || exit 77
out="${TMPDIR:-/tmp}/wakeup_switch_split.$$"
python3 "$src/tools/probes/wakeup-switch-split.py" --machine haswell-2s8c2t \
  "$src/tests/tools/wakeup_switch_split_run.json" > "$out"
python3 "$src/tools/probes/wakeup-switch-split.py" \
  --machine "$src/experiments/whatif/haswell-2s8c2t-lkp-split.toml" \
  "$src/tests/tools/wakeup_switch_split_experiment.json" >> "$out"
if [ "${SCHEDLAB_UPDATE_GOLDEN:-}" = 1 ]; then
  cp "$out" "$src/tests/tools/wakeup_switch_split.out"
fi
diff -u "$src/tests/tools/wakeup_switch_split.out" "$out"
rm -f "$out"
