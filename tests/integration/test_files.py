"""Sources end to end: init --file, rebuild, and batch deduct/add, in every format."""

import json
import os
import threading
import unittest

from harness import ServerTest


class InitFile(ServerTest):
    def test_csv_creates_missing_and_reports_existing(self):
        self.r("SET", "stock:{2}", "5")
        path = self.write("s.csv", 'sku,stock\n1,10\n2,20\n"3,x",30\n4,unlimited\n')
        report = os.path.join(self.tmp, "report.jsonl")
        res = self.sc("init", "--file", path, "--report", report)
        self.assertEqual(res.rc, 0, res)
        summary = res.one
        self.assertEqual(list(summary)[:4], ["op", "source", "rows", "counts"])
        self.assertEqual((summary["op"], summary["rows"]), ("init", 4))
        counts = summary["counts"]
        self.assertEqual((counts["ok"], counts["exists"], counts["unlimited"]), (2, 1, 1))
        self.assertFalse(summary["dry_run"])
        self.assertIn("elapsed_ms", summary)
        with open(report) as f:
            lines = [json.loads(l) for l in f]
        self.assertEqual([l["sku"] for l in lines], ["1", "2", "3,x", "4"])
        self.assertEqual([l["status"] for l in lines], ["ok", "exists", "ok", "unlimited"])
        self.assertIsNone(lines[3]["stock"])
        self.assertEqual(self.r("GET", "stock:{3,x}"), "30")
        self.assertEqual(self.r("GET", "stock:{2}"), "5")
        self.assertEqual(self.r("GET", "stock:{4}"), "-1")

    def test_one_invalid_row_writes_nothing_and_names_file_and_line(self):
        path = self.write("bad.csv", "sku,stock\n1,10\n2,1.5\n3,30\n")
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("stockctl: error: %s:3: column 'stock': '1.5' is not a stock value" % path, res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_an_invalid_source_still_prints_its_summary_and_report(self):
        report = os.path.join(self.tmp, "refused.jsonl")
        for op in ("init", "rebuild"):
            path = self.write("bad.csv", "sku,stock\n1,10\n2,1.5\n3,30\n1,4\n")
            res = self.sc(op, "--file", path, "--report", report)
            self.assertEqual(res.rc, 2, res)
            summary = res.one
            self.assertEqual((summary["op"], summary["source"], summary["rows"]), (op, path, 4))
            # Both rows of item 1 are left out: the source says two things of it.
            self.assertEqual(summary["counts"]["invalid"], 3)
            self.assertEqual(sum(summary["counts"].values()), 3, "nothing else was done")
            self.assertEqual(summary["status"], "invalid")
            self.assertIn("3 of 4 rows are invalid; nothing was written", summary["error"])
            self.assertFalse(summary["dry_run"])
            with open(report) as f:
                lines = [json.loads(l) for l in f]
            self.assertEqual([(l["sku"], l["status"]) for l in lines],
                             [("1", "invalid"), ("2", "invalid"), ("1", "invalid")])
            self.assertIn("%s:2: duplicate SKU (again on line 5; every row of it is left out)"
                          % path, lines[0]["error"])
            self.assertIn("%s:3: column 'stock'" % path, lines[1]["error"])
            self.assertIn("%s:5: duplicate SKU (first on line 2)" % path, lines[2]["error"])
            self.assertEqual(self.r("DBSIZE"), 0)

    def test_a_source_without_its_columns_still_prints_its_summary(self):
        path = self.write("cols.csv", "sku,amount\n1,10\n")
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertEqual((res.one["status"], res.one["rows"]), ("invalid", 0))
        self.assertIn("%s:1: header has" % path, res.one["error"])

    def test_a_source_that_cannot_be_read_ends_with_a_summary_and_an_empty_report(self):
        # An earlier run's report must not be read as this one's: a cron job checking it would
        # take yesterday's "ok" lines for today's.
        report = self.write("report.jsonl", '{"op":"rebuild","sku":"OLD","status":"ok"}\n')
        cases = ((os.path.join(self.tmp, "nosuch.csv"), 1, "error", "cannot open"),
                 (self.write("quote.csv", 'sku,stock\n"unterminated,5\n'), 2, "invalid",
                  "unterminated quoted field"))
        for op in ("init", "rebuild"):
            for path, rc, status, problem in cases:
                res = self.sc(op, "--file", path, "--report", report)
                self.assertEqual((res.rc, res.one["status"], res.one["source"]), (rc, status, path),
                                 res)
                self.assertIn(problem, res.one["error"])
                self.assertEqual(os.path.getsize(report), 0, (op, path))
                with open(report, "w") as f:
                    f.write('{"op":"rebuild","sku":"OLD","status":"ok"}\n')

    def test_a_source_that_breaks_partway_counts_the_rows_before(self):
        # Row 3 was found invalid (and printed) before line 4 broke the file: the summary says
        # so, not "rows": 0 with no invalid row.
        path = self.write("broken.csv", 'sku,stock\nA,1\nB,x\n"C,1\n')
        res = self.sc("init", "--file", path)
        self.assertEqual((res.rc, res.one["status"], res.one["rows"], res.one["counts"]["invalid"]),
                         (2, "invalid", 2, 1), res)
        self.assertIn("%s:3: column 'stock'" % path, res.stderr)
        self.assertIn("%s:4: unterminated quoted field" % path, res.one["error"])
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_duplicate_sku_is_invalid(self):
        path = self.write("dup.csv", "sku,stock\nA,1\nB,2\nA,3\n")
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2)
        self.assertIn("%s:4: duplicate SKU (first on line 2)" % path, res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_skip_invalid_writes_no_row_of_a_duplicated_sku(self):
        # A source that says two things of one item says nothing sure of it: with
        # --skip-invalid the other items are written, none of its rows. A JSON array on one
        # line (jq -c, json_agg) holds many rows: only the repeated item's are left out.
        for name, text in (("dup.csv", "sku,stock\nH1,5\nH1,6\nH2,1\n"),
                           ("dup.json", '[{"sku":"H1","stock":5},{"sku":"H2","stock":1},'
                                        '{"sku":"H1","stock":6}]\n')):
            self.r("FLUSHALL")
            path = self.write(name, text)
            for op in ("init", "rebuild"):
                res = self.sc(op, "--file", path, "--skip-invalid", "--no-log")
                self.assertEqual((res.rc, res.one["counts"]["ok"], res.one["counts"]["invalid"]),
                                 (2, 1 if op == "init" else 0, 2), (name, op, res))
                self.assertEqual((self.r("GET", "stock:{H1}"), self.r("GET", "stock:{H2}")),
                                 (None, "1"), (name, op))
        # For rebuild --extra an item whose every row is left out is one the source lacks.
        self.r("SET", "stock:{H1}", "9")
        res = self.sc("rebuild", "--file", path, "--skip-invalid", "--extra", "--no-log")
        self.assertEqual(res.one["counts"]["extra"], 1, res)
        self.assertIn("extra: item 'H1': stock:{H1} is in Redis and the source has no row for it",
                      res.stderr)
        self.assertEqual(self.r("GET", "stock:{H1}"), "9")

    def test_skip_invalid_writes_the_valid_rows_and_reports_the_others(self):
        path = self.write("mixed.csv", "sku,stock\n1,10\n2,-7\n3,30\n")
        report = os.path.join(self.tmp, "mixed.jsonl")
        res = self.sc("init", "--file", path, "--skip-invalid", "--report", report)
        self.assertEqual(res.rc, 2, res)
        self.assertEqual(res.one["counts"]["invalid"], 1)
        self.assertEqual(res.one["counts"]["ok"], 2)
        with open(report) as f:
            lines = [json.loads(l) for l in f]
        self.assertEqual(lines[1]["status"], "invalid")
        self.assertIn("%s:3:" % path, lines[1]["error"])
        # Each item written, with the key of its first log entry.
        self.assertEqual(self.r("DBSIZE"), 2 * 2)

    def test_missing_column_is_named(self):
        path = self.write("cols.csv", "sku,total\n1,10\n")
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2)
        self.assertIn("%s:1: header has neither a 'stock' column nor 'total' and 'issued' columns" % path, res.stderr)

    def test_tsv_as_mysql_batch_prints_it(self):
        path = self.write("e.tsv", "sku\ttotal\tissued\nA\t10\t3\nB\\\\C\t5\t0\n")
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("GET", "stock:{A}"), "7")
        self.assertEqual(self.r("GET", "stock:{B\\C}"), "5")  # mysql escapes a backslash as \\

    def test_tsv_escaped_tab_in_sku_is_a_control_character(self):
        path = self.write("t.tsv", "sku\tstock\nB\\tC\t5\n")
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("%s:2: column 'sku': item id contains a control character" % path, res.stderr)

    def test_tsv_null_is_invalid(self):
        path = self.write("n.tsv", "sku\tstock\nA\tNULL\nB\t\\N\n")
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2)
        self.assertIn("%s:2: column 'stock' is NULL" % path, res.stderr)
        self.assertIn("%s:3: column 'stock' is NULL" % path, res.stderr)

    def test_json_array_map_and_ndjson(self):
        arr = self.write("a.json", '[{"sku": "A", "stock": 1}, {"sku": "B", "total": 9, "issued": 4}]')
        amap = self.write("m.json", '{"C": 3, "D": "unlimited"}')
        nd = self.write("n.ndjson", '{"sku": "E", "stock": 5}\n\n{"sku": "F", "stock": 6}\n')
        for path in (arr, amap, nd):
            self.assertEqual(self.sc("init", "--file", path).rc, 0, path)
        got = [self.r("GET", "stock:{%s}" % s) for s in "ABCDEF"]
        self.assertEqual(got, ["1", "5", "3", "-1", "5", "6"])

    def test_a_key_twice_in_a_json_row_is_an_invalid_row(self):
        # As a CSV header with a column twice is refused: no "last one wins".
        for name, text in (("d.json", '[{"sku": "A", "stock": 5, "stock": 6}]'),
                           ("s.json", '[{"sku": "A", "sku": "B", "stock": 6}]'),
                           ("d.ndjson", '{"sku": "A", "stock": 5, "stock": 6}\n')):
            path = self.write(name, text)
            res = self.sc("init", "--file", path)
            self.assertEqual(res.rc, 2, (name, res))
            self.assertIn("%s:1: key '%s' appears twice" % (path, "sku" if name == "s.json"
                                                             else "stock"), res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)
        # A key twice deeper down is no column of the row: left alone, as other keys are.
        path = self.write("x.ndjson", '{"sku": "A", "stock": 5, "x": {"a": 1, "a": 2}}\n')
        self.assertEqual(self.sc("init", "--file", path).rc, 0)

    def test_a_source_with_nothing_in_it_is_invalid_in_every_format(self):
        for name, text in (("e.ndjson", ""), ("b.ndjson", "\n \n"), ("e.json", ""),
                           ("e.csv", "")):
            path = self.write(name, text)
            res = self.sc("rebuild", "--file", path)
            self.assertEqual(res.rc, 2, (name, res))
            self.assertIn("%s:1:" % path, res.stderr)
            self.assertIn("the source is empty", res.stderr)

    def test_standard_input_with_format(self):
        res = self.sc("init", "--file", "-", "--format", "csv", input="sku,stock\nA,1\nB,2\n")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.one["source"], "<stdin>")
        self.assertEqual(self.r("MGET", "stock:{A}", "stock:{B}"), ["1", "2"])

    def test_a_fifo_and_dev_stdin_are_read_once_and_loaded_whole(self):
        # A named FIFO (as a shell's <(...) gives) and /dev/stdin over a pipe can be read only
        # once: validation and the write pass must not open them twice.
        fifo = os.path.join(self.tmp, "rows.csv")
        os.mkfifo(fifo)

        def write():
            with open(fifo, "w") as f:
                f.write("sku,stock\nA,1\nB,2\n")

        writer = threading.Thread(target=write)
        writer.start()
        res = self.sc("init", "--file", fifo)
        writer.join()
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.one["rows"], 2, res)
        res = self.sc("init", "--file", "/dev/stdin", "--format", "csv", "--force",
                      input="sku,stock\nA,3\nC,4\n")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("MGET", "stock:{A}", "stock:{B}", "stock:{C}"), ["3", "2", "4"])

    def test_standard_input_invalid_row_writes_nothing(self):
        res = self.sc("init", "--file", "-", "--format", "ndjson", input='{"sku":"A","stock":1}\n{"sku":"B","stock":-4}\n')
        self.assertEqual(res.rc, 2)
        self.assertIn("<stdin>:2:", res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_unknown_extension_needs_format(self):
        path = self.write("data.txt", "sku,stock\nA,1\n")
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2)
        self.assertIn("--format", res.stderr)
        self.assertEqual(self.sc("init", "--file", path, "--format", "csv").rc, 0)

    def test_missing_file_is_an_io_error(self):
        res = self.sc("init", "--file", os.path.join(self.tmp, "absent.csv"))
        self.assertEqual(res.rc, 1)
        self.assertIn("cannot open", res.stderr)

    def test_a_directory_is_said_to_be_one_before_its_format(self):
        for args in ((), ("--format", "csv")):
            res = self.sc("init", "--file", self.tmp, *args)
            self.assertEqual(res.rc, 1, res)
            self.assertIn("cannot read %s: it is a directory" % self.tmp, res.stderr)

    def test_column_renames(self):
        path = self.write("r.csv", "item,left\nA,4\n")
        res = self.sc("init", "--file", path, "--sku-column", "item", "--stock-column", "left")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("GET", "stock:{A}"), "4")

    def test_force(self):
        self.r("SET", "stock:{A}", "1")
        path = self.write("f.csv", "sku,stock\nA,9\n")
        self.assertEqual(self.sc("init", "--file", path, "--force").one["counts"]["ok"], 1)
        self.assertEqual(self.r("GET", "stock:{A}"), "9")

    def test_many_rows_pass_through_the_pipeline_window(self):
        rows = "".join("s%d,%d\n" % (i, i) for i in range(5000))
        path = self.write("big.csv", "sku,stock\n" + rows)
        res = self.sc("init", "--file", path)
        self.assertEqual(res.one["counts"]["ok"], 5000)
        self.assertEqual(self.r("DBSIZE"), 2 * 5000)  # each stock key with its first entry
        self.assertEqual(self.r("GET", "stock:{s4999}"), "4999")

    def test_dry_run_writes_nothing_and_reports_what_would_happen(self):
        self.r("SET", "stock:{2}", "5")
        path = self.write("d.csv", "sku,stock\n1,10\n2,20\n3,30\n")
        report = os.path.join(self.tmp, "dry.jsonl")
        # Without the change log a plain init writes with SET NX, which a dry run must not send.
        for force, log in [(f, l) for f in ((), ("--force",)) for l in ((), ("--no-log",))]:
            res = self.sc("init", "--file", path, "--dry-run", "--report", report, *force, *log)
            self.assertEqual(res.rc, 0, res)
            summary = res.one
            self.assertTrue(summary["dry_run"], summary)
            with open(report) as f:
                lines = [json.loads(l) for l in f]
            if force:
                self.assertEqual([l["status"] for l in lines], ["ok", "ok", "ok"])
                self.assertEqual(lines[1]["previous"], 5, lines[1])
            else:
                self.assertEqual([(l["status"], l.get("stock")) for l in lines],
                                 [("ok", 10), ("exists", 5), ("ok", 30)])
                self.assertEqual((summary["counts"]["ok"], summary["counts"]["exists"]), (2, 1))
            self.assertEqual(self.r("DBSIZE"), 1)  # no key, no change log
            self.assertEqual(self.r("GET", "stock:{2}"), "5")

    def test_dry_run_from_cmd_and_without_a_source(self):
        res = self.sc("init", "--from-cmd", "printf 'sku,stock\\nA,1\\n'", "--dry-run")
        self.assertEqual((res.rc, res.one["dry_run"], res.one["counts"]["ok"]), (0, True, 1), res)
        self.assertEqual(self.r("DBSIZE"), 0)
        res = self.sc("init", "A", "1", "--dry-run")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("init --dry-run needs a source", res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)
        # --report for one item would never be written: refused, not ignored.
        res = self.sc("init", "A", "1", "--report", os.path.join(self.tmp, "a.jsonl"))
        self.assertEqual(res.rc, 2, res)
        self.assertIn("init --report needs a source (--file or --from-cmd)", res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "a.jsonl")))


class Rebuild(ServerTest):
    def export(self):
        return self.write("export.csv", "sku,total,issued\nA,100,30\nB,50,50\nC,10,1\n")

    def test_missing_keys_are_created_live_keys_untouched_drift_reported(self):
        self.r("SET", "stock:{B}", "0")   # equal to the export
        self.r("SET", "stock:{C}", "4")   # differs: drift
        report = os.path.join(self.tmp, "rb.jsonl")
        res = self.sc("rebuild", "--file", self.export(), "--report", report)
        self.assertEqual(res.rc, 0, res)
        c = res.one["counts"]
        self.assertEqual((c["ok"], c["exists"], c["drift"]), (1, 1, 1))
        self.assertEqual(self.r("MGET", "stock:{A}", "stock:{B}", "stock:{C}"), ["70", "0", "4"])
        with open(report) as f:
            drift = [json.loads(l) for l in f][2]
        self.assertEqual((drift["status"], drift["stock"], drift["expected"]), ("drift", 4, 9))

    def test_unlimited_is_counted_as_unlimited(self):
        path = self.write("u.csv", "sku,stock\nU,-1\nV,unlimited\nW,3\n")
        report = os.path.join(self.tmp, "u.jsonl")
        res = self.sc("rebuild", "--file", path, "--report", report)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual((res.one["counts"]["unlimited"], res.one["counts"]["ok"]), (2, 1))
        with open(report) as f:
            self.assertEqual([(l["status"], l["stock"]) for l in map(json.loads, f)],
                             [("unlimited", None), ("unlimited", None), ("ok", 3)])
        self.assertEqual(self.r("MGET", "stock:{U}", "stock:{V}"), ["-1", "-1"])

    def test_drift_is_named_on_standard_error(self):
        self.r("SET", "stock:{C}", "4")
        self.r("SET", "stock:{A}", "-1")
        res = self.sc("rebuild", "--file", self.export())
        self.assertEqual(res.rc, 0, res)
        self.assertIn("stockctl: warning: drift: item 'A': stock:{A} holds unlimited, the source says 70\n",
                      res.stderr)
        self.assertIn("stockctl: warning: drift: item 'C': stock:{C} holds 4, the source says 9\n",
                      res.stderr)
        self.assertNotIn("more", res.stderr)

    def test_many_drifting_items_are_named_ten_then_counted_and_all_reported(self):
        n = 25
        self.r("MSET", *[x for i in range(n) for x in ("stock:{d%02d}" % i, "1")])
        path = self.write("d.csv", "sku,stock\n" + "".join("d%02d,2\n" % i for i in range(n)))
        report = os.path.join(self.tmp, "drift.jsonl")
        res = self.sc("rebuild", "--file", path, "--report", report)
        self.assertEqual(res.rc, 0, res)
        named = [l for l in res.stderr.splitlines() if "warning: drift: item" in l]
        self.assertEqual(len(named), 10, res.stderr)
        self.assertIn("stockctl: warning: and 15 more items with drift (--report lists every one)",
                      res.stderr)
        with open(report) as f:
            self.assertEqual(sorted(l["sku"] for l in map(json.loads, f) if l["status"] == "drift"),
                             ["d%02d" % i for i in range(n)])
        res = self.sc("rebuild", "--file", path, "--dry-run")
        self.assertIn("and 15 more items with drift (--report FILE lists every one)", res.stderr)

    def test_fail_on_drift_exits_6(self):
        self.r("SET", "stock:{C}", "4")
        res = self.sc("rebuild", "--file", self.export(), "--fail-on-drift")
        self.assertEqual(res.rc, 6, res)

    def test_force_overwrites_live_keys(self):
        self.r("SET", "stock:{C}", "4")
        res = self.sc("rebuild", "--file", self.export(), "--force")
        self.assertEqual(res.rc, 0)
        self.assertEqual(self.r("GET", "stock:{C}"), "9")

    def test_dry_run_writes_nothing(self):
        self.r("SET", "stock:{C}", "4")
        res = self.sc("rebuild", "--file", self.export(), "--dry-run")
        self.assertEqual(res.rc, 0)
        self.assertTrue(res.one["dry_run"])
        self.assertEqual((res.one["counts"]["ok"], res.one["counts"]["drift"]), (2, 1))
        self.assertEqual(self.r("DBSIZE"), 1)

    def test_second_rebuild_on_the_same_prefix_is_busy(self):
        self.r("SET", "stockctl:rebuild-lock:stock:", "someone-else", "PX", "60000")
        res = self.sc("rebuild", "--file", self.export())
        self.assertEqual(res.rc, 5, res)
        self.assertEqual(res.one["status"], "busy")
        self.assertEqual(self.r("DBSIZE"), 1)
        self.assertEqual(self.r("GET", "stockctl:rebuild-lock:stock:"), "someone-else")
        # A lock of an earlier version (a bare token) is named, with the time it has left.
        self.assertRegex(res.stderr, r"stockctl: error: another rebuild is running on this prefix: "
                         r"lock stockctl:rebuild-lock:stock: is held \(its value records no "
                         r"holder\), \d+\.\d s left\n")
        other = self.sc("rebuild", "--file", self.export(), "--prefix", "other:")
        self.assertEqual(other.rc, 0, "the lock is per prefix")

    def test_a_busy_rebuild_still_accounts_for_every_row_in_its_report(self):
        # A cron job reads --report: the one of an earlier run must not pass for this run's.
        self.r("SET", "stockctl:rebuild-lock:stock:", "someone-else", "PX", "60000")
        report = self.write("report.jsonl", '{"stale": true}\n')
        source = self.export()
        with open(source) as f:
            rows = sum(1 for line in f if line.strip()) - 1  # less the header
        res = self.sc("rebuild", "--file", source, "--report", report)
        self.assertEqual((res.rc, res.one["rows"], res.one["counts"]["busy"]), (5, rows, rows), res)
        with open(report) as f:
            lines = [json.loads(l) for l in f]
        self.assertEqual(len(lines), rows)
        for line in lines:
            self.assertEqual(line["status"], "busy", line)
            self.assertTrue(line["error"].startswith("not applied: another rebuild is running"),
                            line)
        self.assertEqual(self.r("DBSIZE"), 1)
        # A report that cannot be written fails the run as any report does (exit 1).
        res = self.sc("rebuild", "--file", source, "--report",
                      os.path.join(self.tmp, "no-such-dir", "report.jsonl"))
        self.assertEqual((res.rc, res.one["rows"], res.one["status"]), (1, rows, "busy"), res)
        self.assertIn("cannot write report", res.stderr)

    def test_a_busy_rebuild_names_who_holds_the_lock_and_when_it_was_taken(self):
        self.r("SET", "stockctl:rebuild-lock:stock:", "0f1e host=db-7 pid=4242 at=1764644645000",
               "PX", "60000")
        res = self.sc("rebuild", "--file", self.export())
        self.assertEqual(res.rc, 5, res)
        self.assertRegex(res.one["error"], r"^another rebuild is running on this prefix: lock "
                         r"stockctl:rebuild-lock:stock: is held by db-7 \(pid 4242\) since "
                         r"2025-12-02T03:04:05Z \(\d+ s ago\), (59|60)\.\d s left$")

    def test_run_lock_is_released(self):
        self.sc("rebuild", "--file", self.export())
        self.assertIsNone(self.r("GET", "stockctl:rebuild-lock:stock:"))

    def test_item_under_init_lock_is_left_to_its_holder(self):
        self.r("SET", "stock:{A}:lock", "holder", "PX", "60000")
        report = os.path.join(self.tmp, "busy.jsonl")
        res = self.sc("rebuild", "--file", self.export(), "--lock-wait", "200", "--report", report)
        self.assertEqual(res.rc, 5, res)
        self.assertEqual(res.one["counts"]["busy"], 1)
        with open(report) as f:
            busy = [json.loads(l) for l in f if '"busy"' in l]
        self.assertRegex(busy[0]["error"], r"after 200 ms: lock stock:\{A\}:lock is held \(its "
                         r"value records no holder\), \d+\.\d s left$")
        self.assertIsNone(self.r("GET", "stock:{A}"))
        self.assertEqual(self.r("GET", "stock:{B}"), "0")

    def test_issued_greater_than_total_is_invalid(self):
        path = self.write("x.csv", "sku,total,issued\nA,1,2\n")
        res = self.sc("rebuild", "--file", path)
        self.assertEqual(res.rc, 2)
        self.assertIn("%s:2: 'issued' (2) is greater than 'total' (1)" % path, res.stderr)

    def test_corrupt_live_value_is_an_error(self):
        self.r("SET", "stock:{A}", "junk")
        res = self.sc("rebuild", "--file", self.export())
        self.assertEqual(res.rc, 1)
        self.assertEqual(self.r("GET", "stock:{A}"), "junk")


class BatchOps(ServerTest):
    def test_deduct_file_reports_each_row_in_order(self):
        self.r("MSET", "stock:{1}", "10", "stock:{2}", "20", "stock:{4}", "-1")
        path = self.write("d.csv", "sku,qty\n1,2\n2,100\n9,1\n4,3\n1,1\n")
        res = self.sc("deduct", "--file", path)
        self.assertEqual(res.rc, 4, res)
        self.assertEqual([(l["sku"], l["status"], l["stock"]) for l in res.lines],
                         [("1", "ok", 8), ("2", "insufficient", 20), ("9", "uninitialized", None),
                          ("4", "unlimited", None), ("1", "ok", 7)])

    def test_add_file_from_stdin(self):
        self.r("SET", "stock:{1}", "1")
        res = self.sc("add", "--file", "-", "--format", "ndjson", input='{"sku":"1","qty":2}\n{"sku":"2","qty":5}\n')
        # A missing key is not created by a restock without an init source.
        self.assertEqual(res.rc, 4, res)
        self.assertEqual([l["status"] for l in res.lines], ["ok", "missing"])
        self.assertEqual(self.r("MGET", "stock:{1}", "stock:{2}"), ["3", None])

    def test_deduct_file_with_init_source_initializes_missing_items(self):
        path = self.write("d.csv", "sku,qty\nA,1\nA,1\nB,2\n")
        res = self.sc("deduct", "--file", path, "--init-value", "5")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([l["stock"] for l in res.lines], [4, 3, 3])

    def test_invalid_batch_row_writes_nothing(self):
        self.r("SET", "stock:{1}", "10")
        path = self.write("d.csv", "sku,qty\n1,2\n1,0\n")
        for op in ("deduct", "add"):
            res = self.sc(op, "--file", path)
            self.assertEqual(res.rc, 2)
            self.assertIn("%s:3: column 'qty'" % path, res.stderr)
            self.assertEqual(self.r("GET", "stock:{1}"), "10")
            # Each invalid row still gets its line, as init's --report holds them.
            self.assertEqual([(l["op"], l["sku"], l["status"]) for l in res.lines], [(op, "1", "invalid")])
            self.assertIn("%s:3: column 'qty'" % path, res.one["error"])

    def test_request_id_column_makes_a_rerun_change_nothing(self):
        self.r("SET", "stock:{1}", "10")
        path = self.write("d.csv", "sku,qty,request_id\n1,2,order-1\n1,3,order-2\n")
        first = self.sc("deduct", "--file", path)
        self.assertEqual([l["stock"] for l in first.lines], [8, 5])
        again = self.sc("deduct", "--file", path)
        self.assertEqual([(l["stock"], l.get("replayed", False)) for l in again.lines],
                         [(8, True), (5, True)])
        self.assertEqual(self.r("GET", "stock:{1}"), "5")

    def test_a_request_id_cell_with_white_space_around_it_is_invalid_unless_trimmed(self):
        self.r("SET", "stock:{1}", "10")
        self.sc("deduct", "--file", self.write("a.csv", "sku,qty,request_id\n1,2,order-1\n"))
        path = self.write("b.csv", "sku,qty,request_id\n1,2, order-1\n")
        res = self.sc("deduct", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("%s:2: column 'request_id': request id ' order-1' has white space" % path, res.stderr)
        trimmed = self.sc("deduct", "--file", path, "--trim")
        self.assertEqual([(l["stock"], l.get("replayed")) for l in trimmed.lines], [(8, True)], trimmed)
        self.assertEqual(self.r("GET", "stock:{1}"), "8")

    def test_request_id_column_can_be_renamed_and_is_then_required(self):
        self.r("SET", "stock:{1}", "10")
        path = self.write("refs.csv", "sku,qty,order_ref\n1,2,order-1\n1,3,order-2\n")
        first = self.sc("deduct", "--file", path, "--request-id-column", "ORDER_REF")
        self.assertEqual([l["stock"] for l in first.lines], [8, 5])
        again = self.sc("deduct", "--file", path, "--request-id-column", "order_ref")
        self.assertEqual([(l["stock"], l.get("replayed", False)) for l in again.lines],
                         [(8, True), (5, True)])
        # A named column the source lacks is invalid input: applied without ids, a re-run of
        # the same file would apply every row again.
        plain = self.write("plain.csv", "sku,qty\n1,1\n")
        res = self.sc("add", "--file", plain, "--request-id-column", "order_ref")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("header has no 'order_ref' column", res.stderr)
        res = self.sc("deduct", "1", "1", "--request-id-column", "order_ref")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("--request-id-column requires --file", res.stderr)
        self.assertEqual(self.r("GET", "stock:{1}"), "5")

    def test_big_batch_keeps_order_across_windows(self):
        self.r("SET", "stock:{hot}", "3000")
        path = self.write("many.csv", "sku,qty\n" + "hot,1\n" * 2500)
        res = self.sc("deduct", "--file", path)
        stocks = [l["stock"] for l in res.lines]
        self.assertEqual(stocks, list(range(2999, 499, -1)))


if __name__ == "__main__":
    unittest.main()


class HostileFiles(ServerTest):
    def test_a_100_mb_line_is_an_invalid_row_with_its_line_number(self):
        path = os.path.join(self.tmp, "huge.csv")
        with open(path, "w") as f:
            f.write("sku,stock\nok,1\n")
            f.write("x" * (100 * 1024 * 1024))
            f.write(",5\nalso-ok,2\n")
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2)
        self.assertIn("%s:3: column 'sku': item id is 104857600 bytes long; at most 512 are allowed" % path,
                      res.stderr)
        self.assertLess(len(res.stderr), 2000, "the line itself is never echoed")
        self.assertEqual(self.r("DBSIZE"), 0)
        os.remove(path)

    def test_nul_bytes_and_bad_utf8_in_json(self):
        path = self.write("bad.ndjson", '{"sku":"a\\u0000b","stock":1}\n{"sku":"\\udcff","stock":1}\n')
        res = self.sc("init", "--file", path, "--skip-invalid", "--report", os.path.join(self.tmp, "r.jsonl"))
        self.assertEqual(res.rc, 2, res)
        self.assertIn("%s:1: column 'sku': item id contains a control character" % path, res.stderr)
