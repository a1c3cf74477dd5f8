#include "redis/started_windows.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

using namespace stockctl;

namespace {

struct Named {
  std::uint64_t id = 0;
  std::string name;
};

StartedWindows<Named> three() {
  StartedWindows<Named> windows;
  for (const char* name : {"a", "b", "c"}) windows.open().name = name;
  return windows;
}

}  // namespace

TEST_CASE("started windows are taken back oldest first") {
  StartedWindows<Named> windows = three();
  CHECK(windows.take_oldest().name == "a");
  CHECK(windows.take_oldest().name == "b");
  CHECK(windows.size() == 1);
}

TEST_CASE("a window is found by its id while it is started, and not once it is taken") {
  StartedWindows<Named> windows = three();
  const std::uint64_t b = windows.at(windows.oldest().id + 1).id;
  CHECK(windows.at(b).name == "b");
  const std::uint64_t a = windows.take_oldest().id;
  CHECK(windows.at(b).name == "b");
  CHECK_THROWS_AS(windows.at(a), std::out_of_range);
}

TEST_CASE("an attempt taken back as the newest leaves its id unused by the next window") {
  StartedWindows<Named> windows = three();
  Named attempt = windows.take_newest();
  CHECK(attempt.name == "c");
  Named& next = windows.open();
  CHECK(next.id != attempt.id);
  CHECK_THROWS_AS(windows.at(attempt.id), std::out_of_range);
  CHECK(windows.at(next.id).name.empty());
}

TEST_CASE("a started window stays in place while later ones are opened") {
  StartedWindows<Named> windows;
  Named& first = windows.open();
  first.name = "first";
  for (int i = 0; i < 1000; ++i) windows.open();
  CHECK(&windows.oldest() == &first);
  CHECK(first.name == "first");
}
