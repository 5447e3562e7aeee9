#!/bin/sh
# Boot a real kernel under QEMU (TCG: this project's machines have no nested
# KVM) with an initramfs holding busybox, perf and rt-tests' hackbench, run
# the benchmark lines of RUNS (see guest-init.sh), and print what the guest
# measured: context switches a message, and in a sampled window each role's
# share of the time on a CPU, its switches, and the senders' vruntime lead.
#
#   apt-get install qemu-system-x86 busybox-static linux-perf rt-tests
#   apt-get download linux-image-6.1.0-47-amd64       # CFS (the last LTS before EEVDF)
#   apt-get download linux-image-6.12.107+deb12-amd64-unsigned   # EEVDF
#   tools/guest/run.sh linux-image-6.1.0-47-amd64_*.deb tools/guest/runs-messaging.txt [log]
#
# KERNEL may also be a kernel image (a bzImage), such as the patched 6.1 that
# tools/guest/build-kernel.sh builds. The guest has 2 CPUs (SMP to change:
# "2,sockets=2" gives two sockets of one CPU) and 1 GiB, extra QEMU options
# come from QEMU_ARGS, and schedstats are on (CTXT_EVERY=S samples the
# context switches every S seconds of each run: guest-init.sh); the boot is stopped
# after TIMEOUT seconds (1800). Under TCG every cost is several times a
# native one (perf bench sched messaging -g 1 -l 2000: 6-8 s against about
# 1.2 s on the host), while the scheduler's time constants are not: compare
# kernels and features within one emulated machine, not its figures with a
# native box's.
set -eu
deb=$1 runs=$2 log=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case $deb in
  *.deb) dpkg-deb -x "$deb" "$work/kernel"
         kernel=$(ls "$work"/kernel/boot/vmlinuz-* | head -1);;
  *) kernel=$deb;;   # a kernel image built here (tools/guest/build-kernel.sh)
esac
root=$work/initrd
mkdir -p "$root/bin" "$root/usr/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
cp /bin/busybox "$root/bin/"
for a in sh cat ls mount echo sleep awk grep sed poweroff ps head tail wc tr cut sort renice taskset; do
  ln -sf busybox "$root/bin/$a"
done
cp /usr/bin/perf /usr/bin/hackbench "$root/usr/bin/"
for lib in $( (ldd /usr/bin/perf; ldd /usr/bin/hackbench) | awk '/=>/ {print $3} /ld-linux/ {print $1}' | sort -u); do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
# the per-call costs of the emulated machine (tools/guest/costs.c; runs-costs.txt)
gcc -O2 -static -pthread -o "$root/usr/bin/costs" "$here/costs.c"
# one FUTEX_WAKE of several sleepers: a wakeup's own rest (runs-wakeup-remainder.txt)
gcc -O2 -static -pthread -o "$root/usr/bin/futex-wake-all" "$here/../probes/futex-wake-all.c"
cp "$here/guest-init.sh" "$root/init"
chmod +x "$root/init"
cp "$runs" "$root/runs.txt"
(cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1 > "$work/initrd.gz")
out=${log:-$work/serial.log}
timeout "${TIMEOUT:-1800}" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp "${SMP:-2}" -m 1024 \
  ${QEMU_ARGS:-} -kernel "$kernel" -initrd "$work/initrd.gz" -append "console=ttyS0 quiet panic=-1 schedstats=enable${CTXT_EVERY:+ ctxt_every=$CTXT_EVERY}" \
  -nographic -no-reboot > "$out" 2>&1 || true
grep -a '^GUEST\|^SETTING_FAILED' "$out" | cut -c1-300
grep -aq '^GUEST_DONE' "$out" || echo "the guest did not finish (TIMEOUT ${TIMEOUT:-1800} s?): see $out" >&2
python3 "$here/analyze.py" "$out"
