"""Connections: passwords, ACL users, unix sockets, databases, and servers that are not there."""

import json
import os
import pty
import signal
import socket
import subprocess
import time
import unittest

from harness import STOCKCTL, RedisServer, ServerTest, clean_env, free_port, run


class Password(ServerTest):
    server_kwargs = {"password": "s3cret-pw"}

    def setUp(self):
        super().setUp()
        self.r("SET", "stock:{p}", "10")

    def test_password_in_the_url_works_with_a_warning(self):
        res = run("get", "p", "--url", "redis://:s3cret-pw@127.0.0.1:%d" % self.server.port)
        self.assertEqual((res.rc, res.one["stock"]), (0, 10), res)
        self.assertIn("warning: a password on the command line", res.stderr)
        self.assertNotIn("s3cret-pw", res.stderr + res.stdout)

    def test_password_from_url_in_environment_does_not_warn(self):
        env = clean_env(STOCKCTL_URL="redis://:s3cret-pw@127.0.0.1:%d" % self.server.port)
        res = run("get", "p", env=env)
        self.assertEqual((res.rc, res.stderr), (0, ""))

    def test_password_file(self):
        path = self.write("pw", "s3cret-pw\n")
        os.chmod(path, 0o600)
        res = self.sc("get", "p", "--password-file", path)
        self.assertEqual((res.rc, res.stderr), (0, ""), res)

    def test_password_file_readable_by_others_is_refused(self):
        path = self.write("pw-open", "s3cret-pw\n")
        os.chmod(path, 0o644)
        res = self.sc("get", "p", "--password-file", path)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("is open to every user on this machine (mode 0644); run chmod o= ", res.stderr)
        self.assertNotIn("s3cret-pw", res.stderr)

    def test_password_file_readable_by_its_group_is_accepted(self):
        # As redis-cli and systemd credentials allow: root:stockctl 0640 is the usual way to share
        # one secret with a service's group.
        path = self.write("pw-group", "s3cret-pw\n")
        os.chmod(path, 0o640)
        res = self.sc("get", "p", "--password-file", path)
        self.assertEqual((res.rc, res.stderr), (0, ""), res)
        self.assertEqual(res.one["stock"], 10)

    def test_password_from_environment(self):
        for var in ("STOCKCTL_PASSWORD", "REDISCLI_AUTH"):
            res = run("get", "p", "--url", self.server.url, env=clean_env(**{var: "s3cret-pw"}))
            self.assertEqual(res.rc, 0, (var, res))

    def test_wrong_password_exits_1_without_echoing_it(self):
        res = run("get", "p", "--url", self.server.url, env=clean_env(STOCKCTL_PASSWORD="wrong-guess"))
        self.assertEqual(res.rc, 1, res)
        self.assertIn("authentication failed", res.stderr)
        self.assertNotIn("wrong-guess", res.stderr + res.stdout)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1)

    def test_no_password_fails_once_naming_the_sources_looked_at(self):
        res = self.sc("get", "p", "q")
        self.assertEqual(res.rc, 1, res)
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines], [("p", "error"), ("q", "error")])
        self.assertEqual(len(res.stderr.splitlines()), 1, res)
        self.assertRegex(res.stderr, r"^stockctl: error: authentication failed at 127\.0\.0\.1:\d+: "
                         r"the server requires a password \(NOAUTH\); no password given \(looked at "
                         r"--password-file, the URL, STOCKCTL_PASSWORD, REDISCLI_AUTH\)\n$")

    def test_a_batch_without_password_reports_every_row_not_applied_once(self):
        rows = 3000  # several windows
        path = self.write("b.csv", "sku,qty\n" + "".join("p%d,1\n" % i for i in range(rows)))
        res = self.sc("deduct", "--file", path)
        self.assertEqual(res.rc, 1, res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertIn("NOAUTH", res.stderr)
        self.assertEqual(len(res.lines), rows)
        for line in res.lines:
            self.assertEqual(line["status"], "error")
            self.assertTrue(line["error"].startswith("not applied: authentication failed"), line)

    def test_a_wrong_password_names_its_source_not_its_value(self):
        path = self.write("s.csv", "sku,stock\nA,1\nB,2\n")
        report = os.path.join(self.tmp, "report.jsonl")
        res = self.sc("init", "--file", path, "--report", report,
                      env=clean_env(REDISCLI_AUTH="wrong-guess"))
        self.assertEqual(res.rc, 1, res)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertIn("WRONGPASS", res.stderr)
        self.assertIn("the password from REDISCLI_AUTH", res.stderr)
        self.assertEqual((res.one["counts"]["error"], res.one["status"]), (2, "error"))
        with open(report) as f:
            lines = [json.loads(l) for l in f]
        self.assertTrue(all(l["error"].startswith("not applied:") for l in lines), lines)
        self.assertNotIn("wrong-guess", res.stderr + res.stdout + str(lines))


class AclUser(ServerTest):
    def test_acl_user_with_password(self):
        self.r("ACL", "SETUSER", "alice", "on", ">alice-pw", "~stock:*", "+@all")
        self.r("SET", "stock:{a}", "3")
        res = run("get", "a", "--url", self.server.url, "--user", "alice",
                  env=clean_env(STOCKCTL_PASSWORD="alice-pw"))
        self.assertEqual((res.rc, res.one["stock"]), (0, 3), res)
        res = run("deduct", "a", "1", env=clean_env(STOCKCTL_URL="redis://alice:alice-pw@127.0.0.1:%d" % self.server.port))
        self.assertEqual((res.rc, res.one["stock"]), (0, 2), res)

    def test_acl_denies_keys_outside_its_pattern(self):
        self.r("ACL", "SETUSER", "bob", "on", ">bob-pw", "~other:*", "+@all")
        res = run("get", "a", "--url", self.server.url, "--user", "bob",
                  env=clean_env(STOCKCTL_PASSWORD="bob-pw"))
        self.assertEqual(res.rc, 1)
        self.assertIn("NOPERM", res.one["error"])

    def test_user_without_password_is_a_usage_error(self):
        res = run("get", "a", "--url", self.server.url, "--user", "alice")
        self.assertEqual(res.rc, 2)


class UnixSocket(ServerTest):
    server_kwargs = {"unix": True}

    def test_unix_socket_and_db(self):
        url = "unix://%s?db=3" % self.server.unix
        self.assertEqual(run("init", "u", "9", "--url", url).rc, 0)
        self.r("SELECT", "3")
        self.assertEqual(self.r("GET", "stock:{u}"), "9")
        self.assertEqual(run("get", "u", "--url", url).one["stock"], 9)


class Database(ServerTest):
    def test_a_password_for_a_server_without_one_is_refused_saying_so(self):
        # An environment that carries a password was meant for a server that asks for one.
        self.assertEqual(self.sc("init", "d", "4").rc, 0)
        res = run("deduct", "d", "1", "--url", self.server.url,
                  env=clean_env(STOCKCTL_PASSWORD="s3cret-pw"))
        self.assertEqual((res.rc, res.one["status"]), (1, "error"), res)
        self.assertIn("the server asks for no password, but one was given (is this the server you "
                      "meant?); the password from STOCKCTL_PASSWORD", res.stderr)
        self.assertNotIn("s3cret-pw", res.stderr + res.stdout)
        self.assertEqual(self.r("GET", "stock:{d}"), "4")

    def test_db_in_the_url(self):
        self.assertEqual(self.sc("init", "d", "4").rc, 0)  # db 0
        res = run("init", "d", "5", "--url", self.server.url + "/2")
        self.assertEqual(res.one["status"], "ok")
        self.r("SELECT", "2")
        self.assertEqual(self.r("GET", "stock:{d}"), "5")


class Unreachable(unittest.TestCase):
    def test_nothing_listening(self):
        port = free_port()
        res = run("get", "x", "--url", "redis://127.0.0.1:%d" % port, "--retry-timeout", "300")
        self.assertEqual(res.rc, 1)
        self.assertEqual((res.one["sku"], res.one["status"]), ("x", "error"))
        self.assertIn("cannot connect to 127.0.0.1:%d" % port, res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1)

    def test_a_refused_port_on_a_terminal_says_once_what_is_retried_and_for_how_long(self):
        # Standard error on a pseudo-terminal, as at a person's shell: without --verbose the
        # wait is announced once; the same run into a pipe (a cron log) stays one error line.
        port = free_port()
        main, side = pty.openpty()
        try:
            proc = subprocess.run([STOCKCTL, "get", "x", "--url", "redis://127.0.0.1:%d" % port,
                                   "--retry-timeout", "300"], stdout=subprocess.PIPE, stderr=side,
                                  env=clean_env(), timeout=60)
            os.close(side)
            side = None
            said = b""
            while True:
                try:
                    chunk = os.read(main, 4096)
                except OSError:  # EIO: the terminal's other end is closed and drained
                    break
                if not chunk:
                    break
                said += chunk
        finally:
            os.close(main)
            if side is not None:
                os.close(side)
        self.assertEqual(proc.returncode, 1)
        lines = said.decode().replace("\r\n", "\n").strip().splitlines()
        notices = [l for l in lines if "trying again" in l]
        self.assertEqual(len(notices), 1, lines)
        self.assertEqual(notices[0], "stockctl: cannot connect to 127.0.0.1:%d: Connection refused; "
                         "trying again for up to 300 ms (--retry-timeout)" % port)
        self.assertTrue(lines[-1].startswith("stockctl: error: cannot connect"), lines)

    def test_paused_server_times_out(self):
        server = RedisServer()
        try:
            server.kill(signal.SIGSTOP)
            started = time.monotonic()
            res = run("deduct", "x", "1", "--url", server.url, "--timeout", "500", "--connect-timeout", "500",
                      "--retry-timeout", "1000")
            elapsed = time.monotonic() - started
            self.assertEqual(res.rc, 1, res)
            self.assertIn("no answer within 500 ms", res.stderr)
            self.assertLess(elapsed, 5)
        finally:
            server.proc.send_signal(signal.SIGCONT)
            server.stop()

    def test_bad_url_is_a_usage_error(self):
        res = run("get", "x", "--url", "http://nope")
        self.assertEqual(res.rc, 2)
        self.assertIn("invalid Redis URL: a URL must start with redis://, rediss://, unix://", res.stderr)

    def test_url_from_environment_order(self):
        server = RedisServer()
        try:
            c = server.client()
            c("SET", "stock:{e}", "1")
            c.close()
            bad = "redis://127.0.0.1:%d" % free_port()
            self.assertEqual(run("get", "e", env=clean_env(REDIS_URL=server.url)).rc, 0)
            self.assertEqual(run("get", "e", env=clean_env(STOCKCTL_URL=server.url, REDIS_URL=bad)).rc, 0)
            self.assertEqual(run("get", "e", "--url", server.url, env=clean_env(STOCKCTL_URL=bad)).rc, 0)
        finally:
            server.stop()


if __name__ == "__main__":
    unittest.main()
