"""The ACL recipe of the README, on a real redis-server: a user created exactly as it says runs
every command; a user limited to the items' keys is refused with a message naming what it
lacks."""

import os
import re
import unittest

from harness import ROOT, ServerTest, calls_on, clean_env, run, standalone_only
from test_retries import attach_replica


def readme_recipe():
    """The rules of the README's `ACL SETUSER stockctl ...` line, as a list of words."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    found = re.findall(r"^ACL SETUSER stockctl (.+)$", text, flags=re.M)
    assert len(found) == 1, found
    return found[0].split()


@standalone_only
class Recipe(ServerTest):
    def as_user(self, user, password, *args, **kw):
        env = clean_env(STOCKCTL_PASSWORD=password)
        return run(*args, "--url", self.server.url, "--user", user, env=env, **kw)

    def test_the_readme_recipe_runs_every_command(self):
        rules = [">acl-pw" if w.startswith(">") else w for w in readme_recipe()]
        self.r("ACL", "SETUSER", "stockctl", *rules)
        path = self.write("stock.csv", "sku,stock\nA,10\nB,5\n")
        ok = lambda *args: self.assertEqual(self.as_user("stockctl", "acl-pw", *args).rc, 0, args)
        ok("init", "--file", path)
        ok("get", "A", "B", "--details")
        ok("deduct", "A", "1", "--request-id", "r1")
        ok("add", "A", "1")
        ok("deduct", "C", "1", "--init-value", "3")
        ok("hold", "h1", "A=1", "B=1")
        ok("confirm", "h1")
        ok("hold", "h2", "A=1")
        ok("release", "h2")
        ok("order", "o1", "B=1")
        ok("cancel", "o1")
        ok("reap")
        ok("rebuild", "--file", path, "--extra")
        ok("export")
        ok("log", "A")
        ok("delete", "C")
        ok("doctor")
        # A fresh server without the library: the user loads it itself.
        self.r("FUNCTION", "FLUSH")
        ok("deduct", "A", "1")
        self.assertEqual(self.r("GET", "stock:{A}"), "8")

    def test_the_readme_recipe_waits_for_a_replica_beside_the_windows(self):
        # With a replica attached, a file's WAIT goes on a second connection after the mark's
        # transaction, which the recipe allows (MULTI, EXEC, stockctl:wait-mark).
        rules = [">acl-pw" if w.startswith(">") else w for w in readme_recipe()]
        self.r("ACL", "SETUSER", "stockctl", *rules)
        replica = attach_replica(self.server)
        try:
            path = self.write("stock.csv", "sku,stock\n" + "".join("i%d,5\n" % n for n in range(10)))
            # The library is loaded first, so that no call is sent again for want of it.
            run("deduct", "x", "1", "--init-value", "5", "--url", self.server.url,
                "--wait-replicas", "0")
            self.r("CONFIG", "RESETSTAT")
            res = self.as_user("stockctl", "acl-pw", "init", "--file", path)
            self.assertEqual(res.rc, 0, res)
            self.assertEqual((calls_on(self.server, "wait"), calls_on(self.server, "exec")), (1, 2))
        finally:
            replica.stop()

    def test_a_user_limited_to_the_items_keys_is_told_what_it_lacks(self):
        self.r("ACL", "SETUSER", "narrow", "on", ">narrow-pw", "~stock:*", "+@all")
        self.r("SET", "stock:{A}", "10")
        res = self.as_user("narrow", "narrow-pw", "hold", "h1", "A=1")
        self.assertEqual(res.rc, 1, res)
        self.assertIn("NOPERM", res.one["error"])
        self.assertIn("the key patterns ~stock:* (the items and their companion keys) and "
                      "~stockctl:* (hold records, the rebuild lock, change logs)", res.one["error"])
        self.assertIn("stockctl: error: hold h1: ", res.stderr)
        self.assertEqual(self.r("GET", "stock:{A}"), "10")
        path = self.write("stock.csv", "sku,stock\nA,10\n")
        res = self.as_user("narrow", "narrow-pw", "rebuild", "--file", path)
        self.assertEqual(res.rc, 1, res)
        self.assertIn("stockctl: error: cannot take the rebuild lock: "
                      "stockctl:rebuild-lock:stock:: NOPERM ", res.stderr)
        self.assertIn("the key patterns ~stock:* (the items and their companion keys) and "
                      "~stockctl:*", res.stderr)
        # The summary is still printed, as for a busy lock: a script reading standard output
        # sees the run and why it wrote nothing.
        self.assertEqual((res.one["op"], res.one["status"]), ("rebuild", "error"), res)
        self.assertIn("NOPERM", res.one["error"])
        self.assertIn("nothing was written", res.one["error"])


HINT = ("the key patterns ~stock:* (the items and their companion keys) and ~stockctl:* "
        "(hold records, the rebuild lock, change logs)")


class Refusals(ServerTest):
    """Users the server refuses something: every item still gets its line, and the message
    names what was refused (a key, a node) and what the user lacks. On a cluster each node gets
    the user."""

    def setuser(self, name, *rules):
        nodes = self.server.nodes if self.cluster else [self.server]
        for node in nodes:
            c = node.client()
            try:
                c("ACL", "SETUSER", name, "on", ">pw-" + name, *rules)
            finally:
                c.close()

    def as_user(self, user, *args):
        env = clean_env(STOCKCTL_PASSWORD="pw-" + user)
        return run(*args, *self.target_args(), "--user", user, env=env)

    def test_delete_refused_its_scripts_answers_each_item_with_the_hint(self):
        # The recipe without +@scripting: EVALSHA and FCALL are refused with NOPERM.
        rules = [w for w in readme_recipe()[1:] if not w.startswith(">")]
        self.setuser("noscript", *["-@scripting" if w == "+@scripting" else w for w in rules])
        self.r("SET", "stock:{A}", "10")
        res = self.as_user("noscript", "delete", "A", "B")
        self.assertEqual(res.rc, 1, res)
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines],
                         [("A", "error"), ("B", "error")], res)
        for line in res.lines:
            self.assertIn("refused on %s: NOPERM " % line["key"], line["error"])
            self.assertIn(HINT, line["error"])
        self.assertIn("stockctl: error: item 'A': refused on stock:{A}: NOPERM ", res.stderr)
        self.assertEqual(self.r("GET", "stock:{A}"), "10")

    def test_delete_refused_its_scan_still_answers_each_item(self):
        # The search for request ledgers comes first: its refusal ended the run with no line.
        self.setuser("noscan", "~*", "+@all", "-scan")
        self.r("SET", "stock:{A}", "10")
        res = self.as_user("noscan", "delete", "A", "B")
        self.assertEqual(res.rc, 1, res)
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines],
                         [("A", "error"), ("B", "error")], res)
        for line in res.lines:
            self.assertIn("not applied: %s: " % line["key"], line["error"])
            self.assertIn("NOPERM ", line["error"])
            self.assertIn(HINT, line["error"])
        self.assertEqual(self.r("GET", "stock:{A}"), "10")

    def test_delete_names_the_companion_key_refused(self):
        self.setuser("narrow", "~stock:*", "+@all")
        self.r("SET", "stock:{A}", "10")
        res = self.as_user("narrow", "delete", "A")
        self.assertEqual(res.rc, 1, res)
        # The stock key went; the first entries earlier versions kept per slot (and on a
        # cluster, the slot's index of items with holds) are outside the user's keys.
        self.assertEqual((res.one["status"], res.one["previous"]), ("error", 10), res)
        self.assertRegex(res.one["error"], r"^refused on stockctl:\S+: NOPERM ")
        self.assertIn(HINT, res.one["error"])

    def test_log_names_the_key_refused_and_the_rule_to_add(self):
        self.setuser("narrow", "~stock:*", "+@all")
        self.r("SET", "stock:{A}", "10")
        for limit in ((), ("--limit", "1")):
            res = self.as_user("narrow", "log", "A", *limit)
            self.assertEqual(res.rc, 1, res)
            self.assertEqual((res.one["sku"], res.one["status"]), ("A", "error"), res)
            self.assertRegex(res.one["error"], r"^refused on stockctl:log:\{\d+\}: NOPERM ")
            self.assertIn(HINT, res.one["error"])
            self.assertIn("stockctl: error: refused on stockctl:log:{", res.stderr)

    def test_an_acl_that_forbids_function_is_a_server_without_functions(self):
        # Redis 7 names the subcommand ("the 'function|list' command"), which was not taken for
        # a refusal of FUNCTION: exit 1 instead of the documented warning and EVALSHA list.
        self.setuser("nolist", "~*", "+@all", "-function|list")
        res = self.as_user("nolist", "library")
        self.assertEqual(res.rc, 0, res)
        self.assertIn("warning: the server runs no Functions (Redis before 7, or FUNCTION is not "
                      "allowed): applications call the scripts with EVALSHA", res.stderr)
        self.assertTrue(all(len(f["sha1"]) == 40 for f in res.one["functions"]), res)

    def test_library_names_the_node_that_refused_it(self):
        # A standalone server's node has no name of its own: the message gave "on : NOPERM".
        node = r" on 127\.0\.0\.1:\d+: NOPERM "
        self.setuser("noload", "~*", "+@all", "-function|load")
        self.r("FUNCTION", "FLUSH")
        res = self.as_user("noload", "library")
        self.assertEqual(res.rc, 1, res)
        self.assertRegex(res.stderr, r"stockctl: error: loading the Functions library \S+" + node)
        self.assertIn("the commands of the ACL recipe in the README", res.stderr)
        if not self.cluster:
            self.assertIn(" on %s: " % self.server.url.split("://")[1], res.stderr)


if __name__ == "__main__":
    unittest.main()
