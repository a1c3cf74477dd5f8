"""The command line itself: option placement, negative values, usage errors, help, version."""

import unittest

from harness import ServerTest, run


class OptionPlacement(ServerTest):
    def test_options_before_or_after_the_subcommand(self):
        self.r("SET", "stock:{42}", "5")
        a = run("--url", self.server.url, "get", "42")
        b = run("get", "42", "--url", self.server.url)
        c = run("get", "--url", self.server.url, "42")
        self.assertEqual(a.stdout, b.stdout)
        self.assertEqual(a.stdout, c.stdout)
        self.assertEqual(a.one["stock"], 5)

    def test_negative_number_in_a_value_position_is_a_value(self):
        res = self.sc("init", "42", "-1")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("GET", "stock:{42}"), "-1")

    def test_double_dash_ends_options(self):
        res = run("--url", self.server.url, "init", "--", "-x", "3")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("GET", "stock:{-x}"), "3")

    def test_pretty_indents(self):
        res = self.sc("get", "nope", "--pretty")
        self.assertTrue(res.stdout.startswith('{\n  "op": "get",'))
        self.assertEqual(res.rc, 4)


class Usage(unittest.TestCase):
    def test_no_subcommand(self):
        res = run()
        self.assertEqual(res.rc, 2)
        self.assertEqual(res.stdout, "")

    def test_unknown_command_suggests_the_closest(self):
        res = run("dedcut", "1", "2")
        self.assertEqual(res.rc, 2)
        self.assertIn("stockctl: error: unknown command 'dedcut'; did you mean 'deduct'?", res.stderr)

    def test_unknown_option(self):
        res = run("get", "1", "--frobnicate")
        self.assertEqual(res.rc, 2)

    def test_missing_qty(self):
        res = run("deduct", "42")
        self.assertEqual(res.rc, 2)
        self.assertIn("deduct 42: QTY is missing", res.stderr)

    def test_two_init_sources(self):
        res = run("deduct", "1", "1", "--init-value", "3", "--init-cmd", "echo 3")
        self.assertEqual(res.rc, 2)
        self.assertIn("at most one of", res.stderr)

    def test_help_lists_every_subcommand(self):
        res = run("--help")
        self.assertEqual(res.rc, 0)
        for sub in ("get", "deduct", "add", "init", "rebuild"):
            self.assertIn(sub, res.stdout)

    def test_version_names_the_revision(self):
        res = run("--version")
        self.assertEqual(res.rc, 0)
        self.assertRegex(res.stdout, r"^stockctl \d+\.\d+\.\d+ \(.+\)")


if __name__ == "__main__":
    unittest.main()
