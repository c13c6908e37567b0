# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# snaa top-level build.
#
#   make            module (W=1) + rdma-core provider + host tests
#                   + libnaaice, naa-server, naa-client
#   make check      deps, build, host unit tests, VM tests on the default
#                   kernel, on 6.12 (from bookworm-backports, installed by
#                   the deps step; SNAA_BACKPORTS=0 skips it) and on the
#                   debug kernel (KASAN, lockdep, kmemleak: built once per
#                   machine); ends "N passed, N failed"
#   make demo       deps, build, boot the VM, show snaa devices, ib_write_bw
#                   and rping between them, then the NAAICE demo
#   make demo-naaice  build, boot the VM, naa-server + naa-client RPCs on
#                   snaa (on rdma_rxe if snaa cannot do RC)
#   make install    module + provider (honours DESTDIR)
#   make deps       install the build/test dependencies with apt-get
#   make bench      snaa vs rdma_rxe in one VM boot, ratio table (bench/results/),
#                   then make bench-naaice
#   make bench-naaice  NAAICE RPC round trip (1 B - 1 KiB) and throughput
#                   (4 - 512 MiB), rdma_rxe and snaa in one VM boot
#   make fuzz       libFuzzer on the wire-format code, FUZZ_SECONDS (60) per
#                   target (tests/fuzz/; make check runs a short fixed run)
#
# KVER selects the Debian kernel to build for and to boot in the VM
# (default: the oldest installed *-amd64 kernel that has headers, i.e.
# bookworm's 6.1).  KDIR overrides the kernel build directory.  The
# module for the default kernel is built in place
# (drivers/infiniband/sw/snaa/snaa.ko); for any other KVER in
# build/kver/KVER/drivers/infiniband/sw/snaa/ (scripts/modbuild.sh), so
# "make modules KVER=6.12..." leaves the default build alone.

KVER ?= $(or $(SNAA_KVER),$(shell sh scripts/kver.sh))
KDIR ?= /lib/modules/$(KVER)/build
PWD := $(shell pwd)
MOD_BUILD := $(PWD)/$(shell sh scripts/modbuild.sh '$(KVER)')
KTEST_DIR := selftests/snaa/ktest
KTEST_BUILD := $(PWD)/$(shell sh scripts/modbuild.sh '$(KVER)' $(KTEST_DIR))

export SNAA_KVER := $(KVER)

.PHONY: all modules provider unit selftests ktest install modules_install \
	naaice dkms-install check check-deps check-host check-vm check-compat \
	check-debug demo demo-naaice deps \
	style sparse clean help bench bench-naaice fuzz

all: modules provider unit selftests ktest naaice

help:
	@awk 'NR < 3 { next } /^#/ { print; next } { exit }' Makefile

modules:
	@sh scripts/modbuild.sh --prepare '$(KVER)' >/dev/null
	$(MAKE) -C $(KDIR) M=$(MOD_BUILD) W=1 modules

provider:
	$(MAKE) -C userspace/provider

unit:
	$(MAKE) -C tests/unit

# NAAICE API library and the software NAA tools (Documentation/naaice.rst).
naaice:
	$(MAKE) -C userspace/libnaaice

selftests:
	$(MAKE) -C selftests/snaa

# The in-kernel consumer test module, for the test VM only.
ktest:
	@sh scripts/modbuild.sh --prepare '$(KVER)' $(KTEST_DIR) >/dev/null
	$(MAKE) -C $(KDIR) M=$(KTEST_BUILD) W=1 modules

sparse:
	@sh scripts/modbuild.sh --prepare '$(KVER)' >/dev/null
	@sh scripts/modbuild.sh --prepare '$(KVER)' $(KTEST_DIR) >/dev/null
	$(MAKE) -C $(KDIR) M=$(MOD_BUILD) W=1 C=2 modules
	$(MAKE) -C $(KDIR) M=$(KTEST_BUILD) W=1 C=2 modules

style:
	sh scripts/style.sh

modules_install:
	$(MAKE) -C $(KDIR) M=$(MOD_BUILD) INSTALL_MOD_DIR=updates \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	$(if $(DESTDIR),,depmod -a $(KVER))

install: modules_install
	$(MAKE) -C userspace/provider install
	$(MAKE) -C userspace/libnaaice install

dkms-install:
	sh scripts/dkms-install.sh

deps:
	sh scripts/deps.sh

# make check also needs the 6.12 kernel from bookworm-backports.
check-deps:
	SNAA_BACKPORTS=$${SNAA_BACKPORTS:-1} sh scripts/deps.sh

check: check-deps
	$(MAKE) all
	sh scripts/check.sh

check-host: all
	sh scripts/check.sh host

check-vm: all
	sh scripts/check.sh vm

check-compat: all
	sh scripts/check.sh compat

# The VM tests on the debug kernel (built once per machine, cached in
# /var/cache/snaa; scripts/debug-kernel.sh).
check-debug: all
	sh scripts/check.sh debug

# bench.sh builds what it measures itself (and still measures rxe and the
# UDP ceiling if the snaa build fails).
bench:
	bench/bench.sh; rc=$$?; $(MAKE) bench-naaice && exit $$rc

bench-naaice: all
	selftests/vm/run --mem 3072 --timeout 3000 -- sh bench/naaice.sh

# Longer runs than make check's: FUZZ_SECONDS per target, the corpus kept
# in build/fuzz/corpus/, crash reproducers in build/fuzz/crashes/.
fuzz:
	$(MAKE) -C tests/fuzz fuzz

demo: deps
	$(MAKE) all
	selftests/vm/run -- sh -c 'sh scripts/demo.sh && sh scripts/naaice-demo.sh'

demo-naaice: all
	selftests/vm/run -- sh scripts/naaice-demo.sh

clean:
	if [ -d $(MOD_BUILD) ]; then $(MAKE) -C $(KDIR) M=$(MOD_BUILD) clean; fi
	if [ -d $(KTEST_BUILD) ]; then $(MAKE) -C $(KDIR) M=$(KTEST_BUILD) clean; fi
	$(MAKE) -C userspace/provider clean
	$(MAKE) -C userspace/libnaaice clean
	$(MAKE) -C tests/unit clean
	$(MAKE) -C tests/fuzz clean
	$(MAKE) -C selftests/snaa clean
