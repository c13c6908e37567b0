# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Snapshots of a device's hw counters (sourced through lib.sh).

# cnt_snap DEV FILE: "name value" for every hw counter of DEV (port 1).
cnt_snap() {
	awk '{ n = FILENAME; sub(/.*\//, "", n); print n, $0 }' \
		"/sys/class/infiniband/$1/ports/1/hw_counters"/* >"$2"
}

# cnt_changed BEFORE AFTER: "name=delta" of every counter that moved
# between the snapshots, separated by spaces.
cnt_changed() {
	awk 'NR == FNR { b[$1] = $2; next }
	     $2 != b[$1] { printf "%s%s=%d", s, $1, $2 - b[$1]; s = " " }' \
		"$1" "$2"
}

# cnt_delta BEFORE AFTER NAME: how much counter NAME grew between the
# snapshots (empty if there is no such counter).
cnt_delta() {
	awk -v k="$3" 'NR == FNR { if ($1 == k) b = $2; next }
		$1 == k { print $2 - b }' "$1" "$2"
}
