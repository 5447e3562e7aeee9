"""Reads ftrace text into events by run, for the probe scripts beside it
(role-charges.py, write-tail.py, wakeup-remainder.py), and sums up their
spans (summary()).

Two layouts: a guest's serial log, where tools/guest/guest-init.sh prints
each traced run's lines as "TRACE label ...", and a plain trace file
(schedlab's --trace, or a kernel's trace), read as one run labelled
"trace". Each event is (pid, cpu, flags, time in s, event, body), pid
being the task the line was written in (the "comm-pid" field) and flags the
irqs-off/need-resched/context field ("d.h..", ".N...")."""
import collections
import re
import statistics

GUEST = re.compile(r'^TRACE (\S+)\s+(.*?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+): (.*)$')
PLAIN = re.compile(r'^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+): (.*)$')


def read_runs(path):
    """Events by label, in the file's order."""
    runs = collections.OrderedDict()
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('#'):
                continue
            m = GUEST.match(line)
            label, fields = (m.group(1), m.groups()[2:]) if m else ('trace', None)
            if not m:
                m = PLAIN.match(line)
                if not m:
                    continue
                fields = m.groups()[1:]
            pid, cpu, flags, t, event, body = fields
            runs.setdefault(label, []).append((int(pid), int(cpu), flags, float(t), event, body))
    return runs


def summary(name, xs, digits=2):
    """A span's count, the mean of its values up to the 90th percentile
    (interrupts and switches stretch a few by tens of microseconds), the
    median and the 90th percentile, in us, the mean to `digits` places."""
    if not xs:
        return f"  {name:44s} none"
    xs = sorted(xs)
    kept = xs[:max(1, int(0.9 * len(xs)))]
    width = digits + 4
    return (f"  {name:44s} {len(xs):7d}  mean to p90 {statistics.mean(kept):{width}.{digits}f} us  "
            f"median {statistics.median(xs):{width - 1}.{digits - 1}f}  "
            f"p90 {xs[int(0.9 * (len(xs) - 1))]:{width - 1}.{digits - 1}f}")
