#include "cli/common_options.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/text.h"
#include "core/quantity.h"

namespace stockctl {
namespace {

std::string format_list() {
  std::string out;
  for (const char* name : kFormatNames) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

CLI::Validator format_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        for (const char* name : kFormatNames) {
          if (text == name) return {};
        }
        return fmt::format("{} is not a format; use one of {}", quote_value(text), format_list());
      },
      "");
}

// One byte that can separate CSV fields: not a quote or a line break, which RFC 4180 gives
// their own meaning.
CLI::Validator delimiter_character() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.size() != 1) {
          return fmt::format("{} is not one character (for tab-separated files use --format tsv)",
                             quote_value(text));
        }
        if (text == "\"" || text == "\n" || text == "\r") {
          return fmt::format("{} cannot separate CSV fields", quote_value(text));
        }
        return {};
      },
      "");
}

void add_tls_options(CLI::App& app, CommonOptions& o) {
  const char* tls = "TLS and Sentinel";
  app.add_flag("--tls", o.tls.enabled, "connect with TLS (as a rediss:// URL does)")->group(tls);
  app.add_option("--cacert", o.tls.cacert,
                 "trust the CA certificates in this PEM file (default: the system's)")
      ->group(tls);
  app.add_option("--cacertdir", o.tls.cacertdir, "trust the CA certificates in this directory")
      ->group(tls);
  app.add_option("--cert", o.tls.cert, "client certificate (PEM), for servers that ask for one")
      ->group(tls);
  app.add_option("--key", o.tls.key, "the client certificate's private key (PEM)")->group(tls);
  app.add_option("--sni", o.tls.sni, "server name to send and verify instead of the URL's host")
      ->group(tls);
  app.add_flag("--insecure", o.tls.insecure,
               "do not verify the server's certificate or name (testing only)")
      ->group(tls);
  app.add_option("--sentinel-user", o.sentinel_user, "ACL user name for the sentinels")->group(tls);
  app.add_option("--sentinel-password-file", o.sentinel_password_file,
                 "read the sentinels' password from this file (env STOCKCTL_SENTINEL_PASSWORD)")
      ->group(tls);
}

}  // namespace

CLI::Validator integer_range(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        ParsedNumber n = parse_bounded(text, max);
        if (n.ok() && n.value >= min) return {};
        return fmt::format("{} is not an integer from {} to {}", quote_value(text), min, max);
      },
      "");
}

CLI::Validator key_prefix() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (!starts_with(text, "stockctl:")) return {};
        return fmt::format(
            "{} starts with stockctl:, the namespace of stockctl's own keys (locks, marks, split "
            "buckets, hold and cart records); choose another prefix",
            quote_value(text));
      },
      "");
}

CLI::Validator readable_file() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text == "-" || access(text.c_str(), R_OK) == 0) return {};
        return fmt::format("cannot read {}: {}", quote_value(text), std::strerror(errno));
      },
      "");
}

CLI::Validator refuse_empty(std::string message) {
  return CLI::Validator([message = std::move(message)](
                            std::string& text) { return text.empty() ? message : std::string(); },
                        "");
}

CLI::Validator file_name() { return refuse_empty("'' names no file"); }

CLI::Validator number_range(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (!text.empty() && end == text.c_str() + text.size() && v >= min && v <= max) return {};
        return fmt::format("{} is not a number from {} to {}", quote_value(text), min, max);
      },
      "");
}

void add_common_options(CLI::App& app, CommonOptions& o) {
  const char* conn = "Connection";
  app.add_option("-u,--url", o.url,
                 "redis://[[user][:password]@]host[:port][/db] (rediss:// for TLS), "
                 "unix:///path[?db=N] or redis+sentinel://host[:port][,host...]/MASTER[/db] "
                 "(env STOCKCTL_URL, REDIS_URL; default redis://127.0.0.1:6379)")
      ->group(conn);
  app.add_option("--user", o.user, "ACL user name")->group(conn);
  app.add_flag("--cluster", o.cluster,
               "the URL names any node of a Redis Cluster: discover slots, follow redirects")
      ->group(conn);
  app.add_option("--password-file", o.password_file,
                 "read the password from this file (its group may read it, other users not)")
      ->group(conn);
  app.add_option("--connect-timeout", o.connect_timeout_ms, "connect timeout in ms (default 2000)")
      ->check(integer_range(1, 3600000LL))
      ->group(conn);
  app.add_option("--timeout", o.timeout_ms, "longest wait for one reply in ms (default 5000)")
      ->check(integer_range(1, 3600000LL))
      ->group(conn);
  add_tls_options(app, o);
  const char* retries = "Retries";
  app.add_option(
         "--retry-timeout", o.retry_timeout_ms,
         "keep retrying what is safe to retry for this long, in ms (default 10000); a command "
         "with no answer ends within about this plus --timeout")
      ->check(integer_range(0, 3600000LL))
      ->group(retries);
  app.add_option("--wait-replicas", o.wait_replicas,
                 "after writing (once per window of 4,096 rows of a file), wait until N replicas "
                 "acknowledged (Redis WAIT); default 1 where the primary has a replica attached, "
                 "else 0: without it a failover loses the old primary's last writes; 0 opts out")
      ->check(integer_range(0, 100))
      ->group(retries);
  app.add_option("--wait-timeout", o.wait_timeout_ms,
                 "how long --wait-replicas waits, in ms (default 1000; beyond --timeout)")
      ->check(integer_range(1, 3600000LL))
      ->group(retries);
  const char* keys = "Keys";
  const char* output = "Output";
  app.add_option("--prefix", o.prefix, "key prefix (default stock:)")
      ->check(key_prefix())
      ->group(keys);
  app.add_flag("--no-hashtag", o.no_hashtag,
               "keys are <prefix>SKU, without {} (the classic StockService layout)")
      ->group(keys);
  app.add_flag("--trim", o.trim,
               "remove white space around item ids and request ids (arguments, files, --from-cmd, "
               "--init-from); without it such an id is invalid")
      ->group(keys);
  CLI::Option* pretty = app.add_flag("--pretty", o.pretty, "indent the JSON output")->group(output);
  CLI::Option* table =
      app.add_flag("--table", o.table,
                   "print aligned columns for a person instead of JSON (null as -; rows aligned "
                   "in blocks of 1000); not with --pretty")
          ->group(output);
  // Checked here rather than with CLI11's excludes(), which would print "Excludes: --table"
  // beside --pretty in every --help.
  app.parse_complete_callback([pretty, table] {
    if (table->count() > 0 && pretty->count() > 0) {
      throw CLI::ExcludesError(table->get_name(), pretty->get_name());
    }
  });
  app.add_flag("-q,--quiet", o.quiet, "no progress and no warnings on standard error")
      ->group(output);
  app.add_flag("-v,--verbose", o.verbose, "say what is being done on standard error")
      ->group(output);
  const char* log = "Change log";
  app.add_flag("--no-log", o.no_log, "write no entry in the items' change logs for this run")
      ->group(log);
  app.add_option("--log-max", o.log_max, "keep about N entries per item's log (default 1000)")
      ->check(integer_range(1, 1LL << 40))
      ->group(log);
  // An empty --actor is refused rather than taken as the default: `--actor "$JOB"` with JOB unset
  // would otherwise sign a cron job's changes as whoever ran it, without a word.
  app.add_option("--actor", o.actor,
                 "who makes the changes, for the log (default $STOCKCTL_ACTOR, else user@host)")
      ->check(refuse_empty(
          "'' is empty; leave --actor out for the default ($STOCKCTL_ACTOR, else user@host)"))
      ->group(log);
  app.add_option("--reason", o.reason, "why, for the log")->group(log);
  app.add_option("--metrics-file", o.metrics_file,
                 "write the run's figures in Prometheus text format (node_exporter textfile; - "
                 "for standard output)")
      ->check(file_name())
      ->group(output);
}

void add_common_footer(CLI::App& sub) {
  sub.footer(
      "Connection, key, retry and output options (--url, --cluster, --prefix, --pretty, ...) "
      "apply too, before or after the subcommand: see 'stockctl --help'.");
}

void add_source_options(CLI::App& app, SourceOptions& o, bool stock, bool report) {
  const char* src = "Source";
  app.add_option("-f,--file", o.file, "read items from FILE (- = standard input)")
      ->check(file_name())
      ->group(src);
  app.add_option("--format", o.format,
                 fmt::format("{} (default: from the file name)", format_list()))
      ->check(format_name())
      ->group(src);
  add_delimiter_option(app, o.columns);
  app.add_option("--sku-column", o.columns.sku, "column holding the item id (default sku)")
      ->group(src);
  if (stock) {
    // Naming one kind of stock column chooses it when a header has both kinds.
    SourceColumns& columns = o.columns;
    app.add_option("--stock-column", o.columns.stock,
                   "column holding the stock (default stock; chooses it when the header has "
                   "total/issued too)")
        ->each([&columns](const std::string&) { columns.stock_named = true; })
        ->group(src);
    app.add_option("--total-column", o.columns.total,
                   "column holding the total (default total; chooses total - issued when the "
                   "header has stock too)")
        ->each([&columns](const std::string&) { columns.total_issued_named = true; })
        ->group(src);
    app.add_option("--issued-column", o.columns.issued,
                   "column holding the issued count (default issued; chooses total - issued "
                   "like --total-column)")
        ->each([&columns](const std::string&) { columns.total_issued_named = true; })
        ->group(src);
  } else {
    app.add_option("--qty-column", o.columns.qty, "column holding the quantity (default qty)")
        ->group(src);
  }
  app.add_flag("--skip-invalid", o.skip_invalid,
               "write the valid rows and report the invalid ones, instead of writing nothing")
      ->group(src);
  if (report) {
    app.add_option("--report", o.report,
                   "write one JSON line per item to this file (- for standard output)")
        ->check(file_name())
        ->group(src);
  }
}

void add_delimiter_option(CLI::App& app, SourceColumns& columns) {
  app.add_option_function<std::string>(
         "--delimiter", [&columns](const std::string& text) { columns.delimiter = text[0]; },
         "the character separating CSV fields (default ,)")
      ->check(delimiter_character())
      ->type_name("C")
      ->group("Source");
}

void add_from_cmd_options(CLI::App& app, SourceOptions& o) {
  app.add_option("--from-cmd", o.from_cmd,
                 "run CMD with sh -c and read its standard output as the source (instead of "
                 "--file; --format defaults to csv)")
      ->type_name("CMD")
      ->group("Source");
  app.add_option("--from-cmd-timeout", o.from_cmd_timeout_ms,
                 "stop --from-cmd and write nothing when it runs longer, in ms (default 600000)")
      ->type_name("MS")
      ->check(integer_range(1, 86400000))
      ->group("Source");
}

void name_option_values(CLI::App& app) {
  static const std::map<std::string, std::string> kValueNames = {
      {"--url", "URL"},
      {"--user", "NAME"},
      {"--password-file", "FILE"},
      {"--cacert", "FILE"},
      {"--cacertdir", "DIR"},
      {"--cert", "FILE"},
      {"--key", "FILE"},
      {"--sni", "NAME"},
      {"--sentinel-user", "NAME"},
      {"--sentinel-password-file", "FILE"},
      {"--connect-timeout", "MS"},
      {"--timeout", "MS"},
      {"--prefix", "PREFIX"},
      {"--file", "FILE"},
      {"--format", "FORMAT"},
      {"--sku-column", "NAME"},
      {"--stock-column", "NAME"},
      {"--total-column", "NAME"},
      {"--issued-column", "NAME"},
      {"--qty-column", "NAME"},
      {"--id-column", "NAME"},
      {"--request-id-column", "NAME"},
      {"--report", "FILE"},
      {"--output", "FILE"},
      {"--init-value", "N"},
      {"--init-from", "FILE"},
      {"--init-cmd", "CMD"},
      {"--ttl", "SECONDS"},
      {"--lock-ttl", "MS"},
      {"--lock-wait", "MS"},
      {"--metrics-file", "FILE"},
      {"--request-id", "ID"},
      {"--request-ttl", "SECONDS"},
      {"--retry-timeout", "MS"},
      {"--wait-replicas", "N"},
      {"--wait-timeout", "MS"},
      {"--connections", "N"},
      {"--items", "N"},
      {"--stock", "N"},
      {"--requests", "N"},
      {"--duration", "SECONDS"},
      {"--bench-prefix", "PREFIX"},
      {"--run-id", "ID"},
      {"--log-max", "N"},
      {"--actor", "NAME"},
      {"--reason", "TEXT"}};
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_positional()) opt->type_name("");
    for (const std::string& name : opt->get_lnames()) {
      auto it = kValueNames.find("--" + name);
      if (it != kValueNames.end()) opt->type_name(it->second);
    }
  }
  for (CLI::App* sub : app.get_subcommands({})) name_option_values(*sub);
}

}  // namespace stockctl
