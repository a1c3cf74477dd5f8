"""export: every item once, companion keys never, every format loads back, files atomic."""

import json
import os
import signal
import subprocess
import time
import unittest

from harness import (TARGET, RedisCluster, RedisServer, ServerTest, run, spawn, spawn_to_file,
                     standalone_only, wait_for_calls)

# Item ids an export must carry through every format: separators, quotes, backslashes, spaces,
# unicode and the longest id allowed. (Line breaks and tabs are control characters, which no
# item id may hold.)
# A SKU with white space at its start or end is invalid input (see test_source_rules.PaddedSkus);
# white space inside one is kept.
HOSTILE = ['a,b', 'q"uote', '"', 'back\\slash', 'spa ced  out', 'ünï©ødé ✓ 日本', 'x' * 512,
           "semi;colon", "NULL", "\\N", "-1", "=cmd()", "'single'"]


class Export(ServerTest):
    def export(self, *args):
        res = self.sc("export", *args)
        self.assertEqual(res.rc, 0, res)
        return res

    def items(self, *args):
        return sorted((l["sku"], l["stock"]) for l in self.export(*args).lines)

    def test_ndjson_lines_carry_sku_stock_held_ttl(self):
        self.r("SET", "stock:{a}", "5")
        self.r("SET", "stock:{u}", "-1")
        self.r("SET", "stock:{t}", "7", "EX", "1000")
        lines = sorted(self.export().lines, key=lambda l: l["sku"])
        self.assertEqual([list(l) for l in lines], [["sku", "stock", "held", "ttl"]] * 3)
        self.assertEqual(lines[0], {"sku": "a", "stock": 5, "held": 0, "ttl": None})
        self.assertEqual(lines[2], {"sku": "u", "stock": -1, "held": 0, "ttl": None})
        self.assertTrue(0 < lines[1]["ttl"] <= 1000)

    def test_companion_keys_are_never_items(self):
        self.sc("init", "a", "5")  # the item and its change log
        self.sc("add", "a", "1", "--request-id", "r1")  # a request record
        self.r("SET", "stock:{a}:lock", "token")
        self.r("SET", "stock:{gone}:lock", "token")  # a lock whose item does not exist
        self.r("SET", "stock:{b}x", "9")  # not a stock key of this layout
        self.r("SET", "other:{c}", "3")
        self.assertEqual(self.items(), [("a", 6)])

    def test_classic_layout_without_hash_tags(self):
        classic = ("--prefix", "redis_key:stock:", "--no-hashtag")
        for sku in ("1001", "a{tag}b"):
            self.sc("init", sku, "4", *classic)
            self.sc("deduct", sku, "1", "--request-id", "r", *classic)
            self.sc("init", sku + "-lk", "1", *classic)
        self.r("SET", "{redis_key:stock:1001}:lock", "token")
        self.r("SET", "redis_key:stock:a{tag}b:lock", "token")
        self.assertEqual(self.items(*classic),
                         [("1001", 3), ("1001-lk", 1), ("a{tag}b", 3), ("a{tag}b-lk", 1)])

    def test_a_prefix_with_a_hash_tag_puts_every_item_in_one_slot(self):
        one_slot = ("--prefix", "{t}:")
        for sku in ("x", "y"):
            self.sc("init", sku, "2", *one_slot)
            self.sc("deduct", sku, "1", *one_slot)
        self.assertEqual(self.items(*one_slot), [("x", 1), ("y", 1)])
        # Read without hash tags, the same keys are the items "{x}" and "{y}"; their logs stay
        # companion keys.
        self.assertEqual(self.items(*one_slot, "--no-hashtag"), [("{x}", 1), ("{y}", 1)])

    def test_match_is_a_glob_on_the_sku_and_the_prefix_matches_only_itself(self):
        for sku in ("shoe-1", "shoe-2", "hat-1"):
            self.r("SET", "stock:{%s}" % sku, "1")
        self.assertEqual([s for s, _ in self.items("--match", "shoe-*")], ["shoe-1", "shoe-2"])
        self.assertEqual([s for s, _ in self.items("--match", "*-1")], ["hat-1", "shoe-1"])
        glob_prefix = ("--prefix", "p*[x]:")
        self.sc("init", "k", "1", *glob_prefix)
        self.r("SET", "pzzx:{k}", "2")  # would match the prefix if it were a glob
        self.assertEqual(self.items(*glob_prefix), [("k", 1)])

    def test_match_with_hash_tag_characters(self):
        res = self.sc("export", "--match", "a{b}*")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("--match 'a{b}*': item ids hold no '{' or '}' under hash tags", res.stderr)
        self.assertEqual(res.stdout, "")
        classic = ("--prefix", "c:", "--no-hashtag")
        self.sc("init", "a{b}1", "1", *classic)
        self.sc("init", "a2", "1", *classic)
        self.assertEqual(self.items(*classic, "--match", "a{b}*"), [("a{b}1", 1)])

    def test_every_format_loads_back_and_gives_the_same_export(self):
        rows = "".join('"%s",%d\n' % (s.replace('"', '""'), i) for i, s in enumerate(HOSTILE))
        src = self.write("hostile.csv", "sku,stock\n" + rows + "unl,-1\n")
        self.assertEqual(self.sc("init", "--file", src).rc, 0)
        before = self.items()
        self.assertEqual(len(before), len(HOSTILE) + 1)
        self.assertEqual(dict(before)["x" * 512], HOSTILE.index("x" * 512))
        for fmt in ("csv", "tsv", "json", "ndjson"):
            path = os.path.join(self.tmp, "snap." + fmt)
            res = self.export("--format", fmt, "--output", path)
            self.assertEqual(res.one["items"], len(before), fmt)
            self.r("FLUSHALL")
            load = self.sc("init", "--file", path, "--force")
            self.assertEqual(load.rc, 0, (fmt, load))
            self.assertEqual(self.items(), before, fmt)

    def test_csv_round_trip_of_100k_items(self):
        n = 100000
        rows = "".join('"%s-%d",%d\n' % (HOSTILE[i % len(HOSTILE)].replace('"', '""')[:500], i, i)
                       for i in range(n))
        src = self.write("big.csv", "sku,stock\n" + rows)
        self.assertEqual(self.sc("init", "--file", src, "--no-log", timeout=300).rc, 0)
        first = os.path.join(self.tmp, "first.csv")
        self.assertEqual(self.export("--format", "csv", "--output", first).one["items"], n)
        self.r("FLUSHALL")
        self.assertEqual(self.sc("init", "--file", first, "--force", "--no-log", timeout=300).rc, 0)
        again = self.export("--format", "csv").stdout
        with open(first) as f:
            head, *lines = f.read().splitlines()
        head2, *lines2 = again.splitlines()
        self.assertEqual(head, "sku,stock,held,ttl")
        self.assertEqual(sorted(lines), sorted(lines2))

    def test_json_is_one_array(self):
        self.r("SET", "stock:{a}", "1")
        self.r("SET", "stock:{b}", "2")
        self.assertEqual(sorted(json.loads(self.export("--format", "json").stdout),
                                key=lambda l: l["sku"])[1]["stock"], 2)
        self.r("FLUSHALL")
        self.assertEqual(json.loads(self.export("--format", "json").stdout), [])

    def test_corrupt_value_is_reported_and_left_out(self):
        self.r("SET", "stock:{ok}", "1")
        self.r("SET", "stock:{bad}", "abc")
        res = self.sc("export")
        self.assertEqual(res.rc, 1, res)
        self.assertEqual([l["sku"] for l in res.lines], ["ok"])
        self.assertIn("item 'bad': stock:{bad} holds 'abc'; not exported", res.stderr)
        self.assertIn("stockctl: error: 1 item not exported (1 corrupt)\n", res.stderr)
        self.r("RPUSH", "stock:{list}", "x")
        res = self.sc("export")
        self.assertIn("item 'list': stock:{list} holds another kind of value than a stock value "
                      "(WRONGTYPE; redis-cli TYPE shows it); not exported", res.stderr)
        self.assertIn("2 items not exported (2 corrupt)", res.stderr)

    def test_an_export_with_corrupt_items_left_out_keeps_the_last_good_file(self):
        self.r("SET", "stock:{ok}", "1")
        path = os.path.join(self.tmp, "snap.csv")
        good = self.sc("export", "--format", "csv", "--output", path)
        self.assertEqual((good.rc, good.one["items"], good.one["skipped"], good.one["written"]),
                         (0, 1, {"corrupt": 0, "splitting": 0}, True), good)
        with open(path) as f:
            yesterday = f.read()
        self.r("SET", "stock:{two}", "2")
        self.r("SET", "stock:{bad}", "abc")
        self.r("SET", "stock:{worse}", "-5")
        res = self.sc("export", "--format", "csv", "--output", path)
        self.assertEqual(res.rc, 1, res)
        summary = res.one
        self.assertEqual(list(summary), ["op", "items", "skipped", "output", "written", "elapsed_ms"])
        self.assertEqual((summary["items"], summary["skipped"], summary["written"]),
                         (2, {"corrupt": 2, "splitting": 0}, False))
        self.assertIn("stockctl: error: 2 items not exported (2 corrupt); %s left as it was "
                      "(--keep-partial writes the others to it)" % path, res.stderr)
        with open(path) as f:
            self.assertEqual(f.read(), yesterday)
        self.assertFalse([n for n in os.listdir(self.tmp) if ".tmp." in n])
        res = self.sc("export", "--format", "csv", "--output", path, "--keep-partial")
        self.assertEqual((res.rc, res.one["written"]), (1, True), res)
        self.assertIn("2 items not exported (2 corrupt); %s holds the others" % path, res.stderr)
        with open(path) as f:
            self.assertEqual(sorted(f.read().splitlines()[1:]), ["ok,1,0,", "two,2,0,"])

    def test_an_export_that_finds_no_item_keeps_a_file_that_holds_items(self):
        # The nightly export after a cache loss must not replace the snapshot the rebuild needs.
        path = os.path.join(self.tmp, "snap.ndjson")
        empty = self.sc("export", "--output", path)
        self.assertEqual((empty.rc, empty.one["items"], empty.one["written"]), (0, 0, True), empty)
        self.assertEqual(os.path.getsize(path), 0)
        again = self.sc("export", "--output", path)  # a file that held no item is replaced
        self.assertEqual((again.rc, again.one["written"]), (0, True), again)
        self.r("SET", "stock:{ok}", "1")
        self.assertEqual(self.sc("export", "--output", path).rc, 0)
        with open(path) as f:
            yesterday = f.read()
        self.assertIn('"sku":"ok"', yesterday)
        self.r("DEL", "stock:{ok}")
        for args in ([], ["--match", "nothing-*"]):
            res = self.sc("export", "--output", path, *args)
            self.assertEqual((res.rc, res.one["items"], res.one["written"]), (1, 0, False), res)
            self.assertIn("(was the cache lost?); %s holds items and was left as it was "
                          "(--allow-empty replaces it with an empty export)" % path, res.stderr)
            self.assertEqual(res.one["error"], res.stderr.split("stockctl: error: ", 1)[1].strip())
            with open(path) as f:
                self.assertEqual(f.read(), yesterday)
        self.assertIn("no item under the prefix 'stock:'", self.sc("export", "--output", path).stderr)
        self.assertFalse([n for n in os.listdir(self.tmp) if ".tmp." in n])
        res = self.sc("export", "--output", path, "--allow-empty")
        self.assertEqual((res.rc, res.one["written"]), (0, True), res)
        self.assertEqual(os.path.getsize(path), 0)
        # A file that holds no item in another format (an empty CSV export) is replaced too.
        with open(path, "w") as f:
            f.write("sku,stock,held,ttl\n")
        res = self.sc("export", "--output", path)
        self.assertEqual((res.rc, res.one["written"]), (0, True), res)
        # Standard output is not a file to keep: an empty export there is just empty.
        out = self.sc("export", "--format", "csv")
        self.assertEqual((out.rc, out.stdout), (0, "sku,stock,held,ttl\n"), out)
        # Both flags are about a file to keep: without --output they are a usage error.
        for flag in ("--allow-empty", "--keep-partial"):
            res = self.sc("export", flag)
            self.assertEqual((res.rc, res.stdout), (2, ""), res)
            self.assertIn("%s requires --output" % flag, res.stderr)

    @unittest.skipIf(TARGET in ("cluster", "tls-cluster"),
                     "the harness's cluster client routes text keys only; the code is the same")
    def test_an_item_id_that_is_not_utf8_is_named_and_refused_as_input(self):
        # Another program stored it: export lists it and says that JSON cannot carry its bytes;
        # stockctl itself never makes such an item (its JSON lines would name another).
        self.r("SET", b"stock:{\xff\xfe}", "5")
        res = self.sc("export")
        self.assertEqual((res.rc, res.one["stock"]), (0, 5), res)
        self.assertIn("warning: item '\\xff\\xfe' is not valid UTF-8: exported with its bytes "
                      "replaced by U+FFFD (--format csv keeps them), but a source with it is "
                      "invalid until the item is renamed", res.stderr)
        res = self.sc("init", "\udcff\udcfe", "5")  # the bytes ff fe, as the shell passes them
        self.assertEqual((res.rc, res.one["status"]), (2, "invalid"), res)
        self.assertIn("item '\\xff\\xfe': item id is not valid UTF-8", res.stderr)
        self.assertEqual(self.sc("init", "caf\u00e9", "5").rc, 0)

    def test_consistent_under_concurrent_deductions(self):
        # Every item present for the whole scan appears exactly once, with a value between what it
        # held before the deductions and after them.
        n, initial = 3000, 50
        src = self.write("s.csv", "sku,stock\n" + "".join("i%d,%d\n" % (i, initial) for i in range(n)))
        self.sc("init", "--file", src, "--no-log")
        batch = self.write("d.csv", "sku,qty\n" + "".join("i%d,1\n" % (i % n) for i in range(4 * n)))
        writers = [spawn("deduct", "--file", batch, "--no-log", *self.target_args()) for _ in range(2)]
        res = self.sc("export", "--scan-count", "50")
        for w in writers:
            w.communicate(timeout=300)
        self.assertEqual(res.rc, 0, res)
        exported = {l["sku"]: l["stock"] for l in res.lines}
        self.assertEqual(len(res.lines), n, "no item twice, none missing")
        final = {l["sku"]: l["stock"] for l in self.export().lines}
        for sku, stock in exported.items():
            self.assertTrue(final[sku] <= stock <= initial, (sku, stock, final[sku]))
        self.assertEqual(sum(final.values()), n * initial - 2 * 4 * n)

    def test_output_in_a_missing_directory(self):
        res = self.sc("export", "--output", "/nonexistent-dir/x.csv")
        self.assertEqual(res.rc, 1, res)
        self.assertIn("cannot write /nonexistent-dir/x.csv", res.stderr)


@standalone_only
class ExportFaults(unittest.TestCase):
    def export_under_way(self, server):
        """20,000 items, and an export of them to a file, 10 keys a SCAN, under way: its
        process and output path."""
        c = server.client()
        for start in range(0, 20000, 1000):
            c("MSET", *[x for i in range(start, start + 1000) for x in ("stock:{k%d}" % i, "1")])
        c.close()
        out = os.path.join(server.dir, "snap.csv")
        proc = spawn("export", "--format", "csv", "--output", out, "--scan-count", "10",
                     "--url", server.url, "--retry-timeout", "200")
        wait_for_calls(server, "scan", 20)
        return proc, out

    def assert_cut_off(self, proc, out, rc, error):
        """The run ended with `rc`, no file, and its summary saying so."""
        stdout, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, rc, err)
        self.assertFalse(os.path.exists(out))
        self.assertFalse([n for n in os.listdir(os.path.dirname(out)) if ".tmp." in n])
        summary = json.loads(stdout.splitlines()[-1])
        self.assertEqual((summary["op"], summary["written"]), ("export", False), summary)
        self.assertIn(error, summary["error"])

    def test_server_going_down_mid_export_leaves_no_file(self):
        server = RedisServer()
        try:
            proc, out = self.export_under_way(server)
            server.kill(signal.SIGKILL)
            self.assert_cut_off(proc, out, 1, "127.0.0.1")
        finally:
            server.stop()

    def test_an_interrupted_export_ends_with_its_summary_and_no_file(self):
        server = RedisServer()
        try:
            proc, out = self.export_under_way(server)
            proc.send_signal(signal.SIGTERM)
            self.assert_cut_off(proc, out, 143, "interrupted")
        finally:
            server.stop()

    def test_full_disk_leaves_no_file(self):
        server = RedisServer()
        mnt = os.path.join(server.dir, "full")
        os.makedirs(mnt)
        try:
            if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt],
                              capture_output=True).returncode != 0:
                self.skipTest("cannot mount a small tmpfs here")
            try:
                c = server.client()
                c("MSET", *[x for i in range(5000) for x in ("stock:{item-%d}" % i, "1")])
                c.close()
                out = os.path.join(mnt, "snap.ndjson")
                res = run("export", "--output", out, "--url", server.url)
                self.assertEqual(res.rc, 1, res)
                self.assertIn("cannot write %s: No space left on device" % out, res.stderr)
                self.assertEqual(os.listdir(mnt), [])
            finally:
                subprocess.run(["umount", mnt], capture_output=True)
        finally:
            server.stop()


@unittest.skipIf(TARGET != "cluster", "cluster only")
class ClusterNodeDown(unittest.TestCase):
    def test_a_primary_going_down_mid_export_is_exit_1_and_no_file(self):
        cluster = RedisCluster()
        tmp = cluster.nodes[0].dir
        try:
            c = cluster.client()
            for i in range(6000):
                c("SET", "stock:{k%d}" % i, "1")
            c.close()
            out = os.path.join(tmp, "snap.csv")
            proc = spawn("export", "--format", "csv", "--output", out, "--scan-count", "10",
                         "--url", cluster.url, "--cluster", "--retry-timeout", "300")
            victim = sorted(cluster.primaries().items())[-1][1]
            wait_for_calls(victim, "scan", 5)
            victim.kill(signal.SIGKILL)
            _, err = proc.communicate(timeout=120)
            self.assertEqual(proc.returncode, 1, err)
            self.assertFalse(os.path.exists(out))
            self.assertFalse([n for n in os.listdir(tmp) if ".tmp." in n])
        finally:
            cluster.stop()


if __name__ == "__main__":
    unittest.main()
