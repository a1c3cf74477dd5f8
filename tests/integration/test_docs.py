"""One source of truth: the binary's own option tree against the man page and completions."""

import glob
import os
import pwd
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from harness import ROOT, STOCKCTL, ServerTest, clean_env, free_port, lua_script, run

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
        self.assertEqual(sorted(self.complete("stockctl", "")), ["add", "bench", "cancel", "confirm", "deduct", "delete", "doctor", "export", "get", "help", "hold", "init", "library", "log", "order", "reap", "rebalance", "rebuild", "release", "split"])

    def test_completes_options_of_the_subcommand(self):
        self.assertEqual(sorted(self.complete("stockctl", "deduct", "--init-")),
                         ["--init-cmd", "--init-from", "--init-value"])
        self.assertIn("--dry-run", self.complete("stockctl", "rebuild", "--d"))

    def test_offers_formats(self):
        self.assertEqual(self.complete("stockctl", "init", "--format", "nd"), ["ndjson"])
        self.assertEqual(self.complete("stockctl", "get", "--format", "li"), ["lines"])
        self.assertEqual(self.complete("stockctl", "init", "--format", "li"), [])

    def test_offers_files_for_export_output(self):
        with tempfile.TemporaryDirectory() as d:
            open(os.path.join(d, "snapshot.ndjson"), "w").close()
            self.assertEqual(self.complete("stockctl", "export", "--output", os.path.join(d, "snap")),
                             [os.path.join(d, "snapshot.ndjson")])

    def test_offers_no_option_after_double_dash(self):
        self.assertIn("--pretty", self.complete("stockctl", "get", "1", "--p"))
        self.assertEqual(self.complete("stockctl", "get", "--", "--p"), [])

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
        self.assertEqual(sorted(self.complete("stockctl ")), ["add", "bench", "cancel", "confirm", "deduct", "delete", "doctor", "export", "get", "help", "hold", "init", "library", "log", "order", "reap", "rebalance", "rebuild", "release", "split"])

    def test_completes_options_of_the_subcommand(self):
        self.assertEqual(sorted(self.complete("stockctl deduct --init-")), ["--init-cmd", "--init-from", "--init-value"])

    def test_offers_formats(self):
        self.assertEqual(self.complete("stockctl init --format nd"), ["ndjson"])
        self.assertEqual(self.complete("stockctl get --format li"), ["lines"])

    def test_offers_no_option_after_double_dash(self):
        self.assertIn("--pretty", self.complete("stockctl get 1 --p"))
        self.assertEqual(self.complete("stockctl get -- --p"), [])

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
        # A tmux server of the test's own (-L): when one test killed the last session of a
        # shared server, the next test's new-session could reach that server as it exited
        # ("server exited unexpectedly").
        self.tmux = ["tmux", "-L", self.session]
        subprocess.run(self.tmux + ["new-session", "-d", "-s", self.session, "-x", "200", "-y", "40",
                                    env + " zsh -i"], check=True)
        self.addCleanup(subprocess.run, self.tmux + ["kill-server"], capture_output=True)
        self.wait_for(lambda screen: "zsh>" in screen)  # tmux drops trailing blanks

    def wait_for(self, seen, seconds=15):
        deadline = time.monotonic() + seconds
        screen = ""
        while time.monotonic() < deadline:
            screen = subprocess.run(self.tmux + ["capture-pane", "-p", "-t", self.session],
                                    capture_output=True, text=True).stdout
            if seen(screen):
                return screen
            time.sleep(0.05)
        self.fail("zsh never showed what was expected; the screen was:\n" + screen)

    def line_reads(self, text):
        return lambda screen: any(l.rstrip() == text for l in screen.splitlines())

    def tab(self, line):
        subprocess.run(self.tmux + ["send-keys", "-t", self.session, "C-u", line, "Tab"], check=True)

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


def markdown_files():
    skip = {".git", "build", "build-asan", "build-fuzz"}
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in skip and not d.startswith("build")]
        for name in files:
            if name.endswith(".md"):
                yield os.path.join(top, name)


class Links(unittest.TestCase):
    """The project's documents stand alone: a user of the project has nothing outside it."""

    LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|^\s*\[[^\]]+\]:\s*(\S+)", re.M)

    def test_every_link_stays_inside_the_repository(self):
        root = os.path.realpath(ROOT)
        checked = 0
        for path in markdown_files():
            with open(path) as f:
                text = f.read()
            for m in self.LINK.finditer(text):
                target = (m.group(1) or m.group(2)).split("#")[0]
                if not target or re.match(r"(https?|mailto):", target):
                    continue
                checked += 1
                where = "%s links %s" % (os.path.relpath(path, ROOT), target)
                self.assertFalse(re.match(r"[a-z]+:", target) or target.startswith("/"), where)
                resolved = os.path.realpath(os.path.join(os.path.dirname(path), target))
                self.assertTrue(resolved.startswith(root + os.sep), where + ": outside the repository")
                self.assertTrue(os.path.exists(resolved), where + ": no such file")
        self.assertGreater(checked, 0)

    # A file of the repository named in code text, `src/holds/one_redis.cpp`: a path that moved
    # sends a reader to nothing. docs/benchmarks.md records history (scripts of earlier
    # versions), and placeholders (NAME, DIR) name no file.
    NAMED = re.compile(r"`((?:src|lua|tests|bench|scripts|docs|man|completions|examples)/"
                       r"[A-Za-z0-9_./-]+\.(?:cpp|h|lua|py|cmake|md|sh|1|bash|fish|txt))`")

    def test_every_file_named_in_code_text_exists(self):
        checked = 0
        for path in markdown_files():
            if os.path.relpath(path, ROOT) == os.path.join("docs", "benchmarks.md"):
                continue
            with open(path) as f:
                text = f.read()
            for m in self.NAMED.finditer(text):
                named = m.group(1)
                if re.search(r"[A-Z]{3,}", named):
                    continue
                checked += 1
                self.assertTrue(os.path.exists(os.path.join(ROOT, named)),
                                "%s names %s: no such file" % (os.path.relpath(path, ROOT), named))
        self.assertGreater(checked, 0)

    def test_the_readme_links_the_project_reference(self):
        with open(os.path.join(ROOT, "README.md")) as f:
            readme = f.read()
        for target in ("docs/cli.md", "man/stockctl.1"):
            self.assertTrue("](%s)" % target in readme, "README.md does not link " + target)


LUA = os.path.join(ROOT, "lua")
LUA_README = os.path.join(LUA, "README.md")
ERROR_CODE = re.compile(r"STOCKCTL_[A-Z_]+")
# A Lua string literal (kept) or a comment (dropped): what a script sends is in its code, and a
# header may name a code that another script sends.
LUA_TOKEN = re.compile(r"'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|--\[\[.*?\]\]|--[^\n]*", re.S)


def lua_code(text):
    """`text` without its comments."""
    return LUA_TOKEN.sub(lambda m: "" if m.group(0).startswith("--") else m.group(0), text)


def codes_sent(text):
    return set(ERROR_CODE.findall(lua_code(text)))


def readme_sections(text):
    """{script file name: its section's text} for every "### `NAME-K.lua`" heading."""
    heads = list(re.finditer(r"^### `?([a-z_]+-[0-9]+\.lua)`?\s*$", text, re.M))
    ends = [h.start() for h in heads[1:]] + [len(text)]
    sections = {}
    for head, end in zip(heads, ends):
        body = text[head.end():end]
        stop = re.search(r"^#{1,3} ", body, re.M)  # the next heading of the same or a higher level
        sections[head.group(1)] = body[:stop.start()] if stop else body
    return sections


def error_table(text):
    """{code: the rest of its row} for every row "| `STOCKCTL_...` | ..." of a table."""
    return {m.group(1): m.group(2)
            for m in re.finditer(r"^\| *`(STOCKCTL_[A-Z_]+)` *\|(.*)$", text, re.M)}


class LuaReplyIndex(unittest.TestCase):
    """lua/README.md indexes every script's reply protocol and every error code the scripts
    send: a script or a code added without its entry fails here."""

    def setUp(self):
        with open(LUA_README) as f:
            self.readme = f.read()
        self.scripts = sorted(os.path.basename(p) for p in glob.glob(os.path.join(LUA, "*.lua")))
        self.includes = sorted(glob.glob(os.path.join(LUA, "include", "*.lua")))
        self.assertTrue(self.scripts)

    def test_every_script_has_a_section(self):
        sections = readme_sections(self.readme)
        self.assertEqual(sorted(set(self.scripts) - set(sections)), [],
                         "scripts without a section in lua/README.md")
        self.assertEqual(sorted(set(sections) - set(self.scripts)), [],
                         "sections of lua/README.md for scripts that do not exist")

    def test_every_section_names_its_keys_arguments_replies_and_reader(self):
        for name, section in readme_sections(self.readme).items():
            for part in ("KEYS", "ARGV", "Replies", "Errors", "Read by"):
                self.assertIn(part, section, "%s: its section has no %s" % (name, part))

    def test_every_error_code_sent_is_in_the_table_with_its_senders(self):
        table = error_table(self.readme)
        sent = {}
        for name in self.scripts:  # with its includes spliced in, as it is sent
            for code in codes_sent(lua_script(name)):
                sent.setdefault(code, set()).add(name)
        for path in self.includes:
            with open(path) as f:
                for code in codes_sent(f.read()):
                    sent.setdefault(code, set()).add("include/" + os.path.basename(path))
        self.assertIn("STOCKCTL_CORRUPT", sent)  # the scan itself works
        self.assertEqual(sorted(set(sent) - set(table)), [],
                         "error codes sent by lua/ but missing from lua/README.md's error table")
        for code, senders in sent.items():
            for sender in senders:
                self.assertTrue(sender.removesuffix(".lua") in table[code],
                                "%s: the error table does not say %s sends it" % (code, sender))

    def test_every_section_names_the_error_codes_its_script_sends(self):
        sections = readme_sections(self.readme)
        for name in self.scripts:
            for code in codes_sent(lua_script(name)):
                self.assertTrue(code in sections.get(name, ""),
                                "%s sends %s, which its section does not name" % (name, code))

    def test_the_comment_filter_keeps_strings_and_drops_comments(self):
        text = "-- STOCKCTL_A\nreturn redis.error_reply('STOCKCTL_B -- x') -- STOCKCTL_C\n"
        self.assertEqual(codes_sent(text), {"STOCKCTL_B"})


def lock_row(path):
    """The lock keys of item 42 that a document's key table gives: (default, --no-hashtag)."""
    with open(os.path.join(ROOT, path)) as f:
        for line in f:
            if line.startswith("| init lock |"):
                cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
                return cells[1], cells[2]
    raise AssertionError("%s has no init lock row in its key table" % path)


class LockKeys(ServerTest):
    """The lock keys the documents give are the ones stockctl takes, so that another service
    can share the lock: while the documented key is held, stockctl waits and reports busy."""

    LAYOUTS = ((), ("--prefix", "redis_key:stock:", "--no-hashtag"))

    def test_documents_agree(self):
        self.assertEqual(lock_row("README.md"), lock_row("docs/cli.md"))

    def test_a_held_documented_lock_keeps_stockctl_waiting(self):
        for layout, lock in zip(self.LAYOUTS, lock_row("README.md")):
            self.r("FLUSHALL")
            self.r("SET", lock, "held-by-the-classic-service", "PX", "60000")
            res = self.sc("deduct", "42", "1", "--init-value", "5", "--lock-wait", "100", *layout)
            self.assertEqual((res.rc, res.one["status"]), (5, "busy"), (lock, res))
            self.r("DEL", lock)
            res = self.sc("deduct", "42", "1", "--init-value", "5", "--lock-wait", "100", *layout)
            self.assertEqual((res.rc, res.one["stock"]), (0, 4), (lock, res))


def setup_packages(*args):
    proc = subprocess.run([os.path.join(ROOT, "scripts", "setup"), *args, "--list"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.split())


def script_lines(*path):
    with open(os.path.join(ROOT, *path)) as f:
        return [l.split("#")[0].strip() for l in f if l.split("#")[0].strip()]


class Scripts(unittest.TestCase):
    """The demo installs what builds and runs stockctl and a redis-server, nothing more; the
    tests and benchmarks install the rest."""

    def test_the_demo_installs_only_what_builds_and_runs_stockctl(self):
        demo = setup_packages()
        self.assertTrue({"g++", "cmake", "libhiredis-dev", "redis-server", "redis-tools"} <= demo, demo)
        for heavy in ("postgresql", "zsh", "fish", "clang", "valgrind", "clang-tidy", "tmux",
                      "doctest-dev"):
            self.assertNotIn(heavy, demo)
        self.assertIn("scripts/setup", script_lines("scripts", "demo"))
        self.assertTrue(any("-DSTOCKCTL_TESTS=OFF" in l for l in script_lines("scripts", "demo")))

    def test_the_tests_install_the_rest(self):
        self.assertTrue(setup_packages() < setup_packages("--test"))
        self.assertTrue({"postgresql", "zsh", "fish", "clang", "valgrind", "doctest-dev"}
                        <= setup_packages("--test"))
        self.assertIn("scripts/setup --test", script_lines("scripts", "test"))
        self.assertEqual(script_lines(".ci", "run")[-1], "exec scripts/test")


def postgres_bindir():
    for bindir in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(bindir, "postgres")):
            return bindir
    return None


def documented_init_cmd():
    """The --init-cmd example of docs/cli.md and the SQL file it runs: (command, sql, path)."""
    with open(os.path.join(ROOT, "docs", "cli.md")) as f:
        lines = f.read().splitlines()
    example = next(l for l in lines if l.startswith("stockctl deduct 42 2 --init-cmd "))
    sql = next(l for l in lines if l.startswith("select stock from item"))
    command = shlex.split(example)[-1]
    path = re.search(r"-f (\S+)", command).group(1)
    return command, sql, path


@unittest.skipUnless(postgres_bindir() and shutil.which("psql") and os.geteuid() == 0,
                     "needs root and a PostgreSQL server")
class InitCmdExample(ServerTest):
    """The documented --init-cmd, run against a real PostgreSQL: the SKU reaches the query as
    data, so an id that is an SQL injection is looked up as an id and drops nothing."""

    EVIL = "1'; drop table item; --"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        bindir = postgres_bindir()
        pw = pwd.getpwnam("postgres")
        os.chmod(cls.tmp, 0o711)
        pg = os.path.join(cls.tmp, "pg")
        os.mkdir(pg)
        os.chown(pg, pw.pw_uid, pw.pw_gid)
        as_postgres = {"user": pw.pw_uid, "group": pw.pw_gid, "cwd": pg}
        subprocess.run([os.path.join(bindir, "initdb"), "-D", pg + "/data", "-U", "postgres",
                        "--auth=trust", "--no-sync"], check=True, capture_output=True, **as_postgres)
        cls.pg_port = free_port()
        cls.pg = subprocess.Popen([os.path.join(bindir, "postgres"), "-D", pg + "/data", "-p",
                                   str(cls.pg_port), "-k", pg, "-c", "listen_addresses=127.0.0.1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **as_postgres)
        cls.pg_env = dict(clean_env(), PGHOST="127.0.0.1", PGPORT=str(cls.pg_port), PGUSER="postgres")
        for _ in range(300):
            if subprocess.run(["psql", "-c", "select 1"], env=cls.pg_env, capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        cls.psql("create table item (id text primary key, stock int);"
                 "insert into item values ('42', 7), ('%s', 3);" % cls.EVIL.replace("'", "''"))

    @classmethod
    def tearDownClass(cls):
        cls.pg.send_signal(signal.SIGINT)  # fast shutdown of this server only
        cls.pg.wait(timeout=60)
        super().tearDownClass()

    @classmethod
    def psql(cls, sql):
        return subprocess.run(["psql", "-Atq", "-v", "ON_ERROR_STOP=1", "-c", sql], env=cls.pg_env,
                              check=True, capture_output=True, text=True).stdout

    def deduct(self, sku):
        command, sql, path = documented_init_cmd()
        sql_file = self.write("stock.sql", sql + "\n")
        return run(*self.target_args(), "deduct", sku, "1",
                   "--init-cmd", command.replace(path, sql_file), env=self.pg_env)

    def test_man_page_shows_the_same_example(self):
        command, sql, _ = documented_init_cmd()
        man = man_text().replace("\\(aq", "'").replace("\\e\n    ", "")
        self.assertIn("--init-cmd '%s'" % command, man)
        self.assertIn(sql, man)

    def test_the_example_reads_the_items_stock(self):
        res = self.deduct("42")
        self.assertEqual((res.rc, res.one["stock"]), (0, 6), res)

    def test_an_injection_in_the_sku_stays_an_id(self):
        res = self.deduct(self.EVIL)
        self.assertEqual((res.rc, res.one["stock"]), (0, 2), res)
        self.assertEqual(self.psql("select count(*) from item").strip(), "2")


if __name__ == "__main__":
    unittest.main()
