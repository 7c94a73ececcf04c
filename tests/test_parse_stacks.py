"""Host-side tests of parse's call-chain views (--tree, --format folded):
no VM. tests/progs/calltree.c is built here; a synthetic session maps it
as the kernel would, and its chains hold the program's real return
addresses (the instruction after each call, from objdump), so that every
frame's function is known.

    /usr/bin/python3 -m pytest tests/test_parse_stacks.py
"""
import os
import re
import resource
import shutil
import signal
import subprocess

import pytest

import sleepyfile as sf
from conftest import TOP

KSYMS = """ffffffff81000000 T entry_SYSCALL_64
ffffffff81001000 T do_syscall_64
ffffffff81002000 T ksys_read
ffffffff81003000 T read_iter_zero
ffffffff81004000 T _etext
"""


def objdump_calls(exe):
    """exe's direct calls, in objdump's order: (caller, callee, the call's
    address, the address after it: the return address)."""
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(exe)],
                         capture_output=True, text=True, check=True).stdout
    calls, func, pending = [], None, None
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <(\w+)>:$", line)
        if m:
            func = m.group(1)
            continue
        m = re.match(r"^\s+([0-9a-f]+):", line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        if pending:
            calls.append((*pending, addr))
            pending = None
        c = re.search(r"call\s+[0-9a-f]+ <(\w+)>", line)
        if c:
            pending = (func, c.group(1), addr)
    return calls


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    """calltree, built static with frame pointers; its functions' return
    addresses: ret[(caller, callee)] is the address after caller's call
    of callee."""
    d = tmp_path_factory.mktemp("calltree")
    exe = d / "calltree"
    subprocess.run(["gcc", "-std=c11", "-O1", "-g", "-fno-omit-frame-pointer",
                    "-mno-omit-leaf-frame-pointer", "-static", "-o", str(exe),
                    str(TOP / "tests" / "progs" / "calltree.c")], check=True)
    ret = {}
    for caller, callee, _, after in objdump_calls(exe):
        if caller in ("main", "a", "b", "c"):
            ret.setdefault((caller, callee), after)
    syms = {}
    for line in subprocess.run(["nm", str(exe)], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        p = line.split()
        if len(p) == 3:
            syms[p[2]] = int(p[0], 16)
    return exe, ret, syms


def session(prog, *, nr_cpus=2):
    """A call-chain session of calltree (appid 1, pid 100), its text
    mapped as the kernel records it."""
    exe, _, _ = prog
    f = sf.SessionFile(nr_cpus=nr_cpus, hz=1000, flags=sf.SAMPLE_F_CALLCHAIN)
    f.appid(1, "calltree", pid=100, path=str(exe))
    f.mmap(1, 0x401000, 0x100000, pid=100, pgoff=0x1000, path=str(exe))
    return f


def tree_session(prog):
    """30 samples in leaf by main -> a -> b, 10 by main -> c (the latter
    on both CPUs, so that equal chains of different CPUs merge), one in
    main whose chain is lost. (run_tree is inlined into main.)"""
    _, ret, syms = prog
    f = session(prog)
    # leaf sets up no frame: its caller is the word at the stack pointer,
    # as the kernel records it (SP_RET), then the frame pointer walk.
    sp = sf.CHAIN_F_SP_RET
    f.chain(0, 1, user=[ret[("b", "leaf")], ret[("a", "b")],
                        ret[("main", "a")]], flags=sp)
    f.chain(0, 2, user=[ret[("c", "leaf")], ret[("main", "c")]], flags=sp)
    f.chain(1, 5, user=[ret[("c", "leaf")], ret[("main", "c")]], flags=sp)
    leaf = syms["leaf"] + 8
    for _ in range(30):
        f.sample(1, leaf, pid=100, chain=1)
    for cpu, chain in ((0, 2), (1, 5)):
        for _ in range(5):
            f.sample(1, leaf, pid=100, cpu=cpu, chain=chain)
    f.sample(1, syms["main"] + 4, pid=100, chain=99)
    f.stats(samples_taken=41, samples_written=41, chains_defined=3)
    return f


def test_tree_top_down(parse, prog):
    r = parse(tree_session(prog), "--tree")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "chains lost   1 samples' CHAIN records are missing" in r.stdout
    body = r.stdout.split("Call tree, user mode: 41 samples; nodes under "
                          "0.5% left out\n")[1]
    assert body.splitlines() == [
        "   total      self    samples  frame",
        " 100.00%     0.00%         41  calltree#0",
        " 100.00%     2.44%         41    main",
        "  73.17%     0.00%         30      a",
        "  73.17%     0.00%         30        b",
        "  73.17%    73.17%         30          leaf",
        "  24.39%     0.00%         10      c",
        "  24.39%    24.39%         10        leaf",
    ]


def test_folded(parse, prog):
    r = parse(tree_session(prog), "--format", "folded")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.splitlines() == [
        "calltree#0;main 1",
        "calltree#0;main;a;b;leaf 30",
        "calltree#0;main;c;leaf 10",
    ]
    # --by app: the application's name, all instances together.
    r = parse(tree_session(prog), "--format", "folded", "--by", "app")
    assert r.stdout.splitlines()[0] == "calltree;main 1"


def test_inverted_and_pruned(parse, prog):
    r = parse(tree_session(prog), "--tree", "--inverted", "--min-percent",
              "5")
    assert r.returncode == 0, r.stderr
    body = r.stdout.split("nodes under 5% left out\n")[1].splitlines()
    assert body == [
        "   total      self    samples  callee, then its callers",
        "  97.56%     0.00%         40  leaf",
        "  73.17%     0.00%         30    b",
        "  73.17%     0.00%         30      a",
        "  73.17%     0.00%         30        main",
        "  73.17%    73.17%         30          calltree#0",
        "  24.39%     0.00%         10    c",
        "  24.39%     0.00%         10      main",
        "  24.39%    24.39%         10        calltree#0",
    ]
    r = parse(tree_session(prog), "--tree", "--inverted", "--min-percent",
              "0")
    assert "nodes under" not in r.stdout
    assert "   2.44%     0.00%          1  main\n" in r.stdout


def test_kernel_frames_then_user_frames(parse, prog, tmp_path):
    """A kernel sample: the user frames (where it left user mode, then
    return addresses) come first, the kernel frames after, marked."""
    _, ret, syms = prog
    f = session(prog)
    f.chain(0, 1, kernel=[0xffffffff81002010, 0xffffffff81001010,
                          0xffffffff81000050],
            user=[syms["zero_reader"] + 9, ret[("main", "a")]])
    for _ in range(4):
        f.sample(1, 0xffffffff81003004, mode=sf.MODE_KERNEL, pid=100,
                 chain=1)
    f.stats(samples_taken=4, samples_written=4)
    ks = tmp_path / "k.kallsyms"
    ks.write_text(KSYMS)
    r = parse(f, "--format", "folded", "--mode", "kernel", "--kallsyms", ks)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("calltree#0;main;zero_reader;entry_SYSCALL_64_[k];"
                        "do_syscall_64_[k];ksys_read_[k];read_iter_zero_[k]"
                        " 4\n")
    r = parse(f, "--tree", "--mode", "kernel", "--kallsyms", ks)
    assert "              read_iter_zero [k]\n" in r.stdout


def test_without_chains_every_view_has_one_frame(parse, prog):
    """Samples without chains (a session without --callchain, or a
    version 2 file): each stack is the application and the sampled
    function."""
    _, _, syms = prog
    for version in (2, 3):
        f = sf.SessionFile(version=version)
        exe = prog[0]
        f.appid(1, "calltree", pid=100, path=str(exe))
        f.mmap(1, 0x401000, 0x100000, pid=100, pgoff=0x1000, path=str(exe))
        for _ in range(3):
            f.sample(1, syms["leaf"] + 8, pid=100)
        f.sample(1, syms["c"] + 1, pid=100)
        r = parse(f, "--format", "folded")
        assert r.returncode == 0, r.stderr
        assert r.stdout == "calltree#0;c 1\ncalltree#0;leaf 3\n", version


def test_filters_apply_to_stacks(parse, prog):
    f = tree_session(prog)
    f.appid(2, "other", pid=200)
    f.sample(2, 0x1234, pid=200)
    r = parse(f, "--format", "folded", "--app", "calltree")
    assert "other" not in r.stdout and r.stdout.count("\n") == 3
    r = parse(f, "--format", "folded", "--pid", "200")
    assert r.stdout.startswith("other#0;[unknown]+0x1234 1")
    r = parse(f, "--format", "folded", "--cpu", "1")
    assert r.stdout == "calltree#0;main;c;leaf 5\n"


def test_names_never_hold_the_separator(parse, prog):
    """The application's name is the only one the session gives: a ';'
    in it would split a frame in two."""
    _, _, syms = prog
    f = session(prog)
    f.appid(3, "a;b c", pid=300)
    f.sample(3, 0x10, pid=300)
    r = parse(f, "--format", "folded", "--app", "a;b c")
    assert r.stdout == "a:b c#0;[unknown]+0x10 1\n", r.stdout


@pytest.mark.parametrize("args, what", [
    (["--inverted"], "--inverted needs --tree"),
    (["--min-percent", "1"], "--min-percent needs --tree"),
    (["--tree", "--min-percent", "101"], "--min-percent: invalid "
     "percentage '101'"),
    (["--tree", "--min-percent", "x"], "invalid percentage 'x'"),
    (["--tree", "--format", "csv"], "--tree: prints text"),
    (["--tree", "--format", "folded"], "--tree: prints text"),
    (["--tree", "--by", "symbol"], "app or appid only"),
    (["--format", "folded", "--by", "appid,eip"], "app or appid only"),
    (["--format", "folded", "--plot", "x.svg"], "not with --sqlite"),
    (["--tree", "--sqlite", "x.db"], "--tree and --sqlite exclude each "
     "other"),
])
def test_usage_errors(parse, prog, args, what):
    r = parse(tree_session(prog), *args)
    assert r.returncode == 2 and what in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_children(parse, prog):
    """--children: each function's samples with it anywhere on the stack,
    sorted by them; functions with callees only get rows of their own."""
    r = parse(tree_session(prog), "--children")
    assert r.returncode == 0, r.stderr
    body = r.stdout.split("Samples by symbol, user mode: 41 samples\n")[1]
    rows = [line.split() for line in body.splitlines()[1:6]]
    assert body.splitlines()[0].split() == ["children", "samples", "time",
                                            "percent", "dso", "symbol"]
    assert [(x[0], x[1], x[5]) for x in rows] == [
        ("100.00%", "1", "main"), ("97.56%", "40", "leaf"),
        ("73.17%", "0", "a"), ("73.17%", "0", "b"), ("24.39%", "0", "c")]
    import csv as csv_mod
    import io
    r = parse(tree_session(prog), "--children", "--format", "csv",
              "--by", "app,symbol")
    got = {row["symbol"]: (int(row["samples"]), int(row["children"]),
                           row["children_percent"])
           for row in csv_mod.DictReader(io.StringIO(r.stdout))}
    assert got == {"main": (1, 41, "100.00"), "leaf": (40, 40, "97.56"),
                   "a": (0, 30, "73.17"), "b": (0, 30, "73.17"),
                   "c": (0, 10, "24.39")}, got


def doc_query(name):
    """Documentation/parse.md's query name, as written."""
    text = (TOP / "Documentation" / "parse.md").read_text()
    m = re.search(rf"^### {name}\. [^\n]*\n\n```sql\n(.*?)```", text,
                  re.M | re.S)
    assert m, name
    return m.group(1)


def sqlite_rows(db, sql):
    r = subprocess.run(["sqlite3", "-bail", "-separator", "|", str(db), sql],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, (sql, r.stderr)
    return [line.split("|") for line in r.stdout.splitlines()]


def test_sqlite_stacks(parse, prog, tmp_path):
    """The database's stacks: every row of samples names one, whose frames
    are the tree's; the documented queries of inclusive time and callers
    agree with --children and the tree."""
    exe, ret, syms = prog
    db = tmp_path / "s.db"
    r = parse(tree_session(prog), "--children", "--sqlite", db)
    assert r.returncode == 0, r.stderr
    # Three stacks: leaf by b by a, leaf by c (both CPUs' chains), main.
    frames = {}
    for stack, depth, addr, kind, dso, sym in sqlite_rows(
            db, "SELECT * FROM stacks ORDER BY stack, depth"):
        frames.setdefault(int(stack), []).append((sym, kind, dso))
        if int(depth) > 0:  # a caller's address is in its call
            callee = frames[int(stack)][-2][0]
            assert int(addr) == ret[(sym, callee)] - 1, (sym, callee)
    assert sorted([f[0] for f in v] for v in frames.values()) == [
        ["leaf", "b", "a", "main"], ["leaf", "c", "main"], ["main"]]
    assert {f[1:] for v in frames.values() for f in v} == {
        ("user", str(exe))}
    per_stack = {tuple(f[0] for f in frames[int(k)]): int(n)
                 for k, n in sqlite_rows(db, "SELECT stack, SUM(samples) "
                                         "FROM samples GROUP BY stack")}
    assert per_stack == {("leaf", "b", "a", "main"): 30,
                         ("leaf", "c", "main"): 10, ("main",): 1}
    assert sqlite_rows(db, "SELECT COUNT(*) FROM samples_sym WHERE "
                       "stack IS NULL") == [["0"]]
    # Q11 is --children's table.
    children = {}
    for line in r.stdout.split("Samples by symbol, user mode: 41 "
                               "samples\n")[1].splitlines()[1:6]:
        x = line.split()
        children[x[5]] = int(round(float(x[0][:-1]) * 41 / 100))
    got = {row[1]: int(row[2]) for row in sqlite_rows(db, doc_query("Q11"))}
    assert got == children == {"main": 41, "leaf": 40, "a": 30, "b": 30,
                               "c": 10}
    # Q12 of leaf: b called it for 30 samples, c for 10.
    sql = doc_query("Q12").replace("'find_index'", "'leaf'")
    assert sqlite_rows(db, sql) == [["b", str(exe), "30"],
                                    ["c", str(exe), "10"]]
    sql = doc_query("Q12").replace("'find_index'", "'main'")
    assert sqlite_rows(db, sql) == []


def test_children_count_a_recursive_function_once(parse, prog, tmp_path):
    """rec five deep on every stack: its inclusive samples are the
    stacks', not five times them."""
    _, ret, syms = prog
    f = session(prog)
    rec_ret = next(v for (caller, callee), v in ret.items()
                   if caller == "main" and callee == "a")
    # rec's return address into itself, from objdump.
    inner = next(after for _, callee, _, after in objdump_calls(prog[0])
                 if callee == "rec")
    f.chain(0, 1, user=[inner] * 5 + [rec_ret], flags=sf.CHAIN_F_SP_RET)
    for _ in range(7):
        f.sample(1, syms["leaf"] + 8, pid=100, chain=1)
    f.stats(samples_taken=7, samples_written=7)
    r = parse(f, "--children", "--format", "json")
    import json
    rows = {x["symbol"]: x for x in json.loads(r.stdout)["rows"]}
    assert rows["rec"]["children"] == 7 and rows["rec"]["samples"] == 0
    assert rows["leaf"]["children"] == 7 and rows["leaf"]["samples"] == 7
    assert rows["rec"]["children_percent"] == 100.0
    # The database's queries: rec once per stack; its callers are itself
    # and main, each for every sample.
    db = tmp_path / "r.db"
    r = parse(f, "--sqlite", db)
    assert r.returncode == 0, r.stderr
    got = {row[1]: row[2] for row in sqlite_rows(db, doc_query("Q11"))}
    assert got == {"rec": "7", "leaf": "7", "main": "7"}, got
    sql = doc_query("Q12").replace("'find_index'", "'rec'")
    assert sorted(sqlite_rows(db, sql)) == [["main", str(prog[0]), "7"],
                                            ["rec", str(prog[0]), "7"]]


@pytest.mark.parametrize("args, what", [
    (["--children", "--by", "cpu"], "--children: group by app, appid"),
    (["--children", "--by", "symbol,mode"], "the stacks keep no cpu"),
    (["--children", "--tree"], "--children and --tree exclude each other"),
    (["--children", "--format", "folded"], "--children: not with --format "
     "folded"),
])
def test_children_usage_errors(parse, prog, args, what):
    r = parse(tree_session(prog), *args)
    assert r.returncode == 2 and what in r.stderr, r.stderr


def test_only_frames_the_unwind_information_vouches_for(parse, prog):
    """A frame pointer walk skips the caller of a function that has set up
    no frame, and goes wrong through a function that keeps no frame
    pointer: parse keeps a frame only where the unwind information (the
    CFI at each address) says the frame pointer was the frame, and marks
    the callers it cannot vouch for [unknown]. Short, never wrong."""
    _, ret, syms = prog
    f = session(prog)
    # leaf (no frame) without the stack top's word: its caller is unknown.
    f.chain(0, 1, user=[ret[("a", "b")], ret[("main", "a")]])
    f.sample(1, syms["leaf"] + 8, pid=100, chain=1)
    # b (its frame set up) with a stack top's word: the word is stale.
    f.chain(0, 2, user=[ret[("c", "leaf")], ret[("a", "b")],
                        ret[("main", "a")]], flags=sf.CHAIN_F_SP_RET)
    f.sample(1, ret[("b", "leaf")], pid=100, chain=2)
    # Past main: __libc_start_call_main keeps no frame pointer, so what
    # the walk found above it is not vouched for.
    libc_ret = syms["__libc_start_call_main"] + 0x40
    f.chain(0, 3, user=[ret[("main", "c")], libc_ret, 0x401234],
            flags=0)
    f.sample(1, syms["c"] + 5, pid=100, chain=3)
    # A walk that stopped early (user_cut): its callers are unknown too.
    f.chain(0, 4, user=[ret[("a", "b")]], flags=sf.CHAIN_F_USER_CUT)
    f.sample(1, ret[("b", "leaf")], pid=100, chain=4)
    f.stats(samples_taken=4, samples_written=4)
    r = parse(f, "--format", "folded")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "calltree#0;[unknown];__libc_start_call_main;main;c 1",
        "calltree#0;[unknown];a;b 1",
        "calltree#0;[unknown];leaf 1",
        "calltree#0;main;a;b 1",
    ]


def test_frames_the_unwind_tables_found_are_taken_as_they_are(parse, prog):
    """A chain's first nr_table user return addresses were found by the
    kernel's unwind tables (version 6): each is its caller, through
    functions that keep no frame pointer too, and a walk the tables ended
    is complete. Past them, frame pointers' frames are vouched for as
    before; a walk that was cut ends in [unknown]."""
    _, ret, syms = prog
    f = session(prog)
    libc_ret = syms["__libc_start_call_main"] + 0x40
    # leaf, then b, a, main and the C library's start: all by tables.
    f.chain(0, 1, user=[ret[("b", "leaf")], ret[("a", "b")],
                        ret[("main", "a")], libc_ret], nr_table=4)
    f.sample(1, syms["leaf"] + 8, pid=100, chain=1)
    # The same frames with only the first two by tables: what frame
    # pointers found above a, which keeps its frame pointer, stands;
    # above main (into the C library, which keeps none) it does not.
    f.chain(0, 2, user=[ret[("b", "leaf")], ret[("a", "b")],
                        ret[("main", "a")], libc_ret], nr_table=2)
    f.sample(1, syms["leaf"] + 8, pid=100, chain=2)
    # Tables all the way, but the walk was cut: callers unknown.
    f.chain(0, 3, user=[ret[("c", "leaf")], ret[("main", "c")]],
            nr_table=2, flags=sf.CHAIN_F_USER_CUT)
    f.sample(1, syms["leaf"] + 8, pid=100, chain=3)
    f.stats(samples_taken=3, samples_written=3)
    r = parse(f, "--format", "folded")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "calltree#0;[unknown];__libc_start_call_main;main;a;b;leaf 1",
        "calltree#0;[unknown];main;c;leaf 1",
        "calltree#0;__libc_start_call_main;main;a;b;leaf 1",
    ]


def collapse_perf_script(text):
    """Folded stacks from perf script text, as stackcollapse-perf.pl makes
    them: comm, then the frames outermost first (symbol without its
    offset; kernel frames _[k]), counted."""
    out = {}
    for block in text.strip("\n").split("\n\n"):
        lines = block.splitlines()
        head = re.match(r"^(\S.*?) (\d+)/(\d+) \[(\d{3})\] (\d+)\.(\d{6}): "
                        r"(\d+) cpu-clock:$", lines[0])
        assert head, lines[0]
        frames = []
        for line in lines[1:]:
            m = re.match(r"^\t([0-9a-f]+) (\S+?)(\+0x[0-9a-f]+)? \((.*)\)$",
                         line)
            assert m, line
            name = m.group(2)
            if m.group(4) == "[kernel.kallsyms]":
                name += "_[k]"
            frames.append(name)
        key = ";".join([head.group(1)] + frames[::-1])
        out[key] = out.get(key, 0) + 1
    return out


def test_perf_script(parse, prog, tmp_path):
    """--format perf-script: a header per sample (comm pid/tid [cpu]
    secs.usecs: period cpu-clock:), its frames leaf first with symbol
    offsets and DSOs, a blank line; collapsed, it is the folded output."""
    _, ret, syms = prog
    f = tree_session(prog)
    f.chain(1, 9, kernel=[0xffffffff81002010, 0xffffffff81000050],
            user=[syms["zero_reader"] + 9, ret[("main", "a")]])
    f.sample(1, 0xffffffff81003004, mode=sf.MODE_KERNEL, pid=100, tid=101,
             cpu=1, chain=9, time_ns=2_500_000)
    ks = tmp_path / "k.kallsyms"
    ks.write_text(KSYMS)
    r = parse(f, "--format", "perf-script", "--mode", "all",
              "--kallsyms", ks)
    assert r.returncode == 0, r.stderr
    blocks = r.stdout.split("\n\n")
    assert blocks[0].splitlines() == [
        "calltree 100/0 [000] 1.000000: 1000000 cpu-clock:",
        f"\t{syms['leaf'] + 8:x} leaf+0x8 ({prog[0]})",
        f"\t{ret[('b', 'leaf')] - 1:x} "
        f"b+0x{ret[('b', 'leaf')] - 1 - syms['b']:x} ({prog[0]})",
        f"\t{ret[('a', 'b')] - 1:x} a+0x{ret[('a', 'b')] - 1 - syms['a']:x}"
        f" ({prog[0]})",
        f"\t{ret[('main', 'a')] - 1:x} "
        f"main+0x{ret[('main', 'a')] - 1 - syms['main']:x} ({prog[0]})",
    ]
    assert "calltree 100/101 [001] 1.002500: 1000000 cpu-clock:\n" \
        "\tffffffff81003004 read_iter_zero+0x4 ([kernel.kallsyms])\n" \
        "\tffffffff8100200f ksys_read+0xf ([kernel.kallsyms])\n" in r.stdout
    folded = parse(f, "--format", "folded", "--mode", "all", "--by", "app",
                   "--kallsyms", ks)
    want = {}
    for line in folded.stdout.splitlines():
        stack, n = line.rsplit(" ", 1)
        want[stack] = int(n)
    assert collapse_perf_script(r.stdout) == want
    r = parse(f, "--format", "perf-script", "--pid", "7")
    assert r.returncode == 0 and r.stdout == ""


def test_perf_script_needs_a_file(parse_bin):
    r = subprocess.run([str(parse_bin), "--format", "perf-script", "-"],
                       capture_output=True, text=True, input="")
    assert r.returncode == 2
    assert "reads FILE twice, so not standard input" in r.stderr


# ---------------------------------------------------------------- --pprof

GO = shutil.which("go")
needs_go = pytest.mark.skipif(
    GO is None, reason="go is missing (Debian golang-go): go tool pprof "
    "reads the --pprof profiles")


@pytest.fixture(scope="module")
def go_env(tmp_path_factory):
    """An environment for go tool pprof: its own HOME and caches."""
    d = tmp_path_factory.mktemp("go")
    return dict(os.environ, HOME=str(d), GOCACHE=str(d / "cache"),
                PPROF_TMPDIR=str(d), PPROF_BINARY_PATH=str(d))


def pprof(go_env, profile, *args):
    """go tool pprof's text output for a profile (no symbolization of its
    own: every name is parse's)."""
    r = subprocess.run([GO, "tool", "pprof", "-symbolize=none", *args,
                        str(profile)], capture_output=True, text=True,
                       env=go_env, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r.stdout


def pprof_top(go_env, profile, *args):
    """-top in samples, every node: {name: (flat, cum)}."""
    out = pprof(go_env, profile, "-top", "-sample_index=samples",
                "-nodecount=100000", "-nodefraction=0", "-edgefraction=0",
                *args)
    rows = out.split("      flat  flat%   sum%        cum   cum%\n")[1]
    top = {}
    for line in rows.splitlines():
        x = line.split()
        top[" ".join(x[5:])] = (int(x[0]), int(x[3]))
    return top


def pprof_raw(go_env, profile):
    """-raw: the samples [(values, location ids, labels)], the locations
    {id: (address, mapping, [(function, file, line)])} and the mapping
    lines."""
    out = pprof(go_env, profile, "-raw")
    head, rest = out.split("Samples:\n")
    samples_text, rest = rest.split("Locations\n")
    locs_text, maps_text = rest.split("Mappings\n")
    samples = []
    for line in samples_text.splitlines()[1:]:
        m = re.match(r"^\s+(\d+)\s+(\d+): ([\d ]+)$", line)
        if m:
            samples.append(((int(m.group(1)), int(m.group(2))),
                            [int(x) for x in m.group(3).split()], {}))
        else:
            for k, v in re.findall(r"(\w+):\[([^\]]*)\]", line):
                samples[-1][2][k] = v
    locs, cur = {}, None
    for line in locs_text.splitlines():
        m = re.match(r"^\s+(\d+): (0x[0-9a-f]+) (M=\d+ )?(.*)$", line)
        if m:
            cur = locs[int(m.group(1))] = (int(m.group(2), 16),
                                           m.group(3), [])
            line = m.group(4)
        fm = re.match(r"^\s*(\S+)(?: (\S+):(\d+))?", line)
        if fm and fm.group(1):
            cur[2].append((fm.group(1), fm.group(2),
                           int(fm.group(3) or 0)))
    return head, samples, locs, maps_text.splitlines()


def call_ranges(exe):
    """{(caller, callee): [(start, end)]}: the bytes of each call
    instruction, from objdump."""
    calls = {}
    for caller, callee, start, after in objdump_calls(exe):
        calls.setdefault((caller, callee), []).append((start, after))
    return calls


@needs_go
def test_pprof_top_agrees_with_children(parse, prog, go_env, tmp_path):
    """go tool pprof -top of the profile: each function's flat and cum
    samples are --children's samples and children; the inlined run_mix
    is a function of its own unless -noinlines. The report printed is
    the one without --pprof."""
    out = tmp_path / "p.pb.gz"
    r = parse(tree_session(prog), "--children", "--format", "csv",
              "--by", "symbol", "--pprof", out)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    import csv as csv_mod
    import io
    children = {row["symbol"]: (int(row["samples"]), int(row["children"]))
                for row in csv_mod.DictReader(io.StringIO(r.stdout))}
    assert children == {"main": (1, 41), "leaf": (40, 40), "a": (0, 30),
                        "b": (0, 30), "c": (0, 10)}
    assert r.stdout == parse(tree_session(prog), "--children", "--format",
                             "csv", "--by", "symbol").stdout
    assert pprof_top(go_env, out, "-noinlines") == children
    assert pprof_top(go_env, out) == dict(children,
                                          **{"run_mix (inline)": (0, 40)})
    # The sample types, the period (the tick's, HZ 1000) and the time.
    head, samples, _, _ = pprof_raw(go_env, out)
    assert "PeriodType: cpu nanoseconds\nPeriod: 1000000\n" in head
    assert "Time: 2023-11-14 22:13:20 +0000 UTC" in head
    assert "Duration:" not in head  # every sample at time 0
    types = pprof(go_env, out, "-raw").split("Samples:\n")[1].splitlines()[0]
    assert types.split() == ["samples/count", "cpu/nanoseconds"]
    assert all(v[1] == v[0] * 1000000 for v, _, _ in samples)
    top = pprof(go_env, out, "-top")  # the default type: cpu
    assert "Type: cpu\n" in top
    assert "Showing nodes accounting for 41ms, 100% of 41ms total" in top


def labels_session(prog):
    """calltree#0 (pid 100): 20 samples of thread 101 by main -> a -> b,
    5 of thread 102 by main -> c; calltree#1 (pid 200, the same binary
    mapped at the same place): 3 samples of thread 201."""
    exe, ret, syms = prog
    f = session(prog)
    f.appid(2, "calltree", instance=1, pid=200, path=str(exe))
    f.mmap(2, 0x401000, 0x100000, pid=200, pgoff=0x1000, path=str(exe))
    sp = sf.CHAIN_F_SP_RET
    f.chain(0, 1, user=[ret[("b", "leaf")], ret[("a", "b")],
                        ret[("main", "a")]], flags=sp)
    f.chain(0, 2, user=[ret[("c", "leaf")], ret[("main", "c")]], flags=sp)
    leaf = syms["leaf"] + 8
    for i in range(20):
        f.sample(1, leaf, pid=100, tid=101, chain=1, time_ns=i * 1_000_000)
    for _ in range(5):
        f.sample(1, leaf, pid=100, tid=102, chain=2, time_ns=30_000_000)
    for _ in range(3):
        f.sample(2, leaf, pid=200, tid=201, chain=2, time_ns=40_000_000)
    f.stats(samples_taken=28, samples_written=28, chains_defined=2)
    return f


@needs_go
def test_pprof_labels_and_build_id(parse, prog, go_env, tmp_path):
    """Samples are aggregated by pid, tid and appid, which are their
    labels (-traces, -tagfocus); the mapping has the binary's build-id
    as readelf -n shows it (the session recorded none), once for both
    processes; the filters apply."""
    exe = prog[0]
    out = tmp_path / "p.pb.gz"
    r = parse(labels_session(prog), "--pprof", out)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    got = {}
    for t in pprof(go_env, out, "-traces").split("-----------+")[1:-1]:
        labels, frames = {}, []
        for line in t.splitlines()[1:]:
            m = re.match(r"^\s+(\w+):\s+(.*)$", line)
            if m and not frames:
                labels[m.group(1)] = m.group(2)
                continue
            m = re.match(r"^\s+(?:(\d+)ms)?\s+(.*)$", line)
            if m.group(1):
                ms = int(m.group(1))
            frames.append(m.group(2))
        got[labels["appid"], labels["pid"], labels["tid"]] = (ms, frames)
    inline = "run_mix (inline)"
    assert got == {
        ("calltree#0", "100", "101"): (20, ["leaf", "b", "a", inline,
                                            "main"]),
        ("calltree#0", "100", "102"): (5, ["leaf", "c", inline, "main"]),
        ("calltree#1", "200", "201"): (3, ["leaf", "c", inline, "main"]),
    }
    assert "Duration: 40ms" in pprof(go_env, out, "-raw")
    assert sum(v[0] for v in pprof_top(
        go_env, out, "-tagfocus=tid=102").values() if v[0]) == 5
    assert pprof_top(go_env, out, "-tagfocus=appid=calltree#1")["leaf"] \
        == (3, 3)
    # The mapping and its build-id.
    readelf = subprocess.run(["readelf", "-n", str(exe)], capture_output=True,
                             text=True, check=True).stdout
    bid = re.search(r"Build ID: ([0-9a-f]+)", readelf).group(1)
    _, _, locs, maps = pprof_raw(go_env, out)
    assert maps == [f"1: 0x401000/0x501000/0x1000 {exe} {bid} "
                    f"[FN][FL][LN][IN]"]
    assert {loc[1] for loc in locs.values()} == {"M=1 "}
    # The filters: --pid, --app; --tid is no filter, -tagfocus is.
    r = parse(labels_session(prog), "--pprof", out, "--pid", "200")
    assert r.returncode == 0, r.stderr
    assert pprof_top(go_env, out)["leaf"] == (3, 3)
    r = parse(labels_session(prog), "--pprof", out, "--app", "nothing")
    assert r.returncode == 0, r.stderr
    assert "Showing nodes accounting for 0, 0% of 0 total" in pprof(
        go_env, out, "-top", "-sample_index=samples")


@needs_go
def test_pprof_locations(parse, prog, go_env, tmp_path):
    """A return address's location is in its call instruction (the
    address one byte back, within the call's bytes per objdump); the leaf
    is the sampled IP; a location's lines are the functions inlined
    there, innermost first, as addr2line -i has them."""
    exe, ret, syms = prog
    out = tmp_path / "p.pb.gz"
    r = parse(tree_session(prog), "--pprof", out)
    assert r.returncode == 0, r.stderr
    _, samples, locs, _ = pprof_raw(go_env, out)
    calls = call_ranges(exe)
    stacks = {}
    for (n, _), ids, _ in samples:
        stacks[tuple(locs[i][2][-1][0] for i in ids)] = [locs[i][0]
                                                        for i in ids]
    assert sorted(stacks) == [("leaf", "b", "a", "main"),
                              ("leaf", "c", "main"), ("main",)]
    assert stacks[("main",)] == [syms["main"] + 4]
    for names, addrs in stacks.items():
        if len(names) == 1:
            continue
        assert addrs[0] == syms["leaf"] + 8
        for callee, caller, addr in zip(names, names[1:], addrs[1:]):
            assert ret[(caller, callee)] - 1 == addr
            (start, end), = calls[(caller, callee)]
            assert start <= addr < end, (caller, callee, hex(addr))
    # Lines as addr2line -i gives them: (function, file:line) pairs.
    for addr, _, lines in locs.values():
        a2l = subprocess.run(["addr2line", "-i", "-f", "-e", str(exe),
                              hex(addr)], capture_output=True, text=True,
                             check=True).stdout.splitlines()
        want = [(f, re.sub(r" \(discriminator \d+\)$", "", fl))
                for f, fl in zip(a2l[::2], a2l[1::2])]
        assert [(f, f"{file}:{line}") for f, file, line in lines] == want
    main_a = next(lines for addr, _, lines in locs.values()
                  if addr == ret[("main", "a")] - 1)
    assert [x[0] for x in main_a] == ["run_mix", "main"]


@needs_go
def test_pprof_without_chains_one_frame(parse, prog, go_env, tmp_path):
    """Samples without chains (a version 2 file, or a session without
    --callchain): each sample is one location, the sampled IP."""
    exe, _, syms = prog
    for version in (2, 3):
        f = sf.SessionFile(version=version)
        f.appid(1, "calltree", pid=100, path=str(exe))
        f.mmap(1, 0x401000, 0x100000, pid=100, pgoff=0x1000, path=str(exe))
        for _ in range(3):
            f.sample(1, syms["leaf"] + 8, pid=100, tid=100)
        f.sample(1, syms["c"] + 1, pid=100, tid=100)
        out = tmp_path / f"v{version}.pb.gz"
        r = parse(f, "--pprof", out)
        assert r.returncode == 0, r.stderr
        _, samples, locs, _ = pprof_raw(go_env, out)
        got = sorted((v[0], [locs[i][0] for i in ids]) for v, ids, _
                     in samples)
        assert got == [(1, [syms["c"] + 1]), (3, [syms["leaf"] + 8])]
        assert pprof_top(go_env, out) == {"leaf": (3, 3), "c": (1, 1)}


@needs_go
def test_pprof_kernel_and_unknown_frames(parse, prog, go_env, tmp_path):
    """Kernel frames are in the mapping [kernel.kallsyms], named by
    kallsyms; callers the unwind information cannot vouch for are one
    location of "[unknown]", without an address; an unmapped address is
    named as the reports name it."""
    exe, ret, syms = prog
    f = session(prog)
    f.chain(0, 1, kernel=[0xffffffff81002010, 0xffffffff81001010],
            user=[syms["zero_reader"] + 9, ret[("main", "a")]])
    for _ in range(4):
        f.sample(1, 0xffffffff81003004, mode=sf.MODE_KERNEL, pid=100,
                 tid=100, chain=1)
    f.chain(0, 2, user=[ret[("a", "b")]], flags=sf.CHAIN_F_USER_CUT)
    f.sample(1, ret[("b", "leaf")], pid=100, tid=100, chain=2)
    f.sample(1, 0x1234, pid=100, tid=100)
    ks = tmp_path / "k.kallsyms"
    ks.write_text(KSYMS)
    out = tmp_path / "p.pb.gz"
    r = parse(f, "--pprof", out, "--mode", "all", "--kallsyms", ks)
    assert r.returncode == 0, r.stderr
    _, samples, locs, maps = pprof_raw(go_env, out)
    assert maps[1:] == ["2: 0xffffffff8100100f/0xffffffff81003005/0x0 "
                        "[kernel.kallsyms]  [FN]"], maps
    stacks = sorted((v[0], [locs[i][2][-1][0] for i in ids])
                    for v, ids, _ in samples)
    assert stacks == [
        (1, ["[unknown]+0x1234"]),
        (1, ["b", "a", "[unknown]"]),
        (4, ["read_iter_zero", "ksys_read", "do_syscall_64", "zero_reader",
             "main"]),
    ]
    unknown = [loc for loc in locs.values() if loc[2][0][0] == "[unknown]"]
    assert unknown == [(0, None, [("[unknown]", None, 0)])]
    kernel = {loc[2][0][0]: loc for loc in locs.values()
              if loc[1] == "M=2 "}
    assert sorted(kernel) == ["do_syscall_64", "ksys_read",
                              "read_iter_zero"]
    assert kernel["ksys_read"][0] == 0xffffffff8100200f


@needs_go
def test_pprof_errors(parse, parse_bin, prog, tmp_path):
    """--pprof reads the file twice: not standard input (usage, 2). A file
    that cannot be written is one line and exit status 1, leaving no file
    (a temporary one next to OUT is renamed over it when complete)."""
    r = subprocess.run([str(parse_bin), "--pprof", str(tmp_path / "x"),
                        "-"], capture_output=True, text=True, input="")
    assert r.returncode == 2 and r.stderr == (
        "parse: --pprof: reads FILE twice, so not standard input\n")
    f = tree_session(prog)
    bad = tmp_path / "missing" / "p.pb.gz"
    r = parse(f, "--pprof", bad)
    assert r.returncode == 1
    assert r.stderr == f"parse: {bad}: No such file or directory\n"
    r = parse(f, "--pprof", "/dev/full")
    assert r.returncode == 1
    assert r.stderr == "parse: /dev/full: No space left on device\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.bin"]
    # A regular file's write fails half way (the file size limit): its
    # temporary file goes too.
    session_bin = tmp_path / "session.bin"
    out = tmp_path / "p.pb.gz"

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))
    r = subprocess.run([str(parse_bin), "--pprof", str(out),
                        str(session_bin)], capture_output=True, text=True,
                       preexec_fn=small_files)
    assert r.returncode == 1
    assert r.stderr == f"parse: {out}: File too large\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.bin"]
    out.write_text("old")
    r = parse(f, "--pprof", out)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.pb.gz",
                                                          "session.bin"]
    assert out.read_bytes()[:2] == b"\x1f\x8b"  # gzip
