#!/usr/bin/python3
"""bench/compare: build Loom's benchmark suite with Loom, Open MPI and MPICH,
run it interleaved, and write results.jsonl, report.md, snippet.md and
plots/ (see bench/README.md).

    bench/compare --quick                       # < 5 min on 2 cores
    bench/compare --out docs/perf --print-snippet
    bench/compare --mpis loom --quick --sizes 8:64 --ranks 2 \\
                  --benchmarks startup,barrier --out /tmp/b
    bench/compare --report-only results.jsonl --out DIR
"""

import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import benchreport  # noqa: E402

ALL_MPIS = ["loom", "openmpi", "mpich"]

# name -> (source, extra cflags, kind)
#   kind: pair (exactly 2 ranks), pairs (every even rank count), coll, icoll
BENCHES = {
    "latency": ("latency.c", [], "pair"),
    "bw": ("bw.c", [], "pair"),
    "bibw": ("bw.c", ["-DBIBW"], "pair"),
    "mbw_mr": ("mbw_mr.c", [], "pairs"),
}
COLLS = ["barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather",
         "allgatherv", "alltoall", "alltoallv", "alltoallw", "reduce", "allreduce",
         "reduce_scatter", "reduce_scatter_block", "scan", "exscan"]
ICOLLS = ["ibarrier", "ibcast", "ireduce", "iallreduce", "iallgather", "ialltoall"]
for _c in COLLS:
    BENCHES[_c] = ("coll.c", ["-DCOLL_" + _c.upper()], "coll")
for _c in ICOLLS:
    BENCHES[_c] = ("icoll.c", ["-DCOLL_" + _c.upper()], "icoll")
# One-sided (rma.c): <op>_<lat|bw|bibw>_<sync> between ranks 0 and 1 (kind
# "rma", 2 ranks only), and fence, lock_all, <op>_rate at every rank count
# (kind "rmacoll").  Each name compiles to its own binary: -DRMA_<OP>
# -DRMA_<LAT|BW|BIBW|RATE> -DRMA_SYNC_<SYNC>, or -DRMA_FENCE / -DRMA_LOCK_ALL.
RMA_SYNCS = ["lock", "flush", "fence", "pscw"]
RMA_PAIR = (["%s_lat_%s" % (op, sy) for op in ("put", "get") for sy in RMA_SYNCS] +
            ["acc_lat_flush", "gacc_lat_flush", "fop_lat_flush", "cas_lat_flush"] +
            ["%s_bw_%s" % (op, sy) for op in ("put", "get") for sy in RMA_SYNCS] +
            ["put_bibw_fence", "put_bibw_pscw"])
RMA_COLL = ["fence", "lock_all", "fop_rate", "cas_rate"]


def rma_flags(name):
    """-D flags that select the rma.c variant called `name`."""
    if name in ("fence", "lock_all"):
        return ["-DRMA_" + name.upper()]
    parts = name.split("_")
    flags = ["-DRMA_" + parts[0].upper(), "-DRMA_" + parts[1].upper()]
    if len(parts) > 2:
        flags.append("-DRMA_SYNC_" + parts[2].upper())
    return flags


for _r in RMA_PAIR:
    BENCHES[_r] = ("rma.c", rma_flags(_r), "rma")
for _r in RMA_COLL:
    BENCHES[_r] = ("rma.c", rma_flags(_r), "rmacoll")
GROUPS = {
    "pt2pt": ["latency", "bw", "bibw", "mbw_mr"],
    "coll": COLLS,
    "icoll": ICOLLS,
    "rma": RMA_PAIR + RMA_COLL,
    "startup": ["startup"],
    "limits": ["limits"],
}
# Benchmarks also run with cold buffers in --quick mode (all of them otherwise).
QUICK_COLD = ["latency", "bw", "bcast", "allreduce"]
# Benchmarks run at oversubscribed rank counts in --quick mode (MPICH and Open MPI
# busy-poll, so an operation there costs a scheduler time slice or more).
QUICK_OVERSUB = ["mbw_mr", "barrier", "bcast", "allreduce", "alltoall", "iallreduce",
                 "fence", "lock_all", "fop_rate"]
# The one-sided benchmarks run in --quick mode (all of them otherwise): the
# project's RMA targets (8-byte Put+flush latency, 1 MiB Put bandwidth, fence
# at 16 ranks) and one of each kind of operation and synchronization.
QUICK_RMA = ["put_lat_flush", "put_lat_lock", "put_lat_fence", "put_lat_pscw", "get_lat_flush",
             "acc_lat_flush", "fop_lat_flush", "cas_lat_flush", "put_bw_flush", "get_bw_flush",
             "put_bibw_fence", "fence", "lock_all", "fop_rate"]

# implicit declarations are errors, so that a function an MPI lacks fails the build
# with a clear message instead of failing at run time
CFLAGS = ["-O2", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"]


def is_root():
    return hasattr(os, "geteuid") and os.geteuid() == 0


def ncores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def sh(cmd, timeout=30):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout, shell=isinstance(cmd, str))
        return p.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


# ----------------------------------------------------------------------------
# MPIs

class Mpi:
    def __init__(self, name, cc, launcher, env=None, note=None):
        self.name = name
        self.cc = cc              # compiler wrapper (path or command)
        self.launcher = launcher  # list
        self.env = env or {}
        self.note = note          # why it is unavailable, if it is

    def cmd(self, n, prog, args):
        return self.launcher + ["-n", str(n)] + [prog] + list(args)

    def available(self):
        return self.note is None


def default_loom_prefix():
    if os.environ.get("LOOM_PREFIX"):
        return os.environ["LOOM_PREFIX"]
    for d in ("build/release", "build/ci", "build/debug", "build"):
        p = os.path.join(REPO, d)
        if os.path.exists(os.path.join(p, "bin", "mpicc")):
            return p
    return os.path.join(REPO, "build", "release")


def make_mpis(args):
    out = {}
    for name in args.mpis:
        if name == "loom":
            prefix = os.path.abspath(args.loom_prefix)
            cc = os.path.join(prefix, "bin", "mpicc")
            run = os.path.join(prefix, "bin", "mpiexec")
            note = None
            if not os.access(cc, os.X_OK):
                note = "Loom's mpicc not found at %s (build Loom or pass --loom-prefix)" % cc
            elif not os.access(run, os.X_OK):
                note = "Loom's mpiexec not found at %s" % run
            out[name] = Mpi(name, cc, [run] + shlex.split(args.loom_args), note=note)
        elif name == "openmpi":
            launcher = ["mpirun.openmpi", "--oversubscribe"]
            env = {}
            if is_root():
                launcher.append("--allow-run-as-root")
                env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
            # no "help" banners about missing network devices in containers
            env["OMPI_MCA_btl_base_warn_component_unused"] = "0"
            # One-sided: osc sm (windows from MPI_Win_allocate in shared memory).
            # Open MPI 4.1's default here, osc rdma over btl vader, puts 1 MiB
            # at a tenth of sm's bandwidth and crashes in MPI_Compare_and_swap
            # (open-mpi/ompi#7967, #11349).  --openmpi-args "--mca osc rdma"
            # overrides it (the command line wins over OMPI_MCA_*).
            env["OMPI_MCA_osc"] = "sm"
            note = None if shutil.which("mpicc.openmpi") and shutil.which("mpirun.openmpi") \
                else "mpicc.openmpi/mpirun.openmpi not found (apt-get install openmpi-bin libopenmpi-dev)"
            out[name] = Mpi(name, "mpicc.openmpi", launcher + shlex.split(args.openmpi_args), env, note)
        elif name == "mpich":
            note = None if shutil.which("mpicc.mpich") and shutil.which("mpirun.mpich") \
                else "mpicc.mpich/mpirun.mpich not found (apt-get install mpich libmpich-dev)"
            out[name] = Mpi(name, "mpicc.mpich", ["mpirun.mpich"] + shlex.split(args.mpich_args),
                            {}, note)
        else:
            raise SystemExit("unknown MPI %r (choose from %s)" % (name, ", ".join(ALL_MPIS)))
    return out


def ensure_packages(args):
    """apt-get install what the chosen MPIs and the plots need."""
    want = []
    if "openmpi" in args.mpis and not (shutil.which("mpicc.openmpi") and shutil.which("mpirun.openmpi")):
        want += ["openmpi-bin", "libopenmpi-dev"]
    if "mpich" in args.mpis and not (shutil.which("mpicc.mpich") and shutil.which("mpirun.mpich")):
        want += ["mpich", "libmpich-dev"]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        if sys.executable == "/usr/bin/python3" or os.path.realpath(sys.executable).startswith("/usr/bin/"):
            want.append("python3-matplotlib")
        else:
            log("matplotlib missing for %s: no plots (run with /usr/bin/python3)" % sys.executable)
    if not shutil.which("cc") and not shutil.which("gcc"):
        want.append("gcc")
    if not want:
        return
    if args.no_install or not shutil.which("apt-get"):
        log("missing packages (not installing): " + " ".join(want))
        return
    pre = [] if is_root() else (["sudo", "-n"] if shutil.which("sudo") else None)
    if pre is None:
        log("missing packages and not root: " + " ".join(want))
        return
    log("installing: " + " ".join(want))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    r = subprocess.run(pre + ["apt-get", "install", "-y", "--no-install-recommends"] + want, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        subprocess.run(pre + ["apt-get", "update"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        r = subprocess.run(pre + ["apt-get", "install", "-y", "--no-install-recommends"] + want,
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        log("apt-get install failed: " + benchreport.first_error_line(r.stdout))


# ----------------------------------------------------------------------------
# Machine description

def lscpu():
    out = {}
    for line in sh(["lscpu"]).splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def machine_info(mpis, args):
    l = lscpu()
    m = {"type": "machine", "hostname": platform.node(), "kernel": platform.release(),
         "arch": platform.machine(), "cpu_model": l.get("Model name", platform.processor()),
         "cores": ncores(), "sockets": l.get("Socket(s)"), "numa_nodes": l.get("NUMA node(s)"),
         "threads_per_core": l.get("Thread(s) per core"),
         "caches": ", ".join("%s %s" % (k.replace(" cache", ""), l[k]) for k in
                             ("L1d cache", "L2 cache", "L3 cache") if k in l)}
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            m["memory"] = "%.1f GiB" % (kb / 1048576)
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    m["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    m["compiler"] = sh(["cc", "--version"]).splitlines()[0] if sh(["cc", "--version"]) else ""
    v = {}
    for name, mpi in mpis.items():
        if not mpi.available():
            v[name] = "unavailable"
        elif name == "openmpi":
            v[name] = sh(["mpirun.openmpi", "--version"]).splitlines()[0]
            osc = re.search(r"--mca\s+osc\s+(\S+)", args.openmpi_args)
            osc = osc.group(1) if osc else mpi.env.get("OMPI_MCA_osc")
            if osc:
                v[name] += " (one-sided: osc %s)" % osc
        elif name == "mpich":
            s = sh(["mpichversion"])
            mm = re.search(r"Version:\s*(\S+)", s)
            v[name] = "MPICH " + mm.group(1) if mm else (s.splitlines() or ["?"])[0]
        elif name == "loom":
            s = sh(mpi.launcher[:1] + ["--version"])
            git = sh(["git", "-C", REPO, "describe", "--always", "--dirty"])
            v[name] = ((s.splitlines() or [""])[0] + (" (git %s)" % git if git else "")).strip()
    m["mpi_versions"] = v
    return m


# ----------------------------------------------------------------------------
# Building

def build_one(mpi, target, src, flags, outdir):
    exe = os.path.join(outdir, target)
    cmd = [mpi.cc] + CFLAGS + flags + ["-o", exe, os.path.join(HERE, src)]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=180, env=dict(os.environ, **mpi.env))
    except (OSError, subprocess.SubprocessError) as e:
        return {"ok": False, "reason": "build: %s" % e}
    if p.returncode != 0:
        return {"ok": False, "reason": "build: " + benchreport.first_error_line(p.stdout),
                "log": p.stdout[-4000:]}
    warn = [l for l in p.stdout.splitlines() if "warning:" in l]
    return {"ok": True, "exe": exe, "warnings": warn[:5]}


def build_all(mpis, targets, outdir, emit):
    """targets: name -> (src, flags).  Returns (mpi, name) -> build record."""
    results = {}
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, ncores())) as ex:
        for mname, mpi in mpis.items():
            d = os.path.join(outdir, "build", mname)
            os.makedirs(d, exist_ok=True)
            for t, (src, flags) in targets.items():
                if not mpi.available():
                    results[(mname, t)] = {"ok": False, "reason": mpi.note}
                    continue
                jobs.append(((mname, t), ex.submit(build_one, mpi, t, src, flags, d)))
        for key, fut in jobs:
            results[key] = fut.result()
    for (mname, t), r in sorted(results.items()):
        rec = {"type": "build", "mpi": mname, "target": t, "ok": r["ok"]}
        if not r["ok"]:
            rec["reason"] = r["reason"]
        if r.get("warnings"):
            rec["warnings"] = r["warnings"]
        emit(rec)
    return results


def build_limits(outdir):
    d = os.path.join(outdir, "build", "limits")
    os.makedirs(d, exist_ok=True)
    out = {}
    cc = shutil.which("cc") or shutil.which("gcc") or "cc"
    for t in ("memcpy_bw", "cacheline", "slotline", "pairline", "collfloor"):
        exe = os.path.join(d, t)
        p = subprocess.run([cc] + CFLAGS + ["-pthread", "-o", exe, os.path.join(HERE, t + ".c")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out[t] = exe if p.returncode == 0 else None
        if p.returncode:
            log("cannot build %s: %s" % (t, benchreport.first_error_line(p.stdout)))
    return out


# ----------------------------------------------------------------------------
# Running

def run_cmd(cmd, env, timeout):
    """Runs cmd in its own process group; kills the group on timeout.
    Returns (rc or None on timeout, stdout, stderr, seconds)."""
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, **env), start_new_session=True)
    except OSError as e:
        return -1, "", str(e), 0.0
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                out, err = p.communicate(timeout=3)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, err = p.communicate()
        except ProcessLookupError:
            out, err = p.communicate()
        rc = None
    except BaseException:
        # The driver is interrupted (Ctrl-C, SIGTERM): take the running
        # benchmark's whole process group down with it, ranks included.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        raise
    return rc, out or "", err or "", time.monotonic() - t0


class Progress:
    def __init__(self, total, quiet=False):
        self.total = total
        self.done = 0
        self.t0 = time.monotonic()
        self.cost = {}   # class -> [seconds]
        self.pending = {}  # class -> remaining count
        self.tty = sys.stderr.isatty()
        self.quiet = quiet

    def plan(self, cls):
        self.pending[cls] = self.pending.get(cls, 0) + 1

    def eta(self):
        allc = [c for v in self.cost.values() for c in v]
        mean_all = sum(allc) / len(allc) if allc else 1.0
        left = 0.0
        for cls, n in self.pending.items():
            c = self.cost.get(cls)
            left += n * (sum(c) / len(c) if c else mean_all)
        return left

    def show(self, what):
        if self.quiet:
            return
        el = time.monotonic() - self.t0
        line = "[%3d/%d] %s elapsed, ~%s left | %s" % (self.done + 1, self.total, fmt_t(el),
                                                      fmt_t(self.eta()), what)
        if self.tty:
            sys.stderr.write("\r\033[K" + line[:160])
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def finish(self, cls, secs):
        self.done += 1
        self.cost.setdefault(cls, []).append(secs)
        self.pending[cls] = self.pending.get(cls, 1) - 1

    def end(self):
        if self.tty and not self.quiet:
            sys.stderr.write("\r\033[K")
        if not self.quiet:
            sys.stderr.write("done: %d runs in %s\n" % (self.done, fmt_t(time.monotonic() - self.t0)))


def fmt_t(s):
    s = int(s + 0.5)
    return "%d:%02d" % (s // 60, s % 60)


def log(msg):
    sys.stderr.write("compare: %s\n" % msg)
    sys.stderr.flush()


def bench_args(args, bench, ranks, mode):
    """Options for one benchmark run: sizes, iterations, warm-up."""
    kind = BENCHES[bench][2]
    over = ranks > ncores()
    lo, hi = args.size_range
    step = args.step
    if kind in ("rma", "rmacoll"):
        it, wu, lo, hi, step = rma_args(args, bench, over)
    elif args.quick:
        if kind == "pair":
            it, wu = (1000, 100) if bench == "latency" else (20, 2)
        elif kind == "pairs":
            it, wu = (20, 2) if not over else (3, 1)
        else:
            # 100 calls of 0.1-0.2 us measured 20 us in all: the 2-rank small
            # sizes moved by 30% between repeats. 1000 cost seconds.
            it, wu = (1000, 100) if not over else (3, 1)
        if over and not args.sizes_given:
            hi, step = min(hi, 64 << 10), max(step, 8)
    else:
        if kind == "pair":
            it, wu = (10000, 1000) if bench == "latency" else (100, 10)
        else:
            it, wu = (1000, 100) if not over else (20, 2)
            if kind == "pairs":
                it, wu = (100, 10) if not over else (10, 2)
    if args.iters:
        it = args.iters
    if args.warmup is not None:
        wu = args.warmup
    a = ["-m", "%d:%d" % (lo, hi), "-i", str(it), "-x", str(wu), "--json", "-f"]
    if step != 2:
        a += ["-s", str(step)]
    if mode == "cold":
        a.append("--cold")
    return a


def rma_args(args, bench, over):
    """(iters, warm-up, min size, max size, step) of a one-sided benchmark.
    --quick: latencies at 1 B to 32 KiB in steps of 8x (the 8-byte target,
    not first: MPICH's first size stalls for milliseconds now and then),
    bandwidths at 1 KiB to 1 MiB in steps of 4x (the 1 MiB target)."""
    lo, hi = args.size_range
    step = args.step
    if BENCHES[bench][2] == "rmacoll":
        # Open MPI's fence at 16 ranks on 2 cores: 0.1-0.3 ms; MPICH's: 110 ms.
        # Fence at 16 ranks is a target: 20 calls (5 moved by 100x under load).
        it, wu = (1000, 100) if not over else (20, 2)
        if bench.endswith("_rate"):
            it, wu = ((10000, 1000) if not args.quick else (1000, 100)) if not over else \
                ((5, 1) if args.quick else (20, 2))
    elif "_lat_" in bench:
        it, wu = (1000, 100) if args.quick else (10000, 1000)
        if args.quick and not args.sizes_given:
            lo, hi, step = 1, 32 << 10, max(step, 8)
    else:
        it, wu = (20, 2) if args.quick else (100, 10)
        if args.quick and not args.sizes_given:
            lo, hi, step = 1 << 10, 1 << 20, max(step, 4)
    return it, wu, lo, hi, step


def plan_jobs(args, benches):
    """[(bench, ranks, mode)] in run order."""
    jobs = []
    cores = ncores()
    for b in benches:
        if b in ("startup", "limits"):
            continue
        kind = BENCHES[b][2]
        if args.quick and kind in ("rma", "rmacoll") and b not in QUICK_RMA and \
                not args.benchmarks_given:
            continue
        modes = [m for m in args.modes if m == "hot" or not args.quick or b in QUICK_COLD
                 or args.cold_all]
        for n in args.ranks:
            if kind in ("pair", "rma") and n != 2:
                continue
            if kind == "pairs" and n % 2:
                continue
            if n < 2 and kind != "coll" and kind != "icoll":
                continue
            if args.quick and n > cores and b not in QUICK_OVERSUB and not args.benchmarks_given:
                continue
            for mode in modes:
                jobs.append((b, n, mode))
    if any(BENCHES[b][2] in ("pair", "rma") for b in benches if b in BENCHES) and \
            2 not in args.ranks:
        for b in benches:
            if b in BENCHES and BENCHES[b][2] in ("pair", "rma"):
                if args.quick and BENCHES[b][2] == "rma" and b not in QUICK_RMA and \
                        not args.benchmarks_given:
                    continue
                for mode in args.modes:
                    if mode == "hot" or not args.quick or b in QUICK_COLD:
                        jobs.append((b, 2, mode))
    return jobs


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="bench/compare", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Build and run Loom's benchmarks with Loom, Open MPI and MPICH; "
                    "write results.jsonl, report.md, snippet.md and plots/.",
        epilog=__doc__)
    ap.add_argument("--mpis", default=",".join(ALL_MPIS),
                    help="comma-separated: loom,openmpi,mpich (default all)")
    ap.add_argument("--quick", action="store_true",
                    help="short run (< 5 min on 2 cores): fewer iterations, cold buffers and "
                         "oversubscribed rank counts for a few benchmarks only")
    ap.add_argument("--ranks", default="2,16", help="rank counts (default 2,16)")
    ap.add_argument("--benchmarks", default="all",
                    help="comma-separated names or groups: pt2pt, coll, icoll, rma, startup, limits, "
                         "or single benchmarks (%s)" % ", ".join(BENCHES))
    ap.add_argument("--sizes", help="MIN:MAX message sizes (default 0:1M, pt2pt 0:4M in full mode)")
    ap.add_argument("--step", type=int, default=2, help="size factor between steps (default 2)")
    ap.add_argument("--iters", type=int, help="override timed iterations")
    ap.add_argument("--warmup", type=int, help="override warm-up iterations")
    ap.add_argument("--modes", default="hot,cold", help="buffer modes: hot,cold (default both)")
    ap.add_argument("--cold-all", action="store_true",
                    help="in --quick mode, run every benchmark with cold buffers too")
    ap.add_argument("--repeats", type=int, help="repeats, interleaved (default 3, --quick 2)")
    ap.add_argument("--startup-ranks", help="rank counts for startup (default 1,16,256,1024; "
                                            "--quick 1,16)")
    ap.add_argument("--timeout", type=float,
                    help="seconds per run before it is killed (default 60, --quick 30); the "
                         "sizes finished by then are kept")
    ap.add_argument("--loom-prefix", default=None,
                    help="Loom build or install prefix with bin/mpicc and bin/mpiexec "
                         "(default $LOOM_PREFIX or build/release)")
    ap.add_argument("--loom-args", default="", help="extra options for Loom's mpiexec")
    ap.add_argument("--openmpi-args", default="", help="extra options for mpirun.openmpi")
    ap.add_argument("--mpich-args", default="", help="extra options for mpirun.mpich")
    ap.add_argument("--subject", default="loom",
                    help="MPI compared with the faster of the others (default loom)")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "latest"),
                    help="output directory (default bench/results/latest)")
    ap.add_argument("--snippet-prefix", default=None,
                    help="path prefix for links in snippet.md (default: --out relative to the repo)")
    ap.add_argument("--print-snippet", action="store_true",
                    help="print the Markdown snippet for the README at the end")
    ap.add_argument("--report-only", metavar="JSONL",
                    help="only regenerate the report and plots from a results.jsonl")
    ap.add_argument("--no-install", action="store_true", help="never run apt-get")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 if any selected benchmark failed to build or run with any "
                         "selected MPI, or stopped early (for CI)")
    ap.add_argument("--quiet", action="store_true", help="no progress line")
    args = ap.parse_args(argv)

    args.mpis = [m.strip() for m in args.mpis.split(",") if m.strip()]
    args.ranks = [int(x) for x in args.ranks.split(",") if x.strip()]
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for m in args.modes:
        if m not in ("hot", "cold"):
            raise SystemExit("unknown buffer mode %r" % m)
    args.loom_prefix = args.loom_prefix or default_loom_prefix()
    args.repeats = args.repeats or (2 if args.quick else 3)
    args.timeout = args.timeout or (30.0 if args.quick else 60.0)
    args.sizes_given = bool(args.sizes)
    if args.sizes:
        lo, _, hi = args.sizes.partition(":")
        args.size_range = (parse_size(lo or "0"), parse_size(hi or "1M"))
    else:
        args.size_range = (0, 1 << 20)
    if args.startup_ranks:
        args.startup_ranks = [int(x) for x in args.startup_ranks.split(",")]
    else:
        args.startup_ranks = [1, 16] if args.quick else [1, 16, 256, 1024]
    args.benchmarks_given = args.benchmarks != "all"
    names = []
    for b in (args.benchmarks.split(",") if args.benchmarks_given else
              ["limits", "startup", "pt2pt", "coll", "icoll", "rma"]):
        b = b.strip()
        for x in GROUPS.get(b, [b]):
            if x not in BENCHES and x not in ("startup", "limits"):
                raise SystemExit("unknown benchmark %r" % x)
            if x not in names:
                names.append(x)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    command = "bench/compare " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    snippet_prefix = args.snippet_prefix
    if snippet_prefix is None:
        rel = os.path.relpath(out, REPO)
        snippet_prefix = "" if rel.startswith("..") else rel.rstrip("/") + "/"

    if args.report_only:
        recs = benchreport.load_jsonl(args.report_only)
        snip = benchreport.write_report(recs, out, snippet_prefix=snippet_prefix)
        if args.print_snippet:
            print(snip)
        log("report: %s" % os.path.join(out, "report.md"))
        return 0

    ensure_packages(args)
    mpis = make_mpis(args)
    jsonl_path = os.path.join(out, "results.jsonl")
    jf = open(jsonl_path, "w")

    def emit(rec):
        jf.write(json.dumps(rec, sort_keys=True) + "\n")
        jf.flush()

    emit(machine_info(mpis, args))
    emit({"type": "config", "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
          "command": command.strip(), "mpis": args.mpis, "ranks": args.ranks,
          "modes": args.modes, "repeats": args.repeats, "quick": args.quick,
          "benchmarks": names, "timeout_s": args.timeout, "subject": args.subject,
          "startup_ranks": args.startup_ranks})
    for name, mpi in mpis.items():
        if not mpi.available():
            log("%s unavailable: %s" % (benchreport.mpi_name(name), mpi.note))

    # build
    targets = {b: BENCHES[b][:2] for b in names if b in BENCHES}
    if "startup" in names:
        targets["hello"] = ("hello.c", [])
    log("building %d programs with %d MPI(s)" % (len(targets), len(mpis)))
    builds = build_all(mpis, targets, out, emit)

    # physical limits first (no MPI)
    exes = {}
    if "limits" in names:
        exes = build_limits(out)
        lo, hi = args.size_range
        hi = max(hi, 1 << 20) if not args.sizes_given else hi
        for mode in args.modes:
            if exes.get("memcpy_bw"):
                a = ["-m", "%d:%d" % (max(lo, 1), hi), "-i", "200" if args.quick else "1000",
                     "--json"] + (["-s", str(args.step)] if args.step != 2 else []) + \
                    (["--cold"] if mode == "cold" else [])
                rc, so, se, _ = run_cmd([exes["memcpy_bw"]] + a, {}, 120)
                for r in benchreport.parse_output(so):
                    emit(dict(r, type="result", mpi="limits", repeat=0))

    def run_floors(rep):
        """Two-core floors, once per repeat (the report takes their medians,
        as it does the MPIs'): a line bounced, a message through an inbox
        slot and through a pair's box, the OSU loop of an 8-byte Allreduce
        and Bcast with no MPI."""
        for t in ("cacheline", "slotline", "pairline", "collfloor"):
            if exes.get(t) and ncores() >= 2:
                rc, so, se, _ = run_cmd([exes[t], "--json", "-i",
                                         "200000" if args.quick else "1000000"], {}, 60)
                for r in benchreport.parse_output(so):
                    emit(dict(r, type="result", mpi="limits", repeat=rep))

    jobs = plan_jobs(args, names)
    order = list(mpis)
    total = args.repeats * (len(jobs) + (len(args.startup_ranks) if "startup" in names else 0)) * len(order)
    prog = Progress(total, args.quiet)
    for rep in range(args.repeats):
        for j in jobs:
            for m in order:
                prog.plan((m, j[1] > ncores()))
        if "startup" in names:
            for n in args.startup_ranks:
                for m in order:
                    prog.plan((m, "startup", n))
    for rep in range(args.repeats):
        if "limits" in names:
            run_floors(rep)
        # start-up: wall clock of `mpiexec -n N hello`
        if "startup" in names:
            for n in args.startup_ranks:
                for m in order:
                    prog.show("%s startup n=%d (repeat %d/%d)" % (m, n, rep + 1, args.repeats))
                    secs = run_startup(mpis[m], builds.get((m, "hello")), n, rep, args, emit)
                    prog.finish((m, "startup", n), secs)
        for bench, n, mode in jobs:
            for m in order:
                prog.show("%s %s n=%d %s (repeat %d/%d)" % (m, bench, n, mode, rep + 1, args.repeats))
                secs = run_bench(mpis[m], builds.get((m, bench)), bench, n, mode, rep, args, emit)
                prog.finish((m, n > ncores()), secs)
    prog.end()
    jf.close()

    recs = benchreport.load_jsonl(jsonl_path)
    snip = benchreport.write_report(recs, out, snippet_prefix=snippet_prefix, command=command.strip())
    log("results: %s" % jsonl_path)
    log("report:  %s" % os.path.join(out, "report.md"))
    log("plots:   %s" % os.path.join(out, "plots"))
    if args.print_snippet:
        print(snip)
    if args.strict:
        d = benchreport.Data(recs)
        bad = dict(d.unavailable(), **d.partial())
        missing = [f for f in ("results.jsonl", "report.md", "snippet.md")
                   if not os.path.exists(os.path.join(out, f))]
        for (m, b, n, mode), why in sorted(bad.items()):
            log("FAILED %s %s n=%s %s: %s" % (m, b, n, mode, why))
        for f in missing:
            log("FAILED: %s not written" % f)
        if bad or missing:
            return 1
    return 0


def parse_size(s):
    s = s.strip()
    mult = 1
    if s and s[-1] in "kKmMgG":
        mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[s[-1].lower()]
        s = s[:-1]
    return int(float(s) * mult)


def run_startup(mpi, build, n, rep, args, emit):
    base = {"mpi": mpi.name, "bench": "startup", "ranks": 0, "mode": "hot", "repeat": rep}
    if not build or not build.get("ok"):
        emit(dict(base, type="run", ok=False, size=n,
                  reason=(build or {}).get("reason", mpi.note or "not built")))
        return 0.0
    timeout = max(args.timeout, 60.0) if n > 16 else args.timeout
    rc, so, se, secs = run_cmd(mpi.cmd(n, build["exe"], []), mpi.env, timeout)
    ok = rc == 0 and ("of %d" % n) in so
    rec = dict(base, type="run", ok=ok, size=n, wall_s=round(secs, 3))
    if ok:
        emit(dict(base, type="result", size=n, value=secs * 1e3, unit="ms"))
    else:
        rec["reason"] = "timeout after %ds" % timeout if rc is None else \
            "exit %s: %s" % (rc, benchreport.first_error_line(se + "\n" + so))
    emit(rec)
    return secs


def run_bench(mpi, build, bench, n, mode, rep, args, emit):
    base = {"mpi": mpi.name, "bench": bench, "ranks": n, "mode": mode, "repeat": rep}
    if not build or not build.get("ok"):
        emit(dict(base, type="run", ok=False, results=0,
                  reason=(build or {}).get("reason", mpi.note or "not built")))
        return 0.0
    a = bench_args(args, bench, n, mode)
    rc, so, se, secs = run_cmd(mpi.cmd(n, build["exe"], a), mpi.env, args.timeout)
    res = benchreport.parse_output(so)
    for r in res:
        r = dict(r, type="result", mpi=mpi.name, repeat=rep)
        r["ranks"] = n
        emit(r)
    rec = dict(base, type="run", ok=rc == 0 and bool(res), results=len(res), wall_s=round(secs, 3),
               args=a)
    if rc is None:
        rec["reason"] = "timeout after %ds (%d sizes done)" % (args.timeout, len(res))
    elif rc != 0:
        rec["reason"] = "exit %s: %s" % (rc, benchreport.first_error_line(se + "\n" + so))
    elif not res:
        rec["reason"] = "no results in output"
    emit(rec)
    return secs


if __name__ == "__main__":
    # SIGTERM ends the driver like Ctrl-C, so that run_cmd cleans up.
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        sys.exit(130)
