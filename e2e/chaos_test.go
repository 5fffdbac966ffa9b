package e2e

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// raceN is how many times each thread of race.c increments the counter:
// about 40ms of compute per thread at -O0 on this machine, so that a chaos
// recording preempts each thread several times while the other still runs.
const raceN = 20000000

var raceRE = regexp.MustCompile(`(?m)^total (\d+) lost (\d+)$`)

// TestChaosRace records testdata/race.c (two threads, raceN unlocked
// increments of one counter each) with --chaos until a recording shows a
// lost update, ten recordings at most, and replays every recording with
// --check. Serialized threads with the default 10ms slices rarely lose one:
// a thread is preempted only after its slice, at the point the recorder
// picks, which is mostly the loop's first instruction.
//
// Why it does not fail by chance: chaos slices are log-uniform between
// 50µs and 20ms (median 1ms), so each thread is preempted at least about
// five times in its 40ms of work while the other one runs. A preemption
// steps 0-15 instructions (at random) and then stops at the next patchable
// instruction of the 7-instruction loop; 2 of the 5 places it can stop are
// between counter++'s load and its store (the add, and the store itself),
// and the other thread then runs a whole slice of increments that the store
// overwrites. With p ≥ 2/7 per preemption, a recording keeps every update
// with probability ≤ (5/7)^5 ≈ 0.19, and ten in a row ≤ 0.19^10 ≈ 6e-8.
// (In 20 recordings while this was written, every one lost updates.)
func TestChaosRace(t *testing.T) {
	t.Parallel()
	bin := rewind(t)
	prog := buildC(t, "race.c")
	const runs = 10
	lossy := 0
	for i := 0; i < runs && lossy == 0; i++ {
		trace := filepath.Join(t.TempDir(), "race.rwd")
		r := run(t, runOpts{}, bin, "record", "--chaos", "-o", trace, "--", prog, strconv.Itoa(raceN))
		if r.Code != 0 {
			t.Fatalf("record --chaos exited %d\nstdout:\n%s\nstderr:\n%s", r.Code, tail(r.Stdout), tail(r.Stderr))
		}
		m := raceRE.FindSubmatch(r.Stdout)
		if m == nil {
			t.Fatalf("race printed %q, want `total N lost M`", r.Stdout)
		}
		total, _ := strconv.Atoi(string(m[1]))
		lost, _ := strconv.Atoi(string(m[2]))
		if total+lost != 2*raceN || lost < 0 {
			t.Fatalf("race printed %q: total and lost do not add up to %d", m[0], 2*raceN)
		}
		if lost > 0 {
			lossy++
		}
		events, progStderr := checkRecorded(t, r.Stderr, trace, "")
		stdout, stderr, code := replayCheck(t, trace)
		checkReplayed(t, events, r.Stdout, progStderr, stdout, stderr, code)

		info := run(t, runOpts{}, bin, "info", trace)
		if !regexp.MustCompile(`(?m)^chaos: +scheduling randomised, seed \d+$`).Match(info.Stdout) {
			t.Errorf("rewind info does not show the chaos seed:\n%s", info.Stdout)
		}
		t.Logf("recording %d: %s", i+1, strings.TrimSpace(string(m[0])))
	}
	if lossy == 0 {
		t.Fatalf("none of %d chaos recordings of race.c lost an update", runs)
	}
}

// TestChaosRepeatedSort records testdata/sortloop.c (three threads each
// sorting a fresh copy of the same eight numbers, two million times) with
// --chaos, five times, and replays each with --check. Inside qsort, every
// iteration passes the same points with the same registers and stack
// window: only the loop's counter, further up the stack, tells them
// apart. Replay once stopped such a preemption in the first iteration
// that matched, fell behind the recording, and in about one recording in
// five could not find a later point before its search gave up (a minute);
// the others took 20 to 60 s to replay, a stop at each matching pass.
func TestChaosRepeatedSort(t *testing.T) {
	t.Parallel()
	chaosReplays(t, buildC(t, "sortloop.c", "-O2"), 5, "9000000 9000000 9000000")
}

// chaosReplays records prog with --chaos n times, checks that it exits 0
// (printing want, unless empty) and that each recording replays with
// --check.
func chaosReplays(t *testing.T, prog string, n int, want string) {
	t.Helper()
	bin := rewind(t)
	for i := range n {
		trace := filepath.Join(t.TempDir(), "chaos.rwd")
		r := run(t, runOpts{}, bin, "record", "--chaos", "-o", trace, "--", prog)
		if r.Code != 0 || want != "" && strings.TrimSpace(string(r.Stdout)) != want {
			t.Fatalf("record --chaos: exit %d, stdout %q\n%s", r.Code, r.Stdout, tail(r.Stderr))
		}
		events, progStderr := checkRecorded(t, r.Stderr, trace, "")
		stdout, stderr, code := replayCheck(t, trace)
		checkReplayed(t, events, r.Stdout, progStderr, stdout, stderr, code)
		t.Logf("recording %d: %d events", i+1, events)
	}
}

// TestChaosDeepFrame records testdata/deepframe.c (a worker parsing the
// same text once per item, its loop's counter more than 4 KiB above the
// parser's frame, and a watcher summing the worker's progress) with
// --chaos, four times, and replays each with --check. Every item passes
// the parser's points with the same registers and stack words: replay
// once stopped the worker at the first such pass, the watcher then saw
// other progress, and no recording replayed (one of 40 of gdb's own
// threaded session, whose workers parse every symbol's name so).
func TestChaosDeepFrame(t *testing.T) {
	t.Parallel()
	chaosReplays(t, buildC(t, "deepframe.c"), 4, "")
}

// TestChaosSeed checks that --chaos-seed implies --chaos and is recorded.
func TestChaosSeed(t *testing.T) {
	t.Parallel()
	bin := rewind(t)
	prog := buildC(t, "race.c")
	trace := filepath.Join(t.TempDir(), "seed.rwd")
	r := run(t, runOpts{}, bin, "record", "--chaos-seed", "12345", "-o", trace, "--", prog, "1000")
	if r.Code != 0 {
		t.Fatalf("record --chaos-seed exited %d\nstderr:\n%s", r.Code, tail(r.Stderr))
	}
	info := run(t, runOpts{}, bin, "info", trace)
	if !strings.Contains(string(info.Stdout), "chaos:     scheduling randomised, seed 12345\n") {
		t.Errorf("rewind info does not show seed 12345:\n%s", info.Stdout)
	}
	plain := filepath.Join(t.TempDir(), "plain.rwd")
	if r := run(t, runOpts{}, bin, "record", "-o", plain, "--", prog, "1000"); r.Code != 0 {
		t.Fatalf("record exited %d\nstderr:\n%s", r.Code, tail(r.Stderr))
	}
	if info := run(t, runOpts{}, bin, "info", plain); strings.Contains(string(info.Stdout), "chaos:") {
		t.Errorf("rewind info shows chaos for a plain recording:\n%s", info.Stdout)
	}
}

// TestChaosStarve: starve.c waits 30 ms for a worker to start while a
// spinner keeps the CPU; scheduled fairly the worker always starts, and
// chaos (whose periods of priorities starve a thread for a while) breaks
// the assumption within the hunt; the failing recording replays.
func TestChaosStarve(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "starve.c", "-O1")
	dir := t.TempDir()
	trace := filepath.Join(dir, "starve.rwd")
	r := run(t, runOpts{Dir: dir}, rewind(t), "record", "--until-fail=150", "--chaos", "-j", "2", "-o", trace, "--", prog)
	if r.Code != 1 || !strings.Contains(string(r.Stderr), "worker starved") {
		t.Fatalf("hunt: exit %d, want 1 with the worker starved:\n%s", r.Code, tail(r.Stderr))
	}
	if _, stderr, code := replayCheck(t, trace); code != 0 {
		t.Errorf("replay --check of the starved run exited %d\n%s", code, stderr)
	}
}
