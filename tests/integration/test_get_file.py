"""get --file / get -: many items pipelined in input order; get --details; held; sources."""

import json
import os
import select
import subprocess
import unittest

from harness import ServerTest, spawn


class GetMany(ServerTest):
    def test_file_of_skus_in_input_order_across_windows(self):
        n = 2500  # more than two pipeline windows
        for start in range(0, n, 500):
            self.r("MSET", *[x for i in range(start, start + 500) if i % 7
                             for x in ("stock:{s%d}" % i, str(i))])
        path = self.write("skus.txt", "".join("s%d\n" % i for i in reversed(range(n))))
        res = self.sc("get", "--file", path)
        self.assertEqual(res.rc, 4, res)
        lines = res.lines
        self.assertEqual([l["sku"] for l in lines], ["s%d" % i for i in reversed(range(n))])
        for l in lines:
            i = int(l["sku"][1:])
            if i % 7:
                self.assertEqual((l["status"], l["stock"], l["held"]), ("ok", i, 0))
            else:
                self.assertEqual((l["status"], l["held"]), ("missing", 0))

    def test_standard_input_with_crlf_blank_lines_and_an_invalid_line(self):
        self.r("SET", "stock:{a}", "3")
        res = self.sc("get", "-", input="a\r\n\nbad{x}\nb\n")
        self.assertEqual(res.rc, 2, res)
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines],
                         [("a", "ok"), ("bad{x}", "invalid"), ("b", "missing")])
        self.assertIn("stockctl: error: <stdin>:3: item 'bad{x}': ", res.stderr)
        self.assertEqual(self.sc("get", "--file", "-", input="a\n").one["stock"], 3)

    def test_standard_input_from_a_pipe_is_answered_line_by_line(self):
        # A program asking one SKU at a time through a pipe (a co-process) gets each answer
        # before it writes the next line; stdin stays open throughout.
        self.r("SET", "stock:{a}", "3")
        self.r("SET", "stock:{b}", "4")
        proc = spawn("get", "-", *self.target_args(), stdin=subprocess.PIPE)
        try:
            for sku, stock in (("a", 3), ("b", 4), ("c", None)):
                proc.stdin.write(sku + "\n")
                proc.stdin.flush()
                ready, _, _ = select.select([proc.stdout], [], [], 30)
                self.assertTrue(ready, "no answer for %s while standard input stays open" % sku)
                line = json.loads(proc.stdout.readline())
                self.assertEqual((line["sku"], line["stock"]), (sku, stock))
            proc.stdin.close()
            self.assertEqual(proc.wait(timeout=30), 4)  # c is missing
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()

    def test_skus_and_file_together_is_a_usage_error(self):
        path = self.write("s.txt", "a\n")
        res = self.sc("get", "a", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("give SKUs or --file, not both", res.stderr)
        self.assertEqual(self.sc("get", "--file", "/nonexistent/skus.txt").rc, 1)

    def test_details_add_ttl_and_lock_ttl(self):
        self.r("SET", "stock:{a}", "5", "EX", "1000")
        self.r("SET", "stock:{a}:lock", "token", "PX", "60000")
        self.r("SET", "stock:{b}", "-1")
        res = self.sc("get", "a", "b", "--details")
        self.assertEqual(res.rc, 0, res)
        a, b = res.lines
        self.assertEqual(list(a), ["op", "sku", "key", "status", "stock", "held", "ttl", "lock_ttl"])
        self.assertTrue(0 < a["ttl"] <= 1000 and 0 < a["lock_ttl"] <= 60000, a)
        self.assertEqual((b["status"], b["held"], b["ttl"], b["lock_ttl"]), ("unlimited", 0, None, None))
        # A lock with no expiry (never stockctl's) blocks the item's init for ever: it must not
        # read as no lock.
        self.r("SET", "stock:{b}:lock", "token")
        self.assertEqual(self.sc("get", "b", "--details").one["lock_ttl"], -1)


class GetSource(ServerTest):
    """get --file reads a source by its name or --format (its 'sku' column), else one SKU a line."""

    def setUp(self):
        super().setUp()
        self.r("SET", "stock:{a}", "5")
        self.r("SET", "stock:{b}", "-1")
        self.r("SET", "stock:{c,x}", "2")

    def test_every_export_format_reads_back(self):
        for fmt in ("csv", "tsv", "ndjson", "json"):
            path = os.path.join(self.tmp, "e." + fmt)
            self.assertEqual(self.sc("export", "--format", fmt, "--output", path).rc, 0)
            res = self.sc("get", "--file", path)
            self.assertEqual(res.rc, 0, (fmt, res))
            self.assertEqual(sorted((l["sku"], l["status"]) for l in res.lines),
                             [("a", "ok"), ("b", "unlimited"), ("c,x", "ok")], fmt)

    def test_format_and_sku_column_name_what_the_file_holds(self):
        path = self.write("items.txt", "item;qty\na;1\nnope;2\n")
        res = self.sc("get", "--file", path, "--format", "csv", "--sku-column", "item",
                      "--delimiter", ";")
        self.assertEqual(res.rc, 4, res)
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines], [("a", "ok"), ("nope", "missing")])
        # By its name a .txt file is one SKU per line: its header is an SKU like any other.
        res = self.sc("get", "--file", path)
        self.assertEqual([l["sku"] for l in res.lines], ["item;qty", "a;1", "nope;2"])
        # --format lines reads a .csv the same way.
        csv = self.write("skus.csv", "a\nb\n")
        res = self.sc("get", "--file", csv, "--format", "lines")
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines], [("a", "ok"), ("b", "unlimited")])

    def test_ndjson_and_standard_input_with_a_format(self):
        path = self.write("items.ndjson", '{"sku":"a"}\n{"sku":"b","other":1}\n')
        res = self.sc("get", "--file", path)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([l["sku"] for l in res.lines], ["a", "b"])
        res = self.sc("get", "-", "--format", "csv", input="sku\na\n")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([l["sku"] for l in res.lines], ["a"])
        # A JSON object map names its items by its keys.
        res = self.sc("get", "--file", self.write("m.json", '{"a": 1, "zz": 2}'))
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines], [("a", "ok"), ("zz", "missing")])

    def test_invalid_rows_are_reported_in_place_naming_file_and_line(self):
        path = self.write("bad.csv", "sku,stock\na,1\nb,2,3\nbad{x},1\n")
        res = self.sc("get", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines],
                         [("a", "ok"), ("b", "invalid"), ("bad{x}", "invalid")])
        self.assertIn("stockctl: error: %s:3: 3 fields but the header has 2" % path, res.stderr)
        self.assertIn("stockctl: error: %s:4: column 'sku': " % path, res.stderr)
        self.assertTrue(res.lines[1]["error"].startswith("%s:3: 3 fields but the header has 2" % path),
                        res.lines[1])
        nd = self.write("bad.ndjson", '{"sku":"a"}\n{"item":"b"}\n')
        res = self.sc("get", "--file", nd)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("%s:2: no 'sku' column" % nd, res.stderr)

    def test_a_header_without_the_sku_column_reads_nothing(self):
        path = self.write("semi.csv", "sku;stock\na;5\n")
        res = self.sc("get", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertEqual(res.stdout, "")
        self.assertIn("%s:1: header has no 'sku' column (fields split at ',': 1 field, 'sku;stock'); "
                      "try --delimiter ';'" % path, res.stderr)
        self.assertEqual(self.sc("get", "--file", path, "--delimiter", ";").one["stock"], 5)

    def test_source_options_without_a_source_are_refused(self):
        res = self.sc("get", "a", "--sku-column", "item")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("are for --file FILE (or -)", res.stderr)
        res = self.sc("get", "--file", self.write("s.txt", "a\n"), "--sku-column", "item")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("is read as one SKU per line", res.stderr)
        self.assertEqual(self.sc("get", "--file", "x.csv", "--format", "xml").rc, 2)


if __name__ == "__main__":
    unittest.main()
