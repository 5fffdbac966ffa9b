#!/bin/sh
# soak.sh: records N programs in a row (default 200), cycling through a mix
# of the test corpus (threads, signals, pipes, sockets, children, spins, Go)
# and system programs, and replays each with `rewind replay --check`. It
# reports every failure (with the command and the last stderr line) and the
# slowest record and replay, and exits 1 if anything failed.
#
#	bench/soak.sh [N]          (REWIND=path/to/rewind to test another build)
#
# Goal: 0 failures. Run it on a quiet machine and on a loaded one.
set -u
n=${1:-200}
top=$(cd "$(dirname "$0")/.." && pwd)
export PATH="/usr/local/go/bin:$PATH"
work=$(mktemp -d "${TMPDIR:-/tmp}/rewind-soak.XXXXXX")
trap 'rm -rf "$work"' EXIT
rewind=${REWIND:-}
if [ -z "$rewind" ]; then
	(cd "$top" && go build -o "$work/rewind" .) || exit 1
	rewind=$work/rewind
fi

# The corpus: one command per line, run from $work.
for c in threads alarm tcp popen spin children nondet counter exit3 sigint; do
	gcc -g -O0 -pthread -o "$work/$c" "$top/testdata/$c.c" || exit 1
done
g++ -g -O0 -o "$work/cxx" "$top/testdata/cxx.cpp" || exit 1
(cd "$top/testdata/go" && go build -o "$work/goroutines" ./goroutines) || exit 1
cat >"$work/corpus" <<EOF
./threads
./alarm
./tcp
./popen
./spin
./children
./nondet
./counter
./exit3
interrupt ./sigint
./cxx /dev/urandom
./goroutines
sh -c 'ls / | wc -l'
sh -c 'seq 1000 | sort -r | head -3'
python3 -c 'import sys, json; print(json.dumps({"n": sum(range(1000))}))'
stdin seq 100 -- python3 -c 'import sys; print(sum(int(l) for l in sys.stdin))'
gzip -c /etc/services
find /etc -maxdepth 1 -name '*.conf'
EOF
lines=$(wc -l <"$work/corpus")

fail=0
slow_rec=0 slow_rec_cmd="" slow_rep=0 slow_rep_cmd=""
ms() { date +%s%3N; }
i=1
while [ "$i" -le "$n" ]; do
	line=$(( (i - 1) % lines + 1 ))
	cmd=$(sed -n "${line}p" "$work/corpus")
	trace="$work/t$i.rwd"
	case "$cmd" in
	"interrupt "*)
		# Recorded in the background, its Ctrl-C handled, then the
		# recording stopped by a second one.
		t0=$(ms)
		# Signals are sent once the program runs: before, rewind has
		# not taken SIGINT over yet, and a background job ignores it.
		(cd "$work" && { "$rewind" record -o "$trace" ${cmd#interrupt } </dev/null >"$work/out" 2>"$work/err" & p=$!
			until grep -q ready "$work/out" 2>/dev/null; do sleep 0.05; done
			kill -INT $p
			until grep -q handler "$work/out" 2>/dev/null; do sleep 0.05; done
			kill -INT $p; wait $p; })
		;;
	"stdin "*)
		# The program reads a pipe from a producer that is not recorded.
		spec=${cmd#stdin }
		t0=$(ms)
		(cd "$work" && eval "${spec%% -- *} | \"$rewind\" record -o \"$trace\" ${spec#* -- }" >"$work/out" 2>"$work/err")
		;;
	*)
		t0=$(ms)
		(cd "$work" && eval "\"$rewind\" record -o \"$trace\" $cmd" >"$work/out" 2>"$work/err" </dev/null)
		;;
	esac
	t1=$(ms)
	if [ ! -f "$trace" ]; then
		echo "FAIL #$i record: $cmd: $(tail -n 1 "$work/err")"
		fail=$((fail + 1))
	else
		"$rewind" replay --check "$trace" >/dev/null 2>"$work/rerr"
		code=$?
		t2=$(ms)
		if [ $code -ne 0 ]; then
			echo "FAIL #$i replay: $cmd: $(tail -n 1 "$work/rerr")"
			fail=$((fail + 1))
			keep=${TMPDIR:-/tmp}/rewind-soak-failures
			mkdir -p "$keep" && cp "$trace" "$keep/t$i.rwd" && echo "  trace kept in $keep/t$i.rwd"
		fi
		[ $((t1 - t0)) -gt "$slow_rec" ] && slow_rec=$((t1 - t0)) slow_rec_cmd=$cmd
		[ $((t2 - t1)) -gt "$slow_rep" ] && slow_rep=$((t2 - t1)) slow_rep_cmd=$cmd
		rm -f "$trace"
	fi
	i=$((i + 1))
done
echo "soak: $n recordings, $fail failures; slowest record ${slow_rec} ms ($slow_rec_cmd), slowest replay ${slow_rep} ms ($slow_rep_cmd)"
[ "$fail" -eq 0 ]
