#include "proc/init_cmd.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
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
  CHECK(run_init_cmd("true", "42", soon()).error ==
        "--init-cmd exited 0 but printed nothing: it must print the item's initial stock "
        "(STOCKCTL_SKU names the item)");
  CHECK(run_init_cmd("echo", "42", soon())
            .error.rfind("--init-cmd exited 0 but printed nothing", 0) == 0);
  CHECK_FALSE(run_init_cmd("echo 5; exit 1", "42", soon()).ok());
}

TEST_CASE("a command still running at the deadline is stopped and fails") {
  auto started = std::chrono::steady_clock::now();
  ParsedNumber n = run_init_cmd("sleep 30; echo 1", "42", started + 300ms);
  CHECK_FALSE(n.ok());
  CHECK(n.error == "--init-cmd still running when the init lock would expire; it was stopped");
  CHECK(std::chrono::steady_clock::now() - started < 10s);
}

TEST_CASE("stockctl's secrets never reach the command") {
  setenv("STOCKCTL_PASSWORD", "hunter2", 1);
  setenv("REDISCLI_AUTH", "hunter3", 1);
  setenv("PGPASSFILE", "/nowhere/.pgpass", 1);
  ParsedNumber n = run_init_cmd(
      "test -z \"$STOCKCTL_PASSWORD$REDISCLI_AUTH\" && test \"$PGPASSFILE\" = /nowhere/.pgpass "
      "&& echo 1",
      "42", soon());
  unsetenv("STOCKCTL_PASSWORD");
  unsetenv("REDISCLI_AUTH");
  unsetenv("PGPASSFILE");
  CHECK(n.ok());
}

namespace {

// True once `pid` is gone or a zombie; waits at most 5 s for a kill to take effect.
bool dies_soon(const std::string& pid) {
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string ignored, name, state;
    if (!(stat >> ignored >> name >> state) || state == "Z" || state == "X") return true;
    usleep(10 * 1000);
  }
  return false;
}

}  // namespace

TEST_CASE("what the command leaves running in its group is stopped with it") {
  char dir[] = "/tmp/stockctl-initcmd-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  std::string pid_file = std::string(dir) + "/pid";
  ParsedNumber n =
      run_init_cmd("sleep 60 >/dev/null & echo $! > " + pid_file + "; echo 3", "42", soon());
  CHECK(n.value == 3);
  std::string pid;
  std::ifstream(pid_file) >> pid;
  REQUIRE_FALSE(pid.empty());
  CHECK(dies_soon(pid));
  std::remove(pid_file.c_str());
  rmdir(dir);
}
