"""Split items (docs/split.md): `split SKU --buckets N` spreads an item's stock over buckets in
different slots and merges it back; a crash at any step (STOCKCTL_TEST_STOP_AT, test-only) leaves
every unit counted and the same command finishes it; get, deduct and add work on a split item,
and every other command refuses it with a message, changing nothing. On one Redis and, with
STOCKCTL_TARGET=cluster, on a 3+3 cluster."""

import hashlib
import json
import os
import random
import re
import threading
import time
import unittest

from harness import (TARGET, RespError, ServerTest, clean_env, keyslot, lua_script, run,
                     spawn_to_file)

RECORD = "stockctl:split:1 "
DRAINED = "stockctl:drained:1 "
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                       "classic_stock_service.lua")) as f:
    CLASSIC = f.read()


def app_deduct(r, stock_fn, bucket_fn, key, qty):
    """One deduction as docs/library.md tells an application to make it."""
    value = r("GET", key)
    _, state, gen, tags = value.split(" ")[:4]
    if state != "live":
        return "retry"
    buckets = ["stockctl:bucket:{%s}:%s:%s:%d" % (t, key, gen, i)
               for i, t in enumerate(tags.split(","))]
    home = random.randrange(len(buckets))

    def finish(source, x, k, dest, now):
        """Steps 2 to 4 of "Moving units": receive by the deadline, delete the record, then let
        the receipt expire. (The WAITs between the steps guard against a failover; this test
        has none, and leaves them out.)"""
        received = r("FCALL", bucket_fn, "3", dest, dest + ":moves", dest + ":in:" + x,
                     "receive", x, k, str(now + 300))
        if received[0] == "ok":
            r("HDEL", source + ":moves", "out:" + x)
            r("EXPIRE", dest + ":in:" + x, "1800")
    answer = r("FCALL", stock_fn, "1", buckets[home], "deduct", str(qty))
    if isinstance(answer, int) and answer >= 0:
        return "ok"
    for _ in range(6):
        stocks = [int(r("GET", b)) for b in buckets]
        covering = [i for i, s in enumerate(stocks) if s >= qty]
        if covering:
            best = max(covering, key=lambda i: stocks[i])
            answer = r("FCALL", stock_fn, "1", buckets[best], "deduct", str(qty))
            if isinstance(answer, int) and answer >= 0:
                return "ok"
            continue
        if sum(stocks) < qty:
            # Step 6: the moves hashes before and after a scan of the buckets.
            def transfers():
                found, sent = [], []
                for b in buckets:
                    fields = r("HGETALL", b + ":moves")
                    pairs = dict(zip(fields[0::2], fields[1::2]))
                    found += [(b, f, v) for f, v in pairs.items() if f.startswith("out:")]
                    sent.append(pairs.get("sent"))
                return found, sent

            found, sent = transfers()
            for b, field, v in found:
                k, dest = v.split(" ", 1)
                x = field[4:]
                confirmed = r("FCALL", bucket_fn, "2", b, b + ":moves", "confirm", x)
                if confirmed[0] == "ok":
                    finish(b, x, k, dest, confirmed[2])
            if found or sum(int(r("GET", b)) for b in buckets) >= qty:
                continue
            if transfers() == ([], sent):
                return "insufficient"
            continue
        lacking = qty - stocks[home]
        for j in sorted(range(len(buckets)), key=lambda i: -stocks[i]):
            if j == home or lacking <= 0 or stocks[j] == 0:
                continue
            k = min(lacking, stocks[j])
            x = "app%016x" % random.getrandbits(64)
            sent = r("FCALL", bucket_fn, "3", buckets[j], buckets[j] + ":moves",
                     buckets[j] + ":sent:" + x, "send", x, str(k), buckets[home])
            if sent[0] != "ok":
                break
            finish(buckets[j], x, str(k), buckets[home], sent[2])
            lacking -= k
        answer = r("FCALL", stock_fn, "1", buckets[home], "deduct", str(qty))
        if isinstance(answer, int) and answer >= 0:
            return "ok"
    return "retry"


class SplitTest(ServerTest):
    def key(self, sku):
        return "stock:{%s}" % sku

    def all_keys(self, pattern):
        conns = [self.r._conn(p) for p in self.r.primaries()] if self.cluster else [self.r]
        found = []
        for conn in conns:
            cursor = "0"
            while True:
                cursor, batch = conn("SCAN", cursor, "MATCH", pattern, "COUNT", "1000")
                found += batch
                if cursor == "0":
                    break
        return sorted(found)

    def functions(self):
        """`stockctl library`'s line, and its functions by script name."""
        res = self.sc("library")
        self.assertEqual(res.rc, 0, res)
        line = res.one
        self.assertEqual(line["op"], "library")
        self.assertTrue(line["name"].startswith("stockctl_"))
        return line, {f["script"]: f for f in line["functions"]}

    def bucket_keys(self, sku, gen=None):
        """The bucket keys of item `sku` (of generation `gen`), in index order."""
        pattern = re.compile(r"^stockctl:bucket:\{[^}]+\}:%s:(%s):(\d+)$"
                             % (re.escape(self.key(sku)), gen or "[0-9a-f]+"))
        found = []
        for key in self.all_keys("stockctl:bucket:*"):
            m = pattern.match(key)
            if m and not key.endswith(":changes"):
                found.append((m.group(1), int(m.group(2)), key))
        return [key for _, _, key in sorted(found)]

    def in_transfer(self, keys):
        """Units sent from these buckets and not yet received (docs/split.md, "Moving units
        between buckets")."""
        units = 0
        for key in keys:
            moves = self.r("HGETALL", key + ":moves")
            for field, value in zip(moves[0::2], moves[1::2]):
                if field.startswith("out:"):
                    k, destination = value.split(" ", 1)
                    if self.r("EXISTS", destination + ":in:" + field[4:]) == 0:
                        units += int(k)
        return units

    def units(self, sku):
        """Every unit of the item, wherever the layout record says it is (docs/split.md)."""
        value = self.r("GET", self.key(sku))
        if not value.startswith(RECORD):
            return int(value)
        _, state, gen, slots, units, from_gen, from_slots = value.split(" ")
        if state == "fill":
            return int(units)
        if state == "live":
            keys = self.bucket_keys(sku, gen)
            self.assertEqual(len(keys), len(slots.split(",")))
            return sum(int(self.r("GET", k)) for k in keys) + self.in_transfer(keys)
        keys = self.bucket_keys(sku, from_gen)
        self.assertEqual(len(keys), len(from_slots.split(",")), "a bucket being drained is gone")
        total = 0
        for k in keys:
            v = self.r("GET", k)
            total += int(v.split(" ")[2]) if v.startswith(DRAINED) else int(v)
        return total + self.in_transfer(keys)

    def split(self, sku, buckets, *extra, **kw):
        return self.sc("split", sku, "--buckets", str(buckets), *extra, **kw)

    def layout_is(self, sku, buckets):
        """The item is plain (buckets 1) or live over `buckets` buckets, with no key of any other
        layout left."""
        value = self.r("GET", self.key(sku))
        if buckets == 1:
            self.assertFalse(value.startswith(RECORD), value)
            self.assertEqual(self.bucket_keys(sku), [])
            return
        words = value.split(" ")
        self.assertEqual(words[:2], ["stockctl:split:1", "live"], value)
        self.assertEqual(len(words[3].split(",")), buckets)
        self.assertEqual(len(self.bucket_keys(sku)), buckets, "keys of another layout are left")
        self.assertEqual(len(self.bucket_keys(sku, words[2])), buckets)


class SplitAndMerge(SplitTest):
    def test_split_spreads_the_units_and_get_shows_the_sum(self):
        self.assertEqual(self.sc("init", "A", "101").rc, 0)
        res = self.split("A", 4)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.one, {"op": "split", "sku": "A", "key": "stock:{A}", "status": "ok",
                                   "stock": 101, "buckets": 4})
        self.layout_is("A", 4)
        shares = [int(self.r("GET", k)) for k in self.bucket_keys("A")]
        self.assertEqual(shares, [26, 25, 25, 25])
        self.assertEqual(len({keyslot(k) for k in self.bucket_keys("A")}), 4)
        res = self.sc("get", "A")
        self.assertEqual(res.one, {"op": "get", "sku": "A", "key": "stock:{A}", "status": "ok",
                                   "stock": 101, "held": 0, "buckets": 4})

    def test_get_details_names_each_bucket_its_stock_and_primary(self):
        self.sc("init", "A", "12")
        self.split("A", 4)
        line = self.sc("get", "A", "--details").one
        self.assertEqual([b["key"] for b in line["bucket_details"]], self.bucket_keys("A"))
        self.assertEqual([b["stock"] for b in line["bucket_details"]], [3, 3, 3, 3])
        nodes = [b["node"] for b in line["bucket_details"]]
        if self.cluster:
            # Four buckets over three primaries: every primary has one, one has two.
            self.assertEqual(sorted(nodes.count(n) for n in set(nodes)), [1, 1, 2])
            for bucket in line["bucket_details"]:
                port = int(bucket["node"].rsplit(":", 1)[1])
                self.assertEqual(self.r.node_port(bucket["key"]), port)
        else:
            self.assertEqual(nodes, [None] * 4)

    def test_merge_puts_every_unit_back_in_one_key_and_logs_both(self):
        self.sc("init", "A", "101")
        self.split("A", 4)
        res = self.split("A", 1)
        self.assertEqual(res.one, {"op": "split", "sku": "A", "key": "stock:{A}", "status": "ok",
                                   "stock": 101})
        self.layout_is("A", 1)
        self.assertEqual(self.r("GET", "stock:{A}"), "101")
        changes = [e["change"] for e in self.sc("log", "A").lines]
        self.assertEqual(changes[-2:], ["split", "merge"])

    def test_splitting_again_makes_a_new_layout_and_removes_the_old(self):
        self.sc("init", "A", "100")
        self.split("A", 4)
        first = self.bucket_keys("A")
        res = self.split("A", 6)
        self.assertEqual(res.one["buckets"], 6)
        self.assertEqual(res.one["stock"], 100)
        self.layout_is("A", 6)
        self.assertFalse(set(first) & set(self.bucket_keys("A")))

    def test_the_same_split_twice_changes_nothing(self):
        self.sc("init", "A", "100")
        self.split("A", 4)
        before = self.r("GET", "stock:{A}")
        res = self.split("A", 4)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("GET", "stock:{A}"), before)

    def test_merging_an_item_that_is_not_split_changes_nothing(self):
        self.sc("init", "A", "7")
        res = self.split("A", 1)
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 7))
        self.assertEqual(self.r("GET", "stock:{A}"), "7")

    def test_a_file_of_items_with_their_bucket_counts(self):
        self.sc("init", "A", "10")
        self.sc("init", "B", "20")
        path = self.write("split.csv", "sku,buckets\nA,2\nB,5\n")
        res = self.sc("split", "--file", path)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([(l["sku"], l["buckets"], l["stock"]) for l in res.lines],
                         [("A", 2, 10), ("B", 5, 20)])
        self.layout_is("A", 2)
        self.layout_is("B", 5)

    def test_the_classic_script_fails_on_a_split_item_and_changes_nothing(self):
        self.sc("init", "A", "10")
        self.split("A", 2)
        before = self.r("GET", "stock:{A}")
        with self.assertRaises(RespError):
            self.r("EVAL", CLASSIC, "1", "stock:{A}", "1")
        self.assertEqual(self.r("GET", "stock:{A}"), before)
        self.assertEqual(self.units("A"), 10)


class BadInput(SplitTest):
    def assert_refused(self, res, rc, text):
        self.assertEqual(res.rc, rc, res)
        errors = [l for l in res.stderr.splitlines() if l.startswith("stockctl: error:")]
        self.assertEqual(len(errors), 1, res.stderr)
        self.assertIn(text, errors[0])

    def test_bucket_counts_out_of_range_or_not_numbers(self):
        self.sc("init", "A", "10")
        for bad in ("0", "65", "abc", "2.5", "-3"):
            res = self.split("A", bad)
            self.assert_refused(res, 2, "--buckets must be a whole number from 2 to 64 (1 merges "
                                        "the buckets back into one key), not '%s'" % bad)
            self.assertEqual(res.stdout, "")
        self.assertEqual(self.r("GET", "stock:{A}"), "10")
        self.assertEqual(self.bucket_keys("A"), [])

    def test_a_missing_item(self):
        res = self.split("A", 4)
        self.assertEqual(res.rc, 4, res)
        self.assertEqual(res.one["status"], "missing")
        self.assertEqual(self.all_keys("*"), [])

    def test_a_corrupt_item_is_left_as_it_is(self):
        self.r("SET", "stock:{A}", "ten")
        res = self.split("A", 4)
        self.assert_refused(res, 1, "stored value 'ten' is not a stock value; left unchanged")
        self.assertEqual(res.one["status"], "error")
        self.assertEqual(self.r("GET", "stock:{A}"), "ten")
        self.assertEqual(self.bucket_keys("A"), [])

    def test_an_unlimited_item_is_not_split(self):
        self.sc("init", "A", "unlimited")
        res = self.split("A", 4)
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "unlimited", None))
        self.assertEqual(self.r("GET", "stock:{A}"), "-1")
        self.assertEqual(self.bucket_keys("A"), [])

    def test_an_item_with_live_holds_is_refused(self):
        self.sc("init", "A", "10")
        self.assertEqual(self.sc("hold", "h1", "A=3").rc, 0)
        res = self.split("A", 4)
        self.assert_refused(res, 2, "the item has 3 units in holds that are not settled")
        self.assertEqual(res.one["status"], "conflict")
        self.assertEqual(self.r("GET", "stock:{A}"), "7")
        self.assertEqual(self.bucket_keys("A"), [])
        # Released, it splits.
        self.sc("release", "h1")
        self.assertEqual(self.split("A", 4).one["stock"], 10)

    def test_an_item_with_an_expiry_is_refused(self):
        self.sc("init", "A", "10", "--ttl", "600")
        res = self.split("A", 4)
        self.assert_refused(res, 2, "expires in")
        self.assertEqual(res.one["status"], "conflict")
        self.assertEqual(self.r("GET", "stock:{A}"), "10")

    def test_an_invalid_sku_splits_nothing(self):
        self.sc("init", "A", "10")
        res = self.sc("split", "A", "", "--buckets", "4")
        self.assertEqual(res.rc, 2, res)
        self.assertEqual(self.r("GET", "stock:{A}"), "10")

    def test_a_file_with_an_invalid_row_splits_nothing(self):
        self.sc("init", "A", "10")
        self.sc("init", "B", "10")
        path = self.write("split.csv", "sku,buckets\nA,2\nB,99\n")
        res = self.sc("split", "--file", path)
        self.assert_refused(res, 2, "split.csv:3: column 'buckets' must be a whole number")
        self.assertEqual(self.r("GET", "stock:{A}"), "10")
        # The line names file and line, as every file command's lines do.
        self.assertIn("split.csv:3: column 'buckets'", res.one["error"])
        # An item named twice: both rows are invalid, as in init's sources.
        path = self.write("twice.csv", "sku,buckets\nA,2\nB,2\nA,3\n")
        res = self.sc("split", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertEqual([(line["sku"], line["error"]) for line in res.lines],
                         [("A", "%s:2: duplicate SKU 'A' (again on line 4; every row of it is "
                                "left out)" % path),
                          ("A", "%s:4: duplicate SKU 'A' (first on line 2)" % path)])
        self.assertEqual((self.r("GET", "stock:{A}"), self.r("GET", "stock:{B}")), ("10", "10"))

    def test_a_bucket_written_by_hand_with_a_corrupt_value(self):
        self.sc("init", "A", "10")
        self.split("A", 2)
        bucket = self.bucket_keys("A")[1]
        self.r("SET", bucket, "oops")
        res = self.sc("get", "A")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"))
        self.assertIn(bucket, res.one["error"])
        before = self.r("GET", "stock:{A}")
        other = self.r("GET", self.bucket_keys("A")[0])
        res = self.split("A", 1)
        self.assert_refused(res, 1, "bucket %s is missing or does not hold a stock value; "
                                    "nothing changed" % bucket)
        self.assertEqual(res.one["status"], "error")
        self.assertEqual(self.r("GET", "stock:{A}"), before)
        self.assertEqual([self.r("GET", k) for k in self.bucket_keys("A")], [other, "oops"])
        # A deduction that meets it says so, naming the bucket, and changes nothing (four: the
        # other bucket's five units never run out, so no deduction needs the corrupt one's).
        # One the other bucket served is ok, its total unknown: never a sum without the bucket.
        for _ in range(4):
            res = self.sc("deduct", "A", "1")
            if res.rc != 0:
                self.assertEqual(res.one["status"], "error")
                self.assertIn("stored value 'oops' of %s is not a stock value" % bucket,
                              res.one["error"])
            else:
                self.assertEqual((res.one["status"], res.one["stock"]), ("ok", None), res)
                self.assertIn("the item's total is unknown: bucket %s" % bucket, res.one["note"])
        self.assertEqual(self.r("GET", bucket), "oops")
        # What reads every bucket stops at once, naming it (not after --retry-timeout, as for a
        # layout being replaced), and registers no add on the others.
        problem = "bucket %s holds 'oops', not a stock value; nothing changed" % bucket
        for args in (("deduct", "A", "1", "--request-id", "r1"), ("add", "A", "1"), ("rebalance", "A")):
            res = self.sc(*args)
            self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
            self.assertIn(problem, res.one["error"])
        self.assertEqual([self.r("ZCARD", k + ":adds") for k in self.bucket_keys("A")], [0, 0])
        self.r("DEL", bucket)
        res = self.sc("add", "A", "1")
        self.assertIn("bucket %s is missing" % bucket, res.one["error"])


class Crashes(SplitTest):
    """SIGKILL right after each step; every unit is counted in the state left, and the same
    command finishes the split or merge."""

    def crash_then_finish(self, before, after, steps):
        for step in steps:
            with self.subTest(step=step):
                self.r("FLUSHALL")
                self.assertEqual(self.sc("init", "A", "101").rc, 0)
                if before > 1:
                    self.assertEqual(self.split("A", before).rc, 0)
                res = run("split", "A", "--buckets", str(after), *self.target_args(),
                          env=clean_env(STOCKCTL_TEST_STOP_AT=step))
                self.assertEqual(res.rc, -9, (step, res))
                self.assertEqual(self.units("A"), 101)
                res = self.split("A", after)
                self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 101),
                                 res)
                self.layout_is("A", after)
                self.assertEqual(self.units("A"), 101)

    def test_split(self):
        self.crash_then_finish(1, 4, ["split:begin"] + ["split:fill:%d" % i for i in range(4)]
                               + ["split:commit"])

    def test_split_again(self):
        self.crash_then_finish(3, 5, ["split:begin"] + ["split:drain:%d" % i for i in range(3)]
                               + ["split:drained"] + ["split:delete:%d" % i for i in range(3)]
                               + ["split:fill:%d" % i for i in range(5)] + ["split:commit"])

    def test_merge(self):
        self.crash_then_finish(4, 1, ["split:begin"] + ["split:drain:%d" % i for i in range(4)]
                               + ["split:drained"] + ["split:delete:%d" % i for i in range(4)]
                               + ["split:commit"])

    def test_export_leaves_an_item_cut_off_mid_split_out_as_splitting(self):
        # Its units are in transfer, in no bucket: skipped and said so, not called corrupt;
        # the export is not a whole snapshot, so the last good file stays.
        self.assertEqual(self.sc("init", "A", "30").rc, 0)
        self.assertEqual(self.sc("init", "B", "5").rc, 0)
        self.assertEqual(self.split("A", 3).rc, 0)
        res = run("split", "A", "--buckets", "2", *self.target_args(),
                  env=clean_env(STOCKCTL_TEST_STOP_AT="split:drain:1"))
        self.assertEqual(res.rc, -9, res)
        path = os.path.join(self.tmp, "snapshot.ndjson")
        res = self.sc("export", "--format", "ndjson", "--output", path)
        self.assertEqual((res.rc, res.one["items"], res.one["skipped"], res.one["written"]),
                         (1, 1, {"corrupt": 0, "splitting": 1}, False), res)
        self.assertIn("item 'A' is being split or merged (state drain): not exported; the same "
                      "stockctl split command, run again, finishes it", res.stderr)
        self.assertIn("1 item not exported (1 being split or merged)", res.stderr)
        self.assertEqual(self.split("A", 2).rc, 0)
        res = self.sc("export", "--format", "ndjson", "--output", path)
        self.assertEqual((res.rc, res.one["items"], res.one["written"]), (0, 2, True), res)

    def test_the_buckets_logs_are_kept_across_a_merge_or_a_new_split_once_each(self):
        # The old buckets' change logs join the item's own before the buckets are deleted; a
        # run cut off between that copy and the deletion copies again, adding nothing twice.
        for step in ("split:keep-log:0", "split:keep-log:1", None):
            with self.subTest(step=step):
                self.r("FLUSHALL")
                self.sc("init", "A", "100")
                self.split("A", 2)
                for qty in ("1", "2", "3"):
                    self.assertEqual(self.sc("deduct", "A", qty).one["status"], "ok")
                self.assertEqual(self.sc("add", "A", "4").one["status"], "ok")
                # Two buckets can log the same change in the same millisecond (equal stocks, no
                # request id): both entries are kept.
                first, second = self.bucket_keys("A")
                if self.r("LLEN", first + ":changes") == 0:
                    first, second = second, first
                twin = self.r("LINDEX", first + ":changes", 0)
                self.r("RPUSH", second + ":changes", twin)
                twin_change = twin.split("\x1f")[1:3]
                if step:
                    res = run("split", "A", "--buckets", "3", *self.target_args(),
                              env=clean_env(STOCKCTL_TEST_STOP_AT=step))
                    self.assertEqual(res.rc, -9, res)
                self.assertEqual(self.split("A", 3).rc, 0)
                self.assertEqual(self.sc("deduct", "A", "5").one["status"], "ok")
                self.assertEqual(self.split("A", 1).rc, 0)
                res = self.sc("log", "A")
                changes = [(e["change"], e["qty"]) for e in res.lines]
                want = [("init", None), ("split", None), ("deduct", 1), ("deduct", 2),
                        ("deduct", 3), ("add", 4), ("split", None), ("deduct", 5),
                        ("merge", None)]
                twin_at = want.index((twin_change[0], int(twin_change[1])))
                want.insert(twin_at, want[twin_at])
                self.assertEqual(changes, want, changes)
                self.assertEqual(len({e["entry"] for e in res.lines}), len(res.lines))
                self.assertEqual(self.sc("log", "A", "--limit", "2").lines, res.lines[-2:])

    def test_a_transfer_cut_off_is_finished_by_the_next_deduction_or_a_merge(self):
        for step, finish in (("split:send", ("deduct", "A", "100")),
                             ("split:receive", ("deduct", "A", "100")),
                             ("split:send", ("split", "A", "--buckets", "1")),
                             ("split:receive", ("split", "A", "--buckets", "1"))):
            with self.subTest(step=step, finish=finish[0]):
                self.r("FLUSHALL")
                self.sc("init", "A", "100")
                self.split("A", 4)
                res = run("deduct", "A", "30", *self.target_args(),
                          env=clean_env(STOCKCTL_TEST_STOP_AT=step))
                self.assertEqual(res.rc, -9, res)
                if step == "split:send":  # units left one bucket and are recorded, not arrived
                    self.assertGreater(sum(self.in_transfer([k]) for k in self.bucket_keys("A")), 0)
                self.assertEqual(self.units("A"), 100)
                # Readers count the units on their way until the transfer is finished: an
                # export taken now is a whole snapshot (before, it left them out, exit 0).
                self.assertEqual(self.sc("get", "A").one["stock"], 100)
                self.assertEqual(json.loads(self.sc("export").stdout)["stock"], 100)
                if step == "split:send":  # doctor names it and what finishes it
                    warned = [f for f in self.sc("doctor", "--scan").lines
                              if f.get("check") == "split" and f["status"] == "warn"]
                    self.assertEqual([f["hint"] for f in warned],
                                     ["stockctl rebalance A finishes them"], warned)
                    self.assertIn("between its buckets recorded and not finished",
                                  warned[0]["detail"])
                res = self.sc(*finish)
                self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
                self.assertEqual(res.one["stock"], 0 if finish[0] == "deduct" else 100)
                self.assertEqual(self.units("A"), 0 if finish[0] == "deduct" else 100)

    @unittest.skipIf(TARGET in ("cluster", "tls-cluster"),
                     "the wait is seen in one server's command counts")
    def test_a_file_run_over_a_merge_that_finishes_meanwhile_answers_every_row(self):
        # The file's first window meets the item mid-merge and waits while later windows are
        # in flight; the merge finishes, and the waiting rows go the plain way. That way took
        # the oldest window in flight instead of its own: a crash (or bad_alloc) after rows
        # were applied that no line reported.
        self.sc("init", "A", "100000")
        self.split("A", 2)
        res = run("split", "A", "--buckets", "1", *self.target_args(),
                  env=clean_env(STOCKCTL_TEST_STOP_AT="split:drain:0"))
        self.assertEqual(res.rc, -9, res)
        path = self.write("rows.csv", "sku,qty\n" + "A,1\n" * 3000)
        out = os.path.join(self.tmp, "out.ndjson")

        def gets():
            return int(re.search(r"cmdstat_get:calls=(\d+)",
                                 self.r("INFO", "commandstats")).group(1))

        before = gets()
        proc = spawn_to_file(out, "deduct", "--file", path, "--retry-timeout", "20000",
                             *self.target_args())
        try:
            deadline = time.monotonic() + 30
            while gets() < before + 5:  # it reads the layout again and again: it is waiting
                self.assertIsNone(proc.poll(), "the run ended before it waited")
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.02)
            self.assertEqual(self.split("A", 1).rc, 0)
            stderr = proc.communicate(timeout=120)[1]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        with open(out) as f:
            lines = [json.loads(line) for line in f]
        self.assertEqual((proc.returncode, len(lines)), (0, 3000), stderr)
        self.assertEqual({l["status"] for l in lines}, {"ok"})
        self.assertEqual(self.r("GET", "stock:{A}"), str(100000 - 3000))

    def test_a_file_run_waits_once_for_an_item_whose_merge_was_cut_off(self):
        # Each row used to wait --retry-timeout for it: a file of 1,500 rows on such an item
        # took over four hours. Rows after the first that waited in vain are not applied at
        # once; an item whose state changes meanwhile is waited for again.
        self.sc("init", "A", "100")
        self.sc("init", "B", "100")
        self.split("A", 2)
        res = run("split", "A", "--buckets", "1", *self.target_args(),
                  env=clean_env(STOCKCTL_TEST_STOP_AT="split:drain:0"))
        self.assertEqual(res.rc, -9, res)
        path = self.write("stuck.csv", "sku,qty\n" + "A,1\nB,1\n" * 20)
        res = self.sc("deduct", "--file", path, "--retry-timeout", "300")
        self.assertEqual(res.rc, 1, res)
        a_rows = [l for l in res.lines if l["sku"] == "A"]
        self.assertEqual(len(a_rows), 20)
        for n, line in enumerate(a_rows):
            self.assertIn("not applied: a split or merge of the item is in progress (drain)",
                          line["error"])
            self.assertEqual("an earlier row of this run waited" in line["error"], n > 0, line)
        self.assertEqual({l["status"] for l in res.lines if l["sku"] == "B"}, {"ok"})
        self.assertEqual((self.split("A", 1).one["stock"], self.r("GET", "stock:{B}")),
                         (100, "80"))

    def test_a_deduction_during_a_merge_waits_then_is_not_applied(self):
        self.sc("init", "A", "10")
        self.split("A", 2)
        run("split", "A", "--buckets", "1", *self.target_args(),
            env=clean_env(STOCKCTL_TEST_STOP_AT="split:drain:0"))
        res = self.sc("deduct", "A", "1", "--retry-timeout", "200")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("not applied: a split or merge of the item is in progress (drain)",
                      res.one["error"])
        self.assertEqual(self.units("A"), 10)
        self.assertEqual(self.split("A", 1).one["stock"], 10)


class DeductAndAdd(SplitTest):
    def test_deduct_and_add_on_a_split_item(self):
        self.sc("init", "A", "40")
        self.split("A", 4)
        res = self.sc("deduct", "A", "3")
        self.assertEqual(res.one, {"op": "deduct", "sku": "A", "key": "stock:{A}", "qty": 3,
                                   "status": "ok", "stock": 37, "buckets": 4})
        res = self.sc("add", "A", "5")
        self.assertEqual((res.one["status"], res.one["stock"]), ("ok", 42))
        self.assertEqual(self.units("A"), 42)

    def test_an_add_past_the_largest_stock_is_refused_on_the_total(self):
        # Each bucket stays below 2^53-1, but the item's total must too: a merge could not
        # hold it (it was left stuck mid-merge), and JSON readers would round it.
        self.sc("init", "M", "9007199254740991")
        self.split("M", 2)
        for args in (("add", "M", "1"), ("add", "M", "1", "--request-id", "a1")):
            res = self.sc(*args)
            self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (1, "error", None), res)
            self.assertIn("adding 1 to stock:{M} (a total of 9007199254740991 over 2 buckets) "
                          "would pass 9007199254740991; nothing changed", res.one["error"])
        self.assertEqual(self.units("M"), 9007199254740991)
        self.assertEqual(self.sc("deduct", "M", "5").rc, 0)
        self.assertEqual(self.sc("add", "M", "5", "--request-id", "a2").one["stock"],
                         9007199254740991)
        # Its retry is a repeat, answered as recorded, not an add past the limit.
        res = self.sc("add", "M", "5", "--request-id", "a2")
        self.assertEqual((res.rc, res.one["status"], res.one.get("replayed"), res.one["stock"]),
                         (0, "ok", True, 9007199254740991), res)
        res = self.sc("split", "M", "--buckets", "1")
        self.assertEqual((res.rc, res.one["stock"]), (0, 9007199254740991), res)

    def test_every_bucket_sells_its_last_unit_and_then_the_item_is_sold_out(self):
        self.sc("init", "A", "9")
        self.split("A", 4)
        for left in range(8, -1, -1):
            res = self.sc("deduct", "A", "1")
            self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", left), res)
        res = self.sc("deduct", "A", "1")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (3, "insufficient", 0))
        self.assertEqual([self.r("GET", k) for k in self.bucket_keys("A")], ["0"] * 4)
        # Stock added to a sold-out item sells at once.
        self.assertEqual(self.sc("add", "A", "2").one["stock"], 2)
        self.assertEqual(self.sc("deduct", "A", "2").one["status"], "ok")

    def test_an_empty_bucket_never_answers_sold_out_while_another_has_stock(self):
        # Three of four buckets empty: whichever bucket a deduction starts at, it finds the one
        # with stock (a deduction that tried its own bucket only would be refused 3 times in 4:
        # eight deductions pass by chance once in 65,536 runs).
        for _ in range(4):
            self.r("FLUSHALL")
            self.sc("init", "A", "8")
            self.split("A", 4)
            keys = self.bucket_keys("A")
            for key in keys[:3]:
                self.r("SET", key, "0")
            for left in (1, 0):
                res = self.sc("deduct", "A", "1")
                self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", left))
            res = self.sc("deduct", "A", "1")
            self.assertEqual(res.one["status"], "insufficient")

    def test_a_deduction_no_single_bucket_covers_takes_from_several(self):
        self.sc("init", "A", "100")
        self.split("A", 4)
        res = self.sc("deduct", "A", "30", "--actor", "alice", "--reason", "order 1")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 70), res)
        res = self.sc("deduct", "A", "30", "--request-id", "r30")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 40), res)
        # The units each deduction moved into its bucket first are in the item's log: one
        # "rebalance" entry each (25 in every bucket: 5 more for the first; for the second, 30
        # less what its bucket held then: 25, 20 or 0), with the deduction's actor, reason and
        # request id.
        moves = [e for e in self.sc("log", "A").lines if e["change"] == "rebalance"]
        self.assertEqual([(e["qty"], e["before"], e["after"], e["request_id"], e["actor"], e["reason"])
                          for e in moves[:1]], [(5, None, None, None, "alice", "order 1")], moves)
        self.assertEqual(len(moves), 2, moves)
        self.assertIn(moves[1]["qty"], (5, 10, 30))
        self.assertEqual(moves[1]["request_id"], "r30")
        again = self.sc("deduct", "A", "30", "--request-id", "r30")
        self.assertEqual((again.rc, again.one["status"], again.one.get("replayed")),
                         (0, "ok", True))
        self.assertEqual(self.units("A"), 40)
        # Every unit sells, whatever bucket each one was in.
        res = self.sc("deduct", "A", "40")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 0), res)
        self.assertEqual(self.sc("deduct", "A", "1").one["status"], "insufficient")

    def test_request_ids_apply_once(self):
        self.sc("init", "A", "40")
        self.split("A", 4)
        first = self.sc("deduct", "A", "4", "--request-id", "r1")
        self.assertEqual((first.one["status"], first.one["stock"]), ("ok", 36))
        again = self.sc("deduct", "A", "4", "--request-id", "r1")
        self.assertEqual((again.rc, again.one["status"], again.one.get("replayed")),
                         (0, "ok", True))
        self.assertEqual(self.units("A"), 36)
        other = self.sc("deduct", "A", "5", "--request-id", "r1")
        self.assertEqual((other.rc, other.one["status"]), (2, "conflict"))
        self.sc("add", "A", "3", "--request-id", "a1")
        self.assertTrue(self.sc("add", "A", "3", "--request-id", "a1").one["replayed"])
        self.assertEqual(self.units("A"), 39)
        # A repeat's stock is the item's total at the repeat (the ledger keeps a bucket's stock).
        for _ in range(3):
            self.sc("deduct", "A", "2")
        again = self.sc("deduct", "A", "4", "--request-id", "r1")
        self.assertEqual((again.one["replayed"], again.one["stock"]), (True, 33), again)

    def test_request_ids_are_remembered_across_a_split_a_resplit_and_a_merge(self):
        # A client retrying with its id after the operator split the item must get its first
        # answer, not a second deduction: each split or merge carries the ids over.
        self.sc("init", "A", "100")
        ids = {"before": 3, "while-4": 5, "while-7": 2}
        self.assertEqual(self.sc("deduct", "A", "3", "--request-id", "before").one["status"], "ok")
        self.split("A", 4)
        self.assertEqual(self.sc("deduct", "A", "5", "--request-id", "while-4").one["status"], "ok")
        self.split("A", 7)
        self.assertEqual(self.sc("deduct", "A", "2", "--request-id", "while-7").one["status"], "ok")
        self.sc("add", "A", "4", "--request-id", "added")
        for buckets in (7, 3, 1):
            self.split("A", buckets)
            for rid, qty in ids.items():
                res = self.sc("deduct", "A", str(qty), "--request-id", rid)
                # The stock a repeat reports is the item's at the repeat, merged or not, never
                # the stock of the bucket that first recorded the id; or, on the plain item
                # that first answered it, that first answer.
                stock = 97 if (rid, buckets) == ("before", 1) else 100 - 10 + 4
                self.assertEqual((res.one["status"], res.one.get("replayed"), res.one["stock"]),
                                 ("ok", True, stock), (buckets, rid, res))
            added = self.sc("add", "A", "4", "--request-id", "added").one
            self.assertEqual((added["replayed"], added["stock"]), (True, 100 - 10 + 4), added)
            self.assertEqual(self.units("A"), 100 - 10 + 4, buckets)
        # The copies expire as the ledgers they came from would have.
        ledgers = self.all_keys("stock:{A}:ids:*")
        self.assertTrue(ledgers)
        for ledger in ledgers:
            self.assertGreater(self.r("PTTL", ledger), 0, ledger)

    def test_a_split_cut_off_while_it_carries_the_ids_carries_them_when_run_again(self):
        self.sc("init", "A", "50")
        self.sc("deduct", "A", "5", "--request-id", "r1")
        cut = self.split("A", 4, env=clean_env(STOCKCTL_TEST_STOP_AT="split:ledgers"))
        self.assertEqual(cut.rc, -9, cut)
        self.assertEqual(self.split("A", 4).one["status"], "ok")
        res = self.sc("deduct", "A", "5", "--request-id", "r1")
        self.assertEqual((res.one["status"], res.one.get("replayed")), ("ok", True), res)
        self.assertEqual(self.units("A"), 45)

    def test_a_request_id_is_answered_insufficient_only_when_the_total_is_short(self):
        self.sc("init", "A", "4")
        self.split("A", 2)
        res = self.sc("deduct", "A", "5", "--request-id", "big")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (3, "insufficient", 4))
        self.assertEqual(self.units("A"), 4)


class Rebalance(SplitTest):
    def uneven(self, sku, stocks):
        """An item split over len(stocks) buckets holding `stocks` (as buyers might leave them)."""
        self.sc("init", sku, str(sum(stocks)))
        self.split(sku, len(stocks))
        for key, stock in zip(self.bucket_keys(sku), stocks):
            self.r("SET", key, str(stock))

    def bucket_stocks(self, sku):
        return [int(self.r("GET", k)) for k in self.bucket_keys(sku)]

    def test_the_buckets_end_even_and_the_total_is_kept(self):
        self.uneven("A", [40, 0, 0, 3])
        res = self.sc("rebalance", "A")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.one, {"op": "rebalance", "sku": "A", "key": "stock:{A}",
                                   "status": "ok", "stock": 43, "buckets": 4, "moved": 29})
        self.assertEqual(sorted(self.bucket_stocks("A")), [10, 11, 11, 11])
        self.assertEqual(self.units("A"), 43)
        # Even already: nothing moves.
        res = self.sc("rebalance", "A")
        self.assertEqual((res.rc, res.one["moved"], res.one["stock"]), (0, 0, 43), res)
        # The moves are in the item's change log, one entry for the run that moved units.
        entries = [(e["change"], e["qty"], e["before"], e["after"])
                   for e in self.sc("log", "A").lines if e["change"] == "rebalance"]
        self.assertEqual(entries, [("rebalance", 29, 43, 43)])
        self.assertEqual(self.sc("rebalance", "A", "--no-log").rc, 0)

    def test_items_that_are_not_split(self):
        self.sc("init", "P", "7")
        self.sc("init", "U", "unlimited")
        self.r("SET", "stock:{C}", "ten")
        res = self.sc("rebalance", "P", "U", "M", "C")
        self.assertEqual(res.rc, 1, res)  # the worst: an error
        self.assertEqual([(o["status"], o["stock"], o.get("moved")) for o in res.lines],
                         [("ok", 7, 0), ("unlimited", None, 0), ("missing", None, None),
                          ("error", None, None)])
        self.assertIn("stored value 'ten' of stock:{C} is not a stock value", res.lines[3]["error"])
        self.assertEqual([self.r("GET", k) for k in ("stock:{P}", "stock:{U}", "stock:{C}")],
                         ["7", "-1", "ten"])
        self.assertEqual(self.sc("rebalance", "M").rc, 4)

    def test_an_invalid_sku_moves_nothing(self):
        self.uneven("A", [8, 0])
        res = self.sc("rebalance", "A", "")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("nothing was moved", res.stderr)
        self.assertEqual(self.bucket_stocks("A"), [8, 0])

    def test_a_rebalance_cut_off_at_each_step_is_finished_by_the_next(self):
        for step in ("split:send", "split:receive"):
            with self.subTest(step=step):
                self.r("FLUSHALL")
                self.uneven("A", [30, 0, 0])
                res = run("rebalance", "A", *self.target_args(),
                          env=clean_env(STOCKCTL_TEST_STOP_AT=step))
                self.assertEqual(res.rc, -9, res)
                if step == "split:send":  # units left the bucket and are recorded, not arrived
                    self.assertEqual(self.in_transfer(self.bucket_keys("A")), 10)
                self.assertEqual(self.units("A"), 30)
                res = self.sc("rebalance", "A")
                self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 30), res)
                self.assertEqual(self.bucket_stocks("A"), [10, 10, 10])
                self.assertEqual(self.in_transfer(self.bucket_keys("A")), 0)

    def test_a_rebalance_during_a_merge_waits_then_is_not_applied(self):
        self.uneven("A", [10, 0])
        run("split", "A", "--buckets", "1", *self.target_args(),
            env=clean_env(STOCKCTL_TEST_STOP_AT="split:drain:0"))
        res = self.sc("rebalance", "A", "--retry-timeout", "200")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("not applied: a split or merge of the item is in progress (drain)",
                      res.one["error"])
        self.assertEqual(self.units("A"), 10)

    def test_sales_go_on_while_it_rebalances(self):
        # Four buyers drain a 4-bucket item whose units all sit in one bucket, while rebalance
        # runs again and again: every unit is sold once, none is created or lost.
        self.uneven("A", [400, 0, 0, 0])
        sold, refused, rebalanced = [], [], []
        stop = threading.Event()

        def buyer():
            while True:
                res = self.sc("deduct", "A", "1")
                if res.one["status"] != "ok":
                    refused.append((res.one["status"], res.one["stock"]))
                    return
                sold.append(1)

        def rebalancer():
            while not stop.is_set():
                res = self.sc("rebalance", "A")
                rebalanced.append((res.rc, res.one["status"], res.one.get("moved")))

        buyers = [threading.Thread(target=buyer) for _ in range(4)]
        mover = threading.Thread(target=rebalancer)
        for t in buyers + [mover]:
            t.start()
        for t in buyers:
            t.join()
        stop.set()
        mover.join()
        self.assertEqual(refused, [("insufficient", 0)] * 4)
        self.assertEqual({(rc, status) for rc, status, _ in rebalanced}, {(0, "ok")}, rebalanced)
        self.assertGreater(sum(moved for _, _, moved in rebalanced), 0)
        self.assertEqual(len(sold), 400)
        self.assertEqual(self.units("A"), 0)


class Race(SplitTest):
    def nodes(self):
        return [self.r._conn(p) for p in self.r.primaries()] if self.cluster else [self.r]

    def commands_of(self, *argv):
        """Runs stockctl `argv` and counts the commands every primary ran for it, by name."""
        for conn in self.nodes():
            conn("CONFIG", "RESETSTAT")
        res = self.sc(*argv)
        counts = {}
        for conn in self.nodes():
            for line in conn("INFO", "commandstats").splitlines():
                if line.startswith("cmdstat_"):
                    name, stats = line[len("cmdstat_"):].split(":", 1)
                    calls = int(stats.split(",")[0].split("=")[1])
                    counts[name] = counts.get(name, 0) + calls
        return res, counts

    def test_a_sold_out_item_answers_from_its_hint_until_an_add(self):
        # docs/split.md, "A sold-out item stays cheap": the scan that proves the item short
        # leaves a hint in every bucket's slot for a second; a deduction whose home bucket is
        # short and finds it answers at once: no scan of the buckets or their transfers.
        self.sc("init", "A", "4")
        self.split("A", 4)
        for _ in range(4):
            self.assertEqual(self.sc("deduct", "A", "1").one["status"], "ok")
        buckets = self.bucket_keys("A")
        for attempt in range(3):
            # The hint lives a second: on a machine slow enough to let it expire before the
            # deduction below, that deduction scans (and leaves it again), and the test tries
            # again. It fails when the deduction scans with the hint there.
            res = self.sc("deduct", "A", "1")
            self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (3, "insufficient", 0))
            hints = [self.r("GET", b + ":short") for b in buckets]
            self.assertTrue(all(re.match("^0 [0-9a-f]{16}$", h) for h in hints), hints)
            measured = [self.commands_of("deduct", "A", "1"),
                        self.commands_of("deduct", "A", "2", "--request-id", "late-buyer")]
            if all("hgetall" not in counts for _, counts in measured) or attempt == 2:
                break
        for res, counts in measured:
            self.assertEqual((res.one["status"], res.one["stock"]), ("insufficient", 0), res)
            self.assertNotIn("hgetall", counts, "no scan of the transfers")
            # At most two scripts (the stock key, which holds the layout; with a request id the
            # home bucket, which records the answer), each reading its key; the layout record
            # and the hint. A scan reads every bucket twice.
            self.assertLessEqual(counts.get("fcall", 0) + counts.get("evalsha", 0), 2, counts)
            self.assertLessEqual(counts.get("get", 0), 4, counts)
        # An add replaces the hints with its mark: the item sells again at once. It ran
        # registered on every bucket, and is not any more.
        self.assertEqual(self.sc("add", "A", "3").one["status"], "ok")
        marks = [self.r("GET", b + ":short") for b in buckets]
        self.assertEqual(len(set(marks)), 1, marks)
        self.assertRegex(marks[0], "^added [0-9a-f]{16}$")
        self.assertEqual([self.r("ZCARD", b + ":adds") for b in buckets], [0] * 4)
        res = self.sc("deduct", "A", "2")
        self.assertEqual((res.one["status"], res.one["stock"]), ("ok", 1), res)
        # The id's answer was recorded when the hint gave it: a repeat replays it.
        res = self.sc("deduct", "A", "2", "--request-id", "late-buyer")
        self.assertEqual((res.one["status"], res.one.get("replayed")), ("insufficient", True), res)

    def test_a_proof_that_an_add_overtook_leaves_no_hint(self):
        # A deduction proves the item short, then an add runs from start to end before the
        # deduction writes its hints: the hints would say "sold out" with the add's units there.
        # The proof read each hint key before it read the buckets, and the hint goes in only
        # where the key still holds that and no add is running (lua/split_bucket-3.lua).
        self.sc("init", "A", "0")
        self.split("A", 2)
        _, by_script = self.functions()
        fn = by_script["split_bucket"]["function"]
        buckets = self.bucket_keys("A")

        def call(bucket, *args):
            return self.r("FCALL", fn, "4", bucket, bucket + ":moves", bucket + ":short",
                          bucket + ":adds", *args)

        def hint(bucket, seen, total, nonce="abc1"):
            value, at = seen
            return call(bucket, "hint", value, str(total), "1000", nonce, str(at))

        def read_keys():  # the proof's first read: what each key holds, and when
            peeks = [call(b, "peek") for b in buckets]
            self.assertEqual({p[0] for p in peeks}, {"ok"})
            return [(p[1], p[2]) for p in peeks]

        seen = read_keys()
        self.assertEqual(self.sc("add", "A", "5").one["status"], "ok")  # the add overtakes it
        self.assertEqual([hint(b, v, 0)[0] for b, v in zip(buckets, seen)], ["stale"] * 2)
        self.assertEqual(self.sc("deduct", "A", "5").one["status"], "ok")
        # Nothing overtook this proof: its hints go in, and the next deduction reads one.
        seen = read_keys()
        self.assertEqual([hint(b, v, 0)[0] for b, v in zip(buckets, seen)], ["ok"] * 2)
        self.assertEqual([self.r("GET", b + ":short") for b in buckets], ["0 abc1"] * 2)
        # Another proof's hint is a word of its own: a proof that read the one before cannot
        # take it for what it read (the total alone could be equal again after an add).
        old = read_keys()
        self.assertEqual(hint(buckets[0], old[0], 0, "abc2")[0], "ok")
        self.assertEqual(hint(buckets[0], old[0], 0, "abc3")[0], "stale")
        # A peek a hint's life old is refused even where the key holds what it found: what was
        # written since may have expired, back to nothing (a proof delayed that long).
        self.assertEqual(call(buckets[1], "added", "cccc", "60000")[0], "ok")  # a lasting word
        value, at = read_keys()[1]
        self.assertEqual(hint(buckets[1], (value, at - 1000), 0)[0], "stale")
        self.assertEqual(hint(buckets[1], (value, at - 900), 0)[0], "ok")
        # While an add runs (registered, its units not yet there), no hint goes in, even for a
        # proof that read the keys after it registered, and even after another add came and
        # went.
        self.assertEqual(call(buckets[0], "adding", "aaaa", "60000")[0], "ok")
        self.assertEqual(self.sc("add", "A", "1").one["status"], "ok")
        seen = read_keys()
        self.assertEqual(hint(buckets[0], seen[0], 1)[0], "stale")
        self.assertEqual(hint(buckets[1], seen[1], 1)[0], "ok")  # aaaa runs on bucket 0 only
        self.assertEqual(call(buckets[0], "added", "aaaa", "60000")[0], "ok")
        seen = read_keys()
        self.assertEqual(hint(buckets[0], seen[0], 1)[0], "ok")
        # An add that never unregistered counts as running until its time is up, and no longer.
        self.assertEqual(call(buckets[1], "adding", "bbbb", "60000")[0], "ok")
        seen = read_keys()
        self.assertEqual(hint(buckets[1], seen[1], 1)[0], "stale")
        self.r("ZADD", buckets[1] + ":adds", "1000", "bbbb")  # as if its time were long up
        self.assertEqual(hint(buckets[1], seen[1], 1)[0], "ok")

    def test_sixteen_buyers_drain_an_eight_bucket_item_with_no_false_sold_out(self):
        self.sc("init", "A", "96")
        self.assertEqual(self.split("A", 8).rc, 0)
        answers = []
        lock = threading.Lock()

        def buyer():
            while True:
                res = self.sc("deduct", "A", "1")
                with lock:
                    answers.append((res.rc, res.one["status"]))
                if res.one["status"] != "ok":
                    return

        buyers = [threading.Thread(target=buyer) for _ in range(16)]
        for b in buyers:
            b.start()
        for b in buyers:
            b.join()
        sold = sum(1 for _, status in answers if status == "ok")
        refused = [a for a in answers if a[1] != "ok"]
        # Every unit sold exactly once, and each buyer stopped on a true sold-out: with QTY 1 an
        # insufficient answer is false unless the item was empty, and it stays empty after.
        self.assertEqual(sold, 96)
        self.assertEqual(refused, [(3, "insufficient")] * 16)
        self.assertEqual(self.units("A"), 0)
        self.assertEqual([self.r("GET", k) for k in self.bucket_keys("A")], ["0"] * 8)


class SplitRace(SplitTest):
    def test_deductions_racing_splits_and_merges_all_apply(self):
        # The stock script may find a layout record that a merge replaces before the next read,
        # and the plain path a record again: each deduction takes the path the item has then,
        # and none is refused as "split items not handled".
        self.sc("init", "A", "100000")
        done = threading.Event()
        answers = []
        lock = threading.Lock()

        def operator():
            for _ in range(12):
                self.assertEqual(self.split("A", 4).rc, 0)
                self.assertEqual(self.split("A", 1).rc, 0)
            done.set()

        def buyer():
            while not done.is_set():
                res = self.sc("deduct", "A", "1")
                with lock:
                    answers.append((res.rc, res.one.get("status"), res.one.get("error")))

        threads = [threading.Thread(target=operator)] + [threading.Thread(target=buyer) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertGreater(len(answers), 40)
        self.assertEqual([a for a in answers if a[:2] != (0, "ok")], [])
        self.assertEqual(self.units("A"), 100000 - len(answers))


class SkewedRace(SplitTest):
    def test_skewed_buyers_with_mixed_quantities_never_get_a_false_sold_out(self):
        # 16 processes, QTY 1 to 5, three buyers in four with request ids whose home is bucket 0
        # (the id's hash), so that bucket empties first and units must come from the others.
        from harness import crc16
        self.sc("init", "A", "300")
        self.assertEqual(self.split("A", 8).rc, 0)
        answers, lock = [], threading.Lock()

        def request_id(n, skewed):
            i = 0
            while True:
                rid = "b%d-%d" % (n, i)
                if not skewed or crc16(rid.encode()) % 8 == 0:
                    return rid
                i += 1

        def buyer(n):
            for call in range(100):
                qty = 1 + (n + call) % 5
                rid = request_id(n * 1000 + call, n % 4 != 0)
                for _ in range(5):  # "not applied" is safe to send again with its id
                    res = self.sc("deduct", "A", str(qty), "--request-id", rid)
                    if res.one["status"] != "error":
                        break
                with lock:
                    answers.append((qty, res.one["status"], res.one.get("error")))
                if res.one["status"] != "ok":
                    return

        buyers = [threading.Thread(target=buyer, args=(n,)) for n in range(16)]
        for b in buyers:
            b.start()
        for b in buyers:
            b.join()
        final = self.units("A")
        sold = sum(q for q, status, _ in answers if status == "ok")
        refused = [(q, status, error) for q, status, error in answers if status != "ok"]
        self.assertEqual(sold + final, 300)
        self.assertEqual({status for _, status, _ in refused}, {"insufficient"}, refused)
        # The final stock is below every QTY refused: no refusal while enough was left.
        self.assertLess(final, min(q for q, _, _ in refused), refused)


class Library(SplitTest):
    """`stockctl library`, and an application that follows docs/library.md with the functions it
    names, racing stockctl on one split item."""

    def send(self, fn, source, x, k, dest):
        return self.r("FCALL", fn, "3", source, source + ":moves", source + ":sent:" + x,
                      "send", x, str(k), dest)

    def receive(self, fn, dest, x, k, deadline):
        return self.r("FCALL", fn, "3", dest, dest + ":moves", dest + ":in:" + x, "receive", x,
                      str(k), str(deadline))

    def ten_units_in_bucket_0(self):
        """Item A over 2 buckets, 10 units in bucket 0: the split_bucket function and the
        buckets' keys."""
        self.sc("init", "A", "10")
        self.split("A", 2)
        _, by_script = self.functions()
        j, i = self.bucket_keys("A")
        self.r("SET", j, "10")
        self.r("SET", i, "0")
        return by_script["split_bucket"]["function"], j, i

    def test_a_send_resent_after_its_transfer_was_finished_takes_nothing(self):
        # A send whose reply was lost is resent with the same id; another process may have
        # finished the transfer meanwhile (received it, deleted the record). The resend must
        # not take the units a second time: they would be lost.
        fn, j, i = self.ten_units_in_bucket_0()
        sent = self.send(fn, j, "x1", 4, i)
        self.assertEqual(sent[:2], ["ok", 6], sent)
        self.assertEqual(self.receive(fn, i, "x1", 4, sent[2] + 60), ["ok", 4])
        self.assertEqual(self.r("HDEL", j + ":moves", "out:x1"), 1)
        self.assertEqual(self.send(fn, j, "x1", 4, i), ["finished", "6"])
        self.assertEqual([int(self.r("GET", j)), int(self.r("GET", i))], [6, 4])
        self.assertIsNone(self.r("HGET", j + ":moves", "out:x1"))

    def test_a_receive_past_its_deadline_adds_nothing(self):
        # A process paused between confirming a record and receiving it may find the transfer
        # finished and its receipt expired: its receive must then be refused, not add again.
        fn, _, i = self.ten_units_in_bucket_0()
        now = int(time.time())  # the servers run on this machine, on its clock
        self.assertEqual(self.receive(fn, i, "x1", 4, now - 5), ["late", "0"])
        self.assertEqual((self.r("GET", i), self.r("EXISTS", i + ":in:x1")), ("0", 0))
        # In time it adds once, and a repeat (even late) finds the receipt. The repeat writes
        # the receipt again, so that its caller's WAIT covers the first receive (a repeat that
        # wrote nothing made the WAIT pass at once, and a failover could lose the units).
        self.assertEqual(self.receive(fn, i, "x1", 4, now + 600), ["ok", 4])
        if not self.cluster:
            self.r("CONFIG", "RESETSTAT")
        self.assertEqual(self.receive(fn, i, "x1", 4, now - 5), ["ok", "4"])
        self.assertEqual(self.r("GET", i), "4")
        if not self.cluster:
            stats = self.r("INFO", "commandstats")
            self.assertIn("cmdstat_set:calls=1,", stats)

    def test_a_repeated_drain_writes_its_record_again(self):
        # A drain whose reply was lost is sent again: the repeat finds the record and must
        # write it again, so that its caller's WAIT covers the first drain before the units
        # are counted in the item's record (a failover could lose a drain no WAIT covered).
        fn, j, _ = self.ten_units_in_bucket_0()
        drain = ["FCALL", fn, "2", j, j + ":moves", "drain", "ab12"]
        self.assertEqual(self.r(*drain), ["ok", "10"])
        self.assertEqual(self.r("GET", j), DRAINED + "ab12 10")
        if not self.cluster:
            self.r("CONFIG", "RESETSTAT")
        self.assertEqual(self.r(*drain), ["ok", "10"])
        self.assertEqual(self.r("GET", j), DRAINED + "ab12 10")
        if not self.cluster:
            self.assertIn("cmdstat_set:calls=1,", self.r("INFO", "commandstats"))

    def test_a_receipt_lives_until_the_record_of_its_transfer_is_gone(self):
        # A transfer recorded at j and received at i, whose record stockctl then finishes: the
        # receipt has no expiry while the record is there (a kept record finished a day later
        # must still find it), and half an hour once the record is gone.
        fn, j, i = self.ten_units_in_bucket_0()
        sent = self.send(fn, j, "x1", 4, i)
        self.assertEqual(self.receive(fn, i, "x1", 4, sent[2] + 60)[0], "ok")
        self.assertEqual(self.r("TTL", i + ":in:x1"), -1)
        self.assertGreater(self.r("TTL", j + ":sent:x1"), 86000)
        res = self.sc("rebalance", "A")  # finds the record, finishes it (the receipt: no add)
        self.assertEqual((res.rc, res.one["stock"]), (0, 10), res)
        self.assertIsNone(self.r("HGET", j + ":moves", "out:x1"))
        self.assertTrue(600 < self.r("TTL", i + ":in:x1") <= 1800)
        self.assertEqual(self.units("A"), 10)

    def test_each_send_counts_itself_in_its_source_moves_hash(self):
        # What proves a shortage (docs/split.md, step 6): a transfer that began and ended
        # between two reads of the moves hashes leaves its count behind.
        self.sc("init", "A", "10")
        self.split("A", 2)
        _, by_script = self.functions()
        fn = by_script["split_bucket"]["function"]
        j, i = self.bucket_keys("A")
        units = int(self.r("GET", j))
        self.assertIsNone(self.r("HGET", j + ":moves", "sent"))
        for x in ("x1", "x1", "x2"):  # a repeat of x1 takes and counts nothing
            self.assertEqual(self.send(fn, j, x, 1, i)[0], "ok")
        self.assertEqual(self.r("HGET", j + ":moves", "sent"), "2")
        self.assertEqual(int(self.r("GET", j)), units - 2)
        # A refused send counts nothing.
        self.assertEqual(self.send(fn, j, "x3", 99, i)[0], "short")
        self.assertEqual(self.r("HGET", j + ":moves", "sent"), "2")
        # The next deduction finds the buckets short of 11 and finishes both transfers first.
        res = self.sc("deduct", "A", "11")
        self.assertEqual((res.one["status"], res.one["stock"]), ("insufficient", 10), res)
        self.assertEqual(self.units("A"), 10)

    def test_library_loads_itself_and_names_every_function(self):
        self.r("FUNCTION", "FLUSH")
        line, by_script = self.functions()
        self.assertIn("stock", by_script)
        self.assertIn("split_bucket", by_script)
        conns = [self.r._conn(p) for p in self.r.primaries()] if self.cluster else [self.r]
        for conn in conns:  # every primary has it now
            names = [lib[1] for lib in conn("FUNCTION", "LIST", "LIBRARYNAME", line["name"])]
            self.assertEqual(names, [line["name"]])
        # --script gives the text whose SHA1 is the one listed, for EVALSHA.
        body = self.sc("library", "--script", "stock").one["body"]
        self.assertEqual(hashlib.sha1(body.encode()).hexdigest(), by_script["stock"]["sha1"])
        # A name it lacks is a usage error that lists the names it has.
        res = self.sc("library", "--script", "nope")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("no script named 'nope'; the scripts: stock, put,", res.stderr)

    def test_an_application_and_stockctl_drain_one_split_item_exactly(self):
        _, by_script = self.functions()
        stock_fn, bucket_fn = by_script["stock"]["function"], by_script["split_bucket"]["function"]
        self.sc("init", "A", "120")
        self.assertEqual(self.split("A", 4).rc, 0)
        answers, lock = [], threading.Lock()

        # Each side sells once before the other starts racing it, so that the race is between
        # both whatever the scheduler does.
        tool_sold, app_sold = threading.Event(), threading.Event()

        def app(n):
            conn = self.server.client()
            tool_sold.wait(60)
            for call in range(200):
                qty = 1 + (n + call) % 3
                for _ in range(5):  # "retry": other buyers kept emptying the buckets it chose
                    status = app_deduct(conn, stock_fn, bucket_fn, "stock:{A}", qty)
                    if status != "retry":
                        break
                with lock:
                    answers.append(("app", qty, status))
                if status != "ok":
                    break
                app_sold.set()
            conn.close()

        def tool(n):
            for call in range(200):
                qty = 1 + (n + call) % 3
                for _ in range(5):  # "not applied" (nothing changed) may be sent again
                    res = self.sc("deduct", "A", str(qty))
                    if res.one["status"] != "error":
                        break
                with lock:
                    answers.append(("stockctl", qty, res.one["status"]))
                if res.one["status"] != "ok":
                    return
                tool_sold.set()
                app_sold.wait(60)

        threads = [threading.Thread(target=app, args=(n,)) for n in range(4)]
        threads += [threading.Thread(target=tool, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        final = self.units("A")
        sold = sum(q for _, q, status in answers if status == "ok")
        refused = [(who, q, status) for who, q, status in answers if status != "ok"]
        self.assertEqual(sold + final, 120)
        self.assertEqual({status for _, _, status in refused}, {"insufficient"}, refused)
        self.assertLess(final, min(q for _, q, _ in refused))
        self.assertTrue({"app", "stockctl"} <= {who for who, _, status in answers if status == "ok"})


class InitAndRebuild(SplitTest):
    """init and rebuild judge a split item on its total (docs/split.md, "Everything else on a
    split item"); a forced write sets the total at one moment and keeps the split."""

    def setUp(self):
        super().setUp()
        self.sc("init", "A", "20")
        self.assertEqual(self.split("A", 4).rc, 0)
        self.sc("deduct", "A", "2", "--request-id", "r1")

    def snapshot(self):
        return {k: self.r("GET", k) for k in ["stock:{A}"] + self.bucket_keys("A")}

    def test_rebuild_extra_reports_a_split_item_with_its_total(self):
        path = self.write("x.csv", "sku,stock\nX,1\n")
        res = self.sc("rebuild", "--file", path, "--extra", "--dry-run", "--report", "-")
        extra = [line for line in res.lines if line.get("sku") == "A"]
        self.assertEqual([(e["status"], e["stock"], e.get("buckets")) for e in extra],
                         [("extra", 18, 4)], res)

    def test_init_finds_the_item_and_its_total_and_changes_nothing(self):
        before = self.snapshot()
        res = self.sc("init", "A", "5")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"], res.one["buckets"]),
                         (0, "exists", 18, 4), res)
        path = self.write("a.csv", "sku,stock\nA,5\n")
        res = self.sc("init", "--file", path, "--report", "-")
        self.assertEqual((res.rc, res.lines[0]["status"], res.lines[0]["stock"]),
                         (0, "exists", 18), res)
        res = self.sc("init", "--file", path, "--force", "--dry-run", "--report", "-")
        line = res.lines[0]
        self.assertEqual((res.rc, line["status"], line["stock"], line["previous"]),
                         (0, "ok", 5, 18), res)
        self.assertEqual(self.snapshot(), before)

    def test_rebuild_judges_drift_on_the_total(self):
        before = self.snapshot()
        same = self.write("same.csv", "sku,stock\nA,18\n")
        res = self.sc("rebuild", "--file", same, "--report", "-")
        self.assertEqual((res.rc, res.lines[0]["status"]), (0, "exists"), res)
        other = self.write("other.csv", "sku,stock\nA,30\n")
        res = self.sc("rebuild", "--file", other, "--report", "-", "--fail-on-drift")
        line = res.lines[0]
        self.assertEqual((res.rc, line["status"], line["stock"], line["buckets"]),
                         (6, "drift", 18, 4), res)
        self.assertIn("stock:{A} holds 18, the source says 30", res.stderr)
        self.assertEqual(self.snapshot(), before)

    def test_a_forced_write_sets_the_total_and_keeps_the_split(self):
        res = self.sc("init", "A", "50", "--force")
        line = res.one
        self.assertEqual((res.rc, line["status"], line["stock"], line["buckets"], line["previous"]),
                         (0, "ok", 50, 4, 18), res)
        self.assertEqual(self.units("A"), 50)
        self.assertEqual(len(self.bucket_keys("A")), 4)
        self.assertEqual(self.sc("get", "A").one["stock"], 50)
        # The request ids of the old buckets were carried through the merge and the new split.
        res = self.sc("deduct", "A", "2", "--request-id", "r1")
        self.assertEqual((res.one["status"], res.one.get("replayed")), ("ok", True), res)
        self.assertEqual(self.units("A"), 50)
        # rebuild --force writes a total that differs the same way.
        path = self.write("r.csv", "sku,stock\nA,7\n")
        res = self.sc("rebuild", "--file", path, "--force", "--report", "-")
        self.assertEqual((res.rc, res.lines[0]["status"], res.lines[0]["stock"]), (0, "ok", 7), res)
        self.assertEqual((self.units("A"), len(self.bucket_keys("A"))), (7, 4))

    def test_a_forced_write_of_the_total_it_holds_changes_nothing(self):
        keys = self.bucket_keys("A")
        res = self.sc("init", "A", "18", "--force")
        self.assertEqual((res.rc, res.one["status"], res.one["previous"], res.one["buckets"]),
                         (0, "ok", 18, 4), res)
        self.assertEqual(self.bucket_keys("A"), keys, "not merged and split again")

    def test_an_export_read_back_keeps_the_split(self):
        self.sc("init", "B", "7")
        out = self.write("e.jsonl", "")
        self.assertEqual(self.sc("export", "--output", out).rc, 0)
        with open(out) as f:
            rows = {r["sku"]: r for r in map(json.loads, f)}
        self.assertEqual(rows["A"], {"sku": "A", "stock": 18, "held": 0, "ttl": None,
                                     "buckets": 4})
        self.assertNotIn("buckets", rows["B"])
        # The cache is lost; rebuild from the export makes A split over 4 buckets again.
        self.assertEqual(self.sc("delete", "A", "B").rc, 0)
        res = self.sc("rebuild", "--file", out, "--report", "-")
        by_sku = {l["sku"]: l for l in res.lines if "sku" in l}
        self.assertEqual((res.rc, by_sku["A"]["status"], by_sku["A"]["buckets"]), (0, "ok", 4), res)
        self.assertNotIn("buckets", by_sku["B"])
        self.assertEqual((self.units("A"), len(self.bucket_keys("A"))), (18, 4))
        self.assertEqual(self.sc("get", "B").one["stock"], 7)
        # CSV keeps its four columns: read back, the item is not split.
        csv_out = self.write("e.csv", "")
        self.assertEqual(self.sc("export", "--format", "csv", "--output", csv_out).rc, 0)
        with open(csv_out) as f:
            self.assertEqual(f.readline().strip(), "sku,stock,held,ttl")
        self.assertEqual(self.sc("delete", "A", "B").rc, 0)
        self.assertEqual(self.sc("init", "--file", csv_out).rc, 0)
        self.assertEqual(self.sc("get", "A").one.get("buckets"), None)
        # A buckets value that is not 1 to 64 is invalid input, naming file and line.
        bad = self.write("bad.csv", "sku,stock,buckets\nC,5,65\n")
        res = self.sc("init", "--file", bad)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("bad.csv:2: column 'buckets': '65' is not a whole number from 1 to 64",
                      res.stderr)
        self.assertEqual(self.r("EXISTS", "stock:{C}"), 0)

    def test_a_forced_write_cut_off_leaves_every_unit_counted(self):
        # Killed in the middle of its merge: the item is left mid-merge with every unit in the
        # record; init names the state, and the same merge finishes it.
        res = run("init", "A", "50", "--force", *self.target_args(),
                  env=clean_env(STOCKCTL_TEST_STOP_AT="split:drained"))
        self.assertEqual(res.rc, -9, res)
        self.assertEqual(self.units("A"), 18)
        res = self.sc("init", "A", "50", "--force")
        self.assertEqual(res.rc, 1, res)
        self.assertIn("a split or merge of the item is in progress", res.one["error"])
        self.assertEqual(self.units("A"), 18)
        self.assertEqual(self.split("A", 1).rc, 0)
        res = self.sc("init", "A", "50", "--force")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 50), res)

    def test_a_forced_write_with_an_expiry_is_refused(self):
        before = self.snapshot()
        res = self.sc("init", "A", "50", "--force", "--ttl", "60")
        self.assertEqual(res.rc, 1, res)
        self.assertIn("a split item's stock cannot expire; nothing written", res.stderr)
        self.assertEqual(self.snapshot(), before)

    def test_a_file_row_to_split_with_an_expiry_is_invalid_and_nothing_is_written(self):
        # Found when the whole file is checked: no key written with its expiry and left unsplit.
        path = self.write("ttl.ndjson", '{"sku":"T1","stock":10,"buckets":4}\n{"sku":"T2","stock":5}\n')
        for command in ("init", "rebuild"):
            res = self.sc(command, "--file", path, "--ttl", "100")
            self.assertEqual(res.rc, 2, res)
            self.assertIn("ttl.ndjson:1: column 'buckets': 4 buckets with --ttl: a split item "
                          "cannot expire", res.stderr)
            self.assertEqual((self.r("EXISTS", "stock:{T1}"), self.r("EXISTS", "stock:{T2}")), (0, 0))


class FailClosed(SplitTest):
    @unittest.skipIf(TARGET in ("cluster", "tls-cluster"),
                     "a cluster's hold expires through reap: split refuses the item until then")
    def test_an_expiry_given_back_past_a_log_of_another_type_is_said(self):
        # The split gives the expired hold's units back first; another program's string where
        # the log is takes no entry, and the split goes on, saying so.
        self.assertEqual(self.sc("init", "L", "20").rc, 0)
        self.assertEqual(self.sc("hold", "hl", "L=2", "--expire", "1").one["status"], "ok")
        while self.sc("get", "L").one["held"] != 0:  # expired by the server's clock
            time.sleep(0.05)
        self.r("SET", "stock:{L}:changes", "not a list")
        res = self.split("L", 2)
        self.assertIn("warning: split 'L': an expired hold's units were given back, but its "
                      "change log entry was not written: stock:{L}:changes", res.stderr)
        # The split's own entry is not written either: applied, and the line says so.
        self.assertEqual(res.rc, 1, res)
        self.assertIn("applied, but its change log entry was not written", res.one["error"])
        self.layout_is("L", 2)
        self.assertEqual((self.units("L"), self.r("GET", "stock:{L}:changes")), (20, "not a list"))

    @unittest.skipIf(TARGET in ("cluster", "tls-cluster"),
                     "a cluster's hold expires through reap: split refuses the item until then")
    def test_settling_a_hold_whose_item_was_split_answers_as_its_state_says(self):
        # An expired hold's units went back when the split began; an order cannot be confirmed.
        # Neither touches the item's units, so the layout record is no error there.
        self.assertEqual(self.sc("init", "Y", "20").rc, 0)
        self.assertEqual(self.sc("init", "X", "20").rc, 0)
        self.assertEqual(self.sc("hold", "hy", "Y=2", "--expire", "1").one["status"], "ok")
        self.assertEqual(self.sc("order", "ox", "X=3").one["status"], "ok")
        while self.sc("get", "Y").one["held"] != 0:  # the hold has expired by Y's clock
            time.sleep(0.05)
        self.assertEqual(self.split("Y", 2).rc, 0)
        self.assertEqual(self.split("X", 3).rc, 0)
        res = self.sc("release", "hy")
        self.assertEqual((res.rc, res.one["status"]), (0, "expired"), res)
        res = self.sc("confirm", "ox")
        self.assertEqual((res.rc, res.one["status"]), (2, "conflict"), res)
        # cancel would give units back to the item: not on a split item yet, nothing changed.
        res = self.sc("cancel", "ox")
        self.assertEqual(res.rc, 1, res)
        self.assertIn("is split over 3 buckets", res.one["error"])
        self.assertEqual((self.units("X"), self.units("Y")), (17, 20))

    def test_cancel_of_an_order_whose_item_was_split_changes_nothing(self):
        # On a cluster the record decided first and its groups could not follow: Q1 stayed
        # sold, the decision stood, and the message named no item. Both targets refuse alike.
        for sku in ("Q1", "Q2"):
            self.assertEqual(self.sc("init", sku, "10").rc, 0)
        self.assertEqual(self.sc("order", "oq", "Q1=1", "Q2=1").one["status"], "ok")
        self.assertEqual(self.split("Q1", 2).rc, 0)
        res = self.sc("cancel", "oq")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("item 'Q1' is split over 2 buckets; cancel does not handle split items yet",
                      res.one["error"])
        self.assertNotIn("outcome unknown", res.one["error"])
        # Each line's stock now, as a refused answer gives it; the split item's is not a value.
        self.assertEqual([(l["sku"], l["stock"]) for l in res.one["lines"]],
                         [("Q1", None), ("Q2", 9)], res)
        self.assertEqual((self.units("Q1"), self.units("Q2")), (9, 9))
        self.assertEqual(self.split("Q1", 1).rc, 0)
        res = self.sc("cancel", "oq")
        self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
        self.assertEqual((self.units("Q1"), self.units("Q2")), (10, 10))
        # A repeat moves no unit: it answers as the record says, split item or not.
        self.assertEqual(self.split("Q1", 2).rc, 0)
        res = self.sc("cancel", "oq")
        self.assertEqual((res.rc, res.one["status"], res.one.get("replayed")), (0, "ok", True), res)

    """Every command not taught split items yet refuses one, saying so, and changes nothing."""

    def setUp(self):
        super().setUp()
        self.sc("init", "A", "20")
        self.assertEqual(self.split("A", 4).rc, 0)
        self.before = self.snapshot()

    def snapshot(self):
        return {k: self.r("GET", k) for k in ["stock:{A}"] + self.bucket_keys("A")}

    def assert_refused(self, res, rc=1):
        self.assertEqual(res.rc, rc, res)
        self.assertIn("item 'A' is split over 4 buckets", res.stdout + res.stderr)
        self.assertEqual(self.snapshot(), self.before)

    def test_a_forced_put_that_finds_a_layout_record_keeps_it(self):
        # A split that begins after a forced init read the key: the put script itself, which
        # runs next, finds the record and keeps it (docs/split.md, "What is built today").
        record = self.r("GET", "stock:{A}")
        args = ["5", "force", "0", "0", "0", "init", "1000", "test", ""]
        answer = self.r("EVAL", lua_script("put-2.lua"), 4, "stock:{A}", "stock:{A}:lock",
                        "stock:{A}:changes", "stock:{A}:first", *args)
        self.assertEqual(answer, ["kept", record, 0])
        self.assertEqual(self.snapshot(), self.before)

    def test_the_remove_script_keeps_a_layout_record(self):
        # A split that begins after delete read the key: the remove script, which takes the
        # stock key away, finds the record and keeps it; a number it removes.
        remove = lua_script("remove-1.lua")
        record = self.r("GET", "stock:{A}")
        self.assertEqual(self.r("EVAL", remove, 1, "stock:{A}"), ["split", record])
        self.assertEqual(self.snapshot(), self.before)
        self.sc("init", "B", "7")
        self.assertEqual(self.r("EVAL", remove, 1, "stock:{B}"), ["removed", "7"])
        self.assertEqual(self.r("EXISTS", "stock:{B}"), 0)
        self.assertEqual(self.r("EVAL", remove, 1, "stock:{B}"), ["removed", None])

    def test_delete_merges_the_buckets_then_deletes_the_item(self):
        self.sc("deduct", "A", "2", "--request-id", "r1")
        res = self.sc("delete", "A")
        self.assertEqual((res.rc, res.one["status"], res.one["previous"]), (0, "ok", 18), res)
        self.assertEqual(self.r("EXISTS", "stock:{A}"), 0)
        self.assertEqual(self.bucket_keys("A"), [], "no bucket left")
        left = [k for k in self.all_keys("stockctl:bucket:*") if ":ids:" not in k]
        self.assertEqual(left, [], "nothing of the buckets but their ledgers, which expire")
        self.assertEqual(self.all_keys("stock:{A}*"), [])
        # As for any deleted item, init puts the units back.
        self.assertEqual(self.sc("init", "A", "18").one["stock"], 18)

    def test_export_writes_a_split_item_s_total(self):
        # One row per item with its total, as get reads it: an export of a store with a split
        # item is whole (exit 0, the file replaced), not a snapshot that leaves it out.
        self.sc("deduct", "A", "3")
        self.sc("init", "B", "5")
        res = self.sc("export")
        self.assertEqual((res.rc, res.stderr), (0, ""), res)
        rows = {row["sku"]: row["stock"] for row in res.lines}
        self.assertEqual(rows, {"A": 17, "B": 5})
        path = os.path.join(self.tmp, "snapshot.csv")
        res = self.sc("export", "--format", "csv", "--output", path)
        self.assertEqual((res.rc, res.one["items"], res.one["written"]), (0, 2, True), res)
        with open(path) as f:
            self.assertIn("A,17", f.read())

    def test_log_reads_the_buckets_logs_with_the_item_s_own(self):
        # The item's own log (init, split) and its buckets' (each deduction and addition on
        # one), every entry placed by its time.
        for qty in ("1", "2", "3"):
            self.assertEqual(self.sc("deduct", "A", qty).one["status"], "ok")
        self.assertEqual(self.sc("add", "A", "5", "--reason", "restock").one["status"], "ok")
        res = self.sc("log", "A")
        self.assertEqual(res.rc, 0, res)
        changes = [(e["change"], e["qty"]) for e in res.lines]
        self.assertEqual(changes[-4:], [("deduct", 1), ("deduct", 2), ("deduct", 3), ("add", 5)])
        self.assertIn("split", [c for c, _ in changes])
        times = [e["time_ms"] for e in res.lines]
        self.assertEqual(times, sorted(times))
        self.assertEqual({e["key"] for e in res.lines}, {"stock:{A}"})
        # Each bucket numbers its own entries: their ids name the bucket, unique for the item.
        ids = [e["entry"] for e in res.lines]
        self.assertEqual(len(set(ids)), len(ids), ids)
        for e in res.lines:
            pattern = r"^\d+-\d+\.b[0-3]$" if e["change"] in ("deduct", "add") else r"^\d+-\d+$"
            self.assertRegex(e["entry"], pattern)
        newest = self.sc("log", "A", "--limit", "2")
        self.assertEqual([(e["change"], e["qty"]) for e in newest.lines], [("deduct", 3), ("add", 5)])

    def test_holds_and_orders(self):
        for op in ("hold", "order"):
            res = self.sc(op, op + "1", "A=1")
            self.assert_refused(res)
            # The item named once, the command by its name.
            self.assertIn("item 'A' is split over 4 buckets; %s does not handle split items yet" % op,
                          res.stderr)
            self.assertNotIn("item 'A': item 'A'", res.stderr)

    def test_deduct_and_add_from_a_file(self):
        # Rows on a split item go to its buckets, as `deduct SKU QTY` sends them, each line in
        # its row's place; request ids apply once.
        self.sc("init", "B", "10")
        rows = ["A,3,r1", "B,2,r2", "A,30,r3", "A,3,r1", "A,17,r4", "B,1,r5"]
        path = self.write("ops.csv", "sku,qty,request_id\n" + "\n".join(rows) + "\n")
        res = self.sc("deduct", "--file", path)
        self.assertEqual(
            [(o["sku"], o["status"], o.get("replayed", False)) for o in res.lines],
            [("A", "ok", False), ("B", "ok", False), ("A", "insufficient", False),
             ("A", "ok", True), ("A", "ok", False), ("B", "ok", False)], res)
        self.assertEqual(res.rc, 3, "an insufficient row: exit 3")
        self.assertEqual([o.get("buckets") for o in res.lines if o["sku"] == "A"], [4] * 4)
        self.assertEqual((self.units("A"), self.r("GET", "stock:{B}")), (0, "7"))
        path = self.write("adds.csv", "sku,qty\nA,5\nB,1\n")
        res = self.sc("add", "--file", path)
        self.assertEqual([(o["sku"], o["status"]) for o in res.lines], [("A", "ok"), ("B", "ok")])
        self.assertEqual(self.units("A"), 5)

    def test_doctor_scan(self):
        res = self.sc("doctor", "--scan")
        self.assertEqual(res.rc, 0, res)
        self.assertNotIn("stock:{A}", res.stdout, "a healthy split item is no finding")
        self.assertEqual({f["status"] for f in res.lines if f.get("check") == "values"}, {"ok"})
        self.assertEqual(self.snapshot(), self.before)
        split = [line for line in res.lines if line.get("check") == "split"]
        if not self.cluster:
            self.assertEqual([(f["status"], f["detail"]) for f in split],
                             [("ok", "1 split item's buckets read, 0 with a broken bucket")])
        else:
            self.assertEqual([(f["status"], f["detail"]) for f in split],
                             [("ok", "1 of 1 split items spread over the primaries as the slot "
                                     "map is now, 0 with a broken bucket")])
        # A bucket set by hand to what is not a stock value fails, as a corrupt value does.
        bucket = self.bucket_keys("A")[2]
        kept = self.r("GET", bucket)
        self.r("SET", bucket, "junk")
        res = self.sc("doctor", "--scan")
        self.assertEqual(res.rc, 1, res)
        split = [line for line in res.lines if line.get("check") == "split"]
        self.assertEqual([f["status"] for f in split], ["fail", "fail"], split)
        # Both name the node that holds the item's key, one of those the values check read: one
        # check failed, not two.
        self.assertEqual(split[0]["node"], split[1]["node"])
        self.assertIn(split[0]["node"], {f["node"] for f in res.lines if f.get("check") == "values"})
        self.assertIn("doctor: check split failed on %s: " % split[0]["node"], res.stderr)
        self.assertIn("bucket %s holds 'junk', not a stock value" % bucket, split[0]["detail"])
        self.r("SET", bucket, kept)
        if not self.cluster:
            return
        # A layout whose buckets all hash to one primary, as a resharding can leave one: each
        # tag is the smallest number whose slot is on the first primary.
        first = self.r.primaries()[0]
        tags = [t for t in range(100000) if self.r.node_port(str(t)) == first][:3]
        self.r("SET", "stock:{B}", "stockctl:split:1 live 0badcafe %s - - -"
               % ",".join(map(str, tags)))
        for i, tag in enumerate(tags):
            self.r("SET", "stockctl:bucket:{%d}:stock:{B}:0badcafe:%d" % (tag, i), "1")
        res = self.sc("doctor", "--scan")
        split = [line for line in res.lines if line.get("check") == "split"]
        self.assertEqual([f["status"] for f in split], ["warn", "ok"], split)
        self.assertIn("3 of the 3 buckets of stock:{B} are on this primary", split[0]["detail"])
        self.assertEqual(split[0]["hint"], "stockctl split B --buckets 3 re-spreads them over "
                                           "the primaries as the slot map is now (sales go on)")
        self.assertEqual(res.rc, 0, "a warning: exit 0 without --strict")


if __name__ == "__main__":
    unittest.main()
