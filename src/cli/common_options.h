#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/rows.h"
#include "core/sku.h"
#include "redis/client.h"
#include "redis/connection.h"

namespace stockctl {

/// Options every subcommand takes, before or after its name.
struct CommonOptions {
  std::string url;  ///< empty: STOCKCTL_URL, REDIS_URL, then the default
  std::string user;
  std::string password_file;
  long long connect_timeout_ms = 2000;
  long long timeout_ms = 5000;
  TlsOptions tls;  ///< --tls and redis-cli's TLS options; rediss:// turns tls.enabled on too
  std::string sentinel_user;
  std::string sentinel_password_file;
  long long retry_timeout_ms = 10000;
  int wait_replicas = 0;
  long long wait_timeout_ms = 1000;
  std::string prefix = "stock:";
  bool no_hashtag = false;
  bool cluster = false;
  bool pretty = false;
  bool quiet = false;
  bool verbose = false;
  std::string metrics_file;
};

/// Options of commands that read a source file.
struct SourceOptions {
  std::string file;
  std::string format;
  SourceColumns columns;
  bool skip_invalid = false;
  std::string report;
};

/// Declares the common options on the top-level `app`. Subcommands let options they do not know
/// fall through to it, so the common options may stand before or after the subcommand.
/// (Declaring them on every subcommand as well cost a third of a short run's instructions.)
void add_common_options(CLI::App& app, CommonOptions& options);

/// Tells a subcommand's --help that the common options apply too.
void add_common_footer(CLI::App& sub);

/// Declares --file, --format, the column renames and --skip-invalid; `stock` picks the stock
/// columns (init, rebuild) rather than the batch ones (deduct, add); `report` adds --report.
void add_source_options(CLI::App& app, SourceOptions& options, bool stock, bool report);

/// Names each option's value in --help (URL, FILE, MS, ...) for the app and every subcommand.
void name_option_values(CLI::App& app);

/// The connection to make: URL from --url, STOCKCTL_URL, REDIS_URL or the default; password from
/// --password-file, the URL, STOCKCTL_PASSWORD or REDISCLI_AUTH. Warns when a password stands on
/// the command line. Throws InputError for a bad URL or an unsafe password file.
ConnectOptions connect_options(const CommonOptions& options);

/// How the client retries and waits for replicas.
ClientOptions client_options(const CommonOptions& options);

/// The key layout the options ask for.
KeyScheme key_scheme(const CommonOptions& options);

}  // namespace stockctl
