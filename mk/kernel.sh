#!/usr/bin/env bash
# kernel.sh: the kernel tree and its builds; the Makefile decides when each
# step runs, this script does it.
#
#   mk/kernel.sh prepare         build/linux: Debian's linux-source-6.1 plus
#                                linux-patches/series (git am -3), keeping
#                                commits a developer has not exported
#   mk/kernel.sh config FLAVOR   tinyconfig + linux-patches/config/ fragments
#                                into build/out-FLAVOR; every option must take
#   mk/kernel.sh build FLAVOR    bzImage and modules (ccache), installed into
#                                build/mods-FLAVOR
#   mk/kernel.sh export          build/linux's pristine..HEAD into
#                                linux-patches/ (series rewritten)
#   mk/kernel.sh version         the Debian and Linux versions used
#
# FLAVOR is release (-sleepy) or debug (-sleepy-debug).
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SLEEPY_BUILD_DIR:-$TOP/build}
TREE=$BUILD/linux
PATCHES=$TOP/linux-patches
SRC_TARBALL=${SLEEPY_KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
SRC_PKG=linux-source-6.1
JOBS=${SLEEPY_JOBS:-$(nproc)}

die() {
	echo "kernel.sh: $*" >&2
	exit 1
}

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

mark_applied() {
	echo "$(series_hash) $(git_tree rev-parse HEAD)" >"$TREE/.git/sleepy-applied"
}

# apply_series: the series onto HEAD with one git am -3 (one run is twice
# as fast as a run a patch: the tree's index is read once).
apply_series() {
	local p next
	local -a patches=()
	while read -r p; do
		case "$p" in '' | '#'*) continue ;; esac
		patches+=("$PATCHES/$p")
	done <"$PATCHES/series"
	if ! git_tree am -3 -q "${patches[@]}" >/dev/null; then
		next=$(cat "$TREE/.git/rebase-apply/next" 2>/dev/null || echo 1)
		die "patch ${patches[$((next - 1))]##*/} does not apply" \
			"(git am -3); see $TREE"
	fi
	echo "applied ${#patches[@]} patches from linux-patches/series"
	mark_applied
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
	# No automatic git gc: it would pack the whole tree in the background
	# (some 90 s of a core) while the kernels build or the tests run.
	git -C "$TREE" config gc.auto 0
	# Uncompressed objects: 19 s instead of 32 here, 1.4 GB instead of
	# 0.5 (git gc compresses them, if the disk matters more).
	git_tree -c core.looseCompression=0 add -A
	git_tree commit -q -m "Debian $SRC_PKG $(debian_version), pristine"
	git_tree tag -f pristine >/dev/null
	debian_version >"$TREE/.git/sleepy-debver"
}

# prepare: make build/linux the pristine Debian tree plus our series,
# without destroying commits a developer made there and has not exported.
cmd_prepare() {
	local applied_hash applied_head
	if [ ! -d "$TREE/.git" ] ||
		[ "$(cat "$TREE/.git/sleepy-debver" 2>/dev/null)" != \
			"$(debian_version)" ]; then
		extract_tree
		apply_series
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
		apply_series
	else
		die "build/linux has commits or changes that are not exported," \
			"and linux-patches/ changed too: export them with" \
			"./build.sh patches, or discard them with rm -rf build/linux"
	fi
}

out_of() {
	case "$1" in
	release | debug) echo "$BUILD/out-$1" ;;
	*) die "unknown flavor '$1' (release or debug)" ;;
	esac
}

# fragment_options FRAG...: NAME<TAB>LINE for every option the fragments
# set; the last word on each name wins.
fragment_options() {
	awk '/^CONFIG_[A-Za-z0-9_]+=/ { n = $0; sub(/=.*/, "", n); w[n] = $0 }
	     /^# CONFIG_[A-Za-z0-9_]+ is not set$/ { w[$2] = $0 }
	     END { for (n in w) print n "\t" w[n] }' "$@"
}

cmd_config() {
	local flavor=$1 out name opt bad=0
	local -a frags=("$PATCHES/config/base.config")
	out=$(out_of "$flavor")
	[ "$flavor" = debug ] && frags+=("$PATCHES/config/debug.config")
	mkdir -p "$out"
	make -s -C "$TREE" O="$out" tinyconfig >/dev/null
	(cd "$TREE" && scripts/kconfig/merge_config.sh -m -O "$out" \
		"$out/.config" "${frags[@]}" >/dev/null)
	make -s -C "$TREE" O="$out" olddefconfig >/dev/null
	# Every option the fragments ask for must have survived olddefconfig.
	while IFS=$'\t' read -r name opt; do
		case "$opt" in
		CONFIG_*) grep -qxF "$opt" "$out/.config" ;;
		*) ! grep -qE "^$name=(y|m)$" "$out/.config" ;;
		esac || {
			echo "config: '$opt' did not take" >&2
			bad=1
		}
	done < <(fragment_options "${frags[@]}")
	[ $bad = 0 ] || die "kernel config fragments do not apply cleanly"
	echo "configured $flavor kernel in $out"
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

cmd_build() {
	local flavor=$1 out mods rel t0
	out=$(out_of "$flavor")
	mods=$BUILD/mods-$flavor
	command -v ccache >/dev/null || die "ccache missing (./build.sh deps)"
	ccache -M 8G >/dev/null 2>&1 || true
	# Paths under the checkout become relative, so another clone (CI's)
	# hits the same cache entries. The kernel passes its absolute source
	# path in -fmacro-prefix-map=SRCTREE/=, whose effect (__FILE__ without
	# that path) is the same in every clone: it stays out of the hash.
	export CCACHE_BASEDIR=$TOP
	export CCACHE_IGNOREOPTIONS='-fmacro-prefix-map=*'
	export CCACHE_NOHASHDIR=1
	t0=$(date +%s)
	echo "building the $flavor kernel (bzImage, modules; ccache, -j$JOBS)"
	run_logged "$out/build.log" '^  (CC|AS|LD)' "objects built" \
		make -C "$TREE" O="$out" -j"$JOBS" CC="ccache gcc" LOCALVERSION= \
		KBUILD_BUILD_USER=sleepy KBUILD_BUILD_HOST=sleepy \
		bzImage modules
	rel=$(cat "$out/include/config/kernel.release")
	rm -rf "$mods"
	make -s -C "$TREE" O="$out" INSTALL_MOD_PATH="$mods" LOCALVERSION= \
		INSTALL_MOD_STRIP=1 DEPMOD=/sbin/depmod modules_install >/dev/null
	echo "built $rel in $(($(date +%s) - t0)) s: $out/arch/x86/boot/bzImage"
}

cmd_export() {
	local n
	[ -d "$TREE/.git" ] || die "no build tree: run ./build.sh kernel first"
	n=$(git_tree rev-list --count pristine..HEAD)
	[ "$n" -gt 0 ] || die "build/linux has no commits on top of pristine"
	rm -f "$PATCHES"/*.patch
	# Blank context lines are written empty, not as one space: checkpatch
	# checks a file git tracks in its --file mode, where that space would
	# read as trailing whitespace. git am takes both. Blob ids are cut to
	# 9 digits on every machine (git's default grows with the object
	# count), so that an export changes only the patches that changed.
	git_tree -c diff.suppressBlankEmpty=true -c core.abbrev=9 \
		format-patch -q \
		--no-signature --zero-commit -N -o "$PATCHES" pristine..HEAD
	(cd "$PATCHES" && ls -1 -- *.patch) >"$PATCHES/series"
	mark_applied
	echo "exported $n patches to linux-patches/ (series updated)"
}

cmd_version() {
	local v="(not extracted yet)"
	[ -f "$TREE/Makefile" ] && v=$(make -s -C "$TREE" kernelversion)
	echo "kernel source: Debian $SRC_PKG $(debian_version), Linux $v"
}

case "${1:-} $#" in
"prepare 1") cmd_prepare ;;
"config 2") cmd_config "$2" ;;
"build 2") cmd_build "$2" ;;
"export 1") cmd_export ;;
"version 1") cmd_version ;;
*)
	echo "usage: mk/kernel.sh prepare|export|version, or" \
		"mk/kernel.sh config|build release|debug" >&2
	exit 2
	;;
esac
