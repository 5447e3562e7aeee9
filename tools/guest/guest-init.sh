#!/bin/sh
# /init of the guest that tools/guest/run.sh boots: run each line of
# /runs.txt, print what it measured on the serial console, power off.
#
# A line: label feats warm window command...
#   feats   "-", or comma-separated sched_features names (NO_X) and
#           name=value for a file in /sys/kernel/debug/sched, set for this
#           run and restored after it;
#   warm, window  0 0: the command runs alone and only the context switches
#           (/proc/stat ctxt) are counted; "trace N" or "trace N:EVENTS":
#           the same, with the sched: tracepoints on (EVENTS, comma-separated,
#           an event may carry !COMM to leave out the tasks named COMM,
#           +EVENT adds one more probe on EVENT from a second instance,
#           or wakings, wakeups, migrations, forks and switches; a kernel built with
#           EXTRA_CONFIG=guest-kernel-trace.config), and the trace's first N
#           lines printed as "TRACE label ..." ("trace@S N": traced from S
#           seconds into the run); otherwise the benchmark's workers
#           are read from /proc/PID/sched and /proc/PID/stat `warm` seconds
#           after they exist (snapshot A) and `window` seconds later (B).
# A snapshot is one cat of every worker's files, run at nice -20 so it is an
# instant; the shell otherwise stays at nice 0 and uses builtins, so the
# benchmark runs as it would alone. (At nice -20 throughout, the shell's long
# loops perturbed the runs; and POSIX renice -n adds an increment, so the
# -20 is undone with +20.)
export PATH=/bin:/usr/bin
mount -t proc none /proc; mount -t sysfs none /sys; mount -t devtmpfs none /dev 2>/dev/null
mount -t debugfs none /sys/kernel/debug
echo "GUEST $(cat /proc/version)"
echo "GUEST nproc $(grep -c ^processor /proc/cpuinfo) features: $(cat /sys/kernel/debug/sched/features)"
for f in latency_ns min_granularity_ns wakeup_granularity_ns base_slice_ns migration_cost_ns tunable_scaling; do
  [ -f /sys/kernel/debug/sched/$f ] && echo "GUEST $f $(cat /sys/kernel/debug/sched/$f)"
done
for d in /sys/kernel/debug/sched/domains/cpu0/domain*; do
  [ -d $d ] && echo "GUEST cpu0 $(cat $d/name) flags $(cat /sys/kernel/debug/sched/domains/cpu0/$(basename $d)/flags 2>/dev/null | cut -c1-120)"
done
ctxt() { while read -r k v; do [ "$k" = ctxt ] && echo $v; done < /proc/stat; }
uptime_s() { read -r u i < /proc/uptime; echo $u; }
# /proc/schedstat's per-CPU lines (run_delay, pcount: the seed's taskstats
# delay, summed over the CPU's tasks), with builtins only
sstat() { while read -r l; do case $l in cpu*) echo "SCHEDSTAT $1 $2 $l";; esac; done < /proc/schedstat; }
snap() { # one cat at nice -20 reads every worker's sched and stat files: an instant
  # (and its io file where the kernel accounts I/O: a thread's own under its
  # process's task/, since /proc/TID/io sums the whole thread group)
  files=; for p in $KIDS; do
    io=/proc/$p/io; [ -d /proc/$main/task/$p ] && io=/proc/$main/task/$p/io
    files="$files /proc/$p/sched /proc/$p/stat"; [ -f $io ] && files="$files $io"
  done
  renice -n -20 -p $$ > /dev/null   # POSIX renice -n adds an increment
  cat $files 2>/dev/null
  renice -n 20 -p $$ > /dev/null
}
# ctxt_every=S on the kernel's command line (run.sh: CTXT_EVERY=S): every S
# seconds of each run the machine's context switches so far (/proc/stat
# ctxt), printed after the run as "CTXT label uptime ctxt": whether the run's
# switching is steady or moves over the run. The sampler is a subshell at
# nice 0 that wakes once a period and reads with builtins (its sleep is
# its only child). The run's last part, after the last sample, is not seen.
every=; for w in $(cat /proc/cmdline); do case $w in ctxt_every=*) every=${w#ctxt_every=};; esac; done
sampler=
sample_ctxt() {
  while :; do
    read -r up idle < /proc/uptime
    while read -r k v; do [ "$k" = ctxt ] && { echo "CTXT $1 $up $v"; break; }; done < /proc/stat
    sleep $every
  done
}
end_sampling() { [ -n "$sampler" ] && { kill $sampler; wait $sampler 2>/dev/null; cat /tmp/ctxt.txt; }; sampler=; }
while read -r label feats warm window cmd; do
  [ -z "$label" ] && continue
  case "$label" in \#*) continue;; esac
  # feats: sched_features names (NO_X), or name=value for a file in /sys/kernel/debug/sched
  saved=
  if [ "$feats" != "-" ]; then for f in $(echo $feats | tr , ' '); do
    case $f in
      *=*) n=${f%%=*}; saved="$saved $n=$(cat /sys/kernel/debug/sched/$n)"
           echo ${f#*=} > /sys/kernel/debug/sched/$n || echo "SETTING_FAILED $label $f";;
      *) echo $f > /sys/kernel/debug/sched/features || echo "SETTING_FAILED $label $f";;
    esac; done; fi
  # "trace@S": the same, traced from S seconds into the run
  after=0
  case $warm in trace@*) after=${warm#trace@}; warm=trace;; esac
  if [ "$warm" = trace ]; then
    # Stop at a full buffer rather than overwrite: a run's start is what counts.
    T=/sys/kernel/debug/tracing
    [ -d $T ] || T=/sys/kernel/tracing
    echo 0 > $T/tracing_on; echo 0 > $T/options/overwrite; echo 8192 > $T/buffer_size_kb; echo > $T/trace
    events="sched_waking sched_wakeup sched_wakeup_new sched_migrate_task sched_switch sched_process_fork"
    case $window in *:*) events=$(echo ${window#*:} | tr , ' '); window=${window%%:*};; esac
    extra=
    for e in $events; do
      # +EVENT: one more probe on EVENT, from a second trace instance
      # (extra_probe) enabled after this one's, so that it runs after this
      # instance's probe has taken its timestamp; its lines are not printed
      case $e in +*) extra="$extra ${e#+}"; continue;; esac
      # GROUP/EVENT#FILTER: an event outside sched: with its filter
      # (raw_syscalls/sys_exit#id==1: write(2)'s returns).
      case $e in */*) d=$T/events/${e%%#*}
                      case $e in *#*) echo "${e#*#}" > $d/filter;; *) echo 0 > $d/filter;; esac
                      echo 1 > $d/enable || echo "SETTING_FAILED $label trace $e"; continue;; esac
      case $e in *!*) echo "comm != \"${e#*!}\"" > $T/events/sched/${e%%!*}/filter; e=${e%%!*};;
                  *) echo 0 > $T/events/sched/$e/filter;; esac
      echo 1 > $T/events/sched/$e/enable || echo "SETTING_FAILED $label trace $e"
    done
    if [ -n "$extra" ]; then
      mkdir $T/instances/extra_probe
      for e in $extra; do
        case $e in */*) ;; *) e=sched/$e;; esac
        echo 1 > $T/instances/extra_probe/events/$e/enable || echo "SETTING_FAILED $label trace +$e"
      done
    fi
    [ "$after" = 0 ] && echo 1 > $T/tracing_on
  fi
  echo "CMD $label $cmd"
  sstat A $label > /tmp/ssa.txt
  c0=$(ctxt)
  [ -n "$every" ] && { sample_ctxt $label > /tmp/ctxt.txt & sampler=$!; }
  $cmd > /tmp/out.txt 2>&1 &
  main=$!
  if [ "$warm" = 0 ] || [ "$warm" = trace ]; then
    if [ "$after" != 0 ]; then sleep "$after"; echo 1 > $T/tracing_on; fi
    wait $main; c1=$(ctxt)
    end_sampling
    if [ "$warm" = trace ]; then
      echo 0 > $T/tracing_on
      head -n "$window" $T/trace | sed "s/^/TRACE $label /"
      echo 0 > $T/events/sched/enable
      for g in raw_syscalls syscalls; do [ -d $T/events/$g ] && echo 0 > $T/events/$g/enable; done
      [ -d $T/instances/extra_probe ] && { echo 0 > $T/instances/extra_probe/events/enable; rmdir $T/instances/extra_probe; }
    fi
    cat /tmp/ssa.txt; sstat B $label
    echo "RUN $label feats=$feats kids=0 ctxt_total=$((c1 - c0)) ctxt_window=0 tA=0 tB=0 $(grep -h 'Total time\|^Time' /tmp/out.txt | tr -s ' ')"
    grep -h '^COST ' /tmp/out.txt | sed "s/^/GUEST $label /"   # tools/guest/costs.c
    if [ "$feats" != "-" ]; then for f in $(echo $feats | tr , ' '); do case $f in *=*) ;; NO_*) echo ${f#NO_} > /sys/kernel/debug/sched/features;; *) echo NO_$f > /sys/kernel/debug/sched/features;; esac; done; fi
  for x in $saved; do echo ${x#*=} > /sys/kernel/debug/sched/${x%%=*}; done
    continue
  fi
  sleep 0.3
  # The benchmark's workers: the grandchildren of the background job (the
  # shell's job forks perf, perf forks them), or its children, or its threads.
  # Workers to wait for: groups x 2 x fds (-g, -f; perf's and hackbench's
  # defaults 10 and 20).
  groups=10 fds=20 prev=
  for a in $cmd; do
    case $prev in -g|--group|--groups) groups=$a;; -f|--fds) fds=$a;; esac
    prev=$a
  done
  expected=$((groups * 2 * fds))
  KIDS=
  renice -n -20 -p $$ > /dev/null
  for n in 1 2 3 4 5 6 7 8 9 10; do
    kids=; pars=
    for d in /proc/[0-9]*; do { read -r line < $d/stat; } 2>/dev/null || continue; set -- $line; pars="$pars $1:$4"; done
    for x in $pars; do pid=${x%:*}; pp=${x#*:}; [ "$pp" = "$main" ] && kids="$kids $pid"; done
    grand=
    for k in $kids; do for x in $pars; do pid=${x%:*}; pp=${x#*:}; [ "$pp" = "$k" ] && grand="$grand $pid"; done; done
    [ -n "$grand" ] && KIDS=$grand || KIDS=$kids
    # Threads (hackbench -T): the workers are the job's own threads, which
    # /proc lists only under /proc/PID/task; /proc/TID/sched reads each.
    if [ -z "$KIDS" ] && [ -d /proc/$main/task ]; then
      for d in /proc/$main/task/*; do [ "${d##*/}" != "$main" ] && KIDS="$KIDS ${d##*/}"; done
    fi
    set -- $KIDS
    [ $# -ge $expected ] && break
    sleep 0.2
  done
  renice -n 20 -p $$ > /dev/null
  sleep $warm
  tA=$(uptime_s); cA=$(ctxt)
  snap > /tmp/a.txt
  sleep $window
  tB=$(uptime_s); cB=$(ctxt)
  snap > /tmp/b.txt
  wait $main
  c1=$(ctxt)
  end_sampling
  cat /tmp/ssa.txt; sstat B $label
  set -- $KIDS
  echo "RUN $label feats=$feats kids=$# ctxt_total=$((c1 - c0)) ctxt_window=$((cB - cA)) tA=$tA tB=$tB $(grep -h 'Total time\|^Time' /tmp/out.txt | tr -s ' ')"
  echo "SNAP A $label"; cat /tmp/a.txt; echo "SNAP B $label"; cat /tmp/b.txt; echo "SNAP END"
  if [ "$feats" != "-" ]; then for f in $(echo $feats | tr , ' '); do case $f in *=*) ;; NO_*) echo ${f#NO_} > /sys/kernel/debug/sched/features;; *) echo NO_$f > /sys/kernel/debug/sched/features;; esac; done; fi
  for x in $saved; do echo ${x#*=} > /sys/kernel/debug/sched/${x%%=*}; done
done < /runs.txt
echo GUEST_DONE
poweroff -f
