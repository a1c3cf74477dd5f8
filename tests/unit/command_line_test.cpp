#include "cli/command_line.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "base/errors.h"

using namespace stockctl;

namespace {

// A small tree shaped like stockctl's: common options on top, subcommands with their own.
struct Tree {
  CLI::App app{"test", "stockctl"};
  std::vector<std::string> skus;
  std::string sku, value;
  bool force = false, pretty = false;
  std::string url;
  CLI::App* get = app.add_subcommand("get", "read");
  CLI::App* init = app.add_subcommand("init", "set");
  CLI::App* rebuild = app.add_subcommand("rebuild", "rebuild");

  Tree() {
    app.fallthrough();
    app.add_flag("--pretty", pretty);
    app.add_option("--url", url);
    get->add_option("SKU", skus);
    init->add_option("SKU", sku);
    init->add_option("VALUE", value);
    init->add_flag("--force", force);
    rebuild->add_flag("--force", force);
    for (CLI::App* sub : {get, init, rebuild}) sub->group("Subcommands");
  }
};

}  // namespace

TEST_CASE("split_at_double_dash keeps every word after the first -- as an argument") {
  const char* argv[] = {"stockctl", "get", "1", "--", "--pretty", "--", "-x"};
  SplitCommandLine split = split_at_double_dash(7, argv);
  CHECK(split.options == std::vector<std::string>{"get", "1"});
  CHECK(split.arguments == std::vector<std::string>{"--pretty", "--", "-x"});
}

TEST_CASE("add_positional_words fills the next free arguments in order") {
  Tree t;
  std::vector<std::string> words{"init", "42"};
  t.app.parse(std::vector<std::string>(words.rbegin(), words.rend()));
  add_positional_words(*t.init, {"-1"});
  CHECK(t.sku == "42");
  CHECK(t.value == "-1");
  CHECK_THROWS_AS(add_positional_words(*t.init, {"more"}), InputError);
}

TEST_CASE("add_positional_words appends to a list of arguments") {
  Tree t;
  std::vector<std::string> words{"get", "1"};
  t.app.parse(std::vector<std::string>(words.rbegin(), words.rend()));
  add_positional_words(*t.get, {"--pretty", "-x"});
  CHECK(t.skus == std::vector<std::string>{"1", "--pretty", "-x"});
  CHECK_FALSE(t.pretty);
}

TEST_CASE("an option of a subcommand before it names the subcommand that owns it") {
  Tree t;
  CHECK(explain_usage_error(t.app, {"--force", "init", "x", "5"}) ==
        "--force belongs to 'init'; put it after the subcommand: stockctl init --force ...");
  CHECK(explain_usage_error(t.app, {"--force", "get", "1"}) ==
        "--force belongs to 'init' and 'rebuild', not to 'get'");
  CHECK(explain_usage_error(t.app, {"--force"}) ==
        "--force belongs to 'init' and 'rebuild'; put it after the subcommand");
}

TEST_CASE("an option of another subcommand names its owners") {
  Tree t;
  CHECK(explain_usage_error(t.app, {"get", "1", "--force"}) ==
        "'get' has no option --force; it belongs to 'init' and 'rebuild'");
}

TEST_CASE("an option typo gets did you mean") {
  Tree t;
  CHECK(explain_usage_error(t.app, {"get", "1", "--prety"}) ==
        "unknown option '--prety' for 'get'; did you mean '--pretty'?");
  CHECK(explain_usage_error(t.app, {"--ulr=x", "get"}) ==
        "unknown option '--ulr'; did you mean '--url'?");
  CHECK(explain_usage_error(t.app, {"get", "--frobnicate"}) ==
        "unknown option '--frobnicate' for 'get'; see 'stockctl get --help'");
}

TEST_CASE("a command typo gets did you mean") {
  Tree t;
  CHECK(explain_usage_error(t.app, {"gte", "1"}) == "unknown command 'gte'; did you mean 'get'?");
  CHECK(explain_usage_error(t.app, {"frobnicate"}) ==
        "unknown command 'frobnicate' (commands: get, init, rebuild)");
}

TEST_CASE("option values and negative numbers are not taken for options or commands") {
  Tree t;
  CHECK(explain_usage_error(t.app, {"--url", "redis://x", "init", "42", "-1"}).empty());
  CHECK(explain_usage_error(t.app, {"init", "42", "-1", "--force"}).empty());
}

TEST_CASE("usage_message puts CLI11's text in our shape") {
  CHECK(usage_message("The following argument was not expected: y.") ==
        "the following argument was not expected: y");
  CHECK(usage_message("SKU is required") == "SKU is required");  // a word in capitals stays
  CHECK(usage_message("--url: At Most 1 required but received 2") ==
        "--url given 2 times; it takes one value, give it once");
}

TEST_CASE("usage_hint names the subcommand's help, and nothing when the message names one") {
  Tree t;
  CHECK(usage_hint(t.app, {"--url", "redis://x", "init"}, "SKU is required") ==
        "Run 'stockctl init --help' for usage.");
  CHECK(usage_hint(t.app, {"--bogus"}, "x") == "Run 'stockctl --help' for usage.");
  CHECK(
      usage_hint(t.app, {"init", "--bogus"}, "unknown option; see 'stockctl init --help'").empty());
}
