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
        self.assertEqual(res.stdout, "")
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


if __name__ == "__main__":
    unittest.main()
