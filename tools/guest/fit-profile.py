#!/usr/bin/env python3
"""Writes a machine profile from the COST lines of tools/guest/costs.c:
machines/qemu-tcg-2s1c.toml from the serial logs of guest boots that ran it
(runs-costs.txt, runs-measured-machine.txt), machines/kvm-epyc-1s2c.toml
from runs on this project's own machine (tools/guest/measured-host/), or
machines/qemu-tcg-2s1c-streaming.toml, qemu-tcg-2s1c's AF_UNIX calls as
they cost while the other end streams (tools/guest/measured-streaming/):

    tools/guest/fit-profile.py [--switch-mm LOG,...] [--wakeup LOG,...] [--write-tail REPORT,...] \
        [--wakeup-rest REPORT,...] build/release/schedlab LOG... > machines/qemu-tcg-2s1c.toml
    tools/guest/fit-profile.py --machine kvm-epyc-1s2c [--switch-mm LOG,...] [--write-tail REPORT,...] \
        [--wakeup-rest REPORT,...] build/release/schedlab LOG... > machines/kvm-epyc-1s2c.toml
    tools/guest/fit-profile.py --machine qemu-tcg-2s1c-streaming build/release/schedlab LOG... \
        > machines/qemu-tcg-2s1c-streaming.toml

Each cost is the median over every run in the logs. What costs.c measures
directly becomes the cost it names, less the parts the model charges
separately (the system call's entry, the copy). Two figures are fitted
through the model itself, since each is a whole path: the round trip of
two tasks on one CPU sets the switch's costs (context_switch, schedule_base
and ttwu_base, kept in generic's 1000:500:300 as it was before stop 75), and the round trip between
the two CPUs the HLT state's exit latency. The kernel paths costs.c does not
reach are generic's, times the ratio of the measured system calls to
generic's for the same calls. switch_mm, what a change of address space adds
to a switch, comes from the --switch-mm logs alone (costs.c's round trips
between processes and between threads, paired within each run), so that
adding it moved no other median; without them it is 0. With --wakeup logs
(costs.c's yield round trip, its round trip of two threads over pipes and
its batches of waking writes, each taken from those logs alone) the switch
and the wakeup are split as measured instead of by generic's ratio
(wakeup_split()); without them ttwu_activate and dequeue_sleep are 0 and
the switch is fitted as above. With --write-tail reports
(tools/probes/write-tail.py on traced boots, tools/guest/measured-write-tail/)
unix_send_tail is the threaded writes' mean time from their wakeup to their
return, less the tracer's part (write_tail_of()); without them 0. The
same over pipes is printed, not fitted (pipe_tail_of()). With --wakeup-rest
reports (tools/probes/wakeup-remainder.py on futex-wake-all's traced runs)
ttwu_tail is the wakeup's own rest after the wakee's activation, taken out
of ttwu_base and out of unix_send_tail, whose measured span holds it
(wakeup_rest_of()); without them 0. Prints the medians and fits to
stderr."""
import json, os, re, statistics, subprocess, sys, tempfile

# generic's costs as they were before stop 75 moved its wakeup/switch split:
# the profiles fitted here (qemu-tcg-*, kvm-epyc-1s2c) were scaled from these.
GENERIC = dict(syscall_entry=60, context_switch=1000, schedule_base=500, ttwu_base=300, pick_scan_per_task=20,
               rq_lock_hold=100, ipi_send=300, ipi_latency_llc=1000, ipi_latency_remote=1200, ipi_handler=530,
               pipe_read_base=700, pipe_write_base=800, unix_send_base=1300, unix_recv_base=1000, poll_base=300,
               fork_base=70000, exec_base=230000, perf_startup=7270000, exit_base=25000, wait_base=3000, lb_base=2100,
               lb_per_cpu_local=55, lb_per_cpu_remote=55, lb_move_task=1000, copy_ns_per_kib=100)
MESSAGE, LARGE, PIPE_TOKEN = 100, 1000, 4


def profile_header(name, about, description, topology):
    """The profile's opening comment and [machine] table; `about` is the
    comment's machine-specific middle."""
    return (f'# Machine profile: {name}\n{about}'
            '# Every cost has a unit and a source; [derived] shows its formula.\n\n'
            f'[machine]\nname = "{name}"\ndescription = "{description}"\ntopology = "{topology}"\n'
            'default_kernel = "linux-4.0"\n')


# What differs between the machines costs.c has measured: where it ran, and
# the words that say so in the profile.
MACHINES = {
    'qemu-tcg-2s1c': dict(
        logs='boots of the patched 6.1 guest',
        header=profile_header('qemu-tcg-2s1c', '''# The emulated machine of tools/guest/run.sh with SMP=2,sockets=2: QEMU's TCG
# running two virtual CPUs, as two sockets of one CPU, on this project's
# 2-core host (AMD EPYC, Zen 4, itself a KVM guest). Its costs are measured
# inside that guest by tools/guest/costs.c and this file is written by
# tools/guest/fit-profile.py (docs/real-kernels.md, "The emulated machine's
# costs"), so the model and a real kernel booted there can be compared in
# absolute figures. Under TCG the costs move with the host's load (whole
# boots differ by up to ~2x): these are medians. The guest's kernel runs at
# HZ=250: run the model with --sysctl CONFIG_HZ=250.
''', 'QEMU TCG guest, 2 sockets x 1 CPU on a 2-core AMD EPYC host (tools/guest; costs measured in the guest)',
                              '2s1c1t'),
        line_where='both emulated sockets are one host socket',
        write_tail_unit='boot',
        write_tail_where='of the patched 6.1 guest built with guest-kernel-trace-syscalls.config, '
                         'tools/guest/runs-write-tail-event-cost.txt',
        rest_where='boots of the patched 6.1 guest built with guest-kernel-trace-syscalls.config, '
                   'tools/guest/runs-wakeup-remainder.txt',
        line_logs='; costs.c times it once both processes are pinned, and only the boots that ran that version, '
                  'costs-line-boot*.log, keep it',
        switch_scale_range=(1, 100),  # where the bisection looks for generic's multiple: TCG's switch is dearer
        copy_note='TCG emulates the copy',
        cache_note='the host\'s L2 per core (lscpu: 2 MiB in 2 instances); TCG keeps the guest\'s data in the host\'s caches',
        idle_comment='''# The guest's idle: CONFIG_CPU_IDLE with no driver for QEMU's CPU, so
# default_idle_call() halts (HLT). Under TCG a halted virtual CPU's thread
# sleeps in the host until it is kicked, so its exit latency is the host's
# wakeup of that thread.'''),
    'kvm-epyc-1s2c': dict(
        logs='sessions on this machine\'s own kernel (6.18)',
        # Measured apart from costs.c (stop 99): generic's perf_startup is this figure.
        measured=dict(perf_startup=(7270000, 'ns', '[measured] `perf --version` of Debian\'s perf 6.1.187 (a 9 MB '
                                    'binary linked with 28 shared libraries) takes 7.79 ms task-clock against 0.52 ms '
                                    'for /bin/true (perf stat -e task-clock -r 40, stop 99): 7.27 ms beyond a small '
                                    'binary\'s exec and exit')),
        header=profile_header('kvm-epyc-1s2c', '''# This project's own development machine: two virtual CPUs of an AMD EPYC
# (Zen 4) under KVM, one socket, no SMT, running Linux 6.18 (EEVDF, HZ=250,
# the haltpoll cpuidle driver with guest_halt_poll_ns at 0). Its costs are
# measured on it, natively, by tools/guest/costs.c (the logs are in
# tools/guest/measured-host/) and this file is written by
# tools/guest/fit-profile.py --machine kvm-epyc-1s2c (docs/real-kernels.md,
# "This machine's own costs"), so the model can be set beside the machine's
# own kernel in absolute figures (experiments/real-kernels-2cpu.toml). The
# kernel runs at HZ=250: run the model with --sysctl CONFIG_HZ=250.
''', 'this project\'s machine: 2 vCPUs of an AMD EPYC under KVM, 1 socket, no SMT (costs measured on it)',
                              '1s2c1t'),
        line_where='the two virtual CPUs are two cores of one host socket',
        write_tail_unit='session',
        write_tail_where='of tools/probes/host-write-tail.sh on this machine\'s own kernel (6.18), natively',
        rest_where='sessions of tools/probes/host-wakeup-remainder.sh on this machine\'s own kernel (6.18), natively',
        line_logs='',
        switch_scale_range=(0.1, 10),  # a native switch can be cheaper than generic's
        copy_note='native',
        cache_note='the L2 per core (lscpu: 2 MiB in 2 instances)',
        idle_comment='''# The machine's idle: the haltpoll cpuidle driver, whose poll state is off
# (guest_halt_poll_ns 0, and state0's usage stays 0), so every idle entry
# halts and the hypervisor must wake the virtual CPU; its exit latency is
# that wakeup.'''),
}


def read_runs(paths):
    """{run label: {measurement: ns}} from every log's COST lines."""
    runs = {}
    for n, path in enumerate(paths):
        for line in open(path, errors='replace'):
            m = re.match(r'GUEST (\S+) COST (\S+) (\S+)', line.replace('\r', ''))
            if m: runs.setdefault(f'{n}:{m.group(1)}', {})[m.group(2)] = float(m.group(3))
    return runs


def median_of(runs, name):
    values = [r[name] for r in runs.values() if name in r]
    if not values: sys.exit(f'no {name} in the logs')
    return statistics.median(values), len(values)


def boots_of(runs, name):
    """How many logs (boots) measured name: each run's label starts with its log's index."""
    return len({label.split(':')[0] for label, r in runs.items() if name in r})


def generic_call(syscall, base, copy_bytes):
    return syscall + base + copy_bytes * GENERIC['copy_ns_per_kib'] / 1024


def round_trip(schedlab, profile_text, second_cpu):
    with tempfile.NamedTemporaryFile('w', suffix='.toml') as f:
        f.write(profile_text); f.flush()
        out = subprocess.run([schedlab, 'pipe_lat', '-s', str(PIPE_TOKEN), '-c', '20000', '-a', '0', '-b', str(second_cpu),
                              '--machine', f.name, '--sysctl', 'CONFIG_HZ=250', '--json'],
                             check=True, capture_output=True, text=True).stdout
    return json.loads(out)['metrics']['round_trip'] * 1000


def bisect(f, target, lo, hi, tolerance):
    """The x in [lo, hi] where f(x) crosses target; f rises with x overall."""
    for _ in range(40):
        mid = (lo + hi) / 2
        if f(mid) < target: lo = mid
        else: hi = mid
        if hi - lo < tolerance: break
    return (lo + hi) / 2


STREAMED = (('unix_send_base', 'unix_stream_write_100', 'unix_stream_write_100_streaming_to_cpu0',
             'write of 100 B while a process on CPU 0 reads the socket'),
            ('unix_recv_base', 'unix_stream_read_100', 'unix_stream_read_100_streaming_from_cpu1',
             'read of 100 B while a process on CPU 1 writes the socket'))


def streaming_profile(paths):
    """qemu-tcg-2s1c-streaming: qemu-tcg-2s1c with its AF_UNIX calls' costs
    raised (or lowered) by what costs.c's streaming loops add to a call on
    one hot socket, the median over runs of each run's difference (a run's
    two loops see the same host load)."""
    import tomllib  # Python 3.11; only this profile reads another
    base_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'machines', 'qemu-tcg-2s1c.toml')
    with open(base_file, 'rb') as f:
        base = tomllib.load(f)['costs']
    runs = read_runs(paths)
    out = ['''# Machine profile: qemu-tcg-2s1c-streaming
# qemu-tcg-2s1c (the emulated two-socket machine of tools/guest/run.sh) with
# its AF_UNIX calls as they cost while the socket's other end works at the
# same time on the other CPU, as a hackbench sender's and receiver's do
# when the two roles run on a CPU each. tools/guest/costs.c measures a call
# alone on one hot socket (unix_stream_write_100, unix_stream_read_100), and
# then while a process pinned to the other CPU streams through the same
# socket, neither side sleeping (unix_stream_*_streaming_*: only the calls
# that moved a message are timed, less the clock's own cost). Each cost
# below is qemu-tcg-2s1c's plus the median over runs of that difference;
# every other cost, the topology and the idle state are qemu-tcg-2s1c's
# (`extends`). Under TCG the read's difference is large and moves with the
# host's load (each vCPU is a host thread, and the host has two cores), and
# the write's is not told apart from nothing; natively on this project's
# machine, on a quiet host, a read gains 1-3% and a write 6-12%
# (docs/real-kernels.md, "A call while the other end streams"). Written by tools/guest/fit-profile.py
# --machine qemu-tcg-2s1c-streaming from tools/guest/measured-streaming/.
# Every cost has a unit and a source; [derived] shows its formula.

[machine]
extends = "qemu-tcg-2s1c"
name = "qemu-tcg-2s1c-streaming"
description = "qemu-tcg-2s1c with its AF_UNIX calls' costs measured while the other end streams from the other CPU"

[costs]
''']
    for cost_name, alone, streaming, what in STREAMED:
        paired = [r[streaming] - r[alone] for r in runs.values() if alone in r and streaming in r]
        if not paired: sys.exit(f'no run measured both {alone} and {streaming}')
        delta = statistics.median(paired)
        boots = boots_of({k: r for k, r in runs.items() if streaming in r}, streaming)
        value = base[cost_name]['value'] + delta
        print(f'{streaming} - {alone}: median {delta:+.0f} ns over {len(paired)} runs in {boots} boots', file=sys.stderr)
        out.append(f'{cost_name} = {{ value = {int(round(value))}, unit = "ns", source = "[derived] qemu-tcg-2s1c\'s '
                   f'{base[cost_name]["value"]} ns plus {delta:+.0f} ns: an AF_UNIX stream {what} (costs.c {streaming}) '
                   f'less the same call alone on one hot socket ({alone}), the median of {len(paired)} runs\' differences '
                   f'in {boots} boots of the patched 6.1 guest (tools/guest/fit-profile.py)" }}\n')
    return ''.join(out)


def switch_mm_of(runs, spec):
    """switch_mm: half what a pipe round trip between two processes on one
    CPU takes over one between two threads of a process (costs.c
    pipe_round_trip_same_cpu and pipe_round_trip_same_cpu_threads), the
    median of each run's difference; the two switches of a round trip
    change the address space only between processes. Across the two CPUs
    every switch is to or from the idle task, which keeps the last mm, so
    processes and threads should take the same there: printed as a check."""
    paired = {label: r for label, r in runs.items()
              if 'pipe_round_trip_same_cpu' in r and 'pipe_round_trip_same_cpu_threads' in r}
    if not paired: sys.exit('no run measured pipe_round_trip_same_cpu and pipe_round_trip_same_cpu_threads')
    delta = statistics.median(r['pipe_round_trip_same_cpu'] - r['pipe_round_trip_same_cpu_threads'] for r in paired.values())
    cross = [r['pipe_round_trip_cpu0_cpu1'] - r['pipe_round_trip_cpu0_cpu1_threads'] for r in paired.values()
             if 'pipe_round_trip_cpu0_cpu1_threads' in r]
    boots = boots_of(paired, 'pipe_round_trip_same_cpu_threads')
    print(f'switch_mm: processes - threads on one CPU, median {delta:.0f} ns a round trip over {len(paired)} runs in '
          f'{boots} logs; across the CPUs {statistics.median(cross) if cross else float("nan"):.0f} ns', file=sys.stderr)
    value = max(0.0, delta / 2)
    return value, (f'[measured] half the median difference between a pipe round trip of two processes and one of two '
                   f'threads of a process on one CPU ({delta:.0f} ns; costs.c pipe_round_trip_same_cpu less '
                   f'pipe_round_trip_same_cpu_threads, each run\'s own difference, over {len(paired)} runs in {boots} '
                   f'{spec["logs"]}{", at least 0" if delta < 0 else ""}): the round trip\'s two switches change the '
                   f'address space only between processes (tools/guest/fit-profile.py --switch-mm)')


def wakeup_split(runs, spec, syscall, rq_lock_hold, line_ns, ipi_send):
    """The switch and the wakeup, apart, from the --wakeup logs (costs.c, all
    on CPU 0 and hot): a yield round trip of two threads is two switches
    that wake nobody, each a system call, schedule() with its runqueue lock
    and the switch, so context_switch and schedule_base (generic's 1000:500
    kept: the task switched to pays both) are what is left of half of it.
    Writes to 32 pipes, each waking a reader asleep on it, less the same
    writes waking nobody, give the waker's cost of a wakeup: to a reader on
    CPU 1, queued on that CPU's wake list, ttwu_base with the store to the
    list and the IPIs the batch sent (counted, each ipi_send); to a reader on
    CPU 0 at nice 19, which does not preempt, ttwu_base with the enqueue and
    the preemption check under the waker's own runqueue lock, so
    ttwu_activate is that less ttwu_base and rq_lock_hold. Each difference
    is taken within a run, then the median over runs. dequeue_sleep, what a
    switch away from a sleeping task adds, is then fitted through the model
    so that the round trip of two threads on one CPU over pipes takes what
    it measured (returned as the target)."""
    need = ('yield_round_trip_same_cpu_threads', 'pipe_round_trip_same_cpu_threads', 'pipe_write_4_to_32',
            'pipe_write_4_to_32_waking_same_cpu', 'pipe_write_4_to_32_waking_cpu1', 'pipe_write_4_to_32_waking_cpu1_ipis')
    paired = {label: r for label, r in runs.items() if all(n in r for n in need)}
    if not paired: sys.exit('no run measured ' + ', '.join(need))
    med = lambda f: statistics.median(f(r) for r in paired.values())
    yield_rt = med(lambda r: r['yield_round_trip_same_cpu_threads'])
    threads_rt = med(lambda r: r['pipe_round_trip_same_cpu_threads'])
    local = med(lambda r: r['pipe_write_4_to_32_waking_same_cpu'] - r['pipe_write_4_to_32'])
    remote = med(lambda r: r['pipe_write_4_to_32_waking_cpu1'] - r['pipe_write_4_to_32'])
    ipis = med(lambda r: r['pipe_write_4_to_32_waking_cpu1_ipis'])
    boots = boots_of(paired, 'yield_round_trip_same_cpu_threads')
    where = f'{len(paired)} runs of tools/guest/costs.c in {boots} {spec["logs"]}'
    switch = yield_rt / 2 - syscall - rq_lock_hold
    ttwu = remote - line_ns - ipis * ipi_send
    activate = local - ttwu - rq_lock_hold
    print(f'wakeup split over {len(paired)} runs in {boots} logs: yield round trip {yield_rt:.0f} ns, threads\' round trip '
          f'{threads_rt:.0f}; a waking write adds {local:.0f} on CPU 0 and {remote:.0f} to CPU 1 ({ipis:.3f} IPIs a '
          f'write): switch {switch:.0f}, ttwu_base {ttwu:.0f}, ttwu_activate {activate:.0f}', file=sys.stderr)
    if min(switch, ttwu, activate) < 0: sys.exit('no split: a part came out negative')
    k_switch = switch / (GENERIC['context_switch'] + GENERIC['schedule_base'])
    switch_source = (f'[measured] half a round trip of two threads of a process on one CPU that take turns by '
                     f'sched_yield() ({yield_rt:.0f} ns; costs.c yield_round_trip_same_cpu_threads, median of {where}), less '
                     f'the system call and the runqueue lock: {switch:.0f} ns for the switch, split as generic\'s '
                     f'context_switch and schedule_base (1000:500; tools/guest/fit-profile.py --wakeup)')
    ttwu_source = (f'[measured] what a pipe write of 4 B adds when it wakes a reader pinned to the other CPU: '
                   f'{remote:.0f} ns (costs.c pipe_write_4_to_32_waking_cpu1 less pipe_write_4_to_32, each run\'s own '
                   f'difference, median of {where}), less the store to its wake list ({line_ns:.0f} ns) and the '
                   f'{ipis:.3f} IPIs a write the batch sent (ipi_send each; tools/guest/fit-profile.py --wakeup)')
    activate_source = (f'[measured] what a pipe write of 4 B adds when it wakes a reader on its own CPU (at nice 19, '
                       f'so it does not preempt): {local:.0f} ns (costs.c pipe_write_4_to_32_waking_same_cpu less '
                       f'pipe_write_4_to_32, each run\'s own difference, median of {where}), less ttwu_base and '
                       f'rq_lock_hold (tools/guest/fit-profile.py --wakeup)')
    dequeue_source = (f'[derived] fitted so that schedlab pipe_lat -s 4 -a 0 -b 0 with no change of address space '
                      f'(switch_mm 0, CONFIG_HZ=250) takes the measured {threads_rt / 1000:.1f} us a round trip of two '
                      f'threads (costs.c pipe_round_trip_same_cpu_threads, median of {where}) once the switch and the '
                      f'wakeup are as measured (tools/guest/fit-profile.py --wakeup)')
    return dict(k_switch=k_switch, switch_source=switch_source, ttwu=ttwu, ttwu_source=ttwu_source,
                activate=activate, activate_source=activate_source, dequeue_source=dequeue_source,
                threads_rt=threads_rt)


TAIL = re.compile(r'^  +its tail \(wakeup line to sys_exit\) +\d+ +mean to p90 +([\d.]+) us')
NULL_CALL = re.compile(r'^  a null system call \(sys_enter to sys_exit\) +\d+ +mean to p90 +([\d.]+) us')


def tail_reports(paths):
    """Each write-tail.py report's figures, in ns, by kind of run: the threaded socket writes' tails (labels ws6t_*), the same
    with one more probe on sys_exit (ws6tx_*), the pipe writes' (wp6t_*),
    and the null system calls' spans (null_*)."""
    kinds = (('socket', r'^ws\d+t_', TAIL), ('socket_probed', r'^ws\d+tx_', TAIL),
             ('pipe', r'^wp\d+t_', TAIL), ('null', r'^null_', NULL_CALL))
    reports = []
    for path in paths:
        report, label = {kind: [] for kind, _, _ in kinds}, None
        with open(path) as f:
            for line in f:
                if re.match(r'^\S+:$', line):
                    label = line.strip().rstrip(':')
                for kind, label_re, figure in kinds:
                    m = figure.match(line)
                    if m and label and re.match(label_re, label):
                        report[kind].append(float(m.group(1)) * 1000)
        reports.append(report)
    return reports


def write_tail_of(paths, spec):
    """unix_send_tail from tools/probes/write-tail.py's reports of traced
    runs (tools/guest/measured-write-tail/, measured-host-write-tail/): the
    mean over the threaded runs (labels ws6t_*) of a write's time from its
    sched_wakeup line to its sys_exit line, for writes waking a task onto
    their own CPU. Threads: no change of address space, whose TLB refill
    under TCG switch_mm holds. The tracer's own part of that span (the
    wakeup line's recording after its timestamp, the sys_exit probe's
    before its own) is read as one event (an assumption) and taken out as
    what one more probe on sys_exit adds to the same span (labels ws6tx_*,
    registered first so that it runs before the timestamp): its tails'
    growth over the same report's plain runs. That growth also holds the
    loop over probes that a second probe brings (kernel/tracepoint.c: with
    one probe the static call points at it, with two at __traceiter_*), so
    it is, if anything, a little more than one event. A null system call's
    whole traced span (labels null_*, runs-write-tail-null-syscall.txt) holds
    a line's recording after its timestamp and the exit path to the
    sys_exit line's, as a tail does, and real work besides (the entry's
    rest, getppid(), the return): more again, so the tail less it is a lower
    bound, given in the source where reports hold null runs (stop 84). Only
    the reports with probe runs count; without any, the plain tail, an
    upper bound."""
    if not paths:
        return 0, ('[not measured] on this machine the whole of unix_send_base is charged before the write\'s '
                   'wakeup; the machines where it is measured run part of it after (machines/qemu-tcg-2s1c.toml, '
                   'kvm-epyc-1s2c.toml)')
    reports = [r for r in tail_reports(paths) if r['socket']]
    if not reports:
        sys.exit('fit-profile.py: no threaded write tails in ' + ','.join(paths))
    used = [r for r in reports if r['socket_probed']] or reports
    tails = [t for r in used for t in r['socket']]
    span = (f'[measured] the mean over {len(tails)} threaded runs of hackbench -g 1 -f 6 on one LLC '
            f'({len(used)} {spec["write_tail_unit"]}{"s" if len(used) > 1 else ""} {spec["write_tail_where"]}; '
            'tools/probes/write-tail.py, each run\'s mean to its 90th percentile) of a write\'s time from its '
            'sched_wakeup line to its sys_exit line, over the writes that woke a task onto their own CPU: the rest '
            'of try_to_wake_up() and the wait queue\'s walk, sock_def_readable(), unix_stream_sendmsg() and '
            'vfs_write(), up to syscall_exit_work()')
    if not used[0]['socket_probed']:
        return statistics.mean(tails), span + ('. It holds the tracer\'s own recording of the two lines, so it is '
                                               'an upper bound')
    event = statistics.mean(statistics.mean(r['socket_probed']) - statistics.mean(r['socket']) for r in used)
    lower = ''
    with_null = [r for r in reports if r['null']]
    if with_null:
        null = statistics.mean(n for r in with_null for n in r['null'])
        null_plain = statistics.mean(t for r in with_null for t in r['socket'])
        lower = (f'; in the {len(with_null)} {spec["write_tail_unit"]}{"s" if len(with_null) > 1 else ""} that '
                 f'also ran a null system call (runs null_*, perf bench syscall basic), the plain tails\' '
                 f'{null_plain:.0f} ns less its whole traced span, {null:.0f} ns, which holds real work besides the '
                 f'tracer\'s, give {null_plain - null:.0f} ns, a lower bound for those {spec["write_tail_unit"]}s '
                 '(stop 84)')
    return statistics.mean(tails) - event, (
        f'{span} ({statistics.mean(tails):.0f} ns; the system calls traced unfiltered), less one trace event\'s '
        f'recording, {event:.0f} ns: what one more probe on sys_exit adds to the same span (runs ws6tx_*, the mean '
        f'over those {len(used)} of its growth over the plain runs), read as the tracer\'s part of the span '
        '(the wakeup line\'s recording after its timestamp, the sys_exit probe\'s before its own): an assumption; '
        f'the growth also holds the loop over probes a second probe brings{lower}')


def pipe_tail_of(paths):
    """A waking pipe write's tail after its wakeup, printed beside the fit
    and not a cost: the mean over the runs of hackbench -p (threads, labels
    wp6t_*; runs-pipe-write-tail.txt, host-write-tail.sh) of the span from
    a waking write's sched_wakeup line to its sys_exit line, less the same
    reports' null system calls: a lower bound (write_tail_of()), as the
    pipe runs have no probe runs beside them. Most of it is the
    wakeup's own rest (tools/probes/host-wakeup-remainder.sh), which a
    4-byte write nobody waits for, pipe_write_base, does not hold, so it
    cannot be taken out of that base (which the pipe mutex's hold is
    charged from) as unix_send_tail is out of unix_send_base; it waits for
    the wakeup's rest to be split from ttwu_base (stop 84). None without
    such reports."""
    reports = [r for r in tail_reports(paths) if r['pipe'] and r['null']]
    if not reports:
        return None
    return (statistics.mean(t for r in reports for t in r['pipe'])
            - statistics.mean(n for r in reports for n in r['null']))

REST = re.compile(r"^  wakeup line to the next wakee's waking line +(\d+) +mean to p90 +([\d.]+) us")
TAKEN_OUT = '; taken out of ttwu_base and out of unix_send_tail (stop 85)'
FEWEST_SPANS = 100  # fewer: the first wakees mostly went to the other CPU or preempted their waker
FUTEX_TAIL = re.compile(r"^  the last wakeup line to futex\(\)'s sys_exit +(\d+) +mean to p90 +([\d.]+) us")


def rest_reports(paths):
    """Each wakeup-remainder.py report's figures, in ns: by design (fw2:
    the sleepers free to go anywhere; fw2n: all on one CPU, the sleepers at
    nice 19) and kind (plain, probed: one more probe on sched_wakeup), the
    spans from a wakee's sched_wakeup line to the next one's sched_waking
    line, and the futex calls' last wakeup to sys_exit, with the null
    system calls' spans (write-tail.py's part of the report). A run with
    fewer than FEWEST_SPANS spans is left out."""
    reports = []
    for path in paths:
        report, label = {}, None
        with open(path) as f:
            for line in f:
                if re.match(r'^\S+:$', line):
                    label = line.strip().rstrip(':')
                    continue
                m = re.match(r'^(fw\d+n?)(_extra)?_\d+$', label or '')
                rest, futex, null = REST.match(line), FUTEX_TAIL.match(line), NULL_CALL.match(line)
                if m and rest and int(rest.group(1)) >= FEWEST_SPANS:
                    report.setdefault((m.group(1), 'probed' if m.group(2) else 'plain'), []).append(float(rest.group(2)) * 1000)
                if m and futex and not m.group(2) and int(futex.group(1)) >= FEWEST_SPANS:
                    report.setdefault('futex', []).append(float(futex.group(2)) * 1000)
                if null and label and label.startswith('null_'):
                    report.setdefault('null', []).append(float(null.group(1)) * 1000)
        reports.append(report)
    return reports


def wakeup_rest_of(paths, spec):
    """ttwu_tail, the wakeup's own rest after the wakee's activation, from
    tools/probes/wakeup-remainder.py's reports of futex-wake-all's traced
    runs (tools/probes/host-wakeup-remainder.sh natively,
    tools/guest/runs-wakeup-remainder.txt on the emulated machine): one
    FUTEX_WAKE of two sleepers, whose span from the first wakee's
    sched_wakeup line to the second's sched_waking line holds the rest of
    the first try_to_wake_up() (the unlocks, ttwu_stat()), wake_up_q()'s
    step and the second call's start to its tracepoint. As in
    write_tail_of(), the tracer's part is read as one more probe's cost on
    the same tracepoint (runs ..._extra_*), an assumption; what is left
    holds the next call's start, so it bounds the rest from above. The
    mean over every report and design that has both kinds of run. The
    futex calls' last wakeup to their sys_exit, less the same report's null
    system calls, is a lower bound for the rest with futex_wake()'s return
    (write_tail_of()), given in the source. Zero without reports."""
    if not paths:
        return 0, ('[not split] ttwu_base holds the whole wakeup, charged before the enqueue; the wakeup\'s rest after '
                   'it is measured on kvm-epyc-1s2c and qemu-tcg-2s1c (stop 85)')
    rests, runs, plain_all, growth_all = [], 0, [], []
    for report in rest_reports(paths):
        for design in ('fw2', 'fw2n'):
            plain, probed = report.get((design, 'plain')), report.get((design, 'probed'))
            if plain and probed:
                growth = statistics.mean(probed) - statistics.mean(plain)
                rests.append(statistics.mean(plain) - growth)
                plain_all += plain
                growth_all.append(growth)
                runs += len(plain)
    if not rests:
        sys.exit('fit-profile.py: no paired plain and probed futex-wake-all runs in ' + ','.join(paths))
    lower = [statistics.mean(r['futex']) - statistics.mean(r['null'])
             for r in rest_reports(paths) if r.get('futex') and r.get('null')]
    bound = (f'; in the {len(lower)} report{"s" if len(lower) > 1 else ""} with futex tails and null calls, the '
             'futex calls\' last wakeup to their sys_exit less the null system calls, which hold real work besides '
             f'the tracer\'s, give {statistics.mean(lower):.0f} ns, a lower bound for the rest with futex_wake()\'s '
             'return and the exit path' if lower else '')
    rest = statistics.mean(rests)
    print(f'wakeup rest: {rest:.0f} ns over {len(rests)} pairs of runs ({runs} plain runs; plain '
          f'{statistics.mean(plain_all):.0f} ns, one more probe adds {statistics.mean(growth_all):.0f})', file=sys.stderr)
    return rest, (
        f'[measured] a wakeup\'s own rest after its wakee\'s activation: the span from one wakee\'s sched_wakeup line '
        f'to the next one\'s sched_waking line in one FUTEX_WAKE of two sleepers (tools/probes/futex-wake-all.c; '
        f'{runs} runs in {len(paths)} {spec["rest_where"]}; tools/probes/wakeup-remainder.py, each run\'s mean to its 90th '
        f'percentile), less what one more probe on sched_wakeup adds to it, read as the tracer\'s part (an assumption, '
        f'as for unix_send_tail): the mean over {len(rests)} pairs (a report\'s plain runs of one design against its '
        f'runs with the probe) of {", ".join(f"{r:.0f}" for r in rests)} ns (plain {statistics.mean(plain_all):.0f} ns '
        f'and the probe {statistics.mean(growth_all):.0f} ns on the means): '
        'the rest of try_to_wake_up() after ttwu_do_activate() (the unlocks, ttwu_stat()), wake_up_q()\'s step '
        f'and the next call\'s start to its tracepoint, an upper bound{bound}{TAKEN_OUT}')


def native_rest_share(waker_side, reading, reading_source):
    """ttwu_tail where the machine's own reading of the rest is no smaller
    than the whole of the waker's side of a wakeup as costs.c's waking
    writes measure it (wakeup_split()): under TCG, where one more probe's
    cost moves by 4x between runs of one boot, the tracer's part of the
    span is then not what one probe adds, and the reading cannot be used.
    The share of the waker's side that this project's machine runs after
    the enqueue, measured natively (machines/kvm-epyc-1s2c.toml, fitted
    first), is taken instead, and the reading kept in the source."""
    text = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'machines',
                             'kvm-epyc-1s2c.toml')).read()
    native = {m.group(1): int(m.group(2)) for m in re.finditer(r'^(\w+) = \{ value = (-?\d+),', text, re.M)}
    share = native['ttwu_tail'] / (native['ttwu_base'] + native['ttwu_tail'])
    print(f'wakeup rest: the reading ({reading:.0f} ns) is no smaller than the waker\'s side of a wakeup '
          f'({waker_side:.0f} ns); the native share {share:.3f} taken', file=sys.stderr)
    return share * waker_side, (
        f'[derived] {100 * share:.1f}% of what a waking pipe write adds on the waker\'s side ({waker_side:.0f} ns, '
        'ttwu_base before stop 85): the share of ttwu_base + ttwu_tail that this project\'s machine runs after the '
        f'wakee\'s activation, measured natively ({native["ttwu_tail"]} of {native["ttwu_base"] + native["ttwu_tail"]} '
        'ns; machines/kvm-epyc-1s2c.toml). This machine\'s own reading, '
        + reading_source.replace('[measured] ', '').replace(TAKEN_OUT, '')
        + f', gives {reading:.0f} ns, no less than that whole side: under TCG one more probe\'s cost moves by 4x '
        'between runs of one boot, so the tracer\'s part of the span is not what one probe adds, and the reading is '
        'not used' + TAKEN_OUT)


def main():
    args = sys.argv[1:]
    machine = 'qemu-tcg-2s1c'
    if args[:1] == ['--machine']:
        machine, args = args[1], args[2:]
    if machine == 'qemu-tcg-2s1c-streaming':
        sys.stdout.write(streaming_profile(args[1:]))
        return
    if machine not in MACHINES:
        sys.exit(f'fit-profile.py: no machine {machine!r}; these have measurements: '
                 f'{", ".join(list(MACHINES) + ["qemu-tcg-2s1c-streaming"])}')
    spec = MACHINES[machine]
    switch_mm_paths, wakeup_paths, write_tail_paths = [], [], []
    if args[:1] == ['--switch-mm']:
        switch_mm_paths, args = args[1].split(','), args[2:]
    if args[:1] == ['--wakeup']:
        wakeup_paths, args = args[1].split(','), args[2:]
    if args[:1] == ['--write-tail']:
        write_tail_paths, args = args[1].split(','), args[2:]
    rest_paths = []
    if args[:1] == ['--wakeup-rest']:
        rest_paths, args = args[1].split(','), args[2:]
    write_tail_ns, write_tail_source = write_tail_of(write_tail_paths, spec)
    rest_ns, rest_source = wakeup_rest_of(rest_paths, spec)
    schedlab, paths = args[0], args[1:]
    runs = read_runs(paths)
    switch_mm, switch_mm_source = switch_mm_of(read_runs(switch_mm_paths), spec) if switch_mm_paths else \
        (0, '[not measured] this machine\'s logs hold no round trip between threads; context_switch holds it')
    med, count = {}, {}
    for name in ('getppid', 'unix_stream_write_100', 'unix_stream_read_100', 'unix_stream_write_100_over_20',
                 'unix_stream_read_100_over_20', 'pipe_write_4', 'pipe_read_4',
                 'pipe_round_trip_same_cpu', 'pipe_round_trip_cpu0_cpu1', 'line_round_trip_cpu0_cpu1', 'interruption',
                 'interruptions_per_s'):
        med[name], count[name] = median_of(runs, name)
        print(f'{name}: median {med[name]:.1f} over {count[name]} runs', file=sys.stderr)
    both = {label: r for label, r in runs.items() if 'unix_stream_write_1000' in r and 'unix_stream_write_100' in r}
    copies = [r['unix_stream_write_1000'] - r['unix_stream_write_100'] for r in both.values()]
    copy_per_kib = statistics.median(copies) * 1024 / (LARGE - MESSAGE)
    print(f'copy: median {copy_per_kib:.0f} ns/KiB over {len(copies)} runs', file=sys.stderr)
    n_runs = count['getppid']  # the line-only logs (costs-line-boot*) hold no other figure
    n_boots = boots_of(runs, 'getppid')
    source_of = lambda runs_n, logs_n: \
        f'median of {runs_n} runs of tools/guest/costs.c in {logs_n} {spec["logs"]} (tools/guest/fit-profile.py)'
    source_runs = source_of(n_runs, n_boots)
    sources_of = lambda name: source_of(count[name], boots_of(runs, name))

    syscall = med['getppid']
    copy = lambda nbytes: nbytes * copy_per_kib / 1024
    # AF_UNIX calls as a hackbench group makes them, over its 20 sockets in
    # turn; one hot socket is cheaper (both are in the sources).
    measured_calls = [(med['unix_stream_write_100_over_20'], 'unix_send_base', MESSAGE),
                      (med['unix_stream_read_100_over_20'], 'unix_recv_base', MESSAGE),
                      (med['pipe_write_4'], 'pipe_write_base', PIPE_TOKEN),
                      (med['pipe_read_4'], 'pipe_read_base', PIPE_TOKEN)]
    measured_sum = syscall + sum(m for m, _, _ in measured_calls)
    generic_sum = GENERIC['syscall_entry'] + sum(generic_call(GENERIC['syscall_entry'], GENERIC[base], nbytes)
                                                 for _, base, nbytes in measured_calls)
    scale = measured_sum / generic_sum
    scaled_source = (f'[derived] generic x {scale:.2f}: the measured system calls over generic\'s for the same calls '
                     f'(getppid, AF_UNIX write and read of 100 B over 20 sockets, pipe write and read of 4 B: {measured_sum:.0f} against '
                     f'{generic_sum:.0f} ns); not measured on its own')

    pipe_write_base = med['pipe_write_4'] - syscall - copy(PIPE_TOKEN)
    pipe_tail = pipe_tail_of(write_tail_paths)
    if pipe_tail is not None:
        print(f'a waking pipe write\'s tail, not a cost: at least {pipe_tail:.0f} ns, '
              f'{100 * pipe_tail / pipe_write_base:.0f}% of pipe_write_base (pipe_tail_of())', file=sys.stderr)

    line_ns = med['line_round_trip_cpu0_cpu1'] / 2
    split = wakeup_split(read_runs(wakeup_paths), spec, syscall, GENERIC['rq_lock_hold'] * scale, line_ns,
                         GENERIC['ipi_send'] * scale) if wakeup_paths else None
    if split and rest_ns >= split['ttwu']:
        rest_ns, rest_source = native_rest_share(split['ttwu'], rest_ns, rest_source)
    if rest_ns and write_tail_ns:
        write_tail_source += (f'; less ttwu_tail ({rest_ns:.0f} ns), the wakeup\'s own rest, which the model charges '
                              f'apart (stop 85): {write_tail_ns - rest_ns:.0f} ns')
        write_tail_ns -= rest_ns
        if write_tail_ns < 0: sys.exit('fit-profile.py: the wakeup\'s rest is longer than the write\'s tail')

    def profile(k_switch, hlt_exit_ns, dequeue_ns=0, switch_mm_ns=None):
        switch_source = (f'[derived] generic (before stop 75) x {k_switch:.2f}: fitted so that schedlab pipe_lat -s 4 -a 0 -b 0 (two tasks '
                         f'on one CPU, CONFIG_HZ=250) takes the measured {med["pipe_round_trip_same_cpu"] / 1000:.1f} us a '
                         f'round trip (costs.c pipe_round_trip_same_cpu, {source_runs}); generic\'s split as it was before stop 75 kept')
        if split: switch_source = split['switch_source']
        line_source = (f'[measured] half the median round trip of a line two spinning processes pass between CPUs 0 and 1 '
                       f'(costs.c line_round_trip_cpu0_cpu1, {sources_of("line_round_trip_cpu0_cpu1")}{spec["line_logs"]}); '
                       f'{spec["line_where"]}')
        cost = lambda name, value, unit, source: \
            f'{name} = {{ value = {int(round(value))}, unit = "{unit}", source = "{source}" }}\n'
        called = lambda what, name, nbytes: \
            f'[derived] {what}, {med[name]:.0f} ns, less syscall_entry and the copy of {nbytes} B ({copy(nbytes):.0f} ns), {sources_of(name)}'
        out = [spec['header'] + '''
[costs]
''']
        out.append(cost('syscall_entry', syscall, 'ns', f'[measured] getppid(), {source_runs}'))
        out.append(cost('context_switch', GENERIC['context_switch'] * k_switch, 'ns', switch_source))
        out.append(cost('switch_mm', switch_mm if switch_mm_ns is None else switch_mm_ns, 'ns', switch_mm_source))
        out.append(cost('schedule_base', GENERIC['schedule_base'] * k_switch, 'ns', switch_source))
        for name in ('pick_scan_per_task',):
            out.append(cost(name, GENERIC[name] * scale, 'ns', scaled_source))
        out.append(cost('tick_handler', med['interruption'], 'ns',
                        f'[measured, with the host\'s] median interruption of a clock-reading loop on an idle CPU '
                        f'(costs.c interruption, {source_runs}); {med["interruptions_per_s"]:.0f} a second where the tick '
                        f'gives 250: the loop cannot tell the tick from the host taking the virtual CPU away'))
        out.append(cost('rq_lock_hold', GENERIC['rq_lock_hold'] * scale, 'ns', scaled_source))
        less_rest = (f'; less ttwu_tail, the wakeup\'s rest after the enqueue ({rest_ns:.0f} ns, stop 85)'
                     if rest_ns else '')
        if split:
            out.append(cost('ttwu_base', split['ttwu'] - rest_ns, 'ns', split['ttwu_source'] + less_rest))
            out.append(cost('ttwu_activate', split['activate'], 'ns', split['activate_source']))
            out.append(cost('ttwu_tail', rest_ns, 'ns', rest_source))
            out.append(cost('dequeue_sleep', dequeue_ns, 'ns', split['dequeue_source']))
        else:
            out.append(cost('ttwu_base', GENERIC['ttwu_base'] * k_switch - rest_ns, 'ns', switch_source + less_rest))
            out.append(cost('ttwu_activate', 0, 'ns', '[not split] no --wakeup logs: ttwu_base, rq_lock_hold and the '
                            'switch\'s costs hold the enqueue'))
            out.append(cost('ttwu_tail', rest_ns, 'ns', rest_source))
            out.append(cost('dequeue_sleep', 0, 'ns', '[not split] no --wakeup logs: schedule_base and context_switch '
                            'hold the dequeue'))
        out.append(cost('ipi_send', GENERIC['ipi_send'] * scale, 'ns', scaled_source))
        for name in ('ipi_latency_llc', 'ipi_latency_remote'):
            out.append(cost(name, GENERIC[name] * scale, 'ns',
                            scaled_source + '; to a halted CPU the rest is the HLT state\'s exit latency'))
        out.append(cost('ipi_handler', GENERIC['ipi_handler'] * scale, 'ns', scaled_source))
        out.append(cost('idle_exit_path', 0, 'ns', 'as generic: not measured apart from the HLT state\'s exit latency'))
        out.append(cost('line_transfer_smt', 0, 'ns', 'no SMT'))
        for name in ('line_transfer_llc', 'line_transfer_node', 'line_transfer_remote'):
            out.append(cost(name, line_ns, 'ns', line_source))
        out.append(cost('cache_line_bytes', 64, 'B', 'x86 line size'))
        out.append(cost('copy_ns_per_kib', copy_per_kib, 'ns/KiB',
                        f'[derived] AF_UNIX write of {LARGE} B less one of {MESSAGE} B, per KiB, '
                        f'median of the {len(copies)} runs of tools/guest/costs.c that measured both, in '
                        f'{boots_of(both, "unix_stream_write_1000")} {spec["logs"]} (tools/guest/fit-profile.py); '
                        f'{spec["copy_note"]}'))
        out.append(cost('pipe_read_base', med['pipe_read_4'] - syscall - copy(PIPE_TOKEN), 'ns',
                        called('pipe read of 4 B', 'pipe_read_4', PIPE_TOKEN)))
        out.append(cost('pipe_write_base', pipe_write_base, 'ns',
                        called('pipe write of 4 B', 'pipe_write_4', PIPE_TOKEN)))
        out.append(cost('unix_send_base', med['unix_stream_write_100_over_20'] - syscall - copy(MESSAGE), 'ns',
                        called('AF_UNIX stream write of 100 B nobody waits for, to 20 sockets in turn as a hackbench '
                               'sender writes (costs.c unix_stream_write_100_over_20; to one hot socket '
                               f'{med["unix_stream_write_100"]:.0f} ns)', 'unix_stream_write_100_over_20', MESSAGE)))
        out.append(cost('unix_recv_base', med['unix_stream_read_100_over_20'] - syscall - copy(MESSAGE), 'ns',
                        called('AF_UNIX stream read of 100 B, from 20 sockets in turn (costs.c '
                               f'unix_stream_read_100_over_20; from one hot socket {med["unix_stream_read_100"]:.0f} ns)',
                               'unix_stream_read_100_over_20', MESSAGE)))
        out.append(cost('unix_send_tail', write_tail_ns, 'ns', write_tail_source))
        for name in ('poll_base', 'fork_base', 'exec_base', 'perf_startup', 'exit_base', 'wait_base'):
            if name in spec.get('measured', {}):
                out.append(cost(name, *spec['measured'][name]))
            else:
                out.append(cost(name, GENERIC[name] * scale, 'ns', scaled_source))
        out.append(cost('refill_mlp', 4, 'lines', 'as generic [unverified]'))
        out.append(cost('private_cache_bytes', 1048576, 'B', spec['cache_note']))
        out.append(cost('smt_throughput_permille', 1000, 'permille', 'no SMT'))
        for name in ('lb_base', 'lb_per_cpu_local', 'lb_per_cpu_remote', 'lb_move_task'):
            out.append(cost(name, GENERIC[name] * scale, 'ns', scaled_source))
        out.append(cost('cost_jitter_permille', 20, 'permille',
                        'as generic: within one 50 ms round of costs.c a call spreads by about 3%; the host\'s load moves whole runs by more'))
        out.append(f'''
{spec['idle_comment']}
[[idle_states]]
name = "HLT"
exit_latency_ns = {int(round(hlt_exit_ns))}
target_residency_ns = 0
polling = false
mwait = false
source = "[derived] fitted so that schedlab pipe_lat -s 4 -a 0 -b 1 (CONFIG_HZ=250) takes the measured {med['pipe_round_trip_cpu0_cpu1'] / 1000:.1f} us a round trip (costs.c pipe_round_trip_cpu0_cpu1, {source_runs})"
''')
        return ''.join(out)

    hlt_guess = 40000
    dequeue = 0
    if split:
        k_switch = split['k_switch']
        dequeue = bisect(lambda d: round_trip(schedlab, profile(k_switch, hlt_guess, d, 0), 0), split['threads_rt'],
                         0, 100000, 10)
    else:
        k_switch = bisect(lambda k: round_trip(schedlab, profile(k, hlt_guess), 0), med['pipe_round_trip_same_cpu'],
                          *spec['switch_scale_range'], 0.02)
    hlt_exit = bisect(lambda h: round_trip(schedlab, profile(k_switch, h, dequeue), 1), med['pipe_round_trip_cpu0_cpu1'],
                      0, 500000, 100)
    final = profile(k_switch, hlt_exit, dequeue)
    same, cross = round_trip(schedlab, final, 0), round_trip(schedlab, final, 1)
    print(f'fit: switch x {k_switch:.2f}, dequeue_sleep {dequeue:.0f} ns, HLT exit {hlt_exit:.0f} ns; the model gives '
          f'{same / 1000:.1f} and {cross / 1000:.1f} us', file=sys.stderr)
    checks = [(cross, med['pipe_round_trip_cpu0_cpu1'], 'the two CPUs')]
    if split:
        threads = round_trip(schedlab, profile(k_switch, hlt_exit, dequeue, 0), 0)
        checks.append((threads, split['threads_rt'], 'one CPU between threads'))
        print(f'check: processes on one CPU, the model {same / 1000:.1f} us against the main logs\' '
              f'{med["pipe_round_trip_same_cpu"] / 1000:.1f}', file=sys.stderr)
    else:
        checks.append((same, med['pipe_round_trip_same_cpu'], 'one CPU'))
    for got, want, what in checks:
        if abs(got / want - 1) > 0.01:  # the bisection's range did not hold the answer
            sys.exit(f'no fit: the model\'s round trip on {what} is {got / 1000:.1f} us against {want / 1000:.1f}')
    sys.stdout.write(final)


if __name__ == '__main__':
    main()
