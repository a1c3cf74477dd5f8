"""Side by side with the classic Java StockService on the same keys (--no-hashtag layout)."""

import os
import unittest

from harness import ROOT, ServerTest

CLASSIC = ("--prefix", "redis_key:stock:", "--no-hashtag")


def classic_script():
    with open(os.path.join(ROOT, "tests", "fixtures", "classic_stock_service.lua")) as f:
        return f.read()


class ClassicInterop(ServerTest):
    def classic_deduct(self, sku, qty):
        return self.r("EVAL", classic_script(), 1, "redis_key:stock:" + sku, qty)

    def test_stockctl_reads_and_deducts_what_the_service_wrote(self):
        # The service stores the initial stock as a plain integer string.
        self.r("SET", "redis_key:stock:1001", "100")
        self.assertEqual(self.classic_deduct("1001", 5), 95)
        res = self.sc("deduct", "1001", "3", *CLASSIC)
        self.assertEqual((res.rc, res.one["key"], res.one["stock"]), (0, "redis_key:stock:1001", 92))
        self.assertEqual(self.classic_deduct("1001", 2), 90)
        self.assertEqual(self.sc("get", "1001", *CLASSIC).one["stock"], 90)

    def test_service_deducts_what_stockctl_created(self):
        self.assertEqual(self.sc("init", "2002", "10", *CLASSIC).rc, 0)
        self.assertEqual(self.classic_deduct("2002", 4), 6)
        self.assertEqual(self.sc("deduct", "2002", "6", *CLASSIC).one["stock"], 0)
        self.assertEqual(self.classic_deduct("2002", 1), -2)
        self.assertEqual(self.sc("deduct", "2002", "1", *CLASSIC).one["status"], "insufficient")

    def test_both_agree_on_unlimited_and_missing(self):
        self.sc("init", "u", "unlimited", *CLASSIC)
        self.assertEqual(self.classic_deduct("u", 7), -1)
        self.assertEqual(self.sc("deduct", "u", "7", *CLASSIC).one["status"], "unlimited")
        self.assertEqual(self.classic_deduct("absent", 1), -3)
        self.assertEqual(self.sc("deduct", "absent", "1", *CLASSIC).one["status"], "uninitialized")

    def test_interleaved_deductions_never_oversell(self):
        self.r("SET", "redis_key:stock:mix", "10")
        taken = 0
        for i in range(12):
            if i % 2:
                res = self.sc("deduct", "mix", "1", *CLASSIC)
                taken += res.one["status"] == "ok"
            else:
                taken += self.classic_deduct("mix", 1) >= 0
        self.assertEqual(taken, 10)
        self.assertEqual(self.r("GET", "redis_key:stock:mix"), "0")


if __name__ == "__main__":
    unittest.main()
