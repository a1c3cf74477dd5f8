"""One source of truth: the binary's own option tree against the man page and completions."""

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
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
        self.assertEqual(sorted(self.complete("stockctl", "")), ["add", "bench", "deduct", "delete", "export", "get", "help", "init", "log", "rebuild"])

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


def path_with_stockctl():
    return os.path.dirname(os.path.abspath(STOCKCTL)) + ":" + os.environ["PATH"]


@unittest.skipUnless(shutil.which("fish"), "fish is not installed")
class FishCompletion(unittest.TestCase):
    def complete(self, line):
        script = "source %s; complete -C %s" % (os.path.join(ROOT, "completions", "stockctl.fish"),
                                                 shlex.quote(line))
        proc = subprocess.run(["fish", "--no-config", "-c", script], capture_output=True, text=True,
                              env=dict(os.environ, PATH=path_with_stockctl()))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return [l.split("\t")[0] for l in proc.stdout.splitlines()]

    def test_completes_subcommands(self):
        self.assertEqual(self.complete("stockctl ded"), ["deduct"])
        self.assertEqual(sorted(self.complete("stockctl ")), ["add", "bench", "deduct", "delete", "export", "get", "help", "init", "log", "rebuild"])

    def test_completes_options_of_the_subcommand(self):
        self.assertEqual(sorted(self.complete("stockctl deduct --init-")), ["--init-cmd", "--init-from", "--init-value"])

    def test_offers_formats(self):
        self.assertEqual(self.complete("stockctl init --format nd"), ["ndjson"])

    def test_every_option_is_offered(self):
        for sub, options in surface().items():
            offered = set(self.complete("stockctl %s --" % sub if sub else "stockctl --"))
            self.assertEqual(set(options) - offered, set(), sub)


@unittest.skipUnless(shutil.which("zsh") and shutil.which("tmux"), "zsh or tmux is not installed")
class ZshCompletion(unittest.TestCase):
    """zsh completes only in an interactive line editor: an interactive zsh runs in tmux, gets
    a line and a Tab, and the screen is read back."""

    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="stockctl-zsh-")
        with open(os.path.join(self.home, ".zshrc"), "w") as f:
            f.write("fpath=(%s $fpath)\n" % os.path.join(ROOT, "completions"))
            f.write("autoload -Uz compinit && compinit -u -d %s/.zcompdump\n" % self.home)
            f.write("PROMPT='zsh> '\n")
        self.session = "stockctl-zsh-%d-%s" % (os.getpid(), self._testMethodName)
        env = "env -i HOME=%s ZDOTDIR=%s TERM=xterm PATH=%s" % (self.home, self.home, shlex.quote(path_with_stockctl()))
        self.addCleanup(shutil.rmtree, self.home, ignore_errors=True)
        subprocess.run(["tmux", "new-session", "-d", "-s", self.session, "-x", "200", "-y", "40", env + " zsh -i"],
                       check=True)
        self.addCleanup(subprocess.run, ["tmux", "kill-session", "-t", self.session], capture_output=True)
        self.wait_for(lambda screen: "zsh>" in screen)  # tmux drops trailing blanks

    def wait_for(self, seen, seconds=15):
        deadline = time.monotonic() + seconds
        screen = ""
        while time.monotonic() < deadline:
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", self.session],
                                    capture_output=True, text=True).stdout
            if seen(screen):
                return screen
            time.sleep(0.05)
        self.fail("zsh never showed what was expected; the screen was:\n" + screen)

    def line_reads(self, text):
        return lambda screen: any(l.rstrip() == text for l in screen.splitlines())

    def tab(self, line):
        subprocess.run(["tmux", "send-keys", "-t", self.session, "C-u", line, "Tab"], check=True)

    def test_completes_a_subcommand(self):
        self.tab("stockctl ded")
        self.wait_for(self.line_reads("zsh> stockctl deduct"))

    def test_lists_the_options_of_the_subcommand(self):
        self.tab("stockctl deduct --init-")
        self.wait_for(lambda screen: sorted(re.findall(r"^(--init-\S+) +-- ", screen, re.M))
                      == ["--init-cmd", "--init-from", "--init-value"])

    def test_completes_a_format(self):
        self.tab("stockctl init --format nd")
        self.wait_for(self.line_reads("zsh> stockctl init --format ndjson"))


if __name__ == "__main__":
    unittest.main()
