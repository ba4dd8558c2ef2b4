/*
 * Private to the ULT scheduler: the hand-written context switch and the
 * initial frame of a new ULT stack. A context is just a saved stack pointer;
 * the callee-saved registers (and the FP control state the ABI says is
 * preserved: MXCSR and the x87 control word on x86-64, FPCR on aarch64) sit
 * on the stack below it. The switch passes one pointer through: what the
 * switching side gave as `arg` is what loom_ctx_switch returns on the side it
 * resumes (the scheduler passes the previous ULT, so every resumed context
 * can finish the previous one's park or exit; see ult.c).
 *
 * Frame layouts must match ult_switch_x86_64.S and ult_switch_aarch64.S.
 */
#ifndef LOOM_RUNTIME_ULT_CTX_H
#define LOOM_RUNTIME_ULT_CTX_H

#include <stdint.h>
#include <string.h>

/* Saves the current context's registers on its stack, stores its stack
 * pointer into *save_sp, loads new_sp and returns arg there. */
void *loom_ctx_switch(void **save_sp, void *new_sp, void *arg);

/* First code a new context runs: calls entry(prev, self), where prev is the
 * arg of the switch that started it and self the word set at creation. */
void loom_ctx_trampoline(void);

typedef void (*loom_ctx_entry)(void *prev, void *self);

#if defined(__x86_64__)
/* Runs fn(arg) on the stack of a context switched out at sp, below the frame
 * it left there, with call-frame information that makes that context's
 * frames fn's callers (loom_ult_borrow_stack). The context must stay
 * switched out until this returns. */
void loom_ctx_borrow(void *sp, void (*fn)(void *), void *arg);
#endif

/* Builds the first frame of a context on a stack whose top is hi (16-byte
 * aligned) and returns its stack pointer. Touches only the top of the stack. */
static inline void *loom_ctx_init(void *hi, loom_ctx_entry entry, void *self)
{
    uintptr_t top = (uintptr_t)hi & ~(uintptr_t)15;
#if defined(__x86_64__)
    /* From sp up: {mxcsr, x87 cw}, r15, r14, r13, r12 = self, rbx = entry,
     * rbp = 0, return address = trampoline, then 16 bytes of zeros so the
     * trampoline starts with rsp 16-byte aligned (it calls entry). */
    uint64_t *sp = (uint64_t *)(top - 80);
    memset(sp, 0, 80);
    uint32_t csr[2] = {0x1F80, 0x037F}; /* ABI defaults: all exceptions masked,
                                           round to nearest; x87 double-extended */
    memcpy(&sp[0], csr, sizeof csr);
    sp[4] = (uint64_t)(uintptr_t)self;  /* r12 */
    sp[5] = (uint64_t)(uintptr_t)entry; /* rbx */
    sp[6] = 0;                          /* rbp: ends frame-pointer walks */
    sp[7] = (uint64_t)(uintptr_t)loom_ctx_trampoline;
    return sp;
#elif defined(__aarch64__)
    /* 176 bytes from sp: x19..x30 (x19 = self, x20 = entry, x29 = 0,
     * x30 = trampoline), d8..d15, fpcr (0: round to nearest, no traps). */
    uint64_t *sp = (uint64_t *)(top - 176);
    memset(sp, 0, 176);
    sp[0] = (uint64_t)(uintptr_t)self;                 /* x19 */
    sp[1] = (uint64_t)(uintptr_t)entry;                /* x20 */
    sp[11] = (uint64_t)(uintptr_t)loom_ctx_trampoline; /* x30 */
    return sp;
#else
#error "Loom's context switch supports x86-64 and aarch64"
#endif
}

#endif
