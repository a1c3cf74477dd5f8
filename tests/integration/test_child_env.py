"""Child processes (--init-cmd, --from-cmd) get stockctl's environment without its secrets.

Each test runs stockctl against a password-protected redis-server with the secret in one
variable; the child writes its whole environment to a file. The password must not be in it,
the rest of the environment must be, and stockctl must still authenticate and do the work."""

import os
import shlex

from harness import ServerTest, clean_env, run

PASSWORD = "pw-7d1c0a9e55f34b2b"
SENTINEL_PASSWORD = "sentinel-pw-94e2b6c1d0"


class ChildEnvironment(ServerTest):
    server_kwargs = {"password": PASSWORD}

    def url(self, password=None):
        auth = ":%s@" % password if password else ""
        return "redis://%s127.0.0.1:%d" % (auth, self.server.port)

    def env_file(self):
        return os.path.join(self.tmp, "child-env-%s" % self.id().rsplit(".", 1)[-1])

    def child_env(self, path):
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "surrogateescape")
        return text, dict(line.split("=", 1) for line in text.split("\0") if "=" in line)

    def env(self, **secrets):
        env = clean_env(PGPASSFILE="/etc/stockctl/pgpass", **secrets)
        env.pop("STOCKCTL_SENTINEL_PASSWORD", None)
        return env

    def deduct_with_init_cmd(self, env, *url_args):
        path = self.env_file()
        cmd = "env -0 > %s; echo 10" % shlex.quote(path)
        res = run("deduct", "item-1", "1", "--init-cmd", cmd, *url_args, env=env)
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 9), res)
        return self.child_env(path)

    def assert_no_secret(self, text, child, *secrets):
        for secret in secrets:
            holders = [name for name, value in child.items() if secret in value]
            self.assertFalse(secret in text, "the child got a password in %s" % holders)
        self.assertEqual(child["STOCKCTL_SKU"], "item-1")
        self.assertEqual(child["PGPASSFILE"], "/etc/stockctl/pgpass")
        self.assertEqual(child["PATH"], os.environ["PATH"])
        self.assertEqual(child.get("HOME"), os.environ.get("HOME"))
        for name in ("STOCKCTL_PASSWORD", "REDISCLI_AUTH", "STOCKCTL_SENTINEL_PASSWORD"):
            self.assertNotIn(name, child)

    def test_init_cmd_without_STOCKCTL_PASSWORD(self):
        text, child = self.deduct_with_init_cmd(self.env(STOCKCTL_PASSWORD=PASSWORD), "--url", self.url())
        self.assert_no_secret(text, child, PASSWORD)

    def test_init_cmd_without_REDISCLI_AUTH(self):
        text, child = self.deduct_with_init_cmd(self.env(REDISCLI_AUTH=PASSWORD), "--url", self.url())
        self.assert_no_secret(text, child, PASSWORD)

    def test_init_cmd_without_STOCKCTL_SENTINEL_PASSWORD(self):
        env = self.env(STOCKCTL_PASSWORD=PASSWORD)
        env["STOCKCTL_SENTINEL_PASSWORD"] = SENTINEL_PASSWORD  # not used for this server, never inherited
        text, child = self.deduct_with_init_cmd(env, "--url", self.url())
        self.assert_no_secret(text, child, PASSWORD, SENTINEL_PASSWORD)

    def test_init_cmd_without_a_STOCKCTL_URL_that_carries_the_password(self):
        text, child = self.deduct_with_init_cmd(self.env(STOCKCTL_URL=self.url(PASSWORD)))
        self.assert_no_secret(text, child, PASSWORD)
        self.assertNotIn("STOCKCTL_URL", child)

    def test_init_cmd_without_a_REDIS_URL_that_carries_the_password(self):
        text, child = self.deduct_with_init_cmd(self.env(REDIS_URL=self.url(PASSWORD)))
        self.assert_no_secret(text, child, PASSWORD)
        self.assertNotIn("REDIS_URL", child)

    def test_init_cmd_keeps_a_url_without_password(self):
        env = self.env(STOCKCTL_URL=self.url(), REDIS_URL=self.url(), STOCKCTL_PASSWORD=PASSWORD)
        text, child = self.deduct_with_init_cmd(env)
        self.assert_no_secret(text, child, PASSWORD)
        self.assertEqual((child["STOCKCTL_URL"], child["REDIS_URL"]), (self.url(), self.url()))
