#!/usr/bin/env python3
"""How far ahead a woken task is of the task it finds running, and whether it
preempts it, from a guest's sched: trace.

tools/guest/guest-init.sh prints a traced run's events as "TRACE label ..."
(its "trace N:EVENTS" runs; tools/guest/runs-wakeup-lead-trace.txt). With
sched_wakeup, sched_switch and sched_stat_runtime traced, for each wakeup
onto a CPU running another task this takes:
- for a wakeup back onto the CPU the wakee slept on (vruntimes compare
  only within one runqueue), the lead: the running task's vruntime at the
  wakeup check minus the
  wakee's at its sleep. 6.1's check_preempt_wakeup() calls update_curr()
  before wakeup_preempt_entity(), and update_curr() emits
  sched_stat_runtime with the entity's vruntime (kernel/sched/fair.c), so
  the running task's last sched_stat_runtime before the sched_wakeup line
  is its vruntime at the check; the wakee's last one is its vruntime when
  it was dequeued. place_entity() may raise the wakee's vruntime to
  min_vruntime - sched_latency/2, which the trace does not show, so the
  lead is an upper bound (a sleep shorter than that never is raised);
- whether the wakee preempted: the next switch on that CPU puts the
  running task out runnable (prev_state R) in favour of the wakee.
Roles, for hackbench's workers: a worker (comm hackbench, over
--min-switches switches, 100) that sleeps more often than it is preempted is a receiver, the
others senders. Per label it prints a sender's preemptions per receiver
sleep, and for every wakeup onto a busy CPU, receivers woken onto a
sender and receivers woken onto a receiver: how many, the lead's mean and
median, the share past the wakeup granularity, and how many preempted
(past it and not).

  tools/guest/wakeup-lead.py [--gran-ms G] [--min-switches N] LOG
"""
import argparse
import collections
import re
import statistics as st

LINE = re.compile(r'^TRACE (\S+)\s+(.*?)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')
STAT = re.compile(r'pid=(\d+) runtime=(\d+) \[ns\] vruntime=(\d+)')
SWITCH = re.compile(r'prev_comm=(.*?) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)')
WAKEUP = re.compile(r'pid=(\d+) .*target_cpu=(\d+)')


def read_runs(path):
    runs = collections.OrderedDict()
    with open(path, errors='replace') as f:
        for line in f:
            m = LINE.match(line.rstrip('\n'))
            if m:
                runs.setdefault(m.group(1), []).append((int(m.group(3)), m.group(5), m.group(6)))
    return runs


def checks_of(events):
    """(lead_ms, preempted, wakee, running) per wakeup onto a busy CPU, and
    each task's comm, sleeps and preemptions."""
    vruntime, running, comm, slept_on = {}, {}, {}, {}
    sleeps, preempts = collections.Counter(), collections.Counter()
    waiting = {}  # cpu -> wakeups not yet followed by a switch there
    checks = []
    for cpu, event, body in events:
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
            for wakee, curr, lead in waiting.pop(cpu, []):
                if curr == prev:
                    checks.append((lead, state.startswith('R') and nxt == wakee, wakee, curr))
            running[cpu] = nxt
        elif event == 'sched_wakeup':
            m = WAKEUP.search(body)
            if not m:
                continue
            wakee, target = int(m.group(1)), int(m.group(2))
            curr = running.get(target)
            # Vruntimes compare within one runqueue: a wakee moved to another
            # CPU has its vruntime renormalised there (migrate_task_rq_fair()).
            if not curr or curr == wakee or slept_on.get(wakee) != target \
                    or curr not in vruntime or wakee not in vruntime:
                continue
            waiting.setdefault(target, []).append((wakee, curr, (vruntime[curr] - vruntime[wakee]) / 1e6))
    return checks, comm, sleeps, preempts


def line(name, checks, gran):
    if not checks:
        return f"  {name}: none"
    # A vruntime last printed before a move (a dequeue that ran no time
    # prints none) sets a lead off by the runqueues' distance: left out of
    # the mean past +-50 ms, and counted.
    leads = [c[0] for c in checks if abs(c[0]) <= 50]
    far = len(checks) - len(leads)
    past = [c for c in checks if c[0] > gran]
    rest = [c for c in checks if c[0] <= gran]
    share = lambda xs: f"{sum(1 for c in xs if c[1]) / len(xs):.0%}" if xs else "-"
    return (f"  {name}: {len(checks)}, lead mean {st.mean(leads):.2f} ms ({far} past +-50 ms left out),"
            f" median {st.median([c[0] for c in checks]):.2f},"
            f" past {gran:g} ms {len(past) / len(checks):.0%}; preempted {share(checks)}"
            f" (past it {share(past)}, the rest {share(rest)})")


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
        print(line("a receiver onto a sender", [c for c in checks if c[2] in receivers and c[3] in senders],
                   a.gran_ms))
        print(line("a receiver onto a receiver", [c for c in checks if c[2] in receivers and c[3] in receivers],
                   a.gran_ms))


if __name__ == '__main__':
    main()
