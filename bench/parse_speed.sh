#!/usr/bin/env bash
# parse_speed.sh: how fast parse reads a large session file, side by side
# with perf report. See Documentation/results.md, "parse speed".
#
#   bench/parse_speed.sh [--samples N] [--chain-samples N] [--runs R]
#                        [--dir DIR] [--perf-freq HZ] [--perf-loop N]
#                        [--perf-call N] [--perf-btree N]
#
# 1. tests/progs/synth_big writes a deterministic synthetic session of N
#    samples (default 50 million, about 1.9 GB) into DIR (default
#    build/parse-speed), mapping real ELF files (a static benchmark, a
#    PIE, a shared library of the test tree and the C library), unless the
#    same file is there already.
# 2. parse --by appid-eip and parse --by symbol read it R times (default
#    3); the best wall time gives samples/s; /usr/bin/time gives peak RSS.
# 3. The call-chain views: a synthetic session of --chain-samples samples
#    (default 10 million) with chains of depth 20 (synth_big --chains 20),
#    read by parse --tree, --format folded and --children.
# 4. perf record -e cpu-clock -F HZ (default 20000) records the benchmark
#    workload (loop, call and btree; default sizes 1e10, 120000 and 1e7,
#    about 40 s of CPU) on this machine, and perf report
#    --stdio --sort comm,sym reads it R times, for perf's samples/s. parse
#    --by symbol also reads a synthetic file of the same sample count, so
#    that both rates are also given at equal size.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SLEEPY_BUILD_DIR:-$TOP/build}
GUEST=$BUILD/user/guest
PARSE=${SLEEPY_PARSE:-$BUILD/user/host/parse}
SYNTH=$BUILD/user/host/synth_big
samples=50000000 chain_samples=10000000 runs=3 dir=$BUILD/parse-speed
perf_freq=20000
perf_loop=10000000000 perf_call=120000 perf_btree=10000000

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "parse_speed.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case "$1" in
	--samples) samples=$2; shift 2 ;;
	--chain-samples) chain_samples=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--perf-freq) perf_freq=$2; shift 2 ;;
	--perf-loop) perf_loop=$2; shift 2 ;;
	--perf-call) perf_call=$2; shift 2 ;;
	--perf-btree) perf_btree=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "parse_speed.sh: unknown option: $1 (see --help)" >&2; exit 2 ;;
	esac
done
for v in "$samples" "$chain_samples" "$runs" "$perf_freq" "$perf_loop" "$perf_call" \
	"$perf_btree"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || die "'$v' is not a positive number"
done
[ -x "$PARSE" ] || die "$PARSE missing: run ./build.sh user"
"$PARSE" --help | grep -q -- symbol ||
	die "$PARSE has no --by symbol"
command -v perf >/dev/null || die "perf missing (./build.sh deps)"
make -s -C "$TOP/tests/progs" OUT="$BUILD/user" KERNEL_UAPI="$BUILD/uapi" \
	all host
mkdir -p "$dir"
out=$dir/parse-speed.txt
: >"$out"
# shellcheck source=bench/timed.sh
. "$TOP/bench/timed.sh"

elfs=("$GUEST/btree" "$GUEST/hotpie" "$GUEST/libhot.so"
	/lib/x86_64-linux-gnu/libc.so.6)

# synth FILE N [OPTION...]: the synthetic session, regenerated only when
# its recipe (sizes, options, generator, ELF files) changed.
synth() {
	local file=$1 n=$2 stamp
	shift 2
	stamp=$( {
		echo "$n $*"
		sha256sum "$SYNTH" "${elfs[@]}"
	} | sha256sum | cut -d' ' -f1)
	if [ -f "$file" ] && [ "$(cat "$file.stamp" 2>/dev/null)" = "$stamp" ]; then
		return 0
	fi
	rm -f "$file" "$file.stamp" "$file.kallsyms"
	"$SYNTH" -o "$file" --samples "$n" --appids 64 "$@" "${elfs[@]}" \
		>/dev/null
	echo "$stamp" >"$file.stamp"
}

say "parse speed, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p')), $(free -g | awk '/^Mem:/{print $2}') GiB"
say "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

big=$dir/synth-$samples.samples
synth "$big" "$samples"
say "synthetic session: $big, $(stat -c %s "$big") bytes, $samples samples"
cat "$big" >/dev/null	# in the page cache, as for every run after the first
timed "parse --by appid-eip" "$samples" \
	"$PARSE" --by appid-eip --mode all "$big"
timed "parse --by symbol" "$samples" "$PARSE" --by symbol --mode all "$big"

chains=$dir/synth-$chain_samples-chains20.samples
synth "$chains" "$chain_samples" --chains 20
say "synthetic session with call chains of depth 20: $chains, $(stat -c %s "$chains") bytes, $chain_samples samples, $("$PARSE" --format folded --mode all "$chains" | wc -l) distinct stacks"
cat "$chains" >/dev/null
for view in --tree "--format folded" --children; do
	# shellcheck disable=SC2086 # the view's words
	timed "parse $view" "$chain_samples" "$PARSE" $view --mode all "$chains"
done

# perf: the benchmark workload, recorded here.
pdata=$dir/perf.data
perf record -q -e cpu-clock -F "$perf_freq" -o "$pdata" -- sh -c \
	"'$GUEST/loop' $perf_loop; '$GUEST/call' $perf_call; '$GUEST/btree' $perf_btree" \
	>/dev/null 2>"$dir/perf-record.err" ||
	{ cat "$dir/perf-record.err" >&2; die "perf record failed"; }
pn=$(perf report -i "$pdata" --stdio --sort comm -n 2>/dev/null |
	awk '/^ *[0-9.]+%/ { n += $2 } END { print n + 0 }')
[ "$pn" -gt 0 ] || die "perf report found no samples in $pdata"
say "perf.data: $pdata, $(stat -c %s "$pdata") bytes, $pn samples (-F $perf_freq)"
timed "perf report --stdio --sort comm,sym" "$pn" \
	perf report -i "$pdata" --stdio --sort comm,sym
small=$dir/synth-$pn.samples
synth "$small" "$pn"
timed "parse --by symbol (synthetic, perf's count)" "$pn" \
	"$PARSE" --by symbol --mode all "$small"
timed "parse --by appid,symbol (same)" "$pn" \
	"$PARSE" --by appid,symbol --mode all "$small"
say "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
say "figures in $out"
