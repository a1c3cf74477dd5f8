"""The init lock: foreign tokens are never deleted, waits are bounded and re-check the key."""

import hashlib
import os
import re
import socket
import tempfile
import time
import unittest

from harness import Resp, RespError, ServerTest, lua_script, spawn


def script_sha(name):
    return hashlib.sha1(lua_script(name).encode()).hexdigest()


class InitLock(ServerTest):
    def test_foreign_lock_gives_busy_and_survives(self):
        self.r("SET", "stock:{x}:lock", "foreign-token", "PX", "60000")
        started = time.monotonic()
        res = self.sc("deduct", "x", "1", "--init-value", "5", "--lock-wait", "300")
        self.assertEqual(res.rc, 5, res)
        self.assertEqual(res.one["status"], "busy")
        self.assertLess(time.monotonic() - started, 10)
        self.assertEqual(self.r("GET", "stock:{x}:lock"), "foreign-token")
        self.assertIsNone(self.r("GET", "stock:{x}"))
        # A lock that records no holder (earlier versions, other programs) is still named.
        self.assertRegex(res.one["error"], r"^init lock still held by another process after 300 ms: "
                         r"lock stock:\{x\}:lock is held \(its value records no holder\), "
                         r"\d+\.\d s left$")

    def test_busy_names_the_holder_its_pid_and_when_it_took_the_lock(self):
        # The first process holds the init lock while its --init-cmd waits for a file; a second
        # one gives up after --lock-wait and says who holds the lock. The first then finishes
        # and releases its lock: release still compares the whole value.
        go = os.path.join(tempfile.mkdtemp(prefix="stockctl-lock-"), "go")
        first = spawn("deduct", "x", "1", "--init-cmd",
                      "while [ ! -e %s ]; do sleep 0.02; done; echo 5" % go,
                      "--lock-ttl", "60000", *self.target_args())
        try:
            deadline = time.monotonic() + 30
            while self.r("EXISTS", "stock:{x}:lock") == 0:
                self.assertLess(time.monotonic(), deadline, "the first process took no lock")
                self.assertIsNone(first.poll())
            value = self.r("GET", "stock:{x}:lock")
            token = value.split(" ")[0]
            self.assertRegex(token, r"^[0-9a-f]{32}$")
            self.assertEqual(value.split(" ")[1:3], ["host=" + socket.gethostname(),
                                                     "pid=%d" % first.pid])
            res = self.sc("deduct", "x", "1", "--init-value", "9", "--lock-wait", "200")
            self.assertEqual((res.rc, res.one["status"]), (5, "busy"), res)
            self.assertRegex(res.one["error"],
                             r"^init lock still held by another process after 200 ms: lock "
                             r"stock:\{x\}:lock is held by %s \(pid %d\) since "
                             r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(\d+ s ago\), "
                             r"(59|60)\.\d s left$" % (re.escape(socket.gethostname()), first.pid))
            open(go, "w").close()
            out, err = first.communicate(timeout=30)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
        self.assertEqual(first.returncode, 0, err)
        self.assertIn('"stock":4', out)
        self.assertEqual(self.r("EXISTS", "stock:{x}:lock"), 0, "released by its owner")

    def test_expired_foreign_lock_is_taken_over(self):
        self.r("SET", "stock:{x}:lock", "foreign-token", "PX", "300")
        res = self.sc("deduct", "x", "1", "--init-value", "5", "--lock-wait", "5000")
        self.assertEqual((res.rc, res.one["stock"]), (0, 4), res)

    def test_waiter_rechecks_the_key_while_the_lock_is_held(self):
        self.r("SET", "stock:{x}:lock", "foreign-token", "PX", "60000")
        # On a cluster the lock's SET is seen by the primary that holds the item's slot.
        mon = Resp(self.r.node_port("stock:{x}") if self.cluster else self.server.port)
        mon.send("MONITOR")
        self.assertEqual(mon.read(), "OK")
        proc = spawn("deduct", "x", "1", "--init-value", "5", "--lock-wait", "20000",
                     *self.target_args())
        try:
            # Wait until the process has tried the lock and found it held, then create the key
            # as the lock holder would.
            while True:
                line = mon.read()
                if '"SET" "stock:{x}:lock"' in line:
                    break
            self.r("SET", "stock:{x}", "10")
            out, err = proc.communicate(timeout=30)
        finally:
            mon.close()
            if proc.poll() is None:
                proc.kill()
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn('"stock":9', out)
        self.assertEqual(self.r("GET", "stock:{x}:lock"), "foreign-token")

    def test_unlock_script_deletes_only_its_own_token(self):
        self.r("SCRIPT", "LOAD", lua_script("unlock-1.lua"))
        self.r("SET", "l", "theirs")
        self.assertEqual(self.r("EVALSHA", script_sha("unlock-1.lua"), 1, "l", "mine"), 0)
        self.assertEqual(self.r("GET", "l"), "theirs")
        self.assertEqual(self.r("EVALSHA", script_sha("unlock-1.lua"), 1, "l", "theirs"), 1)
        self.assertIsNone(self.r("GET", "l"))


class Scripts(ServerTest):
    def test_function_flush_is_recovered_silently(self):
        self.r("SET", "stock:{s}", "10")
        self.assertEqual(self.sc("deduct", "s", "1").rc, 0)
        self.r("FUNCTION", "FLUSH")
        self.assertEqual(self.r("FUNCTION", "LIST"), [])
        res = self.sc("deduct", "s", "1")
        self.assertEqual((res.rc, res.one["stock"], res.stderr), (0, 8, ""))
        # On a cluster stockctl loads the library again on the item's primary only.
        owner = self.r._conn(self.r.node_port("stock:{s}")) if self.cluster else self.r
        self.assertTrue(owner("FUNCTION", "LIST"), "the library was loaded again")

    def test_function_flush_in_a_batch(self):
        self.r("SET", "stock:{s}", "100")
        self.r("FUNCTION", "FLUSH")
        path = self.write("b.csv", "sku,qty\n" + "s,1\n" * 10)
        res = self.sc("deduct", "--file", path)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([l["stock"] for l in res.lines], list(range(99, 89, -1)))

    def test_script_rejects_bad_arguments_from_any_caller(self):
        # The keys share a hash tag, so the same calls run on a cluster.
        self.r("SET", "{k}", "5")
        src = lua_script("stock-2.lua")
        for qty in ("0", "-1", "1.5", "abc", "007"):
            with self.assertRaises(RespError) as e:
                self.r("EVAL", src, 2, "{k}", "{k}:req:", "deduct", qty, "", "0", "", "60")
            self.assertIn("STOCKCTL_INVALID", str(e.exception))
        self.assertEqual(self.r("GET", "{k}"), "5")
        self.r("SET", "{k}", "abc")
        with self.assertRaises(RespError) as e:
            self.r("EVAL", src, 2, "{k}", "{k}:req:", "deduct", "1", "", "0", "", "60")
        self.assertIn("STOCKCTL_CORRUPT abc", str(e.exception))


if __name__ == "__main__":
    unittest.main()
