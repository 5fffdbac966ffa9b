#!/bin/sh
# programs.sh: the syscall-heavy programs of issue 23's measures, run as a
# user would (find, python imports, sort, git log, sqlite inserts, a shell
# loop, make of a small project): the wall time of a native run, of
# `rewind record` and of `rewind replay --check`, the ratios to native (best
# of R runs, default 3), and the median ratios.
#
#	bench/programs.sh [R]      (REWIND=path/to/rewind to test another build)
#
# Times are wall-clock milliseconds on this machine, whatever else runs:
# compare ratios taken in one run.
set -u
runs=${1:-3}
bench=programs
. "$(dirname "$0")/setup.sh"

# The inputs, made once.
python=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
seq 1 400000 | awk '{ srand($1); printf "%08d %s\n", (($1 * 7919) % 1000003), $1 }' >"$work/lines.txt"
{
	echo 'CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);'
	i=1
	while [ "$i" -le 300 ]; do
		echo "INSERT INTO t(v) VALUES ('row $i');"
		i=$((i + 1))
	done
	echo 'SELECT count(*) FROM t;'
} >"$work/inserts.sql"
makeproj "$work/proj"

# run NAME CMD...: one row of the table.
rows=$work/rows
run() {
	name=$1
	shift
	measure "$name" "$@"
	printf '%-14s %9d %9d %9d %8s %8s\n' "$name" "$nat" "$rec" "$rep" "$(ratio $rec $nat)" "$(ratio $rep $nat)" | tee -a "$rows"
}

printf '%-14s %9s %9s %9s %8s %8s\n' program native_ms record_ms replay_ms record× replay×
run find find /usr/include -name '*.h'
if [ -n "$python" ]; then
	run python-import "$python" -c 'import json, decimal, email, http.client, asyncio'
fi
run sort sort "$work/lines.txt" -o "$work/sorted.txt"
run git-log git -C "$top" --no-pager log --stat -n 300
rm -f "$work/db"
run sqlite sh -c "rm -f '$work/db'; sqlite3 '$work/db' <'$work/inserts.sql'"
run shell-loop sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); echo $i >/dev/null; done; for j in 1 2 3 4 5 6 7 8 9 10; do true | cat; done'
run make make -s -B -C "$work/proj" -j2
# median COLUMN: the median of a column of the rows.
median() {
	sort -n -k "$1" "$rows" | awk -v c="$1" '{ v[NR] = $c } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf '%-14s %9s %9s %9s %8s %8s\n' median '' '' '' "$(median 5)" "$(median 6)"
