"""doctor behind Sentinel: the `sentinel` check asks each sentinel of the URL which master it
names and whether its quorum can be reached (SENTINEL CKQUORUM); the master's replicas are asked
for their persistence."""

import signal
import time
import unittest

from harness import free_port, run
from test_sentinel import MASTER, SentinelSet


def sentinel_findings(res):
    return {f["node"]: f for f in res.lines if f["check"] == "sentinel"}


class SentinelCheck(unittest.TestCase):
    def setUp(self):
        self.set = SentinelSet()
        self.addCleanup(self.set.stop)
        self.nodes = ["127.0.0.1:%d" % s.port for s in self.set.sentinels]
        self.stopped = []  # sentinels this test sent SIGSTOP

    def tearDown(self):
        for s in self.stopped:
            s.proc.send_signal(signal.SIGCONT)

    def test_every_sentinel_reachable_agreeing_with_quorum_is_ok(self):
        res = run("doctor", "--url", self.set.url())
        found = sentinel_findings(res)
        self.assertEqual(sorted(found), sorted(self.nodes), res)
        master = "127.0.0.1:%d" % self.set.master.port
        for f in found.values():
            self.assertEqual(f["status"], "ok", f)
            self.assertTrue(f["detail"].startswith("master %s; OK 3 usable Sentinels" % master), f)
        # The replica is asked too: it has no persistence here.
        replica = "127.0.0.1:%d" % self.set.servers[1].port
        replication = {f["node"]: f for f in res.lines if f["check"] == "replication"}
        self.assertEqual(replication[replica]["status"], "warn", res)
        self.assertIn("neither AOF nor RDB", replication[replica]["detail"])

    def test_a_sentinel_that_is_down_warns(self):
        down = free_port()
        res = run("doctor", "--url", self.set.url(down), "--connect-timeout", "500")
        found = sentinel_findings(res)
        self.assertEqual(found["127.0.0.1:%d" % down]["status"], "warn", res)
        self.assertIn("not reachable", found["127.0.0.1:%d" % down]["detail"])
        self.assertIn("one vote fewer", found["127.0.0.1:%d" % down]["hint"])
        self.assertEqual([found[n]["status"] for n in self.nodes], ["ok"] * 3, res)

    def test_a_stopped_sentinel_is_reported_within_the_connect_timeout(self):
        # A stopped sentinel accepts connections (the kernel does) and never answers.
        stopped = self.set.sentinels[2]
        stopped.proc.send_signal(signal.SIGSTOP)
        self.stopped.append(stopped)
        started = time.monotonic()
        res = run("doctor", "--url", self.set.url(), "--connect-timeout", "1000")
        elapsed = time.monotonic() - started
        found = sentinel_findings(res)
        self.assertEqual(found[self.nodes[2]]["status"], "warn", res)
        self.assertEqual(found[self.nodes[2]]["detail"],
                         "not reachable: talking to %s: no answer within 1000 ms (server down, "
                         "paused or unreachable?)" % self.nodes[2])
        self.assertEqual([found[n]["status"] for n in self.nodes[:2]], ["ok"] * 2, res)
        # The master is still found and checked through the other two.
        master = "127.0.0.1:%d" % self.set.master.port
        self.assertIn(master, [f["node"] for f in res.lines if f["check"] == "persistence"], res)
        # One connect timeout, not --timeout (5 s) for each time the sentinels are asked;
        # loosely, for a busy machine.
        self.assertLess(elapsed, 4, res)

    def test_a_quorum_that_cannot_be_reached_fails(self):
        self.set.sentinels[2].ask("SENTINEL", "SET", MASTER, "quorum", "5")
        res = run("doctor", "--url", self.set.url())
        self.assertEqual(res.rc, 1, res)
        f = sentinel_findings(res)[self.nodes[2]]
        self.assertEqual(f["status"], "fail", res)
        self.assertIn("NOQUORUM", f["detail"])
        self.assertEqual([sentinel_findings(res)[n]["status"] for n in self.nodes[:2]], ["ok"] * 2)

    def test_a_sentinel_naming_another_master_or_none_fails(self):
        lost, other = self.set.sentinels[1], self.set.sentinels[2]
        lost.ask("SENTINEL", "REMOVE", MASTER)
        other.ask("SENTINEL", "REMOVE", MASTER)
        other.ask("SENTINEL", "MONITOR", MASTER, "127.0.0.1", str(self.set.servers[1].port), "2")
        res = run("doctor", "--url", self.set.url())
        self.assertEqual(res.rc, 1, res)
        found = sentinel_findings(res)
        self.assertEqual(found[self.nodes[1]]["status"], "fail", res)
        self.assertEqual(found[self.nodes[1]]["detail"], "does not monitor a master named 'stock'")
        self.assertEqual(found[self.nodes[2]]["status"], "fail", res)
        self.assertIn("names 127.0.0.1:%d as the master" % self.set.servers[1].port,
                      found[self.nodes[2]]["detail"])
        self.assertIn("SENTINEL RESET stock", found[self.nodes[2]]["hint"])


if __name__ == "__main__":
    unittest.main()
