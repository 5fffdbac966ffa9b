// A small main around the SQLite amalgamation for bench/gdbdiff.sh (issue
// 22): a table filled in a transaction through a prepared statement, an
// index, a query that reads doubles back. Build it against the amalgamation
// (bench/gdbdiff/sqlite.sh does):
//
//	gcc -g -O2 -DSQLITE_THREADSAFE=0 -I DIR DIR/sqlite3.c sqlite.c -lm
#include <stdio.h>
#include "sqlite3.h"

static void must(int rc, sqlite3 *db, const char *what) {
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
		fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
		_Exit(1);
	}
}

int main(void) {
	sqlite3 *db;
	sqlite3_stmt *ins, *sel;
	must(sqlite3_open(":memory:", &db), db, "open");
	must(sqlite3_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL)", 0, 0, 0), db, "create");
	must(sqlite3_exec(db, "BEGIN", 0, 0, 0), db, "begin");
	must(sqlite3_prepare_v2(db, "INSERT INTO t(name, score) VALUES(?, ?)", -1, &ins, 0), db, "prepare insert");
	for (int i = 0; i < 200; i++) {
		char name[32];
		snprintf(name, sizeof name, "row-%d", i);
		sqlite3_bind_text(ins, 1, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(ins, 2, i * 1.5);
		must(sqlite3_step(ins), db, "insert");
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	must(sqlite3_exec(db, "COMMIT", 0, 0, 0), db, "commit");
	must(sqlite3_exec(db, "CREATE INDEX t_score ON t(score)", 0, 0, 0), db, "index");
	must(sqlite3_prepare_v2(db, "SELECT name, score FROM t WHERE score > ? ORDER BY score", -1, &sel, 0), db, "prepare select");
	sqlite3_bind_double(sel, 1, 100.0);
	double sum = 0;
	int rows = 0;
	while (sqlite3_step(sel) == SQLITE_ROW) {
		sum += sqlite3_column_double(sel, 1);
		rows++;
	}
	sqlite3_finalize(sel);
	sqlite3_close(db);
	printf("%d rows, sum %.1f\n", rows, sum);
	return 0;
}
