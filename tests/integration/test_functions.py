"""Redis 7 Functions: stockctl loads its library once and calls the scripts with FCALL; where
a server has no Functions for it (before Redis 7, an ACL, a proxy) it calls them with EVALSHA."""

import hashlib
import signal
import threading
import unittest

from harness import TARGET, RedisServer, ServerTest, clean_env, lua_script, run, standalone_only
from test_compat import OldServerProxy


def commandstats(r):
    return {line.split(":")[0][len("cmdstat_"):] for line in r("INFO", "commandstats").splitlines()
            if line.startswith("cmdstat_")}


def libraries(r):
    return sorted(entry[1] for entry in r("FUNCTION", "LIST"))


def stock_sha():
    return hashlib.sha1(lua_script("stock-2.lua").encode()).hexdigest()


class Functions(ServerTest):
    def setUp(self):
        super().setUp()
        self.r("FUNCTION", "FLUSH")
        self.r("CONFIG", "RESETSTAT")

    def node(self, key):
        """The server that holds `key` (on a cluster, its primary)."""
        return self.r._conn(self.r.node_port(key)) if self.cluster else self.r

    def test_the_library_is_loaded_once_and_called_with_fcall(self):
        self.r("SET", "stock:{a}", "10")
        first = self.sc("deduct", "a", "1", "--verbose")
        self.assertEqual((first.rc, first.one["stock"]), (0, 9), first)
        self.assertIn("scripts are called with FCALL", first.stderr)
        self.assertIn("loaded the Functions library stockctl_", first.stderr)
        again = self.sc("deduct", "a", "1", "--verbose")
        self.assertEqual(again.one["stock"], 8)
        self.assertNotIn("loaded the Functions library", again.stderr)
        (name,) = libraries(self.node("stock:{a}"))
        self.assertRegex(name, r"^stockctl_[0-9a-f]{12}$")
        self.assertIn("fcall", commandstats(self.node("stock:{a}")))
        self.assertNotIn("evalsha", commandstats(self.node("stock:{a}")))

    def test_a_file_whose_windows_all_miss_the_library_says_once_that_it_loaded_it(self):
        # Both windows in flight miss the library; the second one's load finds it there, which
        # is no news.
        for i in range(10):
            self.r("SET", "stock:{w%d}" % i, "1000")
        path = self.write("rows.csv", "sku,qty\n" + "".join("w%d,1\n" % (n % 10) for n in range(1500)))
        res = self.sc("deduct", "--file", path, "--verbose")
        self.assertEqual((res.rc, len(res.lines)), (0, 1500), res)
        said = [l for l in res.stderr.splitlines() if "loaded the Functions library" in l]
        # Once per server: a cluster's lines name each node.
        self.assertEqual(len(said), len(set(said)) if self.cluster else 1, res.stderr)
        self.assertTrue(said, res.stderr)
        self.assertEqual(sum(1000 - int(self.r("GET", "stock:{w%d}" % i)) for i in range(10)), 1500)

    def test_an_older_versions_library_stays_and_is_not_called(self):
        # Another stockctl version's library, still in use by its processes: a different name,
        # different function names.
        old = ("#!lua name=stockctl_000000000000\n"
               "redis.register_function('stockctl_stock_000000000000', function(keys, args)\n"
               "  return redis.error_reply('OLD VERSION CALLED')\nend)\n")
        self.r("FUNCTION", "LOAD", old)
        self.r("SET", "stock:{a}", "10")
        res = self.sc("deduct", "a", "3")
        self.assertEqual((res.rc, res.one["stock"]), (0, 7), res)
        names = libraries(self.node("stock:{a}"))
        self.assertEqual(len(names), 2)
        self.assertIn("stockctl_000000000000", names)

    def test_the_answers_are_the_same_through_fcall(self):
        self.r("SET", "stock:{u}", "-1")
        self.r("SET", "stock:{bad}", "007")
        self.r("SET", "stock:{few}", "2")
        res = self.sc("deduct", "u", "5")
        self.assertEqual(res.one["status"], "unlimited")
        res = self.sc("deduct", "bad", "1")
        self.assertIn("stored value '007'", res.one["error"])
        res = self.sc("deduct", "few", "3")
        self.assertEqual((res.one["status"], res.one["stock"]), ("insufficient", 2))
        res = self.sc("deduct", "missing", "1", "--init-value", "4", "--request-id", "r1")
        self.assertEqual((res.one["status"], res.one["stock"]), ("ok", 3))
        res = self.sc("deduct", "missing", "2", "--request-id", "r1")
        self.assertEqual(res.one["status"], "conflict")
        self.assertEqual(self.r("GET", "stock:{bad}"), "007")
        for key in ("stock:{u}", "stock:{bad}", "stock:{few}", "stock:{missing}"):
            self.assertNotIn("evalsha", commandstats(self.node(key)))

    def test_an_application_that_sends_a_bad_log_length_changes_nothing(self):
        # docs/library.md: an error means nothing changed. A length of 0 was read only by the
        # log's trim, after the units were added.
        self.r("SET", "stock:{z}", "9")
        self.assertEqual(self.sc("add", "z", "1").rc, 0)  # the log exists: the trim is reached
        name = self.sc("library").one["name"]
        node = self.node("stock:{z}")
        for length in ("0", "abc", "-5"):
            with self.assertRaises(Exception) as refused:
                node("FCALL", name.replace("stockctl_", "stockctl_stock_", 1), "2", "stock:{z}",
                     "stock:{z}:changes", "add", "4", "", "", "", "0", length, "shop", "refund")
            self.assertIn("STOCKCTL_INVALID log %s" % length, str(refused.exception))
        self.assertEqual(self.r("GET", "stock:{z}"), "10")

    @standalone_only
    def test_a_user_who_may_not_load_functions_falls_back_to_evalsha(self):
        self.r("ACL", "SETUSER", "clerk", "on", ">clerk-pw", "~*", "+@all", "-function")
        try:
            self.r("SET", "stock:{a}", "10")
            res = run("deduct", "a", "1", "--verbose", "--user", "clerk", "--url", self.server.url,
                      env=clean_env(STOCKCTL_PASSWORD="clerk-pw"))
        finally:
            self.r("ACL", "DELUSER", "clerk")
        self.assertEqual((res.rc, res.one["stock"]), (0, 9), res)
        self.assertIn("scripts are called with EVALSHA", res.stderr)
        self.assertEqual(libraries(self.r), [])
        self.assertIn("evalsha", commandstats(self.r))


def refuses_functions(words):
    return words[0].upper() in (b"FCALL", b"FCALL_RO", b"FUNCTION")


@standalone_only
class BeforeFunctions(unittest.TestCase):
    """Redis before 7 knows neither FCALL nor FUNCTION: a proxy answers them as such a server
    does, and stockctl calls the scripts with EVALSHA."""

    def setUp(self):
        self.server = RedisServer()
        self.addCleanup(self.server.stop)
        self.proxy = OldServerProxy(self.server.port, refuses_functions,
                                    error=b"-ERR unknown command 'FCALL', with args beginning with: \r\n")
        self.addCleanup(self.proxy.close)
        self.url = "redis://127.0.0.1:%d" % self.proxy.port
        self.r = self.server.client()
        self.addCleanup(self.r.close)

    def test_a_batch_falls_back_to_evalsha(self):
        self.r("SET", "stock:{a}", "5000")
        res = run("deduct", "--file", "-", "--format", "csv", "--verbose", "--url", self.url,
                  input="sku,qty\n" + "a,1\n" * 3000)
        self.assertEqual(res.rc, 0, res.stderr[-500:])
        self.assertEqual([l["stock"] for l in res.lines], list(range(4999, 1999, -1)))
        self.assertIn("scripts are called with EVALSHA", res.stderr)
        self.assertEqual(self.r("GET", "stock:{a}"), "2000")
        self.assertEqual(self.r("SCRIPT", "EXISTS", stock_sha()), [1],
                         "the embedded SHA1 is the one Redis computes")
        self.assertEqual(libraries(self.r), [])
        # Windows of 1024, two in flight: only what was sent before the first refusal came back.
        self.assertLessEqual(self.proxy.refused, 2048)

    def test_noscript_after_flush_is_recovered(self):
        self.r("SET", "stock:{s}", "10")
        self.assertEqual(run("deduct", "s", "1", "--url", self.url).rc, 0)
        self.r("SCRIPT", "FLUSH")
        res = run("deduct", "s", "1", "--url", self.url)
        self.assertEqual((res.rc, res.one["stock"]), (0, 8), res)

    def test_bench_falls_back_too(self):
        res = run("bench", "-c", "4", "-n", "200", "--url", self.url)
        self.assertEqual(res.rc, 0, res)
        self.assertIn('"correct":true', res.stdout.replace(" ", ""))


@unittest.skipUnless(TARGET == "cluster", "needs STOCKCTL_TARGET=cluster")
class ClusterFunctions(ServerTest):
    def test_every_primary_gets_the_library(self):
        for port in self.r.primaries():
            self.r._conn(port)("FUNCTION", "FLUSH")
        skus = ["item-%d" % i for i in range(300)]
        path = self.write("s.csv", "sku,stock\n" + "".join("%s,10\n" % s for s in skus))
        self.assertEqual(self.sc("init", "--file", path).rc, 0)
        batch = self.write("d.csv", "sku,qty\n" + "".join("%s,3\n" % s for s in skus))
        res = self.sc("deduct", "--file", batch)
        self.assertEqual(res.rc, 0, res)
        self.assertTrue(all(l["stock"] == 7 for l in res.lines))
        for port in self.r.primaries():
            self.assertEqual(len(self.r._conn(port)("FUNCTION", "LIST")), 1, port)


if __name__ == "__main__":
    unittest.main()


@standalone_only
class StallDuringTheLoad(unittest.TestCase):
    """The server stalls (SIGSTOP, past --timeout) right as stockctl loads its library after
    `Function not found`: the deduction, which certainly did not run, is retried within
    --retry-timeout and answers for real, once; never with the internal NOSCRIPT."""

    def test_a_load_that_times_out_is_retried_like_a_call_that_did_not_run(self):
        server = RedisServer()
        self.addCleanup(server.stop)
        r = server.client()
        self.addCleanup(r.close)
        r("FUNCTION", "FLUSH")
        r("SET", "stock:{a}", "10")
        stalled = threading.Event()

        def stall_at_the_load(words):
            # Called by the proxy before it passes each command on.
            if words[:2] == [b"FUNCTION", b"LOAD"] and not stalled.is_set():
                stalled.set()
                server.kill(signal.SIGSTOP)
                threading.Timer(1.5, server.kill, args=(signal.SIGCONT,)).start()
            return False

        proxy = OldServerProxy(server.port, stall_at_the_load)
        self.addCleanup(proxy.close)
        res = run("deduct", "a", "1", "--url", "redis://127.0.0.1:%d" % proxy.port,
                  "--timeout", "500", "--retry-timeout", "10000")
        self.assertTrue(stalled.is_set(), "the load never went through the proxy")
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 9), res)
        self.assertNotIn("NOSCRIPT", res.stdout + res.stderr)
        self.assertEqual(r("GET", "stock:{a}"), "9", "deducted exactly once")
