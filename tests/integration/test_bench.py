"""stockctl bench: a load test that checks its own result and leaves nothing behind."""

import unittest

from harness import ServerTest, run_on_terminal


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

    def test_every_figure_names_its_unit(self):
        res = self.sc("bench", "-c", "2", "--stock", "100", "-n", "50")
        self.assertEqual(res.rc, 0, res)
        report = res.one
        self.assertEqual(list(report), ["op", "mode", "connections", "items", "requests", "elapsed_ms",
                                        "throughput_per_s", "latency_us", "ok", "insufficient", "errors",
                                        "stock_taken", "correct"])
        self.assertNotIn("throughput", report)
        self.assertGreater(report["throughput_per_s"], 0)

    def test_progress_reaches_100_percent_and_is_cleared_before_the_summary(self):
        rc, seen = run_on_terminal("bench", "-c", "4", "--stock", "300", "-n", "500", *self.target_args())
        self.assertEqual(rc, 0, seen)
        summary = seen.index('{"op":"bench"')
        progress = seen[:summary]
        self.assertIn("bench: 500/500 requests (100%)", progress)
        # The last thing before the summary clears the line the progress was drawn on.
        self.assertTrue(progress.endswith("\r\x1b[K"), repr(progress))
        self.assertNotIn("requests", seen[summary:].replace('"requests"', ""))

    def test_progress_is_not_drawn_when_standard_error_is_not_a_terminal(self):
        res = self.sc("bench", "-c", "2", "--stock", "10", "-n", "20")
        self.assertEqual((res.rc, res.stderr), (0, ""))

    def test_table(self):
        res = self.sc("bench", "-c", "2", "--stock", "100", "-n", "50", "--table")
        self.assertEqual(res.rc, 0, res)
        fields = dict(line.split(None, 1) for line in res.stdout.splitlines())
        self.assertEqual(fields["op"], "bench")
        self.assertEqual(fields["requests"].strip(), "50")
        self.assertRegex(fields["throughput_per_s"], r"^ *\d+$")
        self.assertRegex(fields["latency_us.p99"], r"^ *\d+$")
        self.assertEqual(fields["correct"], "true")

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

    def test_a_split_hot_item_sells_exactly_its_stock_and_is_merged_back(self):
        # --buckets 3: the hot item over 3 buckets (on a cluster one per primary), each
        # connection on one bucket; a bucket that runs dry sends its buyers to the others, so
        # every unit sells, and the rest are insufficient only once all three are empty.
        res = self.sc("bench", "-c", "8", "--stock", "300", "-n", "500", "--buckets", "3")
        self.assertEqual(res.rc, 0, res)
        report = res.one
        self.assertEqual(report["buckets"], 3)
        self.assertEqual((report["ok"], report["insufficient"], report["errors"]), (300, 200, 0))
        self.assertEqual((report["stock_taken"], report["correct"]), (300, True))
        self.assertEqual(self.r("DBSIZE"), 0, "merged back and removed, hints and all")

    def test_buckets_applies_to_one_hot_item_deducted(self):
        for extra in (("--items", "2"), ("--mode", "order", "--items", "3")):
            res = self.sc("bench", "-n", "10", "--buckets", "2", *extra)
            self.assertEqual(res.rc, 2, res)
            self.assertIn("bench --buckets applies to one hot item (--items 1) in --mode deduct",
                          res.stderr)
        res = self.sc("bench", "-n", "10", "--buckets", "65")
        self.assertEqual(res.rc, 2, res)

    def test_slot_groups_applies_only_to_orders_on_a_cluster(self):
        res = self.sc("bench", "--slot-groups", "2", "-n", "1", "-c", "1")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("bench --slot-groups applies only to --mode order with --cluster", res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)


if __name__ == "__main__":
    unittest.main()
