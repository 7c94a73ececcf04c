#!/usr/bin/env bash
# ./build.sh demo [--full]: profile the three benchmarks in one sleepy
# session inside the VM and show where their time went.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SLEEPY_BUILD_DIR:-$TOP/build}
OUT=$BUILD/demo
size=--quick
case "${1:-}" in
--full) size= ;;
"") ;;
-h | --help)
	echo "usage: ./build.sh demo [--full]"
	echo "Profiles loop, call and btree (quick sizes unless --full) in one"
	echo "sleepy session in the VM and prints parse's reports."
	exit 0
	;;
*) echo "demo: unknown option: $1" >&2; exit 2 ;;
esac

rm -rf "$OUT"
mkdir -p "$OUT"
echo "==> booting the sleepy kernel (2 vCPUs, QEMU TCG) and profiling" \
	"loop, call and btree ${size:+(quick sizes)}"
"$TOP/build.sh" vm --smp 2 --share "$OUT" --timeout 1800 -- sh -c "
	sample_start -o /var/log/samples || exit 1
	loop $size && call $size && btree $size
	sample_stop > /mnt/share/stats.txt; rc=\$?
	cp /var/log/samples /mnt/share/samples
	cat /mnt/share/stats.txt
	exit \$rc"

parse=$BUILD/user/host/parse
echo
echo "==> per application (user mode)"
"$parse" --by app "$OUT/samples" | sed -n '/^Samples by/,$p'
for b in loop call btree; do
	echo
	echo "==> $b: hottest instruction addresses"
	"$parse" --by appid-eip --format csv "$OUT/samples" |
		awk -F, -v b="$b" '$1 == b && $5 != "" { print }' |
		sort -t, -k6,6nr | head -n 5 |
		awk -F, '{ printf "  %-8s %6d samples  %6s%% of all user samples\n", $5, $6, $7 }'
done
echo
echo "The session file is $OUT/samples. Next, try:"
echo "  $parse $OUT/samples"
echo "  $parse --by appid-eip --format csv $OUT/samples"
echo "  ./build.sh vm -- sh -c 'sample_start && YOUR-PROGRAM; sample_stop && parse /var/log/samples'"
