# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What the Makefiles of hostile/, interop/ and perf/ share, after their
# TEST_PROGS and TEST_FILES: in a kernel tree, the kernel's lib.mk (each
# subdirectory is a kselftest collection of its own, as net/forwarding);
# standalone, run_tests runs the subdirectory's tests through
# ../run_tests.sh with the programs of this directory.
ifneq ($(wildcard ../../lib.mk),)
include ../../lib.mk
else
all:

run_tests:
	$(MAKE) -C .. all
	cd .. && sh run_tests.sh $(addprefix $(notdir $(CURDIR))/,$(TEST_PROGS))

.PHONY: all run_tests
endif
