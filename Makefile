# SPDX-License-Identifier: GPL-2.0-only
# mrc: out-of-tree build of net/mrc, its tools, and the test entry points.
# `make check` and `make demo` each do their own set-up (`make deps`).

KVER ?= $(shell bash tools/kver.sh 2>/dev/null)
KDIR ?= /usr/src/linux-headers-$(KVER)
export MRC_KVER := $(KVER)
export MRC_CACHE ?= /var/cache/mrc

KBUILD_ARGS := -C $(KDIR) M=$(CURDIR) CONFIG_MRC=m W=1

.PHONY: all module tools deps lint kunit vmtest selftest check clean regen regen-check
all: module tools

module:
	$(MAKE) $(KBUILD_ARGS) modules

tools:
	$(MAKE) -C selftests/mrc
	$(MAKE) -C tools/mrcctl

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

check: deps
	@bash tools/testing/check.sh

clean:
	$(MAKE) $(KBUILD_ARGS) clean
	$(MAKE) -C selftests/mrc clean
	$(MAKE) -C tools/mrcctl clean
	rm -rf results
