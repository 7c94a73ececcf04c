#!/usr/bin/env bash
# initramfs-list.sh: the guest's initramfs, described in the kernel's
# usr/gen_init_cpio list format (dir, file, slink, nod lines with modes and
# owners), so that building the archive needs no root and no chown.
#
#   mk/initramfs-list.sh base TOP BUILD FLAVOR   the guest's whole userland
#   mk/initramfs-list.sh perf TOP BUILD FLAVOR   the peers: Debian's perf
#                                                and strace and their
#                                                libraries, an archive the
#                                                kernel unpacks after base
#
# The list goes to standard output. Its "file" lines name the host files
# the archive is made of; the Makefile takes its dependencies from them.
set -euo pipefail

declare -A seen=()	# guest paths listed so far

# dirs PATH: a "dir" line for each parent of PATH not listed yet.
dirs() {
	local d=${1%/*} acc="" part
	local -a parts
	IFS=/ read -ra parts <<<"${d#/}"
	for part in "${parts[@]}"; do
		acc+=/$part
		[ -n "${seen[$acc]:-}" ] && continue
		seen[$acc]=1
		echo "dir $acc 0755 0 0"
	done
}

# dir PATH MODE [UID GID]
dir() {
	dirs "$1/x"
	[ "$2" = 0755 ] && [ "${3:-0}" = 0 ] && return 0
	# A dir with other mode or owner: listed again, the later line wins.
	echo "dir $1 $2 ${3:-0} ${4:-0}"
}

# file GUEST_PATH HOST_PATH [MODE]: a regular file (links are followed).
file() {
	[ -n "${seen[$1]:-}" ] && return 0
	dirs "$1"
	seen[$1]=1
	echo "file $1 $2 ${3:-0755} 0 0"
}

# slink GUEST_PATH TARGET
slink() {
	[ -n "${seen[$1]:-}" ] && return 0
	dirs "$1"
	seen[$1]=1
	echo "slink $1 $2 0777 0 0"
}

# libs BIN [SKIP_DIR]: the shared libraries ldd names for BIN, at their host
# paths, except those under SKIP_DIR (a program's own, found by $ORIGIN).
libs() {
	local lib
	for lib in $(ldd "$1" 2>/dev/null | grep -oE '/[^ ]+' || true); do
		case "$lib" in "${2:-/nonexistent}"/*) continue ;; esac
		file "$lib" "$lib"
	done
}

base() {
	local top=$1 build=$2 flavor=$3 rel mods f a name
	rel=$(cat "$build/out-$flavor/include/config/kernel.release")
	mods=$build/mods-$flavor/lib/modules/$rel
	[ -d "$mods" ] || { echo "initramfs-list: $mods missing" >&2; exit 1; }
	for d in bin sbin usr/bin usr/sbin etc proc sys dev run root var/log \
		mnt/share lib/modules; do
		dir "/$d" 0755
	done
	dir /tmp 1777
	dir /home/user 0755 1000 1000
	echo "nod /dev/console 0600 0 0 c 5 1"
	file /init "$top/guest/init"
	file /etc/passwd "$top/guest/etc/passwd" 0644
	file /etc/group "$top/guest/etc/group" 0644
	# Our tools and test programs first: they win over busybox applets.
	for f in "$build/user/guest"/*; do
		[ -f "$f" ] || continue
		file "/usr/bin/${f##*/}" "$f"
		libs "$f" "$build/user/guest"
	done
	# kmod's modprobe, insmod, rmmod, lsmod, modinfo, depmod.
	file /bin/kmod /bin/kmod
	libs /bin/kmod
	for a in modprobe insmod rmmod lsmod modinfo depmod; do
		slink "/sbin/$a" /bin/kmod
		seen[/bin/$a]=1 seen[/usr/sbin/$a]=1
	done
	file /bin/busybox /bin/busybox
	for a in $(/bin/busybox --list-full); do
		slink "/$a" /bin/busybox
	done
	# The kernel's modules, as modules_install laid them out.
	while IFS= read -r f; do
		name=/lib/modules/$rel${f#"$mods"}
		if [ -L "$f" ]; then
			slink "$name" "$(readlink "$f")"
		elif [ -d "$f" ]; then
			dir "$name" 0755
		else
			file "$name" "$f" 0644
		fi
	done < <(find "$mods" -mindepth 1 | LC_ALL=C sort)
}

perf() {
	local p
	for p in /usr/bin/perf /usr/bin/strace; do
		[ -x $p ] || { echo "initramfs-list: $p missing" \
			"(./build.sh deps)" >&2; exit 1; }
		file $p $p
		libs $p
	done
}

case "${1:-}" in
base) [ $# = 4 ] && base "$2" "$3" "$4" ;;
perf) perf ;;
*)
	echo "usage: mk/initramfs-list.sh base|perf TOP BUILD FLAVOR" >&2
	exit 2
	;;
esac
