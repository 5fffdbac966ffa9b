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

# measure NAME CMD...: nat, rec and rep, the best times of CMD run
# natively, recorded into $work/NAME.rwd, and that trace replayed with
# --check (nat at least 1).
measure() {
	name=$1
	shift
	nat=$(best "$@")
	rec=$(best "$rewind" record -o "$work/$name.rwd" -- "$@")
	rep=$(best "$rewind" replay --check "$work/$name.rwd")
	[ "$nat" -gt 0 ] || nat=1
}

# ratio A B: A/B with two decimals.
ratio() { awk "BEGIN { printf \"%.2f\", $1 / ($2 > 0 ? $2 : 1) }"; }

# makeproj DIR: a small C project in DIR, twelve files and main, for make.
makeproj() {
	mkdir -p "$1"
	objs=
	i=1
	while [ "$i" -le 12 ]; do
		printf 'int f%d(int x) { return x * %d + %d; }\n' "$i" "$i" "$i" >"$1/f$i.c"
		objs="$objs f$i.o"
		i=$((i + 1))
	done
	printf 'int main(void) { return 0; }\n' >"$1/main.c"
	printf 'prog: main.o%s\n\tgcc -o $@ $^\n%%.o: %%.c\n\tgcc -O1 -c -o $@ $<\n' "$objs" >"$1/Makefile"
}
