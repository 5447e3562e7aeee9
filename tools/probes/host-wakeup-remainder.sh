#!/bin/sh
# What one try_to_wake_up() runs after its wakee's activation, on this
# machine's own kernel, natively: tools/probes/futex-wake-all.c (one thread
# wakes two sleepers with one FUTEX_WAKE) traced with sched_waking,
# sched_wakeup, sched_switch and the system calls on, each run made twice:
# plain, and ("_extra" labels) with one more probe on sched_wakeup, from a
# second trace instance enabled after the first, so that it runs after
# the first probe's timestamp, and a null system call's loop (labels
# null_*: perf bench syscall basic), whose span bounds from above the
# tracer's own part of one that ends at a sys_exit line (it holds real
# work besides), which tools/probes/write-tail.py reports. Runs fw2n_* are
# the emulated machine's design (tools/guest/runs-wakeup-remainder.txt): all
# three threads on CPU 1, the sleepers at nice 19, the waker pausing 200 us
# a round, so that every first wakee stays queued beside its waker.
# Printed in a guest serial log's layout for tools/probes/wakeup-remainder.py.
# Needs root, tracefs, gcc and perf.
#
#   tools/probes/host-wakeup-remainder.sh > log
#   tools/probes/wakeup-remainder.py log; tools/probes/write-tail.py log | grep -A9 '^null'
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tsc-trace.sh"
work=$(mktemp -d)
tsc_trace_save
restore() {
  tsc_trace_restore
  [ -d $T/instances/extra_probe ] && { echo 0 > $T/instances/extra_probe/events/enable; rmdir $T/instances/extra_probe; }
  rm -rf "$work"
}
trap restore EXIT
gcc -O2 -pthread -o "$work/futex-wake-all" "$here/futex-wake-all.c"
tsc_trace_begin host-wakeup-remainder.sh
for round in 1 2; do
  for label in fw2_$round fw2_extra_$round fw2n_$round fw2n_extra_$round null_$round; do
    echo 0 > $T/events/enable
    echo > $T/trace
    for e in sched/sched_waking sched/sched_wakeup sched/sched_switch raw_syscalls/sys_enter raw_syscalls/sys_exit; do
      echo 0 > $T/events/$e/filter 2>/dev/null || true
      echo 1 > $T/events/$e/enable
    done
    case $label in *extra*) mkdir $T/instances/extra_probe
                            echo 1 > $T/instances/extra_probe/events/sched/sched_wakeup/enable;; esac
    cmd="$work/futex-wake-all 2 200000"
    case $label in fw2n*) cmd="taskset -c 1 $work/futex-wake-all 2 10000 19 200";; esac
    case $label in null*) cmd="perf bench syscall basic -l 10000000";; esac
    $cmd > /dev/null &
    bench=$!
    sleep 1.5; echo 1 > $T/tracing_on; sleep 0.4; echo 0 > $T/tracing_on
    wait $bench
    [ -d $T/instances/extra_probe ] && { echo 0 > $T/instances/extra_probe/events/enable; rmdir $T/instances/extra_probe; }
    echo "CMD $label $cmd"
    to_guest_layout "$label" "$tsc_per_ns" < $T/trace
  done
done
