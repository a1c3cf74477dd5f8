"""Output files (--report, --output, --metrics-file): a regular file or a new one is replaced
atomically, a symlink's target is replaced and the link kept, anything else (a device, a FIFO,
`-` for standard output) is written in place and never replaced."""

import json
import os
import re
import stat
import subprocess
import threading
import unittest

from harness import STOCKCTL, Result, ServerTest, clean_env

AS_ROOT = os.geteuid() == 0


def run_in(cwd, *args, **kw):
    """Runs stockctl in `cwd`, where a file named "-" would show up."""
    return Result(subprocess.run([STOCKCTL, *args], capture_output=True, text=True,
                                 env=clean_env(), cwd=cwd, timeout=60, **kw))


class OutputFilesTest(ServerTest):
    def setUp(self):
        super().setUp()
        self.dir = os.path.join(self.tmp, self.id().rsplit(".", 1)[-1])
        os.mkdir(self.dir)
        self.source = self.write("s.csv", "sku,stock\na,1\nb,2\n")

    def path(self, name):
        return os.path.join(self.dir, name)

    def init(self, *args, **kw):
        return self.sc("init", "--file", self.source, *args, **kw)

    NOBODY = 65534

    def init_as_nobody(self, report):
        """init --report `report` run as the user nobody (the test runs as root); skips when
        nobody cannot read the test's source file."""
        os.chmod(self.source, 0o644)

        def as_nobody():
            os.setgid(self.NOBODY)
            os.setuid(self.NOBODY)

        proc = run_in(self.dir, "init", "--file", self.source, "--report", report,
                      *self.target_args(), preexec_fn=as_nobody)
        if "Permission denied" in proc.stderr and "s.csv" in proc.stderr:
            self.skipTest("the user nobody cannot read this test's files")
        return proc

    def assert_report(self, text):
        lines = [json.loads(l) for l in text.splitlines()]
        self.assertEqual([(l["sku"], l["status"]) for l in lines], [("a", "ok"), ("b", "ok")])

    def assert_only(self, *names):
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(names), "no temporary file left")


@unittest.skipUnless(AS_ROOT, "mknod needs root")
class Devices(OutputFilesTest):
    """A character device made here, like /dev/null (1, 3): never the machine's own."""

    def setUp(self):
        super().setUp()
        self.null = self.path("null")
        os.mknod(self.null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))

    def assert_still_the_device(self):
        st = os.lstat(self.null)
        self.assertTrue(stat.S_ISCHR(st.st_mode), "replaced by a regular file")
        self.assertEqual(st.st_rdev, os.makedev(1, 3))
        self.assert_only("null")

    def test_report_to_a_device_is_written_in_place(self):
        res = self.init("--report", self.null)
        self.assertEqual(res.rc, 0, res)
        self.assert_still_the_device()

    def test_metrics_file_to_a_device_is_written_in_place(self):
        res = self.init("--metrics-file", self.null)
        self.assertEqual(res.rc, 0, res)
        self.assert_still_the_device()

    def test_export_to_a_device_is_written_in_place(self):
        self.init()
        res = self.sc("export", "--output", self.null)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual((res.one["items"], res.one["output"]), (2, self.null))
        self.assert_still_the_device()

    def test_a_symlink_to_a_device_writes_the_device(self):
        link = self.path("link")
        os.symlink("null", link)
        res = self.init("--report", link)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(os.readlink(link), "null")
        st = os.lstat(self.null)
        self.assertTrue(stat.S_ISCHR(st.st_mode))


class LostStandardOutput(OutputFilesTest):
    """Standard output that cannot be written is an I/O error (exit 1), said on stderr; a batch
    whose reader went away stops as an interrupted one does, never half-way without a word."""

    @unittest.skipUnless(AS_ROOT, "mknod needs root")
    def test_a_full_device_is_an_error_after_the_change_it_could_not_report(self):
        full = self.path("full")
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # as /dev/full
        self.init()
        for args in (("get", "a"), ("deduct", "a", "1"), ("delete", "b")):
            with open(full, "w") as out:
                proc = subprocess.run([STOCKCTL, *args, *self.target_args()], stdout=out,
                                      stderr=subprocess.PIPE, text=True, env=clean_env(),
                                      timeout=60)
            self.assertEqual(proc.returncode, 1, (args, proc.stderr))
            self.assertEqual(proc.stderr, "stockctl: error: cannot write standard output: "
                                          "No space left on device\n", args)
        self.assertEqual((self.r("GET", "stock:{a}"), self.r("GET", "stock:{b}")), ("0", None),
                         "the changes were made; only their answers were lost")

    def test_a_batch_whose_reader_went_away_stops_and_says_how_many_rows_were_not_sent(self):
        rows = 3000  # several windows
        loaded = self.write("i.csv", "sku,stock\n" + "".join("k%d,5\n" % i for i in range(rows)))
        self.assertEqual(self.sc("init", "--file", loaded).rc, 0)
        batch = self.write("d.csv", "sku,qty\n" + "".join("k%d,1\n" % i for i in range(rows)))
        proc = subprocess.Popen([STOCKCTL, "deduct", "--file", batch,
                                 *self.target_args()], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=clean_env())
        first = proc.stdout.readline()
        proc.stdout.close()  # the reader goes away, as `| head -1` does
        stderr = proc.stderr.read().decode()
        self.assertEqual(proc.wait(timeout=60), 1, stderr)
        self.assertEqual(json.loads(first)["status"], "ok")
        stopped = re.search(r"stopped: standard output could not be written \(Broken pipe\): "
                            r"(\d+) rows were not sent", stderr)
        self.assertTrue(stopped, stderr)
        self.assertTrue(stderr.endswith("stockctl: error: cannot write standard output: "
                                        "Broken pipe\n"), stderr)
        stocks = [self.r("GET", "stock:{k%d}" % i) for i in range(rows)]
        applied, untouched = stocks.count("4"), stocks.count("5")
        self.assertGreater(int(stopped.group(1)), 0, "it stopped before the end")
        self.assertEqual((applied + untouched, untouched), (rows, int(stopped.group(1))),
                         "every row applied once or not sent")


class Fifos(OutputFilesTest):
    def read_fifo(self, fifo):
        """Starts a reader of `fifo`, as a log shipper would be; returns (thread, chunks)."""
        chunks = []

        def reader():
            with open(fifo, "rb") as f:  # blocks until stockctl opens the FIFO for writing
                chunks.append(f.read())

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        return thread, chunks

    def test_report_to_a_fifo_reaches_its_reader(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        thread, chunks = self.read_fifo(fifo)
        res = self.init("--report", fifo)
        self.assertEqual(res.rc, 0, res)
        # A bound only against a hang: the reader has its data once stockctl closed the FIFO.
        thread.join(60)
        self.assertFalse(thread.is_alive(), "the reader never got the report")
        self.assert_report(chunks[0].decode())
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced")
        self.assert_only("fifo")

    def test_metrics_file_to_a_fifo_reaches_its_reader(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        thread, chunks = self.read_fifo(fifo)
        res = self.init("--metrics-file", fifo)
        self.assertEqual(res.rc, 0, res)
        thread.join(60)
        self.assertFalse(thread.is_alive(), "the reader never got the metrics")
        self.assertIn('stockctl_items{op="init",status="ok"} 2', chunks[0].decode())
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced")


class Refused(OutputFilesTest):
    def test_a_metrics_fifo_nobody_reads_and_a_read_only_descriptor_fail_before_the_run(self):
        # A cron job that retries on exit 1 must not have deducted the first time.
        self.init()
        fifo = self.path("nobody.fifo")
        os.mkfifo(fifo)
        res = self.sc("deduct", "a", "1", "--metrics-file", fifo, timeout=30)
        self.assertEqual((res.rc, res.stdout), (1, ""), res)
        self.assertIn("cannot write metrics file %s: no process reads the FIFO" % fifo, res.stderr)
        self.assertEqual(self.r("GET", "stock:{a}"), "1", "nothing deducted")
        for option, what in (("--report", "report"), ("--metrics-file", "metrics file")):
            self.r("FLUSHALL")
            res = subprocess.run(
                ["bash", "-c", '"$SC" init --file "$SRC" %s /dev/fd/7 $TARGET 7<"$SRC"' % option],
                capture_output=True, text=True, timeout=60,
                env=dict(clean_env(), SC=STOCKCTL, SRC=self.source,
                         TARGET=" ".join(self.target_args())))
            self.assertEqual(res.returncode, 1, res)
            self.assertIn("cannot write %s /dev/fd/7: the descriptor is open for reading only"
                          % what, res.stderr)
            self.assertEqual(self.r("DBSIZE"), 0, "nothing written to Redis")

    def test_an_output_over_its_source_or_another_output_is_a_usage_error(self):
        with open(self.source) as f:
            source = f.read()
        link = self.path("link.csv")
        os.symlink(self.source, link)
        report = self.path("r.jsonl")
        for args, named in (
                (("--report", self.source), "--file '%s' and --report '%s'" % (self.source,
                                                                              self.source)),
                (("--report", link), "--file '%s' and --report '%s'" % (self.source, link)),
                (("--report", report, "--metrics-file", report),
                 "--report '%s' and --metrics-file '%s'" % (report, report))):
            res = self.init(*args)
            self.assertEqual(res.rc, 2, (args, res))
            self.assertIn("stockctl: error: %s name the same file" % named, res.stderr)
            self.assertEqual(self.r("DBSIZE"), 0, "nothing written to Redis")
        with open(self.source) as f:
            self.assertEqual(f.read(), source, "the source is untouched")
        self.assert_only("link.csv")
        res = self.sc("export", "--output", report, "--metrics-file", report)
        self.assertEqual(res.rc, 2, res)
        # A device written twice in place is no clash.
        null = self.path("null")
        if AS_ROOT:
            os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            res = self.init("--report", null, "--metrics-file", null)
            self.assertEqual(res.rc, 0, res)

    def test_a_fifo_nobody_reads_fails_at_once_before_any_write(self):
        fifo = self.path("nobody.fifo")
        os.mkfifo(fifo)
        res = self.init("--report", fifo, timeout=30)  # would hang in open() for ever before
        self.assertEqual(res.rc, 1, res)
        self.assertEqual(res.stderr.strip().splitlines(),
                         ["stockctl: error: cannot write report %s: no process reads the FIFO" % fifo])
        self.assertEqual(self.r("DBSIZE"), 0, "nothing written to Redis")
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))

    @unittest.skipUnless(AS_ROOT, "mknod needs root")
    def test_a_block_device_is_never_written(self):
        # A block device node of no existing disk (a major number Linux leaves to local use),
        # made here: were it opened, nothing could be written there either.
        disk = self.path("disk")
        os.mknod(disk, 0o600 | stat.S_IFBLK, os.makedev(240, 77))
        res = self.init("--report", disk)
        self.assertEqual(res.rc, 1, res)
        self.assertEqual(res.stderr.strip().splitlines(),
                         ["stockctl: error: cannot write report %s: a block device (a disk)" % disk])
        self.assertEqual(self.r("DBSIZE"), 0, "nothing written to Redis")
        self.assertTrue(stat.S_ISBLK(os.lstat(disk).st_mode))
        self.assert_only("disk")

    @unittest.skipUnless(AS_ROOT, "runs stockctl as another user")
    def test_a_read_only_file_is_not_replaced(self):
        # The directory may be written, so renaming over the file would work; a file its owner
        # made read-only (yesterday's good report, kept) is refused as `>` refuses it.
        os.chmod(self.tmp, 0o755)
        os.chmod(self.dir, 0o777)
        report = self.path("kept.jsonl")
        with open(report, "w") as f:
            f.write("yesterday\n")
        os.chown(report, self.NOBODY, self.NOBODY)
        os.chmod(report, 0o444)
        proc = self.init_as_nobody(report)
        self.assertEqual(proc.rc, 1, proc)
        self.assertEqual(proc.stderr.strip().splitlines(),
                         ["stockctl: error: cannot write report %s: Permission denied" % report])
        self.assertEqual(self.r("DBSIZE"), 0, "nothing written to Redis")
        with open(report) as f:
            self.assertEqual(f.read(), "yesterday\n")
        self.assert_only("kept.jsonl")


class Symlinks(OutputFilesTest):
    def test_a_symlink_is_kept_and_its_target_replaced(self):
        real = self.path("real.jsonl")
        with open(real, "w") as f:
            f.write("old\n")
        os.chmod(real, 0o640)
        link = self.path("latest.jsonl")
        os.symlink("real.jsonl", link)
        res = self.init("--report", link)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(os.readlink(link), "real.jsonl", "the link itself was replaced")
        with open(real) as f:
            self.assert_report(f.read())
        self.assertEqual(stat.S_IMODE(os.stat(real).st_mode), 0o640, "the target keeps its mode")
        self.assert_only("latest.jsonl", "real.jsonl")

    def test_a_chain_of_symlinks_is_followed_to_its_last_target(self):
        os.mkdir(self.path("sub"))
        real = self.path("sub/real.prom")
        os.symlink("sub/middle", self.path("latest.prom"))
        os.symlink(real, self.path("sub/middle"))
        res = self.init("--metrics-file", self.path("latest.prom"))
        self.assertEqual(res.rc, 0, res)
        self.assertTrue(os.path.islink(self.path("latest.prom")))
        self.assertTrue(os.path.islink(self.path("sub/middle")))
        with open(real) as f:
            self.assertIn('stockctl_items{op="init",status="ok"} 2', f.read())
        self.assertEqual(sorted(os.listdir(self.path("sub"))), ["middle", "real.prom"])

    def test_a_dangling_symlink_creates_its_target(self):
        link = self.path("latest.jsonl")
        os.symlink("new.jsonl", link)
        res = self.init("--report", link)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(os.readlink(link), "new.jsonl")
        with open(self.path("new.jsonl")) as f:
            self.assert_report(f.read())
        self.assert_only("latest.jsonl", "new.jsonl")

    def test_a_symlink_into_a_missing_directory_fails_before_any_write(self):
        link = self.path("latest.jsonl")
        os.symlink("gone/new.jsonl", link)
        res = self.init("--report", link)
        self.assertEqual(res.rc, 1, res)
        self.assertEqual(res.stderr.strip().splitlines(),
                         ["stockctl: error: cannot write report %s: No such file or directory" % link])
        self.assertEqual(self.r("DBSIZE"), 0, "nothing written to Redis")
        self.assertEqual(os.readlink(link), "gone/new.jsonl")
        self.assert_only("latest.jsonl")

    @unittest.skipUnless(AS_ROOT, "runs stockctl as another user")
    def test_a_symlink_into_a_directory_that_cannot_be_written_fails_before_any_write(self):
        os.chmod(self.tmp, 0o755)
        os.chmod(self.dir, 0o755)
        locked = self.path("locked")
        os.mkdir(locked, 0o555)
        link = self.path("latest.jsonl")
        os.symlink("locked/new.jsonl", link)
        proc = self.init_as_nobody(link)
        self.assertEqual(proc.rc, 1, proc)
        self.assertEqual(proc.stderr.strip().splitlines(),
                         ["stockctl: error: cannot write report %s: Permission denied" % link])
        self.assertEqual(self.r("DBSIZE"), 0, "nothing written to Redis")
        self.assertEqual(os.listdir(locked), [])
        self.assertEqual(os.readlink(link), "locked/new.jsonl")

    def test_a_regular_file_is_still_replaced_atomically(self):
        report = self.path("r.jsonl")
        with open(report, "w") as f:
            f.write("old\n")
        inode = os.stat(report).st_ino
        res = self.init("--report", report)
        self.assertEqual(res.rc, 0, res)
        self.assertNotEqual(os.stat(report).st_ino, inode, "written to a new file, then renamed")
        with open(report) as f:
            self.assert_report(f.read())
        self.assert_only("r.jsonl")

    def test_a_temporary_file_a_killed_run_left_is_named_not_removed(self):
        # SIGKILL leaves "<file>.tmp.<pid>.XXXXXX" behind: the next run names it, and leaves
        # it (on a shared file system the process may be another machine's).
        gone = subprocess.Popen(["true"])
        gone.wait()  # reaped: its pid names no process
        left = self.path("r.jsonl.tmp.%d.AbC123" % gone.pid)
        live = self.path("r.jsonl.tmp.%d.XyZ789" % os.getpid())
        for path in (left, live):
            with open(path, "w") as f:
                f.write("half\n")
        res = self.init("--report", self.path("r.jsonl"))
        self.assertEqual(res.rc, 0, res)
        self.assertIn("warning: '%s' was left by an earlier run that was killed" % left,
                      res.stderr)
        self.assertNotIn(os.path.basename(live), res.stderr, "its process is running")
        self.assertTrue(os.path.exists(left) and os.path.exists(live))
        with open(self.path("r.jsonl")) as f:
            self.assert_report(f.read())


class StandardOutput(OutputFilesTest):
    def test_report_dash_writes_the_lines_on_standard_output_before_the_summary(self):
        res = run_in(self.dir, "init", "--file", self.source, "--report", "-", *self.target_args())
        self.assertEqual(res.rc, 0, res)
        lines = res.stdout.splitlines()
        self.assert_report("\n".join(lines[:2]))
        self.assertEqual(json.loads(lines[2])["op"], "init")
        self.assertEqual(len(lines), 3)
        self.assert_only()

    def test_export_output_dash_is_standard_output_without_a_summary(self):
        self.init()
        res = run_in(self.dir, "export", "--format", "csv", "--output", "-", *self.target_args())
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(sorted(res.stdout.splitlines()[1:]), ["a,1,0,", "b,2,0,"])
        self.assert_only()

    def test_metrics_file_dash_writes_the_metrics_on_standard_output(self):
        res = run_in(self.dir, "init", "--file", self.source, "--metrics-file", "-",
                     *self.target_args())
        self.assertEqual(res.rc, 0, res)
        self.assertIn('stockctl_items{op="init",status="ok"} 2', res.stdout)
        self.assert_only()


class WrittenAtTheEnd(OutputFilesTest):
    def test_a_metrics_file_that_cannot_be_written_stops_the_run_before_any_write(self):
        res = self.init("--metrics-file", self.path("missing/m.prom"))
        self.assertEqual(res.rc, 1, res)
        self.assertIn("cannot write metrics file %s: No such file or directory"
                      % self.path("missing/m.prom"), res.stderr)
        self.assertEqual(res.stdout, "", "the run did not start")
        self.assertEqual(self.sc("get", "a").one["status"], "missing", "nothing written")
        self.assert_only()


class OwnDescriptors(OutputFilesTest):
    """/dev/stdout, /dev/stderr, /dev/fd/N name a descriptor the shell set up: written through
    it, never reopened (a `>>` log would be replaced by the report) or looked up by its link's
    target (a pipe's "pipe:[N]" is no file)."""

    def shell(self, command):
        env = dict(clean_env(), SC=STOCKCTL, SRC=self.source, TARGET=" ".join(self.target_args()))
        return subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env,
                              cwd=self.dir, timeout=60)

    def test_report_to_dev_stdout_appends_to_a_redirected_log(self):
        log = self.write(os.path.join(self.dir, "cron.log"), "line1\n")
        inode = os.stat(log).st_ino
        res = self.shell('"$SC" init --file "$SRC" --report /dev/stdout $TARGET >> cron.log')
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(os.stat(log).st_ino, inode, "the log is the same file, not replaced")
        with open(log) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "line1")
        self.assert_report("\n".join(lines[1:3]))
        self.assertEqual(json.loads(lines[-1])["op"], "init")
        self.assert_only("cron.log")

    def test_export_to_dev_stdout_and_dev_fd_into_pipes(self):
        self.init()
        res = self.shell('"$SC" export --format csv --output /dev/stdout $TARGET | cat')
        self.assertEqual(res.returncode, 0, res.stderr)
        # Standard output by another name: the data alone, no summary after it, as with `-`.
        self.assertEqual(res.stdout.splitlines()[0], "sku,stock,held,ttl")
        self.assertEqual(sorted(res.stdout.splitlines()[1:]), ["a,1,0,", "b,2,0,"])
        res = self.shell('"$SC" export --format csv --output /dev/fd/7 $TARGET 7>&1 >/dev/null | cat')
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(sorted(res.stdout.splitlines()[1:]), ["a,1,0,", "b,2,0,"])
        self.assert_only()

    def test_metrics_to_dev_stderr_and_a_closed_descriptor(self):
        res = self.shell('"$SC" init --file "$SRC" --metrics-file /dev/stderr $TARGET 2>m.txt')
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(self.path("m.txt")) as f:
            self.assertIn('stockctl_items{op="init",status="ok"} 2', f.read())
        res = self.shell('"$SC" export --output /dev/fd/9 $TARGET')
        self.assertEqual(res.returncode, 1)
        self.assertIn("cannot write /dev/fd/9: Bad file descriptor", res.stderr)
        self.assert_only("m.txt")

if __name__ == "__main__":
    unittest.main()
