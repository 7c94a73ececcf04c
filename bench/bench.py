#!/usr/bin/python3
"""./build.sh bench: sleepy's overhead study, side by side with perf.

Boots the release kernel (by default under -icount, where 1 guest
instruction is 1 ns of guest time and runs repeat to 0.01%), runs each
benchmark under each configuration RUNS times inside one VM, and prints a
Figure-9-style table (median self-timed seconds, % against control),
samples, drops and bytes per sample, with the targets judged. Results go to
results/bench-<stamp>/ as results.txt, bench.csv, bench.json and
overhead.svg.
"""
import argparse
import csv
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
CONFIGS = ["control", "sampling", "backup", "callchain", "perf1000",
           "perf4000", "perfg1000"]
LABELS = {
    "control": "control (no profiler)",
    "sampling": "sleepy sampling, no write",
    "backup": "sleepy backup (writes file)",
    "callchain": "sleepy backup --callchain",
    "perf1000": "perf record -F 1000",
    "perf4000": "perf record -F 4000",
    "perfg1000": "perf record -g -F 1000",
}
BENCHES = ["loop", "call", "btree"]
TARGET_OVERHEAD = 0.02     # percent, sleepy backup at HZ=1000
TARGET_CHAIN_OVERHEAD = 0.03   # percent, with call chains
BUILD = Path(os.environ.get("SLEEPY_BUILD_DIR", TOP / "build"))
GUEST_BIN = BUILD / "user" / "guest"
HOST_PARSE = BUILD / "user" / "host" / "parse"
BTREE_FUNCS = ["main", "lookup", "insert", "insert_rec", "find_child",
               "get_parent_key", "find_index"]


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="./build.sh bench",
        description="Overhead of sleepy and perf on the paper's benchmarks.")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="small sizes (seconds under TCG) instead of the "
                      "paper's")
    size.add_argument("--short", action="store_true",
                      help="short runs, about 1.6 s of guest time each "
                      "(loop 2e8, call 2e4, btree 1.3e6), where fixed "
                      "costs weigh more than at the paper's sizes")
    p.add_argument("--runs", type=int, default=5,
                   help="runs per configuration; the median is reported")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--icount", dest="icount", action="store_true",
                      default=True, help="deterministic guest time (default)")
    mode.add_argument("--wall", dest="icount", action="store_false",
                      help="plain TCG: guest time follows the host's clock")
    p.add_argument("--smp", type=int, default=1, help="guest CPUs (default 1)")
    p.add_argument("--configs", default=",".join(CONFIGS),
                   help="comma-separated subset of " + ",".join(CONFIGS))
    p.add_argument("--benches", default=",".join(BENCHES),
                   help="comma-separated subset of " + ",".join(BENCHES))
    p.add_argument("--out", help="results folder (default results/bench-STAMP)")
    p.add_argument("--timeout", type=int, default=6 * 3600)
    a = p.parse_args(argv)
    if a.runs < 1:
        p.error("--runs must be at least 1")
    a.configs = a.configs.split(",")
    a.benches = a.benches.split(",")
    for c in a.configs:
        if c not in CONFIGS:
            p.error(f"unknown configuration: {c}")
    for b in a.benches:
        if b not in BENCHES:
            p.error(f"unknown benchmark: {b}")
    if "control" not in a.configs:
        p.error("the control configuration is needed as the baseline")
    return a


def run_guest(a, out):
    shutil.copy(TOP / "bench" / "guest-bench.sh", out / "guest-bench.sh")
    size = "--quick" if a.quick else "--short" if a.short else ""
    cmd = [str(TOP / "build.sh"), "vm", "--smp", str(a.smp), "--share",
           str(out), "--timeout", str(a.timeout)]
    if any(c.startswith("perf") for c in a.configs):
        cmd.append("--perf")
    if a.icount:
        cmd.append("--icount")
    cmd += ["--", "sh", "/mnt/share/guest-bench.sh", "/mnt/share",
            str(a.runs), size, " ".join(a.configs), " ".join(a.benches)]
    print("==> " + " ".join(cmd[1:]), flush=True)
    r = subprocess.run(cmd)
    if r.returncode != 0:
        sys.exit(f"bench: the guest run failed (status {r.returncode})")


def read_results(path):
    rows = []
    for line in path.read_text().splitlines():
        if line.startswith("RESULT "):
            rows.append(dict(re.findall(r"(\w+)=(\S+)", line)))
    return rows


def summarize(rows, a):
    table = {}
    for b in a.benches:
        for c in a.configs:
            runs = [r for r in rows if r["bench"] == b and r["config"] == c]
            if len(runs) != a.runs:
                sys.exit(f"bench: {b}/{c}: {len(runs)} runs, expected {a.runs}")
            e = [float(r["elapsed"]) for r in runs]
            cell = {
                "bench": b, "config": c, "runs": len(e),
                "median_s": statistics.median(e), "min_s": min(e),
                "max_s": max(e),
                "checksum": runs[0]["checksum"],
            }
            if "samples" in runs[0]:
                cell["samples"] = int(statistics.median(
                    int(r["samples"]) for r in runs))
                cell["dropped"] = sum(int(r.get("dropped", 0)) for r in runs)
                byts = [int(r["bytes"]) for r in runs]
                cell["bytes"] = int(statistics.median(byts))
                written = int(runs[0].get("written", runs[0]["samples"]))
                cell["bytes_per_sample"] = (
                    int(runs[0]["bytes"]) / written if written else None)
            if "irq_calls" in runs[0] and int(runs[0]["irq_calls"]):
                cell["irq_ns_mean"] = statistics.median(
                    int(r["irq_ns_total"]) / int(r["irq_calls"]) for r in runs)
                cell["irq_ns_max"] = max(int(r["irq_ns_max"]) for r in runs)
                cell["buffers_hwm"] = max(int(r["hwm"] or 0) for r in runs)
            if len({r["checksum"] for r in runs}) != 1:
                sys.exit(f"bench: {b}/{c}: checksums differ between runs")
            table[(b, c)] = cell
        base = table[(b, "control")]["median_s"]
        for c in a.configs:
            t = table[(b, c)]
            t["overhead_pct"] = (t["median_s"] - base) / base * 100
            if table[(b, c)]["checksum"] != table[(b, "control")]["checksum"]:
                sys.exit(f"bench: {b}/{c}: checksum differs from control")
    return table


def size_name(a):
    return "quick" if a.quick else "short" if a.short else "paper"


def fmt_pct(v):
    return f"{v:+.3f}%"


def print_table(table, a, mode):
    print()
    print(f"Overhead, median of {a.runs} run(s), {mode}, {a.smp} vCPU(s), "
          f"HZ=1000, {size_name(a)} sizes")
    head = f"{'configuration':30}" + "".join(f"{b:>22}" for b in a.benches)
    print(head)
    for c in a.configs:
        line = f"{LABELS[c]:30}"
        for b in a.benches:
            t = table[(b, c)]
            cellv = f"{t['median_s']:.4f}s"
            if c != "control":
                cellv += f" {fmt_pct(t['overhead_pct'])}"
            line += f"{cellv:>22}"
        print(line)
    print()
    print(f"{'configuration':30}{'bench':>8}{'samples':>9}{'dropped':>9}"
          f"{'bytes':>11}{'B/sample':>10}")
    for c in a.configs:
        for b in a.benches:
            t = table[(b, c)]
            if "samples" not in t:
                continue
            bps = t["bytes_per_sample"]
            print(f"{LABELS[c]:30}{b:>8}{t['samples']:>9}{t['dropped']:>9}"
                  f"{t['bytes']:>11}{(f'{bps:.1f}' if bps else '-'):>10}")
    for b in a.benches:
        t = table.get((b, "backup"))
        if t and "irq_ns_mean" in t:
            print(f"sleepy tick handler, {b}: mean {t['irq_ns_mean']:.0f} ns, "
                  f"max {t['irq_ns_max']} ns, buffers in use at most "
                  f"{t['buffers_hwm']}")


def judge_chains(table, b):
    """The call-chain targets of benchmark b: (text, met) pairs."""
    t, g = table.get((b, "callchain")), table.get((b, "perfg1000"))
    if not t:
        return []
    ov = t["overhead_pct"]
    out = [(f"{b}: sleepy --callchain overhead {ov:+.4f}% (target <= "
            f"{TARGET_CHAIN_OVERHEAD}%)", ov <= TARGET_CHAIN_OVERHEAD),
           (f"{b}: {t['dropped']} samples dropped with --callchain "
            "(target 0)", t["dropped"] == 0)]
    if g:
        pv = g["overhead_pct"]
        out.append((f"{b}: --callchain {ov:+.4f}% vs perf -g {pv:+.4f}% "
                    f"(target <= 1/8 of perf -g's, {pv / 8:+.4f}%)",
                    ov <= pv / 8))
        sb, pb = t["bytes_per_sample"], g["bytes_per_sample"]
        if sb and pb:
            out.append((f"{b}: --callchain {sb:.1f} bytes/sample vs perf -g "
                        f"{pb:.1f} (target <= half, {pb / 2:.1f})",
                        sb <= pb / 2))
    return out


def judge(table, a):
    """Each target against the measured numbers: (text, met)."""
    out = []
    for b in a.benches:
        out += judge_chains(table, b)
        if (b, "backup") not in table:
            continue
        ov = table[(b, "backup")]["overhead_pct"]
        out.append((f"{b}: sleepy backup overhead {ov:+.4f}% "
                    f"(target <= {TARGET_OVERHEAD}%)"
                    + ("" if ov <= TARGET_OVERHEAD else
                       f": missed by {ov - TARGET_OVERHEAD:.4f} points"),
                    ov <= TARGET_OVERHEAD))
        if (b, "perf1000") in table:
            pv = table[(b, "perf1000")]["overhead_pct"]
            ok = ov <= pv / 10
            out.append((f"{b}: sleepy {ov:+.4f}% vs perf -F 1000 {pv:+.4f}% "
                         f"(target <= 1/10 of perf's, {pv / 10:+.4f}%)"
                         + ("" if ok else f": missed, ratio "
                            f"{(ov / pv if pv else float('inf')):.2f}"), ok))
            sb = table[(b, "backup")]["bytes_per_sample"]
            pb = table[(b, "perf1000")]["bytes_per_sample"]
            if sb and pb:
                out.append((f"{b}: {sb:.1f} bytes/sample vs perf.data "
                             f"{pb:.1f} (target: fewer)", sb < pb))
        d = table[(b, "backup")]["dropped"]
        out.append((f"{b}: {d} samples dropped by sleepy (target 0)", d == 0))
    return out


def functions(binary):
    """[(start, end, name)] of the function symbols of an ELF file (nm)."""
    out = subprocess.run(["nm", "-S", "--defined-only", str(binary)],
                         capture_output=True, text=True, check=True).stdout
    funcs = []
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in "tTwW":
            start = int(p[0], 16)
            funcs.append((start, start + int(p[1], 16), p[3]))
    return sorted(funcs)


def loop_body(binary, func):
    """[start, end) of the body of func's loop: from the target of its
    widest backward branch to the end of that branch (objdump)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn",
                          f"--disassemble={func}", str(binary)],
                         capture_output=True, text=True, check=True).stdout
    lines = re.findall(r"^\s+([0-9a-f]+):\s+(j\w+)\s+([0-9a-f]+)", out, re.M)
    addrs = [int(x, 16) for x, _, _ in re.findall(
        r"^\s+([0-9a-f]+):\s+(\S+)(.*)$", out, re.M)]
    best = None
    for at, _, target in lines:
        at, target = int(at, 16), int(target, 16)
        if target < at and (best is None or at - target > best[1] - best[0]):
            nxt = min((x for x in addrs if x > at), default=at + 2)
            best = (target, nxt)
    if best is None:
        raise RuntimeError(f"no loop found in {func} of {binary}")
    return best


def eip_counts(samples_file, app):
    """{eip: samples} of app's user-mode samples, from parse's CSV."""
    out = subprocess.run([str(HOST_PARSE), "--by", "appid-eip", "--format",
                          "csv", str(samples_file)], capture_output=True,
                         text=True, check=True).stdout
    counts = {}
    for row in csv.DictReader(out.splitlines()):
        if row["app"] == app and row["eip"]:
            eip = int(row["eip"], 16)
            counts[eip] = counts.get(eip, 0) + int(row["samples"])
    return counts


def correctness(files):
    """The paper's analyses (Figures 6-8) as assertions, on sleepy session
    files ({bench: path}): [(text, ok)] and the histograms."""
    checks, hists = [], {}
    for b, f in files.items():
        counts = eip_counts(f, b)
        total = sum(counts.values())
        if b in ("loop", "call"):
            func = "main" if b == "loop" else "loop"
            lo, hi = loop_body(GUEST_BIN / b, func)
            inside = sum(n for e, n in counts.items() if lo <= e < hi)
            if b == "loop":
                need, what = 0.99, f"inside its loop body [{lo:#x}, {hi:#x})"
            else:
                fs = {n: (s, e) for s, e, n in functions(GUEST_BIN / b)}
                lo, hi = fs["loop"]
                inside = sum(n for e, n in counts.items() if lo <= e < hi)
                need, what = 0.95, f"inside loop() [{lo:#x}, {hi:#x})"
            share = inside / total if total else 0
            # Startup and exit lie outside the loop: allow them 1 - need
            # of the samples, and at least one sample at --quick sizes.
            allowed = max(1, int((1 - need) * total))
            checks.append((f"{b}: {inside} of {total} user samples "
                           f"({share:.1%}) {what}, need all but "
                           f"{allowed}", total > 0 and
                           total - inside <= allowed))
            hists[b] = ("EIP", sorted(counts.items()))
        else:
            fs = functions(GUEST_BIN / b)
            per = {}
            for e, n in counts.items():
                name = next((nm for s, en, nm in fs if s <= e < en), "?")
                per[name] = per.get(name, 0) + n
            top = max(per, key=per.get) if per else None
            spread = [fn for fn in BTREE_FUNCS if per.get(fn)]
            checks.append((f"btree: find_index on top ({top}: "
                           f"{per.get(top, 0)} of {total})",
                           top == "find_index"))
            checks.append((f"btree: samples spread over {len(spread)} of its "
                           f"functions ({', '.join(spread)}), need 4",
                           len(spread) >= 4))
            hists[b] = ("function", sorted(per.items(), key=lambda x: -x[1]))
    return checks, hists


def report_correctness(files, out):
    """Print the checks and histograms, write the histograms as SVG."""
    checks, hists = correctness(files)
    for text, ok in checks:
        print(f"  [{'ok' if ok else 'FAILED'}] {text}")
    for b, (kind, items) in hists.items():
        shown = sorted(items, key=lambda x: -x[1])[:8]
        print(f"  {b}, samples per {kind}: " + ", ".join(
            f"{k:#x}={v}" if kind == "EIP" else f"{k}={v}" for k, v in shown))
        svg_histogram(f"{b}: user samples per {kind} (sleepy)",
                      items[:40] if kind == "EIP" else items,
                      out / f"{b}-{kind.lower()}-histogram.svg",
                      (lambda k: f"{k:#x}") if kind == "EIP" else str)
    return checks


def svg_histogram(title, items, path, label_fmt):
    w, h, left, bottom = 760, 320, 50, 80
    n = max(len(items), 1)
    top = max([v for _, v in items] + [1])
    bw = (w - left - 20) / n
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" '
             f'height="{h}" font-family="sans-serif" font-size="10">',
             f'<text x="{w/2}" y="16" text-anchor="middle" font-size="13">'
             f'{title}</text>']
    for i, (k, v) in enumerate(items):
        bh = (h - bottom - 30) * v / top
        x = left + i * bw
        parts.append(f'<rect x="{x:.1f}" y="{h - bottom - bh:.1f}" '
                     f'width="{max(bw - 2, 1):.1f}" height="{bh:.1f}" '
                     'fill="#4c72b0"/>')
        parts.append(f'<text x="{x + bw/2:.1f}" y="{h - bottom - bh - 3:.1f}" '
                     f'text-anchor="middle">{v}</text>')
        parts.append(f'<text transform="translate({x + bw/2:.1f},'
                     f'{h - bottom + 10}) rotate(45)">{label_fmt(k)}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n")


def svg_plot(table, a, path):
    """Grouped bars: overhead % per configuration, one group per bench."""
    cfgs = [c for c in a.configs if c != "control"]
    vals = [table[(b, c)]["overhead_pct"] for b in a.benches for c in cfgs]
    top = max([0.05] + vals)
    bottom = min([0.0] + vals)
    w, h, left, bar = 760, 360, 60, 18
    plot_h = h - 90
    scale = plot_h / (top - bottom)
    zero = 30 + top * scale
    colors = ["#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" '
             f'height="{h}" font-family="sans-serif" font-size="11">',
             f'<text x="{w/2}" y="16" text-anchor="middle" font-size="13">'
             'Overhead against control (% of self-timed run time)</text>',
             f'<line x1="{left}" y1="{zero}" x2="{w-10}" y2="{zero}" '
             'stroke="black"/>']
    group_w = (w - left - 20) / len(a.benches)
    for gi, b in enumerate(a.benches):
        gx = left + gi * group_w + 10
        for ci, c in enumerate(cfgs):
            v = table[(b, c)]["overhead_pct"]
            x = gx + ci * (bar + 4)
            y = zero - max(v, 0) * scale
            hgt = abs(v) * scale
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar}" '
                         f'height="{max(hgt, 0.5):.1f}" '
                         f'fill="{colors[ci % len(colors)]}"/>')
            parts.append(f'<text x="{x + bar/2:.1f}" y="{y - 3:.1f}" '
                         f'text-anchor="middle" font-size="9">{v:.2f}</text>')
        parts.append(f'<text x="{gx + len(cfgs) * (bar + 4) / 2:.1f}" '
                     f'y="{h - 45}" text-anchor="middle">{b}</text>')
    for ci, c in enumerate(cfgs):
        parts.append(f'<rect x="{left + ci * 130}" y="{h - 25}" width="10" '
                     f'height="10" fill="{colors[ci % len(colors)]}"/>')
        parts.append(f'<text x="{left + ci * 130 + 14}" y="{h - 16}">'
                     f'{LABELS[c][:20]}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n")


def main(argv):
    if argv[:1] == ["--analyze"]:
        # bench.py --analyze FILE OUTDIR: the checks and histograms of one
        # session file that profiled all three benchmarks (the demo).
        if len(argv) != 3:
            sys.exit("usage: bench.py --analyze SESSION-FILE OUTDIR")
        checks = report_correctness({b: Path(argv[1]) for b in BENCHES},
                                    Path(argv[2]))
        return 0 if all(ok for _, ok in checks) else 1
    a = parse_args(argv)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(a.out) if a.out else TOP / "results" / f"bench-{stamp}"
    out.mkdir(parents=True, exist_ok=True)
    run_guest(a, out)
    rows = read_results(out / "results.txt")
    table = summarize(rows, a)
    mode = ("QEMU TCG -icount shift=0,sleep=off (1 insn = 1 ns; counts "
            "instructions, not cache misses)" if a.icount else
            "QEMU TCG, wall-clock guest time")
    print_table(table, a, mode)
    verdicts = judge(table, a)
    print()
    print("Targets:")
    for text, ok in verdicts:
        print(f"  [{'met' if ok else 'MISSED'}] {text}")
    checks = []
    if "backup" in a.configs:
        print()
        print("Correctness (the paper's Figures 6-8, sleepy backup run 1):")
        checks = report_correctness(
            {b: out / f"{b}.samples" for b in a.benches}, out)
    with open(out / "bench.csv", "w", newline="") as f:
        fields = ["bench", "config", "runs", "median_s", "min_s", "max_s",
                  "overhead_pct", "samples", "dropped", "bytes",
                  "bytes_per_sample", "irq_ns_mean", "irq_ns_max",
                  "buffers_hwm", "checksum"]
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for t in table.values():
            w.writerow({k: t.get(k, "") for k in fields})
    (out / "bench.json").write_text(json.dumps({
        "mode": mode, "smp": a.smp, "runs": a.runs, "quick": a.quick,
        "sizes": size_name(a),
        "command": "./build.sh bench " + " ".join(argv),
        "results": list(table.values()),
        "targets": [{"text": t, "met": ok} for t, ok in verdicts],
        "correctness": [{"text": t, "ok": ok} for t, ok in checks],
    }, indent=2) + "\n")
    svg_plot(table, a, out / "overhead.svg")
    print(f"\nresults: {out}/bench.csv, bench.json, overhead.svg, "
          "*-histogram.svg, results.txt")
    # Missed overhead targets are reported, not fatal (short --quick runs
    # are noisy); a failed correctness check is.
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
