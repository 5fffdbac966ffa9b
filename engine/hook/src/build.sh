#!/bin/sh
# Builds hook.bin, the hook page's image, from entry.S and hook.c (go
# generate runs it, with ../hook.bin; TestImage checks the committed one).
set -e
cd "$(dirname "$0")"
out=${1:-../hook.bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -ffreestanding -fno-stack-protector -fno-pic -fno-pie -nostdlib -static \
	-mno-red-zone -fno-asynchronous-unwind-tables -fcf-protection=none -fno-builtin \
	-mgeneral-regs-only -Wall -Werror -Wl,-T,hook.ld -Wl,--build-id=none -Wl,-e,hook_entry \
	-o "$tmp/hook.elf" entry.S hook.c
objcopy -O binary "$tmp/hook.elf" "$out"
