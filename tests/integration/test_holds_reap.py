"""reap over 100,000 expired holds: it finishes and gives back exactly their units."""

import os
import time
import unittest

from harness import TARGET, ServerTest

HOLDS = 100000
ITEMS = 1000


def server_ms(r):
    sec, usec = r("TIME")
    return int(sec) * 1000 + int(usec) // 1000


@unittest.skipIf(TARGET in ("cluster", "tls-cluster"), "one Redis (reap on a cluster: test_holds.py, Holds)")
class ReapMany(ServerTest):
    def test_reap_returns_exactly_the_units_of_100k_expired_holds(self):
        path = os.path.join(self.tmp, "holds.csv")
        units = 0
        with open(path, "w") as f:
            f.write("id,sku,qty\n")
            for i in range(HOLDS):
                qty = 1 + i % 3
                units += qty
                f.write("h%d,i%d,%d\n" % (i, i % ITEMS, qty))
        # Long enough that no hold expires while the file is still being held (a later hold on
        # the same item would give the earlier one back by itself), short enough for a test.
        res = self.sc("hold", "--file", path, "--expire", "45", "--init-value", "1000", "--no-log",
                      timeout=600)
        self.assertEqual(res.rc, 0, res.stderr[-2000:])
        self.assertEqual(len(res.stdout.splitlines()), HOLDS)
        latest = max(int(l.split('"expires_at_ms":')[1].split(",")[0]) for l in res.stdout.splitlines())
        while server_ms(self.r) < latest:
            time.sleep(0.2)
        stock = sum(int(self.r("GET", "stock:{i%d}" % i)) for i in range(ITEMS))
        # What is still out: every hold whose item nothing touched after it expired.
        pending = sum(self.r("ZCARD", "stock:{i%d}:holds" % i) for i in range(ITEMS))
        out = sum(int(self.r("HGET", "stock:{i%d}:held" % i, "") or 0) for i in range(ITEMS))
        self.assertEqual(stock + out, ITEMS * 1000)
        self.assertEqual((pending, out), (HOLDS, units))
        res = self.sc("reap", timeout=600)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.one, {"op": "reap", "holds": HOLDS, "units": units, "units_nowhere": 0})
        stock = sum(int(self.r("GET", "stock:{i%d}" % i)) for i in range(ITEMS))
        self.assertEqual(stock, ITEMS * 1000)
        self.assertEqual(self.r("EXISTS", "stockctl:holds-index:stock:"), 0)
        self.assertEqual(self.sc("reap").one, {"op": "reap", "holds": 0, "units": 0, "units_nowhere": 0})


if __name__ == "__main__":
    unittest.main()
