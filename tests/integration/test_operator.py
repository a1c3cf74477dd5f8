"""What an operator meets at a shell and in cron: help, quiet/verbose, progress, metrics."""

import os
import pwd
import re
import shlex
import shutil
import tempfile
import subprocess
import time
import unittest

from harness import ROOT, STOCKCTL, RedisServer, ServerTest, run


class Help(unittest.TestCase):
    def test_help_subcommand_matches_dash_dash_help(self):
        for sub in ("get", "deduct", "add", "init", "rebuild"):
            self.assertEqual(run("help", sub).stdout, run(sub, "--help").stdout, sub)
        self.assertEqual(run("help").stdout, run("--help").stdout)

    def test_help_for_an_unknown_command(self):
        res = run("help", "frob")
        self.assertEqual(res.rc, 2)
        self.assertIn("no such command 'frob'", res.stderr)


class Verbosity(ServerTest):
    def test_verbose_says_where_it_connected(self):
        path = self.write("v.csv", "sku,stock\nA,1\n")
        res = self.sc("init", "--file", path, "--verbose")
        self.assertIn("stockctl: connected to 127.0.0.1:%d (db 0)" % self.server.port, res.stderr)
        self.assertIn("%s: 1 rows read, 0 invalid" % path, res.stderr)
        self.assertEqual(self.sc("init", "--file", path).stderr, "")

    def test_quiet_drops_warnings_but_not_errors(self):
        url = "redis://:pw@127.0.0.1:%d" % self.server.port
        self.assertIn("warning", run("get", "x", "--url", url).stderr)
        res = run("get", "x", "--url", url, "--quiet")
        self.assertNotIn("warning", res.stderr)
        self.assertIn("error", res.stderr)  # the server has no password: AUTH fails


class Metrics(ServerTest):
    def test_metrics_file_for_node_exporter(self):
        self.r("SET", "stock:{B}", "1")
        path = self.write("export.csv", "sku,stock\nA,5\nB,9\n")
        prom = os.path.join(self.tmp, "stockctl.prom")
        res = self.sc("rebuild", "--file", path, "--metrics-file", prom)
        self.assertEqual(res.rc, 0, res)
        with open(prom) as f:
            text = f.read()
        self.assertIn('stockctl_items{op="rebuild",status="ok"} 1\n', text)
        self.assertIn('stockctl_drift_items{op="rebuild"} 1\n', text)
        self.assertIn('stockctl_last_exit_code{op="rebuild"} 0\n', text)
        self.assertRegex(text, r'stockctl_run_duration_seconds\{op="rebuild"\} \d+\.\d{3}\n')
        success = re.search(r'stockctl_last_success_timestamp_seconds\{op="rebuild"\} (\d+)', text)
        self.assertTrue(success)
        self.assertLessEqual(abs(int(success.group(1)) - time.time()), 60)
        self.assertEqual(os.listdir(self.tmp).count("stockctl.prom"), 1)
        self.assertFalse([n for n in os.listdir(self.tmp) if n.endswith(".tmp")])

        # A failed run keeps the last success of the earlier one.
        bad = self.sc("rebuild", "--file", path, "--fail-on-drift", "--metrics-file", prom)
        self.assertEqual(bad.rc, 6)
        with open(prom) as f:
            text2 = f.read()
        self.assertIn('stockctl_last_exit_code{op="rebuild"} 6\n', text2)
        self.assertIn(success.group(0), text2)

    def test_unwritable_metrics_file_is_an_error(self):
        res = self.sc("get", "x", "--metrics-file", "/nonexistent-dir/x.prom")
        self.assertEqual(res.rc, 1)
        self.assertIn("cannot write metrics file", res.stderr)


class Progress(ServerTest):
    ROWS = 300000

    def big_file(self):
        path = os.path.join(self.tmp, "big.csv")
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write("sku,stock\n")
                f.writelines("item-%d,%d\n" % (i, i % 100) for i in range(self.ROWS))
        return path

    def test_no_progress_when_stderr_is_not_a_terminal(self):
        res = self.sc("init", "--file", self.big_file())
        self.assertEqual(res.rc, 0)
        self.assertEqual(res.stderr, "")

    @unittest.skipUnless(shutil.which("tmux"), "tmux is not installed")
    def test_progress_on_a_terminal(self):
        session = "stockctl-progress-%d" % os.getpid()
        out = os.path.join(self.tmp, "out.json")
        cmd = "%s init --file %s --url %s > %s; echo DONE-$?" % (STOCKCTL, self.big_file(), self.server.url, out)
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "200", "-y", "20", cmd + "; sleep 60"],
                       check=True)
        try:
            seen_progress = False
            deadline = time.monotonic() + 120
            screen = ""
            while time.monotonic() < deadline:
                screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                                        capture_output=True, text=True).stdout
                if re.search(r"init: \d+/%d rows \(\d+%%\), \d+ rows/s, \d+s left" % self.ROWS, screen) or \
                        re.search(r"validating .*: \d+ rows, \d+ rows/s", screen):
                    seen_progress = True
                if "DONE-" in screen:
                    break
                time.sleep(0.05)  # screen polling, bounded by the deadline
            self.assertIn("DONE-0", screen)
            self.assertTrue(seen_progress, screen)
            # The progress line is erased when the work ends.
            self.assertNotIn("rows/s", screen.split("DONE-0")[0].splitlines()[-1] if screen.split("DONE-0")[0].splitlines() else "")
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        with open(out) as f:
            self.assertIn('"ok":%d' % self.ROWS, f.read())


if __name__ == "__main__":
    unittest.main()


class Examples(ServerTest):
    def test_ci_smoke_script_passes(self):
        env = dict(os.environ, STOCKCTL=STOCKCTL, STOCKCTL_URL=self.server.url, CI_SMOKE_DOCTOR="0")
        proc = subprocess.run(["sh", os.path.join(ROOT, "examples", "ci-smoke.sh")],
                              capture_output=True, text=True, env=env)
        self.assertEqual((proc.returncode, proc.stdout), (0, "ci-smoke: ok\n"), proc.stderr)

    def test_ci_smoke_script_runs_doctor_strict_first(self):
        # The test server keeps nothing on disk and has no replica: doctor --strict refuses it.
        env = dict(os.environ, STOCKCTL=STOCKCTL, STOCKCTL_URL=self.server.url)
        proc = subprocess.run(["sh", os.path.join(ROOT, "examples", "ci-smoke.sh")],
                              capture_output=True, text=True, env=env)
        self.assertEqual(proc.returncode, 1, proc)
        self.assertIn("ci-smoke: doctor found a problem", proc.stderr)
        self.assertEqual(self.r("DBSIZE"), 0)

    def test_ci_smoke_script_catches_an_oversell(self):
        # A fake stockctl whose deduct always succeeds must make the smoke test fail.
        fake = self.write("fake-stockctl", '#!/bin/sh\ncase "$*" in *deduct*) echo \'{"status":"ok","stock":0}\';; *) echo \'{"stock":1}\';; esac\n')
        os.chmod(fake, 0o755)
        env = dict(os.environ, STOCKCTL=fake)
        proc = subprocess.run(["sh", os.path.join(ROOT, "examples", "ci-smoke.sh")],
                              capture_output=True, text=True, env=env)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("oversold", proc.stderr)


def unit_settings(path):
    """The [Service] settings of a unit file as systemd reads them: continuation lines joined,
    comments dropped; {name: [values]}."""
    settings = {}
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        name, _, value = line.partition("=")
        settings.setdefault(name, []).append(value)
    return settings


def relocate(arg, paths):
    """`arg` with a leading path of the unit's machine replaced by this test's."""
    for old, new in paths.items():
        if arg.startswith(old):
            return new + arg[len(old):]
    return arg


@unittest.skipUnless(os.geteuid() == 0 and shutil.which("setpriv"), "needs root and setpriv")
class SystemdUnit(unittest.TestCase):
    """examples/stockctl-rebuild.service as systemd runs it: ExecStart's command line as an
    unprivileged user that cannot read the root-only password file, with the credential that
    LoadCredential= names copied into a credentials directory as systemd lays it out (directory
    0500, file 0400, both owned by the service's user), against a password-protected server."""

    UNIT = os.path.join(ROOT, "examples", "stockctl-rebuild.service")
    PASSWORD = "unit-s3cret"

    def setUp(self):
        self.server = RedisServer(password=self.PASSWORD)
        self.addCleanup(self.server.stop)
        self.user = pwd.getpwnam("nobody")
        self.root = tempfile.mkdtemp(prefix="stockctl-unit-")
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        os.chmod(self.root, 0o711)  # the service's user may pass, not list
        self.settings = unit_settings(self.UNIT)

    def owned_dir(self, name, mode):
        path = os.path.join(self.root, name)
        os.mkdir(path)
        os.chown(path, self.user.pw_uid, self.user.pw_gid)
        os.chmod(path, mode)
        return path

    def credentials(self):
        """Lays out LoadCredential=NAME:SOURCE as systemd does; returns the directory."""
        (spec,) = self.settings["LoadCredential"]
        name, _, source = spec.partition(":")
        self.assertEqual(source, "/etc/stockctl/redis.pass")
        creds = os.path.join(self.root, "credentials")
        os.mkdir(creds)
        path = os.path.join(creds, name)
        with open(path, "w") as f:
            f.write(self.PASSWORD + "\n")
        os.chown(path, self.user.pw_uid, self.user.pw_gid)
        os.chmod(path, 0o400)
        os.chown(creds, self.user.pw_uid, self.user.pw_gid)
        os.chmod(creds, 0o500)
        return creds

    def command_line(self, creds, paths):
        (exec_start,) = self.settings["ExecStart"]
        # %d is systemd's specifier for $CREDENTIALS_DIRECTORY; %% would be a literal percent.
        self.assertNotIn("%%", exec_start)
        argv = shlex.split(exec_start.replace("%d", creds))
        return [relocate(a, paths) for a in argv]

    def test_exec_start_runs_as_an_unprivileged_user_with_its_credential(self):
        self.assertEqual(self.settings["DynamicUser"], ["yes"])
        binary = os.path.join(self.root, "stockctl")
        shutil.copy(STOCKCTL, binary)
        os.chmod(binary, 0o755)
        export = os.path.join(self.root, "export")
        os.mkdir(export)
        os.chmod(export, 0o755)
        with open(os.path.join(export, "stock.tsv"), "w") as f:
            f.write("sku\ttotal\tissued\n1001\t10\t2\n1002\t5\t5\n")
        logs = self.owned_dir("logs", 0o755)  # LogsDirectory=: owned by the service's user
        metrics = self.owned_dir("metrics", 0o755)
        creds = self.credentials()
        argv = self.command_line(creds, {
            "/usr/bin/stockctl": binary,
            "/var/lib/shop/export/": export + "/",
            "/var/log/stockctl/": logs + "/",
            "/var/lib/node_exporter/textfile_collector/": metrics + "/",
        })
        (environment,) = self.settings["Environment"]
        name, _, _ = environment.partition("=")
        self.assertEqual(name, "STOCKCTL_URL")
        env = {"PATH": "/usr/bin:/bin", name: self.server.url, "CREDENTIALS_DIRECTORY": creds}
        proc = subprocess.run(["setpriv", "--reuid=%d" % self.user.pw_uid,
                               "--regid=%d" % self.user.pw_gid, "--clear-groups", "--"] + argv,
                              capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(proc.returncode, 0, (argv, proc.stdout, proc.stderr))
        self.assertEqual(proc.stderr, "")
        r = self.server.client()
        self.addCleanup(r.close)
        self.assertEqual((r("GET", "stock:{1001}"), r("GET", "stock:{1002}")), ("8", "0"))
        with open(os.path.join(logs, "rebuild.jsonl")) as f:
            self.assertEqual(len(f.read().splitlines()), 2)
        self.assertTrue(os.path.exists(os.path.join(metrics, "stockctl.prom")))
