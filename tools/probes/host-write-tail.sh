#!/bin/sh
# The write's tail after its wakeup on this machine's own kernel, natively:
# tools/guest/runs-write-tail-trace.txt's hackbench runs (one group of 6
# senders and 6 receivers, threads and processes) and a null system call's
# loop (runs-write-tail-null-syscall.txt) traced with the same events,
# printed in a guest serial log's layout ("TRACE label ...") for
# tools/probes/write-tail.py. Needs root, tracefs and perf. The same
# threaded hackbench over pipes (labels wp6t_*) gives a waking
# pipe_write()'s tail, which fit-profile.py prints and does not fit.
#
# The tracer's own cost sits inside the tail it measures: the sched_wakeup
# line's recording goes on after its timestamp, and the sys_exit line's
# probe runs before its own. So each run is made twice, the second time
# ("x" labels: ws6tx_1) with one more probe on the same sys_exit
# tracepoint, registered first (syscalls:sys_exit_write, whose lines
# write-tail.py does not read): its whole recording lands inside the tail,
# and the tail's growth is one event's cost measured where it is paid.
# It is a whole probe and the loop over probes that a second one
# brings (kernel/tracepoint.c: with one probe the static call points at
# it, with two at __traceiter_*); tools/guest/fit-profile.py reads the
# tracer's part of the plain tail (the wakeup line's recording after its
# timestamp, the sys_exit probe's before its own) as one such event and
# subtracts it: an assumption, not a measurement. A null system call's
# span ("null" labels: perf bench syscall basic, getppid(), stop 84) holds
# a line's recording after its timestamp and the exit path to the
# sys_exit line's timestamp as a tail does, and real work besides (the
# entry's rest, getppid(), the return), so the tail less it is a lower
# bound, which the fit gives beside its value. On 6.18 the system-call
# tracepoints may fault (__DECLARE_TRACE_SYSCALL) where sched_wakeup's may
# not, so the sys_enter line's recording need not cost the wakeup line's.
# The system calls are traced unfiltered: a filtered event is recorded in
# a per-CPU buffer and stamped only when its commit copies it into the ring
# (kernel/trace/trace.c, trace_event_buffer_lock_reserve(),
# __buffer_unlock_commit()), which would put a filtered sys_exit line's
# whole recording before its timestamp, inside the tail (stop 83: 0.48
# against 0.41 us).
#
# Timestamps come from the TSC (tools/probes/tsc-trace.sh).
#
#   tools/probes/host-write-tail.sh > log; tools/probes/write-tail.py log
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tsc-trace.sh"
# --convert LABEL TSC_TICKS_PER_NS: only that, on standard input (tested)
if [ "${1:-}" = --convert ]; then to_guest_layout "$2" "$3"; exit; fi
tsc_trace_save
restore() {
  tsc_trace_restore
  for e in raw_syscalls/sys_enter raw_syscalls/sys_exit syscalls/sys_exit_write; do echo 0 > $T/events/$e/filter; done
}
trap restore EXIT
LOOPS=${LOOPS:-100000}   # about 5 s a run here (the null runs' 10^7 calls, 2-4 s); the trace starts 1.5 s in
tsc_trace_begin host-write-tail.sh
for round in 1 2; do
  for run in t p tx px null pipe; do
    label=ws6${run}_$round
    flags=; case $run in t*) flags=-T;; esac
    cmd="hackbench -g 1 -f 6 -l $LOOPS $flags"
    case $run in
      null) label=null_$round cmd="perf bench syscall basic -l $((LOOPS * 100))";;
      pipe) label=wp6t_$round cmd="hackbench -p -g 1 -f 6 -l $LOOPS -T";;
    esac
    echo 0 > $T/events/enable
    echo > $T/trace
    echo 0 > $T/events/raw_syscalls/sys_enter/filter
    echo 0 > $T/events/raw_syscalls/sys_exit/filter
    case $run in *x) echo 1 > $T/events/syscalls/sys_exit_write/enable;; esac
    for e in sched/sched_wakeup sched/sched_switch raw_syscalls/sys_enter raw_syscalls/sys_exit; do
      echo 1 > $T/events/$e/enable
    done
    $cmd > /dev/null &
    bench=$!
    sleep 1.5; echo 1 > $T/tracing_on; sleep 0.4; echo 0 > $T/tracing_on
    wait $bench
    echo "CMD $label $cmd"
    to_guest_layout "$label" "$tsc_per_ns" < $T/trace
  done
done
