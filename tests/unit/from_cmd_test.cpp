#include "proc/from_cmd.h"

#include <doctest/doctest.h>

#include <chrono>
#include <istream>
#include <iterator>
#include <string>

using namespace stockctl;
using namespace std::chrono_literals;

namespace {

std::string read_all(CommandOutput& output) {
  std::istream in(&output);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("the command's standard output is the stream") {
  CommandOutput output("printf 'sku,stock\\nA,1\\n'", 5s);
  CHECK(read_all(output) == "sku,stock\nA,1\n");
  CHECK(output.finish().empty());
}

TEST_CASE("a command's failure is reported by finish, whatever it printed") {
  CommandOutput failed("echo A,1; exit 3", 5s);
  CHECK(read_all(failed) == "A,1\n");
  CHECK(failed.finish() == "failed with exit status 3");
  CommandOutput killed("kill -9 $$", 5s);
  CHECK(killed.finish() == "killed by signal 9 (Killed)");
}

TEST_CASE("finish reads what the parser left, so a long output never blocks the command") {
  CommandOutput output("head -c 1000000 /dev/zero; exit 4", 5s);
  std::istream in(&output);
  CHECK(in.get() == 0);
  CHECK(output.finish() == "failed with exit status 4");
}

TEST_CASE("a command still running at the timeout is stopped") {
  auto started = std::chrono::steady_clock::now();
  CommandOutput output("echo A,1; sleep 30", 300ms);
  CHECK(read_all(output) == "A,1\n");
  CHECK(output.finish() ==
        "still running after 300 ms (--from-cmd-timeout); its process group was killed");
  CHECK(std::chrono::steady_clock::now() - started < 20s);
}
