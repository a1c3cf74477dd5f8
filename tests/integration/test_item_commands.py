"""Every status and exit code of get, deduct, add and init for single items."""

import os
import shutil
import tempfile
import time
import unittest

from harness import RedisServer, ServerTest, free_port, keyslot, run


class Get(ServerTest):
    def test_ok_prints_the_stock(self):
        self.r("SET", "stock:{42}", "998")
        res = self.sc("get", "42")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.stdout, '{"op":"get","sku":"42","key":"stock:{42}","status":"ok","stock":998,"held":0}\n')

    def test_missing_exits_4(self):
        res = self.sc("get", "nope")
        self.assertEqual(res.rc, 4, res)
        self.assertEqual(res.one["status"], "missing")
        self.assertIsNone(res.one["stock"])

    def test_unlimited_has_null_stock(self):
        self.r("SET", "stock:{u}", "-1")
        res = self.sc("get", "u")
        self.assertEqual(res.rc, 0)
        self.assertEqual((res.one["status"], res.one["stock"]), ("unlimited", None))

    def test_corrupt_value_is_an_error_and_untouched(self):
        self.r("SET", "stock:{c}", "abc")
        res = self.sc("get", "c")
        self.assertEqual(res.rc, 1, res)
        self.assertEqual(res.one["status"], "error")
        self.assertIn("'abc'", res.one["error"])
        self.assertEqual(self.r("GET", "stock:{c}"), "abc")

    def test_several_items_in_input_order_most_serious_exit(self):
        self.r("SET", "stock:{a}", "1")
        self.r("SET", "stock:{c}", "3")
        res = self.sc("get", "a", "b", "c")
        self.assertEqual([l["sku"] for l in res.lines], ["a", "b", "c"])
        self.assertEqual([l["status"] for l in res.lines], ["ok", "missing", "ok"])
        self.assertEqual(res.rc, 4)

    def test_invalid_sku_gets_its_line_beside_the_valid_ones(self):
        res = self.sc("get", "ok", "bad{sku}")
        self.assertEqual(res.rc, 2, res)
        self.assertEqual([l["status"] for l in res.lines], ["missing", "invalid"])
        self.assertIn("item 'bad{sku}'", res.stderr)


class Deduct(ServerTest):
    def test_ok_returns_remaining(self):
        self.r("SET", "stock:{42}", "1000")
        res = self.sc("deduct", "42", "2")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.stdout, '{"op":"deduct","sku":"42","key":"stock:{42}","qty":2,"status":"ok","stock":998}\n')
        self.assertEqual(self.r("GET", "stock:{42}"), "998")

    def test_exact_stock_can_be_taken_to_zero(self):
        self.r("SET", "stock:{z}", "5")
        self.assertEqual(self.sc("deduct", "z", "5").one["stock"], 0)
        res = self.sc("deduct", "z", "1")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (3, "insufficient", 0))

    def test_insufficient_changes_nothing_and_carries_current_stock(self):
        self.r("SET", "stock:{42}", "3")
        res = self.sc("deduct", "42", "4")
        self.assertEqual(res.rc, 3, res)
        self.assertEqual((res.one["status"], res.one["stock"]), ("insufficient", 3))
        self.assertEqual(self.r("GET", "stock:{42}"), "3")

    def test_unlimited_never_changes(self):
        self.r("SET", "stock:{u}", "-1")
        res = self.sc("deduct", "u", "1000000")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "unlimited", None))
        self.assertEqual(self.r("GET", "stock:{u}"), "-1")

    def test_missing_without_init_source_is_uninitialized(self):
        res = self.sc("deduct", "m", "1")
        self.assertEqual((res.rc, res.one["status"]), (4, "uninitialized"))
        self.assertIsNone(self.r("GET", "stock:{m}"))

    def test_init_value_creates_then_deducts(self):
        res = self.sc("deduct", "m", "1", "--init-value", "10")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 9))
        self.assertEqual(self.r("GET", "stock:{m}"), "9")
        self.assertIsNone(self.r("GET", "stock:{m}:lock"), "the init lock is released")
        self.assertEqual(self.r("TTL", "stock:{m}"), -1)

    def test_init_value_never_overwrites_an_existing_key(self):
        self.r("SET", "stock:{m}", "3")
        res = self.sc("deduct", "m", "1", "--init-value", "100")
        self.assertEqual(res.one["stock"], 2)

    def test_init_insufficient_still_creates_the_key(self):
        res = self.sc("deduct", "m", "11", "--init-value", "10")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (3, "insufficient", 10))
        self.assertEqual(self.r("GET", "stock:{m}"), "10")

    def test_ttl_applies_to_keys_this_call_creates(self):
        self.sc("deduct", "t", "1", "--init-value", "10", "--ttl", "300")
        self.assertTrue(0 < self.r("TTL", "stock:{t}") <= 300)

    def test_init_from_file(self):
        path = self.write("init.csv", "sku,total,issued\nA,10,4\nB,5,0\n")
        res = self.sc("deduct", "A", "2", "--init-from", path)
        self.assertEqual((res.rc, res.one["stock"]), (0, 4), res)
        res = self.sc("deduct", "C", "2", "--init-from", path)
        self.assertEqual((res.rc, res.one["status"]), (1, "error"))
        self.assertIn("no row for item 'C'", res.one["error"])
        self.assertIsNone(self.r("GET", "stock:{C}"))

    def test_an_init_from_file_that_cannot_be_read_is_refused_at_once(self):
        # The file is opened only when a key is missing: a typo in a cron line would otherwise
        # show at the next cache loss. Refused even though A exists and needs no file.
        self.r("SET", "stock:{A}", "5")
        missing = os.path.join(self.tmp, "missing.csv")
        for args in (("deduct", "A", "1"), ("hold", "h1", "A=1")):
            res = self.sc(*args, "--init-from", missing)
            self.assertEqual((res.rc, res.stdout), (2, ""), res)
            self.assertIn("--init-from: cannot read '%s': No such file or directory" % missing,
                          res.stderr)
        # So are a directory, a name whose format cannot be told, and standard input read by
        # --file too.
        typo = self.write("stock.cvs", "sku,stock\nA,9\n")
        for extra, text in (((self.tmp, "--format", "csv"), "--init-from: cannot read %s: it is "
                                                           "a directory" % self.tmp),
                            ((typo,), "--init-from: %s: cannot tell the format" % typo)):
            for args in (("deduct", "A", "1"), ("hold", "h1", "A=1")):
                res = self.sc(*args, "--init-from", *extra)
                self.assertEqual((res.rc, res.stdout), (2, ""), (args, res))
                self.assertIn(text, res.stderr)
        res = self.sc("deduct", "--file", "-", "--init-from", "-", "--format", "csv",
                      input="sku,qty\nA,1\n")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("--init-from - and --file - cannot both read standard input", res.stderr)
        self.assertEqual(self.r("GET", "stock:{A}"), "5")

    def test_init_cmd_gets_sku_in_environment(self):
        res = self.sc("deduct", "x; touch pwned", "1", "--init-cmd", 'test "$STOCKCTL_SKU" = "x; touch pwned" && echo 7')
        self.assertEqual((res.rc, res.one["stock"]), (0, 6), res)

    def test_failing_init_cmd_creates_nothing(self):
        res = self.sc("deduct", "f", "1", "--init-cmd", "echo 12abc")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("nothing was created", res.one["error"])
        self.assertIsNone(self.r("GET", "stock:{f}"))
        res = self.sc("deduct", "f", "1", "--init-cmd", "exit 9")
        self.assertIn("exit status 9", res.one["error"])
        self.assertIsNone(self.r("GET", "stock:{f}"))
        self.assertIsNone(self.r("GET", "stock:{f}:lock"))

    def test_init_cmd_outliving_the_lock_is_stopped(self):
        res = self.sc("deduct", "s", "1", "--lock-ttl", "700", "--init-cmd", "sleep 20; echo 5")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("still running", res.one["error"])
        self.assertIsNone(self.r("GET", "stock:{s}"))

    def test_invalid_qty_is_exit_2_and_touches_nothing(self):
        self.r("SET", "stock:{q}", "10")
        for qty in ("0", "-3", "1.5", "9007199254740992", "x"):
            res = self.sc("deduct", "q", qty)
            self.assertEqual((res.rc, res.one["status"]), (2, "invalid"), (qty, res))
            self.assertIsNone(res.one["qty"])
        self.assertEqual(self.r("GET", "stock:{q}"), "10")

    def test_corrupt_stored_value_is_left_as_it_was(self):
        self.r("SET", "stock:{c}", "abc")
        res = self.sc("deduct", "c", "1")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"))
        self.assertIn("'abc'", res.one["error"])
        self.assertEqual(self.r("GET", "stock:{c}"), "abc")
        for corrupt in ("-5", "1.5", "007", "99999999999999999"):
            self.r("SET", "stock:{c}", corrupt)
            self.assertEqual(self.sc("deduct", "c", "1").rc, 1, corrupt)
            self.assertEqual(self.r("GET", "stock:{c}"), corrupt)

    def test_a_key_of_another_type_is_named_with_what_to_do(self):
        # Another program's list where the stock is: the message names the key and what to do,
        # never the place in our script that met it.
        self.r("RPUSH", "stock:{w}", "x")
        self.r("SET", "stock:{a}", "5")
        for args in (("get", "w"), ("deduct", "w", "1"), ("order", "o1", "a=1", "w=1"),
                     ("hold", "h1", "w=1")):
            res = self.sc(*args)
            self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
            self.assertIn("stock:{w} ", res.one["error"])
            self.assertIn("WRONGTYPE)", res.one["error"])
            self.assertNotIn("@user_function", res.stderr)
            self.assertNotIn("script:", res.stderr)
        res = self.sc("order", "o1", "a=1", "w=1")
        self.assertIn("item 'w': stock:{w} holds a list, not a stock value (a string; WRONGTYPE)",
                      res.one["error"])
        self.assertIn("; nothing was ordered", res.one["error"])
        self.assertEqual(self.r("GET", "stock:{a}"), "5")
        res = self.sc("deduct", "w", "1")
        self.assertIn("stock:{w} holds a list, not a stock value (a string; WRONGTYPE); nothing "
                      "changed", res.one["error"])
        # A change log of another type: the script skips its entry and makes its whole change
        # (a script is not rolled back), and the line says it was applied, so that nobody runs
        # it again.
        self.r("SET", "stock:{a}:changes", "not a list")
        res = self.sc("deduct", "a", "1")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (1, "error", None), res)
        self.assertIn("applied, but its change log entry was not written: stock:{a}:changes "
                      "holds another kind of value than the change log (a list; WRONGTYPE); the "
                      "change stays: see stockctl get before you run it again", res.one["error"])
        self.assertEqual(self.r("GET", "stock:{a}"), "4")
        # A refused deduction answers as a refusal, though it created its key on the way.
        self.r("SET", "stock:{n}:changes", "not a list")
        res = self.sc("deduct", "n", "10", "--init-value", "3")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (3, "insufficient", 3), res)
        # A load's rows answer each for itself; the list that took no entry is a warning.
        path = os.path.join(self.tmp, "load.csv")
        with open(path, "w") as f:
            f.write("sku,stock\nl1,1\nn,5\nl3,3\n")
        self.r("SET", "stock:{l3}:changes", "not a list")
        res = self.sc("init", "--file", path, "--ttl", "1000", "--report", "-")
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines[:3]],
                         [("l1", "ok"), ("n", "exists"), ("l3", "ok")], res)
        self.assertEqual(self.r("GET", "stock:{l3}"), "3")
        self.assertIn("its change log entry was not written: stock:{l3}:changes", res.stderr)
        self.assertEqual(self.sc("deduct", "a", "1", "--no-log").one["stock"], 3)
        self.r("DEL", "stock:{a}:changes")
        ledger = "stock:{a}:ids:86400:%d" % (int(time.time()) // 86400)
        self.r("SET", ledger, "x")
        res = self.sc("deduct", "a", "1", "--request-id", "r1")
        self.assertIn("%s holds a string, not a request ledger (a hash; WRONGTYPE); nothing "
                      "changed" % ledger, res.one["error"])
        self.assertEqual(self.r("GET", "stock:{a}"), "3")

    def test_largest_values_are_exact(self):
        self.r("SET", "stock:{big}", "9007199254740991")
        res = self.sc("deduct", "big", "9007199254740990")
        self.assertEqual(res.one["stock"], 1)


class Add(ServerTest):
    def test_adds_to_existing(self):
        self.r("SET", "stock:{a}", "5")
        res = self.sc("add", "a", "3")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 8))

    def test_missing_key_without_init_source_is_missing_and_nothing_is_created(self):
        # After a cache loss a restock must not create the key with just QTY.
        res = self.sc("add", "new", "4")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (4, "missing", None), res)
        for key in ("stock:{new}", "stock:{new}:lock", "stock:{new}:log"):
            self.assertEqual(self.r("EXISTS", key), 0, key)
        if not self.cluster:
            self.assertEqual(self.r("DBSIZE"), 0, "no key at all")

    def test_add_file_reports_missing_keys_and_creates_none(self):
        self.r("SET", "stock:{a}", "5")
        path = self.write("add.csv", "sku,qty\na,1\ngone,2\na,1\n")
        res = self.sc("add", "--file", path, "--no-log")
        self.assertEqual(res.rc, 4, res)
        self.assertEqual([(l["sku"], l["status"], l["stock"]) for l in res.lines],
                         [("a", "ok", 6), ("gone", "missing", None), ("a", "ok", 7)])
        for key in ("stock:{gone}", "stock:{gone}:lock", "stock:{gone}:log"):
            self.assertEqual(self.r("EXISTS", key), 0, key)

    def test_add_file_with_init_source_creates_init_plus_qty(self):
        path = self.write("add.csv", "sku,qty\nnew,2\nnew,3\n")
        res = self.sc("add", "--file", path, "--init-value", "10")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([l["stock"] for l in res.lines], [12, 15])
        self.assertIsNone(self.r("GET", "stock:{new}:lock"))

    def test_missing_key_with_init_source_gets_init_plus_qty(self):
        res = self.sc("add", "new", "4", "--init-value", "10")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 14), res)
        self.assertEqual(self.r("GET", "stock:{new}"), "14")
        self.assertIsNone(self.r("GET", "stock:{new}:lock"))

    def test_unlimited_stays_unlimited(self):
        self.r("SET", "stock:{u}", "-1")
        res = self.sc("add", "u", "4")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "unlimited", None))
        self.assertEqual(self.r("GET", "stock:{u}"), "-1")

    def test_overflow_past_2_53_is_refused(self):
        self.r("SET", "stock:{a}", "9007199254740990")
        res = self.sc("add", "a", "2")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertEqual(self.r("GET", "stock:{a}"), "9007199254740990")
        self.assertEqual(self.sc("add", "a", "1").one["stock"], 9007199254740991)

    def test_corrupt_is_untouched(self):
        self.r("SET", "stock:{c}", "abc")
        self.assertEqual(self.sc("add", "c", "1").rc, 1)
        self.assertEqual(self.r("GET", "stock:{c}"), "abc")


class Init(ServerTest):
    def test_creates_missing(self):
        res = self.sc("init", "42", "100")
        self.assertEqual(res.rc, 0)
        self.assertEqual(res.stdout, '{"op":"init","sku":"42","key":"stock:{42}","status":"ok","stock":100}\n')

    def test_existing_is_reported_with_its_stock_and_left_alone(self):
        self.r("SET", "stock:{42}", "7")
        res = self.sc("init", "42", "100")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "exists", 7))
        self.assertEqual(self.r("GET", "stock:{42}"), "7")

    def test_force_overwrites(self):
        self.r("SET", "stock:{42}", "7")
        res = self.sc("init", "42", "100", "--force")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 100))
        self.assertEqual(self.r("GET", "stock:{42}"), "100")

    def test_negative_one_and_unlimited_mean_unlimited(self):
        # One word for unlimited stock, as get says it; exit 0 as for ok.
        res = self.sc("init", "a", "-1")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "unlimited", None))
        self.assertEqual(self.r("GET", "stock:{a}"), "-1")
        self.assertEqual(self.sc("get", "a").one["status"], "unlimited")
        res = self.sc("init", "b", "unlimited")
        self.assertEqual((res.rc, res.one["status"]), (0, "unlimited"))
        self.assertEqual(self.r("GET", "stock:{b}"), "-1")
        # A forced overwrite with unlimited says what it replaced.
        res = self.sc("init", "b", "-1", "--force")
        self.assertEqual((res.rc, res.one["status"], res.one["previous"]), (0, "unlimited", -1))

    def test_invalid_values(self):
        for value in ("-2", "1.5", "lots", "9007199254740992"):
            res = self.sc("init", "v", value)
            self.assertEqual((res.rc, res.one["status"]), (2, "invalid"), value)
        self.assertIsNone(self.r("GET", "stock:{v}"))

    def test_ttl(self):
        self.sc("init", "t", "5", "--ttl", "100")
        self.assertTrue(0 < self.r("TTL", "stock:{t}") <= 100)


class KeyLayout(ServerTest):
    def test_prefix(self):
        self.sc("init", "42", "5", "--prefix", "inv:")
        self.assertEqual(self.r("GET", "inv:{42}"), "5")

    def test_no_hashtag_and_its_lock_share_a_slot(self):
        res = self.sc("deduct", "42", "1", "--prefix", "redis_key:stock:", "--no-hashtag", "--init-value", "5")
        self.assertEqual(res.one["key"], "redis_key:stock:42")
        self.assertEqual(self.r("GET", "redis_key:stock:42"), "4")
        self.assertEqual(keyslot("redis_key:stock:42"), keyslot("{redis_key:stock:42}:lock"))
        self.assertEqual(keyslot("123456789"), 12739)  # the Redis Cluster spec's check value

    def test_no_hashtag_rejects_a_stray_brace(self):
        res = self.sc("get", "a}b", "--no-hashtag")
        self.assertEqual(res.rc, 2)

    def test_unicode_quotes_and_spaces_in_skus(self):
        sku = 'caf\u00e9 "x" y'
        self.assertEqual(self.sc("init", sku, "3").rc, 0)
        res = self.sc("get", sku)
        self.assertEqual((res.one["sku"], res.one["stock"]), (sku, 3))


class Unconnected(ServerTest):
    """Every item a command was asked about gets its line when the command cannot log in or
    connect: status error with the reason, one stockctl: error line, exit 1."""

    server_kwargs = {"password": "s3cret-pw"}

    def assert_lines(self, res, key, names, not_applied=True):
        self.assertEqual(res.rc, 1, res)
        self.assertEqual(len(res.stderr.splitlines()), 1, res)
        self.assertIn("NOAUTH", res.stderr)
        self.assertEqual([l[key] for l in res.lines], names, res)
        for line in res.lines:
            self.assertEqual(line["status"], "error", line)
            self.assertIn("NOAUTH", line["error"])
            self.assertEqual(line["error"].startswith("not applied: "), not_applied, line)
            self.assertNotIn("s3cret-pw", line["error"])
        return res.lines

    def test_get_prints_a_line_per_sku(self):
        lines = self.assert_lines(self.sc("get", "A", "B"), "sku", ["A", "B"], not_applied=False)
        self.assertEqual((lines[0]["key"], lines[0]["stock"], lines[0]["held"]), ("stock:{A}", None, None))

    def test_an_invalid_sku_keeps_its_own_line(self):
        res = self.sc("get", "A", "{x}")
        self.assertEqual(res.rc, 1, res)
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines], [("A", "error"), ("{x}", "invalid")])
        self.assertEqual(len(res.stderr.splitlines()), 2, res)

    def test_get_file_and_standard_input_print_a_line_per_sku(self):
        # Read window by window: the rows after the connection failed get their lines too.
        skus = ["A", "B"] + ["s%d" % n for n in range(2500)]  # three windows of 1,024
        plain = self.write("skus.txt", "".join(s + "\n" for s in skus))
        source = self.write("skus.csv", "sku,stock\n" + "".join(s + ",1\n" for s in skus))
        for res in (self.sc("get", "--file", plain), self.sc("get", "--file", source),
                    self.sc("get", "-", input="".join(s + "\n" for s in skus))):
            lines = self.assert_lines(res, "sku", skus, not_applied=False)
            self.assertEqual((lines[0]["key"], lines[0]["stock"]), ("stock:{A}", None))

    def test_get_file_keeps_an_invalid_row_in_its_place(self):
        path = self.write("skus.txt", "A\n{x}\nB\n")
        res = self.sc("get", "--file", path)
        self.assertEqual(res.rc, 1, res)
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines],
                         [("A", "error"), ("{x}", "invalid"), ("B", "error")], res)
        self.assertEqual(len(res.stderr.splitlines()), 2, res)  # the invalid row; the login

    def test_deduct_add_init_delete(self):
        for args in (("deduct", "A", "2"), ("add", "A", "2"), ("init", "A", "5")):
            line = self.assert_lines(self.sc(*args), "sku", ["A"])[0]
            self.assertEqual((line["op"], line["key"], line["stock"]), (args[0], "stock:{A}", None))
            if args[0] != "init":
                self.assertEqual(line["qty"], 2)
        self.assert_lines(self.sc("delete", "A", "B"), "sku", ["A", "B"])
        self.assertEqual(self.r("GET", "stock:{A}"), None)

    def test_log(self):
        line = self.assert_lines(self.sc("log", "A"), "sku", ["A"], not_applied=False)[0]
        self.assertEqual((line["op"], line["key"]), ("log", "stock:{A}"))

    def test_holds_orders_and_settles(self):
        line = self.assert_lines(self.sc("hold", "c1", "A=1", "B=2"), "id", ["c1"])[0]
        self.assertEqual(line["op"], "hold")
        self.assert_lines(self.sc("order", "o1", "A=1"), "id", ["o1"])
        path = self.write("carts.csv", "id,sku,qty\nc1,A,1\nc2,B,1\nc1,B,1\n")
        self.assert_lines(self.sc("hold", "--file", path), "id", ["c1", "c2"])
        for action in ("confirm", "release", "cancel"):
            self.assert_lines(self.sc(action, "c1", "c2"), "id", ["c1", "c2"])


class Refused(unittest.TestCase):
    def test_nothing_listening_still_prints_each_item(self):
        url = "redis://127.0.0.1:%d" % free_port()
        for args, key, names in ((("get", "A", "B"), "sku", ["A", "B"]),
                                 (("deduct", "A", "1"), "sku", ["A"]),
                                 (("confirm", "c1"), "id", ["c1"])):
            res = run(*args, "--url", url, "--retry-timeout", "100")
            self.assertEqual(res.rc, 1, res)
            self.assertEqual([(l[key], l["status"]) for l in res.lines],
                             [(n, "error") for n in names], res)
            self.assertIn("cannot connect to", res.lines[0]["error"])
            self.assertEqual(len(res.stderr.splitlines()), 1, res)

    def test_a_refused_tls_handshake_still_prints_each_row_of_a_file(self):
        # TLS spoken to a plain port: no connection, found once; every row still gets its line.
        server = RedisServer(tls=False)
        self.addCleanup(server.stop)
        tmp = tempfile.mkdtemp(prefix="stockctl-test-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "rows.csv")
        with open(path, "w") as f:
            f.write("sku,qty\na,1\nb,1\n")
        url = "rediss://127.0.0.1:%d" % server.port
        for args, words in ((("get", "--file", path), ""),
                            (("deduct", "--file", path), "not applied: ")):
            res = run(*args, "--url", url, "--insecure")
            self.assertEqual(res.rc, 1, res)
            self.assertEqual([(l["sku"], l["status"]) for l in res.lines],
                             [("a", "error"), ("b", "error")], res)
            self.assertTrue(res.lines[0]["error"].startswith(words + "TLS handshake with"), res)
            self.assertEqual(len(res.stderr.splitlines()), 1, res)


if __name__ == "__main__":
    unittest.main()
