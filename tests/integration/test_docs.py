"""One source of truth: the binary's own option tree against the man page and completions."""

import os
import re
import shutil
import subprocess
import unittest

from harness import ROOT, STOCKCTL, run

MAN = os.path.join(ROOT, "man", "stockctl.1")
BASH = os.path.join(ROOT, "completions", "stockctl.bash")


def surface():
    """{subcommand or "": [long options]} as the binary reports them."""
    top = run("__complete").stdout.split()
    subs = [w for w in top if not w.startswith("-")]
    tree = {"": [w.split("=")[0] for w in top if w.startswith("-")]}
    for sub in subs:
        tree[sub] = [w.split("=")[0] for w in run("__complete", sub).stdout.split()]
    return tree


def man_text():
    with open(MAN) as f:
        return f.read().replace("\\-", "-")


class ManPage(unittest.TestCase):
    def test_names_every_subcommand_and_option(self):
        text = man_text()
        for sub, options in surface().items():
            if sub:
                self.assertRegex(text, r"\.B[IR]? %s\b" % re.escape(sub), sub)
            for opt in options:
                self.assertTrue(opt in text, "%s %s is missing from the man page" % (sub, opt))

    def test_names_no_option_that_does_not_exist(self):
        known = {o for options in surface().values() for o in options}
        documented = set(re.findall(r"^\.(?:B|BI|BR) (?:-\w, )?(--[a-z][a-z-]*)", man_text(), re.M))
        documented |= set(re.findall(r'^\.BR -\w ", " (--[a-z][a-z-]*)', man_text(), re.M))
        self.assertTrue(documented)
        self.assertEqual(documented - known, set())

    @unittest.skipUnless(shutil.which("groff"), "groff is not installed")
    def test_renders_without_warnings(self):
        proc = subprocess.run(["groff", "-ww", "-z", "-man", MAN], capture_output=True, text=True)
        self.assertEqual((proc.returncode, proc.stderr), (0, ""))


class BashCompletion(unittest.TestCase):
    def complete(self, *words):
        script = ('source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _stockctl; printf "%%s\\n" "${COMPREPLY[@]}"'
                  % (BASH, " ".join("'%s'" % w for w in words), len(words) - 1))
        env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(STOCKCTL)) + ":" + os.environ["PATH"])
        proc = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout.split()

    def test_completes_subcommands(self):
        self.assertEqual(self.complete("stockctl", "ded"), ["deduct"])
        self.assertEqual(sorted(self.complete("stockctl", "")), ["add", "bench", "deduct", "get", "help", "init", "rebuild"])

    def test_completes_options_of_the_subcommand(self):
        self.assertEqual(sorted(self.complete("stockctl", "deduct", "--init-")),
                         ["--init-cmd", "--init-from", "--init-value"])
        self.assertIn("--dry-run", self.complete("stockctl", "rebuild", "--d"))

    def test_offers_formats(self):
        self.assertEqual(self.complete("stockctl", "init", "--format", "nd"), ["ndjson"])

    def test_every_option_is_offered(self):
        for sub, options in surface().items():
            words = ["stockctl", sub, "--"] if sub else ["stockctl", "--"]
            offered = set(self.complete(*words))
            self.assertEqual(set(options) - offered, set(), sub)


class OtherShells(unittest.TestCase):
    def test_zsh_and_fish_files_ask_the_binary(self):
        for name in ("_stockctl", "stockctl.fish"):
            with open(os.path.join(ROOT, "completions", name)) as f:
                self.assertIn("__complete", f.read(), name)


if __name__ == "__main__":
    unittest.main()
