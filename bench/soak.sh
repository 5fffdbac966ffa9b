#!/bin/sh
# soak.sh: records N programs in a row (default: five rounds of the corpus),
# cycling through a mix of the test corpus (threads, signals, pipes,
# sockets, children, spins, Go, every conformance program), real programs
# (make -j2, sort and python3 reading a 40 MB file, shells, strace -f, gdb
# running a threaded program) and replays
# each with `rewind replay --check`. It
# reports every failure (with the command and the last stderr line) and the
# slowest record and replay, and exits 1 if anything failed.
#
#	bench/soak.sh [N]          (REWIND=path/to/rewind to test another build)
#
# Goal: 0 failures. Run it on a quiet machine and on a loaded one.
set -u
n=${1:-0}
bench=soak
. "$(dirname "$0")/setup.sh"

# The corpus: one command per line, run from $work.
for c in threads alarm tcp popen spin children nondet counter exit3 sigint; do
	gcc -g -O0 -pthread -o "$work/$c" "$top/testdata/$c.c" || exit 1
done
# Every conformance program (one per kernel behaviour: signals, process
# trees, namespaces, job control, seccomp, large reads...), built with its
# own flags and run with its own arguments (see e2e/conformance_test.go).
conf=""
for src in "$top"/testdata/conformance/*.c "$top"/testdata/conformance/*.cpp; do
	[ -f "$src" ] || continue
	name=$(basename "${src%.*}")
	flags=$(sed -n 's|^// flags: ||p' "$src")
	args=$(sed -n 's|^// args: ||p' "$src")
	cc=gcc
	[ "${src##*.}" = cpp ] && cc=g++
	# shellcheck disable=SC2086
	$cc -g -o "$work/conf-$name" "$src" $flags 2>/dev/null || { echo "soak: cannot build $src"; exit 1; }
	conf="$conf./conf-$name $args
"
done
# A small C project for make -j2, and a 40 MB text file read whole.
mkdir -p "$work/proj"
for i in 1 2 3 4 5 6; do echo "int f$i(void) { return $i; }" >"$work/proj/f$i.c"; done
echo 'int main(void) { return 0; }' >"$work/proj/main.c"
printf 'prog: f1.o f2.o f3.o f4.o f5.o f6.o main.o\n\tgcc -o $@ $^\n%%.o: %%.c\n\tgcc -c -o $@ $<\n' >"$work/proj/Makefile"
seq 2500000 | awk '{ printf "%08x %d\n", ($1 * 2654435761) % 4294967296, $1 }' >"$work/big.txt"
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
make -s -B -j2 -C proj
sort -o sorted big.txt
python3 -c 'import hashlib; print(hashlib.sha256(open("big.txt", "rb").read()).hexdigest())'
EOF
# Programs that trace others (the program's own ptrace, emulated), when
# installed: strace following a pipeline, gdb running a threaded program.
if command -v strace >/dev/null; then
	echo "strace -f -o strace.log sh -c 'seq 100 | sort -r | head -2'" >>"$work/corpus"
fi
if command -v gdb >/dev/null; then
	echo "gdb -batch -nx -ex 'break worker' -ex run -ex bt -ex continue ./threads" >>"$work/corpus"
fi
printf '%s' "$conf" >>"$work/corpus"
lines=$(wc -l <"$work/corpus")
[ "$n" -gt 0 ] || n=$((5 * lines))

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
		# In a session of its own: programs that signal their whole
		# process group (kill(0, …), killpg) must not reach this script.
		(cd "$work" && eval "setsid -w \"$rewind\" record -o \"$trace\" $cmd" >"$work/out" 2>"$work/err" </dev/null)
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
