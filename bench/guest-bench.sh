#!/bin/sh
# Runs inside the guest: each benchmark under each configuration, RUNS
# times, one "RESULT key=value ..." line per run on stdout (and in
# OUT/results.txt). Used by ./build.sh bench; see bench/bench.py.
#   guest-bench.sh OUT RUNS SIZE CONFIGS BENCHES
# SIZE: "" (the paper's), --quick or --short.
set -u
out=$1 runs=$2 size=$3 configs=$4 benches=$5
mkdir -p "$out"
: > "$out/results.txt"

# The kernel boots on the tsc-early clocksource and moves to tsc once it
# has refined the TSC's calibration, about 1.3 s after boot here. A run
# that starts before that measures 0.13 to 0.19 ms less than every later
# run of the same work (results.md), which made the first benchmark's
# control run too fast. So no run starts before the move (waiting 5 s at
# most: a CPU without a usable TSC never makes it).
cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
i=0
while [ "$(cat $cs 2>/dev/null)" = tsc-early ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done

num() { sed -n "s/.*\"$1\": \\([0-9-]*\\).*/\\1/p" "$2" | head -n 1; }

result() {
	echo "RESULT $*" | tee -a "$out/results.txt"
}

# --short: about 1.6 s of guest time each (bench.py --short).
short_size() {
	case $1 in
	loop) echo 200000000 ;;
	call) echo 20000 ;;
	btree) echo 1300000 ;;
	esac
}

for b in $benches; do
	arg=$size
	[ "$size" = --short ] && arg=$(short_size "$b")
	for c in $configs; do
		i=1
		while [ $i -le "$runs" ]; do
			rm -f /var/log/samples /tmp/perf.data
			case $c in
			control)
				line=$($b ${arg:+"$arg"}) || exit 1
				result "bench=$b config=$c run=$i $line"
				;;
			sampling|backup|callchain)
				flag=; [ "$c" = sampling ] && flag=--no-write
				[ "$c" = callchain ] && flag=--callchain
				sample_start -o /var/log/samples $flag || exit 1
				line=$($b ${arg:+"$arg"}) || exit 1
				sample_stop --json > /tmp/stats.json || exit 1
				result "bench=$b config=$c run=$i $line" \
					"samples=$(num samples_taken /tmp/stats.json)" \
					"written=$(num samples_written /tmp/stats.json)" \
					"dropped=$(( $(num dropped_no_buffer /tmp/stats.json) + $(num dropped_no_appid /tmp/stats.json) + $(num dropped_write_error /tmp/stats.json) + $(num dropped_max_size /tmp/stats.json) ))" \
					"bytes=$(num bytes_written /tmp/stats.json)" \
					"irq_ns_total=$(num irq_ns_total /tmp/stats.json)" \
					"irq_ns_max=$(num irq_ns_max /tmp/stats.json)" \
					"irq_calls=$(num irq_calls /tmp/stats.json)" \
					"hwm=$(num buffers_hwm /tmp/stats.json)"
				[ "$c" = backup ] && [ $i = 1 ] &&
					cp /var/log/samples "$out/$b.samples"
				[ "$c" = callchain ] && [ $i = 1 ] &&
					cp /var/log/samples "$out/$b.callchain.samples"
				;;
			perf*)
				case $c in
				perf1000) popt="-e cpu-clock -F 1000" ;;
				perf4000) popt="-e cpu-clock -F 4000" ;;
				perfg1000) popt="-g -e cpu-clock -F 1000" ;;
				*) echo "unknown configuration $c" >&2; exit 2 ;;
				esac
				# shellcheck disable=SC2086
				line=$(perf record $popt -o /tmp/perf.data -- $b $arg 2>/tmp/perf.err) || {
					cat /tmp/perf.err >&2; exit 1; }
				psamples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' /tmp/perf.err)
				lost=$(grep -c 'lost' /tmp/perf.err)
				result "bench=$b config=$c run=$i $line" \
					"samples=${psamples:-0}" "dropped=$lost" \
					"bytes=$(stat -c %s /tmp/perf.data)"
				[ $i = 1 ] && cp /tmp/perf.data "$out/$b.$c.perf.data"
				;;
			*) echo "unknown configuration $c" >&2; exit 2 ;;
			esac
			i=$((i + 1))
		done
	done
done
echo "bench: done" >> "$out/results.txt"
