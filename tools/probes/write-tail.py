#!/usr/bin/env python3
"""How much of a hackbench sender's write(2) runs after the wakeup it makes,
from a trace with raw_syscalls:sys_enter/sys_exit (write only) beside
sched_wakeup and sched_switch.

A waking write is one whose sys_enter and sys_exit lines on one CPU hold
exactly one sched_wakeup line from the writer and no switch. Its head is
sys_enter to the wakeup line (the call's work up to sk_data_ready(), then
try_to_wake_up() up to ttwu_do_wakeup(), whose trace_sched_wakeup() comes
after the preemption check), its tail the wakeup line to sys_exit (the rest
of try_to_wake_up(), the wait queue's unlock, the rest of
unix_stream_sendmsg() and vfs_write(), up to syscall_exit_work()). A write
that wakes nobody gives the call alone, and a null system call
(getppid(): perf bench syscall basic) the tracer's own part of a span
that ends at a sys_exit line and real work besides, a bound from above on
that part (tools/guest/runs-write-tail-null-syscall.txt).
Waking writes are split by where the wakee went (this CPU or another)
and, on this CPU, by whether the writer's next switch puts it out preempted in favour of the wakee; for
those it also gives sys_exit to that switch line (the return to user mode
and __schedule() up to trace_sched_switch()). Times are the trace's, at
its clock's resolution (a guest's microseconds; the TSC in
host-write-tail.sh's logs): the means to the 90th percentile are what to
compare.

Reads a guest's serial log (tools/guest/runs-write-tail-trace.txt: "TRACE
label ..." lines) or a plain ftrace text file.

  tools/probes/write-tail.py LOG
"""
import re
import sys

from ftrace_text import read_runs, summary

SWITCH = re.compile(r'prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=.*? next_pid=(\d+)')
WAKEUP = re.compile(r'pid=(\d+) .*target_cpu=(\d+)')
NR = re.compile(r'NR (\d+)')
GETPPID = '110'  # x86-64


def main():
    for label, events in read_runs(sys.argv[1]).items():
        open_write = {}     # cpu -> [pid, t_enter, wakeups [(t, wakee, target)]]
        open_null = {}      # cpu -> (pid, t_enter) of a getppid() with nothing traced since
        awaiting = {}       # cpu -> (pid, wakee, t_exit): a local waking write, until the next switch
        alone, head, tail, remote_head, remote_tail, null = [], [], [], [], [], []
        kept, preempted, exit_to_switch = [], [], []
        for pid, cpu, _, t, event, body in events:
            entered_null = open_null.pop(cpu, None)
            if event == 'sys_enter':
                m = NR.search(body)
                if m and m.group(1) == '1':
                    open_write[cpu] = [pid, t, []]
                elif m and m.group(1) == GETPPID:
                    open_null[cpu] = (pid, t)
            elif event == 'sched_wakeup':
                w = open_write.get(cpu)
                m = WAKEUP.search(body)
                if w and w[0] == pid and m:
                    w[2].append((t, int(m.group(1)), int(m.group(2))))
            elif event == 'sys_exit':
                m = NR.search(body)
                if entered_null and entered_null[0] == pid and m and m.group(1) == GETPPID:
                    null.append((t - entered_null[1]) * 1e6)
                w = open_write.pop(cpu, None)
                if not w or w[0] != pid or not m or m.group(1) != '1':
                    continue
                _, t0, wakeups = w
                if not wakeups:
                    alone.append((t - t0) * 1e6)
                elif len(wakeups) == 1:
                    tw, wakee, target = wakeups[0]
                    if target == cpu:
                        head.append((tw - t0) * 1e6)
                        tail.append((t - tw) * 1e6)
                        awaiting[cpu] = (pid, wakee, t, (t - tw) * 1e6)
                    else:
                        remote_head.append((tw - t0) * 1e6)
                        remote_tail.append((t - tw) * 1e6)
            elif event == 'sched_switch':
                open_write.pop(cpu, None)   # a write a switch interrupts is left out
                a = awaiting.pop(cpu, None)
                m = SWITCH.search(body)
                if not a or not m:
                    continue
                writer, wakee, t_exit, write_tail = a
                if int(m.group(1)) == writer and m.group(2).startswith('R') and int(m.group(3)) == wakee:
                    preempted.append(write_tail)
                    exit_to_switch.append((t - t_exit) * 1e6)
                else:
                    kept.append(write_tail)
        print(f"{label}:")
        print(summary("a write that wakes nobody", alone))
        print(summary("a write waking a task onto its CPU: head", head))
        print(summary("  its tail (wakeup line to sys_exit)", tail))
        print(summary("    when the writer then runs on", kept))
        print(summary("    when the wakee preempts it", preempted))
        print(summary("    then sys_exit to the switch line", exit_to_switch))
        print(summary("a write waking a task onto another CPU: head", remote_head))
        print(summary("  its tail", remote_tail))
        if null:
            print(summary("a null system call (sys_enter to sys_exit)", null))


if __name__ == '__main__':
    main()
