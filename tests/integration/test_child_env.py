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

    def env(self, **secrets):
        env = clean_env(PGPASSFILE="/etc/stockctl/pgpass", **secrets)
        env.pop("STOCKCTL_SENTINEL_PASSWORD", None)
        return env

    def deduct_with_init_cmd(self, path, env, url_args):
        cmd = "env -0 > %s; echo 10" % shlex.quote(path)
        res = run("deduct", "item-1", "1", "--init-cmd", cmd, *url_args, env=env)
        self.assertEqual((res.rc, res.one["status"], res.one["stock"]), (0, "ok", 9), res)

    def rebuild_with_from_cmd(self, path, env, url_args):
        cmd = "env -0 > %s; printf 'sku,stock\\nitem-2,5\\n'" % shlex.quote(path)
        res = run("rebuild", "--from-cmd", cmd, *url_args, env=env)
        self.assertEqual((res.rc, res.one["counts"]["ok"]), (0, 1), res)
        self.assertEqual(self.r("GET", "stock:{item-2}"), "5")

    def child_environment(self, child, env, url_args):
        """Runs one kind of child with `env`; returns what its environment held."""
        self.r("FLUSHALL")
        path = os.path.join(self.tmp, "child-env")
        start = self.deduct_with_init_cmd if child == "--init-cmd" else self.rebuild_with_from_cmd
        start(path, env, url_args)
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "surrogateescape")
        return text, dict(line.split("=", 1) for line in text.split("\0") if "=" in line)

    def check_children(self, env, url_args, secrets, also=lambda child: None):
        for name in ("--init-cmd", "--from-cmd"):
            with self.subTest(child=name):
                text, child = self.child_environment(name, env, url_args)
                self.assert_no_secret(name, text, child, *secrets)
                also(child)

    def assert_no_secret(self, name, text, child, *secrets):
        for secret in secrets:
            holders = [var for var, value in child.items() if secret in value]
            self.assertFalse(secret in text, "the child got a password in %s" % holders)
        if name == "--init-cmd":
            self.assertEqual(child["STOCKCTL_SKU"], "item-1")
        self.assertEqual(child["PGPASSFILE"], "/etc/stockctl/pgpass")
        self.assertEqual(child["PATH"], os.environ["PATH"])
        self.assertEqual(child.get("HOME"), os.environ.get("HOME"))
        for var in ("STOCKCTL_PASSWORD", "REDISCLI_AUTH", "STOCKCTL_SENTINEL_PASSWORD"):
            self.assertNotIn(var, child)

    def test_without_STOCKCTL_PASSWORD(self):
        self.check_children(self.env(STOCKCTL_PASSWORD=PASSWORD), ("--url", self.url()), [PASSWORD])

    def test_without_REDISCLI_AUTH(self):
        self.check_children(self.env(REDISCLI_AUTH=PASSWORD), ("--url", self.url()), [PASSWORD])

    def test_without_STOCKCTL_SENTINEL_PASSWORD(self):
        env = self.env(STOCKCTL_PASSWORD=PASSWORD)
        env["STOCKCTL_SENTINEL_PASSWORD"] = SENTINEL_PASSWORD  # unused by this server, never inherited
        self.check_children(env, ("--url", self.url()), [PASSWORD, SENTINEL_PASSWORD])

    def test_without_a_STOCKCTL_URL_that_carries_the_password(self):
        self.check_children(self.env(STOCKCTL_URL=self.url(PASSWORD)), (), [PASSWORD],
                            lambda child: self.assertNotIn("STOCKCTL_URL", child))

    def test_without_a_REDIS_URL_that_carries_the_password(self):
        self.check_children(self.env(REDIS_URL=self.url(PASSWORD)), (), [PASSWORD],
                            lambda child: self.assertNotIn("REDIS_URL", child))

    def test_a_url_without_password_is_passed_unchanged(self):
        env = self.env(STOCKCTL_URL=self.url(), REDIS_URL=self.url(), STOCKCTL_PASSWORD=PASSWORD)
        self.check_children(env, (), [PASSWORD], lambda child: self.assertEqual(
            (child["STOCKCTL_URL"], child["REDIS_URL"]), (self.url(), self.url())))
