#!/bin/sh
# tools/interval-gain.py: on two pairs of -I logs kept from pipe x16 launches
# (haswell-2s8c2t, linux-4.0 against WAKE_IDLE_CPU, -l 20000 -I 50, seeds 1
# and 7920; written by stop 89's runs, with the migrations by cause since
# stop 90's), against the expected report with --causes; then on a pair this
# build's schedlab writes, so that a change to the interval lines' layout
# fields shows here (each line has both runs' layout, not "-"); and bad
# input (a span outside the intervals every run completed or backwards,
# an unpaired run, a line that is not an -I line, --causes on lines
# without them) gets the tool's message.
# Needs python3, which the build does not: skipped (77) without it.
#
#   interval_gain_test.sh SOURCE_DIR SCHEDLAB
set -eu
src=$1 schedlab=$2
command -v python3 > /dev/null || exit 77
t="$src/tools/interval-gain.py"
d="$src/tests/tools"
sh "$d/golden_output.sh" "$src" interval_gain python3 "$t" --spans 1,1-3 --causes \
  "$d/interval_gain_base_1.iv" "$d/interval_gain_patch_1.iv" \
  "$d/interval_gain_base_7920.iv" "$d/interval_gain_patch_7920.iv"
tmp="${TMPDIR:-/tmp}/interval_gain.$$"
trap 'rm -f "$tmp".*' EXIT
run="$schedlab perf bench sched pipe --instances 2 -l 3000 --machine 1s2c2t --kernel linux-4.0 -I 5 --quiet"
$run > /dev/null 2> "$tmp.base"
$run --features WAKE_IDLE_CPU > /dev/null 2> "$tmp.patch"
python3 "$t" "$tmp.base" "$tmp.patch" > "$tmp.out"
status=0
lines=$(grep -c '^ ' "$tmp.out" || true)
laid=$(grep -cE '^ +[0-9.]+ +[-+][0-9.]+% +[0-9.na]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ ' "$tmp.out" || true)
if [ "$lines" -lt 2 ] || [ "$lines" != "$laid" ]; then echo "expected every interval with both layouts:"; cat "$tmp.out"; status=1; fi
# The causes this build writes parse, and add up to each run's migrations.
python3 "$t" --causes "$tmp.base" "$tmp.patch" > "$tmp.causes"
for v in base patch; do
  moves=$(awk '!/^#/ { split($0, s, ";"); n = split(s[2], f, " "); for (i = 1; i <= n; i++) { split(f[i], a, /[=\/]/); m += a[2] } } END { print m + 0 }' "$tmp.$v")
  column=$(awk '!/^#/ { m += $6 } END { print m + 0 }' "$tmp.$v")
  if [ "$moves" != "$column" ] || [ "$moves" = 0 ]; then echo "$v: causes sum to $moves, the migrations column to $column"; status=1; fi
done
grep -q '^  fork ' "$tmp.causes" || { echo "expected the launch's forks among the causes:"; cat "$tmp.causes"; status=1; }
# Bad input ends with the tool's own one-line message, not a traceback.
refused() {  # EXPECTED-MESSAGE ARGS...
  expected=$1; shift
  if python3 "$t" "$@" > /dev/null 2> "$tmp.err"; then echo "accepted: $*"; status=1; return; fi
  grep -q "^interval-gain: .*$expected" "$tmp.err" || { echo "not the message \"$expected\":"; cat "$tmp.err"; status=1; }
}
refused "outside the" --spans 1-999 "$tmp.base" "$tmp.patch"
refused "runs backwards" --spans 3-1 "$tmp.base" "$tmp.patch"
refused "in pairs" "$tmp.base"
echo "schedlab: time limit reached" > "$tmp.bad"
refused "not an -I line" "$tmp.bad" "$tmp.patch"
# Lines from before stop 90 have no migrations by cause.
sed 's/;[^;]*;/;/' "$tmp.base" > "$tmp.old"
refused "needs lines with the migrations by cause" --causes "$tmp.old" "$tmp.patch"
sed 's/;\([^;]*\);/; fork=1;/' "$tmp.base" > "$tmp.garbled"
refused "not a cause=moves/+onto/-off field" --causes "$tmp.garbled" "$tmp.patch"
exit $status
