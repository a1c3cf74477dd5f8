#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "core/outcome.h"
#include "output/atomic_file.h"
#include "output/table.h"

namespace stockctl {

/// Counts of items per status for a summary, plus totals.
struct Summary {
  std::string op;
  std::string source;
  std::size_t rows = 0;
  std::map<Status, std::size_t> counts;
  bool dry_run = false;
  long long elapsed_ms = 0;
  std::string status;  ///< set only when the whole run ended early ("busy", "error")
  std::string error;
};

/// One item as an ordered JSON object: op, sku, key, [qty], status, stock, [held], [ttl,
/// lock_ttl], [expected],
/// [replayed], [error].
nlohmann::ordered_json item_json(const ItemResult& item);

/// Appends `item` as one compact JSON line (with its '\n') to `out`: the same text as
/// item_json(item).dump() with invalid UTF-8 replaced by U+FFFD, written without building a JSON
/// tree, because bulk commands print one line per row.
void append_item_line(std::string& out, const ItemResult& item);

/// Appends `s` as a JSON string, quoted and escaped, invalid UTF-8 replaced by U+FFFD.
void append_json_string(std::string& out, std::string_view s);

/// A summary as an ordered JSON object: op, source, rows, counts, dry_run, elapsed_ms.
nlohmann::ordered_json summary_json(const Summary& summary);

/// How standard output shows what a command prints: JSON lines (the default, on a terminal
/// too), indented JSON (--pretty) or aligned columns for a person (--table).
enum class OutputStyle { json, pretty, table };

/// Writes what a command prints to standard output: JSON values one per line (indented with
/// --pretty), or with --table the same fields as aligned columns (output/table.h), in blocks
/// of rows so that memory holds one block however many items a command prints.
class JsonWriter {
 public:
  JsonWriter(std::ostream& out, OutputStyle style) : out_(out), style_(style) {}
  /// Prints the rows a table still holds; a failed write is left to the stream's state.
  ~JsonWriter();
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  bool table() const { return style_ == OutputStyle::table; }
  /// Writes one row (an item, a finding, a log entry).
  void write(const nlohmann::ordered_json& value);
  /// Writes one item (compact, or indented with --pretty, or a table row).
  void write(const ItemResult& item);
  /// Writes a run's one summary object: as JSON like any value, and with --table as one line
  /// per field, after the rows printed before it.
  void write_summary(const nlohmann::ordered_json& summary);
  /// Flushes the stream; a table's rows wait until their block is full or the run ends.
  void flush() { out_.flush(); }
  /// Prints the rows a table still holds.
  void finish();

 private:
  void check_written();

  std::ostream& out_;
  OutputStyle style_;
  std::string line_;  ///< reused for each item
  TableBlocks table_;
  bool table_printed_ = false;  ///< anything printed in table style, for the blank line between
};

/// The per-item lines of --report FILE, written as AtomicFile writes (a regular file replaced by
/// commit(), so that a reader never sees half a report; a device or FIFO written in place).
class ReportFile {
 public:
  /// Opens the file; throws IoError.
  explicit ReportFile(const std::string& path) : file_(path, "report ") {}
  /// Never throws: a failed write (a full disk) stops the report and is thrown by commit(), so
  /// that the run goes on and its summary says what was written to Redis.
  void write(const ItemResult& item);
  /// Writes the rest and, for a regular file, renames it into place; throws IoError.
  void commit();

 private:
  AtomicFile file_;
  std::string line_;
  std::string error_;  ///< the first failed write, for commit()
};

}  // namespace stockctl
