"""The command line itself: option placement, negative values, usage errors, help, version."""

import unittest

from harness import ServerTest, run, run_on_terminal


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

    def test_double_dash_after_an_argument_ends_options(self):
        self.r("SET", "stock:{42}", "5")
        self.r("SET", "stock:{y}", "3")
        res = run(*self.target_args(), "get", "42", "--", "y")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([(l["sku"], l["stock"]) for l in res.lines], [("42", 5), ("y", 3)])

    def test_option_words_after_double_dash_are_skus(self):
        res = run(*self.target_args(), "get", "1", "--", "--pretty")
        self.assertEqual(res.rc, 4, res)
        self.assertEqual(len(res.stdout.splitlines()), 2, res)  # not indented
        self.assertEqual([l["sku"] for l in res.lines], ["1", "--pretty"])
        res = run(*self.target_args(), "get", "42", "--", "-x", "--pretty")
        self.assertEqual([l["sku"] for l in res.lines], ["42", "-x", "--pretty"], res)

    def test_double_dash_gives_words_to_the_next_free_argument(self):
        res = run(*self.target_args(), "init", "--", "--x", "-1")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(self.r("GET", "stock:{--x}"), "-1")
        res = run(*self.target_args(), "init", "a", "--", "1", "2")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("stockctl: error: 'init' takes no further argument '2'", res.stderr)
        self.assertIsNone(self.r("GET", "stock:{a}"))

    def test_pretty_indents(self):
        res = self.sc("get", "nope", "--pretty")
        self.assertTrue(res.stdout.startswith('{\n  "op": "get",'))
        self.assertEqual(res.rc, 4)


class Get(ServerTest):
    def test_every_sku_gets_its_line_in_order_even_with_an_invalid_one(self):
        self.r("SET", "stock:{1001}", "7")
        res = self.sc("get", "1001", "nokey", "x{y")
        self.assertEqual(res.rc, 2, res)
        self.assertEqual([(l["sku"], l["status"]) for l in res.lines],
                         [("1001", "ok"), ("nokey", "missing"), ("x{y", "invalid")])
        self.assertEqual(res.lines[0]["stock"], 7)

    def test_problems_are_echoed_on_stderr_one_line_each(self):
        self.r("SET", "stock:{bad}", "abc")
        res = self.sc("get", "bad", "x{y", "ok")
        self.assertEqual(res.rc, 1, res)
        self.assertEqual(res.stderr.splitlines(), [
            "stockctl: error: item 'bad': stored value 'abc' of stock:{bad} is not a stock value; "
            "left unchanged",
            "stockctl: error: item 'x{y': item id contains '{' or '}', which would break its hash "
            "tag (see --no-hashtag)"])


class Messages(ServerTest):
    def test_a_sign_is_not_too_large(self):
        res = self.sc("deduct", "x", "+5")
        self.assertEqual(res.rc, 2, res)
        self.assertNotIn("too large", res.stderr)
        self.assertIn("QTY '+5' is not a quantity (an integer from 1 to 9007199254740991): "
                      "write it without a sign", res.stderr)

    def test_a_long_sku_is_shortened_with_its_length(self):
        sku = "s" * 513
        res = self.sc("get", sku)
        self.assertEqual(res.rc, 2, res)
        self.assertEqual(len(res.stderr.splitlines()), 1, res)
        self.assertIn("item '%s...' (513 bytes): item id is 513 bytes long" % ("s" * 48), res.stderr)
        self.assertNotIn(sku, res.stderr)

    def test_control_characters_are_escaped_and_stay_on_one_line(self):
        res = self.sc("get", "a\nb\x1b[31m")
        self.assertEqual(res.rc, 2, res)
        self.assertEqual(res.stderr, "stockctl: error: item 'a\\nb\\x1b[31m': item id contains a "
                                     "control character\n")

    def test_an_init_command_printing_two_lines_is_reported_on_one(self):
        res = self.sc("deduct", "s", "1", "--init-cmd", "printf 'ten\\neleven\\n'")
        self.assertEqual(res.rc, 1, res)
        self.assertEqual(len(res.stderr.splitlines()), 1, res)
        self.assertIn("'ten\\neleven' is not a stock value", res.stderr)

    def test_skip_invalid_tells_each_invalid_row_once(self):
        path = self.write("orders.csv", "sku,qty\na,1\nb,x\n")
        res = self.sc("deduct", "--file", path, "--skip-invalid", "--init-value", "5")
        self.assertEqual([l["status"] for l in res.lines], ["ok", "invalid"], res)
        self.assertEqual(res.stderr.splitlines(), [
            "stockctl: error: %s:3: column 'qty': 'x' is not a quantity (an integer from 1 to "
            "9007199254740991)" % path])

    def test_a_reused_request_id_is_told_in_words(self):
        self.r("SET", "stock:{c}", "100")
        self.assertEqual(self.sc("deduct", "c", "5", "--request-id", "r1").rc, 0)
        res = self.sc("deduct", "c", "6", "--request-id", "r1")
        self.assertEqual(res.one["status"], "conflict", res)
        self.assertEqual(res.one["error"],
                         "request id 'r1' was already used for deduct 5 on this item; nothing changed")
        self.assertIn("stockctl: error: item 'c': request id 'r1' was already used for deduct 5",
                      res.stderr)
        self.assertEqual(self.r("GET", "stock:{c}"), "95")


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
        # One hint, the one the message gives.
        self.assertEqual(res.stderr.splitlines(),
                         ["stockctl: error: unknown option '--frobnicate' for 'get'; see 'stockctl get --help'"])

    def test_a_missing_argument_names_itself_and_the_subcommand_s_help(self):
        for sub in ("log", "rebalance", "delete"):
            res = run(sub)
            self.assertEqual((res.rc, res.stderr.splitlines()),
                             (2, ["stockctl: error: SKU is required",
                                  "Run 'stockctl %s --help' for usage." % sub]), res)

    def test_unknown_option_suggests_the_closest(self):
        res = run("get", "1", "--prety")
        self.assertEqual(res.rc, 2)
        self.assertIn("stockctl: error: unknown option '--prety' for 'get'; did you mean '--pretty'?",
                      res.stderr)
        res = run("--conect-timeout", "5", "get", "1")
        self.assertIn("did you mean '--connect-timeout'?", res.stderr)

    def test_a_subcommand_option_before_the_subcommand_names_its_owner(self):
        res = run("--force", "init", "x", "5")
        self.assertEqual((res.rc, res.stdout), (2, ""))
        self.assertIn("stockctl: error: --force belongs to 'init'; put it after the subcommand",
                      res.stderr)
        res = run("--init-value", "5", "deduct", "x", "1")
        self.assertIn("--init-value belongs to 'deduct'; put it after the subcommand", res.stderr)

    def test_an_option_of_another_subcommand_names_its_owners(self):
        res = run("get", "1", "--force")
        self.assertEqual(res.rc, 2)
        self.assertIn("stockctl: error: 'get' has no option --force; it belongs to 'init', "
                      "'rebuild' and 'delete'", res.stderr)

    def test_a_bad_option_value_names_the_option(self):
        res = run("init", "x", "5", "--ttl", "abc")
        self.assertEqual(res.rc, 2)
        self.assertIn("stockctl: error: --ttl: 'abc' is not an integer from 0 to", res.stderr)
        for args in (("get", "a", "--log-max", "abc"), ("log", "a", "--limit", "x"),
                     ("export", "--scan-count", "abc")):
            res = run(*args)
            self.assertEqual(res.rc, 2, res)
            self.assertIn("'%s' is not an integer from 1 to" % args[-1], res.stderr)
        # An empty file name (`--report "$REPORT"`, REPORT unset) names no file: refused, not
        # taken as "not given" or, for --output, as standard output.
        for args in (("init", "--file", "x.csv", "--report", ""), ("export", "--output", ""),
                     ("get", "a", "--metrics-file", ""), ("get", "--file", ""),
                     ("deduct", "--file", "")):
            res = run(*args)
            self.assertEqual(res.rc, 2, res)
            self.assertIn("stockctl: error: %s: '' names no file" % args[-2], res.stderr)
        # An empty actor (`--actor "$JOB"`, JOB unset) is refused, not signed as user@host.
        res = run("deduct", "a", "1", "--actor", "")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("stockctl: error: --actor: '' is empty; leave --actor out for the default",
                      res.stderr)
        # An empty --since ("$SINCE" unset) is not "everything".
        res = run("log", "a", "--since", "")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("stockctl: error: --since: '' is no time", res.stderr)
        res = run("init", "--file", "x.csv", "--format", "xml")
        self.assertIn("stockctl: error: --format: 'xml' is not a format; use one of csv, tsv, json, "
                      "ndjson, jsonl", res.stderr)

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

    def test_help_ends_with_formats_passwords_exit_statuses_and_examples(self):
        res = run("--help")
        self.assertEqual(res.rc, 0)
        footer = res.stdout[res.stdout.index("Source formats"):]
        self.assertIn("csv, tsv, json, ndjson, jsonl", footer)
        for word in ("--password-file", "STOCKCTL_PASSWORD", "REDISCLI_AUTH", "STOCKCTL_URL",
                     "REDIS_URL"):
            self.assertIn(word, footer)
        for code in ("0 ok", "1 runtime failure", "2 usage", "3 insufficient", "4 not initialized",
                     "5 busy", "6 drift", "130/143 interrupted"):
            self.assertIn(code, " ".join(footer.split()))
        examples = footer[footer.index("Examples:"):].splitlines()[1:3]
        self.assertTrue(all("stockctl " in e for e in examples), examples)
        self.assertEqual(run("help").stdout, res.stdout)

    def test_help_lists_every_format_the_parser_accepts(self):
        for fmt in ("csv", "tsv", "json", "ndjson", "jsonl"):
            res = run("init", "--file", "/nonexistent", "--format", fmt)
            self.assertNotIn("--format", res.stderr, fmt)
            self.assertIn(fmt, run("init", "--help").stdout)

    def test_version_names_the_revision(self):
        res = run("--version")
        self.assertEqual(res.rc, 0)
        self.assertRegex(res.stdout, r"^stockctl \d+\.\d+\.\d+ \(.+\)")


class TableOutput(ServerTest):
    """--table: the same fields as the JSON, in aligned columns for a person."""

    def assert_no_trailing_spaces(self, text):
        for line in text.splitlines():
            self.assertEqual(line, line.rstrip(" "), text)

    def test_get_prints_aligned_columns_with_null_as_a_dash(self):
        self.r("SET", "stock:{A}", "5")
        self.r("SET", "stock:{long-sku}", "1234")
        self.r("SET", "stock:{U}", "-1")
        res = self.sc("get", "A", "long-sku", "U", "gone", "--table")
        self.assertEqual(res.rc, 4, res)
        self.assertEqual(res.stdout,
                         "op   sku       key               status     stock  held\n"
                         "get  A         stock:{A}         ok             5     0\n"
                         "get  long-sku  stock:{long-sku}  ok          1234     0\n"
                         "get  U         stock:{U}         unlimited      -     0\n"
                         "get  gone      stock:{gone}      missing        -     0\n")

    def test_an_invalid_item_gets_its_row_and_the_error_column(self):
        self.r("SET", "stock:{A}", "5")
        res = self.sc("get", "A", "b{c}", "--table")
        self.assertEqual(res.rc, 2, res)
        header, first, second = res.stdout.splitlines()
        self.assertEqual(header.split(), ["op", "sku", "key", "status", "stock", "held", "error"])
        self.assertTrue(first.endswith("0  -"), res.stdout)
        self.assertIn("invalid", second)
        self.assert_no_trailing_spaces(res.stdout)

    def test_get_file_with_details_has_ttl_and_lock_columns(self):
        self.r("SET", "stock:{A}", "5")
        self.r("SET", "stock:{B}", "7", "EX", "100")
        path = self.write("skus.txt", "A\nB\n")
        res = self.sc("get", "--file", path, "--details", "--table")
        self.assertEqual(res.rc, 0, res)
        lines = res.stdout.splitlines()
        self.assertEqual(lines[0].split(),
                         ["op", "sku", "key", "status", "stock", "held", "ttl", "lock_ttl"])
        self.assertEqual(lines[1].split(), ["get", "A", "stock:{A}", "ok", "5", "0", "-", "-"])
        self.assertEqual(lines[2].split()[:6], ["get", "B", "stock:{B}", "ok", "7", "0"])
        self.assertTrue(0 < int(lines[2].split()[6]) <= 100, lines[2])
        self.assertTrue(lines[2].endswith("         -"), res.stdout)  # right-aligned under lock_ttl
        self.assertEqual(len(lines), 3)

    def test_many_rows_of_one_width_have_one_header(self):
        skus = ["S%04d" % i for i in range(2500)]
        path = self.write("many.txt", "".join(s + "\n" for s in skus))
        res = self.sc("get", "--file", path, "--table")
        self.assertEqual(res.rc, 4, res)
        lines = res.stdout.splitlines()
        self.assertEqual(len(lines), 2501)
        self.assertEqual([l.split()[1] for l in lines[1:]], skus)
        self.assertEqual(sum(1 for l in lines if l.startswith("op ")), 1)

    def test_deduct_file_rows(self):
        self.r("SET", "stock:{A}", "5")
        path = self.write("d.csv", "sku,qty\nA,2\nA,9\n")
        res = self.sc("deduct", "--file", path, "--table")
        self.assertEqual(res.rc, 3, res)
        self.assertEqual(res.stdout,
                         "op      sku  key        qty  status        stock\n"
                         "deduct  A    stock:{A}    2  ok                3\n"
                         "deduct  A    stock:{A}    9  insufficient      3\n")

    def test_a_hold_is_a_row_per_line(self):
        self.r("SET", "stock:{A}", "5")
        self.r("SET", "stock:{B}", "7")
        res = self.sc("release", self.sc("hold", "h1", "A=1", "B=2").one["id"], "--table")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(res.stdout,
                         "op       id  status  lines.sku  lines.key  lines.qty  lines.stock\n"
                         "release  h1  ok      A          stock:{A}          1            5\n"
                         "release  h1  ok      B          stock:{B}          2            7\n")

    def test_a_summary_is_one_field_per_line(self):
        path = self.write("init.csv", "sku,stock\nA,5\nB,7\n")
        self.r("SET", "stock:{B}", "1")
        res = self.sc("init", "--file", path, "--table")
        self.assertEqual(res.rc, 0, res)
        fields = dict(line.split(None, 1) for line in res.stdout.splitlines())
        self.assertEqual(fields["op"], "init")
        self.assertEqual(fields["rows"].strip(), "2")
        self.assertEqual(fields["counts.ok"].strip(), "1")
        self.assertEqual(fields["counts.exists"].strip(), "1")
        self.assertEqual(fields["dry_run"], "false")
        self.assertIn("elapsed_ms", fields)
        self.assertRegex(res.stdout, r"\nrows +2\n")
        self.assert_no_trailing_spaces(res.stdout)

    def test_a_refused_file_s_summary_is_one_field_per_line_too(self):
        path = self.write("bad.csv", "sku,stock\nA,x\n")
        res = self.sc("init", "--file", path, "--table")
        self.assertEqual(res.rc, 2, res)
        fields = dict(line.split(None, 1) for line in res.stdout.splitlines())
        self.assertEqual((fields["op"], fields["status"], fields["counts.invalid"].strip()),
                         ("init", "invalid", "1"))
        self.assertIn("1 of 1 rows are invalid", fields["error"])
        self.assert_no_trailing_spaces(res.stdout)

    def test_export_summary(self):
        self.r("SET", "stock:{A}", "5")
        out = self.write("e.csv", "")
        res = self.sc("export", "--format", "csv", "--output", out, "--table")
        self.assertEqual(res.rc, 0, res)
        fields = dict(line.split(None, 1) for line in res.stdout.splitlines())
        self.assertTrue(res.stdout.startswith("op "), res.stdout)
        self.assertEqual((fields["op"], fields["items"].strip(), fields["output"]), ("export", "1", out))
        self.assertRegex(fields["elapsed_ms"], r"^ *\d+$")

    def test_table_with_pretty_is_a_usage_error(self):
        self.r("SET", "stock:{A}", "5")
        res = self.sc("get", "A", "--table", "--pretty")
        self.assertEqual(res.rc, 2, res)
        self.assertEqual(res.stdout, "")
        self.assertIn("--table", res.stderr)
        self.assertIn("--pretty", res.stderr)
        res = self.sc("get", "A", "--pretty", "--table")  # either order
        self.assertEqual((res.rc, res.stdout), (2, ""), res)

    def test_help_reads_without_parser_notes(self):
        # The rule is in --table's own description; CLI11's "Excludes: --pretty" notes are not.
        res = run("--help")
        self.assertEqual(res.rc, 0, res)
        self.assertIn("not with --pretty", res.stdout)
        self.assertNotIn("Excludes", res.stdout)

    def test_json_stays_the_default_on_a_terminal(self):
        self.r("SET", "stock:{A}", "5")
        rc, seen = run_on_terminal("get", "A", *self.target_args())
        self.assertEqual(rc, 0, seen)
        self.assertIn('{"op":"get","sku":"A","key":"stock:{A}","status":"ok","stock":5,"held":0}',
                      seen)


if __name__ == "__main__":
    unittest.main()
