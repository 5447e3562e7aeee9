#!/bin/sh
# tools/guest/fit-profile.py, run on the guest measurements kept in
# tools/guest/measured/ with this build's schedlab, writes the shipped
# machines/qemu-tcg-2s1c.toml byte for byte: the profile is reproducible
# from its data, and a change to the model's switch or wakeup path that
# moves the fitted costs shows here (refit: the command below, then commit).
# Needs python3, which the build does not: skipped (77) without it.
# The fit runs the model some thirty times: with the release binary where
# the debug build names it (Determinism.DebugAndReleaseAgree holds the two
# to the same output), since the sanitized one takes minutes.
set -eu
src=$1 schedlab=$2
if [ -n "${3:-}" ] && [ -x "$3" ]; then schedlab=$3; fi
command -v python3 > /dev/null || exit 77
out=${TMPDIR:-/tmp}/qemu-tcg-2s1c.$$.toml
python3 "$src/tools/guest/fit-profile.py" "$schedlab" "$src"/tools/guest/measured/*.log > "$out" 2> "$out.err" \
  || { cat "$out.err"; rm -f "$out" "$out.err"; exit 1; }
if [ "${SCHEDLAB_UPDATE_GOLDEN:-}" = 1 ]; then cp "$out" "$src/machines/qemu-tcg-2s1c.toml"; fi
diff -u "$src/machines/qemu-tcg-2s1c.toml" "$out"
rm -f "$out" "$out.err"
