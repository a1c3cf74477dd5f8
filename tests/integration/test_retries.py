"""Idempotent requests, retries of unknown outcomes, and --wait-replicas, on a standalone server."""

import json
import os
import re
import shutil
import signal
import socket
import threading
import tempfile
import time
import unittest

from harness import (TARGET, RedisServer, RespError, ServerTest, calls_on, free_port, lua_script,
                     replica_stopped_past_timeout, run, spawn, standalone_only)


class RequestIds(ServerTest):
    def test_a_repeat_returns_the_first_answer_and_changes_nothing(self):
        self.r("SET", "stock:{a}", "10")
        first = self.sc("deduct", "a", "3", "--request-id", "order-77")
        self.assertEqual((first.rc, first.one["stock"]), (0, 7))
        self.assertNotIn("replayed", first.one)
        self.r("SET", "stock:{a}", "100")  # whatever happens meanwhile
        again = self.sc("deduct", "a", "3", "--request-id", "order-77")
        self.assertEqual((again.rc, again.one["status"], again.one["stock"], again.one["replayed"]),
                         (0, "ok", 7, True))
        self.assertEqual(self.r("GET", "stock:{a}"), "100")

    def test_another_op_or_qty_with_the_same_id_is_a_conflict(self):
        self.r("SET", "stock:{a}", "10")
        self.sc("deduct", "a", "3", "--request-id", "r1")
        for args in (("deduct", "a", "4"), ("add", "a", "3")):
            res = self.sc(*args, "--request-id", "r1")
            self.assertEqual((res.rc, res.one["status"]), (2, "conflict"), args)
            self.assertIn("request id 'r1' was already used", res.one["error"])
        self.assertEqual(self.r("GET", "stock:{a}"), "7")

    def test_ids_are_per_item(self):
        self.r("MSET", "stock:{a}", "10", "stock:{b}", "10")
        self.sc("deduct", "a", "1", "--request-id", "same")
        res = self.sc("deduct", "b", "1", "--request-id", "same")
        self.assertNotIn("replayed", res.one)
        self.assertEqual(self.r("MGET", "stock:{a}", "stock:{b}"), ["9", "9"])

    def test_insufficient_is_replayed_too(self):
        self.r("SET", "stock:{a}", "1")
        self.assertEqual(self.sc("deduct", "a", "2", "--request-id", "x").rc, 3)
        self.r("SET", "stock:{a}", "50")
        res = self.sc("deduct", "a", "2", "--request-id", "x")
        self.assertEqual((res.rc, res.one["status"], res.one["replayed"]), (3, "insufficient", True))
        self.assertEqual(self.r("GET", "stock:{a}"), "50")

    def test_uninitialized_is_not_recorded_so_a_retry_with_init_proceeds(self):
        self.assertEqual(self.sc("deduct", "n", "1", "--request-id", "y").rc, 4)
        res = self.sc("deduct", "n", "1", "--request-id", "y", "--init-value", "5")
        self.assertEqual((res.rc, res.one["stock"]), (0, 4))
        self.assertTrue(self.sc("deduct", "n", "1", "--request-id", "y").one["replayed"])

    def test_request_ttl_bounds_the_ledger(self):
        # The ledger of the current generation (Unix time / --request-ttl) holds the record and
        # expires two generations after its first record.
        self.r("SET", "stock:{a}", "5")
        before = int(time.time()) // 120
        self.sc("add", "a", "1", "--request-id", "z", "--request-ttl", "120")
        after = int(time.time()) // 120
        keys = ["stock:{a}:ids:120:%d" % g for g in sorted({before, after})]
        held = [k for k in keys if self.r("HGET", k, "z") == "add 1 5"]
        self.assertEqual(len(held), 1, keys)
        ttl = self.r("TTL", held[0])
        self.assertTrue(120 < ttl <= 240, ttl)

    def test_an_id_is_remembered_for_request_ttl_then_forgotten(self):
        self.r("SET", "stock:{e}", "100")
        started = time.monotonic()
        self.assertEqual(self.sc("deduct", "e", "1", "--request-id", "t", "--request-ttl", "2").one["stock"], 99)
        deadline = started + 60
        while True:
            res = self.sc("deduct", "e", "1", "--request-id", "t", "--request-ttl", "2")
            self.assertEqual(res.rc, 0, res)
            if not res.one.get("replayed"):
                break
            self.assertEqual(res.one["stock"], 99)
            self.assertLess(time.monotonic(), deadline, "the id was never forgotten")
            time.sleep(0.2)
        # Applied again: never less than --request-ttl after the first time.
        self.assertGreaterEqual(time.monotonic() - started, 2)
        self.assertEqual(self.r("GET", "stock:{e}"), "98")

    def test_replays_of_add_unlimited_and_a_key_gone_since(self):
        self.r("MSET", "stock:{u}", "-1", "stock:{v}", "5")
        self.assertEqual(self.sc("deduct", "u", "3", "--request-id", "q").one["status"], "unlimited")
        self.assertEqual(self.sc("add", "v", "3", "--request-id", "q").one["stock"], 8)
        self.r("DEL", "stock:{v}")
        for args, status, stock in ((("deduct", "u", "3"), "unlimited", None), (("add", "v", "3"), "ok", 8)):
            res = self.sc(*args, "--request-id", "q")
            self.assertEqual((res.one["status"], res.one["stock"], res.one["replayed"]), (status, stock, True), args)
        self.assertIsNone(self.r("GET", "stock:{v}"))

    def test_the_script_finds_an_id_one_generation_later_and_forgets_it_two_later(self):
        # The caller names the ledger of the current generation, the previous and the next one.
        src = lua_script("stock-2.lua")
        self.r("SET", "{g}s", "10")

        def deduct(generation, qty="1"):
            return self.r("EVAL", src, 4, "{g}s", "{g}ids:%d" % generation, "{g}ids:%d" % (generation - 1),
                          "{g}ids:%d" % (generation + 1), "deduct", qty, "id-1", "100")

        self.assertEqual(deduct(7), 9)
        self.assertEqual(self.r("HGET", "{g}ids:7", "id-1"), "deduct 1 10")
        self.assertTrue(0 < self.r("TTL", "{g}ids:7") <= 100)
        self.assertEqual(deduct(7), [9, 9, 1])
        self.assertEqual(deduct(8), [9, 9, 1])  # found in the previous generation
        with self.assertRaises(RespError) as e:
            deduct(8, "2")
        self.assertIn("STOCKCTL_CONFLICT deduct 1 10", str(e.exception))
        self.assertEqual(self.r("GET", "{g}s"), "9")
        self.assertFalse(self.r("EXISTS", "{g}ids:8"))  # a repeat writes nothing
        self.assertEqual(deduct(9), 8)  # two generations on: applied again
        self.assertEqual(self.r("HGET", "{g}ids:9", "id-1"), "deduct 1 9")

    def test_the_script_finds_an_id_recorded_by_a_caller_whose_clock_runs_ahead(self):
        # Two machines repeat each other's ids; one's clock is already in the next generation.
        src = lua_script("stock-2.lua")
        self.r("SET", "{k}s", "10")

        def deduct(generation, qty="1"):
            return self.r("EVAL", src, 4, "{k}s", "{k}ids:%d" % generation, "{k}ids:%d" % (generation - 1),
                          "{k}ids:%d" % (generation + 1), "deduct", qty, "id-1", "100")

        self.assertEqual(deduct(8), 9)  # the machine ahead
        self.assertEqual(deduct(7), [9, 9, 1])  # the machine behind: a replay, not a second deduction
        with self.assertRaises(RespError) as e:
            deduct(7, "2")
        self.assertIn("STOCKCTL_CONFLICT deduct 1 10", str(e.exception))
        self.assertEqual(self.r("GET", "{k}s"), "9")
        self.assertFalse(self.r("EXISTS", "{k}ids:7"))

    def test_a_split_buckets_short_answer_is_not_recorded_when_asked(self):
        # A split item's bucket (ARGV[10] "short-unrecorded"): too little answers -2 and leaves
        # the id free, so the same id deducts once units arrive; a first record still answers.
        src = lua_script("stock-2.lua")
        self.r("SET", "{b}s", "1")

        def deduct(request_id, qty, flag):
            args = ["deduct", qty, request_id, "100"] + (["", "0", "", "", "", "short-unrecorded"] if flag else [])
            return self.r("EVAL", src, 4, "{b}s", "{b}ids:7", "{b}ids:6", "{b}ids:8", *args)

        self.assertEqual(deduct("id-1", "2", True), [-2, 1, 0])
        self.assertFalse(self.r("HEXISTS", "{b}ids:7", "id-1"))
        self.r("INCRBY", "{b}s", "4")
        self.assertEqual(deduct("id-1", "2", True), 3)
        self.assertEqual(deduct("id-1", "2", True), [3, 3, 1])  # now a repeat
        self.assertEqual(deduct("id-2", "9", False), [-2, 3, 0])  # without the flag: recorded
        self.r("INCRBY", "{b}s", "10")
        self.assertEqual(deduct("id-2", "9", True), [-2, 3, 1])  # its first answer stands
        self.assertEqual(self.r("GET", "{b}s"), "13")

    def test_the_ledger_gets_its_expiry_from_the_call_that_creates_it_only(self):
        src = lua_script("stock-2.lua")
        self.r("SET", "{x}s", "10")

        def deduct(request_id, ledger="{x}ids:7"):
            return self.r("EVAL", src, 4, "{x}s", ledger, "{x}ids:6", "{x}ids:8", "deduct", "1", request_id, "100")

        deduct("id-1")
        self.assertTrue(0 < self.r("TTL", "{x}ids:7") <= 100)
        self.r("EXPIRE", "{x}ids:7", "5000")
        deduct("id-2")
        self.assertGreater(self.r("TTL", "{x}ids:7"), 100)  # a later record leaves it alone
        # A ledger an earlier version created ("" -> "", its expiry set) takes records as it is.
        self.r("HSET", "{x}ids:9", "", "", "old", "deduct 1 10")
        self.r("EXPIRE", "{x}ids:9", "5000")
        self.assertEqual(deduct("id-3", "{x}ids:9"), 7)
        self.assertEqual(deduct("old", "{x}ids:9"), [9, 9, 1])
        self.assertGreater(self.r("TTL", "{x}ids:9"), 100)
        self.assertEqual(self.r("GET", "{x}s"), "7")

    def test_a_ledger_is_a_hash_table_unless_the_previous_one_was_small(self):
        # A listpack is searched field by field: with a few hundred ids per generation, lookups
        # in it cost more than the rest of the call. A quiet item keeps the compact listpack.
        src = lua_script("stock-2.lua")
        self.r("SET", "{h}s", "1000")

        def deduct(generation, request_id):
            self.r("EVAL", src, 4, "{h}s", "{h}ids:%d" % generation, "{h}ids:%d" % (generation - 1),
                   "{h}ids:%d" % (generation + 1), "deduct", "1", request_id, "100")

        deduct(7, "a")  # no previous generation: a hash table from the first id
        self.assertEqual(self.r("OBJECT", "ENCODING", "{h}ids:7"), "hashtable")
        deduct(8, "b")  # the previous one held one id
        self.assertEqual(self.r("OBJECT", "ENCODING", "{h}ids:8"), "listpack")
        for n in range(40):
            deduct(8, "c%d" % n)
        self.assertEqual(self.r("OBJECT", "ENCODING", "{h}ids:8"), "listpack")
        deduct(9, "d")  # the previous one held 41 ids
        self.assertEqual(self.r("OBJECT", "ENCODING", "{h}ids:9"), "hashtable")
        self.assertEqual(self.r("HLEN", "{h}ids:8"), 42)  # the ids and the field ""
        self.assertEqual(self.r("GET", "{h}s"), str(1000 - 43))

    def test_same_id_from_8_processes_deducts_once(self):
        self.r("SET", "stock:{c}", "100")
        procs = [spawn("deduct", "c", "5", "--request-id", "dup", *self.target_args())
                 for _ in range(8)]
        answers = []
        for p in procs:
            out, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 0, err)
            answers.append(json.loads(out))
        self.assertEqual({a["stock"] for a in answers}, {95})
        self.assertEqual(sum(not a.get("replayed", False) for a in answers), 1)
        self.assertEqual(self.r("GET", "stock:{c}"), "95")

    def test_invalid_request_id(self):
        res = self.sc("deduct", "a", "1", "--request-id", "bad\tid")
        self.assertEqual((res.rc, res.one["status"]), (2, "invalid"))

    def test_a_request_id_with_white_space_around_it_is_refused_or_trimmed(self):
        # 'crid ' would be another id than 'crid': a retry that adds a space would apply again.
        self.r("SET", "stock:{a}", "10")
        self.assertEqual(self.sc("deduct", "a", "1", "--request-id", "crid").one["stock"], 9)
        res = self.sc("deduct", "a", "1", "--request-id", "crid ")
        self.assertEqual((res.rc, res.one["status"]), (2, "invalid"), res)
        self.assertIn("request id 'crid ' has white space at its start or end", res.one["error"])
        again = self.sc("deduct", "a", "1", "--request-id", " crid", "--trim")
        self.assertEqual((again.rc, again.one["stock"], again.one.get("replayed")), (0, 9, True), again)
        self.assertEqual(self.r("GET", "stock:{a}"), "9")


@standalone_only
class UnknownOutcome(ServerTest):
    def blocked_deduct(self, *extra):
        """Starts a deduction that the server holds (CLIENT PAUSE WRITE), then drops its
        connection before it runs: the client sees a dropped connection, outcome unknown."""
        self.r("SET", "stock:{u}", "10")
        self.r("CLIENT", "PAUSE", "1500", "WRITE")
        proc = spawn("deduct", "u", "1", *self.target_args(), *extra)
        deadline = time.monotonic() + 30
        while "cmd=fcall" not in self.r("CLIENT", "LIST"):
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.01)  # polling the server's client list, bounded by the deadline
        self.r("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        out, err = proc.communicate(timeout=60)
        return proc.returncode, json.loads(out), err

    def test_with_a_request_id_it_is_retried_and_applied_once(self):
        rc, item, err = self.blocked_deduct("--request-id", "drop-1")
        self.assertEqual((rc, item["status"], item["stock"]), (0, "ok", 9), err)
        self.assertEqual(self.r("GET", "stock:{u}"), "9")

    def test_without_one_it_is_reported_unknown_and_never_retried(self):
        rc, item, err = self.blocked_deduct()
        self.assertEqual((rc, item["status"]), (1, "error"))
        self.assertTrue(item["error"].startswith("outcome unknown:"), item)
        self.r("CLIENT", "UNPAUSE")
        self.assertEqual(self.r("GET", "stock:{u}"), "10", "it was not sent again")


@standalone_only
class WaitReplicas(ServerTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.replica = RedisServer("--replicaof", "127.0.0.1", str(cls.server.port))
        c = cls.replica.client()
        deadline = time.monotonic() + 30
        while "master_link_status:up" not in c("INFO", "replication"):
            assert time.monotonic() < deadline, "the replica never synced"
            time.sleep(0.02)  # waiting for the replication link, bounded by the deadline
        c.close()

    @classmethod
    def tearDownClass(cls):
        cls.replica.stop()
        super().tearDownClass()

    def test_acknowledged_by_the_replica(self):
        res = self.sc("init", "w", "5", "--wait-replicas", "1")
        self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
        res = self.sc("deduct", "w", "1", "--wait-replicas", "1")
        self.assertEqual((res.rc, res.one["stock"]), (0, 4), res)

    def test_not_acknowledged_in_time_is_an_error_that_says_so(self):
        self.r("SET", "stock:{w}", "5")
        res = self.sc("deduct", "w", "1", "--wait-replicas", "2", "--wait-timeout", "200")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("applied on the primary (stock 4), but its durability is not confirmed: "
                      "1 of 2 replicas acknowledged within 200 ms", res.one["error"])
        self.assertEqual(self.r("GET", "stock:{w}"), "4")


def attach_replica(primary):
    replica = RedisServer("--replicaof", "127.0.0.1", str(primary.port), tls=False)
    c = replica.client()
    deadline = time.monotonic() + 30
    p = primary.client()
    # Synced on both sides: the replica's link is up, and the primary counts it online (ROLE,
    # which the default --wait-replicas reads, lists it only then).
    while ("master_link_status:up" not in c("INFO", "replication")
           or "state=online" not in p("INFO", "replication")):
        assert time.monotonic() < deadline, "the replica never synced"
        time.sleep(0.02)  # waiting for the replication link, bounded by the deadline
    c.close()
    p.close()
    return replica


class SplitProxy:
    """A TCP proxy on a free loopback port: its first connection goes to port `first`, every
    later one to port `rest` (a name that a failover moved between two connections)."""

    def __init__(self, first, rest):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.targets = [first, rest]
        self.accepted = 0
        self.conns = []
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            upstream = socket.create_connection(
                ("127.0.0.1", self.targets[0 if self.accepted == 0 else 1]))
            self.accepted += 1
            self.conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self.pump, args=(a, b), daemon=True).start()

    @staticmethod
    def pump(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        finally:
            try:
                b.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


@standalone_only
class DefaultWait(unittest.TestCase):
    """Without --wait-replicas, stockctl waits for one replica where the primary has one
    attached (ROLE says so), once per window of a file (4,096 rows where it waits, so that the
    WAITs hold the server back less often); without a replica, or with --wait-replicas 0, it
    sends no WAIT at all."""

    ROWS = 9000  # three windows of 4,096 (nine of 1,024)

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="stockctl-test-")
        cls.path = os.path.join(cls.tmp, "rows.csv")
        with open(cls.path, "w") as f:
            f.write("sku,qty\n" + "".join("d%d,1\n" % (n % 50) for n in range(cls.ROWS)))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.primary = RedisServer()
        self.replica = None
        self.r = self.primary.client()

    def tearDown(self):
        self.r.close()
        if self.replica:
            self.replica.stop()
        self.primary.stop()

    def deduct_file(self, *extra, url=None, ok=True):
        for i in range(50):
            self.r("SET", "stock:{d%d}" % i, "1000")
        # The first call loads the Functions library; the windows that missed it go again (with
        # their WAIT), which is not what is counted here.
        run("get", "d0", "--url", self.primary.url)
        run("deduct", "d0", "1", "--url", self.primary.url, "--wait-replicas", "0")
        self.r("SET", "stock:{d0}", "1000")
        self.r("CONFIG", "RESETSTAT")
        self.res = run("deduct", "--file", self.path, "--url", url or self.primary.url, *extra)
        if ok:
            self.assertEqual((self.res.rc, {l["status"] for l in self.res.lines}), (0, {"ok"}),
                             self.res)
        return calls_on(self.primary, "wait")

    def test_a_primary_with_a_replica_is_waited_for_once_per_window(self):
        self.replica = attach_replica(self.primary)
        waits = self.deduct_file()
        self.assertEqual(waits, (self.ROWS + 4095) // 4096, "one WAIT per window of 4,096 rows")
        # Each WAIT went on a second connection after a mark of its own there (a transaction that
        # sets and deletes stockctl:wait-mark), so that it held back no window; one more mark
        # tried that connection first. Nothing is left of the mark.
        self.assertEqual(calls_on(self.primary, "exec"), waits + 1)
        self.assertEqual(self.r("KEYS", "stockctl:wait*"), [])

    def test_a_file_the_replica_does_not_acknowledge_has_no_row_ok(self):
        # The WAIT beside the windows still waits for the replica: stopped, it acknowledges
        # nothing, and no row is ok although every one was applied.
        self.replica = attach_replica(self.primary)
        self.replica.proc.send_signal(signal.SIGSTOP)
        try:
            self.deduct_file("--wait-timeout", "200", ok=False)
        finally:
            self.replica.proc.send_signal(signal.SIGCONT)
        self.assertEqual(self.res.rc, 1, self.res)
        self.assertEqual(len(self.res.lines), self.ROWS)
        self.assertEqual({l["status"] for l in self.res.lines}, {"error"})
        self.assertTrue(all("durability is not confirmed: 0 of 1 replicas acknowledged within 200 ms"
                            in l["error"] for l in self.res.lines), self.res.lines[0])
        applied = sum(1000 - int(self.r("GET", "stock:{d%d}" % i)) for i in range(50))
        self.assertEqual(applied, self.ROWS)

    def test_a_second_connection_that_reaches_another_server_confirms_nothing(self):
        # The URL's first connection reaches a server without replicas, the next ones another
        # server with one: its replica's acknowledgement of a mark there says nothing of the
        # writes, which the WAIT on the connection that made them does not confirm.
        other = RedisServer()
        proxy = SplitProxy(other.port, self.primary.port)
        try:
            self.replica = attach_replica(self.primary)
            o = other.client()
            for i in range(50):
                o("SET", "stock:{d%d}" % i, "1000")
            run("deduct", "d0", "1", "--url", other.url, "--wait-replicas", "0")  # the library
            o("SET", "stock:{d0}", "1000")
            self.r("CONFIG", "RESETSTAT")
            res = run("deduct", "--file", self.path, "--url", "redis://127.0.0.1:%d" % proxy.port,
                      "--wait-replicas", "1", "--wait-timeout", "100")
            self.assertEqual(res.rc, 1, res)
            self.assertEqual({l["status"] for l in res.lines}, {"error"}, res.lines[0])
            self.assertIn("durability is not confirmed", res.lines[0]["error"])
            self.assertEqual(sum(1000 - int(o("GET", "stock:{d%d}" % i)) for i in range(50)),
                             self.ROWS)
            self.assertEqual((calls_on(self.primary, "exec"), calls_on(self.primary, "wait")), (0, 0))
            o.close()
        finally:
            proxy.close()
            other.stop()

    def test_a_user_who_may_not_write_the_mark_is_waited_for_on_its_own_connection(self):
        self.replica = attach_replica(self.primary)
        self.r("ACL", "SETUSER", "shop", "on", ">shop-pw", "~stock:*", "+@all")
        url = self.primary.url.replace("redis://", "redis://shop:shop-pw@")
        waits = self.deduct_file("--no-log", url=url)
        self.assertEqual(waits, (self.ROWS + 4095) // 4096, "one WAIT per window, in line")

    def test_a_wait_longer_than_the_timeout_is_read_to_its_end(self):
        # WAIT holds its reply up to --wait-timeout on purpose: its read waits that long beyond
        # --timeout, so a replica that acknowledges after --timeout but within --wait-timeout
        # confirms the row (it was reported not confirmed, "within 20000 ms", after 200 ms).
        self.replica = attach_replica(self.primary)
        self.r("SET", "stock:{w}", "5")
        run("get", "w", "--url", self.primary.url)  # loads the library
        for args in (("deduct", "w", "1"), ("deduct", "--file", self.path)):
            if args[1] == "--file":
                for i in range(50):
                    self.r("SET", "stock:{d%d}" % i, "1000")
            res = replica_stopped_past_timeout(self.replica, self.primary, *args, "--url", self.primary.url,
                                               "--timeout", "200", "--wait-timeout", "20000")
            self.assertEqual((res.rc, {l["status"] for l in res.lines}), (0, {"ok"}), res)
        self.assertEqual(self.r("GET", "stock:{w}"), "4")

    def test_a_primary_without_replicas_is_not_waited_for(self):
        self.assertEqual(self.deduct_file(), 0)

    def test_wait_replicas_0_opts_out(self):
        self.replica = attach_replica(self.primary)
        self.assertEqual(self.deduct_file("--wait-replicas", "0"), 0)

    def test_a_replica_that_does_not_acknowledge_makes_the_default_say_so(self):
        self.replica = attach_replica(self.primary)
        self.r("SET", "stock:{w}", "5")
        self.replica.proc.send_signal(signal.SIGSTOP)
        try:
            started = time.monotonic()
            res = run("deduct", "w", "1", "--url", self.primary.url, "--wait-timeout", "1000",
                      "--timeout", "100")
            elapsed = time.monotonic() - started
        finally:
            self.replica.proc.send_signal(signal.SIGCONT)
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("applied on the primary (stock 4), but its durability is not confirmed: "
                      "0 of 1 replicas acknowledged within 1000 ms", res.one["error"])
        # "within 1000 ms" is true: the read of WAIT's reply did not give up at --timeout.
        self.assertGreaterEqual(elapsed, 1.0)


class ServerStartsLate(unittest.TestCase):
    def test_a_first_connection_refused_is_retried_until_the_server_is_up(self):
        port = free_port()
        proc = spawn("deduct", "late", "1", "--init-value", "5", "--request-id", "late-1",
                     "--url", "redis://127.0.0.1:%d" % port, "--retry-timeout", "30000",
                     "--verbose")
        server = None
        try:
            # stockctl says (with --verbose) that it was refused and keeps trying; only then
            # does the server start, on the port it is trying.
            first = proc.stderr.readline()
            self.assertIn("Connection refused; trying again for up to 30000 ms", first)
            self.assertIsNone(proc.poll())
            server = RedisServer(port_picker=lambda: port)
            out, err = proc.communicate(timeout=60)
            self.assertEqual(proc.returncode, 0, first + err)
            self.assertEqual(json.loads(out)["stock"], 4)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
            if server:
                server.stop()


class LosesOneAnswer:
    """A TCP proxy in front of a server that loses the answers of the first connection that
    sends `marker`, as a stall or a broken link past --timeout would: what that connection sent
    still reaches the server and runs there. Nothing of a later connection reaches the server
    before the server has closed that connection (so every command of the lost try has run), so
    a retry always finds the lost try's writes."""

    def __init__(self, port, marker):
        self.port, self.marker = port, marker
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = "redis://127.0.0.1:%d" % self.listener.getsockname()[1]
        self.lost = None  # the connection whose answers are lost, once chosen
        self.lost_done = threading.Event()
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def close(self):
        self.listener.close()

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.port))
            conn = object()
            threading.Thread(target=self.up, args=(conn, client, upstream), daemon=True).start()
            threading.Thread(target=self.down, args=(conn, upstream, client), daemon=True).start()

    def up(self, conn, client, upstream):
        try:
            while data := client.recv(65536):
                with self.lock:
                    if self.lost is None and self.marker in data:
                        self.lost = conn
                if self.lost is not None and self.lost is not conn:
                    self.lost_done.wait(60)
                upstream.sendall(data)
        except OSError:
            pass
        try:
            upstream.shutdown(socket.SHUT_WR)  # the server runs what it got, then closes
        except OSError:
            pass

    def down(self, conn, upstream, client):
        try:
            while data := upstream.recv(65536):
                if self.lost is not conn:
                    client.sendall(data)
        except OSError:
            pass
        if self.lost is conn:
            self.lost_done.set()
        client.close()
        upstream.close()


@unittest.skipIf(TARGET != "standalone", "a proxy in front of one plain TCP server")
class AnswerLost(ServerTest):
    """A try whose answer is lost, and whose retry finds the key that try wrote, says so."""

    def setUp(self):
        super().setUp()
        self.sc("init", "warm", "1")  # loads the scripts, so that the lost try runs them
        self.r("FLUSHALL")
        self.use_rows(50)

    def use_rows(self, n):
        self.rows = ["sku-%d" % i for i in range(n)]
        self.source = self.write("s.csv", "sku,stock\n" + "".join("%s,7\n" % s for s in self.rows))

    def init_through(self, marker, *args):
        proxy = LosesOneAnswer(self.server.port, marker)
        try:
            report = os.path.join(self.tmp, "report.jsonl")
            res = run("init", "--file", self.source, "--report", report, "--url", proxy.url,
                      "--timeout", "1000", "--retry-timeout", "20000", *args)
            self.assertIsNotNone(proxy.lost, "no try lost its answer")
            with open(report) as f:
                return res, [json.loads(l) for l in f]
        finally:
            proxy.close()

    def assert_found_own_writes(self, res, lines):
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.one["counts"]["exists"], len(self.rows), res)
        note = "outcome of an earlier try unknown; the key may be this run's own write"
        self.assertEqual([(l["sku"], l["status"], l["stock"], l.get("note")) for l in lines],
                         [(s, "exists", 7, note) for s in self.rows])
        self.assertIn("%d items were found on a retry after a try whose outcome was unknown"
                      % len(self.rows), res.stderr)
        self.assertEqual(self.r("MGET", *["stock:{%s}" % s for s in self.rows]), ["7"] * len(self.rows))

    def assert_logged_once(self):
        # The lost try wrote each key, once: its log entry is the only one.
        for sku in self.rows[:3]:
            entries = self.sc("log", sku).lines
            self.assertEqual([(e["change"], e["before"], e["after"]) for e in entries],
                             [("init", None, 7)])

    def test_init_with_the_change_log_says_the_key_may_be_its_own_write(self):
        # 50 rows: one plain MSETNX of the keys and their first entries; the resent one finds
        # them, and the load script (which finds them too) hands them to the put script.
        res, lines = self.init_through(b"MSETNX")
        self.assert_found_own_writes(res, lines)
        self.assert_logged_once()

    def test_init_of_a_few_rows_through_the_load_script_says_so_too(self):
        self.use_rows(20)  # too few to read the server's clock for: the load script writes them
        fcall = b"FCALL" if int(self.r("INFO", "server").split("redis_version:")[1][0]) >= 7 else b"EVALSHA"
        res, lines = self.init_through(fcall)
        self.assert_found_own_writes(res, lines)
        self.assert_logged_once()

    def test_init_without_the_change_log_says_so_too(self):
        res, lines = self.init_through(b"NX", "--no-log")
        self.assert_found_own_writes(res, lines)

    def test_a_key_that_was_there_before_the_run_has_no_note(self):
        self.r("SET", "stock:{old}", "3")
        res = self.sc("init", "old", "9", "--timeout", "1000")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "exists", 3), res)
        self.assertNotIn("note", res.one)
        self.assertEqual(res.stderr, "")


class StoppedServer(unittest.TestCase):
    # Over TLS the handshake is what waits, bounded by --connect-timeout; test_tls covers a
    # paused TLS server.
    @unittest.skipIf(TARGET.startswith("tls"), "plain TCP only")
    def test_a_read_is_retried_then_fails_plainly_within_retry_plus_timeout(self):
        server = RedisServer()
        try:
            server.kill(signal.SIGSTOP)  # accepts connections (the kernel does), never answers
            started = time.monotonic()
            res = run("get", "x", "--url", server.url, "--timeout", "500",
                      "--retry-timeout", "2000")
            elapsed = time.monotonic() - started
            self.assertEqual(res.rc, 1, res)
            self.assertNotIn("outcome unknown", res.stdout + res.stderr)
            lines = res.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, res)
            self.assertRegex(lines[0], r"^stockctl: error: .*127\.0\.0\.1:%d: no answer within "
                                       r"500 ms.* \((\d+) tries over (\d+) ms\)$" % server.port)
            tries, over = map(int, re.search(r"(\d+) tries over (\d+) ms", lines[0]).groups())
            self.assertGreater(tries, 1)
            self.assertGreaterEqual(over, 2000)
            # Bounded by --retry-timeout + --timeout, with generous room for a busy machine.
            self.assertLess(elapsed, 2 + 0.5 + 3)
        finally:
            server.stop()


if __name__ == "__main__":
    unittest.main()
