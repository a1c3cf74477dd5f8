"""The record of a hold or order id: one string with its expiry, exact first answers on a
repeat, and a record that is not such a string (a hash) refused without a change."""

import json
import os
import signal
import tempfile
import time
import unittest

from harness import TARGET, RedisServer, calls_on, run, spawn_to_file
from test_holds import HoldsTest


class Record(HoldsTest):
    def test_the_record_is_one_string_that_lives_request_ttl(self):
        self.r("SET", "stock:{a}", "10")
        self.assertEqual(self.sc("order", "o-1", "a=3", "--request-ttl", "1000").rc, 0)
        key = "stockctl:hold:stock:{o-1}"
        self.assertEqual(self.r("TYPE", key), "string")
        self.assertTrue(900 < self.r("TTL", key) <= 1000)
        self.assertEqual(self.r("GET", key), "ordered 0 10\norder\na\tstock:{a}\t3")

    def test_a_repeat_answers_exactly_near_the_largest_stock(self):
        self.r("MSET", "stock:{big}", "9007199254740990", "stock:{u}", "-1")
        first = self.sc("order", "o-2", "big=1", "u=5").one
        self.assertEqual([l["stock"] for l in first["lines"]], [9007199254740989, None])
        again = self.sc("order", "o-2", "u=5", "big=1").one  # merged and ordered: the same lines
        self.assertEqual(again, dict(first, replayed=True))
        self.assertEqual(self.r("GET", "stock:{big}"), "9007199254740989")

    def test_confirm_and_cancel_rewrite_the_state_and_keep_the_expiry(self):
        self.r("SET", "stock:{c}", "10")
        self.assertEqual(self.sc("hold", "h-1", "c=4", "--request-ttl", "900").rc, 0)
        self.assertEqual(self.sc("confirm", "h-1").one["status"], "ok")
        key = "stockctl:hold:stock:{h-1}"
        self.assertTrue(self.r("GET", key).startswith("confirmed "))
        self.assertTrue(0 < self.r("TTL", key) <= 900)
        self.assertEqual(self.sc("cancel", "h-1").one["status"], "ok")
        self.assertTrue(self.r("GET", key).startswith("cancelled "))
        self.assertEqual((self.stock("c"), self.held("c")), (10, 0))

    def test_a_record_that_is_a_hash_is_refused_and_changes_nothing(self):
        # Records were hashes before they were one string; no release wrote that form, so a
        # hash under an id (as a tombstone is) is neither replayed nor settled.
        self.r("SET", "stock:{a}", "7")
        key = "stockctl:hold:stock:{legacy}"
        self.r("HSET", key, "kind", "order", "state", "ordered", "exp", "0",
               "canon", "order\nstock:{a}\t3", "lines", json.dumps([["a", "stock:{a}", "3", "7"]]),
               "answer", "0 7 7")
        again = self.sc("order", "legacy", "a=3")
        self.assertEqual((again.rc, again.one["status"]), (2, "conflict"), again)
        res = self.sc("cancel", "legacy")
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("STOCKCTL_INVALID record " + key, res.one["error"], res)
        self.assertEqual((self.stock("a"), self.r("HGET", key, "state")), (7, "ordered"))



@unittest.skipUnless(TARGET == "standalone", "one Redis of its own")
class SettleCutOff(unittest.TestCase):
    """A server paused mid-run (SIGSTOP past --timeout and --retry-timeout, then SIGCONT) while
    `confirm` of many ids runs: every id still gets exactly one line, in input order."""

    def test_every_id_of_a_confirm_cut_off_by_a_paused_server_has_its_line(self):
        server = RedisServer()
        tmp = tempfile.mkdtemp()
        try:
            url = ("--url", server.url)
            ids = ["h%d" % i for i in range(5000)]
            path = os.path.join(tmp, "holds.csv")
            with open(path, "w") as f:
                f.write("id,sku,qty\n" + "".join("%s,A,1\n" % i for i in ids))
            self.assertEqual(run("init", "A", "10000", *url).rc, 0)
            self.assertEqual(run("hold", "--file", path, "--expire", "3600", *url).rc, 0)
            out = os.path.join(tmp, "confirm.jsonl")
            start = calls_on(server, "fcall")
            proc = spawn_to_file(out, "confirm", *ids, *url, "--timeout", "300",
                                 "--retry-timeout", "300")
            deadline = time.monotonic() + 60
            while calls_on(server, "fcall") < start + 1000:
                self.assertIsNone(proc.poll(), "the run ended before the fault")
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.01)  # polling the server's own call count, bounded by the deadline
            self.assertIsNone(proc.poll(), "the fault lands while the run still writes")
            # The pause outlasts --timeout plus --retry-timeout (0.6 s), so the id on the wire
            # runs out of retries; then the server answers again and the run goes on.
            server.kill(signal.SIGSTOP)
            try:
                time.sleep(1.0)  # the fault's duration
            finally:
                server.kill(signal.SIGCONT)
            _, err = proc.communicate(timeout=120)
            self.assertEqual(proc.returncode, 1, err[-2000:])
            with open(out) as f:
                lines = [json.loads(l) for l in f if l.strip()]
            self.assertEqual([l["id"] for l in lines], ids)
            self.assertEqual(lines[0]["status"], "ok")
            cut = [l for l in lines if l["status"] != "ok"]
            self.assertTrue(cut, "the pause cut some ids off")
            for l in cut:
                self.assertEqual(l["status"], "error", l)
                self.assertRegex(l["error"], r"^(not applied|outcome unknown): ", l)
        finally:
            server.stop()



class InvalidSource(HoldsTest):
    """A --file that fails validation sends nothing, but prints the line of each invalid row (or
    id), as deduct --file does: a script reading standard output sees what was refused."""

    def test_each_invalid_row_has_its_line_and_nothing_is_held(self):
        self.sc("init", "A", "10")
        path = self.write("bad.csv", "id,sku,qty\nc1,A,1\nc2,A,0\nc3,A,x\n")
        for op in ("hold", "order"):
            res = self.sc(op, "--file", path)
            self.assertEqual(res.rc, 2, res)
            self.assertEqual([(l["op"], l["id"], l["status"], l["lines"]) for l in res.lines],
                             [(op, "c2", "invalid", []), (op, "c3", "invalid", [])], res)
            self.assertRegex(res.lines[0]["error"], r"bad\.csv:3: column 'qty'")
            self.assertRegex(res.lines[1]["error"], r"bad\.csv:4: column 'qty'")
            self.assertIn("bad.csv: 2 invalid rows; nothing changed", res.stderr)
            self.assertEqual(self.stock("A"), 10)

    def test_an_invalid_cart_has_its_line_and_nothing_is_held(self):
        self.sc("init", "A", "10")
        rows = "".join("big,s%d,1\n" % i for i in range(1001))
        path = self.write("big.csv", "id,sku,qty\nok,A,1\n" + rows)
        res = self.sc("order", "--file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertEqual([(l["id"], l["status"]) for l in res.lines], [("big", "invalid")], res)
        self.assertIn("big.csv: id 'big': 1001 lines; at most 1000 per id; nothing changed",
                      res.stderr)
        self.assertEqual(self.stock("A"), 10)


if __name__ == "__main__":
    unittest.main()
