"""What a source must look like, and what a run does with it: field counts, header names,
records spanning lines, JSON shapes, request ids, forced writes and --init-from."""

import json
import os
import unittest

from harness import ServerTest


class CsvRecords(ServerTest):
    def test_more_fields_than_the_header_is_invalid_and_writes_nothing(self):
        path = self.write("comma.csv", "sku,stock\nB,2\nA,1,000\n")
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertEqual((res.one["status"], res.one["counts"]["invalid"]), ("invalid", 1))
        self.assertIn("stockctl: error: %s:3: 3 fields but the header has 2 (quote a value that holds a comma)"
                      % path, res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_a_header_naming_a_column_twice_is_invalid(self):
        path = self.write("twice.csv", "sku,stock,stock\nA,1,2\n")
        for skip in ((), ("--skip-invalid",)):
            res = self.sc("init", "--file", path, *skip)
            self.assertEqual(res.rc, 2, res)
            self.assertIn("stockctl: error: %s:1: the header names column 'stock' twice (columns 2 and 3)" % path,
                          res.stderr)
            self.assertEqual(self.r("DBSIZE"), 0)

    def test_psql_copy_csv_output_with_line_breaks_loads(self):
        # What psql's `\copy (select sku, note, stock from item) to stdout csv header` writes when
        # a free-text column holds line breaks (one of them CRLF) and quotes.
        text = ('sku,note,stock\n'
                'A,"two\nlines",5\n'
                'B,plain,6\n'
                'C,"has ""quotes"", commas\r\nand crlf",7\n'
                'D,,8\n'
                'E,"",9\n')
        path = self.write("pg.csv", text)
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("MGET", *("stock:{%s}" % s for s in "ABCDE")), ["5", "6", "7", "8", "9"])

    def test_messages_name_the_physical_line_a_record_starts_on(self):
        path = self.write("lines.csv", 'sku,note,stock\nA,"one\ntwo\nthree",1\nB,"x\ny",oops\nC,z,-3\n')
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("%s:5: column 'stock': 'oops'" % path, res.stderr)
        self.assertIn("%s:7: column 'stock': '-3'" % path, res.stderr)

    def test_crlf_file_with_a_line_break_inside_quotes_loads(self):
        # Spreadsheet exports end every record with CRLF; the SKU being the last column, the
        # record's own CR must not stick to it.
        path = self.write("excel.csv", 'note,stock,sku\r\n"a\r\nb",5,X\r\nc,6,Y\r\n')
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("MGET", "stock:{X}", "stock:{Y}"), ["5", "6"])


class JsonShapes(ServerTest):
    EXPECTED = ('expected an array of objects ([{"sku": "A1", "stock": 5}, ...]) '
                'or an object mapping SKU to stock ({"A1": 5, ...})')

    def test_one_row_object_is_refused_even_with_skip_invalid(self):
        path = self.write("one.json", '{"sku":"x","stock":5}')
        for skip in ((), ("--skip-invalid",)):
            res = self.sc("init", "--file", path, *skip)
            self.assertEqual(res.rc, 2, res)
            self.assertIn("stockctl: error: %s:1: 'sku' looks like a column name, not a SKU: %s"
                          % (path, self.EXPECTED), res.stderr)
            self.assertEqual(self.r("DBSIZE"), 0, "stock:{stock} or stock:{sku} must not appear")

    def test_map_whose_values_are_not_all_numbers_is_refused(self):
        path = self.write("notes.json", '{"A1": 5,\n "B2": "five"}')
        res = self.sc("init", "--file", path, "--skip-invalid")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("%s:2: the value of 'B2' is a string, not a number: %s" % (path, self.EXPECTED),
                      res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_renamed_columns_are_recognised_in_a_batch(self):
        self.r("SET", "stock:{x}", "10")
        path = self.write("op.json", '{"item": "x", "n": 2}')
        res = self.sc("deduct", "--file", path, "--sku-column", "item", "--qty-column", "n")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("'item' looks like a column name, not a SKU", res.stderr)
        self.assertIn('or an object mapping SKU to n ({"A1": 5, ...})', res.stderr)
        self.assertEqual(self.r("GET", "stock:{x}"), "10")

    def test_a_map_of_numbers_still_loads(self):
        path = self.write("map.json", '{"A1": 5, "B2": -1, "C3": "unlimited", "D4": 0}')
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("MGET", "stock:{A1}", "stock:{B2}", "stock:{C3}", "stock:{D4}"),
                         ["5", "-1", "-1", "0"])

    def test_a_fraction_in_a_map_is_an_invalid_row_not_a_dropped_one(self):
        path = self.write("frac.json", '{"A1": 1.5, "B2": 2}')
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("%s:1: column 'stock': '1.5' is not a stock value" % path, res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)


class RequestIds(ServerTest):
    def test_an_empty_request_id_option_is_invalid_input(self):
        self.r("SET", "stock:{a}", "10")
        for op in ("deduct", "add"):
            res = self.sc(op, "a", "1", "--request-id", "")
            self.assertEqual((res.rc, res.one["status"]), (2, "invalid"), res)
            self.assertIn("a request id cannot be empty", res.one["error"])
            self.assertIn("stockctl: error:", res.stderr)
        self.assertEqual(self.r("GET", "stock:{a}"), "10")
        self.assertEqual(self.r("DBSIZE"), 1, "no ledger record either")

    def test_an_empty_request_id_cell_is_an_invalid_row(self):
        self.r("SET", "stock:{a}", "10")
        path = self.write("ids.csv", "sku,qty,request_id\na,1,order-1\na,2,\n")
        res = self.sc("deduct", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("stockctl: error: %s:3: column 'request_id' is empty" % path,
                      res.stderr)
        self.assertEqual(self.r("GET", "stock:{a}"), "10")

    def test_an_empty_request_id_in_json_is_an_invalid_row(self):
        self.r("SET", "stock:{a}", "10")
        path = self.write("ids.ndjson", '{"sku":"a","qty":1,"request_id":"r1"}\n{"sku":"a","qty":1,"request_id":""}\n')
        res = self.sc("add", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("%s:2: column 'request_id' is empty" % path, res.stderr)
        self.assertEqual(self.r("GET", "stock:{a}"), "10")

    def test_request_id_option_with_a_file_is_a_usage_error(self):
        self.r("SET", "stock:{a}", "10")
        path = self.write("plain.csv", "sku,qty\na,1\n")
        for op in ("deduct", "add"):
            res = self.sc(op, "--file", path, "--request-id", "X")
            self.assertEqual(res.rc, 2, res)
            self.assertEqual(res.stdout, "")
            self.assertIn("stockctl: error: %s: --request-id is for one item; with --file, each row's id "
                          "comes from its 'request_id' column" % op, res.stderr)
        self.assertEqual(self.r("GET", "stock:{a}"), "10")


class SkipInvalid(ServerTest):
    def test_each_invalid_batch_row_is_printed_once(self):
        self.r("SET", "stock:{a}", "10")
        path = self.write("mixed.csv", "sku,qty\na,1\nb,x\na,1\n")
        for op in ("deduct", "add"):
            res = self.sc(op, "--file", path, "--skip-invalid")
            self.assertEqual(res.rc, 2, res)
            self.assertEqual([l["status"] for l in res.lines], ["ok", "invalid", "ok"])
            self.assertEqual(res.stderr.count("'x' is not a quantity"), 1, res.stderr)
        self.assertEqual(self.r("GET", "stock:{a}"), "10")

    def test_each_invalid_file_row_is_printed_once(self):
        path = self.write("mixed.csv", "sku,stock\na,1\nb,x\n")
        for op in ("init", "rebuild"):
            self.r("FLUSHALL")
            res = self.sc(op, "--file", path, "--skip-invalid")
            self.assertEqual(res.rc, 2, res)
            self.assertEqual(res.stderr.count("'x' is not a stock value"), 1, res.stderr)


class ForcedWrites(ServerTest):
    def report(self, *args):
        path = os.path.join(self.tmp, "forced.jsonl")
        res = self.sc(*args, "--report", path)
        with open(path) as f:
            return res, {l["sku"]: l for l in map(json.loads, f)}

    def test_init_force_of_the_same_value_is_ok_with_previous_and_keeps_the_ttl(self):
        self.r("SET", "stock:{a}", "5", "EX", "1000")
        res = self.sc("init", "a", "5", "--force")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual((res.one["status"], res.one["stock"], res.one["previous"]), ("ok", 5, 5))
        self.assertTrue(900 < self.r("TTL", "stock:{a}") <= 1000)

    def test_init_force_reports_what_it_replaced(self):
        self.r("SET", "stock:{a}", "-1", "EX", "1000")
        res = self.sc("init", "a", "7", "--force")
        self.assertEqual((res.one["status"], res.one["stock"], res.one["previous"]), ("ok", 7, -1))
        self.assertTrue(900 < self.r("TTL", "stock:{a}") <= 1000)
        res = self.sc("init", "b", "7", "--force")
        self.assertIsNone(res.one["previous"])
        self.assertIn("previous", res.one)
        self.assertEqual(self.r("TTL", "stock:{b}"), -1)
        self.assertNotIn("previous", self.sc("init", "c", "7").one, "only forced writes say it")

    def test_init_force_with_ttl_sets_the_given_ttl(self):
        self.r("SET", "stock:{a}", "5", "EX", "1000")
        self.sc("init", "a", "6", "--force", "--ttl", "50")
        self.assertTrue(0 < self.r("TTL", "stock:{a}") <= 50)

    def test_init_file_force_reports_previous_for_every_row(self):
        self.r("SET", "stock:{a}", "1", "EX", "1000")
        self.r("SET", "stock:{b}", "2")
        path = self.write("f.csv", "sku,stock\na,9\nb,2\nc,3\n")
        res, items = self.report("init", "--file", path, "--force")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.one["counts"]["ok"], 3)
        self.assertEqual({s: (i["status"], i["previous"]) for s, i in items.items()},
                         {"a": ("ok", 1), "b": ("ok", 2), "c": ("ok", None)})
        self.assertTrue(900 < self.r("TTL", "stock:{a}") <= 1000)

    def test_rebuild_force_reports_previous_and_keeps_the_ttl(self):
        self.r("SET", "stock:{a}", "4", "EX", "1000")   # differs from the export
        self.r("SET", "stock:{b}", "0", "EX", "1000")   # equal to it
        self.r("SET", "stock:{d}", "junk")              # corrupt
        path = self.write("export.csv", "sku,total,issued\na,100,30\nb,50,50\nc,10,1\nd,3,0\n")
        res, items = self.report("rebuild", "--file", path, "--force")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual({s: (i["status"], i["stock"], i["previous"]) for s, i in items.items()},
                         {"a": ("ok", 70, 4), "b": ("ok", 0, 0), "c": ("ok", 9, None),
                          "d": ("ok", 3, "junk")})
        self.assertEqual(self.r("MGET", "stock:{a}", "stock:{b}", "stock:{c}", "stock:{d}"),
                         ["70", "0", "9", "3"])
        self.assertTrue(900 < self.r("TTL", "stock:{a}") <= 1000)
        self.assertTrue(900 < self.r("TTL", "stock:{b}") <= 1000)
        self.assertEqual(self.r("TTL", "stock:{c}"), -1)

    def test_rebuild_force_with_ttl_sets_it(self):
        self.r("SET", "stock:{a}", "4", "EX", "1000")
        self.r("SET", "stock:{b}", "5", "EX", "1000")  # already the export's value
        path = self.write("export.csv", "sku,stock\na,5\nb,5\n")
        self.assertEqual(self.sc("rebuild", "--file", path, "--force", "--ttl", "50").rc, 0)
        self.assertTrue(0 < self.r("TTL", "stock:{a}") <= 50)
        self.assertTrue(0 < self.r("TTL", "stock:{b}") <= 50)

    def test_rebuild_force_dry_run_says_what_it_would_replace(self):
        self.r("SET", "stock:{a}", "4")
        self.r("SET", "stock:{b}", "5")
        path = self.write("export.csv", "sku,stock\na,5\nb,5\nc,5\n")
        res, items = self.report("rebuild", "--file", path, "--force", "--dry-run")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual({s: (i["status"], i["previous"]) for s, i in items.items()},
                         {"a": ("ok", 4), "b": ("ok", 5), "c": ("ok", None)})
        self.assertEqual(self.r("MGET", "stock:{a}", "stock:{b}", "stock:{c}"), ["4", "5", None])


class InitFrom(ServerTest):
    def test_the_source_is_read_once_per_run(self):
        # A pipe can be read only once: with one read per missing item, every item after the
        # first found the source empty.
        self.r("SET", "stock:{b}", "50")
        ops = self.write("ops.csv", "sku,qty\na,1\nb,1\nc,2\nd,3\n")
        res = self.sc("deduct", "--file", ops, "--init-from", "/dev/stdin", "--format", "csv",
                      input="sku,stock\nd,40\nc,30\nb,20\na,10\n")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([(l["sku"], l["stock"]) for l in res.lines],
                         [("a", 9), ("b", 49), ("c", 28), ("d", 37)])

    def test_a_sku_the_source_lacks_or_repeats_or_spells_badly_creates_nothing(self):
        init = self.write("init.csv", "sku,stock\na,1\nb,x\nc,3\na,4\n")
        ops = self.write("ops.csv", "sku,qty\na,1\nb,1\nc,1\nz,1\n")
        res = self.sc("deduct", "--file", ops, "--init-from", init)
        self.assertEqual(res.rc, 1, res)
        by_sku = {l["sku"]: l for l in res.lines}
        self.assertEqual(by_sku["c"]["stock"], 2)
        self.assertIn("--init-from %s:5: duplicate SKU 'a' (first on line 2)" % init, by_sku["a"]["error"])
        self.assertIn("--init-from %s:3: column 'stock': 'x'" % init, by_sku["b"]["error"])
        self.assertIn("--init-from %s: no row for item 'z'" % init, by_sku["z"]["error"])
        # A row that is invalid input is `invalid` (exit 2, named by file and line); no row is an
        # error (exit 1, which wins).
        self.assertEqual([by_sku[s]["status"] for s in "abz"], ["invalid", "invalid", "error"])
        self.assertEqual([self.r("GET", "stock:{%s}" % s) for s in "abcz"], [None, None, "2", None])
        res = self.sc("deduct", "b", "1", "--init-from", init)
        self.assertEqual((res.rc, res.one["status"]), (2, "invalid"), res)

    def test_a_broken_source_fails_every_item(self):
        # A source whose structure is broken is invalid input (exit 2), as it is for init.
        init = self.write("init.csv", "sku,stock\na,1\nb,\"2\n")
        ops = self.write("ops.csv", "sku,qty\na,1\nb,1\n")
        res = self.sc("deduct", "--file", ops, "--init-from", init)
        self.assertEqual(res.rc, 2, res)
        for line in res.lines:
            self.assertEqual(line["status"], "invalid", line)
            self.assertIn("--init-from %s:3: unterminated quoted field" % init, line["error"])
        self.assertEqual(self.r("DBSIZE"), 0)
        for text, problem in (("", ":1: no header row: the source is empty"),
                              ("sku;stock\na;10\n", ":1: header has no 'sku' column")):
            init = self.write("init.csv", text)
            res = self.sc("deduct", "a", "1", "--init-from", init)
            self.assertEqual((res.rc, res.one["status"]), (2, "invalid"), res)
            self.assertIn("--init-from %s%s" % (init, problem), res.one["error"])
        self.assertEqual(self.r("DBSIZE"), 0)


class PaddedSkus(ServerTest):
    """White space around a SKU is invalid on every path, or trimmed on every path by --trim."""

    HINT = "has white space at its start or end (--trim removes it)"

    def test_a_padded_csv_sku_is_invalid_naming_file_and_line_and_trim_loads_it(self):
        path = self.write("pad.csv", "sku,stock\nB-6 ,8\nB-5, 7\n")
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("stockctl: error: %s:2: column 'sku': item id 'B-6 ' %s" % (path, self.HINT),
                      res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)
        res = self.sc("init", "--file", path, "--trim")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("MGET", "stock:{B-6}", "stock:{B-5}"), ["8", "7"])

    def test_a_char_n_column_from_cmd_is_invalid_and_trim_loads_it(self):
        cmd = "printf 'sku,stock\\nCH-1    ,3\\n'"
        res = self.sc("rebuild", "--from-cmd", cmd)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("<from-cmd>:2: column 'sku': item id 'CH-1    ' " + self.HINT, res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)
        self.assertEqual(self.sc("rebuild", "--from-cmd", cmd, "--trim").rc, 0)
        self.assertEqual(self.r("GET", "stock:{CH-1}"), "3")

    def test_padded_arguments_and_lines_are_invalid_unless_trimmed(self):
        self.r("SET", "stock:{A}", "4")
        res = self.sc("get", "A ")
        self.assertEqual((res.rc, res.one["status"]), (2, "invalid"), res)
        self.assertIn(self.HINT, res.one["error"])
        self.assertEqual(self.sc("init", " A", "5").rc, 2)
        self.assertEqual(self.sc("deduct", "A ", "1").rc, 2)
        self.assertEqual(self.r("GET", "stock:{A}"), "4")
        self.assertEqual(self.sc("get", "A ", "--trim").one["stock"], 4)
        self.assertEqual(self.sc("deduct", " A", "1", "--trim").one["stock"], 3)
        res = self.sc("get", "--file", self.write("s.txt", "A\t\n"))
        self.assertEqual(res.rc, 2, res)
        self.assertIn("s.txt:1: item 'A\\t': item id 'A\\t' " + self.HINT, res.stderr)
        self.assertEqual(self.sc("get", "-", "--trim", input="  A \n").one["stock"], 3)
        for padded in ("A ", " A"):
            self.assertEqual(self.r("EXISTS", "stock:{%s}" % padded), 0)

    def test_init_from_names_the_padded_row(self):
        path = self.write("init.csv", "sku,stock\nA ,5\n")
        res = self.sc("deduct", "A", "1", "--init-from", path)
        self.assertEqual((res.rc, res.one["status"]), (2, "invalid"), res)  # as any bad init row
        self.assertIn("--init-from %s:2: column 'sku': item id 'A ' %s" % (path, self.HINT), res.stderr)
        self.assertIsNone(self.r("GET", "stock:{A}"))
        res = self.sc("deduct", "A", "1", "--init-from", path, "--trim")
        self.assertEqual(res.one["stock"], 4, res)

    def test_export_lists_an_item_stored_with_a_padded_sku_and_warns(self):
        self.r("SET", "stock:{P }", "2")
        res = self.sc("export")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([l["sku"] for l in res.lines], ["P "])
        self.assertIn("stockctl: warning: item 'P ' has white space at its start or end", res.stderr)


class Delimiters(ServerTest):
    def test_a_semicolon_export_says_what_was_tried_and_loads_with_delimiter(self):
        path = self.write("eu.csv", "sku;stock\nA;1\n\"B;x\";2\n")
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("stockctl: error: %s:1: header has no 'sku' column (fields split at ',': 1 field, "
                      "'sku;stock'); try --delimiter ';'" % path, res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)
        res = self.sc("init", "--file", path, "--delimiter", ";")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("MGET", "stock:{A}", "stock:{B;x}"), ["1", "2"])

    def test_a_delimiter_must_be_one_character_and_csv_only(self):
        path = self.write("eu.csv", "sku;stock\nA;1\n")
        for bad in (";;", "", '"'):
            res = self.sc("init", "--file", path, "--delimiter", bad)
            self.assertEqual(res.rc, 2, (bad, res))
            self.assertIn("--delimiter", res.stderr)
        tsv = self.write("t.tsv", "sku\tstock\nA\t1\n")
        res = self.sc("init", "--file", tsv, "--delimiter", ";")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("%s: --delimiter applies to CSV only" % tsv, res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_batch_deduct_and_init_from_use_the_delimiter(self):
        self.r("SET", "stock:{A}", "5")
        res = self.sc("deduct", "--file", self.write("d.csv", "sku;qty\nA;2\n"), "--delimiter", ";")
        self.assertEqual(res.one["stock"], 3, res)
        res = self.sc("deduct", "N", "1", "--init-from", self.write("i.csv", "sku|stock\nN|9\n"),
                      "--delimiter", "|")
        self.assertEqual(res.one["stock"], 8, res)


class StockColumnChoice(ServerTest):
    def test_stock_with_total_and_issued_is_ambiguous_unless_an_option_chooses(self):
        path = self.write("both.csv", "sku,stock,total,issued\nA,5,10,3\n")
        res = self.sc("rebuild", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("stockctl: error: %s:1: header has both a 'stock' column and 'total' and 'issued': "
                      "ambiguous; choose with --stock-column stock or --total-column total "
                      "--issued-column issued" % path, res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)
        self.assertEqual(self.sc("init", "--file", path, "--stock-column", "stock").rc, 0)
        self.assertEqual(self.r("GET", "stock:{A}"), "5")
        self.assertEqual(self.sc("init", "--file", path, "--total-column", "total", "--force").rc, 0)
        self.assertEqual(self.r("GET", "stock:{A}"), "7")

    def test_a_json_row_with_both_is_invalid(self):
        path = self.write("both.ndjson", '{"sku":"A","stock":1}\n{"sku":"B","stock":1,"total":3}\n')
        res = self.sc("init", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("%s:2: row has both a 'stock' column and 'total': ambiguous" % path, res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)
        res = self.sc("init", "--file", path, "--issued-column", "issued")
        self.assertEqual(res.rc, 2, res)  # total - issued chosen: row 1 has neither
        self.assertEqual(self.sc("init", "--file", path, "--stock-column", "stock").rc, 0)


if __name__ == "__main__":
    unittest.main()
