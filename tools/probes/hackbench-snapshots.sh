#!/bin/sh
# Run a hackbench-style benchmark on this machine's own kernel and take the
# snapshots tools/guest/guest-init.sh takes in a guest, in its serial log's
# format, so that tools/guest/analyze.py reads a native run as it reads a
# guest's: each worker's /proc/PID/sched, /proc/PID/stat and /proc/PID/io
# (a thread's own, under its process's task/) WARM seconds after the
# workers exist (A) and WINDOW seconds later (B), /proc/stat's context
# switches every 0.25 s over the run (CTXT lines), then the RUN line.
#
#   tools/probes/hackbench-snapshots.sh LABEL WARM WINDOW hackbench -g 1 -f 6 -l 100000 > native.log
#   python3 tools/guest/analyze.py native.log
#
# The workers are the benchmark's children (processes) or its threads (-T),
# waited for until there are groups x 2 x fds of them (-g, -f; hackbench's
# defaults 10 and 20), at most 2 s. analyze.py gives them their roles by
# pid order, as guest-init.sh's (receivers are forked first), which a pid
# wrap during the launch would upset. Without CONFIG_SCHEDSTATS (or with
# kernel.sched_schedstats off) the wait fields read 0 and analyze.py leaves
# the per-arrival figures out; without CONFIG_TASK_IO_ACCOUNTING there are
# no io files and no messages in the window. A run that ends before a
# snapshot leaves that snapshot empty, which analyze.py reports. The
# snapshots' cat runs at nice -20 so that it is an instant, as in the
# guest: root for that (Debian: apt-get install rt-tests).
set -eu
label=$1 warm=$2 window=$3
shift 3
ctxt() { awk '/^ctxt/ {print $2}' /proc/stat; }
uptime_s() { awk '{print $1}' /proc/uptime; }
groups=10 fds=20 prev=
for a in "$@"; do
  case $prev in -g|--groups) groups=$a;; -f|--fds) fds=$a;; esac
  prev=$a
done
expected=$((groups * 2 * fds))
tmp=$(mktemp -d)
main= sampler=
cleanup() {
  for p in $sampler $main; do kill "$p" 2> /dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "CMD $label $*"
c0=$(ctxt)
"$@" > "$tmp/out" 2>&1 &
main=$!
( while kill -0 $main 2> /dev/null; do echo "CTXT $label $(uptime_s) $(ctxt)"; sleep 0.25; done ) > "$tmp/ctxt" &
sampler=$!
kids=
for n in 1 2 3 4 5 6 7 8 9 10; do
  sleep 0.2
  kids=$(pgrep -P $main | tr '\n' ' ' || true)
  [ -z "$kids" ] && [ -d /proc/$main/task ] && kids=$(ls /proc/$main/task 2> /dev/null | grep -v "^$main\$" | tr '\n' ' ' || true)
  set -- $kids
  [ $# -ge $expected ] && break
done
snap() {
  files=
  for p in $kids; do
    io=/proc/$p/io
    [ -d /proc/$main/task/$p ] && io=/proc/$main/task/$p/io
    files="$files /proc/$p/sched /proc/$p/stat $io"
  done
  [ -n "$files" ] && nice -n -20 cat $files 2> /dev/null || true
}
sleep "$warm"
tA=$(uptime_s); cA=$(ctxt)
snap > "$tmp/a"
sleep "$window"
tB=$(uptime_s); cB=$(ctxt)
snap > "$tmp/b"
wait $main || echo "BENCHMARK_FAILED $label $?"
main=
c1=$(ctxt)
wait $sampler || true
sampler=
cat "$tmp/ctxt"
set -- $kids
echo "RUN $label feats=- kids=$# ctxt_total=$((c1 - c0)) ctxt_window=$((cB - cA)) tA=$tA tB=$tB $(grep -E -h 'Total time|^Time' "$tmp/out" | tr -s ' ')"
echo "SNAP A $label"; cat "$tmp/a"; echo "SNAP B $label"; cat "$tmp/b"; echo "SNAP END"
