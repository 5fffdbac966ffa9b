#!/bin/sh
# Builds ../helper.bin, the exec helper (helper.c), a static program without
# libc (go generate runs it; TestHelperImage checks the committed one).
set -e
cd "$(dirname "$0")"
out=${1:-../helper.bin}
gcc -O2 -ffreestanding -fno-stack-protector -fno-pic -fno-pie -no-pie -nostdlib -static \
	-fno-asynchronous-unwind-tables -fcf-protection=none -fno-builtin -Wall -Werror \
	-Wl,--build-id=none -Wl,-z,noexecstack -s -o "$out" helper.c
