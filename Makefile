# SPDX-License-Identifier: GPL-2.0-only
# mrc: out-of-tree build of net/mrc, its tools, and the test entry points.
# `make check` and `make demo` each do their own set-up (`make deps`).

KVER ?= $(shell bash tools/kver.sh 2>/dev/null)
KDIR ?= /usr/src/linux-headers-$(KVER)
export MRC_KVER := $(KVER)
export MRC_CACHE ?= /var/cache/mrc

KBUILD_ARGS := -C $(KDIR) M=$(CURDIR) CONFIG_MRC=m W=1

.PHONY: all module tools deps lint kunit vmtest selftest check clean
all: module tools

module:
	$(MAKE) $(KBUILD_ARGS) modules

tools:
	$(MAKE) -C selftests/mrc

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
	rm -rf results
