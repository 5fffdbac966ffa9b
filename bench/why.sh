#!/bin/sh
# why.sh: the time rewind why takes to name the corrupting write (issue 25's
# measure: under 5 s each), best of R runs (default 3): the demo's bug, an
# overflow, a C++ off-by-one, a use after free, and a lost update between
# two threads (the yields version of testdata/why/assert.c). Each line also
# says what why found.
#
#	bench/why.sh [R]      (REWIND=path/to/rewind to test another build)
set -u
runs=${1:-3}
bench=why
. "$(dirname "$0")/setup.sh"

printf '%-14s %6s  %s\n' program ms found
for p in "demo gcc source/corrupt.c" "overflow gcc overflow.c" "offbyone g++ why/offbyone.cpp" \
	"uaf gcc why/uaf.c" "race gcc why/assert.c 200 yield"; do
	# shellcheck disable=SC2086
	set -- $p
	name=$1 cc=$2 src=$3
	shift 3
	$cc -g -O0 -pthread -o "$work/$name" "$top/testdata/$src" || exit 1
	"$rewind" record -o "$work/$name.rwd" -- "$work/$name" "$@" >/dev/null 2>&1
	t=$(best "$rewind" why "$work/$name.rwd")
	found=$("$rewind" why "$work/$name.rwd" 2>&1 | sed -n 's/.*SUSPICIOUS: //p' | head -1 | cut -c1-60)
	printf '%-14s %6s  %s\n' "$name" "$t" "${found:-nothing suspicious}"
done
