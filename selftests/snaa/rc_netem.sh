#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RC over an impaired link (netem loss, reordering, duplication,
# corruption): a 64 MiB stream exact, counters as predicted.
#
# Features: rc, netem
exec sh "$(dirname "$0")/rc.sh" netem
