#!/bin/sh
# Build the kernel that tools/guest/run.sh boots to try seed 000's patch on a
# real CFS kernel: Debian's 6.1 source with wake-idle-cpu-6.1.patch (Josef
# Bacik's WAKE_IDLE_CPU as a sched feature, off by default, and three
# wakeup-placement counters appended to /proc/schedstat's cpu lines), in a
# small built-in configuration (guest-kernel.config over tinyconfig: SMP,
# SMT/MC/NUMA domains, HZ=250, voluntary preemption, autogroup, schedstats,
# AF_UNIX, serial console, initramfs; no modules). About 3.5 minutes on 2 CPUs.
#
#   apt-get install linux-source-6.1 bc bison flex libelf-dev
#   tools/guest/build-kernel.sh /tmp/vm      # writes /tmp/vm/bzImage-6.1-wake-idle-cpu
#   SMP=2,sockets=2 tools/guest/run.sh /tmp/vm/bzImage-6.1-wake-idle-cpu tools/guest/runs-wake-idle-cpu.txt wic.log
#
# EXTRA_CONFIG=tools/guest/guest-kernel-trace.config adds the scheduler's
# tracepoints (for guest-init.sh's "trace" runs) and names the image
# bzImage-6.1-wake-idle-cpu-trace; EXTRA_CONFIG=tools/guest/guest-kernel-io.config
# adds per-task I/O accounting (the snapshots' message counts), -io.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$(cd "${1:-.}" && pwd)
src=${LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
extra=${EXTRA_CONFIG:+$(cd "$(dirname "$EXTRA_CONFIG")" && pwd)/$(basename "$EXTRA_CONFIG")}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar xJf "$src" -C "$work"
cd "$work"/linux-source-6.1
patch -p1 < "$here/wake-idle-cpu-6.1.patch"
make ARCH=x86_64 tinyconfig > /dev/null
scripts/kconfig/merge_config.sh -m .config "$here/guest-kernel.config" $extra > /dev/null 2>&1
make ARCH=x86_64 olddefconfig > /dev/null 2>&1
make ARCH=x86_64 -j"$(nproc)" bzImage > build.log 2>&1 || { tail -30 build.log; exit 1; }
suffix=${EXTRA_CONFIG:+-$(basename "$EXTRA_CONFIG" .config)}
name=bzImage-6.1-wake-idle-cpu${suffix#-guest-kernel}
cp arch/x86/boot/bzImage "$out/$name"
echo "$out/$name"
