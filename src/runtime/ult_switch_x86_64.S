/*
 * ULT context switch for x86-64 (System V). Hand-written because it is the
 * hot path of every park, wake and yield: it saves only what the ABI says a
 * callee must preserve (rbx, rbp, r12-r15, MXCSR control bits and the x87
 * control word), swaps stack pointers and returns into the other context.
 *
 *   void *loom_ctx_switch(void **save_sp, void *new_sp, void *arg)
 *     rdi = where to store this context's sp, rsi = sp to resume,
 *     rdx = value the resumed side sees as the return value.
 *
 * Frame (from sp up): 8 bytes {mxcsr, x87 cw}, r15, r14, r13, r12, rbx, rbp,
 * return address. ult_ctx.h builds the same frame for a new context.
 */
    .text
    .globl  loom_ctx_switch
    .hidden loom_ctx_switch
    .type   loom_ctx_switch, @function
    .p2align 4
loom_ctx_switch:
    .cfi_startproc
    pushq   %rbp
    .cfi_adjust_cfa_offset 8
    pushq   %rbx
    .cfi_adjust_cfa_offset 8
    pushq   %r12
    .cfi_adjust_cfa_offset 8
    pushq   %r13
    .cfi_adjust_cfa_offset 8
    pushq   %r14
    .cfi_adjust_cfa_offset 8
    pushq   %r15
    .cfi_adjust_cfa_offset 8
    subq    $8, %rsp
    .cfi_adjust_cfa_offset 8
    stmxcsr (%rsp)
    fnstcw  4(%rsp)
    movq    %rsp, (%rdi)
    movq    %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw   4(%rsp)
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %r15
    .cfi_adjust_cfa_offset -8
    popq    %r14
    .cfi_adjust_cfa_offset -8
    popq    %r13
    .cfi_adjust_cfa_offset -8
    popq    %r12
    .cfi_adjust_cfa_offset -8
    popq    %rbx
    .cfi_adjust_cfa_offset -8
    popq    %rbp
    .cfi_adjust_cfa_offset -8
    movq    %rdx, %rax
    ret
    .cfi_endproc
    .size   loom_ctx_switch, .-loom_ctx_switch

/* First instructions of a new context: entry(prev = rax, self = r12), with
 * entry in rbx. rsp is 16-byte aligned here. entry never returns. */
    .globl  loom_ctx_trampoline
    .hidden loom_ctx_trampoline
    .type   loom_ctx_trampoline, @function
    .p2align 4
loom_ctx_trampoline:
    .cfi_startproc
    .cfi_undefined rip
    movq    %rax, %rdi
    movq    %r12, %rsi
    call    *%rbx
    ud2
    .cfi_endproc
    .size   loom_ctx_trampoline, .-loom_ctx_trampoline

/* void loom_ctx_borrow(void *sp, void (*fn)(void *), void *arg): calls fn(arg)
 * with rsp 512 bytes below sp (rounded to 16), on the stack of a context that
 * loom_ctx_switch switched out at sp. At the call, the frame information says
 * that the caller's frame is that context as loom_ctx_switch left it: CFA =
 * sp + 64, the return address at CFA-8 and rbp, rbx, r12, r13, r14, r15 below
 * it, in the order loom_ctx_switch pushed them. rbx holds sp across the call
 * (callee-saved), r12 our own stack pointer. */
    .globl  loom_ctx_borrow
    .hidden loom_ctx_borrow
    .type   loom_ctx_borrow, @function
    .p2align 4
loom_ctx_borrow:
    .cfi_startproc
    pushq   %rbp
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset rbp, 0
    pushq   %rbx
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset rbx, 0
    pushq   %r12
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset r12, 0
    movq    %rdi, %rbx
    movq    %rsp, %r12
    .cfi_remember_state
    .cfi_def_cfa rbx, 64
    .cfi_offset rip, -8
    .cfi_offset rbp, -16
    .cfi_offset rbx, -24
    .cfi_offset r12, -32
    .cfi_offset r13, -40
    .cfi_offset r14, -48
    .cfi_offset r15, -56
    leaq    -512(%rdi), %rsp
    andq    $-16, %rsp
    movq    %rdx, %rdi
    call    *%rsi
    movq    %r12, %rsp
    .cfi_restore_state
    popq    %r12
    .cfi_adjust_cfa_offset -8
    .cfi_restore r12
    popq    %rbx
    .cfi_adjust_cfa_offset -8
    .cfi_restore rbx
    popq    %rbp
    .cfi_adjust_cfa_offset -8
    .cfi_restore rbp
    ret
    .cfi_endproc
    .size   loom_ctx_borrow, .-loom_ctx_borrow

    .section .note.GNU-stack,"",@progbits
