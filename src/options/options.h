#pragma once

// What the user asked for on the command line, as plain structs: the layers that act on it
// (app/, bulk/) read them without the parser. CLI11 is header-only and costs every file that
// includes it about as much time as the rest of the file (cli/common_options.h declares the
// options on a CLI::App; only cli/, commands/ and main.cpp include it).

#include <string>

#include "core/change_log.h"
#include "core/replication.h"
#include "core/sku.h"
#include "sources/rows.h"

namespace stockctl {

/// --tls and redis-cli's TLS options, as given; a rediss:// URL turns TLS on too (the
/// connection's TlsOptions are made from both by connect_options in app/connect_options.h).
struct TlsFlags {
  bool enabled = false;
  std::string cacert;
  std::string cacertdir;
  std::string cert;
  std::string key;
  std::string sni;
  bool insecure = false;
};

/// Options every subcommand takes, before or after its name.
struct CommonOptions {
  std::string url;  ///< empty: STOCKCTL_URL, REDIS_URL, then the default
  std::string user;
  std::string password_file;
  long long connect_timeout_ms = 2000;
  long long timeout_ms = 5000;
  TlsFlags tls;
  std::string sentinel_user;
  std::string sentinel_password_file;
  long long retry_timeout_ms = 10000;
  int wait_replicas = kWaitReplicasAuto;  ///< not given: 1 where the primary has a replica
  long long wait_timeout_ms = 1000;
  std::string prefix = "stock:";
  bool no_hashtag = false;
  bool trim = false;  ///< --trim: remove white space around item ids given as input
  bool cluster = false;
  bool pretty = false;
  bool table = false;  ///< --table: aligned columns for a person instead of JSON
  bool quiet = false;
  bool verbose = false;
  std::string metrics_file;
  bool no_log = false;
  long long log_max = 1000;
  std::string actor;  ///< empty: STOCKCTL_ACTOR, else user@host
  std::string reason;
};

/// Options of commands that read a source file.
struct SourceOptions {
  std::string file;
  std::string from_cmd;  ///< init, rebuild: a command whose output is the source
  long long from_cmd_timeout_ms = 600000;
  std::string format;
  SourceColumns columns;
  bool skip_invalid = false;
  std::string report;
};

/// The --format names the source parser accepts, in the order --help lists them.
inline constexpr const char* kFormatNames[] = {"csv", "tsv", "json", "ndjson", "jsonl"};

/// How this run writes change logs: --no-log, --log-max, --reason, and the actor from --actor,
/// STOCKCTL_ACTOR, else user@host.
ChangeLogSettings change_log_settings(const CommonOptions& options);

/// The key layout the options ask for.
KeyScheme key_scheme(const CommonOptions& options);

}  // namespace stockctl
