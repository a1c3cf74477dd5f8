"""reap over many expired cluster holds (each one a record in its id's slot and a group on its
item's node, see docs/holds.md): it finishes and gives back exactly their units. About a minute
on a 2-core machine, most of it placing the holds (one protocol run each); STOCKCTL_REAP_HOLDS
sets another count."""

import os
import time
import unittest

from harness import RedisCluster, run

HOLDS = int(os.environ.get("STOCKCTL_REAP_HOLDS", "100000"))
ITEMS = 1000
INITIAL = 1000


class ReapManyOnCluster(unittest.TestCase):
    def setUp(self):
        self.cluster = RedisCluster(primaries=3, replicas_per_primary=0)
        self.r = self.cluster.client()
        self.on = ("--url", self.cluster.url, "--cluster", "--no-log")

    def tearDown(self):
        self.r.close()
        self.cluster.stop()

    def server_ms(self):
        """The latest clock of the primaries (each record's expiry is its own node's time)."""
        latest = 0
        for port in self.r.primaries():
            sec, usec = self.r._conn(port)("TIME")
            latest = max(latest, int(sec) * 1000 + int(usec) // 1000)
        return latest

    def stock_and_held(self):
        stock = held = 0
        for i in range(ITEMS):
            stock += int(self.r("GET", "stock:{i%d}" % i))
            held += int(self.r("HGET", "stock:{i%d}:held" % i, "") or 0)
        return stock, held

    def test_reap_returns_exactly_the_units_of_many_expired_cluster_holds(self):
        path = os.path.join(self.cluster.nodes[0].dir, "holds.csv")
        units = 0
        with open(path, "w") as f:
            f.write("id,sku,qty\n")
            for i in range(HOLDS):
                qty = 1 + i % 3
                units += qty
                f.write("h%d,i%d,%d\n" % (i, i % ITEMS, qty))
        res = run("hold", "--file", path, "--expire", "1", "--init-value", str(INITIAL), *self.on,
                  timeout=1800)
        self.assertEqual(res.rc, 0, res.stderr[-2000:])
        lines = res.stdout.splitlines()
        self.assertEqual(len(lines), HOLDS)
        latest = max(int(l.split('"expires_at_ms":')[1].split(",")[0]) for l in lines)
        while self.server_ms() < latest:
            time.sleep(0.2)
        # Nothing gives a cluster hold back by itself: every unit is still held.
        self.assertEqual(self.stock_and_held(), (ITEMS * INITIAL - units, units))
        started = time.monotonic()
        res = run("reap", *self.on, timeout=1800)
        print("\nreap of %d expired cluster holds: %.1f s" % (HOLDS, time.monotonic() - started))
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.one, {"op": "reap", "holds": HOLDS, "units": units, "units_nowhere": 0})
        self.assertEqual(self.stock_and_held(), (ITEMS * INITIAL, 0))
        self.assertEqual(run("reap", *self.on).one, {"op": "reap", "holds": 0, "units": 0, "units_nowhere": 0})


if __name__ == "__main__":
    unittest.main()
