"""init and rebuild of items with holds: the value written is the item's units not yet sold, so
the units of its live holds are left out of the stock (they are in `held`), and expired holds
give their units back first (on one Redis; a cluster's come back through reap). Conservation,
initial + added = stock + held + sold, must hold before and after every release, confirm and
reap. Runs on one Redis and, with STOCKCTL_TARGET=cluster, on a 3+3 cluster."""

import json
import os
import time
import unittest

from harness import TARGET, ServerTest

CLUSTER = TARGET in ("cluster", "tls-cluster")


def now_ms(r, key):
    """The clock of the node that holds `key` (one Redis: the server's)."""
    sec, usec = (r._conn(r.node_port(key)) if CLUSTER else r)("TIME")
    return int(sec) * 1000 + int(usec) // 1000


class HoldsPutTest(ServerTest):
    def stock(self, sku):
        return int(self.r("GET", "stock:{%s}" % sku))

    def held(self, sku):
        return int(self.r("HGET", "stock:{%s}:held" % sku, "") or 0)

    def hold(self, id_, line, *options):
        res = self.sc("hold", id_, line, *options)
        self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
        return res.one

    def wait_expired(self, id_, hold):
        """Waits until the clock that decides the hold's expiry has passed it (one Redis: the
        item's node; a cluster: the record's node)."""
        if CLUSTER:
            key = "stockctl:cart:stock:{%s}" % id_
            # The record: "<state> <attempt> <exp> <deadline> <finished> ..." (docs/holds.md).
            at = int(self.r("GET", key).split(" ")[2])
        else:
            key, at = "stock:{A}", hold["expires_at_ms"]
        while now_ms(self.r, key) < at:
            time.sleep(0.05)

    def rebuild(self, rows, *options):
        return self.load("rebuild", rows, *options)

    def load(self, command, rows, *options):
        """`command` (init or rebuild) of a database export (sku, total, issued); the report."""
        path = self.write("export.csv",
                          "sku,total,issued\n" + "".join("%s,%d,%d\n" % r for r in rows))
        report = os.path.join(self.tmp, "report.jsonl")
        res = self.sc(command, "--file", path, "--report", report, *options)
        self.assertEqual(res.rc, 0, res)
        with open(report) as f:
            return {item["sku"]: item for item in map(json.loads, f)}

    def lose_stock_key(self, sku):
        """The stock key alone is lost (evicted, expired), its holds' keys stay."""
        self.assertEqual(self.r("DEL", "stock:{%s}" % sku), 1)


class LiveHolds(HoldsPutTest):
    def test_rebuild_of_a_lost_key_leaves_the_held_units_out(self):
        self.sc("init", "A", "10")
        self.hold("c1", "A=3")
        self.hold("c2", "A=2")
        self.lose_stock_key("A")
        out = self.rebuild([("A", 10, 0)])  # the database: nothing issued, holds live in Redis
        self.assertEqual((out["A"]["status"], out["A"]["stock"]), ("ok", 5))
        self.assertEqual((self.stock("A"), self.held("A")), (5, 5))
        self.assertEqual(self.sc("release", "c1").one["status"], "ok")
        self.assertEqual(self.sc("confirm", "c2").one["status"], "ok")
        # initial 10 = stock 8 + held 0 + sold 2
        self.assertEqual((self.stock("A"), self.held("A")), (8, 0))

    def test_rebuild_compares_live_values_without_the_held_units(self):
        self.sc("init", "A", "10")
        self.sc("init", "B", "10")
        self.hold("c", "A=3")
        self.hold("d", "B=3")
        out = self.rebuild([("A", 10, 0), ("B", 12, 1)])
        self.assertEqual((out["A"]["status"], out["A"]["stock"]), ("exists", 7))
        self.assertEqual((out["B"]["status"], out["B"]["stock"], out["B"]["expected"]),
                         ("drift", 7, 8))
        out = self.rebuild([("A", 10, 0), ("B", 12, 1)], "--force")
        self.assertEqual((out["B"]["status"], out["B"]["previous"], out["B"]["stock"]),
                         ("ok", 7, 8))
        self.assertEqual(self.sc("release", "d").one["status"], "ok")
        # B: 12 - 1 issued = stock 11 + held 0
        self.assertEqual((self.stock("A"), self.stock("B"), self.held("B")), (7, 11, 0))

    def test_init_of_total_and_issued_leaves_the_held_units_out(self):
        self.sc("init", "A", "10")
        self.hold("c", "A=4")
        self.lose_stock_key("A")
        # Without the change log, init would write with SET NX where the script is not needed.
        out = self.load("init", [("A", 10, 0)], "--no-log")
        self.assertEqual((out["A"]["status"], out["A"]["stock"]), ("ok", 6))
        out = self.load("init", [("A", 20, 0)], "--force", "--no-log")
        self.assertEqual((out["A"]["stock"], out["A"]["previous"]), (16, 6))
        self.assertEqual(self.sc("release", "c").one["status"], "ok")
        self.assertEqual((self.stock("A"), self.held("A")), (20, 0))

    def test_more_held_than_the_source_has_stores_zero(self):
        self.sc("init", "A", "10")
        self.hold("c", "A=6")
        self.lose_stock_key("A")
        out = self.rebuild([("A", 10, 6)])
        self.assertEqual(out["A"]["stock"], 0)
        self.assertEqual((self.stock("A"), self.held("A")), (0, 6))

    def test_a_dry_run_reports_the_value_it_would_write(self):
        self.sc("init", "A", "10")
        self.hold("c", "A=3")
        self.lose_stock_key("A")
        out = self.rebuild([("A", 10, 0)], "--dry-run")
        self.assertEqual(out["A"]["stock"], 7)
        self.assertIsNone(self.r("GET", "stock:{A}"))


@unittest.skipIf(CLUSTER, "a cluster's holds expire through reap only: see ClusterExpiry")
class ExpiredHolds(HoldsPutTest):
    def test_rebuild_of_a_lost_key_drops_expired_holds_and_keeps_live_ones(self):
        self.sc("init", "A", "10")
        gone = self.hold("c1", "A=4", "--expire", "1")
        self.hold("c2", "A=2")
        self.wait_expired("c1", gone)
        self.lose_stock_key("A")
        out = self.rebuild([("A", 10, 0)])
        self.assertEqual(out["A"]["stock"], 8)
        self.assertEqual((self.held("A"), self.r("ZCARD", "stock:{A}:holds")), (2, 1))
        self.assertEqual(self.sc("deduct", "A", "1").one["stock"], 7)
        self.assertEqual(self.sc("release", "c2").one["status"], "ok")
        self.assertEqual((self.stock("A"), self.held("A")), (9, 0))  # 10 = 9 + 0 + 1 sold

    @unittest.skipIf(CLUSTER, "a cluster's holds expire through reap, where they count as held")
    def test_init_of_a_lost_key_drops_its_expired_holds_with_the_log_or_without(self):
        # The units of holds that expired with the lost key must not come back on top of the
        # value loaded (reap or the next touch would give them back): 3 units from nowhere.
        for i, options in enumerate(((), ("--no-log",))):
            sku = "L%d" % i
            self.sc("init", sku, "10")
            gone = self.hold("l%d" % i, "%s=3" % sku, "--expire", "1")
            self.wait_expired("l%d" % i, gone)
            self.lose_stock_key(sku)
            # A `stock` column: a fresh load's fast path (MSETNX, SET NX), not total - issued.
            path = self.write("stock.csv", "sku,stock\n%s,10\n" % sku)
            res = self.sc("init", "--file", path, *options)
            self.assertEqual((res.rc, res.one["counts"]["ok"]), (0, 1), res)
            self.assertEqual(self.sc("reap").one["units"], 0, options)
            self.assertEqual((self.stock(sku), self.held(sku)), (10, 0), options)
        # Given as arguments, the same.
        self.sc("init", "M", "10")
        self.wait_expired("m", self.hold("m", "M=3", "--expire", "1"))
        self.lose_stock_key("M")
        self.assertEqual(self.sc("init", "M", "10").one["stock"], 10)
        self.assertEqual(self.sc("get", "M").one["stock"], 10)

    def test_a_forced_write_gives_expired_holds_back_first(self):
        self.sc("init", "A", "10")
        gone = self.hold("c", "A=4", "--expire", "1")
        self.wait_expired("c", gone)
        out = self.rebuild([("A", 12, 0)], "--force")
        self.assertEqual((out["A"]["previous"], out["A"]["stock"]), (10, 12))
        self.assertEqual((self.held("A"), self.r("ZCARD", "stock:{A}:holds")), (0, 0))
        self.assertEqual(self.sc("deduct", "A", "1").one["stock"], 11)
        changes = [(e["change"], e["before"], e["after"]) for e in self.sc("log", "A").lines]
        self.assertEqual(changes[-3:], [("expire", 6, 10), ("overwrite", 10, 12),
                                        ("deduct", 12, 11)])

    def test_init_force_gives_expired_holds_back_first(self):
        self.sc("init", "A", "10")
        gone = self.hold("c", "A=4", "--expire", "1")
        self.wait_expired("c", gone)
        self.assertEqual(self.sc("init", "A", "10", "--force", "--no-log").one["previous"], 10)
        self.assertEqual((self.held("A"), self.r("ZCARD", "stock:{A}:holds")), (0, 0))
        self.assertEqual(self.sc("deduct", "A", "1").one["stock"], 9)

    def test_init_of_an_existing_key_gives_expired_holds_back(self):
        self.sc("init", "A", "10")
        gone = self.hold("c", "A=4", "--expire", "1")
        self.wait_expired("c", gone)
        res = self.sc("init", "A", "10")
        self.assertEqual((res.one["status"], res.one["stock"]), ("exists", 10))
        self.assertEqual((self.stock("A"), self.held("A")), (10, 0))


@unittest.skipIf(CLUSTER, "a cluster's holds expire through reap only: see ClusterExpiry")
class ExpiredHoldsViews(HoldsPutTest):
    """Reads show the logical state: the units of a hold that expired and was not yet given back
    count in the stock, not as held, and reading gives nothing back."""

    def expire_one(self):
        """A 10 with a 3-unit hold that expired unreturned and a 2-unit one still live."""
        self.sc("init", "A", "10")
        # The live hold first: a hold of A gives back A's expired holds, so one made after c1
        # could find c1 already expired (a slow start under the sanitizers) and return it.
        self.hold("c2", "A=2")
        gone = self.hold("c1", "A=3", "--expire", "1")
        self.wait_expired("c1", gone)
        self.assertEqual((self.stock("A"), self.held("A")), (5, 5))  # as stored: not returned

    def test_get_counts_expired_units_in_the_stock(self):
        self.expire_one()
        res = self.sc("get", "A")
        self.assertEqual((res.one["stock"], res.one["held"]), (8, 2))  # 10 = 8 + 2 + 0 sold
        self.assertEqual((self.stock("A"), self.held("A")), (5, 5))  # a read writes nothing

    def test_get_of_a_hold_that_took_every_unit(self):
        self.sc("init", "B", "3")
        gone = self.hold("b1", "B=3", "--expire", "1")
        self.wait_expired("b1", gone)
        res = self.sc("get", "B")
        self.assertEqual((res.one["stock"], res.one["held"]), (3, 0))
        self.assertEqual(self.sc("deduct", "B", "3").one["stock"], 0)

    def test_export_and_init_force_keep_the_expired_units(self):
        self.expire_one()
        path = os.path.join(self.tmp, "snap.csv")
        self.assertEqual(self.sc("export", "--format", "csv", "--output", path).rc, 0)
        with open(path) as f:
            rows = [line.split(",") for line in f.read().splitlines()]
        self.assertEqual(rows[1][:3], ["A", "8", "2"])
        res = self.sc("init", "--file", path, "--force", "--report",
                      os.path.join(self.tmp, "r.jsonl"))
        self.assertEqual(res.rc, 0, res)
        # The expired hold went back (5 -> 8), then the export's 8 was written over it.
        self.assertEqual((self.stock("A"), self.held("A")), (8, 2))
        self.assertEqual(self.sc("release", "c2").one["status"], "ok")
        self.assertEqual(self.stock("A"), 10)

    def test_rebuild_of_the_logical_stock_is_no_drift(self):
        self.expire_one()
        path = self.write("g.csv", "sku,stock\nA,8\n")
        report = os.path.join(self.tmp, "report.jsonl")
        for options in (["--dry-run"], ["--fail-on-drift"]):
            res = self.sc("rebuild", "--file", path, "--report", report, *options)
            self.assertEqual(res.rc, 0, res)
            with open(report) as f:
                item = json.loads(f.readline())
            self.assertEqual((item["status"], item["stock"]), ("exists", 8), options)
        self.assertEqual((self.stock("A"), self.held("A")), (8, 2))  # the real run gave it back

    def forced(self, command, stock, *options):
        """`command --file --force` of one row A,stock; its report line."""
        path = self.write("same.csv", "sku,stock\nA,%d\n" % stock)
        report = os.path.join(self.tmp, "forced.jsonl")
        res = self.sc(command, "--file", path, "--force", "--report", report, *options)
        self.assertEqual(res.rc, 0, res)
        with open(report) as f:
            return json.loads(f.readline())

    def assert_set_to_the_stored_value(self, command):
        self.expire_one()
        item = self.forced(command, 5)  # the value stored, not the stock (8) get shows
        # The expired hold went back first (5 -> 8), then 5 was written over it: what the
        # write replaced is the logical stock, and the expired units do not come back on top.
        self.assertEqual((item["status"], item["previous"], item["stock"]), ("ok", 8, 5))
        self.assertEqual((self.stock("A"), self.held("A")), (5, 2))
        self.assertEqual(self.r("ZRANGE", "stock:{A}:holds", "0", "-1"), ["c2"])
        self.assertEqual((self.sc("get", "A").one["stock"], self.sc("get", "A").one["held"]), (5, 2))
        self.assertEqual(self.sc("release", "c2").one["status"], "ok")
        self.assertEqual((self.stock("A"), self.held("A")), (7, 0))

    def test_a_forced_rebuild_of_the_value_stored_gives_expired_holds_back_first(self):
        self.assert_set_to_the_stored_value("rebuild")

    def test_a_dry_run_of_a_forced_rebuild_of_the_value_stored_agrees_with_the_real_run(self):
        self.expire_one()
        item = self.forced("rebuild", 5, "--dry-run")
        self.assertEqual((item["status"], item["previous"], item["stock"]), ("ok", 8, 5))
        self.assertEqual((self.stock("A"), self.held("A")), (5, 5))  # nothing written

    def test_a_forced_init_of_the_value_stored_gives_expired_holds_back_first(self):
        self.assert_set_to_the_stored_value("init")

    def test_a_dry_run_of_total_and_issued_agrees_with_the_real_run(self):
        self.expire_one()
        dry = self.rebuild([("A", 10, 0)], "--dry-run")["A"]
        real = self.rebuild([("A", 10, 0)])["A"]
        self.assertEqual((dry["status"], dry["stock"]), ("exists", 8))
        self.assertEqual((real["status"], real["stock"]), ("exists", 8))


@unittest.skipUnless(CLUSTER, "a cluster's holds")
class ClusterExpiry(HoldsPutTest):
    def test_an_expired_hold_counts_as_held_until_reap_gives_it_back(self):
        self.sc("init", "A", "10")
        gone = self.hold("c", "A=3", "--expire", "1")
        self.wait_expired("c", gone)
        self.lose_stock_key("A")
        out = self.rebuild([("A", 10, 0)])
        self.assertEqual(out["A"]["stock"], 7)
        self.assertEqual(self.sc("reap").one["units"], 3)
        self.assertEqual((self.stock("A"), self.held("A")), (10, 0))


if __name__ == "__main__":
    unittest.main()
