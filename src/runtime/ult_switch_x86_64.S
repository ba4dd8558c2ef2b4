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

    .section .note.GNU-stack,"",@progbits
