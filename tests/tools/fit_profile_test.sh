#!/bin/sh
# tools/guest/fit-profile.py, run on the measurements kept for a machine
# with this build's schedlab, writes its shipped profile byte for byte:
# qemu-tcg-2s1c from tools/guest/measured/ (the emulated machine),
# kvm-epyc-1s2c from tools/guest/measured-host/ (this project's own
# machine), or qemu-tcg-2s1c-streaming from tools/guest/measured-streaming/
# (the emulated machine's AF_UNIX calls while the other end streams). The profile is reproducible from its data, and a change to
# the model's switch or wakeup path that moves the fitted costs shows here
# (refit: the command below, then commit).
# Needs python3, which the build does not: skipped (77) without it.
# The fit runs the model some thirty times: with the release binary where
# the debug build names it (Determinism.DebugAndReleaseAgree holds the two
# to the same output), since the sanitized one takes minutes.
#
#   fit_profile_test.sh MACHINE SOURCE_DIR SCHEDLAB [RELEASE_SCHEDLAB]
set -eu
machine=$1 src=$2 schedlab=$3
if [ -n "${4:-}" ] && [ -x "$4" ]; then schedlab=$4; fi
command -v python3 > /dev/null || exit 77
# switch_mm's own logs (round trips between threads as well as processes)
# are kept apart, so that they move no other median; so are the wakeup
# split's (yield round trips and waking writes, stop 70), and the write's
# tail after its wakeup (write-tail.py's reports of traced boots, stop 82),
# and the wakeup's own rest (wakeup-remainder.py's reports, stop 85), kept
# under the write tails' directory in wakeup-remainder/.
switch_mm= wakeup= write_tail=
case $machine in
  qemu-tcg-2s1c) logs=$src/tools/guest/measured switch_mm=$src/tools/guest/measured-switch-mm
                 wakeup=$src/tools/guest/measured-wakeup write_tail=$src/tools/guest/measured-write-tail;;
  kvm-epyc-1s2c) logs=$src/tools/guest/measured-host switch_mm=$src/tools/guest/measured-host-switch-mm
                 write_tail=$src/tools/guest/measured-host-write-tail;;
  qemu-tcg-2s1c-streaming) logs=$src/tools/guest/measured-streaming;;
  *) echo "no measurements kept for $machine"; exit 1;;
esac
out=${TMPDIR:-/tmp}/$machine.$$.toml
set --
if [ -n "$switch_mm" ]; then set -- --switch-mm "$(ls "$switch_mm"/*.log | tr '\n' ',' | sed 's/,$//')"; fi
if [ -n "$wakeup" ]; then set -- "$@" --wakeup "$(ls "$wakeup"/*.log | tr '\n' ',' | sed 's/,$//')"; fi
if [ -n "$write_tail" ]; then set -- "$@" --write-tail "$(ls "$write_tail"/*.txt | tr '\n' ',' | sed 's/,$//')"; fi
if [ -n "$write_tail" ] && [ -d "$write_tail/wakeup-remainder" ]; then
  set -- "$@" --wakeup-rest "$(ls "$write_tail"/wakeup-remainder/*.txt | tr '\n' ',' | sed 's/,$//')"
fi
python3 "$src/tools/guest/fit-profile.py" --machine "$machine" "$@" "$schedlab" "$logs"/*.log > "$out" 2> "$out.err" \
  || { cat "$out.err"; rm -f "$out" "$out.err"; exit 1; }
if [ "${SCHEDLAB_UPDATE_GOLDEN:-}" = 1 ]; then cp "$out" "$src/machines/$machine.toml"; fi
diff -u "$src/machines/$machine.toml" "$out"
rm -f "$out" "$out.err"
