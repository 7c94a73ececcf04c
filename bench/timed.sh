# shellcheck shell=bash
# shellcheck disable=SC2154 # dir, out and runs: set by the sourcing script
# timed.sh: shared by bench/parse_speed.sh and bench/parse_vs_perf.sh,
# which source it after setting $dir (scratch files), $out (the figures
# file) and $runs.
#   say TEXT...           print TEXT and append it to $out
#   timed LABEL N CMD...  run CMD $runs times (its output thrown away) and
#                         say its best wall time, N / that time in samples
#                         per second, and the peak RSS (/usr/bin/time)

say() { echo "$*" | tee -a "$out"; }

timed() {
	local label=$1 n=$2 t rss best="" maxrss=0 all=""
	shift 2
	for _ in $(seq "$runs"); do
		/usr/bin/time -f "%e %M" -o "$dir/time.out" "$@" >/dev/null 2>"$dir/stderr.out" ||
			{ cat "$dir/stderr.out" >&2; die "failed: $*"; }
		read -r t rss <"$dir/time.out"
		all+="$t "
		if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then
			best=$t
		fi
		[ "$rss" -gt "$maxrss" ] && maxrss=$rss
	done
	say "$(awk -v l="$label" -v n="$n" -v b="$best" -v r="$maxrss" -v all="$all" \
		'BEGIN { printf "%-46s %10d samples  best %7.2f s (runs: %s)  %6.2f M samples/s  peak RSS %6.1f MB\n", l, n, b, all, (b > 0 ? n / b / 1e6 : 0), r / 1024 }')"
	say "    \$ $*"
}
