#!/usr/bin/env python3
"""Where hackbench's workers start, and what wakes kernel threads, from traces.

tools/guest/guest-init.sh prints the first lines of a run's sched: trace as
"TRACE label ..." (its "trace N:EVENTS" runs). For each label this prints:
- the workers' roles in fork order (rt-tests hackbench forks a group's
  receivers, then its senders: R0.., S0..);
- the wakeups of kernel threads that the benchmark's parent was charged
  with before its first fork: record_wakee() counts a wakeup made from an
  interrupt as a flip of the task the interrupt interrupted (from v4.7
  only an unbound thread's: select_task_rq() skips a bound one), and fork
  copies the parent's flips to every worker;
- where the GO (each worker's first placement after the last fork) put
  the workers: pulled onto the CPU the parent ran on, where wake_affine()
  takes a sync wakeup, or left on their previous CPU, where a wide one
  (wake_wide()) stays;
- the first wakeups and migrations of workers, each with the task current
  when it happened (for a wakeup queued to another CPU, whichever task ran
  there when the IPI arrived);
- each worker's CPU in successive windows: the CPU it ran on most (from
  sched_switch) or, traced without switches, where its fork and its
  migrations last put it;
- with --kthreads, the wakeups of tasks other than the workers and the
  parent: by wakee, by context (an interrupt, or a task's own call), and by
  the task they were charged to, with the rate over the traced span.
A schedlab trace (--trace FILE) is read with --schedlab FILE, so the
model's start and the kernel's can be set side by side.

  tools/guest/trace-layout.py [--fds F] [--events N] [--windows MS,..] [--kthreads] LOG...
  tools/guest/trace-layout.py --fds F --schedlab TRACE
"""
import argparse
import collections
import re

LINE = re.compile(r'^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<flags>\S+)\s+(?P<t>[\d.]+): '
                  r'(?P<ev>\w+): (?P<rest>.*)$')
FIELD = re.compile(r'(\w+)=(\S+)')


class Event:
    __slots__ = ('ev', 't', 'cpu', 'pid', 'comm', 'irq', 'f')

    def __init__(self, m):
        self.ev, self.t, self.cpu, self.pid, self.comm = m['ev'], float(m['t']), int(m['cpu']), int(m['pid']), m['comm']
        # ftrace's hardirq/softirq column (h, s, H); schedlab's trace has none
        self.irq = len(m['flags']) > 2 and m['flags'][2] in 'hHsZz'
        self.f = dict(FIELD.findall(m['rest']))

    def subject(self):
        return int(self.f.get('pid', self.f.get('child_pid', -1)))


def parse(lines):
    return [Event(m) for m in map(LINE.match, lines) if m]


def generic(comm):
    return re.sub(r'\d+', 'N', comm)


def bound(comm):
    """A per-CPU kernel thread (kthread_bind()), which select_task_rq() never
    places, so from v4.7 its wakeup is no flip of its waker."""
    return re.match(r'^(kworker/\d+:\d+H?|ksoftirqd/\d+|migration/\d+|cpuhp/\d+|watchdog/\d+)$', comm) is not None


def flips(wakees):
    """record_wakee(): a flip for each change of wakee (the one before the
    first is not traced, so the first counts)."""
    return sum(1 for i, w in enumerate(wakees) if i == 0 or w != wakees[i - 1])


def go(events, parent, role):
    """The GO: each worker's first placement after the parent's last fork. A
    sync wakeup that wake_affine() takes pulls the worker onto the CPU the
    parent runs on; a wide one (wake_wide()) keeps its previous CPU."""
    t_forked = max(e.t for e in events if e.ev == 'sched_process_fork' and e.pid == parent)
    parent_cpu, at_go, seen = None, None, {}
    for e in events:
        if e.pid == parent:
            parent_cpu = e.cpu
        p = e.subject()
        if e.t <= t_forked or p not in role or p in seen:
            continue
        if e.ev == 'sched_migrate_task':
            seen[p] = (int(e.f['orig_cpu']), int(e.f['dest_cpu']), parent_cpu)
        elif e.ev == 'sched_wakeup':
            seen[p] = (int(e.f['target_cpu']), int(e.f['target_cpu']), parent_cpu)
        else:
            continue
        at_go = at_go if at_go is not None else parent_cpu
    pulled = sum(1 for prev, new, pc in seen.values() if new != prev and new == pc)
    stayed = sum(1 for prev, new, pc in seen.values() if new == prev)
    forked_on = next(e.cpu for e in events if e.ev == 'sched_process_fork' and e.pid == parent)
    # A child's ready write that woke the parent may have moved it (a sync
    # wakeup onto a CPU running only the waker): then the workers it left
    # on their previous CPU are on the parent's too.
    first_fork = next(e.t for e in events if e.ev == 'sched_process_fork' and e.pid == parent)
    t_go = min((e.t for e in events if e.t > t_forked and e.subject() in role
                and e.ev in ('sched_migrate_task', 'sched_wakeup')), default=t_forked)
    moved = any(e.ev == 'sched_migrate_task' and e.subject() == parent and first_fork <= e.t <= t_go for e in events)
    print(f'  the parent forked on cpu{forked_on}, ran the GO on cpu{at_go}{" (moved)" if moved else ""}; the GO placed '
          f'{len(seen)} workers: {pulled} pulled onto the parent\'s CPU, {stayed} left on their previous CPU, '
          f'{len(seen) - pulled - stayed} moved elsewhere')


def report(label, events, a, fds=None):
    fds = fds or a.fds
    windows = [float(w) for w in a.windows.split(',')]
    by_parent = collections.defaultdict(list)
    for e in events:
        if e.ev == 'sched_process_fork':
            by_parent[e.pid].append(int(e.f['child_pid']))
    if not by_parent:
        print(f'{label}: no forks in the trace')
        if a.kthreads:
            kthread_wakeups(events, {}, None)
        return
    # The workers: the last 2*fds children of the task that forked most.
    parent = max(by_parent, key=lambda p: len(by_parent[p]))
    kids = by_parent[parent][-2 * fds:]
    role = {p: ('R%d' % i if i < fds else 'S%d' % (i - fds)) for i, p in enumerate(kids)}
    t0 = min(e.t for e in events if e.ev == 'sched_process_fork' and e.pid == parent and int(e.f['child_pid']) in role)
    print(f'{label}: parent {parent}, workers {" ".join(f"{role[p]}={p}" for p in kids)}')

    wake_ev = 'sched_waking' if any(e.ev == 'sched_waking' for e in events) else 'sched_wakeup'
    if not any(e.ev == wake_ev for e in events):
        print('  wakeups not traced')
    else:
        # With sched_wakeup (not sched_waking) a wakeup queued from another
        # CPU shows the task current where it arrived, not its waker: only
        # wakeups on the parent's own CPU are read as charged to it.
        charged = [e.f['comm'] for e in events if e.ev == wake_ev and e.pid == parent and e.t < t0
                   and e.subject() not in role and int(e.f.get('target_cpu', e.cpu)) == e.cpu]
        print(f'  before its first fork the parent was charged with {len(charged)} wakeups of kernel threads: '
              + (', '.join(generic(c) + (' (bound)' if bound(c) else '') for c in charged) or '-')
              + f'; as flips {flips(charged)} on 4.0, {flips([c for c in charged if not bound(c)])} from v4.7, '
              'on top of what its shell left it')
        go(events, parent, role)

    shown = 0
    for e in events:
        if shown >= a.events:
            break
        p = e.subject()
        if p not in role or e.ev not in ('sched_wakeup', 'sched_wakeup_new', 'sched_migrate_task'):
            continue
        who = role.get(e.pid, f'pid{e.pid}')
        if e.ev == 'sched_migrate_task':
            what = f'moves {role[p]} cpu{e.f["orig_cpu"]} -> cpu{e.f["dest_cpu"]}'
        else:
            what = f'{"forks" if e.ev == "sched_wakeup_new" else "wakes"} {role[p]} -> cpu{int(e.f["target_cpu"])}'
        print(f'  {1e3 * (e.t - t0):8.3f} ms  {who:>6} on cpu{e.cpu} {what}')
        shown += 1

    edges = [t0 + w / 1e3 for w in windows]
    starts = [t0] + edges[:-1]
    if any(e.ev == 'sched_switch' for e in events):
        run = collections.defaultdict(float)
        cur = {}
        for e in events:
            if e.ev != 'sched_switch':
                continue
            if e.cpu in cur:
                p, since = cur[e.cpu]
                if p in role:
                    for lo_edge, hi_edge in zip(starts, edges):
                        lo, hi = max(since, lo_edge), min(e.t, hi_edge)
                        if hi > lo:
                            run[(p, lo_edge, e.cpu)] += hi - lo
            cur[e.cpu] = (int(e.f['next_pid']), e.t)
        cpus = sorted({k[2] for k in run})
        for lo_edge, hi_edge in zip(starts, edges):
            cells = []
            for p in kids:
                times = [run[(p, lo_edge, c)] for c in cpus]
                cells.append(f'{role[p]}:cpu{cpus[times.index(max(times))]}' if times and max(times) > 0
                             else f'{role[p]}:-')
            print(f'  {1e3 * (lo_edge - t0):6.0f}-{1e3 * (hi_edge - t0):.0f} ms on  ' + ' '.join(cells))
    else:
        where = {}
        placements = [(e.t, e.subject(), int(e.f.get('target_cpu', e.f.get('dest_cpu', -1)))) for e in events
                      if e.ev in ('sched_wakeup_new', 'sched_migrate_task') and e.subject() in role]
        i = 0
        for lo_edge, hi_edge in zip(starts, edges):
            moves = 0
            while i < len(placements) and placements[i][0] <= hi_edge:
                t, p, c = placements[i]
                moves += p in where and where[p] != c
                where[p] = c
                i += 1
            cells = ' '.join(f'{role[p]}:cpu{where[p]}' if p in where else f'{role[p]}:-' for p in kids)
            print(f'  at {1e3 * (hi_edge - t0):6.0f} ms  {cells}  ({moves} moves since {1e3 * (lo_edge - t0):.0f} ms)')

    if a.kthreads:
        kthread_wakeups(events, role, parent)


def kthread_wakeups(events, role, parent):
    """The wakeups of tasks other than the workers, the parent and the shell."""
    if not events:
        print('  no events')
        return
    span = events[-1].t - events[0].t
    count = collections.Counter()
    for e in events:
        if e.ev != 'sched_wakeup' or e.subject() in role or e.subject() == parent:
            continue
        if e.f['comm'] in ('init', 'sh'):
            continue  # the guest's shell, woken at its own pace
        to = ('a worker' if e.pid in role else 'the parent' if e.pid == parent else
              'hackbench' if e.comm == 'hackbench' else 'idle' if e.pid == 0 else generic(e.comm))
        count[(generic(e.f['comm']), 'irq' if e.irq else 'task', to)] += 1
    total = sum(count.values())
    print(f'  kernel-thread wakeups: {total} in {span:.3f} s ({total / span:.1f}/s)')
    for (wakee, ctx, to), n in sorted(count.items(), key=lambda x: -x[1]):
        print(f'    {wakee:<14} from {ctx:<4} charged to {to:<10} {n:5d}  ({n / span:.1f}/s)')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('logs', nargs='*')
    ap.add_argument('--fds', type=int, default=2,
                    help="hackbench -f: receivers (and senders) a group, where the log's CMD line does not say")
    ap.add_argument('--events', type=int, default=30, help='how many worker wakeups and migrations to list')
    ap.add_argument('--windows', default='5,50,500,2000', help='window ends, ms after the first fork')
    ap.add_argument('--kthreads', action='store_true', help='summarise the wakeups of other tasks')
    ap.add_argument('--schedlab', help='a schedlab --trace file instead of guest logs')
    a = ap.parse_args()
    if a.schedlab:
        with open(a.schedlab) as fh:
            report(a.schedlab, parse(fh), a)
    for log in a.logs:
        runs, fds = collections.defaultdict(list), {}
        with open(log, errors='replace') as fh:
            for line in fh:
                if line.startswith('TRACE '):
                    _, label, rest = line.rstrip('\n').split(' ', 2)
                    runs[label].append(rest)
                elif line.startswith('CMD '):  # the run's own hackbench -f
                    words = line.split()
                    if '-f' in words[2:-1]:
                        fds[words[1]] = int(words[words.index('-f') + 1])
        for label, lines in runs.items():
            report(label, parse(lines), a, fds.get(label))


if __name__ == '__main__':
    main()
