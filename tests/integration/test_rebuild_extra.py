"""rebuild --extra: items Redis holds and the source lacks are reported, nothing is changed."""

import json
import os
import unittest

from harness import ServerTest


class RebuildExtra(ServerTest):
    def rebuild(self, text, *args):
        path = self.write("export.csv", text)
        report = os.path.join(self.tmp, "report.jsonl")
        res = self.sc("rebuild", "--file", path, "--report", report, *args)
        with open(report) as f:
            return res, [json.loads(l) for l in f]

    def test_items_missing_from_the_source_are_extra_and_untouched(self):
        for sku, value in (("a", "3"), ("b", "3"), ("gone-1", "7"), ("gone-2", "-1")):
            self.r("SET", "stock:{%s}" % sku, value)
        self.r("SET", "stock:{a}:lock", "token")  # companion keys are never items
        res, report = self.rebuild("sku,stock\na,3\nb,4\nnew,5\n", "--extra")
        self.assertEqual(res.rc, 0, res)
        summary = res.one
        self.assertEqual((summary["rows"], summary["counts"]["extra"], summary["counts"]["drift"]),
                         (3, 2, 1))
        extra = sorted((l["sku"], l["stock"]) for l in report if l["status"] == "extra")
        self.assertEqual(extra, [("gone-1", 7), ("gone-2", None)])
        self.assertEqual([l["sku"] for l in report[:3]], ["a", "b", "new"])
        self.assertEqual(self.r("GET", "stock:{gone-1}"), "7")

    def test_extra_items_are_named_on_standard_error(self):
        self.r("SET", "stock:{gone}", "7")
        res, _ = self.rebuild("sku,stock\na,3\n", "--extra")
        self.assertEqual(res.rc, 0, res)
        self.assertIn("stockctl: warning: extra: item 'gone': stock:{gone} is in Redis and the "
                      "source has no row for it\n", res.stderr)

    def test_without_the_flag_nothing_is_extra(self):
        self.r("SET", "stock:{x}", "1")
        res, report = self.rebuild("sku,stock\ny,1\n")
        self.assertEqual(res.one["counts"]["extra"], 0)
        self.assertEqual([l["sku"] for l in report], ["y"])

    def test_dry_run_and_many_items(self):
        n = 3000
        self.r("MSET", *[x for i in range(n) for x in ("stock:{i%d}" % i, "1")])
        rows = "".join("i%d,1\n" % i for i in range(n) if i % 3)
        res, report = self.rebuild("sku,stock\n" + rows, "--extra", "--dry-run")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(sorted(l["sku"] for l in report if l["status"] == "extra"),
                         sorted("i%d" % i for i in range(n) if i % 3 == 0))
        named = [l for l in res.stderr.splitlines() if "warning: extra: item" in l]
        self.assertEqual(len(named), 10, res.stderr)
        self.assertIn("stockctl: warning: and 990 more extra items (--report lists every one)",
                      res.stderr)


if __name__ == "__main__":
    unittest.main()
