#!/usr/bin/env python3
"""Reads the serial log of a tools/guest/run.sh boot, or of several
(analyze.py LOG...: each run's label then gets its log's number, 1:, 2:, and
the PAIRS lines pool the pairs of every log). The guest's SNAP blocks: per worker /proc/PID/sched and /proc/PID/stat at
two instants A and B of a run. Workers in pid order, per group of 2 x fds
(-f, 20 by default): the first fds are receivers (perf's and hackbench's
group() fork them first), the next fds senders.
Prints per run: switches a message over the whole run, and in the window:
each role's share of the time on a CPU (se.sum_exec_runtime), its voluntary
and involuntary switches, its run and its wait per arrival on a CPU
(schedstat's wait_sum and wait_count, as schedlab's "time on a CPU by role"
line), and per CPU the senders' mean vruntime minus the receivers' at A and
at B (tasks by the CPU they last ran on). A boot with CTXT_EVERY (run.sh)
adds the machine's switches a second between its samples over the run;
one of the -io kernel (guest-kernel-io.config), whose snapshots hold each
worker's /proc/.../io, the window's switches a message over the messages
the senders wrote in it (their write calls), each sender's count, and
the senders' totals at B (which include hackbench's one-byte ready write),
and a sender's cost a message: its time on a CPU in the window over its
messages there (tools/probes/hackbench-snapshots.sh takes the same snapshots
of a native run). Where the
guest logged /proc/schedstat around a run (SCHEDSTAT lines), also the
delay per arrival on a CPU and the wakeup-placement counts (see
placement()). perf bench sched pipe's runs are read per round trip (op)."""
import re, sys, collections
runs, snaps, cur = collections.OrderedDict(), {}, None
def read_log(path, boot):
    """The log's text; with several logs each run's label is prefixed with
    its log's number (1:, 2:, ...), so that runs of several boots stay apart."""
    text = open(path, errors='replace').read().replace('\r', '')
    if boot is None: return text
    return re.sub(r'^(CMD|RUN|SNAP [AB]|SCHEDSTAT [AB]|CTXT) (\S+)', lambda m: f'{m.group(1)} {boot}:{m.group(2)}', text,
                  flags=re.M)
logs = sys.argv[1:]
text = '\n'.join(read_log(path, i + 1 if len(logs) > 1 else None) for i, path in enumerate(logs))
commands, schedstat = {}, {}
ctxt_series = collections.defaultdict(list)  # label: (uptime, ctxt), from CTXT_EVERY's sampler
for line in text.split('\n'):
    m = re.match(r'CTXT (\S+) (\S+) (\d+)$', line)
    if m: ctxt_series[m.group(1)].append((float(m.group(2)), int(m.group(3)))); continue
    m = re.match(r'CMD (\S+) (.*)', line)
    if m: commands[m.group(1)] = m.group(2).split(); continue
    m = re.match(r'RUN (\S+) feats=(\S+) kids=(\d+) ctxt_total=(\d+) ctxt_window=(\d+) tA=(\S+) tB=(\S+)\s*(?:(?:Total time|Time): (\S+))?', line)
    if m:
        runs[m.group(1)] = dict(feats=m.group(2), ctxt=int(m.group(4)), ctxt_window=int(m.group(5)),
                                tA=float(m.group(6)), tB=float(m.group(7)),
                                total=m.group(8) or '?'); continue
    m = re.match(r'SCHEDSTAT ([AB]) (\S+) cpu(\d+) (.*)', line)
    if m: schedstat.setdefault((m.group(1), m.group(2)), {})[int(m.group(3))] = [int(x) for x in m.group(4).split()]; continue
    m = re.match(r'SNAP ([AB]) (\S+)', line)
    if m: cur = snaps.setdefault((m.group(1), m.group(2)), {}); pid = None; continue
    if line.startswith('SNAP END'): cur = None; continue
    if cur is None: continue
    m = re.match(r'\S+ \((\d+), #threads', line)
    if m: pid = int(m.group(1)); cur[pid] = {}; continue
    m = re.match(r'(se\.sum_exec_runtime|se\.vruntime|se\.nr_migrations|nr_voluntary_switches|nr_involuntary_switches|wait_sum|wait_count)\s+:\s+(\S+)', line)
    if m and pid: cur[pid][m.group(1)] = float(m.group(2)); continue
    m = re.match(r'(wchar|syscw): (\d+)$', line)  # /proc/.../io, after the worker's sched file
    if m and pid: cur[pid][m.group(1)] = int(m.group(2)); continue
    f = line.split()
    if len(f) > 39 and f[0].isdigit() and int(f[0]) in cur: cur[int(f[0])]['cpu'] = int(f[38]); cur[int(f[0])]['nice'] = int(f[18])
def option(label, names, default):
    """The value of a -x N, --name N, --name=N or -xN option in the run's command."""
    argv = commands.get(label, [])
    for i, a in enumerate(argv):
        for n in names:
            if a == n and i + 1 < len(argv): return int(argv[i + 1])
            if n.startswith('--') and a.startswith(n + '='): return int(a.split('=', 1)[1])
            if not n.startswith('--') and a.startswith(n) and a[len(n):].isdigit(): return int(a[len(n):])
    return default
def num_fds(label):
    return option(label, ['-f', '--fds'], 20)
def messages(label):
    """perf bench sched messaging and hackbench (both default to 10 groups,
    100 loops, 20 fds): groups x fds x fds x loops; perf bench sched pipe's
    round trips (-l, 1000000 by default)."""
    if 'pipe' in commands.get(label, []): return option(label, ['-l', '--loop'], 1000000)
    return (option(label, ['-g', '--group', '--groups'], 10) * num_fds(label) ** 2 *
            option(label, ['-l', '--loops', '--nr_loops'], 100))
def unit(label):
    return 'op' if 'pipe' in commands.get(label, []) else 'msg'
def placement(label):
    """From /proc/schedstat's per-CPU lines around the run: the taskstats
    delay per arrival on a CPU (run_delay / pcount, the seed's statistic),
    and on the patched kernel of tools/guest/build-kernel.sh the wakeups per
    message whose fast path chose a busy CPU, whose final CPU was busy while
    another allowed CPU idled, and that the WAKE_IDLE_CPU fall-through moved
    to an idle CPU."""
    A, B = schedstat.get(('A', label)), schedstat.get(('B', label))
    if not A or not B: return ''
    d = [sum(B[c][i] - A[c][i] for c in B) for i in range(min(len(v) for v in list(A.values()) + list(B.values())))]
    # fields: yld 0 sched goidle ttwu ttwu_local cpu_time run_delay pcount [fast_busy busy_while_idle found]
    n, u = messages(label), unit(label)
    figures.setdefault(label, {})['delay/arrival us'] = d[7] / max(d[8], 1) / 1000
    out = f"  delay/arrival {d[7] / max(d[8], 1) / 1000:.1f} us, wakeups/{u} {d[4] / n:.3f}"
    if len(d) >= 12:
        out += f", fast-path busy/{u} {d[9] / n:.4f}, busy while one idles/{u} {d[10] / n:.4f}, moved to idle/{u} {d[11] / n:.4f}"
    return out
figures = {}  # label: the figures a pair compares
for label, r in runs.items():
    if r['total'] != '?': figures.setdefault(label, {})['time s'] = float(r['total'])
    figures.setdefault(label, {})[f'sw/{unit(label)}'] = r['ctxt'] / messages(label)
    line = f"{label:8s} {r['feats']:22s} {r['total']:>6s} s {r['ctxt'] / messages(label):.3f} sw/{unit(label)}" + placement(label)
    series = ctxt_series.get(label, [])
    if len(series) > 1:  # the machine's switches a second between samples, thousands
        line += '  switches k/s ' + ' '.join(f"{(b[1] - a[1]) / max(b[0] - a[0], 1e-9) / 1000:.1f}"
                                             for a, b in zip(series, series[1:]))
    A, B = snaps.get(('A', label)), snaps.get(('B', label))
    if A is None or B is None: print(line); continue  # not sampled (warm 0)
    if not A or not B: print(line, ' a snapshot found no worker: the run ended before it (shorten warm or window)'); continue
    keys = ('se.sum_exec_runtime', 'se.vruntime', 'nr_voluntary_switches', 'nr_involuntary_switches', 'cpu')
    pids = sorted(p for p in set(A) & set(B) if all(k in A[p] and k in B[p] for k in keys))
    if not pids: print(line, ' no worker in both snapshots'); continue
    fds = num_fds(label)
    if len(pids) % (2 * fds): print(line, f' {len(pids)} workers in both snapshots'); continue
    role = {p: ('recv' if i % (2 * fds) < fds else 'send') for i, p in enumerate(pids)}
    d = collections.defaultdict(lambda: [0.0, 0, 0, 0, 0.0, 0])
    for p in pids:
        d[role[p]][0] += B[p]['se.sum_exec_runtime'] - A[p]['se.sum_exec_runtime']
        d[role[p]][1] += B[p]['nr_voluntary_switches'] - A[p]['nr_voluntary_switches']
        d[role[p]][2] += B[p]['nr_involuntary_switches'] - A[p]['nr_involuntary_switches']
        d[role[p]][3] += B[p].get('se.nr_migrations', 0) - A[p].get('se.nr_migrations', 0)
        # schedstat's wait (enqueue or preemption to the pick, on rq_clock)
        d[role[p]][4] += B[p].get('wait_sum', 0) - A[p].get('wait_sum', 0)
        d[role[p]][5] += B[p].get('wait_count', 0) - A[p].get('wait_count', 0)
    # The messages sent in the window, from the senders' write calls (one
    # message a call: rt-tests' and perf's senders write DATASIZE at once).
    if all('syscw' in S[p] for S in (A, B) for p in pids if role[p] == 'send'):
        each = [B[p]['syscw'] - A[p]['syscw'] for p in pids if role[p] == 'send']
        sent = sum(each)
        if sent > 0:
            # how evenly the senders progress: their messages in the window, and
            # their totals at B (a laggard finishes alone, at the run's end)
            totals = [B[p]['syscw'] for p in pids if role[p] == 'send']
            line += (f"  window: {r['ctxt_window'] / sent:.3f} sw/msg over {sent} messages,"
                     f" a sender's {min(each)}-{max(each)}, totals at B {min(totals)}-{max(totals)}")
            # what a message costs each sender: its time on a CPU in the window
            # over its messages there (a laggard may get the same time and
            # pay more a message); cv = standard deviation over the mean
            cost = [1000 * (B[p]['se.sum_exec_runtime'] - A[p]['se.sum_exec_runtime']) / (B[p]['syscw'] - A[p]['syscw'])
                    for p in pids if role[p] == 'send' and B[p]['syscw'] > A[p]['syscw']]
            if len(cost) > 1:
                mean = sum(cost) / len(cost)
                cv = (sum((c - mean) ** 2 for c in cost) / len(cost)) ** 0.5 / mean
                line += f", a sender's cost {min(cost):.2f}-{max(cost):.2f} us/msg (cv {100 * cv:.1f}%)"
            if len(cost) < len(each):  # a sender that wrote nothing has no cost, and is the laggard
                line += f", {len(each) - len(cost)} senders wrote nothing"
    def per_arrival(r):  # the role's run and wait per arrival on a CPU, us, as schedlab's role line
        n = d[r][5]
        return f"run {1000 * d[r][0] / n:.0f} wait {1000 * d[r][4] / n:.0f}"
    tot = d['recv'][0] + d['send'][0]
    if tot <= 0: print(line, ' no time on a CPU in the window'); continue
    def gaps(S):
        out = []
        for cpu in sorted(set(S[p]['cpu'] for p in pids)):
            s = [S[p]['se.vruntime'] for p in pids if S[p]['cpu'] == cpu and role[p] == 'send']
            v = [S[p]['se.vruntime'] for p in pids if S[p]['cpu'] == cpu and role[p] == 'recv']
            if s and v: out.append(f"{sum(s) / len(s) - sum(v) / len(v):+.2f}")
        return ' '.join(out)
    cpus = sorted(set(S[p]['cpu'] for S in (A, B) for p in pids))
    def where(S):  # each role's workers by the CPU they last ran on, per CPU of either snapshot
        return ' '.join(f"{r} " + '/'.join(str(sum(1 for p in pids if role[p] == r and S[p]['cpu'] == c)) for c in cpus)
                        for r in ('recv', 'send'))
    nices = sorted(set(B[p].get('nice') for p in pids))
    print(line + f"  window {r['tB'] - r['tA']:.1f} s: recv {100 * d['recv'][0] / tot:.1f}% of {tot:.0f} ms,"
          f" recv sleeps {d['recv'][1]:.0f} preempted {d['recv'][2]:.0f}, send sleeps {d['send'][1]:.0f} preempted {d['send'][2]:.0f};" +
          (f" per arrival (us) recv {per_arrival('recv')}, send {per_arrival('send')};"
           if d['recv'][5] > 0 and d['send'][5] > 0 else '') +
          f" send-recv vruntime by CPU (ms) A {gaps(A)} B {gaps(B)}; nice {nices};"
          f" by CPU A {where(A)}, B {where(B)}" +
          (f"; migrations recv {d['recv'][3]:.0f} send {d['send'][3]:.0f}"
           if all('se.nr_migrations' in S[p] for S in (A, B) for p in pids) else ''))

# Runs labelled NAME_b_N and NAME_w_N are the stock kernel and the patched
# one in turn (runs-wake-idle-cpu*.txt, runs-measured-machine*.txt), and
# NAME_p_N and NAME_t_N a benchmark's processes and its threads
# (runs-threads.txt): per NAME, over every log given, each figure's mean
# over the pairs, the first run's then the second's, and the mean of each
# second run's change against its own pair's first, with Student's 95%
# interval (two-sided t, n - 1 degrees).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
def t975(df):
    return T975[df - 1] if df <= len(T975) else 1.96 + 2.4 / df  # within 0.1% of the quantile beyond 30
pairs = collections.OrderedDict()
for label in figures:
    m = re.match(r'((?:\d+:)?)(.+)_([bp])_(\w+)$', label)
    patched = m and f'{m.group(1)}{m.group(2)}_{"w" if m.group(3) == "b" else "t"}_{m.group(4)}'
    if patched in figures:
        pairs.setdefault(m.group(2), []).append((figures[label], figures[patched]))
for name, runs_of in pairs.items():
    out = []
    for key in dict.fromkeys(k for b, _ in runs_of for k in b):
        both = [(b[key], w[key]) for b, w in runs_of if key in b and key in w and b[key] > 0]
        if not both: continue
        n = len(both)
        change = [100 * (w / b - 1) for b, w in both]
        mean = sum(change) / n
        interval = ''
        if n > 1:
            interval = f" +- {t975(n - 1) * (sum((c - mean) ** 2 for c in change) / (n - 1)) ** 0.5 / n ** 0.5:.1f}"
        out.append(f"{key} {sum(b for b, _ in both) / n:.4g} -> {sum(w for _, w in both) / n:.4g} ({mean:+.1f}%{interval}, n={n})")
    print(f"PAIRS {name}: " + '; '.join(out))
