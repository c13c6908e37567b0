#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# UC data path between two snaa devices in two namespaces, and loopback.
#
# Features: uc
exec sh "$(dirname "$0")/uc_test.sh" snaa
