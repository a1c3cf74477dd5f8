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


if __name__ == "__main__":
    unittest.main()
