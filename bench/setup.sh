# setup.sh, sourced by the bench scripts: $top (the repository), a work
# directory $work removed at exit, named after $bench, and $rewind (REWIND, or
# rewind built into $work).
top=$(cd "$(dirname "$0")/.." && pwd)
export PATH="/usr/local/go/bin:$PATH"
work=$(mktemp -d "${TMPDIR:-/tmp}/rewind-$bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
rewind=${REWIND:-}
if [ -z "$rewind" ]; then
	(cd "$top" && go build -o "$work/rewind" .) || exit 1
	rewind=$work/rewind
fi

# ms: now, in milliseconds.
ms() { date +%s%3N; }

# best CMD...: the best wall time of $runs runs of CMD, in ms.
best() {
	b=0
	k=1
	while [ "$k" -le "$runs" ]; do
		t0=$(ms)
		"$@" >/dev/null 2>&1 </dev/null
		t=$(($(ms) - t0))
		if [ "$b" -eq 0 ] || [ "$t" -lt "$b" ]; then b=$t; fi
		k=$((k + 1))
	done
	echo "$b"
}
