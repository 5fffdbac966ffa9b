#!/bin/sh
# reverse.sh: the cost of source-level reverse motions inside one long event
# segment (issue 22, item 4): testdata/source/calls.c built with
# -DCALLS=3000 calls work() 3000 times without a system call; from a
# breakpoint in its 2001st call, each motion's time is the batch's wall time
# minus that of reaching the breakpoint, best of R runs (default 3), at -O0
# and -O2.
#
#	bench/reverse.sh [R]      (REWIND=path/to/rewind to test another build)
set -u
runs=${1:-3}
bench=reverse
. "$(dirname "$0")/setup.sh"

# batch CMD...: the best wall time of a batch of debugger commands on the
# recording, in ms.
batch() {
	for c in "$@"; do printf '%s\n' "$c"; done >"$work/cmds"
	best "$rewind" replay --batch -x "$work/cmds" "$work/longseg.rwd"
}

printf '%-6s %-34s %8s\n' opt motion ms
for opt in -O0 -O2; do
	gcc -g $opt -DCALLS=3000 -o "$work/longseg" "$top/testdata/source/calls.c" || exit 1
	"$rewind" record -o "$work/longseg.rwd" "$work/longseg" >/dev/null 2>&1 || exit 1
	base=$(batch "break work" "ignore 1 2000" "continue" "delete")
	printf '%-6s %-34s %8s\n' "$opt" "(reach the breakpoint)" "$base"
	for m in "reverse-step" "reverse-next" "reverse-finish" "reverse-stepi" "next|reverse-next" "next|next|next|reverse-next" "next|next|reverse-step"; do
		# shellcheck disable=SC2046
		t=$(IFS='|'; batch "break work" "ignore 1 2000" "continue" "delete" $m)
		printf '%-6s %-34s %8s\n' "$opt" "$m" "$((t - base))"
	done
done
