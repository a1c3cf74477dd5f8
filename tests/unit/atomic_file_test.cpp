#include "output/atomic_file.h"

#include <dirent.h>
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/errors.h"

using namespace stockctl;

namespace {

// The names in directory `dir`, sorted.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  REQUIRE(d != nullptr);
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// A fresh directory for one case, removed with what it holds.
struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/stockctl-atomic-XXXXXX";
    REQUIRE(mkdtemp(name) != nullptr);
    path = name;
  }
  ~TempDir() {
    const std::string rm = "rm -rf '" + path + "'";
    CHECK(std::system(rm.c_str()) == 0);
  }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

bool is_link(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

}  // namespace

TEST_CASE("a new or regular file is replaced; a FIFO is written in place; - is stdout") {
  TempDir dir;
  CHECK(resolve_output(dir / "new").mode == OutputMode::replace);
  write_file(dir / "file", "x");
  CHECK(resolve_output(dir / "file").path == dir / "file");
  CHECK(resolve_output(dir / "file").mode == OutputMode::replace);
  REQUIRE(mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK(resolve_output(dir / "fifo").mode == OutputMode::in_place);
  CHECK(resolve_output("-").mode == OutputMode::stdout_);
  CHECK_THROWS_AS(resolve_output(dir.path), IoError);
}

TEST_CASE("symlinks are followed to their last target, relative to each link's directory") {
  TempDir dir;
  REQUIRE(mkdir((dir / "sub").c_str(), 0700) == 0);
  REQUIRE(symlink("sub/middle", (dir / "top").c_str()) == 0);
  REQUIRE(symlink("real", (dir / "sub/middle").c_str()) == 0);
  OutputTarget target = resolve_output(dir / "top");
  CHECK(target.path == dir / "sub/real");  // dangling: created like a new file
  CHECK(target.mode == OutputMode::replace);
  REQUIRE(symlink("loop", (dir / "loop").c_str()) == 0);
  CHECK_THROWS_WITH_AS(
      resolve_output(dir / "loop"),
      ("cannot write " + dir / "loop" + ": Too many levels of symbolic links").c_str(), IoError);
}

TEST_CASE("writing through a symlink replaces its target and keeps the link") {
  TempDir dir;
  write_file(dir / "real", "old\n");
  REQUIRE(symlink("real", (dir / "latest").c_str()) == 0);
  AtomicFile file(dir / "latest", "report ");
  file.write("new\n");
  CHECK(read(dir / "real") == "old\n");  // nothing is seen before commit
  file.commit();
  CHECK(is_link(dir / "latest"));
  CHECK(read(dir / "real") == "new\n");
  CHECK(entries(dir.path) == std::vector<std::string>{"latest", "real"});  // no temporary file left
}

TEST_CASE("a file that is never committed leaves the old one and no temporary file") {
  TempDir dir;
  write_file(dir / "report", "old\n");
  {
    AtomicFile file(dir / "report");
    file.write("half");
  }
  CHECK(read(dir / "report") == "old\n");
  CHECK(entries(dir.path) == std::vector<std::string>{"report"});  // no temporary file left
}

TEST_CASE("a file in a missing directory names the path and the reason") {
  TempDir dir;
  REQUIRE(symlink("gone/x", (dir / "link").c_str()) == 0);
  CHECK_THROWS_WITH_AS(
      AtomicFile(dir / "link", "report "),
      ("cannot write report " + dir / "link" + ": No such file or directory").c_str(), IoError);
  CHECK(is_link(dir / "link"));
}

TEST_CASE("an output that names its source or another output, by any path, clashes") {
  TempDir dir;
  write_file(dir / "src.csv", "sku,stock\n");
  REQUIRE(symlink("src.csv", (dir / "link.csv").c_str()) == 0);
  REQUIRE(mkfifo((dir / "fifo").c_str(), 0600) == 0);
  const NamedFile source{"--file", dir / "src.csv", false};
  // The source under its own name, through a symlink, and by a path with a "./" in it.
  CHECK(clashing_files({source, {"--report", dir / "src.csv", true}}) ==
        "--file '" + dir / "src.csv" + "' and --report '" + dir / "src.csv" +
            "' name the same file: the --report would replace the --file; give them different "
            "files");
  CHECK_FALSE(clashing_files({source, {"--report", dir / "link.csv", true}}).empty());
  CHECK_FALSE(clashing_files({source, {"--report", dir.path + "/./src.csv", true}}).empty());
  // Two outputs, one of them not there yet.
  const std::string both = clashing_files(
      {{"--report", dir / "new.jsonl", true}, {"--metrics-file", dir / "new.jsonl", true}});
  CHECK(both.find("the --metrics-file would replace the --report") != std::string::npos);
  // Two inputs, different files, a FIFO written twice, standard output: no clash.
  CHECK(clashing_files({source, {"--init-from", dir / "link.csv", false}}).empty());
  CHECK(clashing_files({source, {"--report", dir / "other.jsonl", true}}).empty());
  CHECK(clashing_files({{"--report", dir / "fifo", true}, {"--metrics-file", dir / "fifo", true}})
            .empty());
  CHECK(clashing_files({{"--report", "-", true}, {"--metrics-file", "-", true}}).empty());
}
