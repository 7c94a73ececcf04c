#!/bin/bash
# tick_profile.sh: where the sampler's instructions go, tick by tick.
#
# Boots the sleepy kernel under QEMU (TCG, 1 vCPU, -icount) with QEMU's
# own trace of the translated blocks it runs (-d in_asm,exec,nochain,
# kernel text only), runs CMD in the guest, and follows every call of
# on_hard_interrupt() from its entry to its return: the instructions
# executed inside it, by kernel function, per tick. A session (from one
# sample_start to the next) is a column of the report; ticks that took
# the call chain of a kernel-mode sample (sleepy_kernel_chain(): the
# kernel's frames, then the user's from where the task entered it) are
# counted apart from the others. Under -icount an
# instruction is a nanosecond of guest time, so this is the tick
# handler's cost as the benchmarks see it, taken apart.
#
# The trace is read through a pipe as QEMU writes it (gigabytes a
# second of guest time): nothing of it is kept. Only CMD's run is traced:
# QEMU boots logging the blocks it translates, and logs the blocks it
# runs from when the guest is about to run CMD until CMD has ended (the
# monitor's log command, on a pair of pipes; the guest waits for each
# switch on a shared folder). Tracing the boot too took 45 s of a bare
# 90 s run.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)

usage() {
	cat <<EOF
usage: bench/tick_profile.sh [--kernel DIR] [--top N] [--annotate FUNC]
                             [--session N] [--host-root] -- CMD...

Runs CMD in a 1-vCPU -icount guest and prints the instructions of each
tick of the sampler (on_hard_interrupt() and all it calls), per kernel
function, for each session CMD starts.

  --kernel DIR   the kernel's build folder, with arch/x86/boot/bzImage
                 and System.map (default: build/out-release)
  --top N        functions shown per session and kind of tick (default 12)
  --annotate FUNC
                 also FUNC's instructions (objdump of the kernel's vmlinux),
                 each block headed by how often a tick ran it, in the
                 ticks of --session N (default 1) that did not take a
                 kernel-mode sample's call chain
  --host-root    the guest's root is the host's (build.sh vm --host-root):
                 Debian's own programs, as the host has them
  -h, --help     this text

Example:
  bench/tick_profile.sh -- sh -c 'sample_start -o /tmp/s --callchain;
      loop 100000000; sample_stop'
EOF
}

die() { echo "tick_profile.sh: $*" >&2; exit 1; }

KDIR=$TOP/build/out-release TOPN=12 ANNOTATE="" SESSION=1 VMOPTS=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) [ $# -ge 2 ] || die "--kernel needs a folder"
		KDIR=$2; shift 2 ;;
	--top) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] ||
			die "--top needs a positive number"
		TOPN=$2; shift 2 ;;
	--annotate) [ -n "${2:-}" ] || die "--annotate needs a function"
		ANNOTATE=$2; shift 2 ;;
	--session) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] ||
			die "--session needs a positive number"
		SESSION=$2; shift 2 ;;
	--host-root) VMOPTS+=(--host-root); shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
[ $# -gt 0 ] || die "no guest command (see --help)"
MAP=$KDIR/System.map IMAGE=$KDIR/arch/x86/boot/bzImage
[ -r "$MAP" ] || die "$MAP: not readable (build the kernel first)"
[ -r "$IMAGE" ] || die "$IMAGE: not readable (build the kernel first)"

# addr SYMBOL: its address in System.map, 16 hex digits.
addr() {
	local a
	a=$(awk -v s="$1" '$3 == s { print $1; exit }' "$MAP")
	[ -n "$a" ] || die "$MAP has no $1 (not a sleepy kernel?)"
	echo "$a"
}
STEXT=$(addr _stext) ETEXT=$(addr _etext)
START=$(addr __x64_sys_sample_start) HANDLER=$(addr on_hard_interrupt)
KCHAIN=$(addr sleepy_kernel_chain)
if [ -n "$ANNOTATE" ]; then
	FROM=$(addr "$ANNOTATE")
	[ -r "$KDIR/vmlinux" ] || die "$KDIR/vmlinux: not readable"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tick_profile.XXXXXX")
trap 'kill $(jobs -p) 2> /dev/null || :; rm -rf "$WORK"' EXIT
mkfifo "$WORK/trace" "$WORK/mon.in" "$WORK/mon.out"
mkdir "$WORK/share"
cat > "$WORK/qemu" <<EOF
#!/bin/sh
exec qemu-system-x86_64 "\$@" -d in_asm,nochain \\
	-dfilter 0x$STEXT..0x$ETEXT -D "$WORK/trace" \\
	-chardev pipe,id=mon,path="$WORK/mon" -mon chardev=mon,mode=readline
EOF
chmod +x "$WORK/qemu"

# monitor ITEMS: QEMU logs ITEMS from now on (its monitor's log command,
# done when the monitor prompts again), through fd 3, the monitor's
# input; its output goes to $WORK/mon.log.
PROMPTS=1
monitor() {
	echo "log $1" >&3
	PROMPTS=$((PROMPTS + 1))
	until [ "$(grep -o '(qemu)' "$WORK/mon.log" | wc -l)" -ge $PROMPTS ]; do
		sleep 0.01
	done
}

# wait_for FILE: until the guest has made FILE in the shared folder.
wait_for() {
	until [ -e "$WORK/share/$1" ]; do sleep 0.01; done
}

# The switches, as the guest reaches each point of GUEST_CMD.
switches() {
	exec 3>"$WORK/mon.in"
	cat "$WORK/mon.out" > "$WORK/mon.log" &
	wait_for ready
	monitor in_asm,exec,nochain
	touch "$WORK/share/go"
	wait_for end
	monitor in_asm,nochain
	touch "$WORK/share/off"
}

# CMD in the guest, between the switches; its status is CMD's. (Single
# quotes: the guest's shell expands it.)
# shellcheck disable=SC2016
GUEST_CMD='touch /mnt/share/ready
until [ -e /mnt/share/go ]; do sleep 0.01; done
"$@"; s=$?
touch /mnt/share/end
until [ -e /mnt/share/off ]; do sleep 0.01; done
exit $s'

# The tracer: the length of every translated block (from in_asm), then
# each block run (exec) inside on_hard_interrupt(), followed by the calls
# and returns that end blocks. Prints "F session kind pc instructions"
# and "T session kind ticks instructions" (kind 1: the tick took a kernel
# sample's call chain). Addresses are 16 hex digits, so strings order them.
LC_ALL=C awk -v START="$START" -v HANDLER="$HANDLER" -v KCHAIN="$KCHAIN" '
/^IN: / { intb = 1; first = ""; n = 0; last = ""; next }
intb && /^0x/ {
	if (first == "") first = substr($1, 3, 16)
	if (length($0) > 46) { n++; last = substr($0, 47) }
	next
}
intb && /^$/ {
	if (first != "") {
		len[first] = n
		step[first] = last ~ /^call/ ? 1 : last ~ /^ret/ ? -1 : 0
	}
	intb = 0; next
}
/^Trace / {
	split($4, a, "/"); pc = a[2]
	if (pc == START) session++
	if (depth == 0) {
		if (pc != HANDLER || !session) next
		depth = 1; kind = 0; ins = 0; np = 0
	}
	if (pc == KCHAIN) kind = 1
	seq[++np] = pc; ins += len[pc]; depth += step[pc]
	if (depth == 0) {
		ticks[session, kind]++; total[session, kind] += ins
		for (i = 1; i <= np; i++) cnt[session, kind, seq[i]] += len[seq[i]]
	}
}
END {
	for (k in cnt) { split(k, b, SUBSEP); print "F", b[1], b[2], b[3], cnt[k] }
	for (k in ticks) { split(k, b, SUBSEP); print "T", b[1], b[2], ticks[k], total[k] }
	for (pc in len) print "L", pc, len[pc]
}' "$WORK/trace" > "$WORK/counts" &
TRACER=$!

echo "==> tick profile of: $*"
switches &
"$TOP/build.sh" vm --smp 1 --icount --kernel "$IMAGE" --qemu "$WORK/qemu" \
	--timeout 3600 --share "$WORK/share" "${VMOPTS[@]}" -- \
	sh -c "$GUEST_CMD" sh "$@"
wait "$TRACER" || die "the trace reader failed"

# Functions: each block's start address to the text symbol at or below it
# (a binary search over System.map's sorted text symbols).
LC_ALL=C sort "$MAP" | LC_ALL=C awk -v TOPN="$TOPN" '
FNR == NR {
	if ($2 ~ /^[tTwW]$/) { sym[++ns] = $1; name[ns] = $3 }
	next
}
function fn(pc,   lo, hi, mid) {
	lo = 1; hi = ns
	while (lo < hi) {
		mid = int((lo + hi + 1) / 2)
		if (sym[mid] <= pc) lo = mid; else hi = mid - 1
	}
	return name[lo]
}
$1 == "T" { ticks[$2 " " $3] = $4; total[$2 " " $3] = $5; next }
$1 == "F" { per[$2 " " $3 SUBSEP fn($4)] += $5 }
$1 == "L" { next }
END {
	for (k in per) { split(k, b, SUBSEP); print b[1], per[k] / ticks[b[1]], b[2] }
	for (k in ticks)
		printf "%s 1e99 %.0f %d\n", k, total[k] / ticks[k], ticks[k]
}' - "$WORK/counts" | sort -k1,1n -k2,2n -k3,3gr | awk -v TOPN="$TOPN" '
$3 == "1e99" {
	printf "\nsession %d, %s: %d ticks, %d instructions a tick\n", $1,
		$2 ? "kernel-mode ticks with chains" : "other ticks", $5, $4
	shown = 0; next
}
shown++ < TOPN { printf "  %8.1f  %s\n", $3, $4 }'

[ -n "$ANNOTATE" ] || exit 0
# FUNC's code from its address to the next text symbol's, each block that
# ran headed by its runs a tick and its instructions a tick.
TO=$(LC_ALL=C awk -v a="$FROM" '$2 ~ /^[tTwW]$/ && $1 > a && (b == "" || $1 < b) { b = $1 }
	END { print b }' "$MAP")
echo
echo "$ANNOTATE in session $SESSION, ticks without a kernel-mode chain:"
objdump -d --no-show-raw-insn --start-address="0x$FROM" \
	--stop-address="0x$TO" "$KDIR/vmlinux" | LC_ALL=C awk -v S="$SESSION" '
FNR == NR {
	if ($1 == "L") len[$2] = $3
	else if ($1 == "F" && $2 == S && $3 == 0) cnt[$4] = $5
	else if ($1 == "T" && $2 == S && $3 == 0) ticks = $4
	next
}
/^ *ffffffff[0-9a-f]+:/ {
	pc = $1; sub(/:$/, "", pc); sub(/^ +/, "", pc)
	if (cnt[pc] && ticks)
		printf "---- %.2f runs a tick, %.1f instructions a tick\n",
			cnt[pc] / len[pc] / ticks, cnt[pc] / ticks
	print
}' "$WORK/counts" -
