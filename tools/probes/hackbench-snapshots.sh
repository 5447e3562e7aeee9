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
# Without CONFIG_SCHEDSTATS (or with kernel.sched_schedstats off) the wait
# fields read 0, and analyze.py leaves the per-arrival figures out; without
# CONFIG_TASK_IO_ACCOUNTING there are no io files and no messages in the
# window. The snapshots' cat runs at nice -20 so that it is an instant, as
# in the guest. Needs root for the nice (Debian: apt-get install rt-tests).
set -eu
label=$1 warm=$2 window=$3
shift 3
ctxt() { awk '/^ctxt/ {print $2}' /proc/stat; }
uptime_s() { awk '{print $1}' /proc/uptime; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "CMD $label $*"
c0=$(ctxt)
"$@" > "$out" 2>&1 &
main=$!
( while kill -0 $main 2> /dev/null; do echo "CTXT $label $(uptime_s) $(ctxt)"; sleep 0.25; done ) > "$out.ctxt" &
sampler=$!
# The workers: the benchmark's children, or (threads, -T) its own threads.
sleep 0.3
kids=$(pgrep -P $main | tr '\n' ' ' || true)
if [ -z "$kids" ]; then
  kids=$(ls /proc/$main/task | grep -v "^$main\$" | tr '\n' ' ')
fi
snap() {
  files=
  for p in $kids; do
    io=/proc/$p/io
    [ -d /proc/$main/task/$p ] && io=/proc/$main/task/$p/io
    files="$files /proc/$p/sched /proc/$p/stat $io"
  done
  nice -n -20 cat $files 2> /dev/null || true
}
sleep "$warm"
tA=$(uptime_s); cA=$(ctxt)
snap > "$out.a"
sleep "$window"
tB=$(uptime_s); cB=$(ctxt)
snap > "$out.b"
wait $main
c1=$(ctxt)
wait $sampler
cat "$out.ctxt"
set -- $kids
echo "RUN $label feats=- kids=$# ctxt_total=$((c1 - c0)) ctxt_window=$((cB - cA)) tA=$tA tB=$tB $(grep -h 'Total time\|^Time' "$out" | tr -s ' ')"
echo "SNAP A $label"; cat "$out.a"; echo "SNAP B $label"; cat "$out.b"; echo "SNAP END"
rm -f "$out.ctxt" "$out.a" "$out.b"
