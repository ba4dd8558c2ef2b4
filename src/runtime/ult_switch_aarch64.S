/*
 * ULT context switch for aarch64 (AAPCS64). Hand-written because it is the
 * hot path of every park, wake and yield: it saves only what the ABI says a
 * callee must preserve (x19-x30, d8-d15 and FPCR), swaps stack pointers and
 * returns into the other context.
 *
 *   void *loom_ctx_switch(void **save_sp, void *new_sp, void *arg)
 *     x0 = where to store this context's sp, x1 = sp to resume,
 *     x2 = value the resumed side sees as the return value.
 *
 * Frame (176 bytes from sp): x19..x30 at 0..95, d8..d15 at 96..159, fpcr at
 * 160. ult_ctx.h builds the same frame for a new context.
 */
    .text
    .globl  loom_ctx_switch
    .hidden loom_ctx_switch
    .type   loom_ctx_switch, %function
    .p2align 4
loom_ctx_switch:
    .cfi_startproc
    sub     sp, sp, #176
    .cfi_adjust_cfa_offset 176
    stp     x19, x20, [sp, #0]
    stp     x21, x22, [sp, #16]
    stp     x23, x24, [sp, #32]
    stp     x25, x26, [sp, #48]
    stp     x27, x28, [sp, #64]
    stp     x29, x30, [sp, #80]
    stp     d8, d9, [sp, #96]
    stp     d10, d11, [sp, #112]
    stp     d12, d13, [sp, #128]
    stp     d14, d15, [sp, #144]
    mrs     x9, fpcr
    str     x9, [sp, #160]
    mov     x9, sp
    str     x9, [x0]
    mov     sp, x1
    ldr     x9, [sp, #160]
    msr     fpcr, x9
    ldp     x19, x20, [sp, #0]
    ldp     x21, x22, [sp, #16]
    ldp     x23, x24, [sp, #32]
    ldp     x25, x26, [sp, #48]
    ldp     x27, x28, [sp, #64]
    ldp     x29, x30, [sp, #80]
    ldp     d8, d9, [sp, #96]
    ldp     d10, d11, [sp, #112]
    ldp     d12, d13, [sp, #128]
    ldp     d14, d15, [sp, #144]
    add     sp, sp, #176
    .cfi_adjust_cfa_offset -176
    mov     x0, x2
    ret
    .cfi_endproc
    .size   loom_ctx_switch, .-loom_ctx_switch

/* First instructions of a new context: entry(prev = x0, self = x19), with
 * entry in x20. sp is 16-byte aligned here. entry never returns. */
    .globl  loom_ctx_trampoline
    .hidden loom_ctx_trampoline
    .type   loom_ctx_trampoline, %function
    .p2align 4
loom_ctx_trampoline:
    .cfi_startproc
    .cfi_undefined x30
    mov     x1, x19
    mov     x29, #0
    mov     x30, #0
    blr     x20
    brk     #0
    .cfi_endproc
    .size   loom_ctx_trampoline, .-loom_ctx_trampoline

    .section .note.GNU-stack,"",%progbits
