"""stockctl bench: a load test that checks its own result and leaves nothing behind."""

import unittest

from harness import ServerTest


class Bench(ServerTest):
    def test_hot_item_sells_exactly_its_stock(self):
        res = self.sc("bench", "--connections", "8", "--stock", "300", "--requests", "500")
        self.assertEqual(res.rc, 0, res)
        report = res.one
        self.assertEqual((report["ok"], report["insufficient"], report["errors"]), (300, 200, 0))
        self.assertEqual(report["stock_taken"], 300)
        self.assertTrue(report["correct"])
        self.assertEqual(report["requests"], 500)
        self.assertLessEqual(report["latency_us"]["p50"], report["latency_us"]["p99"])
        self.assertEqual(self.r("DBSIZE"), 0, "its keys are removed")

    def test_spread_over_many_items(self):
        res = self.sc("bench", "-c", "4", "--items", "20", "--stock", "10", "-n", "400")
        self.assertEqual((res.rc, res.one["ok"], res.one["insufficient"]), (0, 200, 200))
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_refuses_keys_it_did_not_create(self):
        self.r("SET", "stock:{r-0}", "7")
        res = self.sc("bench", "--bench-prefix", "stock:", "--run-id", "r", "-n", "10", "-c", "1")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("refusing to run: stock:{r-0} exists and was not created by this bench", res.stderr)
        self.assertEqual(self.r("GET", "stock:{r-0}"), "7")
        self.assertEqual(self.r("DBSIZE"), 1)

    def test_slot_groups_applies_only_to_orders_on_a_cluster(self):
        res = self.sc("bench", "--slot-groups", "2", "-n", "1", "-c", "1")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("bench --slot-groups applies only to --mode order with --cluster", res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)


if __name__ == "__main__":
    unittest.main()
