"""Redis Cluster only: items spread over every primary, redirects, resharding and failover."""

import binascii
import json
import os
import shutil
import signal
import tempfile
import time
import unittest

from harness import (TARGET, RedisCluster, ServerTest, calls_on, keyslot, run, spawn,
                     replica_stopped_past_timeout, spawn_to_file)


def node_id(node):
    c = node.client()
    try:
        return c("CLUSTER", "MYID")
    finally:
        c.close()


def wait_until(predicate, seconds=60):
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.01)  # polling real server state, bounded by the deadline


def calls_on_port(r, port, command):
    for line in r._conn(port)("INFO", "commandstats").splitlines():
        if line.startswith("cmdstat_%s:calls=" % command):
            return int(line.split("calls=")[1].split(",")[0])
    return 0


def read_lines(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


@unittest.skipUnless(TARGET == "cluster", "needs STOCKCTL_TARGET=cluster")
class Spread(ServerTest):
    def test_bulk_commands_touch_every_primary(self):
        skus = ["item-%d" % i for i in range(300)]
        ports = {self.r.node_port("stock:{%s}" % s) for s in skus}
        self.assertEqual(len(ports), 3, "the items hash to all three primaries")
        path = self.write("s.csv", "sku,stock\n" + "".join("%s,10\n" % s for s in skus))
        self.assertEqual(self.sc("init", "--file", path).one["counts"]["ok"], 300)
        for port in self.r.primaries():
            self.assertGreater(self.r._conn(port)("DBSIZE"), 50, port)
        batch = self.write("d.csv", "sku,qty\n" + "".join("%s,3\n" % s for s in skus))
        res = self.sc("deduct", "--file", batch)
        self.assertEqual(res.rc, 0)
        self.assertEqual([l["sku"] for l in res.lines], skus, "output keeps input order")
        self.assertTrue(all(l["stock"] == 7 for l in res.lines))
        got = self.sc("get", *skus[:50])
        self.assertEqual([l["stock"] for l in got.lines], [7] * 50)
        export = self.write("e.csv", "sku,total,issued\n" + "".join("%s,10,3\n" % s for s in skus))
        self.r("DEL", "stock:{item-5}")
        rb = self.sc("rebuild", "--file", export)
        self.assertEqual((rb.one["counts"]["ok"], rb.one["counts"]["exists"]), (1, 299))

    def test_the_default_waits_for_each_primarys_replica_once_per_window(self):
        skus = ["item-%d" % i for i in range(300)]
        for s in skus:
            self.r("SET", "stock:{%s}" % s, "100")
        batch = self.write("w.csv", "sku,qty\n" + "".join("%s,1\n" % s for s in skus))
        self.sc("deduct", "item-0", "1", "--wait-replicas", "0")  # loads the library
        for wait, expected in ((), True), (("--wait-replicas", "0"), False):
            for port in self.r.primaries():
                self.r._conn(port)("CONFIG", "RESETSTAT")
            res = self.sc("deduct", "--file", batch, *wait)
            self.assertEqual((res.rc, res.stderr), (0, ""), res)
            waits = [calls_on_port(self.r, port, "wait") for port in self.r.primaries()]
            if expected:
                # One window: one WAIT on each primary it wrote to, each of which has a replica.
                self.assertEqual(waits, [1, 1, 1], res)
            else:
                self.assertEqual(waits, [0, 0, 0], res)

    def test_moved_without_cluster_suggests_it(self):
        key = "stock:{m}"
        other = [p for p in self.r.primaries() if p != self.r.node_port(key)][0]
        res = run("get", "m", "--url", "redis://127.0.0.1:%d" % other)
        self.assertEqual(res.rc, 1)
        self.assertIn("use --cluster", res.one["error"])

    def test_reshard_a_slot_while_a_batch_runs(self):
        sku = "hot"
        key = "stock:{%s}" % sku
        slot = keyslot(key)
        rows = 3000
        self.r("SET", key, str(rows + 100))
        primaries = self.server.primaries()
        src = primaries[self.r.node_port(key)]
        dst = [n for p, n in primaries.items() if p != src.port][0]
        path = self.write("hot.csv", "sku,qty,request_id\n" + "".join("%s,1,r-%d\n" % (sku, i) for i in range(rows)))
        out = os.path.join(self.tmp, "hot.jsonl")
        before = calls_on(src, "fcall")
        proc = spawn_to_file(out, "deduct", "--file", path, *self.target_args())
        wait_until(lambda: calls_on(src, "fcall") > before + 200)
        self.assertIsNone(proc.poll(), "the batch is still running when the slot starts moving")
        s, d = src.client(), dst.client()
        try:
            d("CLUSTER", "SETSLOT", slot, "IMPORTING", node_id(src))
            s("CLUSTER", "SETSLOT", slot, "MIGRATING", node_id(dst))
            finish_migration(slot, primaries, s, dst)
        finally:
            s.close()
            d.close()
        _, err = proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 0, err[-2000:])
        lines = read_lines(out)
        self.assertEqual(len(lines), rows, "every item reported once")
        self.assertTrue(all(l["status"] == "ok" for l in lines))
        self.assertEqual(sorted(l["stock"] for l in lines), list(range(100, rows + 100)))
        self.r.refresh()
        self.assertEqual(self.r.node_port(key), dst.port)
        self.assertEqual(self.r("GET", key), "100")


    def test_windows_stay_in_flight_on_every_node_while_one_is_slow(self):
        # Two windows of 1024 rows are in flight at once: while one primary answers nothing,
        # the others must have been sent (and have run) both windows' calls for them.
        window = 1024
        skus = ["w%d" % i for i in range(3 * window)]
        ports = [self.r.node_port("stock:{%s}" % s) for s in skus]
        primaries = self.server.primaries()
        slow_port = ports[0]
        slow = primaries[slow_port]
        others = [p for p in self.r.primaries() if p != slow_port]
        first_two = {p: sum(1 for q in ports[:2 * window] if q == p) for p in others}
        for p in others:
            self.r._conn(p)("CONFIG", "RESETSTAT")
        path = self.write("w.csv", "sku,stock\n" + "".join("%s,5\n" % s for s in skus))
        out, report = os.path.join(self.tmp, "w.jsonl"), os.path.join(self.tmp, "w-report.jsonl")
        pauser = slow.client()
        proc = None
        try:
            pauser("CLIENT", "PAUSE", 120000, "WRITE")  # reads and connections still work
            proc = spawn_to_file(out, "init", "--file", path, "--no-log", "--timeout", "120000",
                                 "--report", report, *self.target_args())
            for p in others:
                wait_until(lambda: calls_on(primaries[p], "set") >= first_two[p])
            self.assertIsNone(proc.poll(), "the slow primary holds the run")
        finally:
            pauser("CLIENT", "UNPAUSE")
            pauser.close()
            if proc:
                _, err = proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 0, err[-2000:])
        self.assertEqual(read_lines(out)[0]["counts"]["ok"], len(skus))
        items = read_lines(report)
        self.assertEqual([l["sku"] for l in items], skus, "the report keeps input order")
        self.assertTrue(all(l["status"] == "ok" for l in items))
        self.assertEqual(self.r("DBSIZE"), len(skus))


    def test_missing_library_on_every_node_mid_window_is_loaded_once(self):
        # Both windows in flight reach nodes that lost the scripts' library: every call is
        # answered "Function not found", and one FUNCTION LOAD per node, sent behind them,
        # serves them all.
        skus = ["n%d" % i for i in range(3 * 1024)]
        self.r("MSET", *[x for s in skus for x in ("stock:{%s}" % s, "10")])
        self.r("FUNCTION", "FLUSH")
        self.r("CONFIG", "RESETSTAT")
        path = self.write("n.csv", "sku,qty\n" + "".join("%s,1\n" % s for s in skus))
        res = self.sc("deduct", "--file", path, "--no-log")
        self.assertEqual(res.rc, 0, res.stderr[-2000:])
        self.assertEqual([l["sku"] for l in res.lines], skus, "output keeps input order")
        self.assertTrue(all(l["status"] == "ok" and l["stock"] == 9 for l in res.lines))
        primaries = self.server.primaries()
        for port in self.r.primaries():
            self.assertEqual(calls_on(primaries[port], "function|load"), 1, port)
            self.assertGreater(calls_on(primaries[port], "fcall"), 1000, port)


def skus_in_one_slot(count):
    """`count` SKUs whose stock keys share one slot (CRC16-XMODEM, as keyslot computes it)."""
    by_slot = {}
    for i in range(200000):
        sku = "m%d" % i
        slot = binascii.crc_hqx(sku.encode(), 0) % 16384
        by_slot.setdefault(slot, []).append(sku)
        if len(by_slot[slot]) == count:
            assert all(keyslot("stock:{%s}" % s) == slot for s in by_slot[slot])
            return slot, by_slot[slot]
    raise AssertionError("no slot with %d SKUs" % count)


def finish_migration(slot, primaries, s, dst):
    """Moves the rest of `slot` from the node `s` talks to onto `dst` and gives every primary
    the slot's new owner, so the shared cluster is whole again for other tests."""
    while True:
        keys = s("CLUSTER", "GETKEYSINSLOT", slot, 50)
        if not keys:
            break
        s("MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS", *keys)
    for node in primaries.values():
        c = node.client()
        c("CLUSTER", "SETSLOT", slot, "NODE", node_id(dst))
        c.close()


@unittest.skipUnless(TARGET == "cluster", "needs STOCKCTL_TARGET=cluster")
class HalfMigratedSlot(ServerTest):
    def test_calls_without_id_follow_ask_and_calls_with_one_say_why_they_wait(self):
        slot, skus = skus_in_one_slot(4)
        for sku in skus:
            self.r("SET", "stock:{%s}" % sku, "10")
        primaries = self.server.primaries()
        src = primaries[self.r.node_port("stock:{%s}" % skus[0])]
        dst = [n for p, n in primaries.items() if p != src.port][0]
        s, d = src.client(), dst.client()
        try:
            # The slot stays half migrated for the whole test: two of its keys have moved.
            d("CLUSTER", "SETSLOT", slot, "IMPORTING", node_id(src))
            s("CLUSTER", "SETSLOT", slot, "MIGRATING", node_id(dst))
            moved = ["stock:{%s}" % sku for sku in skus[:2]]
            s("MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS", *moved)

            batch = self.write("d.csv", "sku,qty\n" + "".join("%s,1\n" % sku for sku in skus))
            # Without a request id and without the change log a call sends the stock key alone.
            res = self.sc("deduct", "--file", batch, "--retry-timeout", "1000", "--no-log")
            self.assertEqual(res.rc, 0, res)
            self.assertEqual([(l["status"], l["stock"]) for l in res.lines], [("ok", 9)] * 4)
            self.assertEqual(res.stderr, "")
            res = self.sc("add", skus[0], "1", "--retry-timeout", "1000", "--no-log")
            self.assertEqual((res.rc, res.one["stock"]), (0, 10), res)

            # With a request id the call needs two keys, which the slot cannot serve together
            # until it has moved: it is retried until --retry-timeout, then says why.
            started = time.monotonic()
            res = self.sc("deduct", skus[0], "1", "--request-id", "r-1", "--retry-timeout", "1000")
            self.assertGreaterEqual(time.monotonic() - started, 1.0)
            self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
            self.assertIn("slot %d is being migrated" % slot, res.one["error"])
            self.assertIn("a migration is in progress", res.one["error"])
            self.assertRegex(res.one["error"], r"\(\d+ tries over \d+ ms\)$")
            d("ASKING")  # the importing node serves the slot's keys only after ASKING
            self.assertEqual(d("GET", moved[0]), "10", "nothing was applied")
        finally:
            try:
                finish_migration(slot, primaries, s, dst)
            finally:
                s.close()
                d.close()
            self.r.refresh()


@unittest.skipUnless(TARGET == "cluster", "needs STOCKCTL_TARGET=cluster")
class ReadsDuringMigration(ServerTest):
    def test_reads_follow_ask_per_key_and_answer_at_once_and_complete(self):
        slot, (held_sku, plain_sku) = skus_in_one_slot(2)
        key = "stock:{%s}" % held_sku
        self.assertEqual(self.sc("init", held_sku, "10").rc, 0)
        self.assertEqual(self.sc("init", plain_sku, "5", "--no-log").rc, 0)
        res = self.sc("hold", "h-mig", "%s=3" % held_sku)
        self.assertEqual((res.rc, res.one["status"]), (0, "ok"), res)
        primaries = self.server.primaries()
        src = primaries[self.r.node_port(key)]
        dst = [n for p, n in primaries.items() if p != src.port][0]
        s, d = src.client(), dst.client()
        try:
            # Half moved: both stock keys are on the importing node, the holds and the log of
            # the held item are still on the migrating one. A read of several keys at once
            # (the holds' view) is refused with TRYAGAIN until the migration ends.
            d("CLUSTER", "SETSLOT", slot, "IMPORTING", node_id(src))
            s("CLUSTER", "SETSLOT", slot, "MIGRATING", node_id(dst))
            s("MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS", key, "stock:{%s}" % plain_sku)
            window = "20000"
            started = time.monotonic()
            res = self.sc("get", held_sku, plain_sku, "--retry-timeout", window)
            got = [(l["status"], l["stock"], l["held"]) for l in res.lines]
            self.assertEqual((res.rc, got), (0, [("ok", 7, 3), ("ok", 5, 0)]), res)
            res = self.sc("export", "--retry-timeout", window)
            self.assertEqual(res.rc, 0, res)
            rows = {l["sku"]: (l["stock"], l["held"]) for l in res.lines}
            self.assertEqual((rows[held_sku], rows[plain_sku]), ((7, 3), (5, 0)), res)
            res = self.sc("log", plain_sku, "--retry-timeout", window)  # logged nothing
            self.assertEqual((res.rc, res.stdout), (0, ""), res)
            res = self.sc("log", held_sku, "--retry-timeout", window)
            self.assertEqual([l["change"] for l in res.lines], ["init", "hold"], res)
            # None of them waited for the migration to end.
            self.assertLess(time.monotonic() - started, 10, "the reads waited for TRYAGAIN")
        finally:
            try:
                finish_migration(slot, primaries, s, dst)
            finally:
                s.close()
                d.close()
            self.r.refresh()


@unittest.skipUnless(TARGET == "cluster", "needs STOCKCTL_TARGET=cluster")
class Failover(unittest.TestCase):
    def test_kill_a_primary_during_a_batch_with_request_ids(self):
        cluster = RedisCluster()
        tmp = cluster.nodes[0].dir
        try:
            r = cluster.client()
            skus = ["f%d" % i for i in range(300)]
            for s in skus:
                r("SET", "stock:{%s}" % s, "1000")
            # Every replica holds the items before a primary dies: otherwise the one promoted
            # may lack them (CI saw rows "not initialized", exit 4, after the kill). A WAIT on a
            # connection of its own waits for nothing (it covers that connection's writes), so
            # each replica's key count is compared with its primary's.
            primaries = cluster.primaries()
            for node in cluster.live():
                if node.port in primaries:
                    continue
                c = node.client()
                try:
                    primary = primaries[int(c("ROLE")[2])].client()
                    try:
                        want = primary("DBSIZE")
                    finally:
                        primary.close()
                    wait_until(lambda: c("DBSIZE") == want)
                finally:
                    c.close()
            per_sku = 40
            rows = [(skus[i % len(skus)], "op-%d" % i) for i in range(len(skus) * per_sku)]
            path = os.path.join(tmp, "batch.csv")
            with open(path, "w") as f:
                f.write("sku,qty,request_id\n")
                f.writelines("%s,1,%s\n" % row for row in rows)
            victim = cluster.primaries()[r.node_port("stock:{f0}")]
            target = ("--url", cluster.url if cluster.nodes[0] is not victim else cluster.nodes[1].url, "--cluster")
            out1 = os.path.join(tmp, "run1.jsonl")
            proc = spawn_to_file(out1, "deduct", "--file", path, *target, "--wait-replicas", "1",
                                 "--retry-timeout", "30000")
            wait_until(lambda: calls_on(victim, "fcall") > 500)
            self.assertIsNone(proc.poll(), "the batch is still running when its primary dies")
            victim.kill(signal.SIGKILL)
            _, err = proc.communicate(timeout=600)
            self.assertIn(proc.returncode, (0, 1), err[-2000:])
            first = read_lines(out1)
            self.assertEqual(len(first), len(rows), "every item reported exactly once")
            for line in first:
                self.assertIn(line["status"], ("ok", "error"), line)

            # Re-running the same batch applies nothing twice: what was ok is replayed.
            out2 = os.path.join(tmp, "run2.jsonl")
            proc = spawn_to_file(out2, "deduct", "--file", path, *target, "--retry-timeout", "30000")
            _, err = proc.communicate(timeout=600)
            self.assertEqual(proc.returncode, 0, err[-2000:])
            second = read_lines(out2)
            self.assertEqual(len(second), len(rows))
            for a, b in zip(first, second):
                self.assertEqual(b["status"], "ok", b)
                if a["status"] == "ok":
                    self.assertTrue(b.get("replayed"), (a, b))
                    self.assertEqual(a["stock"], b["stock"])
            # Every operation is now applied exactly once.
            r.refresh()
            for s in skus:
                self.assertEqual(r("GET", "stock:{%s}" % s), str(1000 - per_sku), s)
            r.close()
        finally:
            cluster.stop()


@unittest.skipUnless(TARGET == "cluster", "needs STOCKCTL_TARGET=cluster")
class LaggingReplica(unittest.TestCase):
    """The default --wait-replicas with a replica that does not acknowledge (SIGSTOP; a node
    timeout long enough that the cluster neither fails it nor fails over): rows with a request
    id are not sent again to the same primary, which would only wait for the same replica until
    --retry-timeout and end in "outcome unknown". Each is reported once, applied on the primary
    with its durability not confirmed; the other primaries' rows are ok."""

    NOT_CONFIRMED = ("applied on the primary (stock %d), but its durability is not confirmed: "
                     "0 of 1 replicas acknowledged within 200 ms")

    @classmethod
    def setUpClass(cls):
        cls.cluster = RedisCluster(node_timeout_ms=60000)
        cls.r = cls.cluster.client()
        # The default waits where the slot map lists a replica, which a fresh cluster's does
        # only once gossip has carried the replicas' offsets.
        wait_until(lambda: all(len(entry) > 3 for entry in cls.r._conn(cls.cluster.nodes[0].port)(
            "CLUSTER", "SLOTS")))
        cls.on = ("--url", cls.cluster.url, "--cluster", "--wait-timeout", "200",
                  "--retry-timeout", "5000")

    @classmethod
    def tearDownClass(cls):
        cls.r.close()
        cls.cluster.stop()

    def setUp(self):
        self.r("FLUSHALL")

    def replica_of(self, port):
        for node in self.cluster.live():
            c = node.client()
            try:
                if "master_port:%d\r\n" % port in c("INFO", "replication"):
                    return node
            finally:
                c.close()
        raise AssertionError("no replica of %d" % port)

    def paused(self, port, *args):
        """Runs stockctl with the replica of primary `port` stopped; returns its result."""
        replica = self.replica_of(port)
        replica.proc.send_signal(signal.SIGSTOP)
        try:
            return run(*args, *self.on)
        finally:
            replica.proc.send_signal(signal.SIGCONT)

    def test_a_row_is_reported_not_confirmed_and_sent_once(self):
        self.r("SET", "stock:{w}", "10")
        port = self.r.node_port("stock:{w}")
        primary = self.cluster.primaries()[port]
        run("deduct", "w", "1", *self.on)  # loads the library, so that each FCALL counted runs
        self.r("SET", "stock:{w}", "10")
        before = calls_on(primary, "fcall")
        res = self.paused(port, "deduct", "w", "1", "--request-id", "lag-1")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertEqual(res.one["error"], self.NOT_CONFIRMED % 9, res)
        self.assertEqual(calls_on(primary, "fcall") - before, 1, "sent once, not again")
        self.assertEqual(self.r("GET", "stock:{w}"), "9")

    def test_a_wait_longer_than_the_timeout_is_read_to_its_end(self):
        # WAIT holds its reply up to --wait-timeout on purpose: a node whose next reply is a
        # WAIT's may be silent that long beyond --timeout (it was failed after 200 ms).
        self.r("SET", "stock:{w}", "10")
        port = self.r.node_port("stock:{w}")
        run("deduct", "w", "1", *self.on)  # loads the library
        on = [a for a in self.on if a not in ("--wait-timeout", "200")]
        res = replica_stopped_past_timeout(self.replica_of(port), self.cluster.primaries()[port],
                                           "deduct", "w", "1", *on, "--timeout", "200",
                                           "--wait-timeout", "20000")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 8), res)

    def test_a_file_reports_each_row_once_and_sends_it_once(self):
        skus = ["lag-%d" % i for i in range(300)]
        for s in skus:
            self.r("SET", "stock:{%s}" % s, "10")
        port = self.r.node_port("stock:{lag-0}")
        primary = self.cluster.primaries()[port]
        lagging = [s for s in skus if self.r.node_port("stock:{%s}" % s) == port]
        run("deduct", "lag-0", "1", *self.on)  # loads the library
        self.r("SET", "stock:{lag-0}", "10")
        path = os.path.join(self.cluster.nodes[0].dir, "rows.csv")
        with open(path, "w") as f:
            f.write("sku,qty,request_id\n" + "".join("%s,1,id-%s\n" % (s, s) for s in skus))
        before = calls_on(primary, "fcall")
        res = self.paused(port, "deduct", "--file", path)
        self.assertEqual(res.rc, 1, res)
        self.assertEqual([l["sku"] for l in res.lines], skus, "every row once, in order")
        for line in res.lines:
            if line["sku"] in lagging:
                self.assertEqual((line["status"], line["error"]),
                                 ("error", self.NOT_CONFIRMED % 9), line)
            else:
                self.assertEqual((line["status"], line["stock"]), ("ok", 9), line)
        self.assertEqual(calls_on(primary, "fcall") - before, len(lagging), "each sent once")
        for s in skus:
            self.assertEqual(self.r("GET", "stock:{%s}" % s), "9", s)


@unittest.skipUnless(TARGET == "cluster", "needs STOCKCTL_TARGET=cluster")
class ClusterDown(unittest.TestCase):
    def test_a_write_refused_with_clusterdown_says_it_was_not_applied(self):
        # A primary that lost one of its slots says CLUSTERDOWN for every key it serves: the
        # command never ran. After --retry-timeout the write says "not applied", a read only why.
        cluster = RedisCluster(primaries=3, replicas_per_primary=0)
        router = cluster.client()
        try:
            on = ("--url", cluster.url, "--cluster")
            self.assertEqual(run("init", "a", "10", *on).rc, 0)
            c = router._conn(router.node_port("stock:{a}"))
            own = [s for s in c("CLUSTER", "SLOTS")
                   if s[2][1] == router.node_port("stock:{a}")][0]
            other = own[0] if own[0] != keyslot("stock:{a}") else own[1]
            c("CLUSTER", "DELSLOTS", other)
            wait_until(lambda: "cluster_state:fail" in c("CLUSTER", "INFO"))
            res = run("deduct", "a", "1", "--retry-timeout", "300", *on)
            self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
            self.assertRegex(res.one["error"], r"^not applied: stock:\{a\}: refused before it ran: "
                             r"CLUSTERDOWN ")
            res = run("get", "a", "--retry-timeout", "300", *on)
            self.assertRegex(res.one["error"], r"^stock:\{a\}: refused before it ran: CLUSTERDOWN ")
            c("CLUSTER", "ADDSLOTS", other)
            wait_until(lambda: "cluster_state:ok" in c("CLUSTER", "INFO"))
            self.assertEqual(run("get", "a", *on).one["stock"], 10, "nothing was applied")
        finally:
            router.close()
            cluster.stop()

    def test_a_cluster_that_comes_back_within_the_retry_timeout_answers_ok(self):
        # CLUSTERDOWN says nothing ran: a write and a cart are retried and applied once the
        # cluster is back, within --retry-timeout. The slot comes back only after the node has
        # refused stockctl at least once (its error statistics say so).
        cluster = RedisCluster(primaries=3, replicas_per_primary=0)
        router = cluster.client()
        try:
            on = ("--url", cluster.url, "--cluster", "--retry-timeout", "30000")
            self.assertEqual(run("init", "a", "10", "--url", cluster.url, "--cluster").rc, 0)
            c = router._conn(router.node_port("stock:{a}"))
            own = [s for s in c("CLUSTER", "SLOTS")
                   if s[2][1] == router.node_port("stock:{a}")][0]
            other = own[0] if own[0] != keyslot("stock:{a}") else own[1]

            def refusals():
                for line in c("INFO", "errorstats").splitlines():
                    if line.startswith("errorstat_CLUSTERDOWN:count="):
                        return int(line.split("=")[1])
                return 0

            tmp = tempfile.mkdtemp(prefix="stockctl-test-")
            self.addCleanup(shutil.rmtree, tmp)
            carts = os.path.join(tmp, "carts.csv")
            with open(carts, "w") as f:
                f.write("id,sku,qty\nc1,a,1\nc2,a,2\n")
            for args, stock in ((("deduct", "a", "1"), 9), (("order", "--file", carts), 6)):
                c("CLUSTER", "DELSLOTS", other)
                wait_until(lambda: "cluster_state:fail" in c("CLUSTER", "INFO"))
                before = refusals()
                proc = spawn(*args, *on)
                wait_until(lambda: refusals() > before)
                c("CLUSTER", "ADDSLOTS", other)
                out, err = proc.communicate(timeout=60)
                self.assertEqual(proc.returncode, 0, (args, out, err))
                lines = [json.loads(line) for line in out.splitlines()]
                self.assertEqual({line["status"] for line in lines}, {"ok"}, (args, out, err))
                self.assertEqual(run("get", "a", "--url", cluster.url, "--cluster").one["stock"],
                                 stock, args)
        finally:
            router.close()
            cluster.stop()


if __name__ == "__main__":
    unittest.main()
