#pragma once

#include <CLI/CLI.hpp>
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

/// A check for an integer option value from `min` to `max`, whose message names the value and
/// the range ("--ttl: 'abc' is not an integer from 0 to 1099511627776").
CLI::Validator integer_range(long long min, long long max);

/// The same for a decimal number of seconds (bench --duration).
CLI::Validator number_range(double min, double max);

/// Declares the common options on the top-level `app`. Subcommands let options they do not know
/// fall through to it, so the common options may stand before or after the subcommand.
/// They are declared once, here: declaring options is a large part of a short run's start-up.
void add_common_options(CLI::App& app, CommonOptions& options);

/// Tells a subcommand's --help that the common options apply too.
void add_common_footer(CLI::App& sub);

/// Declares --file, --format, the column renames and --skip-invalid; `stock` picks the stock
/// columns (init, rebuild) rather than the batch ones (deduct, add); `report` adds --report.
void add_source_options(CLI::App& app, SourceOptions& options, bool stock, bool report);

/// Declares --from-cmd and --from-cmd-timeout (init, rebuild; after add_source_options).
void add_from_cmd_options(CLI::App& app, SourceOptions& options);

/// Names each option's value in --help (URL, FILE, MS, ...) for the app and every subcommand.
void name_option_values(CLI::App& app);

/// How this run writes change logs: --no-log, --log-max, --reason, and the actor from --actor,
/// STOCKCTL_ACTOR, else user@host.
ChangeLogSettings change_log_settings(const CommonOptions& options);

/// The key layout the options ask for.
KeyScheme key_scheme(const CommonOptions& options);

}  // namespace stockctl
