#!/bin/sh
# The write's tail after its wakeup on this machine's own kernel, natively:
# tools/guest/runs-write-tail-trace.txt's hackbench runs (one group of 6
# senders and 6 receivers, threads and processes) traced with the same
# events, printed in a guest serial log's layout ("TRACE label ...") for
# tools/probes/write-tail.py. Needs root and tracefs.
#
# The tracer's own cost sits inside the tail it measures: the sched_wakeup
# line's recording goes on after its timestamp, and the sys_exit line's
# probe runs before its own. So each run is made twice, the second time
# ("x" labels: ws6tx_1) with one more probe on the same sys_exit
# tracepoint, registered first (syscalls:sys_exit_write, whose lines
# write-tail.py does not read): its whole recording lands inside the tail,
# and the tail's growth is one event's cost measured where it is paid.
# tools/guest/fit-profile.py subtracts one such event, reading the two
# parts inside the plain tail (after one timestamp, before the other) as
# one event between them: an assumption, not a measurement. The system
# calls are traced unfiltered: a filtered event is recorded in a per-CPU
# buffer and stamped only when its commit copies it into the ring
# (kernel/trace/trace.c, trace_event_buffer_lock_reserve(),
# __buffer_unlock_commit()), which would put a filtered sys_exit line's
# whole recording before its timestamp, inside the tail (stop 83: 0.48
# against 0.41 us). What tracing forces besides, the entry to
# syscall_exit_work(), stays in the tail.
#
# Timestamps come from the TSC (trace_clock x86-tsc: the default clocks
# print whole microseconds, and a native tail is about half of one); its
# rate is read from two trace_marker lines a second apart, with the wall
# clock's nanoseconds in their text (date(1); a clock step in that second
# would spoil it).
#
#   tools/probes/host-write-tail.sh > log; tools/probes/write-tail.py log
set -eu
# A trace on the TSC clock, in a guest log's layout with seconds:
# to_guest_layout LABEL TSC_TICKS_PER_NS < trace
to_guest_layout() {
  awk -v label="$1" -v rate="$2" '
    /^#/ { next }
    match($0, /\] [^ ]+ +[0-9]+: /) {
      head = substr($0, 1, RSTART + RLENGTH - 1); rest = substr($0, RSTART + RLENGTH)
      n = split(head, f, " "); tsc = f[n]; sub(/:$/, "", tsc)
      sub(/[0-9]+: $/, "", head)
      printf "TRACE %s %s%.9f: %s\n", label, head, tsc / rate / 1e9, rest
    }'
}
# --convert LABEL TSC_TICKS_PER_NS: only that, on standard input (tested)
if [ "${1:-}" = --convert ]; then to_guest_layout "$2" "$3"; exit; fi
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
clock=$(sed 's/.*\[\(.*\)\].*/\1/' $T/trace_clock) buffer_kb=$(cat $T/buffer_size_kb)
restore() {
  echo 0 > $T/tracing_on; echo 0 > $T/events/enable
  for e in raw_syscalls/sys_enter raw_syscalls/sys_exit syscalls/sys_exit_write; do echo 0 > $T/events/$e/filter; done
  echo "$clock" > $T/trace_clock; echo "$buffer_kb" > $T/buffer_size_kb; echo > $T/trace
}
trap restore EXIT
LOOPS=${LOOPS:-100000}   # about 5 s a run here; the trace starts 1.5 s in
echo 0 > $T/tracing_on
echo x86-tsc > $T/trace_clock
echo 30000 > $T/buffer_size_kb
echo > $T/trace
echo 1 > $T/tracing_on
echo "wall_ns $(date +%s%N)" > $T/trace_marker
sleep 1
echo "wall_ns $(date +%s%N)" > $T/trace_marker
echo 0 > $T/tracing_on
tsc_per_ns=$(awk 'match($0, / [0-9]+: tracing_mark_write: wall_ns /) {
                    n++; t[n] = substr($0, RSTART + 1) + 0; m[n] = $NF }
                  END { if (n == 2 && m[2] > m[1]) printf "%.9f", (t[2] - t[1]) / (m[2] - m[1]) }' $T/trace)
[ -n "$tsc_per_ns" ] || { echo "host-write-tail.sh: no TSC rate from the trace markers" >&2; exit 1; }
echo "# TSC ticks per ns: $tsc_per_ns"
for round in 1 2; do
  for run in t p tx px; do
    label=ws6${run}_$round
    flags=; case $run in t*) flags=-T;; esac
    echo 0 > $T/events/enable
    echo > $T/trace
    echo 0 > $T/events/raw_syscalls/sys_enter/filter
    echo 0 > $T/events/raw_syscalls/sys_exit/filter
    case $run in *x) echo 1 > $T/events/syscalls/sys_exit_write/enable;; esac
    for e in sched/sched_wakeup sched/sched_switch raw_syscalls/sys_enter raw_syscalls/sys_exit; do
      echo 1 > $T/events/$e/enable
    done
    hackbench -g 1 -f 6 -l "$LOOPS" $flags > /dev/null &
    bench=$!
    sleep 1.5; echo 1 > $T/tracing_on; sleep 0.4; echo 0 > $T/tracing_on
    wait $bench
    echo "CMD $label hackbench -g 1 -f 6 -l $LOOPS $flags"
    to_guest_layout "$label" "$tsc_per_ns" < $T/trace
  done
done
