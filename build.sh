#!/usr/bin/env bash
# sleepy: the one entry point. It installs the Debian packages the project
# needs, takes the build lock, lets make decide what to rebuild (Makefile)
# and hands the VM to its runner (guest/vm.sh). See ./build.sh --help.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${SLEEPY_BUILD_DIR:-$TOP/build}
export SLEEPY_BUILD_DIR=$BUILD

# Debian packages the project needs: kernel build, VM, guest userland, user
# tools (static elfutils/capstone/sqlite and their compression libraries),
# the test harness (clang for the fuzz target; go's pprof and chromium, the
# readers of parse's pprof and flame-graph exports; Node.js, a JIT the
# host-root tests profile; Debian's debuginfod server and the client
# library parse links; libiberty, parse's C++ demangler; pytest-xdist, the
# test processes side by side; shellcheck, the scripts' check) and the
# peers for the benchmarks (perf; strace, beside the latency histograms).
DEPS=(
	linux-source-6.1 build-essential bc flex bison libelf-dev libssl-dev
	dwarves cpio kmod xz-utils rsync git ccache file util-linux
	qemu-system-x86 busybox-static
	libdw-dev libcapstone-dev libsqlite3-dev sqlite3 libdebuginfod-dev debuginfod
	libiberty-dev
	zlib1g-dev libzstd-dev liblzma-dev libbz2-dev
	linux-perf strace
	python3 python3-pytest python3-pytest-xdist clang golang-go chromium
	nodejs shellcheck
)

usage() {
	cat <<'EOF'
usage: ./build.sh [SUBCOMMAND] [OPTIONS]

Subcommands (default: all):
  all                 deps, then release kernel, user programs and initramfs
  deps                apt-get install every Debian package the project needs
                      (needs root; every other subcommand runs as any user
                      once the packages are there)
  kernel [--debug]    extract linux-source-6.1, apply linux-patches/series with
                      git am -3, configure from linux-patches/config/, build
                      bzImage and modules with ccache (-sleepy / -sleepy-debug)
  patches             export the build tree's commits to linux-patches/
  uapi                the patched kernel tree's uapi headers and system call
                      table in build/uapi (for tools built by hand; no kernel)
  user                build syscalls-user/, parse/ and bench/
  initramfs [--debug] busybox userland with our tools and the kernel's modules
  vm [OPTIONS] [-- CMD [ARG...]]
                      build what is missing, then boot the kernel in QEMU
                      and run CMD as root (guest/vm.sh --help: the options,
                      --smp, --debug, --share, --icount, --timeout, --perf,
                      --host-root (the host's programs), ...; --dry-run
                      prints the command lines)
  test [--host] [PYTEST ARGS]
                      build what is missing, run the test suite (pytest);
                      --host: only the tests that need no kernel and no VM
  demo [--full]       build what is missing, boot the VM, profile the benchmarks
  bench [--quick] [--runs N] [--icount|--wall] [--smp N]
                      overhead of sleepy and perf on the benchmarks, in
                      the VM; results in results/
  bench pmu [--runs N] [--iterations N] [--periods NS,NS]
                      the cost of one overflow signal, sleepy_pmu against
                      perf, under -icount; results in results/
  bench lstack [--runs N] [--seconds S] [--round-trips N]
                      what logical stacks cost: a push and a pop, the tick
                      at depths 0, 8 and 16, a context switch; -icount
  bench unwind [--runs N]
                      unwind tables against perf --call-graph dwarf on
                      Debian's python3, perl and xz (--host-root): whole
                      stacks, agreement, cost, bytes, table sizes, delay
  bench latency [--runs N] [--calls N] [--seconds S]
                      what --latency costs a system call (beside strace
                      -c) and the bytes a second its records take; -icount
  bench storms [--boots N] [--debug] [--max-time-percent P]
                      sleepy_pmu's 2-vCPU storm boot after boot: each
                      CPU's overflows, signals and holds; -icount
  clean               remove build/ (kernel trees, images, results)
  -h, --help          this text

What needs rebuilding is decided by make (Makefile). One build runs at a
time: a second ./build.sh waits for the first one's lock on build/.
EOF
}

die() {
	echo "build.sh: $*" >&2
	exit 1
}

usage_error() {
	echo "build.sh: $*" >&2
	usage >&2
	exit 2
}

# ---------------------------------------------------------------- deps

missing_deps() {
	local installed
	installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${DEPS[@]}" \
		2>/dev/null | awk '/ install ok installed$/ { print $1 }' || true)
	printf '%s\n' "${DEPS[@]}" | grep -vxF -e "$installed" -e '' || true
}

cmd_deps() {
	local missing
	missing=$(missing_deps | tr '\n' ' ')
	if [ -z "${missing// /}" ]; then
		echo "all ${#DEPS[@]} Debian packages are installed"
		return 0
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "missing Debian packages: $missing"
		echo "install them as root with: ./build.sh deps"
		return 1
	fi
	echo "==> installing Debian packages: $missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q -o Dpkg::Progress-Fancy=0 \
		-o Dpkg::Use-Pty=0 $missing
}

ensure_deps() {
	[ -z "$(missing_deps)" ] || cmd_deps || die "missing Debian packages"
}

# ---------------------------------------------------------------- make

# build TARGET...: make the targets, one build at a time. The lock is
# build/.lock, held by this process (fd 9) while make runs and released
# before anything else (tests, the VM) starts.
build() {
	mkdir -p "$BUILD"
	exec 9>"$BUILD/.lock"
	if ! flock -n 9; then
		echo "build.sh: another ./build.sh is building in $BUILD;" \
			"waiting for it to finish" >&2
		flock 9
	fi
	# make and its children do not get the lock's descriptor: a process
	# that outlived make (git's background gc did) would hold the lock.
	make --no-print-directory -f "$TOP/Makefile" "$@" 9>&- || {
		exec 9>&-
		die "make $* failed"
	}
	exec 9>&-
}

# flavor SUBCOMMAND [--debug]: release or debug; other options are errors.
flavor() {
	case "$#:${2:-}" in
	1:) echo release ;;
	2:--debug) echo debug ;;
	*) return 1 ;;
	esac
}

cmd_kernel() {
	local f
	f=$(flavor kernel "$@") || usage_error "kernel: unknown option: $*"
	ensure_deps
	build "kernel-$f"
}

cmd_initramfs() {
	local f
	f=$(flavor initramfs "$@") || usage_error "initramfs: unknown option: $*"
	ensure_deps
	build "initramfs-$f"
}

cmd_uapi() {
	[ $# = 0 ] || usage_error "uapi: takes no options"
	ensure_deps
	build uapi
}

cmd_user() {
	[ $# = 0 ] || usage_error "user: takes no options"
	ensure_deps
	build user
	ls "$BUILD/user/guest"
}

cmd_patches() {
	[ $# = 0 ] || usage_error "patches: takes no options"
	"$TOP/mk/kernel.sh" export
}

# vm: the images the runner's options ask for, then the runner.
cmd_vm() {
	local flavor=release perf="" i=1
	case "${1:-}" in --scan-log | -h | --help) exec "$TOP/guest/vm.sh" "$@" ;; esac
	while [ $i -le $# ]; do
		case "${!i}" in
		--) break ;;
		--debug) flavor=debug ;;
		--perf) perf=-perf ;;
		--smp | --mem | --share | --timeout | --kernel | --initrd | --qemu)
			i=$((i + 1)) ;;	# and its value
		--dry-run) exec "$TOP/guest/vm.sh" "$@" ;;
		esac
		i=$((i + 1))
	done
	[ "${SLEEPY_VM_DRY_RUN:-}" = 1 ] && exec "$TOP/guest/vm.sh" "$@"
	# The runner checks the options before anything is built.
	"$TOP/guest/vm.sh" --dry-run "$@" >/dev/null || exit $?
	ensure_deps
	build "initramfs-$flavor$perf"
	exec "$TOP/guest/vm.sh" "$@"
}

# ---------------------------------------------------------------- test, demo

# test: pytest with one test process per core (pytest-xdist); the tests
# that share a guest boot stay in one process (tests/boots.py), and a
# boot that must not share the machine takes it alone.
cmd_test() {
	local -a marks=()
	ensure_deps
	if [ "${1:-}" = --host ]; then
		shift
		build host
		marks=(-m "not vm")
	else
		build test
	fi
	cd "$TOP"
	exec /usr/bin/python3 -m pytest -v -rfEs --durations=25 \
		-n "${SLEEPY_TEST_JOBS:-$(nproc)}" --dist loadgroup \
		"${marks[@]}" tests/ "$@"
}

cmd_demo() {
	ensure_deps
	build initramfs-release
	exec "$TOP/bench/demo.sh" "$@"
}

cmd_bench() {
	ensure_deps
	build initramfs-release initramfs-release-perf
	case "${1:-}" in
	pmu) shift; exec /usr/bin/python3 "$TOP/bench/pmu_cost.py" "$@" ;;
	lstack) shift; exec /usr/bin/python3 "$TOP/bench/lstack_bench.py" "$@" ;;
	latency) shift; exec /usr/bin/python3 "$TOP/bench/latency_bench.py" "$@" ;;
	unwind) shift; exec /usr/bin/python3 "$TOP/bench/unwind_bench.py" "$@" ;;
	storms) shift; build initramfs-debug
		exec /usr/bin/python3 "$TOP/bench/pmu_storms.py" "$@" ;;
	esac
	exec /usr/bin/python3 "$TOP/bench/bench.py" "$@"
}

cmd_clean() {
	[ $# = 0 ] || usage_error "clean: takes no options"
	make --no-print-directory -s -f "$TOP/Makefile" clean
	echo "removed $BUILD"
}

cmd_all() {
	[ $# = 0 ] || usage_error "all: takes no options"
	ensure_deps
	build all
}

main() {
	local sub=${1:-all}
	[ $# -gt 0 ] && shift
	case "$sub" in
	-h | --help | help) usage ;;
	all) cmd_all "$@" ;;
	deps) [ $# = 0 ] || usage_error "deps: takes no options"; cmd_deps ;;
	kernel) cmd_kernel "$@" ;;
	patches) cmd_patches "$@" ;;
	uapi) cmd_uapi "$@" ;;
	user) cmd_user "$@" ;;
	initramfs) cmd_initramfs "$@" ;;
	vm) cmd_vm "$@" ;;
	test) cmd_test "$@" ;;
	demo) cmd_demo "$@" ;;
	bench) cmd_bench "$@" ;;
	clean) cmd_clean "$@" ;;
	*) usage_error "unknown subcommand: $sub" ;;
	esac
}

main "$@"
