#!/usr/bin/env python3
"""A change's effect interval by interval, from schedlab's -I lines.

    interval-gain.py [--spans 1,2-9] BASE.iv PATCH.iv [BASE.iv PATCH.iv ...]

Each pair is the stderr of two runs that differ only in the change (same
machine, benchmark and seed), written with `-I MS` (`--interval-ms`), e.g.

    schedlab perf bench sched pipe --instances 16 --seed 1 -I 1000 2> base.iv
    schedlab perf bench sched pipe --instances 16 --seed 1 -I 1000 \\
        --features WAKE_IDLE_CPU 2> patch.iv

For a benchmark whose rate is its wakeups (a pipe round trip is two), the
change in wakeups an interval is the change in its rate there: a figure over
a whole run averages a launch that settles with a layout that drifts, and
this shows which part the change gains in. Per interval it prints the
change's mean over the pairs with its 95% interval (Student's t), and, on an
SMT machine, both runs' layout: the share of wakeups between one core's two
threads and the share of busy time run beside a busy sibling (the lines'
`smt_pair_wakeups`, `busy_us` and `smt_shared_us`), and their migrations.
Only intervals that every run completed are used (a run's last, partial line
is not); `--spans` sums intervals (1-based, inclusive) before comparing.
`--causes` adds, for each span (all intervals without --spans), the
migrations by cause a run, base against patch, with the moves of each cause
that put a task on the core of the task it last woke (+) and that took it
off (-): which code gathers a waker-wakee pair and which splits it (lines
written since stop 90).
"""
import argparse
import math
import re
import statistics
import sys

# Two-sided 95% Student's t by degrees of freedom; between the entries the
# next lower one (wider, so safe); beyond 120 the normal's.
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
       18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t95(df):
    return T95[max(k for k in T95 if k <= df)] if df <= 120 else 1.960


def read_lines(path):
    """The interval lines of one run: end time (ns), wakeups, migrations and
    the SMT layout fields (None without SMT), full intervals only, and the
    interval's length in ns. The first line's end is the length, so a run
    needs two lines (a run shorter than one interval has one, partial)."""
    rows = []
    for line in open(path):
        if line.startswith('#') or not line.strip():
            continue
        f = line.split()
        try:
            row = {'end_ns': round(float(f[0]) * 1e9), 'wakeups': int(f[3]), 'migrations': int(f[5])}
        except (ValueError, IndexError):
            sys.exit(f'interval-gain: {path}: not an -I line: {line.strip()[:80]}')
        for name in ('smt_pair_wakeups', 'busy_us', 'smt_shared_us'):
            m = re.search(r' ' + name + r'=(\d+)', line)
            row[name] = int(m.group(1)) if m else None
        # "sleeps; cause=moves/+onto/-off ...; policy counters | layout"
        sections = line.split(';')
        row['causes'] = None
        if len(sections) >= 3:
            fields = [re.fullmatch(r'(\w+)=(\d+)/\+(\d+)/-(\d+)', tok) for tok in sections[1].split()]
            if not all(fields):
                sys.exit(f'interval-gain: {path}: not a cause=moves/+onto/-off field in: {sections[1].strip()[:80]}')
            row['causes'] = {m[1]: (int(m[2]), int(m[3]), int(m[4])) for m in fields}
        rows.append(row)
    if len(rows) < 2:
        sys.exit(f'interval-gain: {path}: fewer than two interval lines')
    width = rows[0]['end_ns']
    return [r for r in rows if r['end_ns'] % width == 0], width


def summed(rows, lo, hi):
    part = rows[lo:hi]
    total = {k: sum(r[k] for r in part) if all(r[k] is not None for r in part) else None
             for k in ('wakeups', 'migrations', 'smt_pair_wakeups', 'busy_us', 'smt_shared_us')}
    return total


def causes_summed(rows):
    """cause -> [moves, onto, off] summed over rows."""
    total = {}
    for r in rows:
        for cause, counts in r['causes'].items():
            acc = total.setdefault(cause, [0, 0, 0])
            for k in range(3):
                acc[k] += counts[k]
    return total


def print_causes(pairs, lo, hi):
    runs = len(pairs)
    base = [causes_summed(b[lo - 1:hi]) for b, _ in pairs]
    patch = [causes_summed(p[lo - 1:hi]) for _, p in pairs]

    def mean(per_run, cause):
        return [sum(r.get(cause, [0, 0, 0])[k] for r in per_run) / runs for k in range(3)]

    print(f'# intervals {lo}-{hi}: migrations by cause, the mean a run (+ onto, - off the core of the task it last woke)')
    print(f'# {"cause":<22} {"base":>8}'.ljust(48) + f' {"patch":>8}')
    for cause in sorted(set().union(*base, *patch)):
        b, p = mean(base, cause), mean(patch, cause)
        print(f'  {cause:<22} {b[0]:8.1f} (+{b[1]:.1f} -{b[2]:.1f})'.ljust(48) + f' {p[0]:8.1f} (+{p[1]:.1f} -{p[2]:.1f})')


def changes(pairs):
    """The patch's change in wakeups, in %, for each pair whose base had any."""
    return [100 * (p['wakeups'] / b['wakeups'] - 1) for b, p in pairs if b['wakeups']]


def mean_ci(values):
    if not values:
        return float('nan'), float('nan')
    m = statistics.mean(values)
    if len(values) < 2:
        return m, float('nan')
    return m, t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


def layout(runs):
    """Mean over runs of the pair share and the shared share, in %."""
    pairs = [100 * r['smt_pair_wakeups'] / r['wakeups'] for r in runs if r['smt_pair_wakeups'] is not None and r['wakeups']]
    shared = [100 * r['smt_shared_us'] / r['busy_us'] for r in runs if r['smt_shared_us'] is not None and r['busy_us']]
    if not pairs or not shared:
        return '           -'
    return f'{statistics.mean(pairs):5.1f} {statistics.mean(shared):5.1f}'


def parse_spans(text, n):
    spans = []
    for part in text.split(','):
        lo, _, hi = part.partition('-')
        try:
            lo, hi = int(lo), int(hi or lo)
        except ValueError:
            sys.exit(f'interval-gain: span {part} is not N or N-M')
        if lo > hi:
            sys.exit(f'interval-gain: span {part} runs backwards')
        if not 1 <= lo <= hi <= n:
            sys.exit(f'interval-gain: span {part} is outside the {n} intervals every run completed')
        spans.append((lo, hi))
    return spans


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--spans', help='intervals to sum, e.g. 1,2-9 (1-based, inclusive)')
    ap.add_argument('--causes', action='store_true',
                    help='also the migrations by cause, and the moves onto and off the last wakee\'s core')
    ap.add_argument('files', nargs='+', help='BASE.iv PATCH.iv pairs')
    a = ap.parse_args()
    if len(a.files) % 2:
        sys.exit('interval-gain: give the runs in pairs, BASE.iv PATCH.iv')
    pairs, width = [], None
    for base, patch in zip(a.files[0::2], a.files[1::2]):
        (b, wb), (p, wp) = read_lines(base), read_lines(patch)
        if wb != wp or (width is not None and wb != width):
            sys.exit(f'interval-gain: {base} and {patch} use other intervals than the first pair')
        width = wb
        pairs.append((b, p))
    n = min(min(len(b), len(p)) for b, p in pairs)
    if n == 0:
        sys.exit('interval-gain: no interval that every run completed')
    spans = parse_spans(a.spans, n) if a.spans else []
    print(f'# {len(pairs)} pairs of runs, intervals of {width / 1e9:g} s; the change in wakeups, patch against base,')
    print('# the mean over the pairs with its 95% interval; layout: % of wakeups between a core\'s threads,')
    print('# % of busy time beside a busy sibling; migrations: the mean per run')
    print(f'# {"end":>8} {"change":>8} {"+-":>6}   {"base layout":>11}  {"patch layout":>11}  {"migrations":>13}')
    for i in range(n):
        m, ci = mean_ci(changes([(b[i], p[i]) for b, p in pairs]))
        mig_b = statistics.mean(b[i]['migrations'] for b, _ in pairs)
        mig_p = statistics.mean(p[i]['migrations'] for _, p in pairs)
        print(f'  {(i + 1) * width / 1e9:8.3f} {m:+7.2f}% {ci:6.2f}   {layout([b[i] for b, _ in pairs])}  '
              f'{layout([p[i] for _, p in pairs])}  {mig_b:6.0f} {mig_p:6.0f}')
    if spans:
        print('# spans: the same over the summed intervals, and each pair\'s change')
        for lo, hi in spans:
            sums = [(summed(b, lo - 1, hi), summed(p, lo - 1, hi)) for b, p in pairs]
            change = changes(sums)
            m, ci = mean_ci(change)
            print(f'  {lo:>3}-{hi:<4} {m:+7.2f}% {ci:6.2f}   {layout([b for b, _ in sums])}  '
                  f'{layout([p for _, p in sums])}  ' + ' '.join(f'{c:+.1f}' for c in change))
    if a.causes:
        if any(r['causes'] is None for b, p in pairs for r in b[:n] + p[:n]):
            sys.exit('interval-gain: --causes needs lines with the migrations by cause (schedlab since stop 90)')
        for lo, hi in spans or [(1, n)]:
            print_causes(pairs, lo, hi)


if __name__ == '__main__':
    main()
