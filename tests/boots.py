"""The suite's guest boots: one table of them, how a boot's script is put
together from the scenarios of the modules that share it, which kernel
splat belongs to which scenario, and which boots may run beside others.

A boot (BOOTS) is one run of guest/vm.sh: a kernel, a number of vCPUs,
-icount or not. A test module adds scenarios to a boot with a module-level
dict SCENARIOS = {BOOT: SCRIPT}, and gets the boot's results through a
fixture made by boot_fixture(BOOT): the folder where its own scenarios
left them (a folder of the shared one, named after the module). The boot
runs once per test session, with the scripts of every module of the
session that has a part in it, in the order of the modules' names.

Splats. Every scenario writes a line to the kernel log as it begins and
as it ends (SCENARIO_SH). A splat between the two is that scenario's:
its test fails (scenario_ok reads NAME.splat), the others of the boot
do not. A splat outside every scenario fails the whole boot.

Sharing the machine. Two single-threaded TCG guests fit this machine's
two cores. Under -icount, guest time counts the guest's instructions:
what such a boot checks holds however busy the host is, so it may run
beside another boot. Without -icount the guest's clock is the host's:
a vCPU that the host does not run misses timer ticks, and checks of
sample counts against CPU time fail. Such a boot runs alone (alone=True)
unless its checks hold on a loaded host; BOOTS says which, boot by boot,
and Documentation/development.md why.
"""
import contextlib
import fcntl
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Boot:
    kernel: str             # "release" or "debug"
    smp: int
    icount: bool
    alone: bool             # no other boot may run beside it
    minutes: float          # its time in the last measured run
    timeout: int = 1500
    mem: int = None
    extra: tuple = field(default=())
    # Modules whose parts run last, in this order (the others come first,
    # in the order of their names): what cannot be undone. A debug boot's
    # kmemleak scan (conftest.KMEMLEAK_SCENARIO), every part's, comes
    # before them.
    last: tuple = field(default=())

    def run_vm_kw(self):
        return dict(smp=self.smp, debug=self.kernel == "debug",
                    icount=self.icount, timeout=self.timeout, mem=self.mem,
                    extra=self.extra, alone=self.alone)


# Every boot that modules share through SCENARIOS, with its time in the
# last measured run (Documentation/development.md), for the scheduler.
BOOTS = {
    # The sampler's accuracy against CPU time; sleepy_pmu's rates, storm
    # and idle CPU on the debug kernel (test_sampler, test_pmu).
    "debug-1cpu": Boot("debug", 1, icount=True, alone=False, minutes=3.0),
    # The debug kernel's 2-vCPU scenarios, in two boots of about the same
    # length: the sampler's and the logical stacks' storms (and the
    # kernel's own checks); call chains, the latency storm and
    # sleepy_pmu's errors, storm, hotplug and lockdown (last: it cannot be
    # undone).
    "debug-2cpu-a": Boot("debug", 2, icount=True, alone=False, minutes=5.2),
    "debug-2cpu-b": Boot("debug", 2, icount=True, alone=False, minutes=11.0,
                         last=("test_pmu",)),
    # Fairness at four CPUs, a starved pool, start/stop cycles under a
    # fork storm, the system call fuzzer.
    "debug-4cpu": Boot("debug", 4, icount=True, alone=False, minutes=7.1),
    # The release kernel with Debian's perf: symbols (and perf beside
    # them), sleepy_pmu's rates and costs, the logical-stack server; call
    # chains beside perf -g, the latency histograms' exact counts.
    "release-1cpu-a": Boot("release", 1, icount=True, alone=False,
                           minutes=2.0, extra=("--perf",)),
    "release-1cpu-b": Boot("release", 1, icount=True, alone=False,
                           minutes=3.2, extra=("--perf",)),
    "release-2cpu": Boot("release", 2, icount=True, alone=False, minutes=1.1,
                         timeout=900),
    # Two vCPUs that run at once (multi-threaded TCG, a host thread
    # each): the logical stacks' torn copies. It needs both cores.
    "release-2cpu-mttcg": Boot("release", 2, icount=False, alone=True,
                               minutes=0.7, timeout=600,
                               extra=("--mttcg",)),
    # Debian's own programs, the host's root file system.
    "release-1cpu-hostroot": Boot("release", 1, icount=True, alone=False,
                                  minutes=2.4, timeout=1500, mem=1024,
                                  extra=("--host-root",)),
}


def boot_fixture(name, wrap=Path):
    """A module-scoped fixture that returns the module's folder of boot
    name's shared folder (as wrap(folder)), booting it first if this
    session has not."""
    if name not in BOOTS:
        raise KeyError(f"no boot named {name} in boots.BOOTS")

    def fixture(request):
        return wrap(request.getfixturevalue("_sleepy_boots").part(
            name, request.module))
    fixture._sleepy_boot = name
    return pytest.fixture(scope="module")(fixture)


def boot_params_fixture(by_param):
    """A module-scoped fixture parametrized over by_param's keys: for
    each, (the module's folder of boot by_param[key], key)."""
    for name in by_param.values():
        if name not in BOOTS:
            raise KeyError(f"no boot named {name} in boots.BOOTS")

    def fixture(request):
        return request.getfixturevalue("_sleepy_boots").part(
            by_param[request.param], request.module), request.param
    fixture._sleepy_boot_params = by_param
    return pytest.fixture(scope="module", params=sorted(by_param))(fixture)


# Fixtures that boot a guest of their own for several tests (not through
# BOOTS), by name, with their minutes: their tests are kept together too.
OWN_BOOTS = {}


def own_boot(name, minutes):
    """Decorator of a fixture that boots a guest of its own: the tests
    that use it are scheduled together (boots_of), as a boot's are."""
    def mark(func):
        func._sleepy_boot = name
        OWN_BOOTS[name] = minutes
        return func
    return mark


def minutes_of(boot):
    return BOOTS[boot].minutes if boot in BOOTS else OWN_BOOTS[boot]


def boots_of(item):
    """The boots a test item needs, through the fixtures it uses."""
    names = set()
    params = getattr(getattr(item, "callspec", None), "params", {})
    for fixture, defs in item._fixtureinfo.name2fixturedefs.items():
        for d in defs:
            name = getattr(d.func, "_sleepy_boot", None)
            by_param = getattr(d.func, "_sleepy_boot_params", None)
            if name:
                names.add(name)
            elif by_param and fixture in params:
                names.add(by_param[params[fixture]])
    return names


def part_name(module):
    return module.__name__.rpartition(".")[2]


# ---------------------------------------------------------------- splats

def splat_re(top):
    """The runner's own pattern of the lines that fail a run
    (guest/vm.sh's SPLAT_RE), so that both agree."""
    text = (Path(top) / "guest" / "vm.sh").read_text()
    return re.compile(re.search(r"^SPLAT_RE='([^']*)'$", text, re.M)[1])


MARK = re.compile(r"sleepy-test: scenario (\S+) (begins|ends)$")


def attribute_splats(lines, pattern):
    """{scenario: [splat lines]} from a kernel log's lines, each splat
    line given to the scenario that had begun and not ended where it
    appears; those outside every scenario under None."""
    found, current = {}, None
    for line in lines:
        line = line.rstrip("\r\n")
        m = MARK.search(line)
        if m:
            current = m[1] if m[2] == "begins" else None
            continue
        if pattern.search(line):
            found.setdefault(current, [])
            if line not in found[current]:
                found[current].append(line)
    return found


def kernel_log(kept):
    """A kept run's kernel log lines: the guest's dmesg if it wrote one
    (the command ran to its end), else the console's printk lines."""
    dmesg = Path(kept) / "ctl" / "dmesg"
    if dmesg.exists() and dmesg.stat().st_size:
        return dmesg.read_text(errors="replace").splitlines()
    console = (Path(kept) / "console.log").read_text(errors="replace")
    return [l for l in console.splitlines()
            if re.match(r"^\[ *\d+\.\d+\]", l)]


# ---------------------------------------------------------------- sharing

@contextlib.contextmanager
def machine_slot(build, alone):
    """Hold the machine for a boot: shared with other boots, or alone.
    A lock file of the build folder (flock: shared or exclusive), so
    that test processes running side by side (pytest -n) agree."""
    Path(build).mkdir(parents=True, exist_ok=True)
    with open(Path(build) / ".vm-slots", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def workers():
    """How many test processes run side by side (pytest-xdist)."""
    return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))


def schedule(items):
    """Group and order the items for test processes side by side. The
    tests that need a boot, with those that need another boot too (a test
    that reads two boots joins their groups), form one xdist_group, which
    one process runs, so that each boot runs once. A test with a minutes
    mark of its own (it boots a guest of its own) is a group by itself.
    The other tests stay with their module, so that its fixtures are set
    up once. Groups go longest first (their boots' minutes, or the
    minutes mark of the test or of its module), so that the last to
    start are short. Returns the items in that order."""
    parent = {}

    def find(b):
        while parent.setdefault(b, b) != b:
            b = parent[b]
        return b
    needs = {}
    for item in items:
        names = sorted(boots_of(item))
        needs[item] = names
        for b in names:
            parent[find(b)] = find(names[0])
    members = {}
    for b in parent:
        members.setdefault(find(b), []).append(b)
    groups = {root: ("+".join(sorted(m)), sum(minutes_of(b) for b in m))
              for root, m in members.items()}

    def group(item):
        if needs[item]:
            return groups[find(needs[item][0])]
        own = item.get_closest_marker("minutes")
        if own and own in item.own_markers:
            return item.nodeid, own.args[0]
        return item.module.__name__, own.args[0] if own else 0
    keys = {}
    for item in items:
        name, minutes = group(item)
        keys[item] = (-minutes, name)
        item.add_marker(pytest.mark.xdist_group(name))
    return sorted(items, key=keys.get)
