#!/bin/sh
# chaosreplay.sh: how many --chaos recordings of threaded programs fail to
# replay (issue 25: chaos "all still replayable"). Each program is recorded
# N times with --chaos (default 10) and each recording replayed with
# --check: gdb's own threaded session (its workers index DWARF in
# parallel), testdata/deepframe.c and sortloop.c (passes that only the
# stack far up tells apart), sort --parallel=2, and, where installed,
# xz -T2, zstd -T2 and python threads. Prints the failures of each and
# keeps no trace.
#
#	bench/chaosreplay.sh [N]      (REWIND=path/to/rewind to test another build)
set -u
runs=1
n=${1:-10}
bench=chaosreplay
. "$(dirname "$0")/setup.sh"

gcc -g -O0 -o "$work/inferior" "$top/testdata/gdbinferior.c" || exit 1
gcc -g -O0 -pthread -o "$work/deepframe" "$top/testdata/deepframe.c" || exit 1
gcc -O2 -pthread -o "$work/sortloop" "$top/testdata/sortloop.c" || exit 1
seq 1 300000 | awk '{ printf "%08d\n", ($1 * 7919) % 1000003 }' >"$work/lines.txt"
head -c 3000000 /dev/urandom | od -An -tx1 >"$work/data.txt"
cat >"$work/threads.py" <<'EOF'
import hashlib, threading
out = []
def work(k):
    h = hashlib.sha256()
    for i in range(20000):
        h.update(str(i * k).encode())
    out.append(h.hexdigest()[:8])
ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
print(sorted(out))
EOF

# try NAME CMD...: records CMD n times with --chaos, replays each.
try() {
	name=$1
	shift
	fails=0
	k=1
	while [ "$k" -le "$n" ]; do
		(cd "$work" && "$rewind" record --chaos -o "$work/c.rwd" -- "$@") >/dev/null 2>&1 </dev/null
		if ! "$rewind" replay --check "$work/c.rwd" >"$work/out" 2>&1; then
			fails=$((fails + 1))
			echo "  $name, recording $k: $(tail -1 "$work/out" | cut -c1-200)"
		fi
		rm -f "$work/c.rwd"
		k=$((k + 1))
	done
	printf '%-12s %d of %d recordings failed to replay\n' "$name" "$fails" "$n"
}

if command -v gdb >/dev/null; then
	try gdb gdb -nx -batch -ex 'catch syscall write' -ex run -ex continue -ex delete -ex continue "$work/inferior"
fi
try deepframe "$work/deepframe"
try sortloop "$work/sortloop" 200000
try sort sort --parallel=2 -S 4M "$work/lines.txt" -o "$work/sorted.txt"
if command -v xz >/dev/null; then try xz xz -T2 -3 -c "$work/data.txt"; fi
if command -v zstd >/dev/null; then try zstd zstd -T2 -3 -c "$work/data.txt"; fi
if command -v python3 >/dev/null; then try python python3 "$work/threads.py"; fi
