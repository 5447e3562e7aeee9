#!/bin/sh
# Run a hackbench-style benchmark under tools/probes/messaging-roles.bt and
# print its senders' and receivers' time on a CPU, as schedlab's "time on a
# CPU by role" block does, with the context switches per message.
#
#   tools/probes/messaging-roles.sh perf bench sched messaging -g 1 -l 2000
#   NUM_FDS=20 MESSAGES=800000 tools/probes/messaging-roles.sh hackbench -g 1 -l 2000 -s 100
#
# MESSAGES (for the switches per message) defaults to what perf bench
# sched messaging's -g and -l give: groups x 20 senders x 20 receivers x loops.
# Needs root and bpftrace (Debian: apt-get install bpftrace linux-perf).
set -eu
here=$(dirname "$0")
num_fds=${NUM_FDS:-20}
if [ -z "${MESSAGES:-}" ]; then
  g=10 l=100 prev=""
  for a in "$@"; do
    case "$prev" in -g|--group) g=$a ;; -l|--nr_loops|--loops) l=$a ;; esac
    prev=$a
  done
  MESSAGES=$((g * num_fds * num_fds * l))
fi
out=$(mktemp)
bpftrace "$here/messaging-roles.bt" "$num_fds" > "$out" 2>/dev/null &
probe=$!
# bpftrace prints "Attaching N probes..." once its probes are in.
for _ in $(seq 100); do grep -q Attaching "$out" && break; sleep 0.1; done
sleep 1
ctxt0=$(awk '/^ctxt/ {print $2}' /proc/stat)
"$@"
ctxt1=$(awk '/^ctxt/ {print $2}' /proc/stat)
kill -INT "$probe"
wait "$probe" || true
awk -v msgs="$MESSAGES" -v ctxt=$((ctxt1 - ctxt0)) '
  /^@/ { split($1, k, /[][]/); v[k[1] "/" k[2]] = $2 }
  END {
    s = v["@run_us/1"]; r = v["@run_us/2"]; t = s + r
    if (t == 0) { print "no sender or receiver exited: is the command hackbench-style?"; exit 1 }
    printf "time on a CPU by role  ms, share, then how its runs ended: asleep (voluntary) or preempted\n"
    printf "  %-24s %10.3f  %5.1f%%  asleep %10d  preempted %10d  (%d tasks)\n", "receiver", r / 1000, 100 * r / t, v["@nvcsw/2"], v["@nivcsw/2"], v["@tasks/2"]
    printf "  %-24s %10.3f  %5.1f%%  asleep %10d  preempted %10d  (%d tasks)\n", "sender", s / 1000, 100 * s / t, v["@nvcsw/1"], v["@nivcsw/1"], v["@tasks/1"]
    printf "context switches %d (all CPUs, /proc/stat), %.4f a message (%d messages)\n", ctxt, ctxt / msgs, msgs
  }' "$out"
rm -f "$out"
