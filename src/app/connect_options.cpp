#include "app/connect_options.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/diagnostics.h"
#include "base/errors.h"

namespace stockctl {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// A file that its group may read is accepted, as redis-cli and systemd's credentials allow
// (mode 0640, owned by root and the service's group); one that every user may read or change
// is refused.
std::string read_password_file(const std::string& path, const char* option = "--password-file") {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    throw InputError(fmt::format("{} {}: {}", option, path, std::strerror(errno)));
  }
  if (st.st_mode & S_IRWXO) {
    throw InputError(
        fmt::format("{} {} is open to every user on this machine (mode {:04o}); run "
                    "chmod o= {}",
                    option, path, st.st_mode & 07777, path));
  }
  std::ifstream in(path);
  std::string password;
  if (!in || !std::getline(in, password)) {
    throw InputError(fmt::format("{} {}: cannot read a password", option, path));
  }
  if (!password.empty() && password.back() == '\r') password.pop_back();
  return password;
}

// TLS settings from the URL and the options; refuses TLS where it cannot apply.
TlsOptions tls_options(const CommonOptions& o, const RedisUrl& url) {
  TlsOptions t;
  t.enabled = o.tls.enabled || url.tls;
  t.cacert = o.tls.cacert;
  t.cacertdir = o.tls.cacertdir;
  t.cert = o.tls.cert;
  t.key = o.tls.key;
  t.sni = o.tls.sni;
  t.insecure = o.tls.insecure;
  if (t.enabled && url.kind == RedisUrl::Kind::unix_socket) {
    throw InputError("--tls needs a TCP URL (redis://, rediss:// or a sentinel URL), not unix://");
  }
  if (!t.enabled && (!t.cacert.empty() || !t.cacertdir.empty() || !t.cert.empty() ||
                     !t.key.empty() || !t.sni.empty() || t.insecure)) {
    throw InputError("TLS options need a rediss:// URL or --tls");
  }
  if (t.cert.empty() != t.key.empty()) throw InputError("--cert and --key go together");
  return t;
}

void sentinel_credentials(const CommonOptions& o, ConnectOptions& c) {
  if (!o.sentinel_user.empty()) c.sentinel_user = o.sentinel_user;
  if (!o.sentinel_password_file.empty()) {
    c.sentinel_password = read_password_file(o.sentinel_password_file, "--sentinel-password-file");
  } else if (!env("STOCKCTL_SENTINEL_PASSWORD").empty()) {
    c.sentinel_password = env("STOCKCTL_SENTINEL_PASSWORD");
  }
  if (c.url.kind != RedisUrl::Kind::sentinel &&
      (c.sentinel_user || !o.sentinel_password_file.empty())) {
    throw InputError("--sentinel-user and --sentinel-password-file need a redis+sentinel:// URL");
  }
  if (c.sentinel_user && !c.sentinel_password) {
    throw InputError(
        fmt::format("sentinel user '{}' needs a password: --sentinel-password-file or "
                    "STOCKCTL_SENTINEL_PASSWORD",
                    *c.sentinel_user));
  }
}

}  // namespace

ConnectOptions connect_options(const CommonOptions& o) {
  std::string text = o.url;
  bool on_command_line = !text.empty();
  if (text.empty()) text = env("STOCKCTL_URL");
  if (text.empty()) text = env("REDIS_URL");
  if (text.empty()) text = "redis://127.0.0.1:6379";
  ConnectOptions c;
  if (std::string e = parse_redis_url(text, c.url); !e.empty()) {
    throw InputError(fmt::format("invalid Redis URL: {}", e));
  }
  c.connect_timeout_ms = o.connect_timeout_ms;
  c.timeout_ms = o.timeout_ms;
  c.tls = tls_options(o, c.url);
  sentinel_credentials(o, c);
  if (o.cluster && c.url.kind == RedisUrl::Kind::sentinel) {
    throw InputError("--cluster and a sentinel URL exclude each other");
  }
  c.user = c.url.user;
  if (!o.user.empty()) c.user = o.user;
  if (!o.password_file.empty()) {
    c.password = read_password_file(o.password_file);
  } else if (c.url.password) {
    c.password = c.url.password;
    if (on_command_line) {
      print_warning(
          "a password on the command line may be seen by other users (ps); use "
          "--password-file or STOCKCTL_PASSWORD");
    }
  } else if (!env("STOCKCTL_PASSWORD").empty()) {
    c.password = env("STOCKCTL_PASSWORD");
  } else if (!env("REDISCLI_AUTH").empty()) {
    c.password = env("REDISCLI_AUTH");
  }
  if (c.user && !c.password) {
    throw InputError(
        fmt::format("user '{}' needs a password: give it in the URL, "
                    "--password-file or STOCKCTL_PASSWORD",
                    *c.user));
  }
  return c;
}

std::string password_sources(const CommonOptions& o, const ConnectOptions& c) {
  const char* const order = "--password-file, the URL, STOCKCTL_PASSWORD, REDISCLI_AUTH";
  std::string used;
  if (!o.password_file.empty()) {
    used = "--password-file";
  } else if (c.url.password) {
    used = "the URL";
  } else if (!env("STOCKCTL_PASSWORD").empty()) {
    used = "STOCKCTL_PASSWORD";
  } else if (!env("REDISCLI_AUTH").empty()) {
    used = "REDISCLI_AUTH";
  }
  if (used.empty()) return fmt::format("no password given (looked at {})", order);
  return fmt::format("the password from {} (sources in order: {})", used, order);
}

ClientOptions client_options(const CommonOptions& o, bool writes) {
  const int wait_replicas = !writes && o.wait_replicas == kWaitReplicasAuto ? 0 : o.wait_replicas;
  return ClientOptions{o.retry_timeout_ms, wait_replicas, o.wait_timeout_ms, o.timeout_ms};
}

bool writes_stock(std::string_view op) {
  return !(op == "get" || op == "export" || op == "log" || op == "doctor");
}

}  // namespace stockctl
