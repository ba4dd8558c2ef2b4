# gdb extension for Loom jobs (docs/debugging.md). Load it with
#   gdb -p <mpiexec's pid> -x <libdir>/loom/loom-gdb.py
# or `source` it in a session. With a stock gdb it adds:
#   loom ranks [bt]       every rank's state (what it waits for), as
#                         kill -QUIT prints it; "bt" adds Loom's backtraces
#   loom rank N [CMD]     runs the gdb command CMD (default: bt) on rank N's
#                         stack: the registers of the thread in focus are set
#                         to those rank N was parked with, then put back
#   loom release          lets ranks stopped by mpiexec --debug-rank go on
#   $loom_rank()          the rank running on the thread in focus (-1: none),
#                         for breakpoint conditions: break f if $loom_rank() == 3
# Ranks are user-level threads: gdb's threads are Loom's workers, each
# running one rank at a time; a parked rank's stack belongs to no thread
# until `loom rank` lends it one. Copies of the program that glibc does not
# know (clones) get their symbols from the program file at their base
# (add-symbol-file -o), once per rank, when `loom rank` first reaches them.
import gdb

# Saved by loom_ctx_switch, from the saved stack pointer up (ult_ctx.h):
# x86-64: {mxcsr, x87 cw}, r15, r14, r13, r12, rbx, rbp, return address.
X86_64 = {"r15": 8, "r14": 16, "r13": 24, "r12": 32, "rbx": 40, "rbp": 48}
X86_64_RIP, X86_64_FRAME = 56, 64
# aarch64: x19..x30 from sp, then d8..d15 and fpcr (176 bytes).
AARCH64_FRAME = 176

_symbols_added = set()


def _call(expr):
    return gdb.parse_and_eval(expr)


def _arch():
    return gdb.selected_frame().architecture().name()


def _read_u64(addr):
    inf = gdb.selected_inferior()
    return int.from_bytes(bytes(inf.read_memory(addr, 8)), "little")


def _rank_registers(rank):
    sp = int(_call("(unsigned long) loom_debug_rank_sp(%d)" % rank))
    if sp == 0:
        worker = int(_call("(int) loom_debug_rank_worker(%d)" % rank))
        raise gdb.GdbError(
            "rank %d is not parked: it runs (or is ready to) on worker %d, thread loom-w%d, "
            "or has not started or has ended; select that thread to see it" % (rank, worker, worker))
    arch = _arch()
    if "x86-64" in arch:
        regs = {name: _read_u64(sp + off) for name, off in X86_64.items()}
        regs["rip"] = _read_u64(sp + X86_64_RIP)
        regs["rsp"] = sp + X86_64_FRAME
        return regs
    if "aarch64" in arch:
        regs = {"x%d" % (19 + i): _read_u64(sp + 8 * i) for i in range(12)}
        regs["pc"] = regs["x30"]
        regs["sp"] = sp + AARCH64_FRAME
        return regs
    raise gdb.GdbError("loom: no register layout for %s" % arch)


def _add_symbols(rank):
    if rank in _symbols_added:
        return
    _symbols_added.add(rank)
    if int(_call("(int) loom_debug_rank_loaded(%d)" % rank)):
        return  # a shared library to gdb already
    base = int(_call("(unsigned long) loom_debug_rank_base(%d)" % rank))
    program = _call("(const char *) loom_debug_program()").string()
    if base and program:
        gdb.execute("add-symbol-file %s -o 0x%x" % (program, base), to_string=True)


class Loom(gdb.Command):
    """Loom jobs: loom ranks [bt], loom rank N [CMD], loom release."""

    def __init__(self):
        super().__init__("loom", gdb.COMMAND_USER, gdb.COMPLETE_NONE, True)


class LoomRanks(gdb.Command):
    """loom ranks [bt]: every rank's state; with bt, each parked rank's backtrace."""

    def __init__(self):
        super().__init__("loom ranks", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        bt = 1 if arg.strip() == "bt" else 0
        text = _call("(const char *) loom_debug_state(%d)" % bt)
        if int(text) == 0:
            raise gdb.GdbError("loom: a report is being printed (a stopped thread holds it): "
                               "continue a moment and try again")
        gdb.write(text.string())


class LoomRank(gdb.Command):
    """loom rank N [CMD]: runs gdb command CMD (default bt) on parked rank N's stack."""

    def __init__(self):
        super().__init__("loom rank", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        words = arg.split(None, 1)
        if not words:
            raise gdb.GdbError("usage: loom rank N [CMD]")
        rank = int(words[0])
        cmd = words[1] if len(words) > 1 else "bt"
        n = int(_call("(int) loom_debug_nranks()"))
        if rank < 0 or rank >= n:
            raise gdb.GdbError("loom: no rank %d (the job has %d)" % (rank, n))
        regs = _rank_registers(rank)
        _add_symbols(rank)
        gdb.execute("frame 0", to_string=True)
        saved = {name: int(gdb.parse_and_eval("$" + name)) for name in regs}
        try:
            for name, value in regs.items():
                gdb.execute("set $%s = 0x%x" % (name, value), to_string=True)
            gdb.write("rank %d:\n" % rank)
            gdb.execute(cmd, from_tty)
        finally:
            gdb.execute("frame 0", to_string=True)
            for name, value in saved.items():
                gdb.execute("set $%s = 0x%x" % (name, value), to_string=True)


class LoomRelease(gdb.Command):
    """loom release: ranks stopped by --debug-rank go on once the process continues."""

    def __init__(self):
        super().__init__("loom release", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        gdb.execute("set var *(int *) &loom_debug_hold = 0")
        gdb.write("loom: the ranks waiting in MPI_Init go on at 'continue'\n")


class LoomRankFunction(gdb.Function):
    """$loom_rank(): the rank on the thread in focus, -1 if none."""

    def __init__(self):
        super().__init__("loom_rank")

    def invoke(self):
        return _call("(int) loom_debug_current_rank()")


Loom()
LoomRanks()
LoomRank()
LoomRelease()
LoomRankFunction()
