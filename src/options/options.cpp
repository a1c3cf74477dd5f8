#include "options/options.h"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

namespace stockctl {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

ChangeLogSettings change_log_settings(const CommonOptions& o) {
  ChangeLogSettings s{!o.no_log, o.log_max, o.actor, o.reason};
  if (s.actor.empty()) s.actor = env("STOCKCTL_ACTOR");
  if (s.actor.empty()) {
    const passwd* pw = getpwuid(getuid());
    std::string user = pw != nullptr ? pw->pw_name : env("USER");
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    s.actor = fmt::format("{}@{}", user.empty() ? std::to_string(getuid()) : user, host);
  }
  return s;
}

KeyScheme key_scheme(const CommonOptions& o) { return KeyScheme{o.prefix, !o.no_hashtag, o.trim}; }

}  // namespace stockctl
