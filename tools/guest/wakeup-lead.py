#!/usr/bin/env python3
"""How far ahead a woken task is of the task it finds running, and whether it
preempts it, from a guest's sched: trace.

tools/guest/guest-init.sh prints a traced run's events as "TRACE label ..."
(its "trace N:EVENTS" runs; tools/guest/runs-wakeup-lead-trace.txt). With
sched_wakeup, sched_switch and sched_stat_runtime traced, for each wakeup
back onto the CPU the wakee slept on (vruntimes compare only within one
runqueue: a moved wakee's is renormalised untraced) that finds another
task running there, this takes:
- the lead: the running task's vruntime at the wakeup check minus the
  wakee's at its sleep. In 6.1, update_curr() emits sched_stat_runtime with
  the entity's vruntime (kernel/sched/fair.c); the wakeup's
  enqueue_entity() calls it for the running task, and the check
  (check_preempt_wakeup(): update_curr(), then wakeup_preempt_entity()) on
  the same clock adds no time, so the running task's last
  sched_stat_runtime before the sched_wakeup line (traced after the check,
  ttwu_do_wakeup()) is its vruntime at the check; the wakee's last one is
  its vruntime when it was dequeued. place_entity() may raise the wakee's
  vruntime to min_vruntime - sched_latency/2, which the trace does not
  show, so the lead is an upper bound. A lead past +-50 ms (a vruntime last
  printed before a move: a dequeue that ran no time prints none) is
  counted and left out;
- what the check did. A wakeup made on the target CPU itself is judged by
  the trace's need-resched flag, as the model counts its checks: a check
  that found a resched already pending (the flag on that CPU's line
  before) does nothing, one that did not either set it (a preemption) or
  not. A wakeup made from the other CPU shows that CPU's flag, not the
  target's; it is judged by whether the next switch on the target puts
  the running task out runnable in favour of the wakee (which also counts
  a later tick's preemption).
Roles, for hackbench's workers: a worker (comm hackbench, over
--min-switches switches, 100) that sleeps more often than it is preempted
is a receiver, the others senders. Per label it prints a sender's
preemptions per receiver sleep over the traced span, and for every
wakeup onto a busy CPU, receivers woken onto a sender and receivers woken
onto a receiver: how many, the lead's mean and median, the share past the
wakeup granularity, and what the checks did past it and below it.

  tools/guest/wakeup-lead.py [--gran-ms G] [--min-switches N] LOG
"""
import argparse
import collections
import os
import re
import statistics as st
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'probes'))
import ftrace_text  # noqa: E402  (tools/probes/ftrace_text.py)

STAT = re.compile(r'pid=(\d+) runtime=(\d+) \[ns\] vruntime=(\d+)')
SWITCH = re.compile(r'prev_comm=(.*?) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)')
WAKEUP = re.compile(r'pid=(\d+) .*target_cpu=(\d+)')


def read_runs(path):
    """The guest's traced runs by label: (cpu, flags, event, body)."""
    return collections.OrderedDict((label, [(cpu, flags, event, body) for _, cpu, flags, _, event, body in events])
                                   for label, events in ftrace_text.read_runs(path).items() if label != 'trace')


FAR_MS = 50


def resched_flag(flags):
    """The need-resched field of an ftrace line's flags (d.... in 6.1)."""
    return len(flags) > 1 and flags[1] in 'Nnp'


class Check:
    def __init__(self, lead, wakee, curr, local, pending, set_resched):
        self.lead, self.wakee, self.curr = lead, wakee, curr
        self.local, self.pending, self.set_resched = local, pending, set_resched
        self.ran_next = None  # for a wakeup from the other CPU: the wakee preempted at the next switch


def checks_of(events):
    """A Check per wakeup back onto the wakee's CPU that found another task
    running, and each task's comm, sleeps and preemptions."""
    vruntime, running, comm, slept_on, resched = {}, {}, {}, {}, {}
    sleeps, preempts = collections.Counter(), collections.Counter()
    waiting = {}  # cpu -> wakeups from another CPU not yet followed by a switch there
    checks = []
    for cpu, flags, event, body in events:
        pending_here = resched.get(cpu, False)
        resched[cpu] = resched_flag(flags)
        if event == 'sched_stat_runtime':
            m = STAT.search(body)
            if m:
                vruntime[int(m.group(1))] = int(m.group(3))
        elif event == 'sched_switch':
            m = SWITCH.search(body)
            if not m:
                continue
            prev, state, nxt = int(m.group(2)), m.group(3), int(m.group(5))
            comm[prev], comm[nxt] = m.group(1), m.group(4)
            slept_on[prev] = cpu
            if state.startswith('S'):
                sleeps[prev] += 1
            elif state.startswith('R'):
                preempts[prev] += 1
            for c in waiting.pop(cpu, []):
                if c.curr == prev:
                    c.ran_next = state.startswith('R') and nxt == c.wakee
            running[cpu] = nxt
        elif event == 'sched_wakeup':
            m = WAKEUP.search(body)
            if not m:
                continue
            wakee, target = int(m.group(1)), int(m.group(2))
            curr = running.get(target)
            if not curr or curr == wakee or slept_on.get(wakee) != target \
                    or curr not in vruntime or wakee not in vruntime:
                continue
            local = cpu == target
            c = Check((vruntime[curr] - vruntime[wakee]) / 1e6, wakee, curr, local,
                      local and pending_here, local and not pending_here and resched[cpu])
            checks.append(c)
            if not local:
                waiting.setdefault(target, []).append(c)
    return checks, comm, sleeps, preempts


def share(xs, test):
    return f"{sum(1 for c in xs if test(c)) / len(xs):.0%}" if xs else "-"


def line(name, checks, gran):
    if not checks:
        return f"  {name}: none"
    near = [c for c in checks if abs(c.lead) <= FAR_MS]
    far = len(checks) - len(near)
    if not near:
        return f"  {name}: {len(checks)}, every lead past +-{FAR_MS} ms"
    leads = [c.lead for c in near]
    own = [c for c in near if c.local and not c.pending]
    other = [c for c in near if not c.local and c.ran_next is not None]
    past = lambda xs: [c for c in xs if c.lead > gran]
    below = lambda xs: [c for c in xs if c.lead <= gran]
    return (f"  {name}: {len(checks)} ({far} leads past +-{FAR_MS} ms left out), lead mean {st.mean(leads):.2f} ms,"
            f" median {st.median(leads):.2f}, past {gran:g} ms {len(past(near)) / len(near):.0%};"
            f" on its own CPU, no resched pending: {len(own)}, the check set one past it"
            f" {share(past(own), lambda c: c.set_resched)}, below {share(below(own), lambda c: c.set_resched)};"
            f" a resched already pending: {sum(1 for c in near if c.pending)};"
            f" from the other CPU: {len(other)}, the wakee ran next past it"
            f" {share(past(other), lambda c: c.ran_next)}, below {share(below(other), lambda c: c.ran_next)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--gran-ms', type=float, default=2.0, help='the wakeup granularity (ms; 6.1 on 2 CPUs: 2)')
    ap.add_argument('--min-switches', type=int, default=100,
                    help='switches that make a hackbench task a worker (the parent has a few)')
    ap.add_argument('log')
    a = ap.parse_args()
    for label, events in read_runs(a.log).items():
        checks, comm, sleeps, preempts = checks_of(events)
        workers = {p for p in set(sleeps) | set(preempts)
                   if comm.get(p) == 'hackbench' and sleeps[p] + preempts[p] > a.min_switches}
        receivers = {p for p in workers if sleeps[p] > preempts[p]}
        senders = workers - receivers
        per_sleep = sum(preempts[p] for p in senders) / max(sum(sleeps[p] for p in receivers), 1)
        print(f"{label}: {len(receivers)} receivers, {len(senders)} senders;"
              f" a sender's preemptions per receiver sleep {per_sleep:.2f}")
        print(line("every wakeup onto a busy CPU", checks, a.gran_ms))
        print(line("a receiver onto a sender",
                   [c for c in checks if c.wakee in receivers and c.curr in senders], a.gran_ms))
        print(line("a receiver onto a receiver",
                   [c for c in checks if c.wakee in receivers and c.curr in receivers], a.gran_ms))


if __name__ == '__main__':
    main()
