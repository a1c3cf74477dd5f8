"""The change log: every change stockctl makes is in the item's log, written by the same script."""

import itertools
import json
import os
import re
import socket
import tempfile
import time
import unittest

from harness import (RedisServer, ServerTest, TARGET, calls_on, clean_env, free_cluster_port, keyslot, run,
                     spawn, standalone_only)

WRITERS = 8


class ChangeLog(ServerTest):
    def log(self, sku, *args):
        return self.sc("log", sku, *args)

    def test_each_change_is_one_entry_with_before_after_actor_and_reason(self):
        self.assertEqual(self.sc("init", "42", "10", "--actor", "ann", "--reason", "stocktake").rc, 0)
        self.sc("deduct", "42", "3", "--actor", "bob")
        self.sc("add", "42", "2", "--request-id", "refund-9", "--actor", "bob")
        self.sc("deduct", "42", "100")  # insufficient: no change, no entry
        self.sc("add", "42", "2", "--request-id", "refund-9")  # a replay changes nothing
        res = self.log("42")
        self.assertEqual(res.rc, 0, res)
        got = [(e["change"], e["qty"], e["before"], e["after"], e["request_id"], e["actor"], e["reason"])
               for e in res.lines]
        self.assertEqual(got, [
            ("init", None, None, 10, None, "ann", "stocktake"),
            ("deduct", 3, 10, 7, None, "bob", None),
            ("add", 2, 7, 9, "refund-9", "bob", None),
        ])
        first = res.lines[0]
        self.assertEqual(list(first), ["op", "sku", "key", "entry", "time_ms", "change", "qty", "before",
                                       "after", "request_id", "hold_id", "actor", "reason"])
        self.assertEqual((first["op"], first["sku"], first["key"]), ("log", "42", "stock:{42}"))
        self.assertEqual(first["time_ms"], int(first["entry"].split("-")[0]))

    def test_table_shows_times_as_iso_8601_utc(self):
        self.sc("init", "42", "10", "--actor", "ann")
        self.sc("deduct", "42", "3", "--actor", "bob", "--reason", "order 7")
        entries = self.log("42").lines
        res = self.log("42", "--table")
        self.assertEqual(res.rc, 0, res)
        header, *rows = res.stdout.splitlines()
        self.assertEqual(header.split(), ["op", "sku", "key", "entry", "time", "change", "qty", "before",
                                          "after", "request_id", "hold_id", "actor", "reason"])
        self.assertEqual(len(rows), 2)
        for entry, row in zip(entries, rows):
            ms = entry["time_ms"]
            iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)
            self.assertEqual(row.split()[3:5], [entry["entry"], iso], res.stdout)
        self.assertEqual(rows[0].split()[5:], ["init", "-", "-", "10", "-", "-", "ann", "-"])
        self.assertEqual(rows[1].split()[5:], ["deduct", "3", "10", "7", "-", "-", "bob", "order", "7"])
        self.assertTrue(rows[1].endswith("  bob    order 7"), res.stdout)
        # The time a row shows is one --since reads back.
        since = rows[1].split()[4]
        self.assertEqual([e["change"] for e in self.log("42", "--since", since).lines], ["deduct"])

    def test_init_from_a_deduction_and_forced_overwrites_are_logged(self):
        self.sc("deduct", "n", "1", "--init-value", "5")
        self.assertEqual([(e["change"], e["before"], e["after"]) for e in self.log("n").lines],
                         [("init", None, 5), ("deduct", 5, 4)])
        self.sc("init", "n", "50", "--force")
        self.sc("init", "n", "50", "--force")  # the value it holds: nothing changes
        self.assertEqual([(e["change"], e["before"], e["after"]) for e in self.log("n").lines][2:],
                         [("overwrite", 4, 50)])

    def test_file_loads_and_rebuild_are_logged(self):
        path = self.write("s.csv", "sku,stock\na,1\nb,2\n")
        self.assertEqual(self.sc("init", "--file", path).rc, 0)
        self.r("DEL", "stock:{b}")
        self.assertEqual(self.sc("rebuild", "--file", path, "--reason", "cache lost").rc, 0)
        self.assertEqual([(e["change"], e["after"]) for e in self.log("a").lines], [("init", 1)])
        self.assertEqual([(e["change"], e["after"], e["reason"]) for e in self.log("b").lines],
                         [("init", 2, None), ("rebuild", 2, "cache lost")])

    def test_no_log_writes_nothing(self):
        self.sc("init", "q", "10", "--no-log")
        self.sc("deduct", "q", "1", "--no-log")
        self.sc("add", "q", "1", "--no-log", "--request-id", "x")
        res = self.log("q")
        self.assertEqual((res.rc, res.stdout), (0, ""))
        self.assertEqual(self.r("EXISTS", "stock:{q}:log", "stock:{q}:changes", "stock:{q}:first"), 0)

    def test_actor_defaults_to_the_environment(self):
        env = clean_env(STOCKCTL_ACTOR="cron-nightly")
        from harness import run
        run("init", "e", "1", *self.target_args(), env=env)
        self.assertEqual(self.log("e").one["actor"], "cron-nightly")

    def test_log_is_bounded(self):
        self.r("SET", "stock:{b}", "100000")
        path = self.write("many.csv", "sku,qty\n" + "b,1\n" * 600)
        self.assertEqual(self.sc("deduct", "--file", path, "--log-max", "100").rc, 0)
        n = self.r("LLEN", "stock:{b}:changes")
        self.assertTrue(100 <= n <= 110, n)  # trimmed once it passes 100 by a tenth
        entries = self.log("b").lines
        self.assertEqual(len(entries), n)
        # Each entry's id counts the item's entries: unique and in order, trimmed or not.
        counts = [int(e["entry"].split("-")[1]) for e in entries]
        self.assertEqual(counts, list(range(601 - n, 601)))
        self.assertEqual([e["after"] for e in entries], list(range(100000 - 600 + n - 1, 100000 - 601, -1)))

    def test_limit_and_since(self):
        self.sc("init", "l", "10")
        for _ in range(4):
            self.sc("deduct", "l", "1")
        entries = self.log("l").lines
        newest = self.log("l", "--limit", "2").lines
        self.assertEqual([e["entry"] for e in newest], [e["entry"] for e in entries[-2:]])
        since = self.log("l", "--since", str(entries[3]["time_ms"])).lines
        self.assertEqual(since[0]["time_ms"], entries[3]["time_ms"])
        self.assertEqual(len(self.log("l", "--since", "2000-01-01T00:00:00Z").lines), 5)
        self.assertEqual(self.log("l", "--since", "2999-01-01").stdout, "")
        bad = self.log("l", "--since", "yesterday")
        self.assertEqual(bad.rc, 2, bad)
        self.assertIn("--since 'yesterday'", bad.stderr)

    @standalone_only
    def test_limit_reads_only_the_newest_entries(self):
        self.sc("init", "t", "5000")
        path = self.write("many.csv", "sku,qty\n" + "t,1\n" * 2500)
        self.assertEqual(self.sc("deduct", "--file", path, "--log-max", "5000").rc, 0)
        self.r("CONFIG", "RESETSTAT")
        newest = self.log("t", "--limit", "3").lines
        self.assertEqual([e["after"] for e in newest], [2502, 2501, 2500])
        lrange = re.search(r"cmdstat_lrange:calls=(\d+)", self.r("INFO", "commandstats"))
        self.assertEqual(int(lrange.group(1)), 1, "one read of the list's tail, not 3 pages")
        self.assertEqual([e["change"] for e in self.log("t", "--limit", "2501").lines][:2],
                         ["init", "deduct"])

    def old_slot_log(self, key):
        """The hash where earlier versions kept the first entries of the items of `key`'s slot:
        stockctl:log:{<tag>}, <tag> the shortest decimal in that slot."""
        tag = next(str(n) for n in itertools.count() if keyslot(str(n)) == keyslot(key))
        return "stockctl:log:{%s}" % tag

    def wait_gone(self, key):
        """Waits until the server has expired `key` (asks the server; bounded)."""
        deadline = time.monotonic() + 30
        while self.r("EXISTS", key):
            self.assertLess(time.monotonic(), deadline, key)
            time.sleep(0.05)

    def test_the_log_of_an_item_with_an_expiry_goes_with_it(self):
        path = self.write("ttl.csv", "sku,stock\nx,1\n")
        self.assertEqual(self.sc("init", "--file", path, "--ttl", "1").rc, 0)
        self.assertEqual(self.r("EXISTS", "stock:{x}:first"), 0, "the whole log in its list")
        self.assertEqual([e["change"] for e in self.log("x").lines], ["init"])
        self.assertTrue(0 < self.r("PTTL", "stock:{x}:changes") <= 1000)
        self.sc("deduct", "y", "1", "--init-value", "5", "--ttl", "1")
        self.assertTrue(0 < self.r("PTTL", "stock:{y}:changes") <= 1000)
        # Loaded without an expiry, then given one: its first entry expires with it.
        self.sc("init", "z", "5")
        self.assertEqual(self.r("PTTL", "stock:{z}:first"), -1)
        self.assertEqual(self.sc("init", "z", "6", "--force", "--ttl", "1").rc, 0)
        self.assertTrue(0 < self.r("PTTL", "stock:{z}:first") <= 1000)
        self.assertEqual([(e["change"], e["after"]) for e in self.log("z").lines],
                         [("init", 5), ("overwrite", 6)])
        for sku in "xyz":
            self.wait_gone("stock:{%s}" % sku)
            self.wait_gone("stock:{%s}:changes" % sku)
            self.wait_gone("stock:{%s}:first" % sku)
            self.assertEqual(self.log(sku).rc, 4)

    def test_a_load_writes_each_first_entry_with_its_key(self):
        # On one server a plain MSETNX writes the keys and their entries, on a cluster the load
        # script: the same entry either way, read back by `log`.
        self.r("SET", "stock:{had}", "3")
        rows = "sku,stock\n" + "".join("f%d,%d\n" % (i, i) for i in range(300)) + "had,9\n"
        res = self.sc("init", "--file", self.write("f.csv", rows), "--actor", "loader", "--reason", "why")
        self.assertEqual((res.rc, res.one["counts"]["ok"], res.one["counts"]["exists"]), (0, 300, 1), res)
        packed = re.compile(r"^(\d{13})\x1finit\x1f(\d+)\x1f6\x1floaderwhy$")
        for i in (0, 127, 128, 299):
            m = packed.match(self.r("GET", "stock:{f%d}:first" % i))
            self.assertTrue(m, self.r("GET", "stock:{f%d}:first" % i))
            self.assertEqual(int(m.group(2)), i)
            self.assertLess(abs(int(m.group(1)) - time.time() * 1000), 60000)
        self.assertEqual(self.r("EXISTS", "stock:{had}:first"), 0, "a key kept gets no entry")
        self.sc("deduct", "f7", "2")
        self.assertEqual([(e["change"], e["before"], e["after"], e["actor"], e["reason"])
                          for e in self.log("f7").lines],
                         [("init", None, 7, "loader", "why"), ("deduct", 7, 5, self.log("f7").lines[1]["actor"], None)])
        self.assertEqual([e["entry"].split("-")[1] for e in self.log("f7").lines], ["0", "1"])

    def test_a_load_among_keys_there_already_logs_each_key_it_created(self):
        # A key there already makes its MSETNX set nothing: the load script sorts the rows out.
        for i in (3, 200):
            self.r("SET", "stock:{m%d}" % i, "1")
        self.r("SET", "stock:{m5}:first", "old entry")  # an entry whose key was lost
        rows = "sku,stock\n" + "".join("m%d,10\n" % i for i in range(256))
        res = self.sc("init", "--file", self.write("m.csv", rows))
        self.assertEqual((res.rc, res.one["counts"]["ok"], res.one["counts"]["exists"]), (0, 254, 2), res)
        for i in range(256):
            if i in (3, 200):
                self.assertEqual(self.r("EXISTS", "stock:{m%d}:first" % i), 0)
                continue
            self.assertEqual(self.r("GET", "stock:{m%d}" % i), "10")
            self.assertEqual([(e["change"], e["after"]) for e in self.log("m%d" % i).lines], [("init", 10)],
                             i)
        self.assertEqual(self.r("GET", "stock:{m5}:first"), "old entry")
        self.assertEqual(self.r("LLEN", "stock:{m5}:changes"), 1, "m5's entry went to its list")

    def test_an_expiry_given_past_keys_of_another_type_stops_nothing_halfway(self):
        # The value is written before the log moves: another program's list, or slot hash, must
        # not stop the script there. The list is left alone and the line says the change was
        # applied; the first entry stays where it was, to move once the list is repaired.
        key, old = "stock:{o4}", self.old_slot_log("stock:{o4}")
        entry = "1764536400123-0\x1finit\x1f\x1f\x1f5\x1f\x1f\x1f3\x1fold"
        self.r("SET", key, "5")
        self.r("HSET", old, key, entry)
        self.r("SET", key + ":changes", "not a list")
        res = self.sc("init", "o4", "6", "--force", "--ttl", "60")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("applied, but its change log entry was not written", res.one["error"])
        self.assertEqual(self.r("GET", key), "6")
        self.assertEqual((self.r("GET", key + ":changes"), self.r("PTTL", key + ":changes")),
                         ("not a list", -1), "another program's key, left alone")
        self.assertEqual(self.r("HGET", old, key), entry, "not moved, not lost")
        self.r("DEL", key + ":changes")
        self.assertEqual(self.sc("init", "o4", "6", "--force", "--ttl", "60").rc, 0)
        self.assertIsNone(self.r("HGET", old, key))
        self.assertEqual([e["actor"] for e in self.log("o4").lines][0], "old")
        # A slot hash of another type: nothing to move from it, the change is whole.
        self.r("DEL", old)
        self.r("SET", old, "x")
        self.r("SET", "stock:{o4}", "5")
        self.assertEqual(self.sc("init", "o4", "7", "--force", "--ttl", "60").rc, 0)
        self.assertEqual((self.r("GET", key), self.r("GET", old)), ("7", "x"))

    def test_first_entries_of_earlier_versions_are_read_moved_and_deleted(self):
        # Earlier versions kept a loaded item's first entry in a hash per slot.
        for sku in ("o1", "o2", "o3"):
            key = "stock:{%s}" % sku
            self.r("SET", key, "5")
            self.r("HSET", self.old_slot_log(key), key, "1764536400123-0\x1finit\x1f\x1f\x1f5\x1f\x1f\x1f3\x1fold")
        self.sc("deduct", "o1", "1")
        self.assertEqual([(e["change"], e["after"], e["actor"]) for e in self.log("o1").lines][0],
                         ("init", 5, "old"))
        self.assertEqual(len(self.log("o1").lines), 2)
        self.assertEqual(self.sc("init", "o2", "6", "--force", "--ttl", "60").rc, 0)
        self.assertFalse(self.r("HGET", self.old_slot_log("stock:{o2}"), "stock:{o2}"), "moved to the list")
        self.assertEqual([(e["change"], e["after"]) for e in self.log("o2").lines], [("init", 5), ("overwrite", 6)])
        self.assertEqual(self.sc("delete", "o3").rc, 0)
        self.assertFalse(self.r("HGET", self.old_slot_log("stock:{o3}"), "stock:{o3}"))
        self.assertEqual(self.log("o3").rc, 4)

    def test_a_key_lost_while_its_log_stayed_and_loaded_again_logs_in_time_order(self):
        # Another program (or an eviction) removes the stock key; a load creates it again. Its
        # entry goes to the slot's log without reading the list, and is shown by its time.
        self.sc("deduct", "w", "1", "--init-value", "5")
        self.r("DEL", "stock:{w}")
        self.assertEqual(self.sc("init", "--file", self.write("w.csv", "sku,stock\nw,9\n")).rc, 0)
        self.sc("deduct", "w", "2")
        got = [(e["change"], e["before"], e["after"]) for e in self.log("w").lines]
        self.assertEqual(got, [("init", None, 5), ("deduct", 5, 4), ("init", None, 9), ("deduct", 9, 7)])
        self.assertEqual([(e["change"], e["after"]) for e in self.log("w", "--limit", "2").lines],
                         [("init", 9), ("deduct", 7)])

    def test_missing_item_without_log_is_missing(self):
        res = self.log("ghost")
        self.assertEqual(res.rc, 4, res)
        self.assertEqual(res.stdout, '{"op":"log","sku":"ghost","key":"stock:{ghost}","status":"missing"}\n')
        self.r("SET", "stock:{quiet}", "3")  # written by another program: exists, no entries
        self.assertEqual((self.log("quiet").rc, self.log("quiet").stdout), (0, ""))

    def test_invalid_sku_is_refused(self):
        res = self.log("bad{x}")
        self.assertEqual(res.rc, 2, res)

    def test_entries_equal_changes_one_for_one_under_8_writers(self):
        # Each writer deducts and adds on the same two items; every applied change must be one
        # entry, and the entries must chain (each one's before is the previous one's after).
        skus = ("hot", "warm")
        for sku in skus:
            self.r("SET", "stock:{%s}" % sku, "200")
        rows = "".join("%s,%d\n" % (skus[i % 2], 1 + i % 3) for i in range(60))
        deduct = self.write("d.csv", "sku,qty\n" + rows)
        add = self.write("a.csv", "sku,qty\n" + rows[: len(rows) // 2])
        procs = [spawn("add" if w % 4 == 3 else "deduct", "--file", add if w % 4 == 3 else deduct,
                       "--actor", "w%d" % w, *self.target_args()) for w in range(WRITERS)]
        applied = {sku: [] for sku in skus}
        for p in procs:
            out, err = p.communicate(timeout=120)
            self.assertIn(p.returncode, (0, 3), err)
            for line in out.splitlines():
                r = json.loads(line)
                if r["status"] == "ok":
                    applied[r["sku"]].append((r["op"], r["qty"], r["stock"]))
        for sku in skus:
            entries = self.log(sku).lines
            self.assertEqual(sorted((e["change"], e["qty"], e["after"]) for e in entries),
                             sorted(applied[sku]))
            self.assertEqual(entries[0]["before"], 200)
            for prev, cur in zip(entries, entries[1:]):
                self.assertEqual(cur["before"], prev["after"])
            self.assertEqual(entries[-1]["after"], int(self.r("GET", "stock:{%s}" % sku)))

    def used_memory(self):
        """used_memory of the server, or summed over the cluster's primaries."""
        conns = [self.r._conn(p) for p in self.r.primaries()] if self.cluster else [self.r]
        return sum(int(re.search(r"used_memory:(\d+)", c("INFO", "memory")).group(1)) for c in conns)

    def load_cost(self, path, *extra):
        self.r("FLUSHALL")
        before = self.used_memory()
        res = self.sc("init", "--file", path, *extra)
        self.assertEqual(res.rc, 0, res)
        return self.used_memory() - before

    def test_a_load_with_the_log_costs_at_most_3x_the_memory_of_one_without(self):
        # A stream per item made this about 60x. Each item's first entry is a key of its own,
        # short enough with this 16-byte actor to be stored in one allocation (about 2.9x).
        n = 50000
        path = self.write("load.csv", "sku,stock\n" + "".join("SKU-%06d,%d\n" % (i, i % 1000) for i in range(n)))
        without = self.load_cost(path, "--no-log")
        with_log = self.load_cost(path, "--actor", "loader@host-1234")
        self.assertLess(with_log, 3 * without, (with_log / n, without / n))
        self.assertEqual(self.log("SKU-000123").one["after"], 123)
        self.assertEqual(self.r("EXISTS", "stock:{SKU-000123}:changes"), 0)  # no list yet

    def test_each_further_change_costs_at_most_about_200_bytes(self):
        n, changes = 2000, 10
        path = self.write("load.csv", "sku,stock\n" + "".join("i%d,100\n" % i for i in range(n)))
        self.load_cost(path, "--actor", "loader@host-1234")
        rows = self.write("d.csv", "sku,qty\n" + "".join("i%d,1\n" % i for i in range(n)) * changes)
        before = self.used_memory()
        res = self.sc("deduct", "--file", rows, "--actor", "loader@host-1234")
        self.assertEqual(res.rc, 0, res)
        per_entry = (self.used_memory() - before) / (n * changes)
        self.assertLess(per_entry, 200, per_entry)
        self.assertEqual([e["after"] for e in self.log("i7").lines], list(range(100, 89, -1)))

    def test_a_log_written_as_a_stream_by_an_earlier_version_is_read_and_deleted(self):
        stream = "stock:{old}:log"
        for change, qty, before, after in (("init", "", "", "5"), ("deduct", "1", "5", "4")):
            self.r("XADD", stream, "*", "change", change, "qty", qty, "before", before, "after", after,
                   "request_id", "", "actor", "v1", "reason", "")
        self.r("SET", "stock:{old}", "4")
        self.assertEqual(self.sc("deduct", "old", "1", "--actor", "v2").rc, 0)
        self.assertEqual(self.r("XLEN", stream), 2)  # never written again
        got = [(e["change"], e["before"], e["after"], e["actor"]) for e in self.log("old").lines]
        self.assertEqual(got, [("init", None, 5, "v1"), ("deduct", 5, 4, "v1"), ("deduct", 4, 3, "v2")])
        self.assertEqual([e["after"] for e in self.log("old", "--limit", "2").lines], [4, 3])
        self.assertEqual(self.sc("delete", "old").one["status"], "ok")
        self.assertEqual(self.r("DBSIZE"), 0)
        self.assertEqual(self.log("old").rc, 4)

    def test_delete_removes_the_items_whole_log_and_no_other(self):
        self.sc("init", "a", "5")
        self.sc("init", "b", "5")
        self.sc("deduct", "a", "1", "--request-id", "r1")
        self.sc("add", "b", "1")
        self.assertEqual(self.sc("delete", "a").one["status"], "ok")
        self.assertEqual(self.log("a").rc, 4)
        self.assertEqual([(e["change"], e["after"]) for e in self.log("b").lines], [("init", 5), ("add", 6)])
        self.assertEqual(self.sc("delete", "b").one["status"], "ok")
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_export_never_lists_log_keys_as_items(self):
        self.sc("init", "a", "5")
        self.sc("deduct", "a", "1")
        self.assertEqual([l["sku"] for l in self.sc("export").lines], ["a"])

    @standalone_only
    def test_bench_writes_no_log(self):
        res = self.sc("bench", "-c", "2", "-n", "200", "--items", "3")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("KEYS", "*log*"), [])
        self.assertEqual(self.r("KEYS", "*changes*"), [])

    @standalone_only
    def test_a_deduction_without_log_or_request_id_sends_the_stock_key_alone(self):
        self.r("SET", "stock:{k}", "10")
        mon = socket.create_connection(("127.0.0.1", self.server.port))
        mon.sendall(b"MONITOR\r\n")
        mon.recv(100)
        self.sc("deduct", "k", "1", "--no-log")
        self.sc("deduct", "k", "1")
        # A marker of our own ends the calls (stockctl sends PING itself).
        self.r("ECHO", "end-of-calls")
        seen = b""
        while b'"end-of-calls"' not in seen:
            seen += mon.recv(65536)
        mon.close()
        calls = [l for l in seen.split(b"\n") if b'"FCALL"' in l]
        self.assertIn(b'"1" "stock:{k}" "deduct"', calls[0])
        self.assertIn(b'"2" "stock:{k}" "stock:{k}:changes" "deduct"', calls[-1])


@unittest.skipIf(TARGET != "standalone", "starts its own one-node cluster")
class OneNodeCluster(unittest.TestCase):
    def test_a_load_on_a_one_node_cluster_writes_its_entries_by_msetnx(self):
        # CLUSTER SLOTS names such a node with an empty host ("the address you reached me
        # at"): its clock is read under the client's own name for it, once.
        node = RedisServer("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                           port_picker=free_cluster_port)
        try:
            c = node.client()
            c("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
            deadline = time.monotonic() + 30
            while "cluster_state:ok" not in c("CLUSTER", "INFO"):
                self.assertLess(time.monotonic(), deadline, "the cluster came up")
                time.sleep(0.05)
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "l.csv")
                with open(path, "w") as f:
                    f.write("sku,stock\n" + "".join("n%d,%d\n" % (i, i) for i in range(300)))
                res = run("init", "--file", path, "--url", node.url, "--cluster", "--retry-timeout", "3000")
            self.assertEqual((res.rc, res.one["counts"]["ok"]), (0, 300), res)
            self.assertEqual((calls_on(node, "time"), calls_on(node, "fcall")), (1, 0))
            self.assertGreater(calls_on(node, "msetnx"), 0)
            self.assertTrue(re.match(r"^\d+\x1finit\x1f7\x1f", c("GET", "stock:{n7}:first")))
            c.close()
        finally:
            node.stop()


if __name__ == "__main__":
    unittest.main()
