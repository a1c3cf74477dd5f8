#pragma once

#include <CLI/CLI.hpp>

#include "options/options.h"

namespace stockctl {

/// A check for an integer option value from `min` to `max`, whose message names the value and
/// the range ("--ttl: 'abc' is not an integer from 0 to 1099511627776").
CLI::Validator integer_range(long long min, long long max);

/// The same for a decimal number of seconds (bench --duration).
CLI::Validator number_range(double min, double max);

/// A check for a key prefix (--prefix, bench --bench-prefix): not in stockctl's own namespace,
/// "stockctl:", where its locks, marks, buckets and hold records live. Refused once, at the
/// start, so that a scan (export, doctor --scan) never runs and finds nothing there.
CLI::Validator key_prefix();

/// A check for a file read only later, perhaps much later (--init-from is opened only when a
/// key is missing): a name that cannot be read now is a usage error at the start, not a
/// surprise at the next cache loss. "-" (standard input) passes.
CLI::Validator readable_file();

/// Refuses an empty value with `message` (an unset variable, `--actor "$JOB"`, names nothing).
CLI::Validator refuse_empty(std::string message);

/// Refuses an empty file name: `--report "$REPORT"` with REPORT unset names no file, and taken
/// as "not given" (or, for --output, as standard output) it would go unnoticed.
CLI::Validator file_name();

/// Declares the common options on the top-level `app`. Subcommands let options they do not know
/// fall through to it, so the common options may stand before or after the subcommand.
/// They are declared once, here: declaring options is a large part of a short run's start-up.
void add_common_options(CLI::App& app, CommonOptions& options);

/// Tells a subcommand's --help that the common options apply too.
void add_common_footer(CLI::App& sub);

/// Declares --file, --format, the column renames and --skip-invalid; `stock` picks the stock
/// columns (init, rebuild) rather than the batch ones (deduct, add); `report` adds --report.
void add_source_options(CLI::App& app, SourceOptions& options, bool stock, bool report);

/// Declares --delimiter, CSV's field separator, stored in `columns` (one character, checked).
void add_delimiter_option(CLI::App& app, SourceColumns& columns);

/// Declares --from-cmd and --from-cmd-timeout (init, rebuild; after add_source_options).
void add_from_cmd_options(CLI::App& app, SourceOptions& options);

/// Names each option's value in --help (URL, FILE, MS, ...) for the app and every subcommand.
void name_option_values(CLI::App& app);

}  // namespace stockctl
