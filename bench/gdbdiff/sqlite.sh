#!/bin/sh
# sqlite.sh: bench/gdbdiff.sh on the SQLite amalgamation (a 260k-line C
# library nobody here wrote) at -O0 and -O2, with the script sqlite.gdb.
#
#	bench/gdbdiff/sqlite.sh DIR   (DIR holds sqlite3.c and sqlite3.h)
set -u
[ $# -eq 1 ] || { echo "usage: $0 DIR (with sqlite3.c and sqlite3.h)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
dir=$(cd "$1" && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/rewind-sqlite.XXXXXX")
trap 'rm -rf "$out"' EXIT
# gdb 13 keeps line numbers below 65536 (it shows line 92845 as 27309):
# the amalgamation is cut, where one of its .c files begins, into parts
# of fewer lines, included in order by one file: the same translation unit.
# The guard around the whole amalgamation (#ifndef SQLITE_AMALGAMATION
# before its first file, #endif at its end) goes around the includes.
endguard=$(grep -n '^#endif /\* SQLITE_AMALGAMATION \*/$' "$dir/sqlite3.c" | tail -1 | cut -d: -f1)
awk -v out="$out" -v endguard="${endguard:-0}" 'BEGIN { part = 0 }
	!begun && /^#ifndef SQLITE_AMALGAMATION$/ { guard = 1; $0 = "" }
	guard && NR == endguard { $0 = "" }
	/^\/\*+ Begin file / { begun = 1 }
	/^\/\*+ Begin file [^ ]*\.c / && n > 50000 { part++; n = 0 }
	{ print > (out "/sqlite3-" part ".c"); n++ }
	END {
		f = out "/sqlite3-all.c"
		if (guard) print "#ifndef SQLITE_AMALGAMATION" > f
		for (i = 0; i <= part; i++) print "#include \"sqlite3-" i ".c\"" > f
		if (guard) print "#endif" > f
	}
' "$dir/sqlite3.c"
cp "$dir/sqlite3.h" "$out/"
status=0
for opt in -O0 -O2; do
	gcc -g $opt -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -I "$out" -o "$out/sqlite$opt" \
		"$out/sqlite3-all.c" "$here/sqlite.c" -lm || exit 2
	echo "== $opt"
	"$here/../gdbdiff.sh" "$here/sqlite.gdb" "$out/sqlite$opt" || status=1
done
exit $status
