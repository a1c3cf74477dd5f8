"""The record of a hold or order id: one string with its expiry, exact first answers on a
repeat, and a record that is not such a string (a hash) refused without a change."""

import json
import unittest

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


if __name__ == "__main__":
    unittest.main()
