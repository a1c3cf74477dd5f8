"""Soak: concurrent deducts, adds and rebuilds against one server that is restarted twice.

Every operation carries a request id, so whatever the restarts did to a call in flight, the
tool's own reports decide: re-running every batch afterwards replays what was applied and
applies what was not, and the final stock of each item equals its initial stock plus the adds
minus the deductions those reports call ok. Bounded: SOAK_SECONDS (default 20) of load.
"""

import json
import os
import random
import signal
import subprocess
import threading
import time
import unittest

from harness import STOCKCTL, RedisServer, clean_env

SKUS = ["s%d" % i for i in range(40)]
INITIAL = 100000
SECONDS = float(os.environ.get("SOAK_SECONDS", "20"))


class Soak(unittest.TestCase):
    def setUp(self):
        self.server = RedisServer(persist=True)
        self.dir = self.server.dir
        c = self.server.client()
        for s in SKUS:
            c("SET", "stock:{%s}" % s, str(INITIAL))
        c.close()
        self.batches = []  # (op, path)
        self.lock = threading.Lock()

    def tearDown(self):
        self.server.stop()

    def stockctl(self, *args):
        return subprocess.run([STOCKCTL, *args, "--url", self.server.url, "--retry-timeout",
                               "30000", "--connect-timeout", "500"],
                              capture_output=True, text=True, env=clean_env(), timeout=300)

    def worker(self, op, worker_id, deadline):
        rng = random.Random(worker_id)
        n = 0
        while time.monotonic() < deadline:
            path = os.path.join(self.dir, "%s-%d-%d.csv" % (op, worker_id, n))
            with open(path, "w") as f:
                f.write("sku,qty,request_id\n")
                for i in range(200):
                    f.write("%s,%d,%s-%d-%d-%d\n" % (rng.choice(SKUS), rng.randint(1, 3), op,
                                                     worker_id, n, i))
            self.stockctl(op, "--file", path)
            with self.lock:
                self.batches.append((op, path))
            n += 1

    def rebuilder(self, deadline):
        export = os.path.join(self.dir, "export.csv")
        with open(export, "w") as f:
            f.write("sku,stock\n" + "".join("%s,%d\n" % (s, INITIAL) for s in SKUS))
        while time.monotonic() < deadline:
            res = self.stockctl("rebuild", "--file", export)
            if res.returncode in (0, 5):  # done, or another rebuild held the lock
                summary = json.loads(res.stdout)
                self.assertEqual(summary["counts"]["ok"], 0, "no live key was ever missing")

    def restarter(self, deadline):
        for at in (SECONDS * 0.3, SECONDS * 0.65):
            time.sleep(max(0.0, deadline - SECONDS + at - time.monotonic()))
            self.server.kill(signal.SIGTERM)
            self.server.start(same_port=True)

    def test_final_stock_matches_the_reports_across_two_restarts(self):
        deadline = time.monotonic() + SECONDS
        threads = [threading.Thread(target=self.worker, args=("deduct", i, deadline)) for i in range(3)]
        threads += [threading.Thread(target=self.worker, args=("add", 10 + i, deadline)) for i in range(2)]
        threads += [threading.Thread(target=self.rebuilder, args=(deadline,)),
                    threading.Thread(target=self.restarter, args=(deadline,))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertGreater(len(self.batches), 5)

        expected = {s: INITIAL for s in SKUS}
        for op, path in self.batches:
            res = self.stockctl(op, "--file", path)
            self.assertEqual(res.returncode, 0, res.stderr[-1000:])
            with open(path) as f:
                rows = [line.strip().split(",") for line in f][1:]
            lines = [json.loads(l) for l in res.stdout.splitlines()]
            self.assertEqual(len(lines), len(rows), path)
            for (sku, qty, _), line in zip(rows, lines):
                self.assertEqual(line["status"], "ok", line)
                expected[sku] += int(qty) if op == "add" else -int(qty)
        c = self.server.client()
        for s in SKUS:
            self.assertEqual(int(c("GET", "stock:{%s}" % s)), expected[s], s)
        c.close()


if __name__ == "__main__":
    unittest.main()
