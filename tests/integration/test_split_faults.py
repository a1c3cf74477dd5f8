"""A transfer between two buckets of a split item across a failover (docs/split.md, "Moving
units between buckets"): stockctl is killed right after one step of a transfer, then the primary
that step wrote to is killed too and its replica takes over. The next `rebalance` finishes the
transfer on the promoted replica, and every unit is there exactly once: none lost with the
record, none added twice by a receive the new primary had not seen. A cluster of its own for
each test (3 primaries, 3 replicas), since a killed primary leaves its shard without a replica."""

import signal
import unittest

from harness import TARGET, RedisCluster, clean_env, run

UNITS = 90


@unittest.skipUnless(TARGET == "cluster", "needs STOCKCTL_TARGET=cluster")
class TransferAcrossFailover(unittest.TestCase):
    def setUp(self):
        self.cluster = RedisCluster()
        self.addCleanup(self.cluster.stop)
        self.r = self.cluster.client()
        self.addCleanup(self.r.close)

    def sc(self, *args, env=None):
        url = self.cluster.live()[0].url
        return run(*args, "--url", url, "--cluster", env=env)

    def buckets(self):
        words = self.r("GET", "stock:{A}").split(" ")
        self.assertEqual(words[:2], ["stockctl:split:1", "live"], words)
        return ["stockctl:bucket:{%s}:stock:{A}:%s:%d" % (tag, words[2], i)
                for i, tag in enumerate(words[3].split(","))]

    def units(self):
        """The buckets, and the units of transfers recorded at a source and not received."""
        total = 0
        for key in self.buckets():
            total += int(self.r("GET", key))
            moves = self.r("HGETALL", key + ":moves")
            for field, value in zip(moves[0::2], moves[1::2]):
                if field.startswith("out:"):
                    k, destination = value.split(" ", 1)
                    if self.r("EXISTS", destination + ":in:" + field[4:]) == 0:
                        total += int(k)
        return total

    def node_of(self, key):
        port = self.r.node_port(key)
        return next(n for n in self.cluster.live() if n.port == port)

    def one_bucket_full(self):
        """Item A split over 3 buckets on the 3 primaries, every unit in bucket 0, replicated."""
        self.assertEqual(self.sc("init", "A", str(UNITS)).rc, 0)
        self.assertEqual(self.sc("split", "A", "--buckets", "3").one["status"], "ok")
        keys = self.buckets()
        self.assertEqual(len({self.r.node_port(k) for k in keys}), 3, "one bucket per primary")
        for key, stock in zip(keys, (UNITS, 0, 0)):
            self.r("SET", key, str(stock))
            c = self.node_of(key).client()
            try:
                self.assertEqual(c("WAIT", "1", "5000"), 1)
            finally:
                c.close()
        return keys

    def crash_then_fail_over(self, step, victim_key):
        res = run("rebalance", "A", "--url", self.cluster.live()[0].url, "--cluster",
                  env=clean_env(STOCKCTL_TEST_STOP_AT=step))
        self.assertEqual(res.rc, -9, res)
        self.assertEqual(self.units(), UNITS)
        victim = self.node_of(victim_key)
        victim.kill(signal.SIGKILL)
        self.cluster.wait_ok()
        self.r.refresh()
        self.assertNotEqual(self.r.node_port(victim_key), victim.port, "its replica took over")

    def assert_finished_by_rebalance(self):
        res = self.sc("rebalance", "A")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", UNITS), res)
        self.assertEqual([int(self.r("GET", k)) for k in self.buckets()], [UNITS // 3] * 3)
        for key in self.buckets():
            moves = self.r("HGETALL", key + ":moves")
            self.assertEqual([f for f in moves[0::2] if f.startswith("out:")], [], key)
        self.assertEqual(self.units(), UNITS)

    def test_the_source_primary_killed_after_the_send(self):
        # The units left bucket 0 and are recorded there; the promoted replica has the record.
        keys = self.one_bucket_full()
        self.crash_then_fail_over("split:send", keys[0])
        self.assertEqual(self.units(), UNITS, "the record survived the failover")
        self.assert_finished_by_rebalance()

    def test_the_destination_primary_killed_after_the_receive(self):
        # The units arrived at a bucket and the record at the source is still there: the
        # promoted replica must have the receipt, or finishing the transfer adds them again.
        keys = self.one_bucket_full()
        self.crash_then_fail_over("split:receive", keys[1])
        self.assertEqual(int(self.r("GET", keys[1])), UNITS // 3, "the receive survived")
        self.assert_finished_by_rebalance()

    def test_a_receive_its_replica_did_not_confirm_keeps_the_record(self):
        # The destination's replica is paused: the receive lands on its primary and is not
        # confirmed, so the record at the source stays (deleting it would lose the units if the
        # failover that follows lost the receive). Then that primary dies and the replica takes
        # over. Whether it had the receive depends on what its socket still held when it was
        # resumed; either way the next rebalance ends with every unit there once: it receives
        # the units again where the receive was lost, and finds the receipt where it was not.
        keys = self.one_bucket_full()
        primary = self.node_of(keys[1])
        replica = self.replica_of(primary)
        replica_port = replica.port
        replica.kill(signal.SIGSTOP)
        res = self.sc("rebalance", "A", "--wait-timeout", "300")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("durability is not confirmed", res.one["error"])
        self.assertIn("the transfer stays recorded at " + keys[0], res.one["error"])
        # The send was applied: the units left bucket 0. "not applied" would be a lie.
        self.assertFalse(res.one["error"].startswith("not applied"), res.one["error"])
        self.assertEqual(res.one["moved"], 0)
        primary.kill(signal.SIGKILL)
        replica.kill(signal.SIGCONT)
        self.cluster.wait_ok()
        self.r.refresh()
        self.assertEqual(self.r.node_port(keys[1]), replica_port, "the replica took over")
        self.assertIn(int(self.r("GET", keys[1])), (0, UNITS // 3))
        self.assertEqual(self.units(), UNITS, "the record at the source still counts the units")
        self.assert_finished_by_rebalance()

    def test_a_record_its_replica_has_not_confirmed_is_not_received(self):
        # Another process (an application) sent a transfer out of bucket 0 while that
        # primary's replica was paused: the units left bucket 0 and the record is there, on the
        # primary only. A rebalance that finished it now would create units if that primary
        # then failed over to a replica without the send (bucket 0 full again, no record, the
        # units at bucket 1 too). So it confirms the record on the replicas first, and without
        # that it receives nothing.
        keys = self.one_bucket_full()
        primary = self.node_of(keys[0])
        replica = self.replica_of(primary)
        fn = next(f["function"] for f in self.sc("library").one["functions"]
                  if f["script"] == "split_bucket")
        replica.kill(signal.SIGSTOP)
        self.addCleanup(replica.kill, signal.SIGCONT)
        sent = self.r("FCALL", fn, "3", keys[0], keys[0] + ":moves", keys[0] + ":sent:app1",
                      "send", "app1", "30", keys[1])
        self.assertEqual(sent[:2], ["ok", UNITS - 30], sent)
        res = self.sc("rebalance", "A", "--wait-timeout", "300")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("confirming transfer", res.one["error"])
        self.assertEqual(res.one["moved"], 0)
        self.assertIn("durability is not confirmed", res.one["error"])
        self.assertEqual(int(self.r("GET", keys[1])), 0, "nothing received")
        self.assertEqual(self.r("EXISTS", keys[1] + ":in:app1"), 0)
        self.assertEqual(self.units(), UNITS)
        replica.kill(signal.SIGCONT)
        self.assert_finished_by_rebalance()

    def replica_of(self, primary):
        c = primary.client()
        try:
            port = int(c("INFO", "replication").split("slave0:ip=127.0.0.1,port=")[1]
                       .split(",")[0])
        finally:
            c.close()
        return next(n for n in self.cluster.live() if n.port == port)


if __name__ == "__main__":
    unittest.main()
