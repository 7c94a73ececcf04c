#!/usr/bin/env bash
# sleepy's VM runner: boots the kernel under QEMU (TCG) with the busybox
# initramfs, runs a command as root in the guest and gives back its output
# and exit status. It builds nothing: ./build.sh vm builds what is missing
# and then runs this script. See guest/vm.sh --help and
# Documentation/development.md ("The VM runner").
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SLEEPY_BUILD_DIR:-$TOP/build}

usage() {
	cat <<'EOF'
usage: guest/vm.sh [OPTIONS] [-- CMD [ARG...]]
       guest/vm.sh --scan-log CONSOLE_LOG [DMESG]
       (./build.sh vm [OPTIONS] [-- CMD [ARG...]] builds the images first)

Boots the sleepy kernel in QEMU (TCG) and runs CMD as root in the guest;
without CMD, an interactive shell on the console (exit powers off).
CMD's stdout and stderr come back byte for byte on the runner's stdout and
stderr, as the command writes them; the kernel's console goes to a log file.
Options:
  --smp N          virtual CPUs (default 2)
  --mem MB         guest memory (default 512, debug 1024)
  --debug          use the debug kernel (lockdep, KASAN, ...)
  --share DIR      mount DIR read-write at /mnt/share (with --host-root,
                   also at DIR's own path)
  --host-root      run CMD in the host's root file system, mounted read
                   only over 9p, with tmpfs on /tmp and /run and writable
                   tmpfs overlays on /etc, /var, /root, /home and /mnt;
                   our tools (build/user/guest) first on PATH, our kernel's
                   modules in /lib/modules. Paths in a session are then
                   host paths.
  --icount         -icount shift=0,sleep=off (1 insn = 1 ns); with 2+
                   vCPUs the kernel boots on one and init brings the
                   others online
  --timeout S      kill QEMU after S seconds (exit 124); 0: never (default)
  --perf           the initramfs with Debian's perf and its libraries
  --mttcg          multi-threaded TCG: faster with several vCPUs, but see
                   Documentation/development.md
  --verbose        the kernel console on stderr as it comes
  --dry-run        print the QEMU command line (one argument a line), the
                   kernel command line (append=), share= and cmd= lines, and
                   boot nothing (also: SLEEPY_VM_DRY_RUN=1)
  --kernel FILE    boot FILE instead of build/out-FLAVOR/.../bzImage
  --initrd FILE    use FILE instead of build/initramfs-FLAVOR[-perf].cpio
  --qemu PROG      run PROG instead of qemu-system-x86_64 (for the tests)
  --scan-log CONSOLE_LOG [DMESG]
                   print the lines of a kept console log (timestamped kernel
                   lines only) and of a dmesg file that make a run fail;
                   exit 1 if there are any, 0 if not
  -h, --help       this text
Exit status: CMD's; 124 on timeout; 125 if the kernel log shows a BUG,
WARNING, Oops, lockdep, KASAN or kmemleak report or a panic, or the guest
reported no exit status (the matching lines, the last console lines and
the kept logs' folder are printed on stderr); 2 for a usage error or a
missing kernel or initramfs. The build folder is $SLEEPY_BUILD_DIR, by
default build/ in the checkout.
EOF
}

say() {
	echo "vm.sh: $*" >&2
}

usage_error() {
	say "$*"
	usage >&2
	exit 2
}

# ---------------------------------------------------------------- splats

# Lines of a kernel log that mean the run failed.
# Lockdep's reports start with "WARNING:" lines of their own; the other
# patterns are its remaining headers.
SPLAT_RE='BUG:|WARNING:|Oops|Kernel panic|KASAN:|kmemleak: [0-9]+ new suspected|possible circular locking|possible recursive locking|inconsistent lock state|irq lock inversion|suspicious RCU usage|bad unlock balance|DEBUG_LOCKS_WARN_ON|lock held when returning|INFO: task .* blocked|general protection fault|UBSAN:|Call Trace:'

# scan_log CONSOLE [DMESG]: the lines of the logs that match SPLAT_RE, each
# once, at most 40. Only the console's timestamped printk lines count: the
# guest's init and shell write there too.
scan_log() {
	local console=$1 dmesg=${2:-}
	{
		grep -aE '^\[ *[0-9]+\.[0-9]+\]' "$console" 2>/dev/null || true
		[ -z "$dmesg" ] || cat "$dmesg" 2>/dev/null || true
	} | grep -aE "$SPLAT_RE" |
		sed -E 's/\r$//' | awk '!seen[$0]++' | head -n 40 || true
}

cmd_scan_log() {
	if [ $# -lt 1 ] || [ $# -gt 2 ]; then
		usage_error "--scan-log takes CONSOLE_LOG [DMESG]"
	fi
	local f found
	for f in "$@"; do
		[ -f "$f" ] || usage_error "--scan-log $f: no such file"
	done
	found=$(scan_log "$@")
	[ -n "$found" ] || return 0
	printf '%s\n' "$found"
	return 1
}

# ---------------------------------------------------------------- options

SMP=2 MEM="" FLAVOR=release SHARE="" ICOUNT=0 TIMEOUT=0 PERF=0 VERBOSE=0
DRY_RUN=0 KERNEL="" INITRD="" QEMU_BIN=qemu-system-x86_64 HOST_ROOT=0
# Single-threaded TCG by default: QEMU 7.2's multi-threaded TCG was seen
# here to execute a stale int3 at a static-key patch site while another
# vCPU patched it (Documentation/development.md).
TCG_THREAD=single
CMD=()

parse_args() {
	local arg
	while [ $# -gt 0 ]; do
		arg=$1
		case "$arg" in
		--smp | --mem | --share | --timeout | --kernel | --initrd | --qemu)
			[ $# -ge 2 ] || usage_error "$arg needs a value"
			case "$arg" in
			--smp) SMP=$2 ;;
			--mem) MEM=$2 ;;
			--share) SHARE=$2 ;;
			--timeout) TIMEOUT=$2 ;;
			--kernel) KERNEL=$2 ;;
			--initrd) INITRD=$2 ;;
			--qemu) QEMU_BIN=$2 ;;
			esac
			shift 2
			;;
		--debug) FLAVOR=debug; shift ;;
		--icount) ICOUNT=1; shift ;;
		--perf) PERF=1; shift ;;
		--host-root) HOST_ROOT=1; shift ;;
		--mttcg) TCG_THREAD=multi; shift ;;
		--verbose) VERBOSE=1; shift ;;
		--dry-run) DRY_RUN=1; shift ;;
		-h | --help) usage; exit 0 ;;
		--scan-log) usage_error "--scan-log comes first, alone" ;;
		--) shift; CMD=("$@"); break ;;
		*) usage_error "unknown option: $arg" ;;
		esac
	done
}

check_args() {
	if ! [[ "$SMP" =~ ^[1-9][0-9]?$ ]] || [ "$SMP" -gt 64 ]; then
		usage_error "--smp must be 1..64, not '$SMP'"
	fi
	[ -z "$MEM" ] || [[ "$MEM" =~ ^[1-9][0-9]*$ ]] ||
		usage_error "--mem must be a number of MB, not '$MEM'"
	[[ "$TIMEOUT" =~ ^[0-9]+$ ]] ||
		usage_error "--timeout must be seconds, not '$TIMEOUT'"
	[ -n "$QEMU_BIN" ] || usage_error "--qemu needs a program"
	if [ -n "$SHARE" ]; then
		[ -d "$SHARE" ] || usage_error "--share $SHARE: not a directory"
		SHARE=$(cd "$SHARE" && pwd)
	fi
	if [ -z "$MEM" ]; then
		if [ $FLAVOR = debug ]; then MEM=1024; else MEM=512; fi
	fi
	return 0
}

# pick_images: the kernel and initramfs unless --kernel/--initrd chose.
pick_images() {
	[ -n "$KERNEL" ] || KERNEL=$BUILD/out-$FLAVOR/arch/x86/boot/bzImage
	if [ -z "$INITRD" ]; then
		INITRD=$BUILD/initramfs-$FLAVOR.cpio
		[ $PERF = 0 ] || INITRD=$BUILD/initramfs-$FLAVOR-perf.cpio
	fi
}

# check_images: one line and exit 2 for a missing image; the runner
# builds nothing.
check_images() {
	local dbg=""
	[ $FLAVOR = release ] || dbg=" --debug"
	[ -f "$KERNEL" ] || {
		say "$KERNEL missing: run ./build.sh kernel$dbg"
		exit 2
	}
	[ -f "$INITRD" ] || {
		if [ $PERF = 1 ]; then
			say "$INITRD missing: run ./build.sh vm$dbg --perf (it builds it)"
		else
			say "$INITRD missing: run ./build.sh initramfs$dbg"
		fi
		exit 2
	}
}

# check_host_root: what the guest takes from the host's build folder.
check_host_root() {
	local f
	[ $HOST_ROOT = 1 ] || return 0
	for f in "$BUILD/user/guest/sample_start" "$BUILD/mods-$FLAVOR/lib/modules"; do
		[ -e "$f" ] || {
			say "$f missing: run ./build.sh user and ./build.sh kernel"
			exit 2
		}
	done
}

# ---------------------------------------------------------------- QEMU

# sh_quote ARG: ARG single-quoted for any POSIX shell (busybox ash).
sh_quote() {
	local q="'\\''"
	printf "'%s'" "${1//\'/$q}"
}

kernel_append() {
	local append="console=ttyS0 loglevel=5 panic=-1 oops=panic pci=noacpi"
	# Under -icount, QEMU 7.2 takes minutes or forever to bring up a
	# second vCPU during boot, but onlines one at once later: boot on one
	# and let init bring up the rest (Documentation/development.md).
	[ $ICOUNT = 1 ] && [ "$SMP" -gt 1 ] &&
		append+=" maxcpus=1 sleepy.online_cpus"
	echo "$append"
}

# qemu_argv RUN: the QEMU command line into QEMU, for the run folder RUN
# (its ctl/ is the 9p control folder, console.log the serial console).
qemu_argv() {
	local run=$1
	QEMU=("$QEMU_BIN" -nodefaults -no-user-config
		-machine pc -accel "tcg,thread=$TCG_THREAD" -cpu qemu64
		-smp "$SMP" -m "$MEM" -kernel "$KERNEL" -initrd "$INITRD"
		-display none -no-reboot)
	[ $ICOUNT = 0 ] || QEMU+=(-icount "shift=0,sleep=off")
	QEMU+=(-append "$(kernel_append)")
	# QEMU's option syntax doubles a comma in a value.
	QEMU+=(-fsdev "local,id=ctl,path=${run//,/,,}/ctl,security_model=none"
		-device "virtio-9p-pci,fsdev=ctl,mount_tag=sleepyctl")
	if [ -n "$SHARE" ]; then
		QEMU+=(-fsdev "local,id=share,path=${SHARE//,/,,},security_model=none"
			-device "virtio-9p-pci,fsdev=share,mount_tag=share")
	fi
	if [ $HOST_ROOT = 1 ]; then
		# Read only; multidevs=remap keeps inode numbers unique across
		# the host's mounts under /.
		QEMU+=(-fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap"
			-device "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot")
	fi
	if [ ${#CMD[@]} -eq 0 ]; then
		# Interactive: the serial console is the terminal.
		QEMU+=(-serial mon:stdio)
	else
		QEMU+=(-serial "file:$run/console.log")
	fi
}

dry_run() {
	qemu_argv "$BUILD/runs/vm.DRY-RUN"
	printf '%s\n' "${QEMU[@]}"
	echo "append=$(kernel_append)"
	[ -z "$SHARE" ] || echo "share=$SHARE"
	[ $HOST_ROOT = 0 ] || host_root_conf | sed 's/^/host-root: /'
	[ ${#CMD[@]} -eq 0 ] || printf 'cmd=%s\n' "${CMD[@]}"
}

# host_root_conf: what the guest's init reads from ctl/host-root, a
# NAME=VALUE a line: the folder of our tools, that of the kernel's modules,
# the shared folder's host path.
host_root_conf() {
	echo "bin=$BUILD/user/guest"
	echo "modules=$BUILD/mods-$FLAVOR/lib/modules"
	[ -z "$SHARE" ] || echo "share=$SHARE"
}

# new_run: a fresh run folder with the control folder the guest reads.
new_run() {
	local arg q=""
	mkdir -p "$BUILD/runs"
	RUN=$(mktemp -d "$BUILD/runs/vm.XXXXXX")
	CTL=$RUN/ctl
	CONSOLE=$RUN/console.log
	mkdir -p "$CTL"
	if [ ${#CMD[@]} -gt 0 ]; then
		for arg in "${CMD[@]}"; do q+="$(sh_quote "$arg") "; done
		printf '%s\n' "$q" >"$CTL/cmd"
		# The files exist before the guest opens them (it truncates
		# them), so that tail can follow them from the start.
		: >"$CTL/stdout"
		: >"$CTL/stderr"
		: >"$CONSOLE"
	fi
	[ -z "$SHARE" ] || echo share >"$CTL/want-share"
	[ $HOST_ROOT = 0 ] || host_root_conf >"$CTL/host-root"
}

interactive() {
	local rc=0
	"${QEMU[@]}" || rc=$?
	[ -f "$CTL/status" ] && rc=$(tr -dc '0-9' <"$CTL/status")
	rm -rf "$RUN"
	return "${rc:-0}"
}

# start_qemu: QEMU in the background, its pid in QPID (that of timeout(1)
# with --timeout). Its own messages go to qemu.log (stderr with --verbose).
start_qemu() {
	local -a pre=()
	[ "$TIMEOUT" = 0 ] || pre=(timeout -k 5 "$TIMEOUT")
	if [ $VERBOSE = 1 ]; then
		"${pre[@]}" "${QEMU[@]}" </dev/null >"$RUN/qemu.log" &
	else
		"${pre[@]}" "${QEMU[@]}" </dev/null >"$RUN/qemu.log" 2>&1 &
	fi
	QPID=$!
}

# stream: CMD's stdout and stderr (and with --verbose the console) to ours
# while QEMU runs; tail ends after QEMU, once it has read every byte.
stream() {
	tail -c +1 -s 0.2 -f --pid="$QPID" "$CTL/stdout" &
	TAILS=("$!")
	tail -c +1 -s 0.2 -f --pid="$QPID" "$CTL/stderr" >&2 &
	TAILS+=("$!")
	if [ $VERBOSE = 1 ]; then
		tail -c +1 -s 0.2 -f --pid="$QPID" "$CONSOLE" | sed -u 's/\r$//' >&2 &
		TAILS+=("$!")
	fi
}

on_signal() {
	trap - INT TERM HUP
	kill "$QPID" 2>/dev/null || true
	wait 2>/dev/null || true
	say "interrupted; QEMU stopped; logs kept in $RUN"
	exit 130
}

batch() {
	local rc=0 t
	start_qemu
	trap on_signal INT TERM HUP
	stream
	wait "$QPID" || rc=$?
	for t in "${TAILS[@]}"; do wait "$t" || true; done
	trap - INT TERM HUP
	report "$rc"
}

# console_tail: the console's last lines, unless --verbose showed them.
console_tail() {
	[ $VERBOSE = 0 ] || return 0
	[ -s "$CONSOLE" ] || return 0
	echo "vm.sh: last console lines:" >&2
	tail -n 15 "$CONSOLE" | sed -E 's/\r$//; s/^/  /' >&2
}

qemu_messages() {
	[ -s "$RUN/qemu.log" ] || return 0
	echo "vm.sh: QEMU said:" >&2
	tail -n 15 "$RUN/qemu.log" | sed 's/^/  /' >&2
}

keep_run() {
	say "logs kept in $RUN (console.log; ctl/dmesg, ctl/stdout, ctl/stderr)"
}

# report QEMU_STATUS: the exit status of the run, and what went wrong.
report() {
	local rc=$1 splats status=""
	splats=$(scan_log "$CONSOLE" "$CTL/dmesg")
	[ -f "$CTL/status" ] && status=$(tr -dc '0-9' <"$CTL/status")
	if [ "$TIMEOUT" -gt 0 ] && { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } &&
		[ -z "$status" ]; then
		say "timed out after $TIMEOUT s; QEMU killed"
		if [ -n "$splats" ]; then
			printf 'kernel log:\n%s\n' "$splats" >&2
		else
			console_tail
		fi
		keep_run
		return 124
	fi
	if [ -n "$splats" ]; then
		say "the kernel log shows problems:"
		printf '  %s\n' "$splats" >&2
		say "failing the run (command status: ${status:-none})"
		keep_run
		return 125
	fi
	if [ -z "$status" ]; then
		say "the guest did not report an exit status (QEMU exit $rc)"
		console_tail
		qemu_messages
		keep_run
		return 125
	fi
	rm -rf "$RUN"
	return "$status"
}

main() {
	if [ "${1:-}" = --scan-log ]; then
		shift
		cmd_scan_log "$@"
		return
	fi
	parse_args "$@"
	check_args
	BUILD=$(realpath -m "$BUILD")
	pick_images
	[ "${SLEEPY_VM_DRY_RUN:-}" != 1 ] || DRY_RUN=1
	if [ $DRY_RUN = 1 ]; then
		dry_run
		return 0
	fi
	check_images
	check_host_root
	new_run
	qemu_argv "$RUN"
	if [ ${#CMD[@]} -eq 0 ]; then
		interactive
	else
		batch
	fi
}

main "$@"
