#!/bin/sh
# families.sh: for the programs that once made recordings that never ended
# or failed (issue 21: threads that exec, sparse shared memory, job control
# storms, ptrace, seccomp, big reads, make -j2...), the wall time of a native
# run, of `rewind record` and of `rewind replay --check`, and the ratios to
# native, best of R runs (default 3).
#
#	bench/families.sh [R]      (REWIND=path/to/rewind to test another build)
#
# Times are wall-clock milliseconds on this machine, whatever else runs:
# compare ratios taken in one run.
set -u
runs=${1:-3}
bench=families
. "$(dirname "$0")/setup.sh"

printf '%-22s %9s %9s %9s %8s %8s\n' program native_ms record_ms replay_ms record× replay×
for name in exec_thread shared_sparse mmap_sparse_file jobctl_storm jobctl_threads ptrace_traceme asan_leakcheck seccomp_verdicts signal_tempmask bigread; do
	src="$top/testdata/conformance/$name.c"
	[ -f "$src" ] || continue
	flags=$(sed -n 's|^// flags: ||p' "$src")
	# shellcheck disable=SC2086
	gcc -g -o "$work/$name" "$src" $flags 2>/dev/null || { echo "$name: cannot build"; continue; }
	nat=$(best "$work/$name")
	rec=$(best "$rewind" record -o "$work/$name.rwd" "$work/$name")
	rep=$(best "$rewind" replay --check "$work/$name.rwd")
	[ "$nat" -gt 0 ] || nat=1
	printf '%-22s %9d %9d %9d %8s %8s\n' "$name" "$nat" "$rec" "$rep" \
		"$(awk "BEGIN { printf \"%.1f\", $rec / $nat }")" "$(awk "BEGIN { printf \"%.1f\", $rep / $nat }")"
done
