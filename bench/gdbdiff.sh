#!/bin/bash
# gdbdiff.sh: the gdb comparison harness (issue 22). It runs one command
# script under gdb on a live run of PROG and under rewind on a recording of
# the same binary, arguments and environment, and diffs the answers command
# by command, after taking out what legitimately differs: value numbers
# ($N), directories, rewind's [#event, thread] tags, the address of a
# breakpoint gdb sets before the run (not yet relocated); other addresses
# are kept (a recording replays the live run's layout: no ASLR in either).
#
#	bench/gdbdiff.sh SCRIPT PROG [ARGS...]
#
# SCRIPT has one gdb command a line; `run` is where gdb starts the program
# (rewind, which opens at main, continues there instead). It prints each
# command whose answers differ, both answers, and a count; the exit status
# is 1 when any differs. REWIND=path tests another build.
set -u
[ $# -ge 2 ] || { echo "usage: $0 SCRIPT PROG [ARGS...]" >&2; exit 2; }
script=$1
shift
# gdb runs PROG by its absolute path: so does the recording, or argv[0]'s
# length moves the stack and every stack address differs.
prog=$1
case $prog in
*/*) prog=$(realpath "$prog") ;;
*) prog=$(command -v "$prog") ;;
esac
shift
set -- "$prog" "$@"
bench=gdbdiff
. "$(dirname "$0")/setup.sh"

"$rewind" record -o "$work/t.rwd" "$@" >"$work/record.out" 2>&1 || true
grep -q '^rewind: recorded' "$work/record.out" || { cat "$work/record.out" >&2; exit 2; }

# Each command after a marker naming it, in both; given with -ex, as gdb
# goes on after an error there (a sourced file stops).
gex=()
rex=()
i=0
while IFS= read -r line || [ -n "$line" ]; do
	[ -z "$line" ] && continue
	i=$((i + 1))
	gex+=(-ex "echo <<<$i $line\\n" -ex "$line")
	case $line in
	run | r) line=continue ;;
	esac
	rex+=(-ex "echo <<<$i $line\\n" -ex "$line")
done <"$script"
gex+=(-ex 'echo <<<end\n' -ex kill)
rex+=(-ex 'echo <<<end\n')

gdb -nx -batch -ex 'set pagination off' -ex 'set width 0' -ex 'set startup-with-shell off' \
	-ex 'unset environment LINES' -ex 'unset environment COLUMNS' "${gex[@]}" --args "$@" \
	>"$work/gdb.out" 2>&1 </dev/null
"$rewind" replay --batch "${rex[@]}" "$work/t.rwd" >"$work/rewind.out" 2>/dev/null </dev/null

# normalize FILE: one block a command, "<<<N CMD" first; what may differ
# taken out.
normalize() {
	sed -E \
		-e '/^\(rewind\) /d' \
		-e '/^\[(Thread debugging|Inferior [0-9]+ \(process|New Thread|Thread 0x[0-9a-f]+ \(LWP [0-9]+\) exited)/d' \
		-e '/^Using host libthread_db/d' \
		-e '/^(Run till exit from |Run back to call of |Will ignore next |Not stopped at any breakpoint|\(More stack frames follow\.\.\.\))/d' \
		-e '/^$/d' \
		-e 's/^((Temporary b|B)reakpoint [0-9]+ at )0x[0-9a-f]+: file ([^,]*\/)?/\1ADDR: file /' \
		-e 's/^((Temporary b|B)reakpoint [0-9]+ at )0x[0-9a-f]+: (.*\([0-9]+ locations\))$/\1ADDR: \3/' \
		-e 's/^\$[0-9]+ = //' \
		-e 's/ \[#[0-9]+, thread [0-9]+\]//' \
		-e 's# at [^ ]*/([^/ :]+:[0-9]+)# at \1#g' \
		-e 's#"[^" ]*/([^/" ]+)"#"\1"#g' \
		-e 's/[[:space:]]+$//' "$1" | awk '/^<<<end$/ { exit } /^<<</ { started = 1 } started'
}
normalize "$work/gdb.out" >"$work/gdb.n"
normalize "$work/rewind.out" >"$work/rewind.n"

# Blocks by the script's numbering: print those that differ.
bad=0
total=0
for n in $(grep -o '^<<<[0-9]*' "$work/gdb.n" | tr -d '<'); do
	total=$((total + 1))
	g=$(awk -v n="$n" '/^<<</ { on = ($0 ~ "^<<<" n " ") ; if (on) print; next } on' "$work/gdb.n")
	r=$(awk -v n="$n" '/^<<</ { on = ($0 ~ "^<<<" n " ") ; if (on) next } on' "$work/rewind.n")
	gb=$(printf '%s\n' "$g" | sed 1d)
	if [ "$gb" != "$r" ]; then
		bad=$((bad + 1))
		printf '%s\n--- gdb\n%s\n--- rewind\n%s\n\n' "$(printf '%s\n' "$g" | head -1 | sed 's/^<<<[0-9]* /== /')" "$gb" "$r"
	fi
done
echo "$bad of $total commands answer differently"
[ "$bad" -eq 0 ]
