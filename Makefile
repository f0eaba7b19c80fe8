# SPDX-License-Identifier: GPL-2.0-only
# mrc: out-of-tree build of net/mrc, its tools, and the test entry points.
# `make check` and `make demo` each do their own set-up (`make deps`).

# The kernel to build for and install into: the newest Debian 6.12 kernel
# with image and headers (tools/kver.sh, the one the VM boots), else the
# running kernel if its headers are installed.  MRC_KVER, for the test
# scripts, is only ever the former.
KVER ?= $(shell bash tools/kver.sh 2>/dev/null)
export MRC_KVER := $(KVER)
ifeq ($(KVER),)
KVER := $(shell bash tools/kver.sh --or-running 2>/dev/null)
endif
KDIR ?= $(or $(wildcard /usr/src/linux-headers-$(KVER)),/lib/modules/$(KVER)/build)
export MRC_CACHE ?= /var/cache/mrc

KBUILD_ARGS := -C $(KDIR) M=$(CURDIR) CONFIG_MRC=m W=1

# sim/ (ns-3) is built by `make sim` and its smoke stage, not by all
.PHONY: sim sim-smoke all module tools install install-files uninstall dkms-install dkms-uninstall deps lint kunit vmtest selftest check demo bench clean regen regen-check
all: module tools

module:
	@[ -d "$(KDIR)" ] || { bash tools/kver.sh --or-running >/dev/null; \
		echo "no kernel headers$(if $(KVER), at $(KDIR),: no kernel found): run make deps," \
			"install the running kernel's headers or name them (KVER=, KDIR=)" >&2; exit 1; }
	$(MAKE) $(KBUILD_ARGS) modules

tools:
	$(MAKE) -C selftests/mrc
	$(MAKE) -C tools/mrcctl
	$(MAKE) -C tools/agent
	$(MAKE) -C tools/preload
	$(MAKE) -C tools/nccl
	$(MAKE) -C tools/bench

# mrc.ko under /lib/modules/$(KVER)/updates (socket(AF_MRC) autoloads it
# through its net-pf alias once depmod ran); under $(DESTDIR)$(PREFIX)
# (/usr/local): bin/mrcctl, its man page and completion,
# include/linux/mrc.h (tools/mrcctl), sbin/mrc-agent, its man page and
# /etc/systemd/system/mrc-agent.service (tools/agent) and
# lib/mrc/libmrc-preload.so
MODDIR = $(DESTDIR)/lib/modules/$(KVER)/updates
# no kernel found: refuse, rather than install to /lib/modules//updates
need-kver = @[ -n "$(KVER)" ] || { echo "make $@: no kernel release (KVER): no Debian 6.12 kernel" \
	"(tools/kver.sh) and no headers of the running kernel $$(uname -r) at" \
	"$${MRC_MODULES_DIR:-/lib/modules}/$$(uname -r)/build; install them or name one: make $@ KVER=RELEASE" >&2; exit 1; }
install: all
	$(MAKE) install-files

# what install copies, without building (a prepared tree, the VM's test)
install-files:
	$(need-kver)
	install -D -m 0644 net/mrc/mrc.ko $(MODDIR)/mrc.ko
	$(MAKE) -C tools/mrcctl install
	$(MAKE) -C tools/agent install
	$(MAKE) -C tools/preload install
	[ -n "$(DESTDIR)" ] || depmod -a $(KVER)

uninstall:
	$(need-kver)
	rm -f $(MODDIR)/mrc.ko
	$(MAKE) -C tools/mrcctl uninstall
	$(MAKE) -C tools/agent uninstall
	$(MAKE) -C tools/preload uninstall
	[ -n "$(DESTDIR)" ] || depmod -a $(KVER)

# the module's source under /usr/src/mrc-$(MRC_VERSION), rebuilt by DKMS
# for every kernel installed later (dkms.conf); the tools as install does
MRC_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
dkms-install: tools
	$(need-kver)
	rm -rf $(DESTDIR)/usr/src/mrc-$(MRC_VERSION)
	mkdir -p $(DESTDIR)/usr/src/mrc-$(MRC_VERSION)
	tar -c --exclude='*.o' --exclude='*.ko' --exclude='*.mod*' --exclude='.*' \
		--exclude=modules.order Kbuild dkms.conf net include | \
		tar -x -C $(DESTDIR)/usr/src/mrc-$(MRC_VERSION)
	dkms install mrc/$(MRC_VERSION) -k $(KVER)
	$(MAKE) -C tools/mrcctl install
	$(MAKE) -C tools/preload install

dkms-uninstall:
	-dkms remove mrc/$(MRC_VERSION) --all
	rm -rf $(DESTDIR)/usr/src/mrc-$(MRC_VERSION)
	$(MAKE) -C tools/mrcctl uninstall
	$(MAKE) -C tools/preload uninstall

# netlink code and uapi header from Documentation/netlink/specs/mrc.yaml
regen:
	@bash tools/regen.sh

regen-check:
	@bash tools/regen.sh --check

deps:
	@bash tools/deps.sh

lint:
	@bash tools/lint.sh

kunit:
	@bash tools/testing/kunit.sh

vmtest: module
	@bash tools/testing/vm/selftest.sh

selftest: all
	@bash tools/testing/selftest.sh

# Long hostile-input run (selftests/mrc/hardening.sh with STRESS=1) in the VM,
# bounded at 12 minutes; the guest log lands in results/stress.  Then
# trinity against AF_MRC for 3 minutes (make check runs it for 30 s), the
# one-spine failover 20 times (worst run reported), the soak, and
# planes.sh and multipath.sh 20 times under -icount beside a busy VM: the
# demo, collective.sh and multipath.sh on the debug kernel (timed-loops.sh).
.PHONY: stress soak
stress: all
	cd selftests/mrc && bash ../../tools/testing/vm/run-vm.sh -o $(CURDIR)/results/stress \
		-t 720 'STRESS=1 ./hardening.sh'
	cd selftests/mrc && bash ../../tools/testing/vm/run-vm.sh -o $(CURDIR)/results/stress-trinity \
		-t 420 'TRINITY_SECS=180 TRINITY_CHILDREN=8 ./trinity.sh'
	@# under -icount on one vCPU, as make check times failovers (selftest.sh)
	cd selftests/mrc && MRC_ICOUNT=shift=1,sleep=off bash ../../tools/testing/vm/run-vm.sh \
		-c 1 -o $(CURDIR)/results/stress-failover -t 1800 'MP_FAILOVER_RUNS=20 ./multipath.sh'
	@# every selftest again with per-packet spraying (no bursts)
	RESULTS=$(CURDIR)/results/stress-per-packet MRC_MODPARAMS=burst_max=1 \
		bash tools/testing/selftest.sh
	@bash tools/testing/soak.sh
	@# planes.sh and multipath.sh 20 times under -icount while another VM runs
	@# the demo, collective.sh and multipath.sh 20 times each on the debug kernel
	@MRC_TIMED_BUSY=1 bash tools/testing/timed-loops.sh

# The two once-flaky runs, SOAK_N (5) times each, every console kept in
# results/soak/CASE/RUN; results/soak/summary.txt classifies each failure.
soak: all
	@bash tools/testing/soak.sh

check: deps
	@bash tools/testing/check.sh

# the main job: one connection across a spine failure, against TCP
demo: deps
	@$(MAKE) --no-print-directory all
	@bash tools/demo/demo.sh

# MRC against TCP and MPTCP in the VM; results/bench/{bench.json,*.png,table.txt}
bench: deps
	@$(MAKE) --no-print-directory all
	@bash tools/bench/bench.sh

# the ns-3 cluster-scale model (sim/): the 1,024-host set, then
# results/sim/{*.json,table.txt,*.png}; Documentation/networking/mrc-sim.rst
sim: deps
	@bash sim/run-set.sh

sim-smoke: deps
	@$(MAKE) --no-print-directory -C sim smoke

clean:
	$(MAKE) -C sim clean
	$(MAKE) $(KBUILD_ARGS) clean
	$(MAKE) -C selftests/mrc clean
	$(MAKE) -C tools/mrcctl clean
	$(MAKE) -C tools/agent clean
	$(MAKE) -C tools/preload clean
	$(MAKE) -C tools/nccl clean
	$(MAKE) -C tools/bench clean
	rm -rf results .debug-kernel
