"""Holds and orders on a real 3+3 Redis Cluster, whose lines live in several slots: the protocol of
docs/holds.md (a record in the id's slot decides, each slot group is held under its own id and
finished to the decision). Every crash point is tested by stopping the process there
(STOCKCTL_TEST_STOP_AT, test-only) and then re-running the same command, or running reap."""

import json
import os
import random
import signal
import threading
import time
import unittest

from harness import (TARGET, RedisCluster, ServerTest, calls_on, clean_env, keyslot, lua_script,
                     run, spawn_to_file)

CLUSTER = TARGET in ("cluster", "tls-cluster")
# An item's stock and held units read at one moment (one script on the item's node).
BOTH = "return {redis.call('GET', KEYS[1]), redis.call('HGET', KEYS[2], '')}"


def server_ms(r, key):
    """The clock of the node that holds `key` (the record's node decides expiry)."""
    port = r.node_port(key)
    sec, usec = r._conn(port)("TIME")
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


@unittest.skipUnless(CLUSTER, "the protocol runs on a cluster only")
class ClusterHoldsTest(ServerTest):
    INITIAL = 10

    def setUp(self):
        super().setUp()
        self.skus = skus_in_distinct_slots(3)
        for sku in self.skus:
            self.assertEqual(self.sc("init", sku, str(self.INITIAL)).rc, 0)

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
        self.assertEqual([l["status"] for l in res.one["lines"]], ["ok", "insufficient", "ok"])
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

    def test_the_same_id_with_other_lines_or_kind_is_a_conflict(self):
        self.sc("order", "o", *self.lines(1, 1, 1))
        for args in (("order", "o", *self.lines(1, 1, 2)), ("hold", "o", *self.lines(1, 1, 1))):
            res = self.sc(*args)
            self.assertEqual((res.rc, res.one["status"]), (2, "conflict"), res)
            self.assertIn("id 'o' was already used with other lines or for %s; nothing changed"
                          % ("an order" if args[0] == "hold" else "a hold"), res.stderr)
        self.assertEqual([self.stock(s) for s in self.skus], [9, 9, 9])

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

    def test_init_sources_apply_to_every_line(self):
        fresh = skus_in_distinct_slots(2, prefix="n")
        res = self.sc("order", "o", "%s=2" % fresh[0], "%s=1" % fresh[1], "--init-value", "5")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([l["stock"] for l in res.one["lines"]], [3, 4])

    def test_orders_from_a_file(self):
        a, b, c = self.skus
        path = self.write("o.csv", "id,sku,qty\nx,%s,1\nx,%s,1\ny,%s,2\ny,%s,1\n" % (a, b, c, a))
        res = self.sc("order", "--file", path)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([o["status"] for o in res.lines], ["ok", "ok"])
        self.assertEqual([self.stock(s) for s in self.skus], [8, 9, 8])


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

    def test_a_repeat_returns_the_first_answer(self):
        first = self.sc("hold", "h", *self.lines(1, 2, 3)).one
        again = self.sc("hold", "h", *self.lines(1, 2, 3))
        self.assertEqual(again.one, dict(first, replayed=True))
        self.assertEqual([self.held(s) for s in self.skus], [1, 2, 3])

    def test_group_units_count_as_held_for_export_and_delete(self):
        self.sc("hold", "h", *self.lines(1, 2, 3))
        exported = {l["sku"]: l["held"] for l in self.sc("export").lines if "sku" in l}
        self.assertEqual([exported[s] for s in self.skus], [1, 2, 3])
        res = self.sc("delete", self.skus[0])
        self.assertEqual((res.rc, res.one["status"]), (2, "conflict"), res)
        self.assertEqual(self.stock(self.skus[0]), 9)

    def test_unknown_ids_are_missing(self):
        res = self.sc("confirm", "nope")
        self.assertEqual((res.rc, res.one["status"]), (4, "missing"))

    def test_an_expired_hold_comes_back_with_reap_and_cannot_be_confirmed(self):
        res = self.sc("hold", "h", *self.lines(1, 2, 3), "--expire", "1")
        self.assertEqual(res.rc, 0, res)
        self.wait_past_record("h", "exp")
        res = self.sc("reap")
        self.assertEqual(res.one, {"op": "reap", "holds": 1, "units": 6})
        self.assertEqual([(self.stock(s), self.held(s)) for s in self.skus], [(10, 0)] * 3)
        self.assertEqual(self.sc("reap").one, {"op": "reap", "holds": 0, "units": 0})
        self.assertEqual(self.sc("confirm", "h").rc, 3)

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

    def test_confirm_after_expiry_gives_the_units_back_instead(self):
        self.sc("hold", "h", *self.lines(1, 2, 3), "--expire", "1")
        self.wait_past_record("h", "exp")
        res = self.sc("confirm", "h")
        self.assertEqual((res.rc, res.one["status"]), (3, "expired"), res)
        self.assertEqual([(self.stock(s), self.held(s)) for s in self.skus], [(10, 0)] * 3)


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
                for sku in self.skus:
                    self.sc("init", sku, str(self.INITIAL))
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
                for sku in self.skus:
                    self.sc("init", sku, str(self.INITIAL))
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
                for sku in self.skus:
                    self.sc("init", sku, str(self.INITIAL))
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
                for sku in self.skus:
                    self.sc("init", sku, str(self.INITIAL))
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
                    for sku in self.skus:
                        self.sc("init", sku, str(self.INITIAL))
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
                for sku in self.skus:
                    self.sc("init", sku, str(self.INITIAL))
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
                for sku in self.skus:
                    self.sc("init", sku, str(self.INITIAL))
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
