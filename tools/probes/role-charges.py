#!/usr/bin/env python3
"""What the fair class charged hackbench's senders and receivers, run by run,
from a sched: trace with sched_stat_runtime, beside the same runs split at
their sched_switch lines.

Reads either a guest's serial log (tools/guest/guest-init.sh prints a
traced run's events as "TRACE label ...": tools/guest/runs-wakeup-lead-trace.txt)
or a schedlab trace (`--trace FILE --trace-stat-runtime`), one label per run.

A run of a task is its time from a sched_switch that puts it on a CPU to
the one that takes it off. Two ledgers of it:
- split at the switches: the time between the two lines;
- charged: the runtime of its sched_stat_runtime lines in between. In 4.0
  and 6.1 update_curr() charges on rq->clock, which __schedule() reads
  before it dequeues, so a whole switch is charged to the task arriving; a
  wakeup that preempts, or that wakes an idle CPU, skips the next clock
  update, so the wakee is charged from its enqueue (the preempted task's
  tail, or the idle exit). sched_stat_runtime fires in update_curr() for a
  task entity with the runtime it charged (include/trace/events/sched.h).
Runs are classed by role and by how they began: after the previous task
slept or was preempted, and that task's role. Roles, for hackbench's
workers (comm hackbench or sched-messaging, over --min-switches switches):
one that sleeps more often than it is preempted is a receiver, the others
senders (tools/guest/wakeup-lead.py's rule). A run's charge, less its
split time, is what the clock moved to or from it: a receiver that
preempts a sender gains the sender's tail, the sender loses it.

The first run of each task in the trace is left out (its charge before
the trace is unknown).

  tools/probes/role-charges.py [--min-switches N] TRACE
"""
import argparse
import collections
import re

from ftrace_text import read_runs

STAT = re.compile(r'pid=(\d+) runtime=(\d+) \[ns\]')
SWITCH = re.compile(r'prev_comm=(.*?) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)')
WORKERS = ('hackbench', 'sched-messaging')


def switch_of(body):
    """A sched_switch line's (prev comm, prev pid, prev state, next comm, next pid), or None."""
    m = SWITCH.search(body)
    if not m:
        return None
    pc, pp, ps, nc, np_ = m.groups()
    return pc, int(pp), ps, nc, int(np_)


def roles_of(events, min_switches):
    comm, switches, sleeps, preempted = {}, collections.Counter(), collections.Counter(), collections.Counter()
    for _, _, _, _, event, body in events:
        sw = switch_of(body) if event == 'sched_switch' else None
        if not sw:
            continue
        pc, pp, ps, nc, np_ = sw
        comm[pp], comm[np_] = pc, nc
        switches[pp] += 1
        (preempted if ps.startswith('R') else sleeps)[pp] += 1
    workers = [p for p in switches if comm.get(p, '').startswith(WORKERS) and switches[p] > min_switches]
    return {p: ('receiver' if sleeps[p] > preempted[p] else 'sender') for p in workers}


def ledgers(events, role):
    """(role, how the run began) -> [split ns, charged ns, runs]."""
    on_cpu = {}                               # cpu -> (pid, switch-in time, how it began)
    charged = collections.defaultdict(int)    # pid -> runtime since its switch-in
    seen = set()                              # pids whose first run is over
    out = collections.defaultdict(lambda: [0.0, 0, 0])
    for _, cpu, _, t, event, body in events:
        if event == 'sched_stat_runtime':
            m = STAT.search(body)
            if m:
                charged[int(m.group(1))] += int(m.group(2))
            continue
        sw = switch_of(body) if event == 'sched_switch' else None
        if not sw:
            continue
        _, pp, ps, _, np_ = sw
        if cpu in on_cpu:
            pid, t_in, began = on_cpu[cpu]
            if pid == pp and pid in role and pid in seen:
                cell = out[(role[pid], began)]
                cell[0] += (t - t_in) * 1e9
                cell[1] += charged[pid]
                cell[2] += 1
            seen.add(pp)
        how = 'preempted' if ps.startswith('R') else 'slept'
        prev = f"a {role[pp]}" if pp in role else 'another task'
        on_cpu[cpu] = (np_, t, f"after {prev} {how}")
        charged[np_] = 0
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--min-switches', type=int, default=100)
    ap.add_argument('trace')
    args = ap.parse_args()
    for label, events in read_runs(args.trace).items():
        role = roles_of(events, args.min_switches)
        if not role:
            continue
        counts = collections.Counter(role.values())
        print(f"{label}: {counts['receiver']} receivers, {counts['sender']} senders")
        totals = collections.defaultdict(lambda: [0.0, 0])
        for (r, began), (split, charge, n) in sorted(out_items(ledgers(events, role))):
            print(f"  {r:8s} {began:26s} runs {n:7d}  split {split / n / 1000:9.2f} us  "
                  f"charged {charge / n / 1000:9.2f} us  moved {(charge - split) / n / 1000:+7.2f} us")
            totals[r][0] += split
            totals[r][1] += charge
        split_all = sum(v[0] for v in totals.values())
        charge_all = sum(v[1] for v in totals.values())
        for r, (split, charge) in sorted(totals.items()):
            print(f"  {r}s' share: split {100 * split / split_all:.1f}%, charged {100 * charge / charge_all:.1f}%")


def out_items(cells):
    return [(k, tuple(v)) for k, v in cells.items() if v[2] > 0]


if __name__ == '__main__':
    main()
