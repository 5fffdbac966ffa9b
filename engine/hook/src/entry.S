/* The hook page's fixed entry points (engine/hook). A patched system call
   site jumps to a stub that saves the program's rsp in the control page,
   switches to the hook's stack, sets eax to the call number (or leaves
   it), rcx to the address after the site's syscall (as the kernel's
   syscall does) and CTL_STUB to its own address, and jumps to hook_entry
   with the call's registers otherwise untouched. hook_entry returns
   through the stub (STUB_RET), or has the stub make the call (STUB_TAIL). */
#include "layout.h"

	.section .text.entry, "ax"
	.globl untraced_syscall, traced_syscall, reexec_syscall, hook_entry, hook_trap_entry
untraced_syscall:		/* HOOK_UNTRACED: the filter allows this one */
	syscall
	ret
traced_syscall:			/* HOOK_TRACED: kept for the layout */
	syscall
	ret
	.org HOOK_REEXEC - HOOK_BASE, 0xcc
reexec_syscall:			/* HOOK_REEXEC: replay's calls, let through too */
	syscall
	int3
	.org HOOK_ENTRY - HOOK_BASE, 0xcc
hook_entry:
	pushfq
	push %rcx
	push %rdx
	push %rsi
	push %rdi
	push %r8
	push %r9
	push %r10
	push %rbx
	push %rbp
	push %r12
	push %r13
	push %r14
	push %r15
	mov %rsp, %rdi		/* struct frame * */
	mov %rax, %rsi		/* the call number */
	call hook_call		/* the result, or for a call to make traced its number */
	pop %r15
	pop %r14
	pop %r13
	pop %r12
	pop %rbp
	pop %rbx
	pop %r10
	pop %r9
	pop %r8
	pop %rdi
	pop %rsi
	pop %rdx
	pop %rcx
	andl $~0x100, (%rsp)	/* no trap flag: see below */
	popfq
	pushfq			/* r11 = rflags, as after syscall */
	pop %r11
	mov (HOOK_CTL + CTL_USER_RSP), %rsp
	jmp *(HOOK_CTL + CTL_RET)	/* the stub's way back, or its syscall */

/* hook_trap_entry: a patched cpuid or rdtsc for its stub, on the program's
   stack past its red zone, with the registers the instruction sets free
   (one of them holds this address): hook_trap writes its answers into the
   registers saved here, which come back with every other register and the
   flags kept; with no answer, the return TRAP_MISS_SKIP further on, where
   the stub runs the instruction itself. */
	.section .trap, "ax"
hook_trap_entry:		/* HOOK_TRAP_ENTRY: the section's start */
	pushfq
	push %rax		/* struct trapframe, from its end */
	push %rcx
	push %rdx
	push %rbx
	push %rsi
	push %rdi
	push %r8
	push %r9
	push %r10
	push %r11
	mov %rsp, %rbx		/* callee-saved: kept across hook_trap */
	and $-16, %rsp
	mov %rbx, %rdi
	call hook_trap
	test %eax, %eax
	jnz 1f
	addq $TRAP_MISS_SKIP, 88(%rbx)	/* the return address */
1:	mov %rbx, %rsp
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rdi
	pop %rsi
	pop %rbx
	pop %rdx
	pop %rcx
	pop %rax
	/* The flags pushed while a debugger single-stepped the thread hold
	   the trap flag, which popfq would make the program's own: every
	   later instruction would trap. The hook never runs with it. */
	andl $~0x100, (%rsp)
	popfq
	ret

	.text
/* do_syscall(nr, args[6], insn): the call with the registers of a syscall
   instruction, made at insn (HOOK_UNTRACED or HOOK_TRACED), so that both
   ways the kernel (or replay) sees the same registers but rip and rcx. */
	.text
	.globl do_syscall
do_syscall:
	push %rbx
	mov %rdx, %rbx
	mov %rdi, %rax
	mov 0(%rsi), %rdi
	mov 16(%rsi), %rdx
	mov 24(%rsi), %r10
	mov 32(%rsi), %r8
	mov 40(%rsi), %r9
	mov 8(%rsi), %rsi
	call *%rbx
	pop %rbx
	ret

	.section .note.GNU-stack, "", @progbits
