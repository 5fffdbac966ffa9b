#!/bin/sh
# Regenerates the README's screenshots from a real recording: builds rewind
# and the demo program, records it, drives the UI in tmux to the crash and
# to the watch history, captures the screens with their colours and renders
# them with charmbracelet/freeze (a Go tool of ../tools).
#
#   screenshots/generate.sh     (needs gcc, tmux and Go)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
sock="$work/tmux.sock"
trap 'tmux -S "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT

cd "$root"
go build -o "$work/rewind" .
cp demo/corrupt.c.txt "$work/corrupt.c"
cd "$work"
gcc -g -O0 -o corrupt corrupt.c
./rewind record -o corrupt.rwd ./corrupt >/dev/null 2>&1 || true

tmux -S "$sock" -f /dev/null new-session -d -s rw -x 132 -y 40 \
	"env HOME=$work TERM=xterm-256color COLORTERM=truecolor ./rewind replay corrupt.rwd"
wait_for() { # wait until the screen contains $1
	i=0
	until tmux -S "$sock" capture-pane -p -t rw | grep -q -- "$1"; do
		i=$((i + 1)); [ $i -lt 300 ] || { echo "screenshots: never saw '$1'" >&2; exit 1; }
		sleep 0.1
	done
}
cmd() { tmux -S "$sock" send-keys -t rw ":"; sleep 0.1; tmux -S "$sock" send-keys -t rw -l "$1"; tmux -S "$sock" send-keys -t rw Enter; }

wait_for "thread"
cmd "continue"
wait_for "SIGSEGV"
sleep 0.5
tmux -S "$sock" capture-pane -e -p -t rw > crash.ansi

cmd "up"
wait_for "#1"
cmd "watch -l b->next"
wait_for "Hardware watchpoint 1"
cmd "reverse-continue"
wait_for "Old value"
# Focus the Watch pane (Tab order: Source Stack Locals Console Timeline Watch).
for _ in 1 2 3 4 5; do tmux -S "$sock" send-keys -t rw Tab; done
wait_for "bravo"
sleep 1
tmux -S "$sock" capture-pane -e -p -t rw > watch.ansi

cd "$root/tools"
for shot in crash watch; do
	# freeze does not end a background at SGR 49 (tmux's "default
	# background"): say it with a full reset.
	sed 's/\x1b\[49m/\x1b[0m/g' "$work/$shot.ansi" |
		go tool freeze --window --padding 20 --font.size 13 -o "$root/screenshots/$shot.png"
done
echo "screenshots: wrote screenshots/crash.png and screenshots/watch.png"
