# sleepy: what needs rebuilding, decided by make. ./build.sh is the entry
# point (it installs the Debian packages, takes the build lock and calls
# these targets); `make TARGET` works too once the packages are there.
#
#   tree                 build/linux: Debian's source plus linux-patches/
#   uapi                 the uapi headers the tools build against, and the
#                        kernel's system call table (parse names calls)
#   user                 syscalls-user/, parse/, bench/, tests' programs
#   kernel-release       build/out-release (-sleepy) and its modules
#   kernel-debug         build/out-debug (-sleepy-debug)
#   initramfs-release    build/initramfs-release.cpio (also -debug)
#   initramfs-release-perf  the same plus Debian's perf (also -debug-perf)
#   host                 what the host tests need: uapi only
#   all                  kernel-release, user, initramfs-release
#   test                 everything the whole test suite needs
#
# Nothing here needs root. Kernel builds run one at a time (never -j on this
# file: the kernel's own make gets -j$(SLEEPY_JOBS)).
TOP := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
BUILD := $(abspath $(or $(SLEEPY_BUILD_DIR),$(TOP)/build))
TREE := $(BUILD)/linux
ST := $(BUILD)/stamps
K := $(TOP)/mk/kernel.sh
PATCHES := $(TOP)/linux-patches
CONFIG := $(PATCHES)/config
SERIES := $(PATCHES)/series $(addprefix $(PATCHES)/,$(shell \
	grep -v -e '^\#' -e '^$$' $(PATCHES)/series))
DEBVER := $(shell dpkg-query -W -f='$${Version}' linux-source-6.1 2>/dev/null)
USER_DIRS := syscalls-user parse bench tests/progs tests/pmu
UAPI := $(BUILD)/uapi/linux/sleepy.h $(BUILD)/uapi/linux/sleepy_pmu.h \
	$(BUILD)/uapi/syscall_64.tbl
FLAVORS := release debug
JOBS := $(or $(SLEEPY_JOBS),$(shell nproc))

export SLEEPY_BUILD_DIR := $(BUILD)

# $(call write-if-changed,FILE): standard input into FILE, whose time
# changes only when its content does.
write-if-changed = cat >$(1).tmp && { cmp -s $(1).tmp $(1) && rm $(1).tmp \
	|| mv $(1).tmp $(1); }

all: kernel-release user initramfs-release
test: $(FLAVORS:%=initramfs-%) initramfs-release-perf
host: uapi

tree: $(ST)/head
uapi: $(UAPI)
$(FLAVORS:%=kernel-%): kernel-%: $(ST)/kernel-%
$(FLAVORS:%=initramfs-%): initramfs-%: $(BUILD)/initramfs-%.cpio
$(FLAVORS:%=initramfs-%-perf): initramfs-%-perf: $(BUILD)/initramfs-%-perf.cpio

$(ST) $(BUILD)/user/guest $(BUILD)/user/host:
	mkdir -p $@

# ---------------------------------------------------------------- kernel

# The Debian version of the source: a new one means a new tree.
$(ST)/debver: FORCE | $(ST)
	@echo '$(DEBVER)' | $(call write-if-changed,$@)

$(ST)/tree: $(SERIES) $(ST)/debver | $(ST)
	@$(K) version
	$(K) prepare
	@touch $@

# The tree's HEAD: a developer's commit in build/linux rebuilds the kernels.
$(ST)/head: $(ST)/tree FORCE
	@git -C $(TREE) rev-parse HEAD | $(call write-if-changed,$@)

$(BUILD)/uapi/linux/%.h: $(ST)/head
	@mkdir -p $(@D)
	@cat $(TREE)/include/uapi/linux/$*.h | $(call write-if-changed,$@)

$(BUILD)/uapi/syscall_64.tbl: $(ST)/head
	@mkdir -p $(@D)
	@cat $(TREE)/arch/x86/entry/syscalls/syscall_64.tbl | \
		$(call write-if-changed,$@)

$(ST)/config-release: $(CONFIG)/base.config
$(ST)/config-debug: $(CONFIG)/base.config $(CONFIG)/debug.config
$(ST)/config-%: $(ST)/tree
	$(K) config $*
	@touch $@

$(ST)/kernel-%: $(ST)/config-% $(ST)/head
	$(K) build $*
	@touch $@

# ---------------------------------------------------------------- user

# A job per core in each folder (these makes run alone: no kernel build
# runs beside them), with ccache where it is installed.
USER_CC := $(if $(shell command -v ccache),ccache gcc,gcc)
user: $(UAPI) | $(BUILD)/user/guest $(BUILD)/user/host
	@for d in $(USER_DIRS); do \
		$(MAKE) -s -j$(JOBS) -C $(TOP)/$$d OUT=$(BUILD)/user \
			KERNEL_UAPI=$(BUILD)/uapi CC="$(USER_CC)" || exit; \
	done

# ---------------------------------------------------------------- initramfs

$(BUILD)/gen_init_cpio: $(ST)/tree
	$(CC) -O2 -o $@ $(TREE)/usr/gen_init_cpio.c

# The lists are remade every time and rewritten only when they change; an
# archive depends on its list and on every file the list names (the .d
# files, written with the archive, as gcc -MMD writes them).
$(BUILD)/initramfs-%.list: $(ST)/kernel-% user FORCE
	@$(TOP)/mk/initramfs-list.sh base $(TOP) $(BUILD) $* | \
		$(call write-if-changed,$@)

$(BUILD)/perf.list: FORCE
	@$(TOP)/mk/initramfs-list.sh perf | $(call write-if-changed,$@)

$(BUILD)/%.cpio: $(BUILD)/%.list $(BUILD)/gen_init_cpio
	$(BUILD)/gen_init_cpio $< >$@.tmp
	@awk '$$1 == "file" { f[++n] = $$3 } END { printf "$@:"; \
		for (i = 1; i <= n; i++) printf " %s", f[i]; print ""; \
		for (i = 1; i <= n; i++) print f[i] ":" }' $< >$(BUILD)/$*.d
	@mv $@.tmp $@
	@echo "$@: $$(du -h $@ | cut -f1)"

# The kernel unpacks concatenated archives in order: perf after the rest.
$(BUILD)/initramfs-%-perf.cpio: $(BUILD)/initramfs-%.cpio $(BUILD)/perf.cpio
	cat $^ >$@.tmp && mv $@.tmp $@

-include $(wildcard $(BUILD)/*.d)

# ---------------------------------------------------------------- patches

patches:
	$(K) export

clean:
	rm -rf $(BUILD)
	@for d in $(USER_DIRS); do $(MAKE) -s -C $(TOP)/$$d clean; done

FORCE:
.PHONY: all test host tree uapi user patches clean FORCE \
	$(FLAVORS:%=kernel-%) $(FLAVORS:%=initramfs-%) \
	$(FLAVORS:%=initramfs-%-perf)
.SECONDARY:
.DELETE_ON_ERROR:
