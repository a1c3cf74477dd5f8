"""init/rebuild --from-cmd: the source is a command's output, written only when the command
exits 0 and every row is valid. Real PostgreSQL (psql \\copy), SQLite (sqlite3 -csv) and a
mysql --batch shaped TSV from a shell command."""

import os
import json
import shlex
import signal
import sqlite3
import subprocess
import tempfile
import time
import unittest

from harness import ServerTest, clean_env, spawn
from pg_server import Postgres

PG_BINDIR = Postgres.find(need=())
PG_PASSWORD = "pg-pw-3b5e0c27"


def live_members(pgid):
    """Processes of process group `pgid` that are still running (zombies excluded)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            out.append(int(entry))
    return out


def group_gone(pgid, seconds=5):
    """True once nothing of the group runs; a SIGKILL takes effect asynchronously."""
    deadline = time.monotonic() + seconds
    while live_members(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)  # bounded by the deadline
    return True


class FromCmd(ServerTest):
    """The command's status, standard error and output, with plain shell commands."""

    def rebuild(self, cmd, *args, env=None):
        return self.sc("rebuild", "--from-cmd", cmd, *args, env=env)

    def test_output_is_the_source(self):
        res = self.rebuild("printf 'sku,total,issued\\nA,10,3\\nB,5,5\\n'")
        self.assertEqual((res.rc, res.one["source"], res.one["counts"]["ok"]), (0, "<from-cmd>", 2), res)
        self.assertEqual(self.r("MGET", "stock:{A}", "stock:{B}"), ["7", "0"])

    def test_init_from_cmd(self):
        self.r("SET", "stock:{A}", "1")
        res = self.sc("init", "--from-cmd", "printf 'sku,stock\\nA,10\\nB,5\\n'")
        self.assertEqual((res.rc, res.one["counts"]["ok"], res.one["counts"]["exists"]), (0, 1, 1), res)
        self.assertEqual(self.r("MGET", "stock:{A}", "stock:{B}"), ["1", "5"])

    def test_failing_command_writes_nothing_and_names_its_status(self):
        res = self.rebuild("printf 'sku,stock\\nA,1\\n'; echo 'first problem' >&2; echo second >&2; exit 3")
        self.assertEqual(res.rc, 1, res)
        self.assertIn("from-cmd: first problem\nfrom-cmd: second\n", res.stderr)
        self.assertIn("stockctl: error: --from-cmd failed with exit status 3; nothing was written", res.stderr)
        self.assertEqual((res.one["status"], res.one["rows"], self.r("DBSIZE")), ("error", 0, 0))

    def test_command_killed_by_a_signal(self):
        res = self.rebuild("printf 'sku,stock\\nA,1\\n'; kill -9 $$")
        self.assertEqual(res.rc, 1, res)
        self.assertIn("--from-cmd killed by signal 9", res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_failure_wins_over_output_cut_mid_record(self):
        res = self.rebuild("printf 'sku,stock\\nA,1\\n\"B,'; exit 5")
        self.assertEqual(res.rc, 1, res)
        self.assertIn("--from-cmd failed with exit status 5", res.stderr)

    def test_timeout_stops_the_whole_process_group(self):
        pid_file = os.path.join(self.tmp, "pgid-timeout")
        cmd = ("sleep 60 >/dev/null 2>&1 & echo $$ > %s; printf 'sku,stock\\nA,1\\n'; sleep 60"
               % shlex.quote(pid_file))
        res = self.rebuild(cmd, "--from-cmd-timeout", "500")
        self.assertEqual(res.rc, 1, res)
        self.assertIn("--from-cmd still running after 500 ms (--from-cmd-timeout)", res.stderr)
        with open(pid_file) as f:
            self.assertTrue(group_gone(int(f.read())))
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_a_background_process_holding_the_output_is_named(self):
        # The shell exits 0 at once, but `sleep &` keeps its output open: the output may not be
        # whole, and the message says what held it rather than that the command still ran.
        pid_file = os.path.join(self.tmp, "pgid-background")
        cmd = "echo $$ > %s; sleep 60 & printf 'sku,stock\\nA,1\\n'" % shlex.quote(pid_file)
        res = self.rebuild(cmd, "--from-cmd-timeout", "500")
        self.assertEqual(res.rc, 1, res)
        self.assertIn("--from-cmd exited with status 0, but a process it left running kept its "
                      "output open until --from-cmd-timeout (500 ms); its process group was "
                      "killed", res.stderr)
        with open(pid_file) as f:
            self.assertTrue(group_gone(int(f.read())))
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_an_interrupt_stops_the_command_at_once(self):
        # The command runs in a process group of its own, which a terminal's Ctrl-C does not
        # reach: stockctl must stop it, not wait for it (up to --from-cmd-timeout, 10 minutes).
        # The report of an earlier run is replaced, so that it is not read as this one's.
        pid_file = os.path.join(self.tmp, "pgid-interrupt")
        report = self.write("report.jsonl", '{"op":"rebuild","sku":"OLD","status":"ok"}\n')
        printing = ("echo $$ > %s; printf 'sku,stock\\nA,1\\n'; sleep 60"
                    % shlex.quote(pid_file))
        # One that closed its output and goes on running is stopped at once too.
        closed = ("echo $$ > %s; printf 'sku,stock\\nA,1\\n'; exec >&-; sleep 60"
                  % shlex.quote(pid_file))
        for cmd, sig, code in ((printing, signal.SIGINT, 130), (printing, signal.SIGTERM, 143),
                               (closed, signal.SIGINT, 130)):
            if os.path.exists(pid_file):
                os.unlink(pid_file)
            proc = spawn("rebuild", "--from-cmd", cmd, "--report", report, *self.target_args())
            deadline = time.monotonic() + 10
            while not os.path.exists(pid_file) or os.path.getsize(pid_file) == 0:
                self.assertLess(time.monotonic(), deadline, "the command did not start")
                time.sleep(0.01)  # waiting for the command to start, bounded by the deadline
            started = time.monotonic()
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=20)
            self.assertEqual(proc.returncode, code, err)
            self.assertLess(time.monotonic() - started, 10, "stopped at once, not after sleep 60")
            summary = json.loads(out)
            self.assertEqual((summary["status"], summary["counts"]["ok"]), ("interrupted", 0))
            self.assertIn("while --from-cmd ran; its process group was killed and nothing was "
                          "written", err)
            with open(pid_file) as f:
                self.assertTrue(group_gone(int(f.read())))
            self.assertEqual(os.path.getsize(report), 0, "the earlier report is replaced")
            self.assertEqual(self.r("DBSIZE"), 0)

    def test_a_failing_command_replaces_an_earlier_report(self):
        report = self.write("report.jsonl", '{"op":"rebuild","sku":"OLD","status":"ok"}\n')
        res = self.rebuild("exit 3", "--report", report)
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertEqual(os.path.getsize(report), 0)

    def test_line_numbers_are_lines_of_the_output(self):
        res = self.rebuild("printf 'sku,stock\\nA,1\\nB,x\\n'")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("stockctl: error: <from-cmd>:3: column 'stock'", res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_invalid_rows_with_skip_invalid(self):
        res = self.rebuild("printf 'sku,stock\\nA,1\\nB,x\\n'", "--skip-invalid")
        self.assertEqual((res.rc, res.one["counts"]["ok"], res.one["counts"]["invalid"]), (2, 1, 1), res)
        self.assertEqual(self.r("GET", "stock:{A}"), "1")

    def test_mysql_batch_tsv(self):
        # What `mysql --batch -e 'select sku, total, issued from stock'` prints: a header, tabs,
        # backslash escapes, NULL for a missing value.
        out = "sku\\ttotal\\tissued\\nplain\\t10\\t4\\nback\\\\\\\\slash\\t3\\t1\\n"
        res = self.rebuild("printf '%s'" % out, "--format", "tsv")
        self.assertEqual((res.rc, res.one["counts"]["ok"]), (0, 2), res)
        self.assertEqual(self.r("MGET", "stock:{plain}", "stock:{back\\slash}"), ["6", "2"])
        res = self.rebuild("printf '%snull\\t5\\tNULL\\n'" % out, "--format", "tsv")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("<from-cmd>:4:", res.stderr)

    def test_from_cmd_and_file_exclude_each_other(self):
        res = self.rebuild("true", "--file", "x.csv")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("stockctl: error: give --file or --from-cmd, not both", res.stderr)
        self.assertEqual(self.sc("init", "--from-cmd", "true", "--file", "x.csv").rc, 2)

    def test_dry_run_writes_nothing(self):
        res = self.rebuild("printf 'sku,stock\\nA,1\\n'", "--dry-run")
        self.assertEqual((res.rc, res.one["dry_run"]), (0, True), res)
        self.assertEqual(self.r("DBSIZE"), 0)


class Sqlite(ServerTest):
    def setUp(self):
        super().setUp()
        self.db = os.path.join(self.tmp, "shop.db")
        if os.path.exists(self.db):
            os.unlink(self.db)
        with sqlite3.connect(self.db) as db:
            db.execute("CREATE TABLE item (sku TEXT, stock INTEGER, note TEXT)")
            db.executemany("INSERT INTO item VALUES (?, ?, ?)",
                           [("a,1", 5, 'says "hi", twice'), ('q"uote', 7, "plain"), ("plain", 0, "")])

    def test_rebuild_from_sqlite3_csv(self):
        cmd = "sqlite3 -csv -header %s 'select sku, stock, note from item'" % shlex.quote(self.db)
        res = self.sc("rebuild", "--from-cmd", cmd)
        self.assertEqual((res.rc, res.one["counts"]["ok"]), (0, 3), res)
        self.assertEqual(self.r("MGET", "stock:{a,1}", 'stock:{q"uote}', "stock:{plain}"), ["5", "7", "0"])

    def test_failing_sqlite3_writes_nothing(self):
        cmd = "sqlite3 -csv -header %s 'select sku, stock from item; select * from missing'" % shlex.quote(self.db)
        res = self.sc("rebuild", "--from-cmd", cmd)
        self.assertEqual(res.rc, 1, res)
        self.assertIn("from-cmd: ", res.stderr)
        self.assertIn("no such table: missing", res.stderr)
        self.assertIn("--from-cmd failed with exit status 1; nothing was written", res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)


@unittest.skipIf(PG_BINDIR is None, "no PostgreSQL server on this machine")
class PostgreSQL(ServerTest):
    """A password-protected PostgreSQL 15 with 1,000,000 items; psql finds its password in
    PGPASSFILE, never in the command text."""

    ROWS = 1000000

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pg_dir = tempfile.mkdtemp(prefix="stockctl-pg-")
        cls.pg = Postgres(PG_BINDIR, cls.pg_dir, password=PG_PASSWORD)
        cls.pg.sql("CREATE TABLE item AS SELECT id, 'item-' || id AS sku, id %% 100 + 10 AS total, "
                   "id %% 10 AS issued, 'note ' || id AS note FROM generate_series(1, %d) id" % cls.ROWS)
        cls.pg.sql("CREATE TABLE odd (sku text, stock int, note text); INSERT INTO odd VALUES "
                   "('a,b', 3, 'commas, and \"quotes\"'), ('say \"hi\"', 4, '\"\"'), ('plain', 5, 'x,y'), "
                   "('nl', 6, E'two\\nlines')")
        cls.pgpass = os.path.join(cls.tmp, "pgpass")
        with open(cls.pgpass, "w") as f:
            f.write("127.0.0.1:%d:*:postgres:%s\n" % (cls.pg.port, PG_PASSWORD))
        os.chmod(cls.pgpass, 0o600)

    @classmethod
    def tearDownClass(cls):
        cls.pg.stop()
        import shutil
        shutil.rmtree(cls.pg_dir, ignore_errors=True)
        super().tearDownClass()

    def psql(self, copy_query):
        """psql \\copy of a query to standard output as CSV with a header; no password in it."""
        return "psql -X -q -w -v ON_ERROR_STOP=1 -h 127.0.0.1 -p %d -U postgres -d postgres -c %s" % (
            self.pg.port, shlex.quote("\\copy (%s) to stdout csv header" % copy_query))

    def env(self):
        return clean_env(PGPASSFILE=self.pgpass)

    def rebuild(self, query, *args):
        return self.sc("rebuild", "--from-cmd", self.psql(query), *args, env=self.env())

    def test_rebuild_from_psql_copy(self):
        self.r("SET", "stock:{item-2}", "99")  # live: left alone, reported as drift
        res = self.rebuild("select sku, total, issued from item where id <= 2000")
        self.assertEqual(res.rc, 0, res)
        counts = res.one["counts"]
        self.assertEqual((res.one["rows"], counts["ok"], counts["drift"]), (2000, 1999, 1), res)
        self.assertEqual(self.r("MGET", "stock:{item-7}", "stock:{item-2}", "stock:{item-1999}"),
                         ["10", "99", "100"])

    def test_query_failing_half_way_writes_nothing(self):
        query = "select sku, total, issued, 1/(id - 500000) as boom from item"
        # The premise: psql prints the rows before the failing one, then fails.
        direct = subprocess.run(self.psql(query), shell=True, env=self.env(), capture_output=True)
        self.assertEqual(direct.returncode, 1)
        self.assertGreater(direct.stdout.count(b"\n"), 100000)
        res = self.rebuild(query)
        self.assertEqual(res.rc, 1, res)
        self.assertIn("from-cmd: ERROR:  division by zero", res.stderr)
        self.assertIn("--from-cmd failed with exit status 1; nothing was written", res.stderr)
        self.assertEqual((res.one["status"], self.r("DBSIZE")), ("error", 0))

    def test_psql_killed_by_the_timeout(self):
        pid_file = os.path.join(self.tmp, "pgid-psql")
        cmd = "echo $$ > %s; exec %s" % (shlex.quote(pid_file),
                                         self.psql("select 'a' as sku, 1 as stock from pg_sleep(60)"))
        res = self.sc("rebuild", "--from-cmd", cmd, "--from-cmd-timeout", "1500", env=self.env())
        self.assertEqual(res.rc, 1, res)
        self.assertIn("--from-cmd still running after 1500 ms (--from-cmd-timeout)", res.stderr)
        with open(pid_file) as f:
            self.assertTrue(group_gone(int(f.read())))
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_free_text_with_commas_quotes_and_line_breaks(self):
        res = self.rebuild("select sku, stock, note from odd")
        self.assertEqual((res.rc, res.one["counts"]["ok"]), (0, 4), res)
        self.assertEqual(self.r("MGET", "stock:{a,b}", 'stock:{say "hi"}', "stock:{plain}", "stock:{nl}"),
                         ["3", "4", "5", "6"])

    def test_line_numbers_count_the_line_breaks_inside_fields(self):
        res = self.rebuild("select sku, stock::text, note from odd union all select 'bad', 'x', 'n'")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("stockctl: error: <from-cmd>:7: column 'stock'", res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_without_the_password_file_psql_fails_and_nothing_is_written(self):
        res = self.sc("rebuild", "--from-cmd", self.psql("select sku, total, issued from item"),
                      env=clean_env(PGPASSFILE=os.path.join(self.tmp, "none")))
        self.assertEqual(res.rc, 1, res)
        self.assertIn("from-cmd: psql: error:", res.stderr)
        self.assertIn("--from-cmd failed with exit status 2", res.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)
