#!/usr/bin/env bash
# sleepy: the one entry point. See ./build.sh --help and README.md.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${SLEEPY_BUILD_DIR:-$TOP/build}
TREE=$BUILD/linux
PATCHES=$TOP/linux-patches
SRC_TARBALL=${SLEEPY_KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
SRC_PKG=linux-source-6.1
JOBS=${SLEEPY_JOBS:-$(nproc)}

# Debian packages the project needs: kernel build, VM, guest userland, user
# tools (static elfutils/capstone/sqlite and their compression libraries),
# the test harness (clang for the fuzz target) and the perf peer for the
# benchmarks.
DEPS=(
	"$SRC_PKG" build-essential bc flex bison libelf-dev libssl-dev dwarves
	cpio kmod xz-utils rsync git ccache file
	qemu-system-x86 busybox-static
	libdw-dev libcapstone-dev libsqlite3-dev sqlite3
	zlib1g-dev libzstd-dev liblzma-dev libbz2-dev
	linux-perf
	python3 python3-pytest clang
)

usage() {
	cat <<'EOF'
usage: ./build.sh [SUBCOMMAND] [OPTIONS]

Subcommands (default: all):
  all                 deps, then release kernel, user programs and initramfs
  deps                apt-get install every Debian package the project needs
  kernel [--debug]    extract linux-source-6.1, apply linux-patches/series with
                      git am -3, configure from linux-patches/config/, build
                      bzImage and modules with ccache (-sleepy / -sleepy-debug)
  patches             export the build tree's commits to linux-patches/
  user                build syscalls-user/, parse/ and bench/
  initramfs [--debug] busybox userland with our tools and the kernel's modules
  vm [OPTIONS] [-- CMD [ARG...]]
                      boot the kernel in QEMU (TCG) and run CMD as root in the
                      guest; without CMD, an interactive shell. Options:
                        --smp N       virtual CPUs (default 2)
                        --mem MB      guest memory (default 512, debug 1024)
                        --debug       use the debug kernel (lockdep, KASAN, ...)
                        --share DIR   mount DIR read-write at /mnt/share
                        --icount      -icount shift=0,sleep=off (1 insn = 1 ns);
                                      with 2+ vCPUs the kernel boots on one
                                      and init brings the others online
                        --timeout S   kill QEMU after S seconds (exit 124)
                        --perf        add Debian's perf and its libraries
                        --mttcg       multi-threaded TCG: faster with
                                      several vCPUs, but see
                                      Documentation/development.md
                      Exit status: CMD's; 124 on timeout; 125 if the kernel
                      log shows a BUG, WARNING, Oops, lockdep, KASAN or
                      kmemleak report or a panic, or the guest died.
  test                build what is missing, run the test suite (pytest)
  demo [--full]       build what is missing, boot the VM, profile the benchmarks
  bench [--quick] [--runs N] [--icount|--wall] [--smp N]
                      overhead of sleepy and perf on the benchmarks, in
                      the VM; results in results/
  bench pmu [--runs N] [--iterations N] [--periods NS,NS]
                      the cost of one overflow signal, sleepy_pmu against
                      perf, under -icount; results in results/
  clean               remove build/ (kernel trees, images, results)
  -h, --help          this text
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

# step "what" cmd...: print what runs and how long it took.
step() {
	local what=$1 t0 rc=0
	shift
	t0=$(date +%s)
	echo "==> $what"
	# A subshell with its own -e: bash ignores -e inside a function that
	# is called as part of "a || b", so this is not written that way.
	set +e
	(
		set -e
		"$@"
	)
	rc=$?
	set -e
	if [ $rc -ne 0 ]; then
		echo "==> FAILED: $what (after $(($(date +%s) - t0)) s)" >&2
		return $rc
	fi
	echo "==> done: $what ($(($(date +%s) - t0)) s)"
}

# run_logged LOG PATTERN LABEL cmd...: run a long command with its output in
# LOG, printing a progress line every 15 s (lines of LOG matching PATTERN).
# On failure the tail of the log is shown.
run_logged() {
	local log=$1 pat=$2 label=$3 pid rc=0 t0 n
	shift 3
	t0=$(date +%s)
	"$@" >"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		for _ in $(seq 15); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 1
		done
		if kill -0 "$pid" 2>/dev/null; then
			n=$(grep -cE "$pat" "$log" || true)
			echo "    ... $label: $n so far, $(($(date +%s) - t0)) s"
		fi
	done
	wait "$pid" || rc=$?
	if [ $rc -ne 0 ]; then
		echo "---- last lines of $log ----" >&2
		tail -n 40 "$log" >&2
	fi
	return $rc
}

need_root_for() {
	[ "$(id -u)" = 0 ] || die "$1 needs root (try: sudo ./build.sh $1)"
}

# ---------------------------------------------------------------- deps

missing_deps() {
	local p
	for p in "${DEPS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
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
		echo "install them with:"
		echo "  sudo apt-get update && sudo apt-get install -y $missing"
		echo "or run: sudo ./build.sh deps"
		return 1
	fi
	echo "installing: $missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q -o Dpkg::Progress-Fancy=0 \
		-o Dpkg::Use-Pty=0 $missing
}

ensure_deps() {
	local missing
	missing=$(missing_deps | tr '\n' ' ')
	[ -z "${missing// /}" ] && return 0
	if [ "$(id -u)" = 0 ]; then
		step "install Debian packages" cmd_deps
	else
		cmd_deps || die "missing packages: $missing"
	fi
}

# ---------------------------------------------------------------- kernel

debian_version() {
	dpkg-query -W -f='${Version}' "$SRC_PKG" 2>/dev/null || echo unknown
}

series_hash() {
	(
		cd "$PATCHES"
		cat series
		while read -r p; do
			case "$p" in '' | '#'*) continue ;; esac
			cat "$p"
		done <series
	) | sha256sum | cut -d' ' -f1
}

git_tree() {
	git -C "$TREE" -c user.name=sleepy-build \
		-c user.email=sleepy-build@localhost "$@"
}

apply_series() {
	local p n=0
	while read -r p; do
		case "$p" in '' | '#'*) continue ;; esac
		git_tree am -3 -q "$PATCHES/$p" ||
			die "patch $p does not apply (git am -3); see $TREE"
		n=$((n + 1))
	done <"$PATCHES/series"
	echo "applied $n patches from linux-patches/series"
	echo "$(series_hash) $(git_tree rev-parse HEAD)" >"$TREE/.git/sleepy-applied"
}

extract_tree() {
	[ -f "$SRC_TARBALL" ] || die "$SRC_TARBALL missing (./build.sh deps)"
	rm -rf "$TREE" "$BUILD/linux.tmp"
	mkdir -p "$BUILD/linux.tmp"
	echo "extracting $SRC_TARBALL (Debian $SRC_PKG $(debian_version))"
	tar -xf "$SRC_TARBALL" -C "$BUILD/linux.tmp" --strip-components=1
	mv "$BUILD/linux.tmp" "$TREE"
	# Debian's top-level .gitignore ignores everything but debian/ (it is
	# meant for Debian's packaging repository); drop that rule so that new
	# files show up in git status. Nothing else differs from the tarball.
	sed -i '/^# Debian packaging: ignore everything/,$d' "$TREE/.gitignore"
	sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$TREE/.gitignore"
	sed -i '${/^#$/d}' "$TREE/.gitignore"
	git -C "$TREE" init -q -b sleepy
	git_tree add -A
	git_tree commit -q -m "Debian $SRC_PKG $(debian_version), pristine"
	git_tree tag -f pristine >/dev/null
	debian_version >"$TREE/.git/sleepy-debver"
}

# prepare_tree: make build/linux the pristine Debian tree plus our series,
# without destroying commits a developer made there and has not exported.
prepare_tree() {
	local want_ver applied_hash applied_head
	want_ver=$(debian_version)
	if [ ! -d "$TREE/.git" ] ||
		[ "$(cat "$TREE/.git/sleepy-debver" 2>/dev/null)" != "$want_ver" ]; then
		step "extract kernel source into build/linux" extract_tree
		step "apply linux-patches/series (git am -3)" apply_series
		return
	fi
	read -r applied_hash applied_head <"$TREE/.git/sleepy-applied" ||
		applied_hash=none
	[ "$applied_hash" = "$(series_hash)" ] && return 0
	if [ "$(git_tree rev-parse HEAD)" = "$applied_head" ] &&
		[ -z "$(git_tree status --porcelain --untracked-files=no)" ]; then
		echo "linux-patches changed: re-applying the series on pristine"
		git_tree am --abort >/dev/null 2>&1 || true
		git_tree checkout -q -B sleepy pristine
		step "apply linux-patches/series (git am -3)" apply_series
	else
		die "build/linux has commits or changes that are not exported, and" \
			"linux-patches/ changed too: export them with ./build.sh" \
			"patches, or discard them with rm -rf build/linux"
	fi
}

flavor_of() { [ "${1:-}" = --debug ] && echo debug || echo release; }

kernel_out() { echo "$BUILD/out-$1"; }

kernel_release() {
	cat "$(kernel_out "$1")/include/config/kernel.release" 2>/dev/null
}

configure_kernel() {
	local flavor=$1 out frags opt missing=0
	out=$(kernel_out "$flavor")
	frags=("$PATCHES/config/base.config")
	[ "$flavor" = debug ] && frags+=("$PATCHES/config/debug.config")
	mkdir -p "$out"
	make -s -C "$TREE" O="$out" tinyconfig >/dev/null
	(cd "$TREE" && scripts/kconfig/merge_config.sh -m -O "$out" \
		"$out/.config" "${frags[@]}" >/dev/null)
	make -s -C "$TREE" O="$out" olddefconfig >/dev/null
	# Every option the fragments ask for (the last word on each wins) must
	# have survived olddefconfig.
	local -A want=()
	local name
	while IFS= read -r opt; do
		case "$opt" in
		CONFIG_*=*) want[${opt%%=*}]=$opt ;;
		"# CONFIG_"*" is not set")
			name=${opt#\# }
			want[${name% is not set}]=$opt
			;;
		esac
	done < <(cat "${frags[@]}")
	for name in "${!want[@]}"; do
		opt=${want[$name]}
		case "$opt" in
		CONFIG_*) grep -qxF "$opt" "$out/.config" ;;
		*) ! grep -qE "^$name=(y|m)$" "$out/.config" ;;
		esac || {
			echo "config: '$opt' did not take" >&2
			missing=1
		}
	done
	[ $missing = 0 ] || die "kernel config fragments do not apply cleanly"
	sha256sum "${frags[@]}" >"$out/.sleepy-config-stamp"
}

build_kernel() {
	local flavor=$1 out mods rel
	out=$(kernel_out "$flavor")
	mods=$BUILD/mods-$flavor
	command -v ccache >/dev/null || die "ccache missing (./build.sh deps)"
	ccache -M 8G >/dev/null 2>&1 || true
	# Paths under the checkout become relative, so another clone (CI's)
	# hits the same cache entries.
	export CCACHE_BASEDIR=$TOP
	run_logged "$out/build.log" '^  (CC|AS|LD)' "objects built" \
		make -C "$TREE" O="$out" -j"$JOBS" CC="ccache gcc" LOCALVERSION= \
		KBUILD_BUILD_USER=sleepy KBUILD_BUILD_HOST=sleepy \
		bzImage modules
	rel=$(kernel_release "$flavor")
	rm -rf "$mods"
	make -s -C "$TREE" O="$out" INSTALL_MOD_PATH="$mods" LOCALVERSION= \
		INSTALL_MOD_STRIP=1 DEPMOD=/sbin/depmod modules_install >/dev/null
	echo "built $rel: $out/arch/x86/boot/bzImage"
}

cmd_kernel() {
	local flavor
	flavor=$(flavor_of "${1:-}")
	[ $# -le 1 ] && { [ $# = 0 ] || [ "$1" = --debug ]; } ||
		usage_error "kernel: unknown option: $*"
	ensure_deps
	echo "kernel source: Debian $SRC_PKG $(debian_version)," \
		"Linux $(tar_kernel_version)"
	prepare_tree
	step "configure $flavor kernel" configure_kernel "$flavor"
	step "build $flavor kernel (bzImage, modules; ccache)" \
		build_kernel "$flavor"
	git_tree rev-parse HEAD >"$(kernel_out "$flavor")/.sleepy-built-head"
}

tar_kernel_version() {
	if [ -f "$TREE/Makefile" ]; then
		make -s -C "$TREE" kernelversion 2>/dev/null
	else
		echo "(not extracted yet)"
	fi
}

# kernel_fresh FLAVOR: is the built kernel the current series and config?
kernel_fresh() {
	local flavor=$1 out applied_hash applied_head
	out=$(kernel_out "$flavor")
	[ -f "$out/arch/x86/boot/bzImage" ] || return 1
	[ -d "$BUILD/mods-$flavor" ] || return 1
	read -r applied_hash applied_head <"$TREE/.git/sleepy-applied" ||
		return 1
	[ "$applied_hash" = "$(series_hash)" ] || return 1
	[ "$(cat "$out/.sleepy-built-head" 2>/dev/null)" = \
		"$(git_tree rev-parse HEAD)" ] || return 1
	sha256sum --status -c "$out/.sleepy-config-stamp" 2>/dev/null ||
		return 1
}

ensure_kernel() {
	local flavor=$1
	if kernel_fresh "$flavor"; then return 0; fi
	if [ "$flavor" = debug ]; then cmd_kernel --debug; else cmd_kernel; fi
}

cmd_patches() {
	[ $# = 0 ] || usage_error "patches: takes no options"
	[ -d "$TREE/.git" ] || die "no build tree: run ./build.sh kernel first"
	local n
	n=$(git_tree rev-list --count pristine..HEAD)
	[ "$n" -gt 0 ] || die "build/linux has no commits on top of pristine"
	rm -f "$PATCHES"/*.patch
	# Blank context lines are written empty, not as one space: checkpatch
	# checks a file git tracks in its --file mode, where that space would
	# read as trailing whitespace. git am takes both.
	git_tree -c diff.suppressBlankEmpty=true format-patch -q \
		--no-signature --zero-commit -N -o "$PATCHES" pristine..HEAD
	(cd "$PATCHES" && ls -1 -- *.patch) >"$PATCHES/series"
	echo "$(series_hash) $(git_tree rev-parse HEAD)" >"$TREE/.git/sleepy-applied"
	echo "exported $n patches to linux-patches/ (series updated)"
}

# ---------------------------------------------------------------- user space

USER_DIRS=(syscalls-user parse bench tests/progs tests/pmu)

# The uapi header is the single source of the ABI and the record format:
# the tools build against the build tree's copy.
export_uapi() {
	local name h
	mkdir -p "$BUILD/uapi/linux"
	for name in sleepy.h sleepy_pmu.h; do
		h=$TREE/include/uapi/linux/$name
		[ -f "$h" ] || die "$h missing: run ./build.sh kernel first"
		cmp -s "$h" "$BUILD/uapi/linux/$name" ||
			cp "$h" "$BUILD/uapi/linux/$name"
	done
}

user_make() {
	local d
	export_uapi
	for d in "${USER_DIRS[@]}"; do
		[ -f "$TOP/$d/Makefile" ] || continue
		make -s -C "$TOP/$d" OUT="$BUILD/user" \
			KERNEL_UAPI="$BUILD/uapi" "$@"
	done
}

cmd_user() {
	[ $# = 0 ] || usage_error "user: takes no options"
	ensure_deps
	prepare_tree
	mkdir -p "$BUILD/user/guest" "$BUILD/user/host"
	step "build user programs (guest: static; host: parse)" user_make
	ls "$BUILD/user/guest"
}

# ---------------------------------------------------------------- initramfs

# copy_with_libs ROOT BIN: a dynamically linked host binary and the shared
# libraries ldd names, at the same paths under ROOT.
copy_with_libs() {
	install -D -m 0755 "$2" "$1$2"
	copy_libs "$1" "$2"
}

# copy_libs ROOT BIN: the shared libraries ldd names for BIN, at the same
# paths under ROOT, except those found under ROOT already.
copy_libs() {
	local root=$1 bin=$2 lib
	for lib in $(ldd "$bin" 2>/dev/null | grep -oE '/[^ ]+'); do
		case "$lib" in "$root"/*) continue ;; esac
		[ -e "$root$lib" ] || install -D -m 0755 "$lib" "$root$lib"
	done
}

build_initramfs() {
	local flavor=$1 root rel out
	rel=$(kernel_release "$flavor")
	root=$BUILD/initramfs-$flavor.d
	out=$BUILD/initramfs-$flavor.cpio
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,root}
	mkdir -p "$root"/{var/log,mnt/share,home/user,lib/modules}
	chmod 1777 "$root/tmp"
	install -m 0755 /bin/busybox "$root/bin/busybox"
	local a
	for a in $(/bin/busybox --list-full); do
		[ -e "$root/$a" ] || ln -s /bin/busybox "$root/$a"
	done
	# kmod's modprobe, insmod, rmmod, lsmod, modinfo, depmod.
	copy_with_libs "$root" /bin/kmod
	for a in modprobe insmod rmmod lsmod modinfo depmod; do
		rm -f "$root/sbin/$a" "$root/bin/$a" "$root/usr/sbin/$a"
		ln -s /bin/kmod "$root/sbin/$a"
	done
	cp -a "$BUILD/mods-$flavor/lib/modules/$rel" "$root/lib/modules/"
	if [ -d "$BUILD/user/guest" ]; then
		cp -a "$BUILD/user/guest/." "$root/usr/bin/"
		# The dynamically linked test programs (tests/progs) need
		# the loader and the C library; their own libraries are
		# next to them.
		for a in "$root"/usr/bin/*; do
			[ -f "$a" ] && [ ! -L "$a" ] && copy_libs "$root" "$a"
		done
	fi
	cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
user:x:1000:1000:unprivileged user:/home/user:/bin/sh
EOF
	cat >"$root/etc/group" <<'EOF'
root:x:0:
user:x:1000:
EOF
	chown 1000:1000 "$root/home/user"
	install -m 0755 "$TOP/guest/init" "$root/init"
	(cd "$root" && find . -print0 | sort -z |
		cpio --null -o -H newc --quiet -R 0:0 >"$out.tmp")
	# busybox-owned home must stay 1000 in the archive: -R would reset it,
	# so the init fixes it up at boot instead.
	mv "$out.tmp" "$out"
	echo "$out: $(du -h "$out" | cut -f1), kernel $rel"
}

initramfs_fresh() {
	local flavor=$1 out=$BUILD/initramfs-$1.cpio f
	[ -f "$out" ] || return 1
	for f in "$TOP/guest/init" "$BUILD/mods-$flavor" "$BUILD/user/guest"; do
		[ -e "$f" ] || continue
		[ -z "$(find "$f" -newer "$out" -print -quit)" ] || return 1
	done
	[ "$(kernel_out "$flavor")/arch/x86/boot/bzImage" -ot "$out" ]
}

cmd_initramfs() {
	local flavor
	flavor=$(flavor_of "${1:-}")
	[ $# = 0 ] || [ "$1" = --debug ] ||
		usage_error "initramfs: unknown option: $*"
	ensure_kernel "$flavor"
	step "build $flavor initramfs" build_initramfs "$flavor"
}

ensure_user() {
	# make decides what is stale; it is quick when nothing is.
	user_make
}

ensure_initramfs() {
	local flavor=$1
	ensure_kernel "$flavor"
	mkdir -p "$BUILD/user/guest" "$BUILD/user/host"
	ensure_user
	if ! initramfs_fresh "$flavor"; then
		step "build $flavor initramfs" build_initramfs "$flavor"
	fi
}

# ensure_perf_initramfs FLAVOR: the initramfs plus a second cpio archive
# with Debian's perf and the libraries it links (the kernel unpacks
# concatenated archives in order). Only the benchmarks need it.
ensure_perf_initramfs() {
	local base=$BUILD/initramfs-$1.cpio out=$BUILD/initramfs-$1-perf.cpio
	local root=$BUILD/perf-overlay.d
	[ -f "$out" ] && [ "$base" -ot "$out" ] && [ /usr/bin/perf -ot "$out" ] &&
		return 0
	[ -x /usr/bin/perf ] || die "/usr/bin/perf missing (./build.sh deps)"
	rm -rf "$root"
	mkdir -p "$root"
	copy_with_libs "$root" /usr/bin/perf
	(cd "$root" && find . -print0 | sort -z |
		cpio --null -o -H newc --quiet -R 0:0 >"$BUILD/perf-overlay.cpio")
	cat "$base" "$BUILD/perf-overlay.cpio" >"$out.tmp"
	mv "$out.tmp" "$out"
}

# ---------------------------------------------------------------- vm

# sh_quote ARG: ARG single-quoted for any POSIX shell (busybox ash).
sh_quote() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# Lines of a kernel log that mean the run failed.
# Lockdep's reports start with "WARNING:" lines of their own; the other
# patterns are its remaining headers.
SPLAT_RE='BUG:|WARNING:|Oops|Kernel panic|KASAN:|kmemleak: [0-9]+ new suspected|possible circular locking|possible recursive locking|inconsistent lock state|irq lock inversion|suspicious RCU usage|bad unlock balance|DEBUG_LOCKS_WARN_ON|lock held when returning|INFO: task .* blocked|general protection fault|UBSAN:|Call Trace:'

scan_log() {
	# Kernel lines only: the console carries the command's own output too,
	# so only timestamped printk lines are considered there.
	local console=$1 dmesg=$2
	{
		grep -aE '^\[ *[0-9]+\.[0-9]+\]' "$console" 2>/dev/null || true
		cat "$dmesg" 2>/dev/null || true
	} | grep -aE "$SPLAT_RE" |
		sed -E 's/\r$//' | awk '!seen[$0]++' | head -n 40 || true
}

cmd_vm() {
	local smp=2 mem="" flavor=release share="" icount=0 timeout=0 perf=0 arg
	# Single-threaded TCG by default: QEMU 7.2's multi-threaded TCG was
	# seen here to execute a stale int3 at a static-key patch site while
	# another vCPU patched it (Documentation/development.md).
	local tcg_thread=single
	local -a cmd=()
	while [ $# -gt 0 ]; do
		arg=$1
		case "$arg" in
		--smp | --mem | --share | --timeout)
			[ $# -ge 2 ] || usage_error "vm: $arg needs a value"
			case "$arg" in
			--smp) smp=$2 ;;
			--mem) mem=$2 ;;
			--share) share=$2 ;;
			--timeout) timeout=$2 ;;
			esac
			shift 2
			;;
		--debug) flavor=debug; shift ;;
		--icount) icount=1; shift ;;
		--perf) perf=1; shift ;;
		--mttcg) tcg_thread=multi; shift ;;
		--) shift; cmd=("$@"); break ;;
		*) usage_error "vm: unknown option: $arg" ;;
		esac
	done
	[[ "$smp" =~ ^[1-9][0-9]*$ ]] && [ "$smp" -le 64 ] ||
		usage_error "vm: --smp must be 1..64, not '$smp'"
	[ -z "$mem" ] || [[ "$mem" =~ ^[1-9][0-9]*$ ]] ||
		usage_error "vm: --mem must be a number of MB, not '$mem'"
	[[ "$timeout" =~ ^[0-9]+$ ]] ||
		usage_error "vm: --timeout must be seconds, not '$timeout'"
	if [ -n "$share" ]; then
		[ -d "$share" ] || usage_error "vm: --share $share: not a directory"
		share=$(cd "$share" && pwd)
	fi
	if [ -z "$mem" ]; then
		if [ $flavor = debug ]; then mem=1024; else mem=512; fi
	fi

	local run ctl kernel initrd
	kernel=$(kernel_out "$flavor")/arch/x86/boot/bzImage
	initrd=$BUILD/initramfs-$flavor.cpio
	[ $perf = 1 ] && initrd=$BUILD/initramfs-$flavor-perf.cpio
	local -a qemu=(qemu-system-x86_64 -nodefaults -no-user-config
		-machine pc -accel "tcg,thread=$tcg_thread" -cpu qemu64 -smp "$smp" -m "$mem"
		-kernel "$kernel" -initrd "$initrd" -display none -no-reboot)
	[ $icount = 1 ] && qemu+=(-icount shift=0,sleep=off)
	if [ "${SLEEPY_VM_DRY_RUN:-}" = 1 ]; then
		printf '%s\n' "${qemu[@]}"
		[ -n "$share" ] && echo "share=$share"
		[ ${#cmd[@]} -gt 0 ] && printf 'cmd=%s\n' "${cmd[@]}"
		return 0
	fi

	ensure_deps
	ensure_initramfs "$flavor"
	[ $perf = 1 ] && ensure_perf_initramfs "$flavor"
	mkdir -p "$BUILD/runs"
	run=$(mktemp -d "$BUILD/runs/vm.XXXXXX")
	ctl=$run/ctl
	mkdir -p "$ctl"
	if [ ${#cmd[@]} -gt 0 ]; then
		local q=""
		for arg in "${cmd[@]}"; do q+="$(sh_quote "$arg") "; done
		printf '%s\n' "$q" >"$ctl/cmd"
	fi
	[ -n "$share" ] && echo share >"$ctl/want-share"
	local append="console=ttyS0 loglevel=5 panic=-1 oops=panic pci=noacpi"
	# Under -icount, QEMU 7.2 takes minutes or forever to bring up a
	# second vCPU during boot, but onlines one at once later: boot on one
	# and let init bring up the rest (Documentation/development.md).
	[ $icount = 1 ] && [ "$smp" -gt 1 ] &&
		append+=" maxcpus=1 sleepy.online_cpus"
	qemu+=(-append "$append")
	qemu+=(-fsdev "local,id=ctl,path=$ctl,security_model=none"
		-device virtio-9p-pci,fsdev=ctl,mount_tag=sleepyctl)
	if [ -n "$share" ]; then
		qemu+=(-fsdev "local,id=share,path=$share,security_model=none"
			-device virtio-9p-pci,fsdev=share,mount_tag=share)
	fi

	local rc=0 console=$run/console.log
	if [ ${#cmd[@]} -eq 0 ]; then
		# Interactive: the serial console is the terminal.
		qemu+=(-serial mon:stdio)
		"${qemu[@]}" || rc=$?
		[ -f "$ctl/status" ] && rc=$(cat "$ctl/status")
		rm -rf "$run"
		return "$rc"
	fi
	qemu+=(-chardev "stdio,id=con,signal=off,logfile=$console"
		-serial chardev:con)
	if [ "$timeout" -gt 0 ]; then
		timeout -k 5 "$timeout" "${qemu[@]}" </dev/null || rc=$?
	else
		"${qemu[@]}" </dev/null || rc=$?
	fi
	local splats status=""
	splats=$(scan_log "$console" "$ctl/dmesg")
	[ -f "$ctl/status" ] && status=$(tr -dc '0-9' <"$ctl/status")
	if [ "$timeout" -gt 0 ] && { [ $rc = 124 ] || [ $rc = 137 ]; } &&
		[ -z "$status" ]; then
		echo "build.sh vm: timed out after $timeout s; QEMU killed" >&2
		[ -n "$splats" ] && printf 'kernel log:\n%s\n' "$splats" >&2
		keep_run "$run"
		return 124
	fi
	if [ -n "$splats" ]; then
		echo "build.sh vm: the kernel log shows problems:" >&2
		printf '  %s\n' "$splats" >&2
		echo "build.sh vm: failing the run (command status:" \
			"${status:-none})" >&2
		keep_run "$run"
		return 125
	fi
	if [ -z "$status" ]; then
		echo "build.sh vm: the guest did not report an exit status" \
			"(QEMU exit $rc); console log: $console" >&2
		keep_run "$run"
		return 125
	fi
	rm -rf "$run"
	return "$status"
}

keep_run() {
	echo "build.sh vm: logs kept in $1" >&2
}

# ---------------------------------------------------------------- test, demo

cmd_test() {
	ensure_deps
	ensure_initramfs release
	ensure_initramfs debug
	cd "$TOP"
	local rc=0
	/usr/bin/python3 -m pytest -v -rfEs tests/ "$@" || rc=$?
	return $rc
}

cmd_demo() {
	ensure_deps
	ensure_initramfs release
	"$TOP/bench/demo.sh" "$@"
}

cmd_bench() {
	ensure_deps
	ensure_initramfs release
	if [ "${1:-}" = pmu ]; then
		shift
		/usr/bin/python3 "$TOP/bench/pmu_cost.py" "$@"
		return
	fi
	/usr/bin/python3 "$TOP/bench/bench.py" "$@"
}

cmd_clean() {
	[ $# = 0 ] || usage_error "clean: takes no options"
	rm -rf "$BUILD"
	for d in "${USER_DIRS[@]}"; do
		[ -f "$TOP/$d/Makefile" ] && make -s -C "$TOP/$d" clean || true
	done
	echo "removed $BUILD"
}

cmd_all() {
	[ $# = 0 ] || usage_error "all: takes no options"
	step "dependencies" cmd_deps
	cmd_kernel
	cmd_user
	cmd_initramfs
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
