"""Faults against real servers: nothing is lost silently, every item is reported once."""

import json
import os
import signal
import socket
import subprocess
import threading
import time
import unittest

from harness import (STOCKCTL, TARGET, RedisServer, Resp, ServerTest, clean_env, run, spawn,
                     spawn_to_file, standalone_only, wait_for_calls)

ITEMS = 200
PER_ITEM = 1000


class ServerClosesTheConnection(unittest.TestCase):
    def test_writing_to_a_closed_connection_is_reported_not_fatal(self):
        # A server that accepts the connection and closes it at once, as a server that dies
        # does: the client's first write draws a reset, and its next one (the second window in
        # flight) fails with EPIPE. That must be an error reported per item (exit 1), not a
        # SIGPIPE that ends the process before it could say anything.
        listener = socket.create_server(("127.0.0.1", 0))
        port = listener.getsockname()[1]

        def close_first_connection():
            conn, _ = listener.accept()
            listener.close()  # reconnecting is refused from now on
            conn.close()

        server = threading.Thread(target=close_first_connection)
        server.start()
        rows = 5000
        res = run("deduct", "--file", "-", "--format", "csv", "--url", "redis://127.0.0.1:%d" % port,
                  "--retry-timeout", "0", input="sku,qty\n" + "k,1\n" * rows)
        server.join()
        self.assertEqual(res.rc, 1, "%d %s" % (res.rc, res.stderr[-2000:]))
        self.assertEqual(len(res.lines), rows, "every row is reported")
        self.assertEqual({r["status"] for r in res.lines}, {"error"})


class ServerKilledMidBatch(unittest.TestCase):
    def test_every_item_is_reported_and_redis_matches_the_report(self):
        server = RedisServer(persist=True)
        tmp = server.dir
        try:
            c = server.client()
            for i in range(ITEMS):
                c("SET", "stock:{k%d}" % i, str(PER_ITEM))
            c.close()
            rows = ITEMS * PER_ITEM
            path = os.path.join(tmp, "batch.csv")
            with open(path, "w") as f:
                f.write("sku,qty\n")
                f.writelines("k%d,1\n" % (n % ITEMS) for n in range(rows))
            out_path = os.path.join(tmp, "out.jsonl")
            proc = spawn_to_file(out_path, "deduct", "--file", path, "--url", server.url,
                                 "--connect-timeout", "300", "--retry-timeout", "1000")
            wait_for_calls(server, "fcall", 5000)
            server.kill(signal.SIGKILL)
            _, err = proc.communicate(timeout=300)
            with open(out_path) as f:
                out = f.read()
            self.assertEqual(proc.returncode, 1, err[-2000:])
            results = [json.loads(l) for l in out.splitlines()]
            self.assertEqual(len(results), rows, "every item is reported exactly once")
            ok, unknown = {}, {}
            for r in results:
                if r["status"] == "ok":
                    ok[r["sku"]] = ok.get(r["sku"], 0) + 1
                else:
                    self.assertEqual(r["status"], "error", r)
                    self.assertRegex(r["error"], r"^(outcome unknown|not applied): ")
                    if r["error"].startswith("outcome unknown"):
                        unknown[r["sku"]] = unknown.get(r["sku"], 0) + 1
            self.assertGreater(sum(ok.values()), 0)
            self.assertLess(sum(ok.values()), rows)

            server.start(same_port=True)  # reloads the append-only file
            c = server.client()
            for i in range(ITEMS):
                sku = "k%d" % i
                stock = int(c("GET", "stock:{%s}" % sku))
                high = PER_ITEM - ok.get(sku, 0)
                low = high - unknown.get(sku, 0)
                self.assertTrue(low <= stock <= high, (sku, stock, low, high))
            c.close()
        finally:
            server.stop()

    def test_init_report_matches_redis_when_the_server_dies_mid_load(self):
        # Two windows are in flight during a load: what the report says of each row must still
        # hold after the server's append-only file is replayed.
        server = RedisServer(persist=True)
        tmp = server.dir
        rows = 300000
        try:
            path = os.path.join(tmp, "load.csv")
            with open(path, "w") as f:
                f.write("sku,stock\n")
                f.writelines("k%d,%d\n" % (n, 100 + n % 900) for n in range(rows))
            report = os.path.join(tmp, "report.jsonl")
            proc = spawn_to_file(os.path.join(tmp, "summary.json"), "init", "--file", path, "--report", report,
                                 "--url", server.url, "--connect-timeout", "300", "--retry-timeout", "1000")
            wait_for_calls(server, "msetnx", 40)  # 128 keys and their first entries a call
            server.kill(signal.SIGKILL)
            _, err = proc.communicate(timeout=300)
            self.assertEqual(proc.returncode, 1, err[-2000:])
            with open(report) as f:
                results = [json.loads(l) for l in f]
            self.assertEqual([r["sku"] for r in results], ["k%d" % n for n in range(rows)],
                             "every row is reported once, in order")
            statuses = {}
            for r in results:
                kind = r["status"] if r["status"] == "ok" else r["error"].split(":")[0]
                statuses[kind] = statuses.get(kind, 0) + 1
            self.assertEqual(set(statuses) - {"ok", "outcome unknown", "not applied"}, set(), statuses)
            self.assertGreater(statuses.get("ok", 0), 0)
            self.assertGreater(statuses.get("not applied", 0), 0)

            server.start(same_port=True)  # reloads the append-only file
            c = server.client()
            for start in range(0, rows, 10000):
                chunk = results[start:start + 10000]
                stored = c("MGET", *["stock:{%s}" % r["sku"] for r in chunk])
                for r, value in zip(chunk, stored):
                    expected = str(100 + int(r["sku"][1:]) % 900)
                    if r["status"] == "ok":
                        self.assertEqual(value, expected, r)
                    elif r["error"].startswith("not applied"):
                        self.assertIsNone(value, r)
                    else:
                        self.assertIn(value, (None, expected), r)
            c.close()
        finally:
            server.stop()


class RestartedServer(unittest.TestCase):
    def test_scripts_flushed_by_a_restart_are_reloaded(self):
        server = RedisServer(persist=True)
        try:
            self.assertEqual(run("init", "r", "5", "--url", server.url).rc, 0)
            self.assertEqual(run("deduct", "r", "1", "--url", server.url).one["stock"], 4)
            server.kill(signal.SIGTERM)
            server.start(same_port=True)
            res = run("deduct", "r", "1", "--url", server.url)
            self.assertEqual((res.rc, res.one["stock"], res.stderr), (0, 3, ""))
        finally:
            server.stop()


@standalone_only
@unittest.skipIf(TARGET in ("tls", "tls-cluster"),
                 "a TLS handshake needs the stopped server itself: no SCAN would be sent")
class PausedServerScan(unittest.TestCase):
    """A SCAN changes nothing: one that got no answer is sent again within --retry-timeout, as
    every read is, and is never called an unknown outcome."""

    def test_scans_are_retried_reads(self):
        server = RedisServer()
        try:
            server.client()("SET", "stock:{a}", "5")
            server.kill(signal.SIGSTOP)
            try:
                args = ("--url", server.url, "--timeout", "200", "--retry-timeout", "700")
                res = run("export", "--format", "csv", "--output",
                          os.path.join(server.dir, "snap.csv"), *args)
                self.assertEqual((res.rc, res.one["written"]), (1, False), res)
                deleted = run("delete", "a", *args)
            finally:
                server.kill(signal.SIGCONT)
            for what, error in (("export", res.one["error"]), ("delete", deleted.one["error"])):
                self.assertNotIn("outcome unknown", error, what)
                self.assertRegex(error, r"no answer within 200 ms .*\([2-9] tries over \d+ ms\)",
                                 what)
            self.assertEqual(server.client()("GET", "stock:{a}"), "5")
        finally:
            server.stop()


class OutOfMemory(ServerTest):
    server_args = ("--maxmemory", "3mb", "--maxmemory-policy", "noeviction")

    def test_oom_is_reported_per_item_and_nothing_is_half_applied(self):
        rows = 60000
        path = self.write("many.csv", "sku,stock\n" + "".join("item-%06d,%d\n" % (i, i % 50 + 1) for i in range(rows)))
        report = os.path.join(self.tmp, "oom.jsonl")
        res = self.sc("init", "--file", path, "--report", report)
        self.assertEqual(res.rc, 1, res.stderr[-500:])
        self.assertIn("OOM", res.stderr)
        summary = res.one
        self.assertEqual(summary["rows"], rows)
        with open(report) as f:
            items = [json.loads(l) for l in f]
        self.assertEqual(len(items), rows)
        ok = [i for i in items if i["status"] == "ok"]
        failed = [i for i in items if i["status"] == "error"]
        self.assertEqual(len(ok) + len(failed), rows)
        self.assertTrue(ok and failed)
        self.assertTrue(all("OOM" in i["error"] for i in failed))
        # Each item created has its first entry in a key of its own, written with it.
        self.assertEqual(self.r("DBSIZE"), 2 * len(ok),
                         "exactly the items reported ok exist, each with its change log")
        for i in ok[:50]:
            self.assertEqual(self.r("EXISTS", i["key"] + ":first"), 1)
        for i in failed[:50]:
            self.assertIsNone(self.r("GET", i["key"]))

    def test_deduct_under_oom_changes_nothing(self):
        self.r("SET", "stock:{d}", "10")
        self.r("CONFIG", "SET", "maxmemory", "1")
        try:
            res = self.sc("deduct", "d", "1")
            self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
            self.assertIn("OOM", res.one["error"])
            self.assertEqual(self.r("GET", "stock:{d}"), "10")
        finally:
            self.r("CONFIG", "SET", "maxmemory", "3mb")


class PasswordChanged(ServerTest):
    server_kwargs = {"password": "old-pw"}

    def test_password_changed_mid_run(self):
        self.r("SET", "stock:{p}", str(10 ** 6))
        rows = 300000
        path = self.write("p.csv", "sku,qty\n" + "p,1\n" * rows)
        out_path = os.path.join(self.tmp, "p.jsonl")
        proc = spawn_to_file(out_path, "deduct", "--file", path, "--url", self.server.url,
                             "--retry-timeout", "1000", env=clean_env(STOCKCTL_PASSWORD="old-pw"))
        wait_for_calls(self.server, "fcall", 5000)
        self.r("CONFIG", "SET", "requirepass", "new-pw")
        self.r("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        _, err = proc.communicate(timeout=300)
        with open(out_path) as f:
            out = f.read()
        self.assertEqual(proc.returncode, 1)
        results = [json.loads(l) for l in out.splitlines()]
        self.assertEqual(len(results), rows)
        done = sum(r["status"] == "ok" for r in results)
        unknown = sum(r["status"] == "error" and r["error"].startswith("outcome unknown") for r in results)
        self.assertTrue(any("authentication failed" in r.get("error", "") for r in results))
        self.assertNotIn("old-pw", out + err)
        self.r.close()
        self.r = Resp(self.server.port)
        self.r("AUTH", "new-pw")
        stock = int(self.r("GET", "stock:{p}"))
        self.assertTrue(10 ** 6 - done - unknown <= stock <= 10 ** 6 - done)
        self.r("CONFIG", "SET", "requirepass", "old-pw")


class Files(ServerTest):
    def test_report_in_a_missing_directory_fails_before_any_write(self):
        path = self.write("s.csv", "sku,stock\nA,1\n")
        res = self.sc("init", "--file", path, "--report", "/nonexistent-dir/r.jsonl")
        self.assertEqual(res.rc, 1)
        self.assertIn("cannot write report", res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_source_that_is_a_directory(self):
        res = self.sc("init", "--file", self.tmp + "/", "--format", "csv")
        self.assertEqual(res.rc, 1)
        self.assertIn("is a directory", res.stderr)

    def test_report_is_not_left_half_written(self):
        # A source that fails validation writes nothing to Redis; its report holds the invalid
        # rows, whole (one JSON line each), and no temporary file is left beside it.
        path = self.write("bad.csv", "sku,stock\nA,1\nB,x\n")
        report = os.path.join(self.tmp, "invalid.jsonl")
        self.assertEqual(self.sc("init", "--file", path, "--report", report).rc, 2)
        with open(report) as f:
            lines = [json.loads(line) for line in f]
        self.assertEqual([(l["sku"], l["status"]) for l in lines], [("B", "invalid")])
        self.assertIsNone(self.r("GET", "stock:{A}"))
        self.assertFalse([n for n in os.listdir(self.tmp) if ".tmp." in n])


class Interrupted(ServerTest):
    """SIGINT and SIGTERM: stop sending, settle what is in flight, release every lock, write the
    report and metrics, print the summary, exit 130 / 143."""

    def leftovers(self):
        return [n for n in os.listdir(self.tmp) if ".tmp." in n]

    def test_sigterm_during_rebuild_releases_the_run_lock_and_writes_everything(self):
        skus = ["r%d" % i for i in range(1500)]
        # Someone else holds z's init lock: the rebuild waits for it (up to --lock-wait) while
        # holding its run lock, until `timeout` sends SIGTERM.
        self.r("SET", "stock:{z}:lock", "someone-else", "PX", "600000")
        path = self.write("export.csv", "sku,stock\n" + "".join("%s,5\n" % s for s in skus) + "z,5\n")
        report = os.path.join(self.tmp, "report.jsonl")
        prom = os.path.join(self.tmp, "rebuild.prom")
        started = time.monotonic()
        proc = subprocess.run(["timeout", "--preserve-status", "-s", "TERM", "3", STOCKCTL, "rebuild",
                               "--file", path, "--lock-wait", "600000", "--report", report,
                               "--metrics-file", prom, "--timeout", "1000", *self.target_args()],
                              capture_output=True, text=True, env=clean_env(), timeout=120)
        self.assertLess(time.monotonic() - started, 3 + 1 + 5)
        self.assertEqual(proc.returncode, 143, proc.stderr)
        summary = json.loads(proc.stdout)
        self.assertEqual((summary["status"], summary["rows"], summary["counts"]["ok"],
                          summary["counts"]["error"]), ("interrupted", 1501, 1500, 1), summary)
        self.assertIn("interrupted by SIGTERM", proc.stderr)
        with open(report) as f:
            lines = [json.loads(l) for l in f]
        self.assertEqual(len(lines), 1501)
        self.assertEqual((lines[-1]["sku"], lines[-1]["error"]), ("z", "not applied: interrupted by SIGTERM"))
        self.assertEqual(self.leftovers(), [])
        with open(prom) as f:
            self.assertIn('stockctl_last_exit_code{op="rebuild"} 143\n', f.read())
        self.assertIsNone(self.r("GET", "stockctl:rebuild-lock:stock:"), "run lock released")
        self.assertEqual(self.r("GET", "stock:{z}:lock"), "someone-else", "a foreign lock is kept")
        self.assertEqual(self.r("GET", "stock:{r7}"), "5")

        self.r("DEL", "stock:{z}:lock")
        again = self.sc("rebuild", "--file", path)
        self.assertEqual(again.rc, 0, again)
        self.assertEqual((again.one["counts"]["ok"], again.one["counts"]["exists"]), (1, 1500))

    def test_sigint_mid_batch_settles_releases_its_init_lock_and_reports_every_row(self):
        # More rows than three windows of 4,096 (the window where a replica is waited for, as on
        # the test cluster), so that some are still unsent when the first window stops.
        rows = 12500
        stock = self.write("stock.csv", "sku,stock\n" + "".join("b%d,10\n" % i for i in range(rows) if i != 100))
        self.assertEqual(self.sc("init", "--file", stock).rc, 0)
        # Row 100 is missing: stockctl takes its init lock and runs --init-cmd, which blocks
        # reading a FIFO nobody writes. Holding that lock, mid-load, it gets SIGINT.
        fifo = os.path.join(self.tmp, "never-written")
        os.mkfifo(fifo)
        path = self.write("batch.csv", "sku,qty\n" + "".join("b%d,1\n" % i for i in range(rows)))
        out = os.path.join(self.tmp, "out.jsonl")
        proc = spawn_to_file(out, "deduct", "--file", path, "--init-cmd", "cat " + fifo,
                             "--lock-ttl", "600000", *self.target_args())
        try:
            deadline = time.monotonic() + 60
            while self.r("EXISTS", "stock:{b100}:lock") == 0:
                self.assertIsNone(proc.poll(), "still running")
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.01)  # polling the server for the lock, bounded by the deadline
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
            try:  # a reader still blocked on the FIFO (the test failed) gets its end of file
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        self.assertEqual(proc.returncode, 130, err)
        self.assertIn("interrupted by SIGINT", err)
        with open(out) as f:
            lines = [json.loads(l) for l in f]
        self.assertEqual([l["sku"] for l in lines], ["b%d" % i for i in range(rows)])
        self.assertEqual(lines[100]["status"], "error")
        self.assertIn("interrupted by SIGINT", lines[100]["error"])
        ok = [l["sku"] for l in lines if l["status"] == "ok"]
        unsent = [l for l in lines if l["status"] == "error" and l["sku"] != "b100"]
        self.assertTrue(ok and unsent, "stopped mid-load")
        self.assertTrue(all(l["error"] == "not applied: interrupted by SIGINT" for l in unsent))
        self.assertEqual(len(ok) + len(unsent) + 1, rows)
        for l in lines:  # Redis holds exactly what the output says
            if l["sku"] != "b100":
                self.assertEqual(self.r("GET", "stock:{%s}" % l["sku"]), "9" if l["status"] == "ok" else "10")
        self.assertEqual(self.r("EXISTS", "stock:{b100}:lock", "stock:{b100}"), 0, "lock released")

        again = self.sc("deduct", "b100", "1", "--init-value", "5", "--lock-wait", "0")
        self.assertEqual((again.rc, again.one["stock"]), (0, 4), again)


@standalone_only
class InterruptedReads(unittest.TestCase):
    """Reads have nothing to settle: SIGINT stops them, what was printed stays in order, an
    output file is not written, and the exit status is 130. The server is stopped (SIGSTOP) while
    the read is under way, so the signal always lands mid-run."""

    ITEMS = 200000

    def setUp(self):
        self.server = RedisServer()
        c = self.server.client()
        for start in range(0, self.ITEMS, 5000):
            c("MSET", *[x for i in range(start, start + 5000) for x in ("stock:{k%d}" % i, "1")])
        c.close()

    def tearDown(self):
        self.server.kill(signal.SIGCONT)
        self.server.stop()

    def interrupt_after(self, proc, command, calls):
        wait_for_calls(self.server, command, calls)
        self.server.kill(signal.SIGSTOP)
        self.assertIsNone(proc.poll(), "the read was still under way when the server stopped")
        proc.send_signal(signal.SIGINT)
        self.server.kill(signal.SIGCONT)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, err)
        self.assertIn("interrupted by SIGINT", err)
        return out

    def test_export_to_a_file_writes_no_file(self):
        out = os.path.join(self.server.dir, "snap.csv")
        proc = spawn("export", "--format", "csv", "--output", out, "--scan-count", "10",
                     "--url", self.server.url)
        self.interrupt_after(proc, "scan", 20)
        self.assertFalse(os.path.exists(out))
        self.assertFalse([n for n in os.listdir(self.server.dir) if ".tmp." in n])

    def test_get_file_prints_the_lines_it_read_in_order(self):
        path = os.path.join(self.server.dir, "skus.txt")
        with open(path, "w") as f:
            f.write("".join("k%d\n" % i for i in range(self.ITEMS)))
        proc = spawn("get", "--file", path, "--url", self.server.url)
        out = self.interrupt_after(proc, "get", 2000)
        lines = [json.loads(l) for l in out.splitlines()]
        self.assertTrue(0 < len(lines) < self.ITEMS, len(lines))
        self.assertEqual([l["sku"] for l in lines], ["k%d" % i for i in range(len(lines))])
        self.assertTrue(all(l["stock"] == 1 for l in lines))

    def test_doctor_scan_stops(self):
        proc = spawn("doctor", "--scan", "--url", self.server.url)
        self.interrupt_after(proc, "scan", 3)


if __name__ == "__main__":
    unittest.main()


class FullDisk(ServerTest):
    """A 64 KiB tmpfs stands in for a full disk (root only; skipped where mount is refused)."""

    def setUp(self):
        super().setUp()
        self.mnt = os.path.join(self.tmp, "full")
        os.makedirs(self.mnt, exist_ok=True)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", self.mnt],
                          capture_output=True).returncode != 0:
            self.skipTest("cannot mount a small tmpfs here")
        self.addCleanup(subprocess.run, ["umount", self.mnt], capture_output=True)

    def test_report_on_a_full_disk(self):
        path = self.write("many.csv", "sku,stock\n" + "".join("item-%d,1\n" % i for i in range(3000)))
        report = os.path.join(self.mnt, "report.jsonl")
        res = self.sc("init", "--file", path, "--report", report)
        self.assertEqual(res.rc, 1, res)
        self.assertIn("cannot write report %s: No space left on device" % report, res.stderr)
        self.assertEqual(res.one["counts"]["ok"], 3000, "the summary still says what was written")
        self.assertEqual(os.listdir(self.mnt), [], "no half-written report is left behind")

    def test_metrics_file_on_a_full_disk(self):
        with open(os.path.join(self.mnt, "filler"), "wb") as f:
            try:
                f.write(b"x" * 65536)
            except OSError:
                pass
        prom = os.path.join(self.mnt, "stockctl.prom")
        res = self.sc("get", "x", "--metrics-file", prom)
        self.assertEqual(res.rc, 1, res)
        self.assertIn("cannot write metrics file %s: No space left on device" % prom, res.stderr)
        self.assertFalse(os.path.exists(prom))
