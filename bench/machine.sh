#!/bin/sh
# machine.sh: issue 23's measures and issue 24's state on another machine
# (a device machine: no Go, no compiler assumed, no network), in two steps.
#
#	bench/machine.sh prepare DIR [BASE]   here: DIR gets a static rewind (and
#	                                      one built at commit BASE, to compare),
#	                                      static test programs, recordings made
#	                                      here, this script and setup.sh
#	DIR/machine.sh run                    there: the report on stdout
#
# The report: the machine; native, record and `replay --check` times (best
# of 3, ms) of the benchmark programs and of the system's own tools; BASE
# against this build, alternating; the recordings made here replayed there;
# a debugging session (break, continue, reverse-stepi) on one of them and on
# one made there. Times are wall-clock on a machine shared with whatever
# else runs: compare ratios taken in one run.
set -u
case ${1:-} in
prepare)
	dir=${2:?usage: machine.sh prepare DIR [BASE]}
	base=${3:-}
	top=$(cd "$(dirname "$0")/.." && pwd)
	mkdir -p "$dir/traces" || exit 1
	dir=$(cd "$dir" && pwd)
	(cd "$top" && CGO_ENABLED=0 go build -o "$dir/rewind" .) || exit 1
	if [ -n "$base" ]; then
		wt=$(mktemp -d)
		(cd "$top" && git worktree add -q "$wt/src" "$base" && cd "$wt/src" && CGO_ENABLED=0 go build -o "$dir/rewind0" .) || exit 1
		(cd "$top" && git worktree remove --force "$wt/src")
		rm -rf "$wt"
	fi
	for p in pingpong forks syscalls cpuloop; do
		gcc -O2 -static -o "$dir/$p" "$top/testdata/bench/$p.c" || exit 1
	done
	gcc -g -O0 -static -o "$dir/demo" "$top/testdata/overflow.c" || exit 1
	gcc -g -O0 -o "$dir/demo-dyn" "$top/testdata/overflow.c" || exit 1
	cp "$0" "$dir/machine.sh"
	cp "$top/bench/setup.sh" "$dir/setup.sh"
	rw=$dir/rewind
	"$rw" record -o "$dir/traces/static-demo.rwd" -- "$dir/demo" >/dev/null 2>&1
	"$rw" record -o "$dir/traces/static-pingpong.rwd" -- "$dir/pingpong" 500 >/dev/null 2>&1
	"$rw" record -o "$dir/traces/dyn-demo.rwd" -- "$dir/demo-dyn" >/dev/null 2>&1
	"$rw" record -o "$dir/traces/ls.rwd" -- ls /usr >/dev/null 2>&1
	"$rw" record -o "$dir/traces/sh-pipe.rwd" -- sh -c 'ls /usr | wc -l' >/dev/null 2>&1
	# Issue 24: a program whose files the other machine lacks, a script,
	# python through whatever shim runs it here, with its sources packed.
	gcc -O1 -o "$dir/cpuid-dyn" "$top/testdata/cpuid.c" || exit 1
	"$rw" record -o "$dir/traces/cpuid-dyn.rwd" -- "$dir/cpuid-dyn" >/dev/null 2>&1
	printf '#!/bin/sh\necho script "$@"\nexec ls /usr\n' >"$dir/script.sh" && chmod +x "$dir/script.sh"
	"$rw" record -o "$dir/traces/script.rwd" -- "$dir/script.sh" a b >/dev/null 2>&1
	command -v python3 >/dev/null && "$rw" record -o "$dir/traces/python.rwd" -- python3 -c 'import json, decimal' >/dev/null 2>&1
	"$rw" record --with-sources -o "$dir/traces/dyn-demo-src.rwd" -- "$dir/demo-dyn" >/dev/null 2>&1
	rm -f "$dir/demo-dyn" "$dir/cpuid-dyn" "$dir/script.sh" # not on the other machine either
	du -sh "$dir"
	exit 0
	;;
run) ;;
*)
	echo "usage: machine.sh prepare DIR [BASE] | run" >&2
	exit 2
	;;
esac

D=$(cd "$(dirname "$0")" && pwd)
REWIND=$D/rewind runs=3 bench=machine
. "$D/setup.sh" # ms, best (of $runs), $work
RW=$rewind W=$work
echo "== machine"
uname -a
echo "cpus $(nproc); $(grep -m1 'model name' /proc/cpuinfo); $(grep -m1 -o cpuid_fault /proc/cpuinfo || echo 'no cpuid_fault')"
ldd --version 2>&1 | head -1
for t in find sort python3 git make gcc sh; do printf '%s: %s\n' $t "$(command -v $t)"; done

row() {
	measure "$@"
	name=$1
	chk=$("$RW" replay --check "$W/$name.rwd" 2>&1 >/dev/null | tail -1)
	printf '%-12s %7d %7d %7d %6s %6s  %s\n' "$name" "$nat" "$rec" "$rep" "$(ratio $rec $nat)" "$(ratio $rep $nat)" "$chk"
}
ab() {
	name=$1
	shift
	"$D/rewind0" record -o "$W/$name.0.rwd" -- "$@" >/dev/null 2>&1 </dev/null
	"$RW" record -o "$W/$name.1.rwd" -- "$@" >/dev/null 2>&1 </dev/null
	n=999999 r0=999999 r1=999999 p0=999999 p1=999999
	for k in 1 2 3; do
		t0=$(ms); "$@" >/dev/null 2>&1 </dev/null; t=$(($(ms) - t0)); [ $t -lt $n ] && n=$t
		t0=$(ms); "$D/rewind0" record -o "$W/x.rwd" -- "$@" >/dev/null 2>&1 </dev/null; t=$(($(ms) - t0)); [ $t -lt $r0 ] && r0=$t
		t0=$(ms); "$RW" record -o "$W/x.rwd" -- "$@" >/dev/null 2>&1 </dev/null; t=$(($(ms) - t0)); [ $t -lt $r1 ] && r1=$t
		t0=$(ms); "$D/rewind0" replay --check "$W/$name.0.rwd" >/dev/null 2>&1; t=$(($(ms) - t0)); [ $t -lt $p0 ] && p0=$t
		t0=$(ms); "$RW" replay --check "$W/$name.1.rwd" >/dev/null 2>&1; t=$(($(ms) - t0)); [ $t -lt $p1 ] && p1=$t
	done
	printf '%-12s %7d  %7d %7d  %7d %7d\n' "$name" $n $r0 $r1 $p0 $p1
}

makeproj "$W/proj"
seq 1 400000 | awk '{ printf "%08d %s\n", (($1 * 7919) % 1000003), $1 }' >"$W/lines.txt"
shell='i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); echo $i >/dev/null; done; for j in 1 2 3 4 5 6 7 8 9 10; do true | cat; done'
python='import json, decimal, email, http.client, asyncio'

echo "== ms, best of 3: native, record, replay --check, record×, replay×"
row pingpong "$D/pingpong" 5000
row forks "$D/forks" 200
row getppid "$D/syscalls" 20000
row close "$D/syscalls" 100000 close
row cpuloop "$D/cpuloop" 100000000
row true /bin/true
[ -d /usr/include ] && row find find /usr/include -name '*.h'
row sort sort "$W/lines.txt" -o "$W/sorted.txt"
command -v python3 >/dev/null && row python python3 -c "$python"
command -v make >/dev/null && command -v gcc >/dev/null && row make make -s -B -C "$W/proj" -j2
row shell-loop sh -c "$shell"

if [ -x "$D/rewind0" ]; then
	echo "== the base build against this one, alternating, min of 3 (ms): native, record base/now, replay base/now"
	ab pingpong "$D/pingpong" 5000
	ab forks "$D/forks" 200
	ab close "$D/syscalls" 100000 close
	[ -d /usr/include ] && ab find find /usr/include -name '*.h'
	command -v python3 >/dev/null && ab python python3 -c "$python"
	command -v make >/dev/null && command -v gcc >/dev/null && ab make make -s -B -C "$W/proj" -j2
	ab shell-loop sh -c "$shell"
fi

echo "== recordings made on the preparing machine, replayed here"
for f in "$D"/traces/*.rwd; do
	timeout 60 "$RW" replay --check "$f" >/dev/null 2>"$W/err"
	echo "$(basename "$f"): exit $? $(tail -2 "$W/err" | tr '\n' ' ')"
done

echo "== the preparing machine's recording of a dynamic program, debugged here (its loader, libc, program and sources from the recording)"
timeout 60 "$RW" info "$D/traces/dyn-demo-src.rwd" | grep -E 'portable|packed'
timeout 120 "$RW" replay --batch -ex 'break set_name' -ex continue -ex 'bt' -ex 'finish' -ex 'watch -l r.score' \
	-ex 'reverse-continue' -ex 'info source' -ex 'info sharedlibrary' "$D/traces/dyn-demo-src.rwd" 2>&1 | tail -24
if [ -n "${OUT:-}" ]; then
	echo "== recordings made here, for the preparing machine to replay (\$OUT)"
	"$RW" record -o "$OUT/here-static-demo.rwd" -- "$D/demo" >/dev/null 2>&1
	"$RW" record -o "$OUT/here-ls.rwd" -- ls /usr >/dev/null 2>&1
	"$RW" record -o "$OUT/here-sh-pipe.rwd" -- sh -c 'ls /usr | wc -l' >/dev/null 2>&1
	command -v python3 >/dev/null && "$RW" record -o "$OUT/here-python.rwd" -- python3 -c 'import json, decimal' >/dev/null 2>&1
	ls -la "$OUT"
fi

echo "== debugging the preparing machine's recording of a static program, then one made here"
"$RW" record -o "$W/demo.rwd" -- "$D/demo" >/dev/null 2>&1
for f in "$D/traces/static-demo.rwd" "$W/demo.rwd"; do
	timeout 60 "$RW" replay --batch -ex 'break set_name' -ex continue -ex 'bt 2' -ex continue \
		-ex reverse-stepi -ex 'print $pc' "$f" 2>&1 | tail -8
done
