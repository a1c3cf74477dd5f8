"""No oversell and init-once, with many real processes racing on one item."""

import os
import unittest

from harness import ServerTest, spawn

PROCESSES = 16


class Concurrency(ServerTest):
    def test_no_oversell_with_16_processes(self):
        initial, per_process = 50, 8
        self.r("SET", "stock:{hot}", str(initial))
        # Each process deducts one unit at a time, in a batch of its own: 128 attempts for 50 units.
        path = self.write("hot.csv", "sku,qty\n" + "hot,1\n" * per_process)
        procs = [spawn("deduct", "--file", path, *self.target_args()) for _ in range(PROCESSES)]
        lines = []
        for p in procs:
            out, err = p.communicate(timeout=120)
            self.assertIn(p.returncode, (0, 3), err)
            lines += [l for l in out.splitlines() if l]
        import json
        results = [json.loads(l) for l in lines]
        self.assertEqual(len(results), PROCESSES * per_process)
        ok = [r for r in results if r["status"] == "ok"]
        self.assertEqual(len(ok), initial, "successes equal the initial stock exactly")
        # Every remaining value from 49 down to 0 was handed out exactly once: never below zero.
        self.assertEqual(sorted(r["stock"] for r in ok), list(range(initial)))
        self.assertTrue(all(r["status"] in ("ok", "insufficient") for r in results))
        self.assertEqual(self.r("GET", "stock:{hot}"), "0")

    def test_init_once_with_16_processes(self):
        counter = os.path.join(self.tmp, "init-runs")
        if os.path.exists(counter):
            os.remove(counter)
        cmd = "echo run >> %s; echo 100" % counter
        procs = [spawn("deduct", "fresh", "1", "--init-cmd", cmd, *self.target_args())
                 for _ in range(PROCESSES)]
        import json
        stocks = []
        for p in procs:
            out, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
            stocks.append(json.loads(out)["stock"])
        with open(counter) as f:
            self.assertEqual(f.read().count("run"), 1, "the init command ran exactly once")
        self.assertEqual(sorted(stocks), list(range(100 - PROCESSES, 100)))
        self.assertEqual(self.r("GET", "stock:{fresh}"), str(100 - PROCESSES))
        self.assertIsNone(self.r("GET", "stock:{fresh}:lock"))

    def test_concurrent_adds_all_count(self):
        # The key is missing: every process races to create it under the init lock.
        procs = [spawn("add", "restock", "3", "--init-value", "0", *self.target_args())
                 for _ in range(PROCESSES)]
        for p in procs:
            out, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
        self.assertEqual(self.r("GET", "stock:{restock}"), str(3 * PROCESSES))


if __name__ == "__main__":
    unittest.main()
