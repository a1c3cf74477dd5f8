// Where the connection's URL and credentials come from: the contract's order is flag, then
// environment, then the URL, then the default.

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "app/connect_options.h"

using namespace stockctl;

namespace {

// Sets (or, with nullopt, unsets) environment variables for one test case and restores them.
class Env {
 public:
  Env(std::map<std::string, std::optional<std::string>> values) {
    for (const auto& [name, value] : values) {
      const char* before = std::getenv(name.c_str());
      saved_[name] = before ? std::optional<std::string>(before) : std::nullopt;
      set(name, value);
    }
  }
  ~Env() {
    for (const auto& [name, value] : saved_) set(name, value);
  }
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

 private:
  static void set(const std::string& name, const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

// Every variable connect_options() reads, unset unless a case sets it.
Env clean_env(std::map<std::string, std::optional<std::string>> set = {}) {
  std::map<std::string, std::optional<std::string>> all{{"STOCKCTL_URL", std::nullopt},
                                                        {"REDIS_URL", std::nullopt},
                                                        {"STOCKCTL_PASSWORD", std::nullopt},
                                                        {"REDISCLI_AUTH", std::nullopt}};
  for (auto& [name, value] : set) all[name] = value;
  return Env(all);
}

// A password file only its owner may read, removed when the test ends.
class PasswordFile {
 public:
  explicit PasswordFile(const std::string& password)
      : path_(std::filesystem::temp_directory_path() /
              ("stockctl-password-" + std::to_string(::getpid()))) {
    std::ofstream(path_) << password << "\n";
    ::chmod(path_.c_str(), 0600);
  }
  ~PasswordFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace

TEST_CASE("--url wins over STOCKCTL_URL, which wins over REDIS_URL") {
  auto env = clean_env(
      {{"STOCKCTL_URL", "redis://10.0.0.2:7002"}, {"REDIS_URL", "redis://10.0.0.3:7003"}});
  CommonOptions o;
  o.url = "redis://10.0.0.1:7001";
  CHECK(connect_options(o).url.host == "10.0.0.1");
  o.url.clear();
  CHECK(connect_options(o).url.host == "10.0.0.2");
}

TEST_CASE("REDIS_URL is used when neither --url nor STOCKCTL_URL is given") {
  auto env = clean_env({{"REDIS_URL", "redis://10.0.0.3:7003/2"}});
  ConnectOptions c = connect_options(CommonOptions{});
  CHECK(c.url.host == "10.0.0.3");
  CHECK(c.url.port == 7003);
  CHECK(c.url.db == 2);
}

TEST_CASE("without --url or the environment the default is the local server's port 6379") {
  auto env = clean_env();
  ConnectOptions c = connect_options(CommonOptions{});
  CHECK(c.url.host == "127.0.0.1");
  CHECK(c.url.port == 6379);
  CHECK(c.url.db == 0);
  CHECK_FALSE(c.password);
}

TEST_CASE("--password-file wins over the URL's password and the environment") {
  auto env = clean_env({{"STOCKCTL_PASSWORD", "from-env"}, {"REDISCLI_AUTH", "from-cli-env"}});
  PasswordFile file("from-file");
  CommonOptions o;
  o.url = "redis://:from-url@10.0.0.1:7001";
  o.password_file = file.path();
  CHECK(connect_options(o).password == std::optional<std::string>("from-file"));
}

TEST_CASE("the URL's password wins over STOCKCTL_PASSWORD, which wins over REDISCLI_AUTH") {
  auto env = clean_env({{"STOCKCTL_URL", "redis://:from-url@10.0.0.1:7001"},
                        {"STOCKCTL_PASSWORD", "from-env"},
                        {"REDISCLI_AUTH", "from-cli-env"}});
  CommonOptions o;
  CHECK(connect_options(o).password == std::optional<std::string>("from-url"));
  ::setenv("STOCKCTL_URL", "redis://10.0.0.1:7001", 1);
  CHECK(connect_options(o).password == std::optional<std::string>("from-env"));
  ::unsetenv("STOCKCTL_PASSWORD");
  CHECK(connect_options(o).password == std::optional<std::string>("from-cli-env"));
}

TEST_CASE("--user wins over the URL's user") {
  auto env = clean_env();
  CommonOptions o;
  o.url = "redis://url-user:secret@10.0.0.1:7001";
  CHECK(connect_options(o).user == std::optional<std::string>("url-user"));
  o.user = "flag-user";
  CHECK(connect_options(o).user == std::optional<std::string>("flag-user"));
}

TEST_CASE("a command that writes no stock does not wait for replicas unless asked to") {
  CommonOptions o;
  CHECK(client_options(o, true).wait_replicas == kWaitReplicasAuto);
  CHECK(client_options(o, false).wait_replicas == 0);
  o.wait_replicas = 2;
  CHECK(client_options(o, false).wait_replicas == 2);
  for (const char* op : {"get", "export", "log", "doctor"}) CHECK_FALSE(writes_stock(op));
  for (const char* op : {"deduct", "add", "init", "rebuild", "delete", "hold", "reap", "split",
                         "rebalance", "bench", "library"}) {
    CHECK(writes_stock(op));
  }
}
