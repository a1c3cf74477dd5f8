"""delete: the stock key and every companion key go, nothing of the item is left."""

import re
import time
import unittest

from harness import ServerTest, standalone_only


class Delete(ServerTest):
    def keys(self):
        return sorted(k for p in self.primary_clients() for k in p("KEYS", "*"))

    def primary_clients(self):
        if not self.cluster:
            return [self.r]
        return [self.r._conn(port) for port in self.r.primaries()]

    def test_removes_stock_lock_ledger_and_log(self):
        self.sc("init", "a", "10")
        self.sc("deduct", "a", "1", "--request-id", "r1")
        self.sc("deduct", "a", "1", "--request-id", "r2", "--request-ttl", "60")
        self.r("SET", "stock:{a}:req:r0", "deduct 1 11 11")  # the one-key-per-id ledger of earlier versions
        self.r("SET", "stock:{a}:lock", "token")
        self.sc("init", "ab", "1", "--no-log")
        self.sc("deduct", "ab", "1", "--request-id", "r1", "--no-log")
        res = self.sc("delete", "a")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.stdout, '{"op":"delete","sku":"a","key":"stock:{a}","status":"ok","stock":null,'
                                     '"held":0,"previous":8}\n')
        self.assertEqual([re.sub(r":\d+$", "", k) for k in self.keys()], ["stock:{ab}", "stock:{ab}:ids:86400"])
        self.assertEqual(self.sc("log", "a").rc, 4)

    def test_each_line_says_what_it_removed(self):
        self.sc("init", "a", "10")
        self.sc("init", "u", "unlimited")
        self.r("SET", "stock:{bad}", "x7")
        self.assertEqual(self.sc("hold", "cart-1", "a=3", "--expire", "600").rc, 0)
        res = self.sc("delete", "a", "u", "bad", "none", "--force")
        self.assertEqual(res.rc, 4, res)
        got = [(l["sku"], l["status"], l["stock"], l["held"], l["previous"]) for l in res.lines]
        self.assertEqual(got, [("a", "ok", None, 3, 7), ("u", "ok", None, 0, -1),
                               ("bad", "ok", None, 0, "x7"), ("none", "missing", None, 0, None)])
        self.assertEqual([k for k in self.keys() if k.startswith("stock:")], [])
        # What the line says is enough to put the item back by hand: its stock, then its holds.
        self.sc("init", "a", str(7 + 3))
        self.assertEqual(self.sc("get", "a").one["stock"], 10)

    @standalone_only
    def test_the_units_of_expired_holds_count_as_the_stock_removed(self):
        self.sc("init", "a", "10")
        hold = self.sc("hold", "h", "a=4", "--expire", "1").one
        while True:  # until the server's clock, which decides expiry, has passed the hold's
            seconds, micros = self.r("TIME")
            if int(seconds) * 1000 + int(micros) // 1000 >= hold["expires_at_ms"]:
                break
            time.sleep(0.05)
        self.assertEqual(self.r("GET", "stock:{a}"), "6")  # as stored: not given back yet
        res = self.sc("delete", "a")
        self.assertEqual((res.rc, res.one["previous"], res.one["held"]), (0, 10, 0), res)

    def test_ok_and_missing_in_order(self):
        self.r("SET", "stock:{x}", "1")
        res = self.sc("delete", "x", "y")
        self.assertEqual(res.rc, 4, res)
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines], [("x", "ok"), ("y", "missing")])

    def test_a_missing_item_loses_its_leftover_companions_too(self):
        self.r("SET", "stock:{gone}:lock", "token")
        self.assertEqual(self.sc("delete", "gone").one["status"], "missing")
        self.assertEqual(self.keys(), [])

    def test_an_invalid_sku_deletes_nothing(self):
        self.r("SET", "stock:{x}", "1")
        res = self.sc("delete", "x", "bad{y}")
        self.assertEqual(res.rc, 2, res)
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines], [("bad{y}", "invalid")])
        self.assertIn("item 'bad{y}': ", res.stderr)
        self.assertIn("nothing was deleted", res.stderr)
        self.assertEqual(self.r("GET", "stock:{x}"), "1")

    def test_classic_layout_with_and_without_a_tag_in_the_key(self):
        classic = ("--prefix", "redis_key:stock:", "--no-hashtag")
        for sku in ("1001", "a{t}b"):
            self.sc("init", sku, "5", *classic)
            self.sc("deduct", sku, "1", "--request-id", "r", *classic)
        self.sc("init", "1001x", "5", *classic)
        res = self.sc("delete", "1001", "a{t}b", *classic)
        self.assertEqual([l["status"] for l in res.lines], ["ok", "ok"])
        # What is left is the other item, and its first log entry.
        self.assertEqual(self.keys(), ["redis_key:stock:1001x", "{redis_key:stock:1001x}:first"])

    def test_an_earlier_versions_item_named_like_a_late_companion_is_left_alone(self):
        # Under a prefix with a hash tag and --no-hashtag, item "x:first" has the key that is
        # now item x's first log entry; earlier versions let such items be created.
        tagged = ("--prefix", "{t}:", "--no-hashtag")
        self.r("SET", "{t}:x:first", "5")
        self.r("SET", "{t}:x:kept-logs", "6")
        self.assertEqual(self.sc("init", "x", "3", *tagged).rc, 0)
        self.assertEqual(self.r("GET", "{t}:x:first"), "5")
        self.assertEqual([(e["change"], e["after"]) for e in self.sc("log", "x", *tagged).lines],
                         [("init", 3)])
        self.assertEqual(self.sc("init", "x", "4", "--force", "--ttl", "100", *tagged).rc, 0)
        self.assertEqual(self.r("TTL", "{t}:x:first"), -1)
        self.assertEqual(self.sc("delete", "x", *tagged).rc, 0)
        self.assertEqual(self.r("MGET", "{t}:x:first", "{t}:x:kept-logs"), ["5", "6"])
        self.assertEqual(self.sc("log", "x", *tagged).rc, 4)
        # Such ids are refused now, as every other companion's suffix is.
        res = self.sc("get", "x:first", *tagged)
        self.assertIn("would read as a companion key", res.lines[0]["error"])

    def test_an_item_in_stockctls_own_namespace_is_refused(self):
        # With --no-hashtag, prefix stockctl and item :wait-mark spell the mark that a bulk run
        # waiting for a replica sets and deletes; no item key may be one of stockctl's.
        self.r("SET", "stockctl:wait-mark", "5")
        for args in (("init", ":wait-mark", "3", "--force"), ("deduct", ":wait-mark", "1"),
                     ("delete", ":wait-mark")):
            res = self.sc(*args, "--prefix", "stockctl", "--no-hashtag")
            self.assertEqual(res.rc, 2, res)
            self.assertIn("key 'stockctl:wait-mark' is in stockctl's own namespace", res.stderr)
        self.assertEqual(self.r("GET", "stockctl:wait-mark"), "5")
        # A prefix there is refused at the start: a scan would find nothing and call it done.
        self.r("SET", "stockctl:shop:{A}", "7")  # as an earlier version could write it
        for args in (("export", "--prefix", "stockctl:shop:"), ("doctor", "--scan", "--prefix", "stockctl:shop:"),
                     ("bench", "--bench-prefix", "stockctl:", "-n", "1")):
            res = self.sc(*args)
            self.assertEqual((res.rc, res.stdout), (2, ""), res)
            self.assertIn("starts with stockctl:, the namespace of stockctl's own keys", res.stderr)
        self.assertEqual(self.r("GET", "stockctl:shop:{A}"), "7")


if __name__ == "__main__":
    unittest.main()
