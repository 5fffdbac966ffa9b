#!/bin/sh
# hunt.sh: how many chaos recordings a hunt takes to find a failure (issue
# 25's first measure: the lost update of two threads doing 1M unlocked
# increments, within 20 runs), H hunts each (default 10), at most 150 runs a
# hunt: testdata/race.c (a lost update) and testdata/starve.c (a worker
# starved while a spinner holds the CPU). Prints each hunt's run count
# ("-" when none failed) and the median.
#
#	bench/hunt.sh [H]      (REWIND=path/to/rewind to test another build)
set -u
runs=1
hunts=${1:-10}
bench=hunt
. "$(dirname "$0")/setup.sh"

gcc -O0 -pthread -o "$work/race" "$top/testdata/race.c" || exit 1
gcc -O1 -pthread -o "$work/starve" "$top/testdata/starve.c" || exit 1
for p in "race --fail-on lost.[1-9] -- $work/race 1000000" "starve -- $work/starve"; do
	# shellcheck disable=SC2086
	set -- $p
	name=$1
	shift
	counts=""
	k=1
	while [ "$k" -le "$hunts" ]; do
		n=$(cd "$work" && "$rewind" record --until-fail=150 --chaos -j 2 -o "$work/h.rwd" "$@" 2>&1 |
			sed -n 's/^rewind: \([0-9]*\) runs, \([0-9]*\) failed.*/\1 \2/p')
		rm -f "$work"/h*.rwd "$work"/*-pass-*.rwd "$work"/*-fail-*.rwd
		case "$n" in
		*" 0" | "") counts="$counts -" ;;
		*) counts="$counts ${n% *}" ;;
		esac
		k=$((k + 1))
	done
	med=$(printf '%s\n' $counts | grep -v -- - | sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}')
	printf '%-7s runs to the failure:%s (median %s)\n' "$name" "$counts" "$med"
done
