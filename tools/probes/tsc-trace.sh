# Sourced by host-write-tail.sh and host-wakeup-remainder.sh: native tracing
# on the TSC clock (trace_clock x86-tsc: the default clocks print whole
# microseconds, and the spans these probes measure are under half of one),
# whose rate is read from two trace_marker lines a second apart with the
# wall clock's nanoseconds in their text (date(1); a clock step in that
# second would spoil it), and the trace printed in a guest serial log's
# layout for the python readers (ftrace_text.py).

# A trace on the TSC clock, in a guest log's layout with seconds:
# to_guest_layout LABEL TSC_TICKS_PER_NS < trace
to_guest_layout() {
  awk -v label="$1" -v rate="$2" '
    /^#/ { next }
    match($0, /\] [^ ]+ +[0-9]+: /) {
      head = substr($0, 1, RSTART + RLENGTH - 1); rest = substr($0, RSTART + RLENGTH)
      n = split(head, f, " "); tsc = f[n]; sub(/:$/, "", tsc)
      sub(/[0-9]+: $/, "", head)
      printf "TRACE %s %s%.9f: %s\n", label, head, tsc / rate / 1e9, rest
    }'
}

# tsc_trace_save: tracefs mounted at $T, its clock and buffer size kept for
# tsc_trace_restore (call it from the caller's EXIT trap, set after this).
tsc_trace_save() {
  T=/sys/kernel/tracing
  [ -d $T/events ] || mount -t tracefs nodev $T
  saved_clock=$(sed 's/.*\[\(.*\)\].*/\1/' $T/trace_clock) saved_buffer_kb=$(cat $T/buffer_size_kb)
}
tsc_trace_restore() {
  echo 0 > $T/tracing_on; echo 0 > $T/events/enable
  echo "$saved_clock" > $T/trace_clock; echo "$saved_buffer_kb" > $T/buffer_size_kb; echo > $T/trace
}

# tsc_trace_begin PROGRAM: the TSC clock on, 30 MB a CPU, and tsc_per_ns
# measured (printed as a comment line).
tsc_trace_begin() {
  echo 0 > $T/tracing_on
  echo x86-tsc > $T/trace_clock
  echo 30000 > $T/buffer_size_kb
  echo > $T/trace
  echo 1 > $T/tracing_on
  echo "wall_ns $(date +%s%N)" > $T/trace_marker
  sleep 1
  echo "wall_ns $(date +%s%N)" > $T/trace_marker
  echo 0 > $T/tracing_on
  tsc_per_ns=$(awk 'match($0, / [0-9]+: tracing_mark_write: wall_ns /) {
                      n++; t[n] = substr($0, RSTART + 1) + 0; m[n] = $NF }
                    END { if (n == 2 && m[2] > m[1]) printf "%.9f", (t[2] - t[1]) / (m[2] - m[1]) }' $T/trace)
  [ -n "$tsc_per_ns" ] || { echo "$1: no TSC rate from the trace markers" >&2; exit 1; }
  echo "# TSC ticks per ns: $tsc_per_ns"
}
