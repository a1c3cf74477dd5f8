#include "sources/line_input.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "base/errors.h"

using namespace stockctl;

namespace {

void put(int fd, const std::string& text) {
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
}

}  // namespace

TEST_CASE("LineInput says when the next line of a pipe has not arrived yet") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  LineInput in("/dev/fd/" + std::to_string(fds[0]));
  ::close(fds[0]);
  std::string line;
  put(fds[1], "a\nb");
  CHECK_FALSE(in.would_wait());  // "a\n" can be read at once
  REQUIRE(in.next(line));
  CHECK(line == "a");
  CHECK(in.would_wait());  // "b" has no end yet, and nothing more came
  put(fds[1], "c\n");
  CHECK_FALSE(in.would_wait());
  REQUIRE(in.next(line));
  CHECK(line == "bc");
  CHECK(in.would_wait());
  ::close(fds[1]);
  CHECK_FALSE(in.would_wait());  // the end is there to read
  CHECK_FALSE(in.next(line));
  CHECK_FALSE(in.would_wait());
}

TEST_CASE("LineInput never waits on a regular file, whose last line may have no newline") {
  char path[] = "/tmp/stockctl-line-input-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  put(fd, "x\r\n\ny");
  ::close(fd);
  LineInput in(path);
  std::string line;
  CHECK_FALSE(in.would_wait());
  REQUIRE(in.next(line));
  CHECK(line == "x\r");  // get drops the '\r' and skips blank lines itself
  REQUIRE(in.next(line));
  CHECK(line.empty());
  CHECK_FALSE(in.would_wait());
  REQUIRE(in.next(line));
  CHECK(line == "y");
  CHECK_FALSE(in.next(line));
  std::remove(path);
}

TEST_CASE("LineInput names a file it cannot open") {
  CHECK_THROWS_WITH_AS(LineInput("/nonexistent/skus.txt"),
                       "cannot read /nonexistent/skus.txt: No such file or directory", IoError);
}

TEST_CASE("LineInput drops a byte order mark before the first line, and only there") {
  char path[] = "/tmp/stockctl-line-input-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  put(fd,
      "\xEF\xBB\xBF"
      "A\n\xEF\xBB\xBF"
      "B\n");
  ::close(fd);
  LineInput in(path);
  std::string line;
  REQUIRE(in.next(line));
  CHECK(line == "A");
  REQUIRE(in.next(line));
  CHECK(line ==
        "\xEF\xBB\xBF"
        "B");  // a SKU's own bytes after the first line
  std::remove(path);
}
