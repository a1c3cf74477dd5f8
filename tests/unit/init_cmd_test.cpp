#include "proc/init_cmd.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

using namespace stockctl;
using namespace std::chrono_literals;

namespace {
auto soon() { return std::chrono::steady_clock::now() + 5s; }
}  // namespace

TEST_CASE("the command's output is the initial stock") {
  ParsedNumber n = run_init_cmd("echo 250", "42", soon());
  REQUIRE(n.ok());
  CHECK(n.value == 250);
  CHECK(run_init_cmd("echo unlimited", "42", soon()).value == -1);
}

TEST_CASE("the SKU arrives in STOCKCTL_SKU") {
  ParsedNumber n = run_init_cmd("test \"$STOCKCTL_SKU\" = 'a b' && echo 1", "a b", soon());
  CHECK(n.ok());
}

TEST_CASE("a SKU is never spliced into the command text") {
  char dir[] = "/tmp/stockctl-initcmd-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  std::string sku = std::string("x; touch ") + dir + "/pwned";
  run_init_cmd("echo 1", sku, soon());
  CHECK_FALSE(std::ifstream(std::string(dir) + "/pwned").good());
  rmdir(dir);
}

TEST_CASE("a failing command or non-numeric output is an error") {
  CHECK(run_init_cmd("exit 3", "42", soon()).error == "--init-cmd failed with exit status 3");
  CHECK(run_init_cmd("echo lots", "42", soon()).error.rfind("--init-cmd printed 'lots'", 0) == 0);
  CHECK_FALSE(run_init_cmd("echo 5; exit 1", "42", soon()).ok());
}

TEST_CASE("a command still running at the deadline is stopped and fails") {
  auto started = std::chrono::steady_clock::now();
  ParsedNumber n = run_init_cmd("sleep 30; echo 1", "42", started + 300ms);
  CHECK_FALSE(n.ok());
  CHECK(n.error == "--init-cmd still running when the init lock would expire; it was stopped");
  CHECK(std::chrono::steady_clock::now() - started < 10s);
}
