# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# snaa top-level build.
#
#   make            module (W=1) + rdma-core provider (built in the
#                   installed rdma-core's source tree, build/provider/)
#                   + host tests
#                   + libnaaice, naa-server, naa-client
#                   + libwcubuf, wcubuf-send, wcubuf-emu
#   make check      deps, build, host unit tests, VM tests on the default
#                   kernel, on 6.12 (from bookworm-backports, installed by
#                   the deps step; SNAA_BACKPORTS=0 skips it) and on the
#                   debug kernel (KASAN, lockdep, kmemleak: built once per
#                   machine), side by side; ends "N passed, N failed"
#   make check-full make check with every VM test on every kernel and
#                   every repeat
#   make demo       deps, build, boot the VM, show snaa devices, ib_write_bw
#                   and rping between them, then the NAAICE and WCU.BUF demos
#   make demo-naaice  build, boot the VM, naa-server + naa-client RPCs on
#                   snaa (on rdma_rxe if snaa cannot do RC)
#   make demo-wcubuf  build, boot the VM, wcubuf-send streaming images to
#                   wcubuf-emu on snaa, clean and with 2 % loss
#   make install    module + provider (honours DESTDIR)
#   make deps       install the build/test dependencies with apt-get (the
#                   only target that runs apt; check, demo and style run it)
#   make bench      snaa vs rdma_rxe in one VM boot, ratio table (bench/results/),
#                   then make bench-naaice and make bench-wcubuf
#   make bench-naaice  NAAICE RPC round trip (1 B - 1 KiB) and throughput
#                   (4 - 512 MiB), rdma_rxe and snaa in one VM boot
#   make bench-wcubuf  WCU.BUF streaming rate (wcubuf-send -> wcubuf-emu)
#                   next to ib_write_bw -c UC on the same path
#   make fuzz       libFuzzer on the wire-format code, FUZZ_SECONDS (60) per
#                   target (tests/fuzz/; make check runs a short fixed run)
#   make soak       the abuser, the packet fuzzer and RC/UC/UD traffic over
#                   netem together on the debug kernel for SOAK_MINUTES (30),
#                   lockup and hung task detectors armed; not in make check
#
# KVER is the kernel to build for: the running one (uname -r) unless
# KVER= says otherwise; KDIR overrides its build directory (default:
# /lib/modules/KVER/build, from the kernel's headers package).  The VM
# targets (check*, demo*, bench*, soak) build for and boot VM_KVER: its
# default is $SNAA_KVER, else the oldest installed Debian *-amd64 kernel
# that has headers and an image (scripts/kver.sh: bookworm's 6.1).
# Modules are built out of place, one tree per kernel:
# build/kver/KVER/drivers/infiniband/sw/snaa/ (scripts/modbuild.sh), so
# "make modules KVER=6.12..." leaves the others alone.

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
VM_KVER ?= $(or $(SNAA_KVER),$(shell sh scripts/kver.sh))
PWD := $(shell pwd)
MOD_BUILD := $(PWD)/$(shell sh scripts/modbuild.sh '$(KVER)')
KTEST_DIR := selftests/snaa/ktest
KTEST_BUILD := $(PWD)/$(shell sh scripts/modbuild.sh '$(KVER)' $(KTEST_DIR))

# What the VM targets run first: everything, built for the VM's kernel.
VM_ALL = $(MAKE) all KVER=$(VM_KVER)
# ... and how they call the scripts that boot it.
VM_ENV = SNAA_KVER=$(VM_KVER)

.PHONY: all modules provider unit selftests ktest common install modules_install \
	naaice wcubuf dkms-install check check-full check-deps check-host check-vm \
	check-compat check-matrix check-debug demo demo-naaice demo-wcubuf deps kdir \
	style sparse clean help bench bench-naaice bench-wcubuf fuzz soak

all: modules provider unit selftests ktest common naaice wcubuf

# No build tree for KVER: say how to get one rather than what make says.
kdir:
	@test -d '$(KDIR)' || { \
	  echo "snaa: no build tree for kernel $(KVER) at $(KDIR): install its" \
	    "headers (Debian, Ubuntu: linux-headers-$(KVER); Fedora:" \
	    "kernel-devel-$(KVER)), or build for another kernel with KVER=" \
	    "(one of: $$(ls /lib/modules | xargs)) or KDIR=" >&2; \
	  exit 1; }

help:
	@awk 'NR < 3 { next } /^#/ { print; next } { exit }' Makefile

modules: kdir
	@sh scripts/modbuild.sh --prepare '$(KVER)' >/dev/null
	$(MAKE) -C $(KDIR) M=$(MOD_BUILD) W=1 modules

# The provider is built the way rdma-core builds its own, in the source
# tree of the installed rdma-core (fetched once into /var/cache/snaa),
# into build/provider/: scripts/provider-build.sh.
provider:
	$(MAKE) -C userspace/provider

unit:
	$(MAKE) -C tests/unit

# What every snaa tool shares: command line helpers, CRC-32C.
common:
	$(MAKE) -C userspace/common

# NAAICE API library and the software NAA tools (Documentation/naaice.rst).
naaice: common
	$(MAKE) -C userspace/libnaaice

# WCU.BUF streaming protocol library, worker and emulator
# (Documentation/wcubuf.rst); wcubuf-emu calls the direct verbs in the
# provider libibverbs loads, it does not link it.
wcubuf: common
	$(MAKE) -C userspace/libwcubuf

selftests:
	$(MAKE) -C selftests/snaa

# The in-kernel consumer test module, for the test VM only.
ktest: kdir
	@sh scripts/modbuild.sh --prepare '$(KVER)' $(KTEST_DIR) >/dev/null
	$(MAKE) -C $(KDIR) M=$(KTEST_BUILD) W=1 modules

# KBUILD_CHECKSRC as well as C: the kernel turns C= off when it cannot
# run scripts/checker-valid.sh, which sid's 7.x headers lack.
sparse: kdir
	@sh scripts/modbuild.sh --prepare '$(KVER)' >/dev/null
	@sh scripts/modbuild.sh --prepare '$(KVER)' $(KTEST_DIR) >/dev/null
	$(MAKE) -C $(KDIR) M=$(MOD_BUILD) W=1 C=2 KBUILD_CHECKSRC=2 modules
	$(MAKE) -C $(KDIR) M=$(KTEST_BUILD) W=1 C=2 KBUILD_CHECKSRC=2 modules

style: deps
	sh scripts/style.sh

modules_install:
	$(MAKE) -C $(KDIR) M=$(MOD_BUILD) INSTALL_MOD_DIR=updates \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	$(if $(DESTDIR),,depmod -a $(KVER))

install: modules_install
	$(MAKE) -C userspace/provider install
	$(MAKE) -C userspace/libnaaice install
	$(MAKE) -C userspace/libwcubuf install

dkms-install:
	sh scripts/dkms-install.sh

deps:
	sh scripts/deps.sh

# make check also needs the 6.12 kernel from bookworm-backports.
check-deps:
	SNAA_BACKPORTS=$${SNAA_BACKPORTS:-1} sh scripts/deps.sh

check: check-deps
	$(VM_ALL)
	$(VM_ENV) sh scripts/check.sh

# make check with every VM test on 6.1 and 6.12 and every repeat (longer
# than CI allows; scripts/check.sh says what make check leaves out).
check-full: check-deps
	$(VM_ALL)
	$(VM_ENV) sh scripts/check.sh full

# One stage alone: host, vm, compat, matrix (trixie and sid, in their
# cached roots: scripts/matrix.sh) or debug (the debug kernel: built
# once per machine, cached in /var/cache/snaa; scripts/debug-kernel.sh).
check-host check-vm check-compat check-matrix check-debug: check-%:
	$(VM_ALL)
	$(VM_ENV) sh scripts/check.sh $*

# selftests/snaa/soak.sh on the debug kernel for SOAK_MINUTES.
SOAK_MINUTES ?= 30
soak:
	$(VM_ALL)
	$(VM_ENV) SNAA_SOAK_SECONDS=$$(($(SOAK_MINUTES) * 60)) sh scripts/check.sh soak

# bench.sh builds what it measures itself (and still measures rxe and the
# UDP ceiling if the snaa build fails).
bench:
	$(VM_ENV) bench/bench.sh; rc=$$?; $(MAKE) bench-naaice bench-wcubuf && exit $$rc

bench-naaice:
	$(VM_ALL)
	$(VM_ENV) selftests/vm/run --mem 3072 --timeout 3000 -- sh bench/naaice.sh

# WCU.BUF streaming (wcubuf-send -> wcubuf-emu) next to ib_write_bw -c UC
bench-wcubuf:
	$(VM_ALL)
	$(VM_ENV) selftests/vm/run --timeout 1800 -- sh bench/wcubuf.sh

# Longer runs than make check's: FUZZ_SECONDS per target, the corpus kept
# in build/fuzz/corpus/, crash reproducers in build/fuzz/crashes/.
fuzz:
	$(MAKE) -C tests/fuzz fuzz

demo: deps
	$(VM_ALL)
	$(VM_ENV) selftests/vm/run -- sh -c 'sh selftests/demo/snaa.sh && sh selftests/demo/naaice.sh && sh selftests/demo/wcubuf.sh'

demo-naaice:
	$(VM_ALL)
	$(VM_ENV) selftests/vm/run -- sh selftests/demo/naaice.sh

demo-wcubuf:
	$(VM_ALL)
	$(VM_ENV) selftests/vm/run -- sh selftests/demo/wcubuf.sh

clean:
	if [ -d $(MOD_BUILD) ]; then $(MAKE) -C $(KDIR) M=$(MOD_BUILD) clean; fi
	if [ -d $(KTEST_BUILD) ]; then $(MAKE) -C $(KDIR) M=$(KTEST_BUILD) clean; fi
	$(MAKE) -C userspace/provider clean
	$(MAKE) -C userspace/libnaaice clean
	$(MAKE) -C userspace/libwcubuf clean
	$(MAKE) -C userspace/common clean
	$(MAKE) -C tests/unit clean
	$(MAKE) -C tests/fuzz clean
	$(MAKE) -C selftests/snaa clean
