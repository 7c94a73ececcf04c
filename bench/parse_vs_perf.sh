#!/usr/bin/env bash
# parse_vs_perf.sh: parse against perf report on the same recorded work.
# See Documentation/results.md, "parse against perf report".
#
#   bench/parse_vs_perf.sh [--dir DIR] [--smp N] [--seconds S] [--runs R]
#                          [--skip-record]
#
# 1. Boots the release kernel with Debian's perf (N vCPUs, default 4,
#    2 GiB) and runs the benchmark workload twice, each time recorded by
#    sleepy and by perf at once (both system-wide, 1 kHz):
#      plain:  sample_start            and perf record -e cpu-clock -F 1000 -a
#      chains: sample_start --callchain and perf record ... -g
#    The workload is one worker per vCPU running loop, call and btree
#    (bench.py's --short sizes, about 1.6 s each alone: a few hundred
#    processes in all, well within the 4096 appids) over and over for S
#    seconds (default 500): some N x S x 1000 samples, two million
#    with the defaults. The files,
#    the guest's kallsyms and its binaries go to DIR (default
#    build/parse-vs-perf). --skip-record keeps the files of an earlier run.
# 2. On this machine, times (best wall time of R runs, default 3; peak
#    RSS from /usr/bin/time) each tool on its own file of the same work:
#      parse --by symbol --mode all      perf report --sort comm,sym
#      parse --tree --mode all           perf report --children (chains)
#      parse --children --mode all       perf report --children (chains)
#    perf report runs with --stdio, the guest's kallsyms and binaries
#    (--symfs), and, on the plain file and for --by symbol on the chains,
#    -g none.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SLEEPY_BUILD_DIR:-$TOP/build}
PARSE=${SLEEPY_PARSE:-$BUILD/user/host/parse}
dir=$BUILD/parse-vs-perf smp=4 seconds=500 runs=3 record=1

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "parse_vs_perf.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case "$1" in
	--dir) dir=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--skip-record) record=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "parse_vs_perf.sh: unknown option: $1 (see --help)" >&2; exit 2 ;;
	esac
done
for v in "$smp" "$seconds" "$runs"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || die "'$v' is not a positive number"
done
[ -x "$PARSE" ] || die "$PARSE missing: run ./build.sh user"
command -v perf >/dev/null || die "perf missing (./build.sh deps)"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# The guest's part: both recordings, then what the host needs to read them.
guest_script() {
	cat <<EOF
set -e
cat > /tmp/work.sh <<'WORK'
work() { end=\$((\$(cut -d. -f1 /proc/uptime) + $seconds))
	while [ \$(cut -d. -f1 /proc/uptime) -lt \$end ]; do
		loop 200000000; call 20000; btree 1300000
	done > /dev/null; }
for i in \$(seq $smp); do work & done
wait
WORK
record() { name=\$1 g=\$2; shift 2
	sample_start -o /var/log/\$name.samples "\$@"
	perf record -q -e cpu-clock -F 1000 -a \$g -o /tmp/\$name.data \\
		-- sh /tmp/work.sh 2> /mnt/share/\$name.perf-record.err
	sample_stop --json > /mnt/share/\$name.stats
	cp /var/log/\$name.samples /var/log/\$name.samples.kallsyms \\
		/tmp/\$name.data /mnt/share/
	rm /var/log/\$name.samples /tmp/\$name.data; }
record plain ''
record chains -g --callchain
cat /proc/kallsyms > /mnt/share/kallsyms
mkdir -p /mnt/share/root/usr/bin
cp /usr/bin/loop /usr/bin/call /usr/bin/btree /mnt/share/root/usr/bin/
EOF
}

if [ "$record" = 1 ]; then
	rm -rf "$dir/root" "$dir"/*.samples* "$dir"/*.data "$dir"/*.stats
	echo "==> recording: $smp vCPUs, ${seconds} s of work, twice"
	"$TOP/build.sh" vm --perf --smp "$smp" --mem 2048 --share "$dir" \
		--timeout $((4 * seconds + 900)) -- sh -c "$(guest_script)"
fi
for f in plain.samples plain.data chains.samples chains.data kallsyms; do
	[ -s "$dir/$f" ] || die "$dir/$f missing: run without --skip-record"
done

out=$dir/parse-vs-perf.txt
: >"$out"
# shellcheck source=bench/timed.sh
. "$TOP/bench/timed.sh"

# The samples in a session file, and in a perf.data.
sleepy_samples() {
	"$PARSE" --mode all "$1" | awk '$1 == "samples" { print $2; exit }'
}
perf_samples() {
	perf report -i "$1" --stdio --sort comm -n -g none --no-children \
		2>/dev/null |
		awk '/^ *[0-9.]+%/ { n += $2 } END { print n + 0 }'
}

say "parse against perf report, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p'))"
report=(perf report --stdio --symfs "$dir/root" --kallsyms "$dir/kallsyms")
for set in plain chains; do
	s=$dir/$set.samples p=$dir/$set.data
	ns=$(sleepy_samples "$s") np=$(perf_samples "$p")
	say ""
	say "$set: $s ($(stat -c %s "$s") bytes, $ns samples), $p ($(stat -c %s "$p") bytes, $np samples)"
	cat "$s" "$p" >/dev/null	# in the page cache, as after a first run
	timed "parse --by symbol --mode all" "$ns" \
		"$PARSE" --by symbol --mode all --symfs "$dir/root" "$s"
	timed "perf report --sort comm,sym -g none" "$np" \
		"${report[@]}" -i "$p" --sort comm,sym -g none
	[ "$set" = chains ] || continue
	timed "parse --tree --mode all" "$ns" \
		"$PARSE" --tree --mode all --symfs "$dir/root" "$s"
	timed "parse --children --mode all" "$ns" \
		"$PARSE" --children --mode all --symfs "$dir/root" "$s"
	timed "perf report --children --sort comm,sym" "$np" \
		"${report[@]}" -i "$p" --children --sort comm,sym
done
say "figures in $out"
