"""get --file / get -: many items pipelined in input order; get --details; held."""

import unittest

from harness import ServerTest


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


if __name__ == "__main__":
    unittest.main()
