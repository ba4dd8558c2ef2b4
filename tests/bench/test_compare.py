"""Unit tests of bench/compare's parsing, statistics and report generation,
on recorded output in tests/bench/data/.  Standard library unittest only:

    /usr/bin/python3 -m unittest discover -s tests/bench -v
"""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "data")
sys.path.insert(0, os.path.join(REPO, "bench"))

import benchreport as br  # noqa: E402
import compare  # noqa: E402


def read(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


def result(mpi, bench, size, value, ranks=2, mode="hot", repeat=0, unit="us", **kw):
    return dict(type="result", mpi=mpi, bench=bench, size=size, value=value, ranks=ranks,
                mode=mode, repeat=repeat, unit=unit, **kw)


class ParseTest(unittest.TestCase):
    def test_json_lines_among_noise(self):
        res = br.parse_output(read("openmpi_latency_output.txt"))
        # 8 complete objects; the banner, the truncated object and text lines are skipped
        self.assertEqual([r["size"] for r in res], [0, 1, 2, 4, 8, 16, 32, 64])
        self.assertTrue(all(r["bench"] == "latency" and r["unit"] == "us" for r in res))
        self.assertAlmostEqual(res[1]["value"], 0.30963)
        self.assertTrue(res[0]["rank0_only"])

    def test_prefixed_line(self):
        res = br.parse_output('[1,0]<stdout>:{"bench":"bw","size":8,"value":70.5}\nxx {"a":1}\n')
        self.assertEqual(len(res), 1)
        self.assertEqual(res[0]["value"], 70.5)

    def test_empty(self):
        self.assertEqual(br.parse_output(""), [])

    def test_first_error_line(self):
        line = br.first_error_line(read("loom_build_error.txt"))
        self.assertIn("error: implicit declaration of function", line)
        self.assertIn("MPI_Reduce", line)
        self.assertEqual(br.first_error_line(""), "failed")
        self.assertEqual(br.first_error_line("just this\nand that"), "just this")

    def test_parse_size(self):
        self.assertEqual(compare.parse_size("8"), 8)
        self.assertEqual(compare.parse_size("64K"), 65536)
        self.assertEqual(compare.parse_size("1M"), 1 << 20)


class StatsTest(unittest.TestCase):
    def test_median(self):
        self.assertEqual(br.median([3, 1, 2]), 2)
        self.assertEqual(br.median([4, 1, 2, 3]), 2.5)
        self.assertEqual(br.median([None, 5]), 5)
        self.assertIsNone(br.median([]))
        self.assertIsNone(br.median([float("nan")]))

    def test_ratio_time(self):
        # Loom 1.0 us vs best other 2.0 us: 0.5 (Loom twice as fast)
        self.assertAlmostEqual(br.time_ratio(1.0, [2.0, 3.0], "us"), 0.5)
        self.assertAlmostEqual(br.time_ratio(6.0, [2.0, 3.0], "us"), 3.0)

    def test_ratio_bandwidth_is_a_time_ratio(self):
        # Loom 1000 MB/s vs best 4000 MB/s: Loom takes 4x the time
        self.assertAlmostEqual(br.time_ratio(1000, [4000, 2000], "MB/s"), 4.0)
        self.assertAlmostEqual(br.time_ratio(8e6, [4e6], "msg/s"), 0.5)

    def test_ratio_missing(self):
        self.assertIsNone(br.time_ratio(None, [1.0], "us"))
        self.assertIsNone(br.time_ratio(1.0, [None, None], "us"))
        self.assertAlmostEqual(br.time_ratio(1.0, [None, 4.0], "us"), 0.25)

    def test_medians_over_repeats(self):
        recs = [{"type": "config", "mpis": ["loom", "openmpi"], "subject": "loom"}]
        for rep, (a, b) in enumerate([(1.0, 5.0), (3.0, 4.0), (2.0, 100.0)]):
            recs.append(result("loom", "allreduce", 8, a, repeat=rep))
            recs.append(result("openmpi", "allreduce", 8, b, repeat=rep))
        d = br.Data(recs)
        self.assertEqual(d.value("allreduce", 2, "hot", 8, "loom"), 2.0)
        self.assertEqual(d.value("allreduce", 2, "hot", 8, "openmpi"), 5.0)
        vals, r = br.ratio_row(d, ("allreduce", 2, "hot"), 8)
        self.assertAlmostEqual(r, 0.4)
        self.assertIsNone(d.value("allreduce", 16, "hot", 8, "loom"))

    def test_unavailable_and_partial(self):
        recs = [
            {"type": "config", "mpis": ["loom", "mpich"]},
            {"type": "run", "mpi": "loom", "bench": "bcast", "ranks": 2, "mode": "hot",
             "repeat": 0, "ok": False, "results": 0, "reason": "build: error: no MPI_Bcast"},
            {"type": "run", "mpi": "mpich", "bench": "bcast", "ranks": 2, "mode": "hot",
             "repeat": 0, "ok": False, "results": 1, "reason": "timeout after 30s (1 sizes done)"},
            result("mpich", "bcast", 8, 1.5),
        ]
        d = br.Data(recs)
        self.assertEqual(d.unavailable(),
                         {("loom", "bcast", 2, "hot"): "build: error: no MPI_Bcast"})
        self.assertIn(("mpich", "bcast", 2, "hot"), d.partial())
        self.assertIn("n/a: build: error: no MPI_Bcast", br.unavailable_section(d))

    def test_formatting(self):
        self.assertEqual(br.fmt_size(8), "8 B")
        self.assertEqual(br.fmt_size(4096), "4 KiB")
        self.assertEqual(br.fmt_size(1 << 20), "1 MiB")
        self.assertEqual(br.fmt_val(None), "n/a")
        self.assertEqual(br.fmt_val(0.3296), "0.330")
        self.assertEqual(br.fmt_val(12.345), "12.35")
        self.assertEqual(br.fmt_val(5.83e6, "msg/s"), "5.83 M")
        self.assertEqual(br.fmt_ratio(None), "n/a")
        self.assertEqual(br.fmt_ratio(0.384), "0.38")


class ReportTest(unittest.TestCase):
    """Report generation on a recorded run (Loom with only barrier/startup,
    Open MPI and MPICH complete)."""

    @classmethod
    def setUpClass(cls):
        cls.recs = br.load_jsonl(os.path.join(DATA, "sample_results.jsonl"))
        cls.data = br.Data(cls.recs)

    def value(self, mpi, bench, size, ranks=2):
        return br.median([r["value"] for r in self.recs if r["type"] == "result" and
                          r["mpi"] == mpi and r["bench"] == bench and r["size"] == size and
                          r["ranks"] == ranks and r["mode"] == "hot"])

    def test_sample_is_complete(self):
        self.assertEqual(self.data.mpis, ["loom", "openmpi", "mpich"])
        self.assertEqual(self.data.machine["cores"], 2)
        self.assertIn("latency", self.data.benches())
        self.assertIn("startup", self.data.benches())

    def test_report_sections_and_values(self):
        md = br.make_report(self.data, {"latency": "plots/latency.png"})
        for section in ("## Machine", "## Summary", "## Physical limits", "## Results",
                        "## Unavailable or partial", "### latency", "### barrier",
                        "### iallreduce", "![latency](plots/latency.png)"):
            self.assertIn(section, md)
        self.assertIn(self.data.machine["cpu_model"], md)
        # Loom has no latency yet: n/a, with the reason at the end
        lat_row = [l for l in md.splitlines() if l.startswith("| latency | 8 B | 2 |")][0]
        cells = [c.strip() for c in lat_row.strip("|").split("|")]
        self.assertEqual(cells[4], "n/a")
        self.assertEqual(cells[5], br.fmt_val(self.value("openmpi", "latency", 8)))
        self.assertEqual(cells[6], br.fmt_val(self.value("mpich", "latency", 8)))
        self.assertEqual(cells[7], "n/a")
        self.assertIn("| Loom | latency | 2 | hot | n/a: ", md)
        # barrier has all three: check the ratio against the recorded values
        row = [l for l in md.splitlines() if l.startswith("| barrier | - | 2 |")][0]
        cells = [c.strip() for c in row.strip("|").split("|")]
        loom = self.value("loom", "barrier", 0)
        best = min(self.value("openmpi", "barrier", 0), self.value("mpich", "barrier", 0))
        self.assertEqual(cells[7], "%.2f" % (loom / best))
        # overlap columns for the nonblocking collective
        self.assertIn("overlap % Open MPI", md)
        # physical limits: cache-line and memcpy tables
        self.assertIn("Cache-line round trip", md)
        self.assertIn("memcpy", md)

    def test_markdown_tables_are_well_formed(self):
        md = br.make_report(self.data)
        lines = md.splitlines()
        i = 0
        while i < len(lines):
            if lines[i].startswith("|"):
                n = lines[i].count("|")
                while i < len(lines) and lines[i].startswith("|"):
                    self.assertEqual(lines[i].count("|"), n, lines[i])
                    i += 1
            i += 1

    def test_subject_option(self):
        recs = [dict(r) for r in self.recs]
        for r in recs:
            if r["type"] == "config":
                r["subject"] = "mpich"
        md = br.make_report(br.Data(recs))
        self.assertIn("MPICH / best", md)
        row = [l for l in md.splitlines() if l.startswith("| latency | 8 B | 2 |")][0]
        ratio = float(row.strip("|").split("|")[-1])
        self.assertAlmostEqual(
            ratio, self.value("mpich", "latency", 8) / self.value("openmpi", "latency", 8),
            places=2)

    def test_write_report_files_and_snippet(self):
        with tempfile.TemporaryDirectory() as d:
            snip = br.write_report(self.recs, d, snippet_prefix="docs/perf/")
            self.assertTrue(os.path.exists(os.path.join(d, "report.md")))
            self.assertTrue(os.path.exists(os.path.join(d, "snippet.md")))
            self.assertIn("do not edit by hand", snip)
            self.assertIn("docs/perf/report.md", snip)
            self.assertIn("| barrier |", snip)
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                self.skipTest("matplotlib not installed: plots not checked")
            for b in ("latency", "barrier", "startup", "iallreduce", "bw"):
                p = os.path.join(d, "plots", b + ".png")
                self.assertTrue(os.path.exists(p), p)
                with open(p, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            self.assertIn("](docs/perf/plots/latency.png)", snip)


class FloorsTest(unittest.TestCase):
    """The two-core floors (slotline, pairline, collfloor) in the limits section."""

    def recs(self, with_floors=True):
        recs = [dict(type="config", mpis=["loom", "openmpi", "mpich"], subject="loom"),
                result("limits", "cacheline", 64, 0.050),
                result("loom", "latency", 8, 0.080), result("openmpi", "latency", 8, 0.100),
                result("mpich", "latency", 8, 0.120),
                result("loom", "allreduce", 8, 0.120), result("openmpi", "allreduce", 8, 0.160),
                result("mpich", "allreduce", 8, 0.400)]
        if with_floors:
            # medians over repeats, as for the MPIs
            recs += [result("limits", "slotline", 8, v, repeat=i)
                     for i, v in enumerate((0.055, 0.060, 0.200))]
            recs += [result("limits", "pairline", 8, 0.040),
                     result("limits", "floor_allreduce", 8, 0.075),
                     result("limits", "floor_bcast", 8, 0.065)]
        return recs

    def test_floors_and_ratios(self):
        md = br.make_report(br.Data(self.recs()))
        self.assertIn("**60 ns** one-way, 1.20× the line's", md)
        self.assertIn("**40 ns** one-way, 0.80× the line's", md)
        lat = [l for l in md.splitlines() if l.startswith("| 8 B | 0.080")][0]
        self.assertIn("1.6× one-way, 1.33× slot, 2.00× box", lat)
        row = [l for l in md.splitlines() if l.startswith("| allreduce | 0.075 |")][0]
        cells = [c.strip() for c in row.strip("|").split("|")]
        self.assertEqual(cells[2], "0.120 (1.60×)")
        self.assertEqual(cells[3], "0.160 (2.13×)")
        self.assertEqual(cells[5], "0.75")
        # no Bcast measured: the floor alone gives no row
        self.assertFalse([l for l in md.splitlines() if l.startswith("| bcast | 0.065")])
        # limits are not results of their own
        self.assertNotIn("### floor_allreduce", md)
        self.assertNotIn("### slotline", md)
        self.assertNotIn("### pairline", md)

    def test_paired_by_repeat(self):
        # the line changes state in repeat 2: medians mix states, pairs do not
        recs = [dict(type="config", mpis=["loom", "openmpi"], subject="loom")]
        for i, (line, loom, ompi) in enumerate(((0.040, 0.080, 0.120), (0.040, 0.090, 0.130),
                                                (0.200, 0.220, 0.400))):
            recs += [result("limits", "cacheline", 64, line, repeat=i),
                     result("loom", "latency", 8, loom, repeat=i),
                     result("openmpi", "latency", 8, ompi, repeat=i)]
        md = br.make_report(br.Data(recs))
        self.assertIn("Loom 8 B: 2.0× (1.1-2.2×, 3 repeats)", md)
        self.assertIn("Open MPI 8 B: 3.0× (2.0-3.2×, 3 repeats)", md)
        # the medians' ratio, for contrast: 0.090 / 0.040
        lat = [l for l in md.splitlines() if l.startswith("| 8 B | 0.090")][0]
        self.assertIn("2.2× one-way", lat)

    def test_without_floors(self):
        md = br.make_report(br.Data(self.recs(with_floors=False)))
        self.assertNotIn("slot", md)
        self.assertNotIn("box", md)
        self.assertNotIn("collfloor", md)


class DriverTest(unittest.TestCase):
    def args(self, *argv):
        import argparse
        a = argparse.Namespace(quick=True, size_range=(0, 1 << 20), step=2, iters=None,
                               warmup=None, sizes_given=False, ranks=[2, 16], modes=["hot", "cold"],
                               cold_all=False, benchmarks_given=False)
        for k, v in zip(argv[::2], argv[1::2]):
            setattr(a, k, v)
        return a

    def test_loom_missing_is_unavailable(self):
        a = self.args("mpis", ["loom"], "loom_prefix", "/nonexistent", "loom_args", "")
        m = compare.make_mpis(a)["loom"]
        self.assertFalse(m.available())
        self.assertIn("mpicc not found", m.note)

    def test_openmpi_launcher_flags(self):
        a = self.args("mpis", ["openmpi"], "openmpi_args", "")
        m = compare.make_mpis(a)["openmpi"]
        cmd = m.cmd(16, "./x", ["-i", "3"])
        self.assertEqual(cmd[0], "mpirun.openmpi")
        self.assertIn("--oversubscribe", cmd)
        self.assertEqual(cmd[-4:], ["16", "./x", "-i", "3"])
        if os.geteuid() == 0:
            self.assertIn("--allow-run-as-root", cmd)
            self.assertEqual(m.env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"], "1")

    def test_plan(self):
        a = self.args()
        jobs = compare.plan_jobs(a, ["latency", "mbw_mr", "allreduce", "gather", "startup"])
        self.assertIn(("latency", 2, "hot"), jobs)
        self.assertIn(("latency", 2, "cold"), jobs)
        self.assertNotIn(("latency", 16, "hot"), jobs)       # pair benchmarks at 2 ranks only
        self.assertIn(("allreduce", 2, "cold"), jobs)        # quick: cold for a few
        self.assertNotIn(("gather", 2, "cold"), jobs)
        if compare.ncores() < 16:                              # quick: few oversubscribed runs
            self.assertIn(("allreduce", 16, "hot"), jobs)
            self.assertNotIn(("gather", 16, "hot"), jobs)

    def test_bench_args(self):
        a = self.args()
        argv = compare.bench_args(a, "allreduce", 2, "cold")
        self.assertIn("--json", argv)
        self.assertIn("--cold", argv)
        self.assertEqual(argv[argv.index("-m") + 1], "0:1048576")
        if compare.ncores() < 16:
            argv = compare.bench_args(a, "allreduce", 16, "hot")
            self.assertEqual(argv[argv.index("-m") + 1], "0:65536")
            self.assertEqual(argv[argv.index("-s") + 1], "8")
            self.assertEqual(argv[argv.index("-i") + 1], "3")

    def test_rma_flags(self):
        self.assertEqual(compare.rma_flags("put_lat_flush"),
                         ["-DRMA_PUT", "-DRMA_LAT", "-DRMA_SYNC_FLUSH"])
        self.assertEqual(compare.rma_flags("fop_rate"), ["-DRMA_FOP", "-DRMA_RATE"])
        self.assertEqual(compare.rma_flags("fence"), ["-DRMA_FENCE"])
        self.assertEqual(compare.BENCHES["put_bibw_pscw"][:2],
                         ("rma.c", ["-DRMA_PUT", "-DRMA_BIBW", "-DRMA_SYNC_PSCW"]))
        for b in compare.GROUPS["rma"]:
            self.assertIn(b, br.BENCH_ORDER)

    def test_rma_plan_and_args(self):
        a = self.args()
        jobs = compare.plan_jobs(a, compare.GROUPS["rma"])
        self.assertIn(("put_lat_flush", 2, "hot"), jobs)
        self.assertNotIn(("put_lat_flush", 16, "hot"), jobs)  # origin 0, target 1
        self.assertNotIn(("put_lat_flush", 2, "cold"), jobs)  # quick: hot only
        self.assertNotIn(("get_bw_pscw", 2, "hot"), jobs)     # quick: a subset
        self.assertIn(("fence", 2, "hot"), jobs)
        if compare.ncores() < 16:
            self.assertIn(("fence", 16, "hot"), jobs)
            argv = compare.bench_args(a, "fence", 16, "hot")
            self.assertEqual(argv[argv.index("-i") + 1], "20")
            argv = compare.bench_args(a, "fop_rate", 16, "hot")
            self.assertEqual(argv[argv.index("-i") + 1], "5")
        argv = compare.bench_args(a, "put_lat_flush", 2, "hot")
        self.assertEqual(argv[argv.index("-m") + 1], "1:32768")  # 1, 8 (the target), 64, ...
        argv = compare.bench_args(a, "put_bw_flush", 2, "hot")
        self.assertEqual(argv[argv.index("-m") + 1], "1024:1048576")  # the 1 MiB target
        self.assertEqual(argv[argv.index("-s") + 1], "4")

    def test_rma_targets_section(self):
        recs = [{"type": "config", "mpis": ["loom", "openmpi", "mpich"], "subject": "loom"},
                result("loom", "put_lat_flush", 8, 0.01),
                result("openmpi", "put_lat_flush", 8, 0.05),
                result("mpich", "put_lat_flush", 8, 0.4),
                result("openmpi", "put_bw_flush", 1 << 20, 30000.0, unit="MB/s"),
                result("mpich", "put_bw_flush", 1 << 20, 8000.0, unit="MB/s"),
                result("limits", "memcpy", 1 << 20, 35000.0, ranks=1, unit="MB/s"),
                result("loom", "fence", 0, 20.0, ranks=16),
                result("openmpi", "fence", 0, 100.0, ranks=16)]
        text = br.rma_targets_section(br.Data(recs))
        lines = {l.split("|")[1].strip(): l for l in text.splitlines() if l.startswith("| ")}
        self.assertIn("0.20×", lines["8-byte Put+flush latency"])
        self.assertIn("| yes |", lines["8-byte Put+flush latency"])
        self.assertIn("n/a", lines["1 MiB Put bandwidth (lock_all + flush)"])  # no Loom value
        self.assertIn("0.20×", lines["MPI_Win_fence at 16 ranks"])
        self.assertIn("**no**", lines["MPI_Win_fence at 16 ranks"])
        self.assertEqual(br.rma_targets_section(br.Data(recs[:1])), "")


if __name__ == "__main__":
    unittest.main()
