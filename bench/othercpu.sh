#!/bin/sh
# othercpu.sh: issue 24's measure without a second machine. Recordings made
# here replay in a QEMU virtual machine that emulates another CPU (TCG: no
# hardware virtualisation, vendor GenuineIntel, no AVX-512, no CPUID
# faulting), boots another kernel build, and has no libc and no file of the
# recorded programs: only a static rewind, busybox and the traces.
#
#	KERNEL=/path/to/vmlinuz bench/othercpu.sh [DIR]
#
# QEMU_CPUS lists the -cpu models to boot, one run each.
# Needs gcc, qemu-system-x86_64, cpio, a static busybox (Debian's
# busybox-static) and a bzImage kernel with an initramfs-capable config (a
# distribution's: apt-get download linux-image-amd64; dpkg -x it). DIR
# (default a temporary one) keeps the VM's root and its console logs. The
# report comes on stdout: the VM's machine, each recording's replay --check,
# a debugging session (break, bt, finish, watch, reverse-continue) on a
# program whose sources travel in its recording; then the other way:
# static programs recorded in the VM, replayed and debugged here.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$(mktemp -d)}
kernel=${KERNEL:?set KERNEL to a vmlinuz}
busybox=${BUSYBOX:-$(command -v busybox)}
level=${LEVEL:-x86-64-v3} # what TCG's -cpu max implements (QEMU 7.2)
for t in gcc qemu-system-x86_64 cpio; do
	command -v $t >/dev/null || { echo "othercpu.sh: needs $t" >&2; exit 2; }
done
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' || { echo "othercpu.sh: needs a static busybox (BUSYBOX=)" >&2; exit 2; }
root=$dir/root
rm -rf "$root" && mkdir -p "$root/bin" "$root/traces" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" || exit 1
(cd "$top" && CGO_ENABLED=0 go build -o "$root/bin/rewind" .) || exit 1
cp "$busybox" "$root/bin/busybox"
for a in sh cat echo grep head tail ls mount poweroff uname timeout; do ln -s busybox "$root/bin/$a"; done

# The programs, built and recorded here, then deleted: the VM has none of
# their files.
b=$dir/build
rm -rf "$b" && mkdir -p "$b" && cd "$b" || exit 1
cp "$top/testdata/overflow.c" demo.c
gcc -g -O0 -o demo demo.c || exit 1
gcc -O1 -o cpuid "$top/testdata/cpuid.c" || exit 1
gcc -O1 -pthread -o threads "$top/testdata/threads.c" || exit 1
gcc -O1 -o alarm "$top/testdata/alarm.c" || exit 1
g++ -O1 -g -o cxx "$top/testdata/cxx.cpp" || exit 1
(cd "$top/testdata/go" && CGO_ENABLED=0 go build -o "$b/goroutines" ./goroutines) || exit 1
seq 1 200000 | awk '{ printf "%08d %s\n", (($1 * 7919) % 1000003), $1 }' >lines.txt
rec() {
	name=$1
	shift
	"$root/bin/rewind" record -o "$root/traces/$name.rwd" "$@" >/dev/null 2>"$b/$name.err" </dev/null
	echo "recorded $name: exit $? $(tail -1 "$b/$name.err")"
}
rec demo-src --cpu-features "$level" --with-sources -- ./demo
rec cpuid --cpu-features "$level" -- ./cpuid
rec threads --cpu-features "$level" -- ./threads
rec alarm --cpu-features "$level" -- ./alarm
rec cxx --cpu-features "$level" -- ./cxx
rec go-goroutines --cpu-features "$level" -- ./goroutines
rec sort --cpu-features "$level" -- sort lines.txt -o sorted.txt
rec sh-pipe --cpu-features "$level" -- sh -c 'ls /usr | wc -l'
command -v python3 >/dev/null && rec python --cpu-features "$level" -- python3 -c 'import json, decimal; print(decimal.Decimal(1) / 7)'
command -v node >/dev/null && rec node --cpu-features "$level" -- node -e 'console.log([3, 1, 2].sort())'
command -v java >/dev/null && rec java --cpu-features "$level" -- java -version
rec native-demo -- ./demo # all of this CPU's features shown: refused there, in one line
# For the other way: static programs the VM records, for this machine to
# replay (busybox's sh too).
gcc -g -O0 -static -o "$root/bin/demo" demo.c || exit 1
gcc -O1 -static -o "$root/bin/alarm" "$top/testdata/alarm.c" -I"$top/testdata" || exit 1
cd "$top" && rm -rf "$b"
du -sh "$root/traces"

cat >"$root/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev; mount -t tmpfs tmp /tmp
export HOME=/tmp PATH=/bin
echo "== machine: kernel $(uname -r), $(grep -m1 vendor_id /proc/cpuinfo), $(grep -m1 'model name' /proc/cpuinfo)"
echo "== xsave: $(grep -o -m1 "xsave[a-z]*\\|pku\\|mpx\\|avx512f" /proc/cpuinfo | tr "\\n" " ")"
echo "== files: $(ls -d /usr /lib /lib64 2>&1 | tr '\n' ' ')"
for t in /traces/*.rwd; do
	timeout 300 rewind replay --check "$t" >/tmp/out 2>&1
	echo "== replay --check $(basename $t): exit $? $(tail -1 /tmp/out)"
done
echo "== debugging demo-src"
rewind info /traces/demo-src.rwd | grep -E 'hidden|portable|packed'
timeout 300 rewind replay --batch -ex 'break set_name' -ex continue -ex bt -ex finish -ex 'watch -l r.score' \
	-ex reverse-continue -ex bt -ex 'info source' -ex 'info sharedlibrary' /traces/demo-src.rwd 2>&1
echo "== recording there"
cd /tmp
rewind record -o vm-demo.rwd /bin/demo >/dev/null 2>&1; echo "demo: exit $?"
rewind record -o vm-alarm.rwd /bin/alarm >/dev/null 2>&1; echo "alarm: exit $?"
rewind record -o vm-sh.rwd sh -c 'ls / | grep -c .' >/dev/null 2>&1; echo "sh: exit $?"
echo "== traces"
tar -cf - vm-*.rwd | gzip -1 | base64
echo "== end"
poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$dir/initrd.gz" || exit 1
# Two CPUs: QEMU's whole model (Intel's XSAVE layout, with MPX and PKRU:
# a longer FPU state in signal frames than this AMD's) and one without MPX
# and PKRU (a shorter one).
n=0
for cpu in ${QEMU_CPUS:-max,vendor=GenuineIntel max,vendor=GenuineIntel,-mpx,-pku}; do
	n=$((n + 1))
	echo "== qemu -cpu $cpu"
	timeout 1500 qemu-system-x86_64 -accel tcg -cpu "$cpu" -smp 2 -m 3G -nographic -no-reboot \
		-kernel "$kernel" -initrd "$dir/initrd.gz" -append 'console=ttyS0 quiet panic=-1' >"$dir/console$n.log" 2>&1
	echo "qemu: exit $?"
	tr -d '\r' <"$dir/console$n.log" | sed -n 's/^.*\(== machine\)/\1/; /^== machine/,/^== traces/p'
	echo "== recordings made there, replayed here"
	rm -rf "$dir/there$n" && mkdir -p "$dir/there$n"
	tr -d '\r' <"$dir/console$n.log" | sed -n '/^== traces/,/^== end/{/^==/d;p}' | base64 -d | tar -xzf - -C "$dir/there$n"
	for t in "$dir/there$n"/*.rwd; do
		timeout 120 "$root/bin/rewind" replay --check "$t" >"$dir/out" 2>&1
		echo "$(basename "$t"): exit $? $(tail -1 "$dir/out")"
	done
	timeout 120 "$root/bin/rewind" replay --batch -ex 'break set_name' -ex continue -ex bt -ex finish \
		-ex 'watch -l r.score' -ex reverse-continue -ex bt "$dir/there$n/vm-demo.rwd" 2>&1 | tail -12
done
