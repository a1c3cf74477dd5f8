"""hold, confirm, release, order, cancel, reap: all or nothing, once per id, and stock that always
adds up, written once and run on both targets: one Redis, and a real 3+3 Redis Cluster
(STOCKCTL_TARGET=cluster), where a cart's lines live in several slots and go through the
protocol of docs/holds.md (a record in the id's slot decides, each slot group is held under its
own id and finished to the decision).

What only one Redis does (expired holds given back by the next touch, the keys a refused cart
leaves, --wait-replicas on a server without replicas) is marked standalone_only; what only the
cluster has (its protocol's records, crash points, racing over slots, a failover) is in the
classes after ClusterHoldsTest, which skip on one Redis. Every crash point is tested by stopping
the process there (STOCKCTL_TEST_STOP_AT, test-only) and then re-running the same command, or
running reap."""

import json
import os
import random
import signal
import threading
import time
import unittest

from harness import (TARGET, RedisCluster, ServerTest, calls_on, clean_env, keyslot, lua_script,
                     run, spawn_to_file, standalone_only)

CLUSTER = TARGET in ("cluster", "tls-cluster")
# An item's stock and held units read at one moment (one script on the item's node).
BOTH = "return {redis.call('GET', KEYS[1]), redis.call('HGET', KEYS[2], '')}"


def server_ms(r, key=None):
    """The server's clock; on a cluster, the clock of the node that holds `key` (the record's
    node decides expiry), or of a primary."""
    if hasattr(r, "primaries"):
        r = r._conn(r.node_port(key) if key else r.primaries()[0])
    sec, usec = r("TIME")
    return int(sec) * 1000 + int(usec) // 1000


def skus_in_distinct_slots(count, prefix="s"):
    """SKUs whose stock keys are in `count` different slots, as far apart as the slot ranges of
    three primaries go (so that a cart spans nodes, not just slots)."""
    out, seen = [], set()
    for i in range(10000):
        sku = "%s%d" % (prefix, i)
        slot = keyslot("stock:{%s}" % sku)
        band = slot * 3 // 16384
        if band not in seen or len(seen) >= 3:
            if slot in {keyslot("stock:{%s}" % s) for s in out}:
                continue
            seen.add(band)
            out.append(sku)
        if len(out) == count:
            return out
    raise AssertionError("no SKUs found")


class HoldsTest(ServerTest):
    def stock(self, sku):
        return int(self.r("GET", "stock:{%s}" % sku))

    def held(self, sku):
        return int(self.r("HGET", "stock:{%s}:held" % sku, "") or 0)

    def wait_past(self, expires_at_ms):
        """Waits until the server's clock has passed a hold's expiry (a clock condition, not a
        guess: each loop asks the server)."""
        while server_ms(self.r) < expires_at_ms:
            time.sleep(0.05)

    def snapshot(self):
        conns = [self.r._conn(p) for p in self.r.primaries()] if self.cluster else [self.r]
        return sorted((k, c("TYPE", k)) for c in conns for k in c("KEYS", "*"))


class Hold(HoldsTest):
    def test_holds_every_line_and_takes_units_out_of_stock(self):
        self.sc("init", "A", "10")
        self.sc("init", "B", "5")
        before = server_ms(self.r)
        res = self.sc("hold", "cart-7", "A=2", "B=1")
        self.assertEqual(res.rc, 0, res)
        out = res.one
        self.assertEqual(list(out), ["op", "id", "status", "expires_at_ms", "lines"])
        self.assertEqual((out["op"], out["id"], out["status"]), ("hold", "cart-7", "ok"))
        self.assertGreaterEqual(out["expires_at_ms"], before + 600000)
        self.assertLess(out["expires_at_ms"], server_ms(self.r) + 600000 + 1)
        self.assertEqual(out["lines"], [
            {"sku": "A", "key": "stock:{A}", "qty": 2, "status": "ok", "stock": 8},
            {"sku": "B", "key": "stock:{B}", "qty": 1, "status": "ok", "stock": 4}])
        self.assertEqual((self.stock("A"), self.held("A")), (8, 2))
        got = self.sc("get", "A", "B").lines
        self.assertEqual([(g["stock"], g["held"]) for g in got], [(8, 2), (4, 1)])

    def test_lines_of_the_same_sku_are_merged_before_checking(self):
        self.sc("init", "A", "3")
        res = self.sc("hold", "c", "A=2", "A=2")
        self.assertEqual(res.rc, 3, res)
        self.assertEqual(res.one["status"], "insufficient")
        self.assertEqual(res.one["lines"], [
            {"sku": "A", "key": "stock:{A}", "qty": 4, "status": "insufficient", "stock": 3}])
        self.assertEqual((self.stock("A"), self.held("A")), (3, 0))
        res = self.sc("hold", "c", "A=1", "A=2")
        self.assertEqual(res.one["lines"][0]["qty"], 3)
        self.assertEqual(self.stock("A"), 0)

    @standalone_only
    def test_one_short_line_holds_nothing(self):
        self.sc("init", "A", "10")
        self.sc("init", "B", "1")
        before = self.snapshot()
        res = self.sc("hold", "c", "A=2", "B=2")
        self.assertEqual(res.rc, 3, res)
        self.assertEqual(res.one["status"], "insufficient")
        # The line that could have been held is not "ok": nothing of it was held either.
        self.assertEqual([(l["status"], l["stock"]) for l in res.one["lines"]],
                         [(None, 10), ("insufficient", 1)])
        self.assertIsNone(res.one["expires_at_ms"])
        self.assertEqual(self.snapshot(), before)
        self.assertEqual((self.stock("A"), self.stock("B")), (10, 1))

    def test_a_missing_item_is_uninitialized_and_holds_nothing(self):
        self.sc("init", "A", "10")
        res = self.sc("hold", "c", "A=2", "Z=1", "--no-log")
        self.assertEqual(res.rc, 4, res)
        self.assertEqual(res.one["status"], "uninitialized")
        self.assertEqual(self.stock("A"), 10)
        self.assertEqual(self.sc("confirm", "c").rc, 4)

    def test_init_sources_apply_to_every_line(self):
        self.sc("init", "A", "10")
        res = self.sc("hold", "c", "A=2", "N1=1", "N2=3", "--init-value", "5")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([l["stock"] for l in res.one["lines"]], [8, 4, 2])
        self.assertIsNone(self.r("GET", "stock:{N1}:lock"))
        res = self.sc("order", "o", "N3=2", "--init-cmd", "echo 7")
        self.assertEqual(res.one["lines"][0]["stock"], 5)

    def test_unlimited_lines_are_served_and_stay_unlimited(self):
        self.sc("init", "U", "unlimited")
        self.sc("init", "A", "1")
        res = self.sc("hold", "c", "U=5", "A=1")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([l["status"] for l in res.one["lines"]], ["ok", "unlimited"])
        self.assertEqual(self.sc("confirm", "c").one["status"], "ok")
        self.assertEqual(self.r("GET", "stock:{U}"), "-1")


class Idempotency(HoldsTest):
    def test_a_repeat_returns_the_first_answer_and_holds_nothing_more(self):
        self.sc("init", "A", "10")
        first = self.sc("hold", "c", "A=2", "B=1", "--init-value", "4").one
        again = self.sc("hold", "c", "B=1", "A=2", "--init-value", "4")
        self.assertEqual(again.rc, 0, again)
        self.assertEqual(again.one, dict(first, replayed=True))
        self.assertEqual((self.stock("A"), self.held("A")), (8, 2))

    def test_the_same_id_with_other_lines_is_a_conflict(self):
        self.sc("init", "A", "10")
        self.sc("hold", "c", "A=2")
        for lines in (["A=3"], ["A=2", "B=1"]):
            res = self.sc("hold", "c", *lines)
            self.assertEqual(res.rc, 2, res)
            self.assertEqual(res.one["status"], "conflict")
            self.assertIn("id 'c' was already used with other lines or for an order; nothing "
                          "changed", res.stderr)
        res = self.sc("order", "c", "A=2")
        self.assertEqual(res.one["status"], "conflict")
        self.assertIn("id 'c' was already used with other lines or for a hold", res.stderr)
        self.assertEqual(self.stock("A"), 8)

    def test_a_refused_attempt_is_not_remembered(self):
        self.sc("init", "A", "1")
        self.assertEqual(self.sc("order", "o", "A=2").rc, 3)
        self.sc("add", "A", "1")
        res = self.sc("order", "o", "A=2")
        self.assertEqual(res.rc, 0, res)
        self.assertNotIn("replayed", res.one)
        self.assertEqual(self.stock("A"), 0)


class Settle(HoldsTest):
    def setUp(self):
        super().setUp()
        self.sc("init", "A", "10")
        self.sc("init", "B", "10")

    def test_confirm_sells_once(self):
        self.sc("hold", "c", "A=2", "B=3")
        res = self.sc("confirm", "c")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.one, {"op": "confirm", "id": "c", "status": "ok", "lines": [
            {"sku": "A", "key": "stock:{A}", "qty": 2, "stock": 8},
            {"sku": "B", "key": "stock:{B}", "qty": 3, "stock": 7}]})
        self.assertEqual((self.stock("A"), self.held("A")), (8, 0))
        again = self.sc("confirm", "c")
        self.assertEqual((again.rc, again.one["status"], again.one.get("replayed")), (0, "ok", True))
        res = self.sc("release", "c")
        self.assertEqual((res.rc, res.one["status"]), (2, "conflict"))
        self.assertEqual(self.stock("A"), 8)

    def test_release_gives_back_once(self):
        self.sc("hold", "c", "A=2", "B=3")
        res = self.sc("release", "c")
        self.assertEqual((res.rc, res.one["status"]), (0, "ok"))
        self.assertEqual((self.stock("A"), self.stock("B"), self.held("B")), (10, 10, 0))
        again = self.sc("release", "c")
        self.assertEqual((again.rc, again.one.get("replayed")), (0, True))
        self.assertEqual(self.stock("A"), 10)
        # A released hold cannot be confirmed: a conflict that names the release, not "expired".
        res = self.sc("confirm", "c")
        self.assertEqual((res.rc, res.one["status"]), (2, "conflict"), res)
        self.assertIn("the hold was released", res.one["error"])
        self.assertIn("confirm c: the hold was released", res.stderr)

    @standalone_only
    def test_a_repeated_hold_says_what_became_of_it_and_claims_no_expiry_once_not_held(self):
        first = self.sc("hold", "c", "A=2").one
        again = self.sc("hold", "c", "A=2").one
        self.assertEqual((again["status"], again["replayed"], again["expires_at_ms"]),
                         ("ok", True, first["expires_at_ms"]))
        self.assertNotIn("state", again, "still held: the first answer as it was")
        self.sc("release", "c")
        after = self.sc("hold", "c", "A=2")
        self.assertEqual(after.rc, 0, after)
        self.assertEqual((after.one["status"], after.one["replayed"], after.one["state"],
                          after.one["expires_at_ms"]), ("ok", True, "released", None), after)
        self.assertEqual((self.stock("A"), self.held("A")), (10, 0), "nothing held again")
        self.sc("hold", "s", "A=1")
        self.sc("confirm", "s")
        self.assertEqual(self.sc("hold", "s", "A=1").one["state"], "confirmed")
        out = self.sc("hold", "e", "B=1", "--expire", "1").one
        self.wait_past(out["expires_at_ms"])
        late = self.sc("hold", "e", "B=1", "--expire", "1").one
        self.assertEqual((late["state"], late["expires_at_ms"]), ("expired", None), late)

    def test_cancel_gives_a_sale_back_exactly_once(self):
        self.sc("hold", "h", "A=2")
        self.sc("confirm", "h")
        self.sc("order", "o", "A=1", "B=4")
        self.assertEqual((self.stock("A"), self.stock("B")), (7, 6))
        for id_ in ("h", "o"):
            res = self.sc("cancel", id_)
            self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
        self.assertEqual((self.stock("A"), self.stock("B")), (10, 10))
        for id_ in ("h", "o"):
            again = self.sc("cancel", id_)
            self.assertEqual((again.rc, again.one.get("replayed")), (0, True))
        self.assertEqual((self.stock("A"), self.stock("B")), (10, 10))
        self.assertEqual(self.sc("confirm", "o").one["status"], "conflict")

    def test_units_given_back_to_a_deleted_stock_key_are_warned_about(self):
        # The key deleted under a hold (by hand, evicted): release and cancel cannot put the units
        # anywhere, and say so; the other line and a repeat say nothing.
        self.sc("hold", "c", "A=2", "B=3")
        self.sc("order", "o", "A=1")
        self.r("DEL", "stock:{A}")
        res = self.sc("release", "c")
        self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
        self.assertEqual([line["stock"] for line in res.one["lines"]], [None, 10])
        self.assertEqual(res.stderr.count("warning"), 1, res.stderr)
        self.assertIn("release c: item 'A' has no stock key (stock:{A}), so the 2 units given back "
                      "went nowhere", res.stderr)
        self.assertIsNone(self.r("GET", "stock:{A}"), "nothing created")
        again = self.sc("release", "c")
        self.assertEqual((again.rc, again.one.get("replayed"), again.stderr), (0, True, ""), again)
        cancel = self.sc("cancel", "o")
        self.assertEqual((cancel.rc, cancel.one["status"]), (0, "ok"), cancel)
        self.assertIn("cancel o: item 'A' has no stock key (stock:{A}), so the 1 unit given back",
                      cancel.stderr)

    def test_a_hold_whose_units_delete_force_removed_is_never_sold(self):
        # delete --force takes the item's holds with it; the hold's record remains. A confirm
        # must not sell the removed units, or a later cancel gives them back: units made.
        self.sc("hold", "d", "A=3", "B=2")
        self.assertEqual(self.sc("delete", "A", "--force").one["held"], 3)
        self.sc("init", "A", "10")
        res = self.sc("confirm", "d")
        removed = ("item 'A' (stock:{A}) no longer held this hold's 3 units (its holds were "
                   "deleted, by delete --force or by hand), so the hold cannot be confirmed")
        self.assertIn(removed, res.stderr)
        if self.cluster:
            # The record decided the confirm; A's slot group was released instead, and says so
            # (A and B are in different slots).
            self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
            self.assertEqual((self.stock("A"), self.stock("B")), (10, 8))
        else:
            self.assertEqual((res.rc, res.one["status"]), (2, "conflict"), res)
            self.assertEqual((self.stock("A"), self.stock("B")), (10, 10), "B's units went back")
        cancel = self.sc("cancel", "d")
        self.assertEqual(cancel.rc, 0, cancel)
        self.assertEqual((self.stock("A"), self.stock("B"), self.held("A"), self.held("B")),
                         (10, 10, 0, 0), "no unit made, none lost")

    def test_cancel_of_a_held_hold_releases_it(self):
        self.sc("hold", "h", "A=2")
        self.assertEqual(self.sc("cancel", "h").one["status"], "ok")
        self.assertEqual((self.stock("A"), self.held("A")), (10, 0))
        self.assertEqual(self.sc("confirm", "h").one["status"], "conflict")

    def test_an_order_cannot_be_confirmed_or_released(self):
        self.sc("order", "o", "A=1")
        self.assertEqual(self.sc("confirm", "o").rc, 2)
        self.assertEqual(self.sc("release", "o").rc, 2)
        self.assertEqual(self.stock("A"), 9)

    @standalone_only
    def test_a_corrupt_stored_value_names_its_item(self):
        self.sc("init", "K", "10")
        self.sc("hold", "h", "A=1", "K=2")
        self.sc("order", "o", "A=1", "K=1")
        self.r("SET", "stock:{K}", "abc")
        for action, id_ in (("confirm", "h"), ("release", "h"), ("cancel", "o")):
            res = self.sc(action, id_)
            self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
            self.assertIn("stockctl: error: %s %s: item 'K': stored value 'abc' of stock:{K} is not "
                          "a stock value" % (action, id_), res.stderr)
            self.assertNotIn("stockctl:hold", res.stderr)
            self.assertIn("item 'K'", res.one["error"])
        self.assertEqual((self.stock("A"), self.held("A"), self.held("K")), (8, 1, 2))
        self.assertEqual(self.r("GET", "stock:{K}"), "abc")
        # Repaired, the hold is released as it would have been.
        self.r("SET", "stock:{K}", "7")
        self.assertEqual(self.sc("release", "h").one["status"], "ok")
        self.assertEqual((self.stock("A"), self.held("A"), self.stock("K"), self.held("K")),
                         (9, 0, 9, 0))

    def test_unknown_ids_are_missing_and_several_ids_fold_the_exit_status(self):
        res = self.sc("confirm", "nope")
        self.assertEqual((res.rc, res.one), (4, {"op": "confirm", "id": "nope", "status": "missing", "lines": []}))
        self.sc("hold", "c", "A=1")
        res = self.sc("confirm", "c", "nope")
        self.assertEqual(res.rc, 4)
        self.assertEqual([l["status"] for l in res.lines], ["ok", "missing"])

    def test_one_invalid_id_settles_nothing_and_each_invalid_id_gets_its_line(self):
        self.sc("hold", "h1", "A=2")
        self.sc("hold", "h2", "B=3")
        self.sc("order", "o1", "A=1")
        before = [(self.stock(s), self.held(s)) for s in "AB"]
        keys = self.snapshot()
        cases = (("confirm", ["h1", ""], "confirmed"),
                 ("release", ["h2", "a\x01b", "x\x7fy"], "released"),
                 ("cancel", ["o1", ""], "cancelled"))
        for action, ids, done in cases:
            res = self.sc(action, *ids)
            self.assertEqual(res.rc, 2, res)
            invalid = ids[1:]
            self.assertEqual([(l["op"], l["id"], l["status"], l["lines"]) for l in res.lines],
                             [(action, i, "invalid", []) for i in invalid], res)
            errors = [l for l in res.stderr.splitlines() if l.startswith("stockctl: error:")]
            self.assertEqual(len(errors), len(invalid), res.stderr)
            for line in errors:
                self.assertTrue(line.startswith("stockctl: error: %s " % action), line)
                self.assertTrue(line.endswith("; nothing was %s" % done), line)
            self.assertEqual([(self.stock(s), self.held(s)) for s in "AB"], before)
            self.assertEqual(self.snapshot(), keys)
        # Nothing was settled: each valid id settles now, for the first time.
        for action, ids, _ in cases:
            res = self.sc(action, ids[0])
            self.assertEqual((res.rc, res.one["status"], res.one.get("replayed")), (0, "ok", None), res)


class Expiry(HoldsTest):
    @standalone_only
    def test_an_expired_hold_returns_on_the_next_deduction_and_cannot_be_confirmed(self):
        self.sc("init", "A", "10")
        out = self.sc("hold", "c", "A=4", "--expire", "1").one
        self.assertEqual(self.sc("get", "A").one["held"], 4)
        self.wait_past(out["expires_at_ms"])
        self.assertEqual(self.sc("get", "A").one["held"], 0)
        res = self.sc("deduct", "A", "1")
        self.assertEqual(res.one["stock"], 9)
        self.assertEqual((self.held("A"), self.r("ZCARD", "stock:{A}:holds")), (0, 0))
        res = self.sc("confirm", "c")
        self.assertEqual((res.rc, res.one["status"]), (3, "expired"))
        self.assertEqual(self.stock("A"), 9)
        changes = [(e["change"], e["qty"], e["hold_id"]) for e in self.sc("log", "A").lines]
        self.assertEqual(changes, [("init", None, None), ("hold", 4, "c"), ("expire", 4, "c"),
                                   ("deduct", 1, None)])

    @standalone_only
    def test_a_deduction_without_log_returns_expired_holds_too(self):
        self.sc("init", "A", "2")
        out = self.sc("hold", "c", "A=2", "--expire", "1").one
        self.assertEqual(self.sc("deduct", "A", "1", "--no-log").one["status"], "insufficient")
        self.wait_past(out["expires_at_ms"])
        self.assertEqual(self.sc("deduct", "A", "1", "--no-log").one["stock"], 1)

    def test_confirm_of_an_expired_hold_gives_its_units_back_once(self):
        self.sc("init", "A", "10")
        out = self.sc("hold", "c", "A=4", "--expire", "1").one
        self.wait_past(out["expires_at_ms"])
        res = self.sc("confirm", "c")
        self.assertEqual((res.rc, res.one["status"]), (3, "expired"), res)
        self.assertEqual((self.stock("A"), self.held("A")), (10, 0), "its units are back")
        # Releasing it is what a cron job cleaning up abandoned carts does: its units are back,
        # which is what release wanted, so it says expired and exits 0.
        res = self.sc("release", "c")
        self.assertEqual((res.rc, res.one["status"]), (0, "expired"), res)
        self.assertNotIn("error", res.stderr)
        self.assertEqual(self.stock("A"), 10)
        self.assertEqual(self.sc("reap").one, {"op": "reap", "holds": 0, "units": 0, "units_nowhere": 0})
        self.assertEqual(self.stock("A"), 10)

    @standalone_only
    def test_every_script_that_touches_an_item_gives_expired_holds_back_alike(self):
        # deduct (stock-2.lua), hold (hold-4002.lua), init --force (put-2.lua), reap (reap-1.lua).
        touches = {"D": ("deduct", "D", "1"), "H": ("hold", "h", "H=1"),
                   "P": ("init", "P", "10", "--force"), "R": ("reap",)}
        for sku in touches:
            self.sc("init", sku, "10")
            gone = self.sc("hold", "gone-" + sku, sku + "=3", "--expire", "1").one
            self.sc("hold", "live-" + sku, sku + "=2")
        self.wait_past(gone["expires_at_ms"])
        for sku, args in touches.items():
            self.assertEqual(self.sc(*args, "--actor", "who", "--reason", "why").rc, 0, args)
            expired = [(e["qty"], e["before"], e["after"], e["hold_id"], e["actor"], e["reason"])
                       for e in self.sc("log", sku).lines if e["change"] == "expire"]
            self.assertEqual(expired, [(3, 5, 8, "gone-" + sku, "who", "why")], sku)
            live = sorted(self.r("ZRANGE", "stock:{%s}:holds" % sku, 0, -1))
            self.assertEqual(live, ["h", "live-H"] if sku == "H" else ["live-" + sku])
        self.assertEqual([(self.stock(s), self.held(s)) for s in touches],
                         [(7, 2), (7, 3), (10, 2), (8, 2)])

    @standalone_only
    def test_a_value_that_is_not_a_stock_keeps_its_expired_holds_until_repaired(self):
        # Lua's tonumber reads "0x7" as 7; the stock-value check (lua/include/stock_value.lua)
        # does not, so no expired hold gives units to it.
        self.sc("init", "A", "10")
        out = self.sc("hold", "c", "A=3", "--expire", "1").one
        self.r("SET", "stock:{A}", "0x7")
        self.wait_past(out["expires_at_ms"])
        # reap says so, naming the item (exit 1), and gives the others back all the same.
        self.sc("init", "B", "10")
        self.wait_past(self.sc("hold", "b", "B=2", "--expire", "1").one["expires_at_ms"])
        res = self.sc("reap")
        self.assertEqual((res.rc, res.one),
                         (1, {"op": "reap", "holds": 1, "units": 2, "units_nowhere": 0}), res)
        self.assertEqual(res.stderr, "stockctl: error: reap: item 'A' (stock:{A}) does not hold a "
                         "stock value, so its expired holds stay held until it is repaired "
                         "('stockctl init A VALUE --force'); reap looks at it again a minute "
                         "later\n")
        self.assertEqual((self.r("GET", "stock:{A}"), self.held("A")), ("0x7", 3))
        # Repaired, the next touch gives them back (reap looks at it again a minute later).
        self.r("SET", "stock:{A}", "7")
        self.assertEqual(self.sc("deduct", "A", "1").one["stock"], 9)
        self.assertEqual(self.held("A"), 0)

    def test_reap_of_a_hold_with_a_corrupt_item_prints_its_summary_and_names_it(self):
        # On a cluster the group of the corrupt item stopped the whole reap: the others were
        # given back, but no summary line was printed. Both targets now print it, exit 1.
        self.sc("init", "R1", "10")
        self.sc("init", "R2", "10")
        out = self.sc("hold", "hr", "R1=2", "R2=3", "--expire", "1").one
        self.r("SET", "stock:{R1}", "abc")
        self.wait_past(out["expires_at_ms"])
        res = self.sc("reap")
        self.assertEqual(res.rc, 1, res)
        self.assertEqual((res.one["op"], res.one["units"]), ("reap", 3), res)
        self.assertIn("R1", res.stderr)
        self.assertEqual(self.stock("R2"), 10)
        self.r("SET", "stock:{R1}", "8")
        if self.cluster:
            # The record kept its decision, and is put off a minute (so that the records behind
            # it are reached); the test makes that minute pass.
            self.assertEqual(self.sc("reap").one["units"], 0)
            moved = 0
            for c in (self.r._conn(p) for p in self.r.primaries()):
                for due in c("KEYS", "stockctl:carts-due:*"):
                    score = c("ZSCORE", due, "hr")
                    if score is not None:
                        self.assertGreater(float(score), server_ms(self.r) + 50000)
                        moved += c("ZADD", due, "XX", "CH", "0", "hr")
            self.assertEqual(moved, 1)
            res = self.sc("reap")
            self.assertEqual((res.rc, res.one["units"]), (0, 2), res)
        else:  # the item is looked at again a minute later, or on its next touch
            self.assertEqual(self.sc("deduct", "R1", "1").one["stock"], 9)
        self.assertEqual((self.stock("R1"), self.held("R1")), (10 if self.cluster else 9, 0))

    def test_reap_returns_holds_of_items_nobody_touches(self):
        self.sc("init", "A", "10")
        self.sc("init", "B", "10")
        first = self.sc("hold", "c1", "A=1", "B=2", "--expire", "1").one
        self.sc("hold", "c2", "A=3", "--expire", "1")
        self.sc("hold", "c3", "B=1")  # not expiring
        self.wait_past(self.sc("hold", "c4", "A=1", "--expire", "1").one["expires_at_ms"])
        self.assertLess(first["expires_at_ms"], server_ms(self.r))
        res = self.sc("reap")
        self.assertEqual(res.rc, 0, res)
        # Three holds (c1 has two lines) expired: reap counts holds, not their lines.
        self.assertEqual(res.one, {"op": "reap", "holds": 3, "units": 7, "units_nowhere": 0})
        self.assertEqual((self.stock("A"), self.stock("B")), (10, 9))
        self.assertEqual(self.held("B"), 1)
        self.assertEqual(self.sc("reap").one, {"op": "reap", "holds": 0, "units": 0, "units_nowhere": 0})
        self.assertEqual(self.sc("confirm", "c1").rc, 3, "expired: it cannot be confirmed")
        self.assertEqual(self.sc("confirm", "c3").one["status"], "ok")


    @standalone_only
    def test_get_and_export_count_expired_holds_when_the_server_refuses_scripts(self):
        # At its maxmemory a server refuses scripts not flagged read-only: the held view fell
        # back to the stored value, and get and export said 8 where the item holds 10, exit 0.
        self.sc("init", "H", "10")
        self.wait_past(self.sc("hold", "h1", "H=2", "--expire", "1").one["expires_at_ms"])
        used = int(self.r("INFO", "memory").split("used_memory:")[1].split()[0])
        self.r("CONFIG", "SET", "maxmemory", str(used - 1000))
        try:
            res = self.sc("get", "H")
            self.assertEqual((res.rc, res.one["stock"], res.one["held"]), (0, 10, 0), res)
            res = self.sc("export")
            self.assertEqual((res.rc, json.loads(res.stdout)["stock"]), (0, 10), res)
        finally:
            self.r("CONFIG", "SET", "maxmemory", "0")

    @standalone_only
    def test_settling_reports_the_stock_get_shows_with_other_holds_expired(self):
        # The settle gives back every expired hold of its items first, as every script that
        # touches an item does: the stock it reports is the item's stock now, not 7.
        self.sc("init", "A", "10")
        self.sc("hold", "e1", "A=2", "--expire", "1")
        self.wait_past(self.sc("hold", "e2", "A=3", "--expire", "1").one["expires_at_ms"])
        self.assertEqual(self.sc("get", "A").one["stock"], 10)
        res = self.sc("release", "e1")
        self.assertEqual((res.rc, res.one["status"], res.one["lines"][0]["stock"]),
                         (0, "expired", 10), res)
        self.assertEqual((self.stock("A"), self.held("A")), (10, 0))
        self.assertEqual(self.sc("confirm", "e2").one["status"], "expired")
        self.assertEqual(self.sc("reap").one["units"], 0)
        self.assertEqual(self.stock("A"), 10)

    def test_reap_warns_about_units_whose_stock_key_is_gone(self):
        # The key deleted under an expiring hold (by hand, evicted): reap cannot put its units
        # anywhere, counts them apart and says so, and creates nothing.
        self.sc("init", "A", "10")
        self.sc("init", "B", "10")
        self.sc("hold", "c1", "A=2", "B=1", "--expire", "1")
        self.wait_past(self.sc("hold", "c2", "A=3", "--expire", "1").one["expires_at_ms"])
        self.r("DEL", "stock:{A}")
        res = self.sc("reap")
        self.assertEqual((res.rc, res.one),
                         (0, {"op": "reap", "holds": 2, "units": 1, "units_nowhere": 5}), res)
        self.assertEqual(res.stderr.count("warning"), 1, res.stderr)
        self.assertIn("reap: item 'A' has no stock key (stock:{A}), so the 5 units given back "
                      "went nowhere", res.stderr)
        self.assertIsNone(self.r("GET", "stock:{A}"), "nothing created")
        self.assertEqual((self.stock("B"), self.held("A"), self.held("B")), (10, 0, 0))
        again = self.sc("reap")
        self.assertEqual((again.one["units_nowhere"], again.stderr), (0, ""), again)


class CompanionOfAnotherType(HoldsTest):
    """Another program's key where a hold writes its units (the item's held units or holds, or
    the index of items with holds): the hold stops before it changes anything, names the key,
    and the same id holds once the key is removed. (Before, a string at the held units stopped
    the script after its DECRBY: the unit was in no hold, and lost.)"""

    def setUp(self):
        super().setUp()
        self.sc("init", "A", "10")
        self.sc("init", "B", "10")

    def assertRefused(self, key, type_, what):
        res = self.sc("hold", "h1", "A=1", "B=2")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("%s holds a %s, not %s" % (key, type_, what), res.one["error"])
        self.assertIn("; nothing was held", res.one["error"])
        self.assertEqual([self.stock("A"), self.stock("B")], [10, 10])
        self.r("DEL", key)
        res = self.sc("hold", "h1", "A=1", "B=2")
        self.assertEqual((res.rc, res.one["status"], res.one.get("replayed")), (0, "ok", None),
                         res)
        self.assertEqual([self.stock("A"), self.stock("B"), self.held("A"), self.held("B")],
                         [9, 8, 1, 2])

    def test_held_units_of_another_type(self):
        self.r("SET", "stock:{B}:held", "not a hash")
        self.assertRefused("stock:{B}:held", "string", "the item's held units (a hash;")

    def test_holds_of_another_type(self):
        self.r("RPUSH", "stock:{B}:holds", "x")
        self.assertRefused("stock:{B}:holds", "list", "the item's holds (a zset;")

    def test_the_index_of_another_type(self):
        if self.cluster:
            self.skipTest("a cluster cart's groups keep an index per slot")
        self.r("SET", "stockctl:holds-index:stock:", "x")
        # A line whose key would be created from its init source is not created either.
        res = self.sc("hold", "h0", "A=1", "N=1", "--init-value", "5")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertEqual(self.r("EXISTS", "stock:{N}"), 0)
        self.assertRefused("stockctl:holds-index:stock:", "string",
                           "the index of items with holds (a zset;")


class LogOfAnotherType(HoldsTest):
    """Another program's string where an item's change log is: every script skips the entry,
    makes its whole change, and says so (before, the hold script stopped after its DECRBY, and
    the unit was in no hold). A hold and a settle read their answer again and warn (a cluster's
    settle too, where it said "outcome unknown" before); elsewhere the line says the change was
    applied, and the same id answers it."""

    WARNING = ("its change log entry was not written: stock:{A}:changes holds another kind of "
               "value than the change log (a list; WRONGTYPE)")

    def setUp(self):
        super().setUp()
        self.sc("init", "A", "10")
        self.r("SET", "stock:{A}:changes", "not a list")

    def assertWhole(self, *args):
        res = self.sc(*args)
        self.assertNotIn("outcome unknown", res.stderr)
        if res.rc == 0:
            self.assertEqual((res.one["status"], res.one.get("replayed")), ("ok", None), res)
            self.assertIn("warning: %s '%s': %s" % (args[0], args[1], self.WARNING),
                          res.stderr)
        else:
            # A settle: applied, and the same command answers it again.
            self.assertIn(args[0], ("confirm", "release", "cancel"), res)
            self.assertIn("applied, but " + self.WARNING, res.stderr)
            again = self.sc(*args)
            self.assertEqual((again.rc, again.one["status"]), (0, "ok"), again)
        return res

    def test_hold_confirm_release_order_cancel_are_whole(self):
        self.assertEqual(self.assertWhole("hold", "h1", "A=1").rc, 0)
        self.assertEqual((self.stock("A"), self.held("A")), (9, 1))
        again = self.sc("hold", "h1", "A=1")
        self.assertEqual((again.rc, again.one.get("replayed"), again.stderr), (0, True, ""), again)
        self.assertWhole("confirm", "h1")
        self.assertEqual((self.stock("A"), self.held("A")), (9, 0))
        self.assertWhole("hold", "h2", "A=2")
        self.assertWhole("release", "h2")
        self.assertEqual((self.stock("A"), self.held("A")), (9, 0))
        self.assertWhole("order", "o1", "A=3")
        self.assertEqual(self.stock("A"), 6)
        self.assertWhole("cancel", "o1")
        self.assertEqual(self.stock("A"), 9)
        self.assertEqual(self.r("GET", "stock:{A}:changes"), "not a list", "left to its owner")

    def test_an_expiry_given_back_by_reap_or_a_deduction_is_whole(self):
        self.r("DEL", "stock:{A}:changes")
        self.wait_past(self.sc("hold", "e1", "A=4", "--expire", "1").one["expires_at_ms"])
        self.r("SET", "stock:{A}:changes", "not a list")
        res = self.sc("reap")
        self.assertEqual((res.rc, res.one["op"]), (1, "reap"), res)  # its summary all the same
        self.assertIn(self.WARNING, res.stderr)
        self.assertEqual((self.stock("A"), self.held("A")), (10, 0))
        self.assertEqual(self.sc("reap").one["holds"], 0)
        if self.cluster:
            return  # a cluster cart's expired holds come back by reap, not by a deduction
        self.r("DEL", "stock:{A}:changes")
        self.wait_past(self.sc("hold", "e2", "A=4", "--expire", "1").one["expires_at_ms"])
        self.r("SET", "stock:{A}:changes", "not a list")
        res = self.sc("deduct", "A", "1", "--request-id", "d1")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("applied, but " + self.WARNING, res.one["error"])
        self.assertEqual((self.stock("A"), self.held("A")), (9, 0))
        res = self.sc("deduct", "A", "1", "--request-id", "d1")
        self.assertEqual((res.rc, res.one["stock"], res.one.get("replayed")), (0, 9, True), res)


class Operations(HoldsTest):
    @standalone_only
    def test_doctor_warns_about_expired_holds_until_reap(self):
        self.sc("init", "A", "10")
        self.wait_past(self.sc("hold", "c", "A=1", "--expire", "1").one["expires_at_ms"])
        holds = [json.loads(l) for l in self.sc("doctor").stdout.splitlines()
                 if json.loads(l)["check"] == "holds"]
        self.assertEqual([(h["status"], h["hint"]) for h in holds],
                         [("warn", "run stockctl reap (a cron line or systemd timer every minute)")])
        self.sc("reap")
        holds = [json.loads(l) for l in self.sc("doctor").stdout.splitlines()
                 if json.loads(l)["check"] == "holds"]
        self.assertEqual([h["status"] for h in holds], ["ok"])

    @standalone_only
    def test_bench_order_mode_is_correct_and_leaves_nothing(self):
        res = self.sc("bench", "--mode", "order", "--items", "10", "-c", "4", "-n", "300")
        self.assertEqual(res.rc, 0, res)
        report = res.one
        self.assertEqual((report["mode"], report["ok"], report["stock_taken"], report["correct"]),
                         ("order", 300, 900, True))
        self.assertEqual(self.r("DBSIZE"), 0)


@unittest.skipIf(CLUSTER, "the input is checked before anything is sent: the target does not enter")
class BadInput(HoldsTest):
    def assert_refused(self, *args, rc=2, text=None):
        self.sc("init", "A", "10")
        before = self.snapshot()
        res = self.sc(*args)
        self.assertEqual(res.rc, rc, res)
        if text:
            self.assertIn(text, res.stderr)
        self.assertRegex(res.stderr, r"^stockctl: error: ")
        self.assertEqual(self.snapshot(), before)
        self.assertEqual(self.stock("A"), 10)
        return res

    def test_malformed_lines(self):
        cases = {"A=": "line 2 'A=': the QTY after '=' is missing",
                 "=3": "line 2 '=3': the SKU before '=' is missing",
                 "A=0": "line 2 'A=0': QTY '0' is not a quantity",
                 "A=-1": "line 2 'A=-1': QTY '-1' is not a quantity",
                 "A==2": "line 2 'A==2': QTY '=2' is not a quantity",
                 "A": "line 2 'A': a line is SKU=QTY"}
        for line, text in cases.items():
            for op in ("hold", "order"):
                res = self.assert_refused(op, "c", "A=1", line, text="%s c: %s" % (op, text))
                self.assertEqual(res.one["status"], "invalid")
                self.assertIn("nothing was held" if op == "hold" else "nothing was ordered",
                              res.stderr)

    def test_a_long_id_is_shortened_in_messages(self):
        # As a SKU is: its first bytes and its length, not 300 bytes on a terminal.
        for op in ("hold", "release"):
            args = (op, "x" * 300) + (("A=1",) if op == "hold" else ())
            res = self.assert_refused(*args)
            self.assertIn("stockctl: error: %s %s... (300 bytes): id is 300 bytes long" %
                          (op, "x" * 48), res.stderr)
            self.assertNotIn("x" * 49, res.stderr)

    def test_more_than_a_thousand_lines(self):
        lines = ["S%d=1" % i for i in range(1001)]
        self.assert_refused("hold", "c", *lines, text="1001 lines; at most 1000 per id")
        self.r("SET", "stock:{S0}", "5")
        ok = self.sc("hold", "c", *lines[:1000], "--init-value", "1")
        self.assertEqual(ok.rc, 0, ok.stderr)

    def test_bad_ids(self):
        self.assert_refused("hold", "", "A=1", text="an id cannot be empty")
        self.assert_refused("hold", "a\x01b", "A=1", text="id contains a control character")
        # 'o-1 ' would be another id than 'o-1': a retry that adds a space would apply again.
        self.assert_refused("order", "o-1 ", "A=1", text="id 'o-1 ' has a space at its start or end")
        self.assert_refused("confirm", "", text="an id cannot be empty")
        # --trim takes the space away, as around a SKU or a request id: the same id each time.
        res = self.sc("order", " o-1 ", "A=1", "--trim")
        self.assertEqual((res.rc, res.one["id"], res.one["status"]), (0, "o-1", "ok"), res)
        again = self.sc("order", "o-1", "A=1")
        self.assertEqual(again.one.get("replayed"), True, again)
        res = self.sc("cancel", "o-1 ", "--trim")
        self.assertEqual((res.rc, res.one["id"], res.one["status"]), (0, "o-1", "ok"), res)

    def test_an_id_with_an_equals_sign_is_refused(self):
        # `hold A=1 B=1` forgot the ID: it must not hold B under the id "A=1".
        for op in ("hold", "order"):
            res = self.assert_refused(op, "A=1", "B=1",
                                      text="%s A=1: an id cannot contain '='" % op)
            self.assertEqual(res.one["status"], "invalid")
        self.assertEqual(self.r("EXISTS", "stock:{B}"), 0)

    def test_a_corrupt_stored_value_names_its_item(self):
        self.r("SET", "stock:{K}", "abc")
        for op in ("hold", "order"):
            res = self.assert_refused(op, "k-1", "K=1", "A=1", rc=1)
            self.assertIn("item 'K': stored value 'abc' of stock:{K} is not a stock value",
                          res.stderr)
            self.assertNotIn("stockctl:hold", res.stderr)
            self.assertEqual(res.one["status"], "error")
            self.assertIn("item 'K'", res.one["error"])
            self.assertTrue(all(line.get("status") != "ok" for line in res.one["lines"]), res.one)
            self.assertEqual(self.r("GET", "stock:{K}"), "abc")

    def test_bad_expiry(self):
        for value in ("0", "604801", "-1", "x"):
            self.assert_refused("hold", "c", "A=1", "--expire", value, text="--expire")

    def test_bad_skus(self):
        self.assert_refused("hold", "c", "A=1", "b{x}=1", text="item 'b{x}'")


class Files(HoldsTest):
    def test_rows_with_the_same_id_form_one_cart(self):
        self.sc("init", "A", "10")
        self.sc("init", "B", "10")
        path = self.write("carts.csv", "id,sku,qty\nc1,A,1\nc2,B,2\nc1,B,1\nc1,A,2\n")
        res = self.sc("hold", "--file", path)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([(l["id"], [(x["sku"], x["qty"]) for x in l["lines"]]) for l in res.lines],
                         [("c1", [("A", 3), ("B", 1)]), ("c2", [("B", 2)])])
        self.assertEqual((self.stock("A"), self.stock("B")), (7, 7))
        res = self.sc("order", "--file", self.write("o.csv", "id,sku,qty\no1,A,7\no2,A,1\n"))
        self.assertEqual(res.rc, 3)
        self.assertEqual([l["status"] for l in res.lines], ["ok", "insufficient"])

    @standalone_only
    def test_sigint_stops_between_windows_and_reports_every_cart_not_sent(self):
        for sku in ("A", "B"):
            self.sc("init", sku, "100000")
        # Cart c100 names the missing item Z, whose init lock someone else holds: the hold
        # waits for it (up to --lock-wait) after its window of carts was sent, and gets SIGINT.
        self.r("SET", "stock:{Z}:lock", "someone-else", "PX", "600000")
        carts = 300
        rows = "".join("c%d,A,1\nc%d,B,1\n" % (i, i) for i in range(carts)) + "c100,Z,1\n"
        path = self.write("carts.csv", "id,sku,qty\n" + rows)
        out = os.path.join(self.tmp, "out.jsonl")
        proc = spawn_to_file(out, "hold", "--file", path, "--init-value", "5", "--lock-wait", "600000",
                             *self.target_args())
        try:
            deadline = time.monotonic() + 60
            while not self.r("HEXISTS", "stock:{A}:held", "c101"):  # c100's window was sent
                self.assertIsNone(proc.poll(), "still running")
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.01)  # polling the server, bounded by the deadline
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        self.assertEqual(proc.returncode, 130, err)
        with open(out) as f:
            lines = [json.loads(l) for l in f]
        self.assertEqual([l["id"] for l in lines], ["c%d" % i for i in range(carts)])
        held = [l["id"] for l in lines if l["status"] == "ok"]
        unsent = [l for l in lines if l["status"] == "error"]
        self.assertEqual(len(held) + len(unsent), carts)
        self.assertTrue(all(l["error"] == "not applied: interrupted by SIGINT" for l in unsent), unsent[:3])
        self.assertIn("c100", [l["id"] for l in unsent])
        self.assertGreater(len(unsent), 1, "the windows after c100's were not sent")
        # As deduct --file: the cart that was sent (c100) has its error line; the carts not sent
        # have none of their own, one line says how many.
        self.assertEqual([l for l in err.splitlines() if "not applied:" in l],
                         ["stockctl: error: hold c100: not applied: interrupted by SIGINT"], err)
        self.assertIn("interrupted by SIGINT: %d holds were not sent (reported as not applied)"
                      % (len(unsent) - 1), err)
        # Redis holds exactly what the output says: the carts reported ok, nothing of the others.
        self.assertEqual(self.held("A"), len(held))
        self.assertEqual(self.held("B"), len(held))
        self.assertEqual(self.stock("A"), 100000 - len(held))
        self.assertIsNone(self.r("GET", "stock:{Z}"))
        self.assertEqual(self.r("GET", "stock:{Z}:lock"), "someone-else")

    def test_one_invalid_row_holds_nothing(self):
        self.sc("init", "A", "10")
        path = self.write("bad.csv", "id,sku,qty\nc1,A,1\nc2,A,0\n")
        res = self.sc("hold", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("bad.csv:3: ", res.stderr)
        self.assertIn("bad.csv: 1 invalid row; nothing changed", res.stderr)
        self.assertEqual([(l["id"], l["status"]) for l in res.lines], [("c2", "invalid")])
        self.assertEqual(self.stock("A"), 10)
        res = self.sc("order", "--file", self.write("empty.csv", "id,sku,qty\n,A,1\n"))
        self.assertEqual(res.rc, 2, res)
        self.assertIn("empty.csv:2: column 'id' is empty", res.stderr)
        self.assertNotIn("request id", res.stderr)
        self.assertEqual(self.stock("A"), 10)
        res = self.sc("hold", "--file", self.write("noid.csv", "sku,qty\nA,1\n"))
        self.assertEqual(res.rc, 2, res)
        self.assertIn("'id' column", res.stderr)

    def test_id_column_names_the_id_column_as_the_other_column_options_do(self):
        self.sc("init", "A", "10")
        # Names match as --sku-column's and --qty-column's do: without regard to case.
        path = self.write("renamed.csv", "Cart,Item,N\nc1,A,1\nc2,A,2\nc1,A,1\n")
        res = self.sc("hold", "--file", path, "--id-column", "cart", "--sku-column", "item",
                      "--qty-column", "n")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([(l["id"], [(x["sku"], x["qty"]) for x in l["lines"]]) for l in res.lines],
                         [("c1", [("A", 2)]), ("c2", [("A", 2)])])
        path = self.write("o.ndjson", '{"order": "o1", "sku": "A", "qty": 3, "id": "x"}\n')
        res = self.sc("order", "--file", path, "--id-column", "ORDER")
        self.assertEqual((res.rc, res.one["id"], res.one["lines"][0]["stock"]), (0, "o1", 3), res)
        self.assertEqual(self.stock("A"), 3)
        # The messages name the column by the name given.
        res = self.sc("hold", "--file", self.write("id.csv", "id,sku,qty\nc3,A,1\n"),
                      "--id-column", "cart")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("id.csv:1: header has no 'cart' column", res.stderr)
        res = self.sc("order", "--file", self.write("e.csv", "cart,sku,qty\n,A,1\n"),
                      "--id-column", "cart")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("e.csv:2: column 'cart' is empty", res.stderr)
        self.assertEqual(self.stock("A"), 3)


@unittest.skipIf(CLUSTER, "a server without replicas; a cluster's primaries have one each: "
                          "Orders.test_an_unacknowledged_step_fails_its_cart_with_an_answer...")
class WaitReplicas(HoldsTest):
    """--wait-replicas N on a server without replicas: every write of hold, order, confirm,
    release and cancel is applied on the primary and reported as error, as deduct's is."""

    NOT_DURABLE = ("applied on the primary, but its durability is not confirmed: "
                   "0 of 1 replicas acknowledged within 100 ms")
    WAIT = ("--wait-replicas", "1", "--wait-timeout", "100")

    def assert_not_durable(self, res, op, id_):
        self.assertEqual(res.rc, 1, res)
        self.assertEqual((res.one["op"], res.one["id"], res.one["status"], res.one["error"]),
                         (op, id_, "error", self.NOT_DURABLE), res)
        self.assertIn("%s %s: %s" % (op, id_, self.NOT_DURABLE), res.stderr)

    def test_hold_order_and_their_files_report_an_unacknowledged_cart_as_error(self):
        self.sc("init", "A", "10")
        self.assert_not_durable(self.sc("hold", "h1", "A=1", *self.WAIT), "hold", "h1")
        self.assert_not_durable(self.sc("order", "o1", "A=2", *self.WAIT), "order", "o1")
        self.assertEqual((self.stock("A"), self.held("A")), (7, 1), "applied on the primary")
        for kind in ("hold", "order"):
            path = self.write(kind + ".csv", "id,sku,qty\n%s-f1,A,1\n%s-f2,A,1\n" % (kind, kind))
            res = self.sc(kind, "--file", path, *self.WAIT)
            self.assertEqual(res.rc, 1, res)
            self.assertEqual([(l["id"], l["status"], l["error"]) for l in res.lines],
                             [("%s-f%d" % (kind, n), "error", self.NOT_DURABLE) for n in (1, 2)])
        self.assertEqual((self.stock("A"), self.held("A")), (3, 3))
        # Without --wait-replicas the same id answers its first answer again: it was applied.
        res = self.sc("hold", "h1", "A=1")
        self.assertEqual((res.rc, res.one["status"], res.one.get("replayed")), (0, "ok", True), res)

    def test_an_unacknowledged_hold_gives_the_expiry_it_has_on_the_primary(self):
        self.sc("init", "A", "10")

        def expiry(id_):
            return int(self.r("ZSCORE", "stock:{A}:holds", id_))

        res = self.sc("hold", "h1", "A=1", *self.WAIT)
        self.assert_not_durable(res, "hold", "h1")
        self.assertEqual(res.one["expires_at_ms"], expiry("h1"), res)
        path = self.write("h.csv", "id,sku,qty\nf1,A,1\nf2,A,1\n")
        res = self.sc("hold", "--file", path, *self.WAIT)
        self.assertEqual(res.rc, 1, res)
        self.assertEqual([(l["status"], l["expires_at_ms"]) for l in res.lines],
                         [("error", expiry("f1")), ("error", expiry("f2"))])
        # A repeat answers the same expiry; a hold that was not made has none. An error is not
        # the first answer again, so it claims no replay: its message says what the repeat did.
        res = self.sc("hold", "h1", "A=1", *self.WAIT)
        self.assertEqual((res.rc, res.one["status"], res.one["expires_at_ms"]),
                         (1, "error", expiry("h1")), res)
        self.assertNotIn("replayed", res.one)
        self.assertEqual(res.one["error"], "id 'h1' was held before and this repeat changed "
                         "nothing, but the replicas have not confirmed it: " + self.NOT_DURABLE)
        res = self.sc("hold", "h2", "A=100", *self.WAIT)
        self.assertEqual((res.rc, res.one["status"], res.one["expires_at_ms"]),
                         (3, "insufficient", None), res)
        self.assertEqual((self.stock("A"), self.held("A")), (7, 3))

    def test_confirm_release_and_cancel_report_an_unacknowledged_write_as_error(self):
        self.sc("init", "A", "10")
        for id_ in ("h1", "h2"):
            self.sc("hold", id_, "A=1")
        self.sc("order", "o1", "A=1")
        self.assert_not_durable(self.sc("confirm", "h1", *self.WAIT), "confirm", "h1")
        self.assert_not_durable(self.sc("release", "h2", *self.WAIT), "release", "h2")
        self.assert_not_durable(self.sc("cancel", "o1", *self.WAIT), "cancel", "o1")
        self.assertEqual((self.stock("A"), self.held("A")), (9, 0), "applied on the primary")
        # Nothing to write, nothing to wait for: a missing id is still missing.
        res = self.sc("confirm", "nope", *self.WAIT)
        self.assertEqual((res.rc, res.one["status"]), (4, "missing"), res)


class Metrics(HoldsTest):
    def metrics(self, path, op):
        with open(path) as f:
            text = f.read()
        prefix = 'stockctl_items{op="%s",status="' % op
        return {l[len(prefix):].split('"')[0]: int(l.split()[-1])
                for l in text.splitlines() if l.startswith(prefix) and not l.endswith(" 0")}

    def test_metrics_file_counts_every_answer_of_holds_commands(self):
        self.sc("init", "A", "10")
        prom = os.path.join(self.tmp, "m.prom")
        path = self.write("mix.csv", "id,sku,qty\no1,A,1\no2,A,100\no3,A,2\n")
        res = self.sc("order", "--file", path, "--metrics-file", prom)
        self.assertEqual(res.rc, 3, res)
        self.assertEqual(self.metrics(prom, "order"), {"ok": 2, "insufficient": 1})
        self.sc("hold", "h1", "A=1", "--metrics-file", prom)
        self.assertEqual(self.metrics(prom, "hold"), {"ok": 1})
        self.sc("hold", "h1", "A=2", "--metrics-file", prom)
        self.assertEqual(self.metrics(prom, "hold"), {"conflict": 1})
        self.sc("confirm", "h1", "nope", "--metrics-file", prom)
        self.assertEqual(self.metrics(prom, "confirm"), {"ok": 1, "missing": 1})


class Items(HoldsTest):
    def test_delete_refuses_an_item_with_holds_unless_forced(self):
        self.sc("init", "A", "10")
        self.sc("hold", "c", "A=1")
        res = self.sc("delete", "A")
        self.assertEqual((res.rc, res.one["status"]), (2, "conflict"))
        res = self.sc("delete", "A", "--force")
        self.assertEqual(res.one["status"], "ok")
        self.assertEqual(sorted(k for k in self.r("KEYS", "*") if "{A}" in k and k.startswith("stock:")), [])

    @standalone_only
    def test_delete_does_not_count_a_hold_that_expired(self):
        self.sc("init", "A", "10")
        self.wait_past(self.sc("hold", "c", "A=1", "--expire", "1").one["expires_at_ms"])
        res = self.sc("delete", "A")
        self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
        self.assertEqual(self.r("KEYS", "*{A}*"), [])

    def test_export_shows_held(self):
        self.sc("init", "A", "10")
        self.sc("hold", "c", "A=3")
        rows = [json.loads(l) for l in self.sc("export").stdout.splitlines()]
        self.assertEqual(rows, [{"sku": "A", "stock": 7, "held": 3, "ttl": None}])

    def test_the_records_are_not_items(self):
        self.sc("init", "A", "10")
        self.sc("hold", "c", "A=3")
        self.sc("order", "o", "A=1")
        self.assertEqual([json.loads(l)["sku"] for l in self.sc("export").stdout.splitlines()], ["A"])


class Concurrency(HoldsTest):
    ITEMS = ["h%d" % i for i in range(6)]
    INITIAL = 60

    @standalone_only
    def test_racing_carts_never_oversell_and_always_add_up(self):
        for sku in self.ITEMS:
            self.sc("init", sku, str(self.INITIAL), "--no-log")
        sold = {sku: 0 for sku in self.ITEMS}
        lock = threading.Lock()
        errors = []
        stop = threading.Event()

        def sell(lines, sign):
            with lock:
                for line in lines:
                    sold[line["sku"]] += sign * line["qty"]

        def worker(n):
            rnd = random.Random(n)
            for j in range(8):
                lines = ["%s=%d" % (rnd.choice(self.ITEMS), rnd.randint(1, 4))
                         for _ in range(rnd.randint(3, 5))]
                lines.append(lines[0])  # a duplicate in every cart
                id_ = "w%d-%d" % (n, j)
                if rnd.random() < 0.3:
                    res = self.sc("order", id_, *lines)
                    if res.one["status"] == "ok":
                        sell(res.one["lines"], 1)
                        if rnd.random() < 0.5:
                            c = self.sc("cancel", id_)
                            if c.one["status"] == "ok" and not c.one.get("replayed"):
                                sell(res.one["lines"], -1)
                    continue
                res = self.sc("hold", id_, *lines, "--expire", "1" if rnd.random() < 0.5 else "600")
                if res.rc not in (0, 3):
                    errors.append(res)
                if res.one["status"] != "ok":
                    continue
                action = rnd.choice(["confirm", "release", "leave"])
                if action == "leave":
                    continue
                a = self.sc(action, id_)
                if action == "confirm" and a.one["status"] == "ok":
                    sell(res.one["lines"], 1)

        def sampler():
            # Never negative, never more out than came in, at every moment (one atomic read).
            script = ("local out = {} for i, k in ipairs(KEYS) do "
                      "out[i] = {redis.call('GET', k), redis.call('HGET', k .. ':held', '') or '0'} end "
                      "return out")
            keys = ["stock:{%s}" % s for s in self.ITEMS]
            r = self.server.client()
            while not stop.is_set():
                for stock, held in r("EVAL", script, len(keys), *keys):
                    if int(stock) < 0 or int(stock) + int(held) > self.INITIAL:
                        errors.append(("bad moment", stock, held))
            r.close()

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(16)]
        watch = threading.Thread(target=sampler)
        watch.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        watch.join()
        self.assertEqual(errors, [])
        # Let every short hold expire, give them back, and release the long ones.
        self.wait_past(server_ms(self.r) + 1100)
        self.sc("reap")
        for sku in self.ITEMS:
            self.assertEqual(self.stock(sku) + self.held(sku) + sold[sku], self.INITIAL, sku)
            self.assertGreaterEqual(self.stock(sku), 0)


@unittest.skipUnless(CLUSTER, "the protocol runs on a cluster only")
class ClusterHoldsTest(ServerTest):
    INITIAL = 10

    def setUp(self):
        super().setUp()
        self.skus = skus_in_distinct_slots(3)
        self.stock_up()

    def stock_up(self):
        """Every item at INITIAL units, set directly: the fixture, not what is tested (init is
        tested elsewhere), and a process less per item and test."""
        for sku in self.skus:
            self.r("SET", "stock:{%s}" % sku, str(self.INITIAL))

    def stock(self, sku):
        return int(self.r("GET", "stock:{%s}" % sku))

    def held(self, sku):
        return int(self.r("HGET", "stock:{%s}:held" % sku, "") or 0)

    def sold(self, sku):
        return self.INITIAL - self.stock(sku) - self.held(sku)

    def lines(self, *qtys):
        return ["%s=%d" % (sku, q) for sku, q in zip(self.skus, qtys)]

    def record_field(self, id_, field):
        """A field of the cart record: "<state> <attempt> <exp> <deadline> <finished> ..."."""
        raw = self.r("GET", "stockctl:cart:stock:{%s}" % id_)
        fields = ["state", "attempt", "exp", "deadline", "finished"]
        return raw.split("\n", 1)[0].split(" ")[fields.index(field)] if raw else None

    def record(self, id_):
        return self.record_field(id_, "state")

    def wait_past_record(self, id_, field):
        """Waits until the record's node clock passes its deadline or expiry (asks the node)."""
        key = "stockctl:cart:stock:{%s}" % id_
        at = int(self.record_field(id_, field))
        while server_ms(self.r, key) < at:
            time.sleep(0.05)

    def stopped(self, step, *args, **env):
        res = run(*args, *self.target_args(),
                  env=clean_env(STOCKCTL_TEST_STOP_AT=step, **env))
        self.assertEqual(res.rc, -9, (step, res))
        return res


class Orders(ClusterHoldsTest):
    def test_an_unacknowledged_step_fails_its_cart_with_an_answer_and_stops_the_run(self):
        # Each primary has one replica: two are never acknowledged.
        wait = ("--wait-replicas", "2", "--wait-timeout", "100")
        res = self.sc("hold", "w1", *self.lines(1, 1, 1), *wait)
        self.assertEqual(res.rc, 1, res)
        self.assertEqual((res.one["id"], res.one["status"]), ("w1", "error"), res)
        self.assertTrue(res.one["error"].startswith(
            "applied on the primary, but its durability is not confirmed: 1 of 2 replicas "
            "acknowledged within 100 ms; stopped before the next step"), res)
        self.assertIn("hold w1: applied on the primary", res.stderr)
        self.assertNotIn("stockctl:", res.one["error"], "names the id, not an internal key")
        self.assertIsNone(res.one["expires_at_ms"], "stopped at its intent: no hold was made")
        path = self.write("w.csv", "id,sku,qty\nf1,%s,1\nf2,%s,1\n" % (self.skus[0], self.skus[1]))
        res = self.sc("order", "--file", path, *wait)
        self.assertEqual(res.rc, 1, res)
        self.assertEqual([(l["id"], l["status"]) for l in res.lines], [("f1", "error"), ("f2", "error")])
        self.assertEqual(res.lines[1]["error"], "not applied: stopped after order f1")
        res = self.sc("confirm", "w1", *wait)
        self.assertEqual((res.rc, res.one["id"], res.one["status"]), (1, "w1", "error"), res)

    def test_an_unacknowledged_step_of_a_hold_already_made_gives_its_expiry(self):
        wait = ("--wait-replicas", "2", "--wait-timeout", "100")
        made = self.sc("hold", "w2", *self.lines(1, 1, 1))
        self.assertEqual(made.rc, 0, made)
        res = self.sc("hold", "w2", *self.lines(1, 1, 1), *wait)
        self.assertEqual((res.rc, res.one["status"], res.one["expires_at_ms"]),
                         (1, "error", made.one["expires_at_ms"]), res)
        # Cut off once its record decided: the hold stands on the primaries, with the record's
        # expiry.
        self.stopped("decide", "hold", "w3", *self.lines(1, 1, 1))
        res = self.sc("hold", "w3", *self.lines(1, 1, 1), *wait)
        self.assertEqual((res.rc, res.one["status"], res.one["expires_at_ms"]),
                         (1, "error", int(self.record_field("w3", "exp"))), res)
        self.assertEqual([self.held(s) for s in self.skus], [2, 2, 2])

    def test_an_order_over_three_slots_deducts_every_line_once(self):
        res = self.sc("order", "o1", *self.lines(1, 2, 3))
        self.assertEqual(res.rc, 0, res)
        out = res.one
        self.assertEqual(list(out), ["op", "id", "status", "lines"])
        self.assertEqual(out["status"], "ok")
        self.assertEqual([l["stock"] for l in out["lines"]], [9, 8, 7])
        self.assertEqual([l["status"] for l in out["lines"]], ["ok"] * 3)
        again = self.sc("order", "o1", *reversed(self.lines(1, 2, 3)))
        self.assertEqual(again.rc, 0, again)
        self.assertEqual(again.one, dict(out, replayed=True))
        self.assertEqual([self.sold(s) for s in self.skus], [1, 2, 3])
        self.assertEqual([self.held(s) for s in self.skus], [0, 0, 0])
        got = self.sc("get", *self.skus).lines
        self.assertEqual([(g["stock"], g["held"]) for g in got], [(9, 0), (8, 0), (7, 0)])

    def group_index_members(self):
        """The items listed in the groups' indexes (stockctl:cart-groups:...), on every primary."""
        members = set()
        for port in self.r.primaries():
            c = self.r._conn(port)
            cursor = "0"
            while True:
                cursor, keys = c("SCAN", cursor, "MATCH", "stockctl:cart-groups:*", "COUNT", "1000")
                for key in keys:
                    members.update(c("ZRANGE", key, "0", "-1"))
                if cursor == "0":
                    break
        return members

    def test_deleting_an_item_takes_it_out_of_the_groups_index(self):
        # Holds' groups are listed there (an order's groups hold nothing, so they are not).
        self.assertEqual(self.sc("order", "o1", *self.lines(1, 2, 3)).rc, 0)
        self.assertEqual(self.group_index_members(), set())
        self.assertEqual(self.sc("hold", "h1", *self.lines(1, 2, 3)).rc, 0)
        self.assertEqual(self.sc("release", "h1").rc, 0)
        keys = {"stock:{%s}" % s for s in self.skus}
        # One member per item, however many groups it had: bounded by the items.
        self.assertEqual(self.sc("hold", "h2", *self.lines(1, 1, 1)).rc, 0)
        self.assertEqual(self.sc("release", "h2").rc, 0)
        self.assertEqual(self.group_index_members(), keys)
        res = self.sc("delete", self.skus[0], self.skus[1])
        self.assertEqual((res.rc, [l["status"] for l in res.lines]), (0, ["ok", "ok"]), res)
        self.assertEqual(self.group_index_members(), {"stock:{%s}" % self.skus[2]})

    def test_one_short_line_deducts_nothing_and_the_id_may_try_again(self):
        res = self.sc("order", "o", *self.lines(1, 11, 1))
        self.assertEqual(res.rc, 3, res)
        self.assertEqual(res.one["status"], "insufficient")
        self.assertEqual([l["status"] for l in res.one["lines"]], [None, "insufficient", None])
        self.assertEqual([l["stock"] for l in res.one["lines"]], [10, 10, 10])
        self.assertEqual([self.stock(s) for s in self.skus], [10, 10, 10])
        self.assertEqual([self.held(s) for s in self.skus], [0, 0, 0])
        self.sc("add", self.skus[1], "1")
        res = self.sc("order", "o", *self.lines(1, 11, 1))
        self.assertEqual(res.rc, 0, res)
        self.assertNotIn("replayed", res.one)
        self.assertEqual([self.stock(s) for s in self.skus], [9, 0, 9])

    def test_duplicate_skus_are_merged_before_checking(self):
        a = self.skus[0]
        res = self.sc("order", "o", "%s=6" % a, "%s=6" % a, "%s=1" % self.skus[1])
        self.assertEqual(res.rc, 3, res)
        self.assertEqual(res.one["lines"][0]["qty"], 12)
        self.assertEqual((self.stock(a), self.held(a)), (10, 0))

    def test_a_corrupt_stored_value_names_its_item_and_no_line_claims_ok(self):
        bad = self.skus[1]
        self.r("SET", "stock:{%s}" % bad, "abc")
        for op in ("hold", "order"):
            res = self.sc(op, "k-1", *self.lines(1, 1, 1))
            self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
            self.assertIn("item '%s': stored value 'abc' of stock:{%s} is not a stock value"
                          % (bad, bad), res.stderr)
            self.assertNotIn("cart-group", res.stderr)
            self.assertTrue(all(line.get("status") != "ok" for line in res.one["lines"]),
                            res.one)
            self.assertEqual(self.r("GET", "stock:{%s}" % bad), "abc")
            self.assertEqual([self.stock(s) for s in (self.skus[0], self.skus[2])], [10, 10])

    def test_a_corrupt_stored_value_met_by_a_settle_names_its_item(self):
        bad = self.skus[1]
        self.sc("hold", "h", *self.lines(1, 1, 1))
        self.sc("order", "o", *self.lines(1, 1, 1))
        self.r("SET", "stock:{%s}" % bad, "abc")
        for action, id_ in (("confirm", "h"), ("cancel", "o")):
            res = self.sc(action, id_)
            self.assertEqual(res.rc, 1, res)
            self.assertIn("item '%s': stored value 'abc' of stock:{%s} is not a stock value"
                          % (bad, bad), res.stderr)
            self.assertNotIn("cart-group", res.stderr)
        self.assertEqual(self.r("GET", "stock:{%s}" % bad), "abc")
        self.assertEqual(self.held(bad), 1)
        # The decisions are kept: once the value is repaired, the same commands finish them.
        self.r("SET", "stock:{%s}" % bad, "8")
        for action, id_ in (("confirm", "h"), ("cancel", "o")):
            res = self.sc(action, id_)
            self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
        self.assertEqual([self.stock(s) for s in self.skus], [9, 9, 9])
        self.assertEqual([self.held(s) for s in self.skus], [0, 0, 0])

    def test_cancel_gives_an_order_back_exactly_once(self):
        self.sc("order", "o", *self.lines(1, 2, 3))
        res = self.sc("cancel", "o")
        self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
        self.assertEqual([l["stock"] for l in res.one["lines"]], [10, 10, 10])
        again = self.sc("cancel", "o")
        self.assertEqual((again.rc, again.one.get("replayed")), (0, True))
        self.assertEqual([self.stock(s) for s in self.skus], [10, 10, 10])
        self.assertEqual(self.sc("confirm", "o").one["status"], "conflict")


class Holds(ClusterHoldsTest):
    def test_a_hold_keeps_units_aside_until_confirmed_once(self):
        res = self.sc("hold", "h", *self.lines(1, 2, 3))
        self.assertEqual(res.rc, 0, res)
        out = res.one
        self.assertEqual(list(out), ["op", "id", "status", "expires_at_ms", "lines"])
        key = "stockctl:cart:stock:{h}"
        self.assertGreater(out["expires_at_ms"], server_ms(self.r, key) + 590000)
        self.assertEqual([(self.stock(s), self.held(s)) for s in self.skus], [(9, 1), (8, 2), (7, 3)])
        got = self.sc("get", *self.skus).lines
        self.assertEqual([g["held"] for g in got], [1, 2, 3])
        res = self.sc("confirm", "h")
        self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
        self.assertEqual([self.held(s) for s in self.skus], [0, 0, 0])
        self.assertEqual([self.sold(s) for s in self.skus], [1, 2, 3])
        again = self.sc("confirm", "h")
        self.assertEqual((again.rc, again.one.get("replayed")), (0, True))
        # A replayed or refused answer gives each line's stock now, as on one Redis.
        self.assertEqual([l["stock"] for l in again.one["lines"]], [9, 8, 7])
        refused = self.sc("release", "h")
        self.assertEqual(refused.rc, 2)
        self.assertEqual([l["stock"] for l in refused.one["lines"]], [9, 8, 7])
        self.assertEqual([self.sold(s) for s in self.skus], [1, 2, 3])
        self.assertEqual(self.sc("cancel", "h").one["status"], "ok")
        self.assertEqual([self.stock(s) for s in self.skus], [10, 10, 10])

    def test_release_gives_back_once_and_a_released_hold_cannot_be_confirmed(self):
        self.sc("hold", "h", *self.lines(1, 2, 3))
        res = self.sc("release", "h")
        self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
        self.assertEqual([l["stock"] for l in res.one["lines"]], [10, 10, 10])
        again = self.sc("release", "h").one
        self.assertEqual((again.get("replayed"), [l["stock"] for l in again["lines"]]),
                         (True, [10, 10, 10]))
        refused = self.sc("confirm", "h")
        self.assertEqual((refused.rc, refused.one["status"]), (2, "conflict"), refused)
        self.assertIn("the hold was released", refused.one["error"])
        self.assertEqual([(self.stock(s), self.held(s)) for s in self.skus], [(10, 0)] * 3)
        # Repeating the hold says it was released since, and claims no expiry.
        replay = self.sc("hold", "h", *self.lines(1, 2, 3)).one
        self.assertEqual((replay["status"], replay["replayed"], replay["state"],
                          replay["expires_at_ms"]), ("ok", True, "released", None), replay)
        self.assertEqual([(self.stock(s), self.held(s)) for s in self.skus], [(10, 0)] * 3)

    def test_a_record_that_is_a_hash_is_refused_and_changes_nothing(self):
        """The record was a hash before it was one string; no release wrote that form, so a
        record in it is not read: confirm fails naming it and nothing is sold or given back."""
        self.sc("hold", "h", *self.lines(1, 2, 3))
        key = "stockctl:cart:stock:{h}"
        raw = self.r("GET", key)
        head, rest = raw.split("\n", 1)
        state, attempt, exp, deadline, finished, kind, size = head.split(" ")
        self.r("DEL", key)
        self.r("HSET", key, "kind", kind, "canon", rest[int(size):], "lines", rest[:int(size)],
               "state", state, "attempt", attempt, "exp", exp, "deadline", deadline,
               "finished", finished)
        res = self.sc("confirm", "h")
        self.assertEqual(res.rc, 1, res)
        self.assertIn("STOCKCTL_INVALID record " + key, res.stderr, res)
        self.assertEqual([self.sold(s) for s in self.skus], [0, 0, 0])
        self.assertEqual([self.held(s) for s in self.skus], [1, 2, 3])
        self.assertEqual(self.r("HGET", key, "state"), "held")

    def test_group_units_count_as_held_for_export_and_delete(self):
        self.sc("hold", "h", *self.lines(1, 2, 3))
        exported = {l["sku"]: l["held"] for l in self.sc("export").lines if "sku" in l}
        self.assertEqual([exported[s] for s in self.skus], [1, 2, 3])
        res = self.sc("delete", self.skus[0])
        self.assertEqual((res.rc, res.one["status"]), (2, "conflict"), res)
        self.assertEqual(self.stock(self.skus[0]), 9)

    def test_the_items_nodes_never_expire_a_group_on_their_own_clock(self):
        self.sc("hold", "h", *self.lines(1, 2, 3), "--expire", "1")
        self.wait_past_record("h", "exp")
        # A deduction runs each item's lazy expiry: the group's units stay held, because only
        # the record (one clock) may say the hold expired.
        for sku in self.skus:
            self.assertEqual(self.sc("deduct", sku, "1").rc, 0)
        self.assertEqual([(self.stock(s), self.held(s)) for s in self.skus], [(8, 1), (7, 2), (6, 3)])
        # The units are back, which is what release wanted: expired, exit 0.
        res = self.sc("release", "h")
        self.assertEqual((res.rc, res.one["status"]), (0, "expired"), res)
        self.assertEqual([(self.stock(s), self.held(s)) for s in self.skus], [(9, 0)] * 3)


class CrashPoints(ClusterHoldsTest):
    """Three slot groups: steps intent, prepare:1..3, decide, finish:1..3."""

    PREPARE_STEPS = ["intent", "prepare:1", "prepare:2", "prepare:3"]
    AFTER_DECIDE = ["decide", "finish:1", "finish:2", "finish:3"]
    # An order's groups are ordered by their prepare: after its decision nothing is left to do.
    ORDER_AFTER_DECIDE = ["decide"]
    QTY = (1, 2, 3)

    def assert_each_line(self, sold, held=(0, 0, 0)):
        self.assertEqual([self.sold(s) for s in self.skus], list(sold))
        self.assertEqual([self.held(s) for s in self.skus], list(held))

    def assert_all_or_none_in_flight(self):
        """At the moment of a crash: every line is somewhere (stock, held or sold) and
        nothing is counted twice: held and sold are each 0 or the line's quantity."""
        for sku, qty in zip(self.skus, self.QTY):
            self.assertIn(self.held(sku), (0, qty))
            self.assertIn(self.sold(sku), (0, qty))
            self.assertGreaterEqual(self.stock(sku), 0)

    def test_an_order_stopped_at_each_step_is_finished_once_by_a_re_run(self):
        for step in self.PREPARE_STEPS + self.ORDER_AFTER_DECIDE:
            with self.subTest(step=step):
                self.r("FLUSHALL")
                self.stock_up()
                self.stopped(step, "order", "o", *self.lines(*self.QTY))
                self.assert_all_or_none_in_flight()
                res = self.sc("order", "o", *self.lines(*self.QTY))
                self.assertEqual((res.rc, res.one["status"]), (0, "ok"), (step, res))
                self.assert_each_line(sold=self.QTY)
                self.assertEqual(self.sc("order", "o", *self.lines(*self.QTY)).rc, 0)
                self.assert_each_line(sold=self.QTY)

    def test_an_order_stopped_at_each_step_is_settled_by_reap_all_or_none(self):
        for step in self.PREPARE_STEPS + self.ORDER_AFTER_DECIDE:
            with self.subTest(step=step):
                self.r("FLUSHALL")
                self.stock_up()
                self.stopped(step, "order", "o", *self.lines(*self.QTY),
                             STOCKCTL_TEST_PREPARE_MS="1500")
                self.wait_past_record("o", "deadline")
                self.assertEqual(self.sc("reap").rc, 0)
                decided = step in self.ORDER_AFTER_DECIDE
                self.assert_each_line(sold=self.QTY if decided else (0, 0, 0))
                self.assertEqual(self.record("o"), "ordered" if decided else "aborted")
                # The same command afterwards applies it exactly once.
                res = self.sc("order", "o", *self.lines(*self.QTY))
                self.assertEqual((res.rc, res.one["status"]), (0, "ok"), (step, res))
                self.assert_each_line(sold=self.QTY)

    def test_a_hold_stopped_at_each_step_holds_nothing_past_its_expiry_after_reap(self):
        for step in self.PREPARE_STEPS + ["decide"]:
            with self.subTest(step=step):
                self.r("FLUSHALL")
                self.stock_up()
                self.stopped(step, "hold", "h", *self.lines(*self.QTY), "--expire", "2")
                self.assert_all_or_none_in_flight()
                self.wait_past_record("h", "exp")
                self.assertEqual(self.sc("reap").rc, 0)
                self.assert_each_line(sold=(0, 0, 0))
                self.assertEqual(self.sc("confirm", "h").rc in (3, 4), True)
                self.assert_each_line(sold=(0, 0, 0))

    def test_a_hold_stopped_at_each_step_then_re_run_is_held_once(self):
        for step in self.PREPARE_STEPS + ["decide"]:
            with self.subTest(step=step):
                self.r("FLUSHALL")
                self.stock_up()
                self.stopped(step, "hold", "h", *self.lines(*self.QTY))
                res = self.sc("hold", "h", *self.lines(*self.QTY))
                self.assertEqual((res.rc, res.one["status"]), (0, "ok"), (step, res))
                self.assert_each_line(sold=(0, 0, 0), held=self.QTY)

    def test_confirm_and_release_stopped_at_each_step_take_effect_once_when_re_run(self):
        for action, sold in (("confirm", self.QTY), ("release", (0, 0, 0)),
                             ("cancel", (0, 0, 0))):
            for step in self.AFTER_DECIDE:
                with self.subTest(action=action, step=step):
                    self.r("FLUSHALL")
                    self.stock_up()
                    self.assertEqual(self.sc("hold", "h", *self.lines(*self.QTY)).rc, 0)
                    self.stopped(step, action, "h")
                    self.assert_all_or_none_in_flight()
                    res = self.sc(action, "h")
                    self.assertEqual((res.rc, res.one["status"], res.one.get("replayed")),
                                     (0, "ok", True), (action, step, res))
                    self.assert_each_line(sold=sold)

    def test_cancel_of_an_order_stopped_at_each_step_gives_back_once(self):
        for step in self.AFTER_DECIDE:
            with self.subTest(step=step):
                self.r("FLUSHALL")
                self.stock_up()
                self.assertEqual(self.sc("order", "o", *self.lines(*self.QTY)).rc, 0)
                self.assert_each_line(sold=self.QTY)
                self.stopped(step, "cancel", "o")
                self.assert_all_or_none_in_flight()
                res = self.sc("cancel", "o")
                self.assertEqual((res.rc, res.one["status"], res.one.get("replayed")),
                                 (0, "ok", True), (step, res))
                self.assert_each_line(sold=(0, 0, 0))

    def test_confirm_stopped_after_its_decision_is_finished_by_reap(self):
        for step in self.AFTER_DECIDE:
            with self.subTest(step=step):
                self.r("FLUSHALL")
                self.stock_up()
                self.sc("hold", "h", *self.lines(*self.QTY))
                self.stopped(step, "confirm", "h")
                self.assertEqual(self.sc("reap").rc, 0)
                self.assert_each_line(sold=self.QTY)

    def test_a_late_prepare_after_reap_aborted_the_attempt_holds_nothing(self):
        # A process stopped after its first group; reap aborts the attempt past its deadline.
        self.stopped("prepare:1", "order", "o", *self.lines(*self.QTY),
                     STOCKCTL_TEST_PREPARE_MS="1000")
        self.wait_past_record("o", "deadline")
        self.sc("reap")
        self.assert_each_line(sold=(0, 0, 0))
        # The paused process wakes up and sends its next group's prepare (hold-4002.lua, as
        # stockctl sends it): the group of the last slot, never held, is refused.
        sku = max(self.skus, key=lambda s: keyslot("stock:{%s}" % s))
        gid = "o#%d#1" % keyslot("stock:{%s}" % sku)
        record = [k for p in self.r.primaries() for k in self.r._conn(p)("KEYS", "stockctl:cart-group:*")
                  if k.endswith(":" + gid)]
        self.assertEqual(len(record), 1)
        body = lua_script("hold-4002.lua")
        index = record[0].split("}")[0].replace("cart-group", "cart-groups") + "}"
        stock = "stock:{%s}" % sku
        with self.assertRaisesRegex(Exception, "STOCKCTL_CONFLICT"):
            self.r("EVAL", body, 5, record[0], index, stock, stock + ":holds", stock + ":held",
                   "order", gid, "600000", "86400", "0", "", "", "", "3", sku,
                   str(self.QTY[self.skus.index(sku)]), "")
        self.assert_each_line(sold=(0, 0, 0))


@unittest.skipUnless(CLUSTER, "the protocol runs on a cluster only")
class Bench(ServerTest):
    def test_order_bench_places_carts_spanning_each_count_of_slot_groups(self):
        for groups in (1, 2, 3):
            res = self.sc("bench", "--mode", "order", "--slot-groups", str(groups), "--items", "30",
                          "-c", "4", "-n", "60")
            self.assertEqual(res.rc, 0, res)
            rep = res.one
            self.assertEqual((rep["slot_groups"], rep["ok"], rep["errors"], rep["stock_taken"]),
                             (groups, 60, 0, 180))
            self.assertTrue(rep["correct"])
            self.assertGreater(rep["server_us_per_cart"], 0)
            self.assertLessEqual(rep["latency_us"]["p50"], rep["latency_us"]["p99"])
            self.assertEqual(self.r("DBSIZE"), 0, "its keys and records are removed")

    def test_order_bench_counts_the_scripts_time_once(self):
        """server_us_per_cart sums what the client sends (the scripts, EXPIRE): the commands a
        script runs are in INFO commandstats too, but their time is in the script's already."""
        sent = {"cmdstat_" + c for c in ("fcall", "evalsha", "expire")}
        for port in self.r.primaries():
            self.r._conn(port)("CONFIG", "RESETSTAT")
        res = self.sc("bench", "--mode", "order", "--slot-groups", "2", "--items", "30",
                      "-c", "2", "-n", "100")
        self.assertEqual(res.rc, 0, res)
        usec = inner = 0
        for port in self.r.primaries():
            for line in self.r._conn(port)("INFO", "commandstats").splitlines():
                if not line.startswith("cmdstat_"):
                    continue
                n = int(line.split("usec=")[1].split(",")[0])
                if line.split(":")[0] in sent:
                    usec += n
                elif line.split(":")[0] in ("cmdstat_get", "cmdstat_decrby", "cmdstat_set"):
                    inner += n
        self.assertGreater(inner, 0)
        # The bench's window is part of the whole run: never more than the whole run's scripts.
        self.assertLessEqual(res.one["server_us_per_cart"] * 100, usec + 0.5)

    def test_order_bench_sells_each_unit_once_when_stock_runs_out(self):
        res = self.sc("bench", "--mode", "order", "--slot-groups", "1", "--items", "9", "--stock", "2",
                      "-c", "3", "-n", "20")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual((res.one["ok"], res.one["insufficient"], res.one["stock_taken"]), (6, 14, 18))
        self.assertEqual(self.r("DBSIZE"), 0)


@unittest.skipUnless(CLUSTER, "the protocol runs on a cluster only")
class Racing(ServerTest):
    """16 processes placing overlapping 3-5 line carts over a few hot items (duplicates inside
    carts), with holds confirmed, released or left to expire and orders, racing on the cluster
    with reap running all along."""

    ITEMS = ["hot%d" % i for i in range(6)]
    INITIAL = 60
    WORKERS = 16
    CARTS = 6

    def test_racing_carts_never_oversell_never_half_apply_and_always_add_up(self):
        for sku in self.ITEMS:
            self.sc("init", sku, str(self.INITIAL))
        sold = {sku: 0 for sku in self.ITEMS}
        lock = threading.Lock()
        expiries = []
        errors = []
        stop = threading.Event()

        def watch():
            # Every moment: never negative, never more out of stock than there was.
            while not stop.is_set():
                for sku in self.ITEMS:
                    key = "stock:{%s}" % sku
                    stock, held = self.r("EVAL", BOTH, 2, key, key + ":held")
                    stock, held = int(stock), int(held or 0)
                    if stock < 0 or stock + held > self.INITIAL:
                        errors.append((sku, stock, held))

        def worker(w):
            rnd = random.Random(w)
            for n in range(self.CARTS):
                cart = {}
                words = []
                for _ in range(rnd.randint(3, 5)):
                    sku = rnd.choice(self.ITEMS)
                    qty = rnd.randint(1, 4)
                    cart[sku] = cart.get(sku, 0) + qty
                    words.append("%s=%d" % (sku, qty))
                id_ = "w%d-%d" % (w, n)
                kind = rnd.choice(["order", "hold-confirm", "hold-release", "hold-expire"])
                expire = ("--expire", "1") if kind == "hold-expire" else ()
                res = self.sc("order" if kind == "order" else "hold", id_, *words, *expire)
                if res.rc not in (0, 3):
                    errors.append(res)
                    continue
                if res.one["status"] != "ok":
                    continue
                if kind == "hold-expire":
                    with lock:
                        expiries.append(res.one["expires_at_ms"])
                    continue
                if kind == "hold-confirm":
                    if self.sc("confirm", id_).rc != 0:
                        errors.append(("confirm", id_))
                        continue
                elif kind == "hold-release":
                    if self.sc("release", id_).rc != 0:
                        errors.append(("release", id_))
                    continue
                with lock:
                    for sku, qty in cart.items():
                        sold[sku] += qty

        def reaper():
            while not stop.is_set():
                res = self.sc("reap")
                if res.rc != 0:
                    errors.append(res)

        watcher = threading.Thread(target=watch)
        watcher.start()
        reaping = threading.Thread(target=reaper)
        reaping.start()
        threads = [threading.Thread(target=worker, args=(w,)) for w in range(self.WORKERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        watcher.join()
        reaping.join()
        self.assertEqual(errors, [])
        # The holds left to expire come back through reap, and only their units.
        key = "stock:{%s}" % self.ITEMS[0]
        while expiries and server_ms(self.r, key) < max(expiries):
            time.sleep(0.05)
        self.assertEqual(self.sc("reap").rc, 0)
        for sku in self.ITEMS:
            stock = int(self.r("GET", "stock:{%s}" % sku))
            held = int(self.r("HGET", "stock:{%s}:held" % sku, "") or 0)
            self.assertEqual((held, stock + sold[sku]), (0, self.INITIAL), sku)


@unittest.skipUnless(TARGET == "cluster", "needs STOCKCTL_TARGET=cluster")
class Failover(unittest.TestCase):
    """A primary SIGKILLed and failed over while orders with ids run: re-running every order
    converges, each applied once."""

    def test_kill_a_primary_while_orders_run_then_re_run_every_order(self):
        cluster = RedisCluster()
        tmp = cluster.nodes[0].dir
        try:
            r = cluster.client()
            skus = skus_in_distinct_slots(9, prefix="f")
            initial = 100000
            for sku in skus:
                r("SET", "stock:{%s}" % sku, str(initial))
            rnd = random.Random(7)
            orders = []
            for n in range(200):
                lines = {}
                for sku in rnd.sample(skus, 3):
                    lines[sku] = rnd.randint(1, 3)
                orders.append(("order-%d" % n, lines))
            path = os.path.join(tmp, "orders.csv")
            with open(path, "w") as f:
                f.write("id,sku,qty\n")
                for id_, lines in orders:
                    f.writelines("%s,%s,%d\n" % (id_, sku, qty) for sku, qty in lines.items())
            victim = cluster.primaries()[r.node_port("stock:{%s}" % skus[0])]
            url = cluster.url if cluster.nodes[0] is not victim else cluster.nodes[1].url
            target = ("--url", url, "--cluster", "--retry-timeout", "30000")
            out1 = os.path.join(tmp, "run1.jsonl")
            proc = spawn_to_file(out1, "order", "--file", path, *target, "--wait-replicas", "1")
            deadline = time.monotonic() + 120
            while calls_on(victim, "fcall") < 150:
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.01)  # polling the node's own call count, bounded by the deadline
            self.assertIsNone(proc.poll(), "the orders still run when the primary dies")
            victim.kill(signal.SIGKILL)
            _, err = proc.communicate(timeout=600)
            self.assertIn(proc.returncode, (0, 1), err[-2000:])

            # Re-running every order (the survivors have no replica left: no --wait-replicas).
            out2 = os.path.join(tmp, "run2.jsonl")
            proc = spawn_to_file(out2, "order", "--file", path, *target)
            _, err = proc.communicate(timeout=600)
            self.assertEqual(proc.returncode, 0, err[-2000:])
            with open(out2) as f:
                second = [json.loads(l) for l in f if l.strip()]
            self.assertEqual([o["id"] for o in second], [id_ for id_, _ in orders])
            self.assertEqual({o["status"] for o in second}, {"ok"})
            self.assertEqual(run("reap", *target).rc, 0)
            r.refresh()
            for sku in skus:
                want = initial - sum(lines.get(sku, 0) for _, lines in orders)
                self.assertEqual((int(r("GET", "stock:{%s}" % sku)),
                                  int(r("HGET", "stock:{%s}:held" % sku, "") or 0)),
                                 (want, 0), sku)
            r.close()
        finally:
            cluster.stop()


if __name__ == "__main__":
    unittest.main()
