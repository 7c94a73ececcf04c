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
	echo "sleepy session with call chains in the VM, prints parse's reports"
	echo "and btree's call tree, and leaves a flame graph and folded stacks."
	exit 0
	;;
*) echo "demo: unknown option: $1" >&2; exit 2 ;;
esac

rm -rf "$OUT"
mkdir -p "$OUT"
# -icount: guest time follows executed instructions, so samples land on
# any instruction (plain TCG takes interrupts only between translated
# blocks, and charges translation to the code being translated).
echo "==> booting the sleepy kernel (1 vCPU, QEMU TCG -icount) and" \
	"profiling loop, call and btree with call chains ${size:+(quick sizes)}"
"$TOP/build.sh" vm --smp 1 --icount --share "$OUT" --timeout 3600 -- sh -c "
	sample_start -o /var/log/samples --callchain || exit 1
	loop $size && call $size && btree $size
	sample_stop > /mnt/share/stats.txt; rc=\$?
	cp /var/log/samples /var/log/samples.kallsyms /mnt/share/
	# The binaries as the guest ran them, for parse --symfs on the host.
	mkdir -p /mnt/share/root/usr/bin
	cp /usr/bin/loop /usr/bin/call /usr/bin/btree /mnt/share/root/usr/bin/
	cat /mnt/share/stats.txt
	exit \$rc"

parse=$BUILD/user/host/parse
echo
echo "==> per application (user mode)"
"$parse" --by app "$OUT/samples" | sed -n '/^Samples by/,$p'
echo
echo "==> per appid and function (user mode; symbols from the guest's binaries)"
"$parse" --by appid,symbol --symfs "$OUT/root" "$OUT/samples" |
	sed -n '/^Samples by/,$p'
echo
echo "==> the loop benchmark's hot loop (in its main), instruction by instruction"
"$parse" --annotate main --app loop --symfs "$OUT/root" "$OUT/samples" |
	awk '/^ +[0-9]+ +[0-9.]+%/ || /^(Annotation|  0x| *[0-9]+ samples)/'

echo
echo "==> btree's call tree (user mode; branches under 1% left out)"
"$parse" --tree --app btree --min-percent 1 --symfs "$OUT/root" \
	--flamegraph "$OUT/flamegraph.svg" "$OUT/samples" |
	sed -n '/^Call tree/,$p'
"$parse" --format folded --mode all --symfs "$OUT/root" "$OUT/samples" \
	>"$OUT/samples.folded"

echo
echo "==> where each benchmark spent its time: the SLEEPY paper's checks"
/usr/bin/python3 "$TOP/bench/bench.py" --analyze "$OUT/samples" "$OUT"
echo
echo "The session file is $OUT/samples; plots: $OUT/*-histogram.svg;"
echo "btree's flame graph: $OUT/flamegraph.svg (open it in a browser);"
echo "every stack, folded (flamegraph.pl, speedscope): $OUT/samples.folded."
echo "Next, try:"
echo "  $parse $OUT/samples"
echo "  $parse --by appid,symbol --symfs $OUT/root $OUT/samples"
echo "  $parse --annotate find_index --symfs $OUT/root $OUT/samples"
echo "  $parse --children --app btree --symfs $OUT/root $OUT/samples"
echo "  $parse --tree --inverted --app btree --symfs $OUT/root $OUT/samples"
echo "  $parse --pprof $OUT/btree.pb.gz --app btree --symfs $OUT/root $OUT/samples && go tool pprof -top $OUT/btree.pb.gz"
echo "  $parse --by appid,line --symfs $OUT/root --format csv $OUT/samples"
echo "  $parse --by appid-eip --format csv $OUT/samples"
echo "  ./build.sh vm -- sh -c 'sample_start && YOUR-PROGRAM; sample_stop && parse /var/log/samples'"
