#!/bin/sh
# Run a hackbench-style benchmark under tools/probes/messaging-roles.bt and
# print its senders' and receivers' time on a CPU, as schedlab's "time on a
# CPU by role" block does, with the context switches per message.
#
#   tools/probes/messaging-roles.sh perf bench sched messaging -g 1 -l 2000
#   tools/probes/messaging-roles.sh hackbench --groups 1 --loops 2000 --fds 10
#
# The group, loop and fd counts are read from the command (-g/--group(s),
# -l/--loops/--nr_loops, -f/--fds; perf's and hackbench's defaults are 10,
# 100 and 20): the fds give the roles, all three the messages, groups x fds
# x fds x loops (set MESSAGES to override). Needs root and bpftrace
# (Debian: apt-get install bpftrace linux-perf rt-tests).
set -eu
here=$(dirname "$0")
groups=10 loops=100 fds=20 prev=""
for a in "$@"; do
  case "$prev" in
    -g|--group|--groups) groups=$a ;;
    -l|--loops|--nr_loops) loops=$a ;;
    -f|--fds) fds=$a ;;
  esac
  case "$a" in
    --group=*|--groups=*) groups=${a#*=} ;;
    --loops=*|--nr_loops=*) loops=${a#*=} ;;
    --fds=*) fds=${a#*=} ;;
    -g[0-9]*) groups=${a#-g} ;;
    -l[0-9]*) loops=${a#-l} ;;
    -f[0-9]*) fds=${a#-f} ;;
  esac
  prev=$a
done
MESSAGES=${MESSAGES:-$((groups * fds * fds * loops))}
out=$(mktemp) err=$(mktemp)
probe=""
cleanup() {
  [ -n "$probe" ] && kill -INT "$probe" 2>/dev/null || true
  rm -f "$out" "$err"
}
trap cleanup EXIT
# One map entry per live worker: allow more than bpftrace's default 4096.
BPFTRACE_MAP_KEYS_MAX=${BPFTRACE_MAP_KEYS_MAX:-65536} bpftrace "$here/messaging-roles.bt" "$fds" > "$out" 2> "$err" &
probe=$!
# bpftrace reports its probes attached ("Attaching N probes..." on stdout in
# 0.17, "Attached" on stderr later).
for _ in $(seq 100); do
  if grep -q Attach "$out" "$err" 2>/dev/null; then break; fi
  if ! kill -0 "$probe" 2>/dev/null; then cat "$err" >&2; exit 1; fi
  sleep 0.1
done
sleep 1
ctxt0=$(awk '/^ctxt/ {print $2}' /proc/stat)
"$@"
ctxt1=$(awk '/^ctxt/ {print $2}' /proc/stat)
kill -INT "$probe"
wait "$probe" || true
probe=""
if ! awk -v msgs="$MESSAGES" -v ctxt=$((ctxt1 - ctxt0)) '
  /^@/ { split($1, k, /[][]/); v[k[1] "/" k[2]] = $2 }
  END {
    s = v["@run_us/1"]; r = v["@run_us/2"]; t = s + r
    if (t == 0) { print "no sender or receiver exited: is the command hackbench-style?"; exit 1 }
    printf "time on a CPU by role  ms, share, then how its runs ended: asleep (voluntary) or preempted\n"
    printf "  %-24s %10.3f  %5.1f%%  asleep %10d  preempted %10d  (%d tasks)\n", "receiver", r / 1000, 100 * r / t, v["@nvcsw/2"], v["@nivcsw/2"], v["@tasks/2"]
    printf "  %-24s %10.3f  %5.1f%%  asleep %10d  preempted %10d  (%d tasks)\n", "sender", s / 1000, 100 * s / t, v["@nvcsw/1"], v["@nivcsw/1"], v["@tasks/1"]
    printf "context switches %d (all CPUs, /proc/stat), %.4f a message (%d messages)\n", ctxt, ctxt / msgs, msgs
  }' "$out"; then
  cat "$err" >&2
  exit 1
fi
