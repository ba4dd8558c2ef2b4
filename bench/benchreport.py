"""Parsing, statistics, Markdown report and plots for bench/compare.

Everything here works on the JSON-lines file that the driver writes
(results.jsonl), so a report can be regenerated from recorded data
(`bench/compare --report-only results.jsonl`) and the unit tests run on
recorded samples.  Standard library only, except the plots (matplotlib,
imported lazily).

Record types in results.jsonl (field "type"):
  machine  the machine's description (CPU, cores, NUMA, caches, versions)
  config   the driver's options and the command line
  build    one benchmark built (or not) with one MPI: ok, reason
  run      one benchmark run: mpi, bench, ranks, mode, repeat, ok, reason
  result   one measurement: mpi, bench, ranks, mode, size, repeat, value,
           unit, avg_us, min_us, max_us, iters (+ benchmark extras)
"""

import json
import math
import os
import statistics

MPI_NAMES = {"loom": "Loom", "openmpi": "Open MPI", "mpich": "MPICH", "limits": "hardware"}
HIGHER_IS_BETTER = {"MB/s", "msg/s", "ops/s"}
NA = "n/a"

# Sizes shown in the summary table: (bench, size, ranks or None = every rank count)
SUMMARY_ROWS = [
    ("latency", 8, 2),
    ("latency", 1 << 20, 2),
    ("bw", 1 << 20, 2),
    ("bibw", 1 << 20, 2),
    ("mbw_mr", 8, None),
    ("barrier", 0, None),
    ("bcast", 8, None),
    ("allreduce", 8, None),
    ("allreduce", 1 << 20, None),
    ("alltoall", 8, None),
    ("put_lat_flush", 8, 2),
    ("put_bw_flush", 1 << 20, 2),
    ("fence", 0, None),
    ("fop_rate", 8, None),
    ("startup", None, None),
]

# The project's one-sided targets, printed by rma_targets_section():
# (label, bench, size, ranks, test, threshold).  Tests: "ratio_max": the
# subject's time / the faster other's time at most threshold; "speedup_min":
# the subject's bandwidth / the better other's at least threshold;
# "memcpy_min": the subject's bandwidth / single-core memcpy (hot, same
# size) at least threshold.
RMA_TARGETS = [
    ("8-byte Put+flush latency", "put_lat_flush", 8, 2, "ratio_max", 0.3),
    ("1 MiB Put bandwidth (lock_all + flush)", "put_bw_flush", 1 << 20, 2, "speedup_min", 1.5),
    ("1 MiB Put bandwidth, share of memcpy", "put_bw_flush", 1 << 20, 2, "memcpy_min", 0.7),
    ("MPI_Win_fence at 16 ranks", "fence", 0, 16, "ratio_max", 0.1),
]


def mpi_name(mpi):
    return MPI_NAMES.get(mpi, mpi)


def parse_output(text):
    """JSON objects with a "bench" field, one per line, from a benchmark's
    output; other lines (MPI warnings, text output) are ignored."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("{") and line.endswith("}")):
            # Open MPI may prefix output with a tag; find the object
            i = line.find('{"bench"')
            if i < 0 or not line.endswith("}"):
                continue
            line = line[i:]
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and "bench" in obj and "value" in obj:
            out.append(obj)
    return out


def first_error_line(text, default="failed"):
    """The most telling line of a compiler's or launcher's error output."""
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    for key in ("error:", "Error", "ERROR", "undefined reference", "not found", "No such file"):
        for l in lines:
            if key in l:
                return l[:300]
    return lines[0][:300] if lines else default


def load_jsonl(path):
    recs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    recs.append(json.loads(line))
                except ValueError:
                    pass
    return recs


def median(values):
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return statistics.median(vals) if vals else None


def lower_is_better(unit):
    return unit not in HIGHER_IS_BETTER


def best_of(values, unit):
    vals = [v for v in values if v is not None and v > 0]
    if not vals:
        return None
    return min(vals) if lower_is_better(unit) else max(vals)


def time_ratio(subject, others, unit):
    """Subject's time / the time of the faster of the others (< 1: subject
    faster).  For a rate or bandwidth the time ratio is best / subject."""
    best = best_of(others, unit)
    if subject is None or subject <= 0 or best is None:
        return None
    return subject / best if lower_is_better(unit) else best / subject


class Data:
    """Medians over repeats of every (mpi, bench, ranks, mode, size)."""

    def __init__(self, records):
        self.machine = {}
        self.config = {}
        self.raw = {}        # (bench, ranks, mode) -> size -> mpi -> [values]
        self.by_repeat = {}  # (bench, ranks, mode, size, mpi) -> {repeat: value}
        self.extras = {}     # (bench, ranks, mode) -> size -> mpi -> {field: [values]}
        self.units = {}      # bench -> unit
        self.runs = {}       # (mpi, bench, ranks, mode) -> [run records]
        self.builds = {}     # (mpi, target) -> build record
        self.mpis = []
        for r in records:
            t = r.get("type")
            if t == "machine":
                self.machine = r
            elif t == "config":
                self.config = r
                for m in r.get("mpis", []):
                    if m not in self.mpis:
                        self.mpis.append(m)
            elif t == "build":
                self.builds[(r["mpi"], r["target"])] = r
            elif t == "run":
                self.runs.setdefault((r["mpi"], r["bench"], r["ranks"], r["mode"]), []).append(r)
            elif t == "result":
                key = (r["bench"], r["ranks"], r.get("mode", "hot"))
                mpi = r["mpi"]
                if mpi not in self.mpis and mpi != "limits":
                    self.mpis.append(mpi)
                self.units.setdefault(r["bench"], r.get("unit", "us"))
                self.raw.setdefault(key, {}).setdefault(r["size"], {}).setdefault(mpi, []).append(
                    r["value"])
                self.by_repeat.setdefault(key + (r["size"], mpi), {})[r.get("repeat", 0)] = \
                    r["value"]
                ex = self.extras.setdefault(key, {}).setdefault(r["size"], {}).setdefault(mpi, {})
                for f in ("overlap_pct", "overall_us", "compute_us", "round_trip_us", "min_us",
                          "max_us"):
                    if f in r:
                        ex.setdefault(f, []).append(r[f])

    def value(self, bench, ranks, mode, size, mpi):
        return median(self.raw.get((bench, ranks, mode), {}).get(size, {}).get(mpi, []))

    def paired_ratios(self, num, den):
        """num's value over den's, per repeat where both were measured (keys
        (bench, ranks, mode, size, mpi)): floors measured at the start of each
        repeat against the MPIs' runs of that repeat."""
        a, b = self.by_repeat.get(num, {}), self.by_repeat.get(den, {})
        return [a[k] / b[k] for k in sorted(a) if k in b and b[k]]

    def extra(self, bench, ranks, mode, size, mpi, field):
        return median(self.extras.get((bench, ranks, mode), {}).get(size, {}).get(mpi, {})
                      .get(field, []))

    def keys(self, bench=None):
        """(bench, ranks, mode) keys, hot buffers before cold."""
        return sorted((k for k in self.raw if bench is None or k[0] == bench),
                      key=lambda k: (bench_order(k[0]), k[1], k[2] != "hot", k[2]))

    def sized(self, key):
        """False for benchmarks without a message size (barrier, startup)."""
        return self.sizes(key) != [0]

    def benches(self):
        seen = []
        for b, _, _ in sorted(self.raw, key=lambda k: bench_order(k[0])):
            if b not in seen:
                seen.append(b)
        return seen

    def sizes(self, key):
        return sorted(self.raw.get(key, {}))

    def unit(self, bench):
        return self.units.get(bench, "us")

    def unavailable(self):
        """(mpi, bench, ranks, mode) -> reason, for runs that never gave a result."""
        out = {}
        for (mpi, bench, ranks, mode), runs in sorted(self.runs.items()):
            if bench == "startup":  # one run per N (in "size"); show N as the rank count
                for r in runs:
                    n = r.get("size")
                    if mpi not in self.raw.get((bench, ranks, mode), {}).get(n, {}):
                        out.setdefault((mpi, bench, n, mode), r.get("reason") or "no output")
                continue
            got = any(mpi in per for per in self.raw.get((bench, ranks, mode), {}).values())
            if not got:
                reasons = [r.get("reason") for r in runs if r.get("reason")]
                out[(mpi, bench, ranks, mode)] = reasons[0] if reasons else "no output"
        return out

    def partial(self):
        """Runs that stopped early (timeout) but gave some sizes."""
        out = {}
        for (mpi, bench, ranks, mode), runs in sorted(self.runs.items()):
            for r in runs:
                if not r.get("ok") and r.get("results", 0) > 0:
                    out[(mpi, bench, ranks, mode)] = r.get("reason", "")
        return out


BENCH_ORDER = ["startup", "latency", "bw", "bibw", "mbw_mr", "barrier", "bcast", "gather",
               "gatherv", "scatter", "scatterv", "allgather", "allgatherv", "alltoall",
               "alltoallv", "alltoallw", "reduce", "allreduce", "reduce_scatter",
               "reduce_scatter_block", "scan", "exscan", "ibarrier", "ibcast", "ireduce",
               "iallreduce", "iallgather", "ialltoall", "igather", "iscatter",
               "put_lat_flush", "put_lat_lock", "put_lat_fence", "put_lat_pscw",
               "get_lat_flush", "get_lat_lock", "get_lat_fence", "get_lat_pscw",
               "acc_lat_flush", "gacc_lat_flush", "fop_lat_flush", "cas_lat_flush",
               "put_bw_flush", "put_bw_lock", "put_bw_fence", "put_bw_pscw",
               "get_bw_flush", "get_bw_lock", "get_bw_fence", "get_bw_pscw",
               "put_bibw_fence", "put_bibw_pscw", "fence", "lock_all", "fop_rate", "cas_rate",
               "memcpy",
               "cacheline", "slotline", "pairline", "floor_allreduce", "floor_bcast"]

# Physical limits (mpi "limits"): reported in their own section, not plotted.
LIMIT_BENCHES = ("memcpy", "cacheline", "slotline", "pairline", "floor_allreduce", "floor_bcast")


def bench_order(b):
    return (BENCH_ORDER.index(b) if b in BENCH_ORDER else len(BENCH_ORDER), b)


def fmt_size(s):
    if s is None:
        return ""
    if s >= 1 << 20 and s % (1 << 20) == 0:
        return "%d MiB" % (s >> 20)
    if s >= 1024 and s % 1024 == 0:
        return "%d KiB" % (s >> 10)
    return "%d B" % s


def fmt_val(v, unit=None):
    if v is None:
        return NA
    if unit in ("msg/s", "ops/s"):
        return "%.3g M" % (v / 1e6) if v >= 1e5 else "%.3g" % v
    if v >= 1000:
        return "%.0f" % v
    if v >= 100:
        return "%.1f" % v
    if v >= 1:
        return "%.2f" % v
    return "%.3f" % v


def fmt_ratio(r):
    return NA if r is None else "%.2f" % r


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---:" if i else ":---" for i in range(len(header))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def unit_label(unit):
    if unit == "us":
        return "µs, lower is better"
    if unit == "ms":
        return "ms, lower is better"
    return unit + ", higher is better"


def compared_mpis(data):
    return [m for m in data.mpis if m != "limits"]


def subject_of(data):
    return data.config.get("subject", "loom")


def ratio_row(data, key, size):
    mpis = compared_mpis(data)
    subj = subject_of(data)
    unit = data.unit(key[0])
    vals = {m: data.value(key[0], key[1], key[2], size, m) for m in mpis}
    others = [vals[m] for m in mpis if m != subj]
    return vals, time_ratio(vals.get(subj), others, unit)


def ratio_header(data):
    subj = subject_of(data)
    return "%s / best" % mpi_name(subj)


def summary_table(data):
    mpis = compared_mpis(data)
    header = ["Benchmark", "Size", "Ranks", "Unit"] + [mpi_name(m) for m in mpis] + \
        [ratio_header(data)]
    rows = []
    for bench, size, ranks in SUMMARY_ROWS:
        for key in data.keys(bench):
            if key[2] != "hot" or (ranks is not None and key[1] != ranks):
                continue
            sizes = data.sizes(key) if size is None else [size]
            for s in sizes:
                if s not in data.raw.get(key, {}):
                    continue
                vals, r = ratio_row(data, key, s)
                unit = data.unit(bench)
                label = "-" if bench == "startup" or not data.sized(key) else fmt_size(s)
                rows.append([bench, label, s if bench == "startup" else key[1], unit] +
                            [fmt_val(vals[m], unit) for m in mpis] + [fmt_ratio(r)])
    return md_table(header, rows) if rows else "_no results_"


def limits_section(data):
    out = []
    cl = data.value("cacheline", 2, "hot", 64, "limits")
    rt = data.extra("cacheline", 2, "hot", 64, "limits", "round_trip_us")
    mpis = compared_mpis(data)
    slot = data.value("slotline", 2, "hot", 8, "limits")
    pair = data.value("pairline", 2, "hot", 8, "limits")
    if cl is not None:
        out.append("Cache-line round trip between two cores: **%.0f ns** "
                   "(one-way %.0f ns), the floor for any intra-node message; the best of "
                   "polling back to back and polling with a pause (`bench/cacheline.c`; which "
                   "is faster depends on the CPU).\n"
                   % ((rt or 2 * cl) * 1e3, cl * 1e3))
        if slot is not None:
            out.append("A message through a slot of the receiver's inbox, each direction in "
                       "its own line, with no MPI work around it (`bench/slotline.c`): "
                       "**%.0f ns** one-way, %.2f× the line's one-way time: what any protocol "
                       "pays whose reply travels in another line than the request.\n"
                       % (slot * 1e3, slot / cl))
        if pair is not None:
            out.append("A message through the box of a pair of ranks, both directions in one "
                       "line and each reply acknowledging its request in the same store, with "
                       "no MPI work around it (`bench/pairline.c`, Loom's protocol for tiny "
                       "messages between ranks that talk often): **%.0f ns** one-way, %.2f× "
                       "the line's.\n" % (pair * 1e3, pair / cl))
        rows = []
        lat_sizes = [s for s in (0, 1, 8) if data.value("latency", 2, "hot", s, mpis[0] if mpis else "")
                     is not None or any(data.value("latency", 2, "hot", s, m) is not None for m in mpis)]
        for s in lat_sizes[:2]:
            row = [fmt_size(s)]
            for m in mpis:
                v = data.value("latency", 2, "hot", s, m)
                cell = NA if v is None else "%s µs = %.1f× one-way" % (fmt_val(v), v / cl)
                if v is not None and slot:
                    cell += ", %.2f× slot" % (v / slot)
                if v is not None and pair:
                    cell += ", %.2f× box" % (v / pair)
                row.append(cell)
            rows.append(row)
        if rows:
            floors = [n for n, v in (("the inbox slot's", slot), ("the pair box's", pair)) if v]
            out.append("Point-to-point latency (2 ranks) against the cache-line one-way time%s:\n"
                       % ((" and " + " and ".join(floors)) if floors else ""))
            out.append(md_table(["Size"] + [mpi_name(m) for m in mpis], rows))
            out.append("")
            paired = []
            for s in lat_sizes[:2]:
                for m in mpis:
                    r = data.paired_ratios(("latency", 2, "hot", s, m),
                                           ("cacheline", 2, "hot", 64, "limits"))
                    if len(r) >= 2:
                        paired.append("%s %s: %.1f× (%.1f-%.1f×, %d repeats)" % (
                            mpi_name(m), fmt_size(s), median(r), min(r), max(r), len(r)))
            if paired:
                out.append("The same, repeat by repeat (each run over the line measured at the "
                           "start of its repeat; the medians above may take the line and the "
                           "latency from different states of a machine whose line time moves): "
                           "%s.\n" % "; ".join(paired))
    rows = []
    subj = subject_of(data)
    for coll in ("allreduce", "bcast"):
        fl = data.value("floor_" + coll, 2, "hot", 8, "limits")
        if fl is None:
            continue
        vals = {m: data.value(coll, 2, "hot", 8, m) for m in mpis}
        if all(v is None for v in vals.values()):
            continue
        others = [v for m, v in vals.items() if m != subj and v is not None]
        row = [coll, fmt_val(fl)] + [NA if vals[m] is None else
                                      "%s (%.2f×)" % (fmt_val(vals[m]), vals[m] / fl) for m in mpis]
        row.append(NA if not others or vals.get(subj) is None else
                   "%.2f" % (vals[subj] / min(others)))
        rows.append(row)
    if rows:
        out.append("The OSU loop of an 8-byte collective on 2 ranks with no MPI at all "
                   "(`bench/collfloor.c`: two pinned threads; the clock, the exchange through "
                   "one line per thread, the clock, an untimed barrier that lets either the "
                   "last to arrive or the root out first, whichever gives the lower time), "
                   "against each MPI (µs, and × the floor). No MPI can measure below the "
                   "floor; a target of x times the faster of the others is out of reach where "
                   "x × its time is below the floor:\n")
        out.append(md_table(["Collective", "floor"] + [mpi_name(m) for m in mpis] +
                            ["%s / best" % mpi_name(subj)], rows))
        out.append("")
    for mode in ("hot", "cold"):
        key = ("memcpy", 1, mode)
        if key not in data.raw:
            continue
        rows = []
        for s in data.sizes(key):
            mc = data.value("memcpy", 1, mode, s, "limits")
            row = [fmt_size(s), fmt_val(mc)]
            for m in mpis:
                bw = data.value("bw", 2, mode, s, m)
                row.append(NA if bw is None or not mc else "%s (%.0f%%)" % (fmt_val(bw), 100 * bw / mc))
            rows.append(row)
        out.append("Single-core memcpy bandwidth (%s buffers) and each MPI's 2-rank `bw` "
                   "as a share of it (MB/s):\n" % mode)
        out.append(md_table(["Size", "memcpy"] + [mpi_name(m) for m in mpis], rows))
        out.append("")
        rows = []
        for s in data.sizes(("put_bw_flush", 2, mode)):
            mc = data.value("memcpy", 1, mode, s, "limits")
            if not mc:
                continue
            row = [fmt_size(s), fmt_val(mc)]
            for m in mpis:
                bw = data.value("put_bw_flush", 2, mode, s, m)
                row.append(NA if bw is None else "%s (%.0f%%)" % (fmt_val(bw), 100 * bw / mc))
            rows.append(row)
        if rows:
            out.append("The same for one-sided `put_bw_flush` (MPI_Put windows, lock_all + "
                       "flush, %s buffers, MB/s):\n" % mode)
            out.append(md_table(["Size", "memcpy"] + [mpi_name(m) for m in mpis], rows))
            out.append("")
    return "\n".join(out) if out else "_physical limits not measured_"


def rma_targets_section(data):
    """The project's one-sided targets (RMA_TARGETS): measured value, the
    ratio, the target, and whether it is met; "" when no RMA result."""
    mpis = compared_mpis(data)
    subj = subject_of(data)
    rows = []
    for label, bench, size, ranks, test, thr in RMA_TARGETS:
        if (bench, ranks, "hot") not in data.raw:
            continue
        unit = data.unit(bench)
        vals = {m: data.value(bench, ranks, "hot", size, m) for m in mpis}
        mine = vals.get(subj)
        others = [vals[m] for m in mpis if m != subj and vals[m] is not None]
        best = best_of(others, unit)
        ratio, target = None, None
        if test == "ratio_max":
            ratio = mine / best if mine and best else None
            target = "≤ %.2g× the faster other" % thr
            met = ratio is not None and ratio <= thr
        elif test == "speedup_min":
            ratio = mine / best if mine and best else None
            target = "≥ %.2g× the better other" % thr
            met = ratio is not None and ratio >= thr
        else:
            mc = data.value("memcpy", 1, "hot", size, "limits")
            ratio = mine / mc if mine and mc else None
            best = mc
            target = "≥ %.0f%% of memcpy" % (100 * thr)
            met = ratio is not None and ratio >= thr
        rows.append([label, "%d" % ranks, NA if mine is None else fmt_val(mine, unit) + " " + unit,
                     (fmt_val(best, unit) + " " + unit) if best else NA,
                     NA if ratio is None else ("%.0f%%" % (100 * ratio) if test == "memcpy_min"
                                               else "%.2f×" % ratio),
                     target, NA if ratio is None else ("yes" if met else "**no**")])
    if not rows:
        return ""
    return ("%s against the project's one-sided targets (hot buffers; \"other\": the faster "
            "of the other MPIs, or memcpy):\n\n" % mpi_name(subj) +
            md_table(["Target", "Ranks", mpi_name(subj), "other", "ratio", "target", "met"],
                     rows) + "\n")


def machine_section(m):
    if not m:
        return "_machine not recorded_"
    rows = []
    for k, label in (("cpu_model", "CPU"), ("cores", "Cores (online)"), ("sockets", "Sockets"),
                     ("numa_nodes", "NUMA nodes"), ("caches", "Caches"), ("memory", "Memory"),
                     ("kernel", "Kernel"), ("os", "OS"), ("compiler", "C compiler"),
                     ("hostname", "Host")):
        if m.get(k) not in (None, ""):
            rows.append([label, m[k]])
    for mpi, v in sorted(m.get("mpi_versions", {}).items()):
        rows.append(["%s version" % mpi_name(mpi), v])
    return md_table(["", ""], rows)


def bench_section(data, bench, plot_rel):
    out = []
    unit = data.unit(bench)
    mpis = compared_mpis(data)
    out.append("### %s\n" % bench)
    if plot_rel:
        out.append("![%s](%s)\n" % (bench, plot_rel))
    for key in data.keys(bench):
        _, ranks, mode = key
        head = "**%d ranks, %s buffers** (%s)" % (ranks, mode, unit_label(unit))
        if bench == "startup":
            head = "**wall-clock time of `mpiexec -n N hello`** (%s)" % unit_label(unit)
        out.append(head + "\n")
        first = "Ranks" if bench == "startup" else "Size"
        header = [first] + [mpi_name(m) for m in mpis] + [ratio_header(data)]
        overlap = bench.startswith("i") and any(
            data.extra(bench, ranks, mode, s, m, "overlap_pct") is not None
            for s in data.sizes(key) for m in mpis)
        if overlap:
            header += ["overlap %% %s" % mpi_name(m) for m in mpis]
        rows = []
        for s in data.sizes(key):
            vals, r = ratio_row(data, key, s)
            label = str(s) if bench == "startup" else (fmt_size(s) if data.sized(key) else "-")
            row = [label] + [fmt_val(vals[m], unit) for m in mpis] + [fmt_ratio(r)]
            if overlap:
                for m in mpis:
                    ov = data.extra(bench, ranks, mode, s, m, "overlap_pct")
                    row.append(NA if ov is None else "%.0f" % ov)
            rows.append(row)
        out.append(md_table(header, rows))
        out.append("")
    return "\n".join(out)


def unavailable_section(data):
    un = data.unavailable()
    part = data.partial()
    if not un and not part:
        return "Every benchmark ran with every MPI."
    rows = []
    for (mpi, bench, ranks, mode), why in sorted(un.items()):
        rows.append([mpi_name(mpi), bench, ranks, mode, "n/a: " + why.replace("|", "/")])
    for (mpi, bench, ranks, mode), why in sorted(part.items()):
        rows.append([mpi_name(mpi), bench, ranks, mode, "partial: " + why.replace("|", "/")])
    return md_table(["MPI", "Benchmark", "Ranks", "Buffers", "Why"], rows)


def make_report(data, plots=None, title="Loom performance comparison"):
    """The Markdown report.  plots: bench -> relative path of its PNG."""
    plots = plots or {}
    c = data.config
    subj = subject_of(data)
    out = ["# %s\n" % title]
    if c:
        out.append("Generated %s with `%s`.\n" % (c.get("date", "?"), c.get("command", "bench/compare")))
        out.append("MPIs: %s; ranks: %s; repeats: %s (medians shown); buffers: %s.\n" % (
            ", ".join(mpi_name(m) for m in c.get("mpis", [])),
            ", ".join(str(r) for r in c.get("ranks", [])), c.get("repeats", "?"),
            ", ".join(c.get("modes", ["hot"]))))
    out.append("Ratio column: %s's time / the time of the faster of the others "
               "(for bandwidths and rates: best / %s); below 1 means %s is faster. "
               "n/a: not measured or not available (see the end).\n" % (
                   mpi_name(subj), mpi_name(subj), mpi_name(subj)))
    out.append("## Machine\n")
    out.append(machine_section(data.machine) + "\n")
    out.append("## Summary\n")
    out.append(summary_table(data) + "\n")
    rma = rma_targets_section(data)
    if rma:
        out.append("## One-sided targets\n")
        out.append(rma)
    out.append("## Physical limits\n")
    out.append(limits_section(data) + "\n")
    out.append("## Results\n")
    for bench in data.benches():
        if bench in LIMIT_BENCHES:
            continue
        out.append(bench_section(data, bench, plots.get(bench)))
    out.append("## Unavailable or partial\n")
    out.append(unavailable_section(data) + "\n")
    return "\n".join(out)


def make_snippet(data, plots=None, prefix="", command="bench/compare"):
    """A short Markdown block for the README: summary table, one or two
    plots (paths prefixed with `prefix`) and the command that regenerates."""
    plots = plots or {}
    out = ["<!-- generated by bench/compare; do not edit by hand -->",
           "Measured on %s (%s cores), %s. Regenerate with:\n" % (
               data.machine.get("cpu_model", "?"), data.machine.get("cores", "?"),
               data.config.get("date", "?")),
           "```sh\n%s\n```\n" % command,
           summary_table(data), ""]
    for b in ("latency", "allreduce", "barrier"):
        if b in plots and len([l for l in out if l.startswith("![")]) < 2:
            out.append("![%s](%s%s)" % (b, prefix, plots[b]))
    out.append("\nFull report: [%sreport.md](%sreport.md)\n" % (prefix, prefix))
    return "\n".join(out)


MPI_STYLE = {"loom": ("tab:red", "o"), "openmpi": ("tab:blue", "s"), "mpich": ("tab:green", "^")}


def _size_label(x, _pos=None):
    if x < 1:
        return "0" if x > 0 else ""
    x = int(round(x))
    for div, suf in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if x >= div and x % div == 0:
            return "%d%s" % (x // div, suf)
    return str(x)


def _panels(data, bench):
    """[(title, xlabel, {mpi: [(x, y)]}, mode)] for one benchmark."""
    keys = data.keys(bench)
    mpis = compared_mpis(data) + (["limits"] if bench in ("memcpy",) else [])
    panels = []
    if bench == "startup":
        for key in keys:
            series = {m: [(s, data.value(*key, s, m)) for s in data.sizes(key)] for m in mpis}
            panels.append(("start-up: wall clock of mpiexec -n N hello", "ranks (N)", series,
                           key[2]))
    elif keys and all(not data.sized(k) for k in keys):
        for mode in sorted({k[2] for k in keys}, key=lambda m: m != "hot"):
            ks = [k for k in keys if k[2] == mode]
            series = {m: [(k[1], data.value(k[0], k[1], k[2], 0, m)) for k in ks] for m in mpis}
            panels.append(("%s, %s buffers" % (bench, mode), "ranks", series, mode))
    else:
        for key in keys:
            series = {m: [(s if s > 0 else 0.5, data.value(*key, s, m)) for s in data.sizes(key)]
                      for m in mpis}
            panels.append(("%s, %d ranks, %s buffers" % (bench, key[1], key[2]),
                           "message size (bytes)", series, key[2]))
    return panels


def make_plots(data, outdir):
    """One PNG per benchmark: value against message size (log-log), one
    line per MPI, one panel per (ranks, buffers); benchmarks without a size
    (barrier, startup) against the rank count.  Returns bench -> file name."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        return {}
    os.makedirs(outdir, exist_ok=True)
    files = {}
    mpis = compared_mpis(data)
    cl = data.value("cacheline", 2, "hot", 64, "limits")
    for bench in data.benches():
        if bench in LIMIT_BENCHES:
            continue
        panels = _panels(data, bench)
        if not panels:
            continue
        unit = data.unit(bench)
        n = len(panels)
        cols = min(n, 2)
        rows = (n + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.4 * rows), squeeze=False)
        for i, (title, xlabel, series, mode) in enumerate(panels):
            ax = axes[i // cols][i % cols]
            plotted = False
            xs_all = sorted({p[0] for pts in series.values() for p in pts})
            for m in mpis:
                pts = [(x, v) for x, v in series.get(m, []) if v is not None and v > 0]
                color, marker = MPI_STYLE.get(m, (None, "x"))
                if not pts:
                    ax.plot([], [], marker=marker, color=color, linestyle="none",
                            label="%s (n/a)" % mpi_name(m))
                    continue
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color,
                        label=mpi_name(m), linewidth=1.6, markersize=4)
                plotted = True
            # physical limits for comparison
            if bench == "latency" and cl is not None:
                ax.axhline(cl, color="gray", linestyle=":", label="cache-line one-way")
            if bench in ("latency", "bw", "bibw") or "_bw_" in bench or "_bibw_" in bench:
                mk = ("memcpy", 1, mode)
                pts = [(s, data.value("memcpy", 1, mode, s, "limits")) for s in data.sizes(mk)
                       if s in xs_all]
                pts = [(s, v) for s, v in pts if v]
                if pts:
                    if bench == "latency":  # time of one copy: bytes / (MB/s) = us
                        pts = [(s, s / v) for s, v in pts]
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], color="gray",
                            linestyle="--", label="memcpy (1 core)")
            ax.set_xlabel(xlabel)
            ax.set_ylabel(unit.replace("us", "µs"))
            if plotted:
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.xaxis.set_major_formatter(FuncFormatter(_size_label))
                if xs_all and len(xs_all) <= 12:
                    ax.set_xticks(xs_all)
                if xs_all:
                    ax.set_xlim(min(xs_all) / 1.5, max(xs_all) * 1.5)
            else:
                ax.text(0.5, 0.5, "no results (n/a)", ha="center", va="center",
                        transform=ax.transAxes)
            ax.legend(fontsize=8)
            ax.set_title(title, fontsize=10)
            ax.grid(True, which="major", alpha=0.4)
            ax.grid(True, which="minor", alpha=0.12)
        for j in range(n, rows * cols):
            axes[j // cols][j % cols].axis("off")
        fig.tight_layout()
        name = "%s.png" % bench
        fig.savefig(os.path.join(outdir, name), dpi=90)
        plt.close(fig)
        files[bench] = name
    return files


def write_report(records, outdir, plots_subdir="plots", snippet_prefix=None, command=None):
    """Writes report.md, snippet.md and plots/ into outdir; returns the
    snippet text."""
    data = Data(records)
    os.makedirs(outdir, exist_ok=True)
    plots = make_plots(data, os.path.join(outdir, plots_subdir))
    rel = {b: "%s/%s" % (plots_subdir, f) for b, f in plots.items()}
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write(make_report(data, rel))
    if snippet_prefix is None:
        snippet_prefix = ""
    snippet = make_snippet(data, rel, snippet_prefix,
                           command or data.config.get("command", "bench/compare"))
    with open(os.path.join(outdir, "snippet.md"), "w") as f:
        f.write(snippet)
    return snippet
