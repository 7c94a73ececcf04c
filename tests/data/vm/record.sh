#!/usr/bin/env bash
# Record the kernel logs of tests/data/vm/ from real boots (README.md):
#   tests/data/vm/record.sh OUTDIR [NAME...]
# needs both kernels and initramfs images in $SLEEPY_BUILD_DIR (default
# build/). It builds splat_extra.ko against the debug kernel, appends it and
# this checkout's guest/init to a copy of each initramfs (the kernel unpacks
# concatenated archives in order, later files win), boots once per splat
# and copies each run's console.log and dmesg to OUTDIR as NAME.console and
# NAME.dmesg, whole (README.md says which lines the tests' copies keep).
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${SLEEPY_BUILD_DIR:-$TOP/build}
OUT=${1:?usage: record.sh OUTDIR [NAME...]}
shift
WANT=" ${*:-clean warn lockdep atomic_sleep kasan kmemleak panic} "
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp -r "$TOP/tests/data/vm/splat_extra" "$work/mod"
make -s -C "$BUILD/linux" O="$BUILD/out-debug" M="$work/mod" modules

# initrd FLAVOR: the flavor's initramfs with this checkout's init and, for
# the debug kernel, splat_extra.ko at /splat_extra.ko.
initrd() {
	local root=$work/root-$1
	mkdir -p "$root"
	install -m 0755 "$TOP/guest/init" "$root/init"
	[ "$1" = release ] || cp "$work/mod/splat_extra.ko" "$root/"
	cp "$BUILD/initramfs-$1.cpio" "$work/initramfs-$1.cpio"
	(cd "$root" && find . | sort | cpio -o -H newc --quiet -R 0:0) \
		>>"$work/initramfs-$1.cpio"
	echo "$work/initramfs-$1.cpio"
}

# record NAME FLAVOR SCRIPT: boot, keep the run's logs as NAME.*.
record() {
	local name=$1 flavor=$2 script=$3 err kept rc=0
	[[ "$WANT" == *" $name "* ]] || return 0
	local -a opts=(--smp 2 --timeout 600 --initrd "$(initrd "$flavor")")
	[ "$flavor" = release ] || opts+=(--debug)
	err=$work/$name.err
	# A kernel line that fails (and so keeps) even a clean run; the
	# copies leave it out.
	"$TOP/guest/vm.sh" "${opts[@]}" -- sh -c \
		"$script; echo '<4>BUG: record.sh keeps this run' >/dev/kmsg" \
		>"$work/$name.out" 2>"$err" || rc=$?
	echo "$name: exit $rc"
	kept=$(sed -n 's/^vm.sh: logs kept in \([^ ]*\).*/\1/p' "$err")
	grep -av 'record.sh keeps this run' "$kept/console.log" \
		>"$OUT/$name.console" || true
	[ ! -f "$kept/ctl/dmesg" ] ||
		grep -av 'record.sh keeps this run' "$kept/ctl/dmesg" \
			>"$OUT/$name.dmesg" || true
	rm -rf "$kept"
}

record clean debug "uname -r"
record warn release "modprobe sleepy_splat_test provoke=warn"
record lockdep debug "modprobe sleepy_splat_test provoke=lockdep"
record atomic_sleep debug "modprobe sleepy_splat_test provoke=atomic_sleep"
record kasan debug "insmod /splat_extra.ko provoke=kasan"
# kmemleak reports an object unreferenced in a scan if it was older than
# 5 s at the scan before: two scans.
record kmemleak debug "insmod /splat_extra.ko provoke=leak; sleep 6;
	echo scan > /sys/kernel/debug/kmemleak; echo scan > /sys/kernel/debug/kmemleak;
	cat /sys/kernel/debug/kmemleak"
record panic debug "insmod /splat_extra.ko provoke=oops"
