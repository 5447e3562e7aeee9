#!/usr/bin/env python3
"""What one try_to_wake_up() runs after its wakee is activated, from a trace
of tools/probes/futex-wake-all.c (one FUTEX_WAKE of several sleepers) with
sched_waking and sched_wakeup on.

Between a waker's sched_wakeup line for one wakee and its sched_waking line
for the next, on one CPU with no other line between, lie the rest of the
first try_to_wake_up() after ttwu_do_activate()'s tracepoint (the task_woken
and idle_stamp updates, the runqueue's and pi_lock's unlocks, ttwu_stat()),
wake_up_q()'s step (put_task_struct()) and the second call's start up to
its tracepoint (pi_lock, the state check), plus the tracer's own part: the
first line's recording after its timestamp and the second's before its own.
Runs labelled ..._extra (host-wakeup-remainder.sh) have one more probe on
sched_wakeup, registered last, whose whole recording lands in the span:
its growth is that probe and the loop over probes a second one brings
(kernel/tracepoint.c), read, as in write-tail.py's runs, as the tracer's
part of the plain span (an assumption). What is left also holds
wake_up_q()'s put_task_struct() and the next call's pi_lock and state
check, so it bounds the rest from above.
Spans are split by where the first wakee went (this CPU or another).
From the last wakeup line of a futex() call to its sys_exit line lies the
same rest of try_to_wake_up(), futex_wake()'s return and the exit path,
which a null system call's traced span (host-write-tail.sh's null runs)
holds as tracing makes it: the tail of a call that does nothing of its
own after its wakeups. The means to the 90th percentile are what to
compare.

  tools/probes/wakeup-remainder.py LOG
"""
import re
import sys

from ftrace_text import read_runs, summary

TARGET = re.compile(r'target_cpu=(\d+)')
FUTEX = 202  # x86-64


def main():
    for label, events in read_runs(sys.argv[1]).items():
        last = {}  # cpu -> (pid, event, t, wakee went to this cpu)
        local, remote, futex_tail = [], [], []
        for pid, cpu, _, t, event, body in events:
            prev = last.get(cpu)
            if event == 'sched_waking' and prev and prev[0] == pid and prev[1] == 'sched_wakeup':
                (local if prev[3] else remote).append((t - prev[2]) * 1e6)
            if (event == 'sys_exit' and body.startswith(f'NR {FUTEX} ') and prev and prev[0] == pid
                    and prev[1] == 'sched_wakeup' and prev[3]):
                futex_tail.append((t - prev[2]) * 1e6)
            m = TARGET.search(body) if event == 'sched_wakeup' else None
            last[cpu] = (pid, event, t, bool(m) and int(m.group(1)) == cpu)
        print(f"{label}:")
        print(summary("wakeup line to the next wakee's waking line", local, 3))
        print(summary("  the first wakee on another CPU", remote, 3))
        print(summary("the last wakeup line to futex()'s sys_exit", futex_tail, 3))


if __name__ == '__main__':
    main()
