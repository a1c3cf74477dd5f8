#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stockctl {

/// One exported item: what `export` writes per line.
struct ExportRow {
  std::string sku;
  std::int64_t stock = 0;  ///< -1 = unlimited
  std::int64_t held = 0;
  std::optional<std::int64_t> ttl_s;  ///< null: no expiry
  int buckets = 0;  ///< a split item's buckets (JSON formats only: CSV and TSV keep four columns)
};

enum class ExportFormat { ndjson, csv, tsv, json };

/// "ndjson", "csv", "tsv", "json" (and "jsonl" for ndjson); nullopt for anything else.
std::optional<ExportFormat> parse_export_format(std::string_view name);

/// Appends the text that opens the output (CSV/TSV header, JSON's '[').
void append_export_head(std::string& out, ExportFormat format);
/// Appends one item; `first` tells JSON whether a comma goes before it. Every format reads back
/// with init --file and rebuild --file: CSV quotes fields as RFC 4180 says, TSV escapes as
/// mysql --batch does (\\t \\n \\r \\\\ \\0, NULL for a null ttl), JSON keeps invalid UTF-8 as
/// U+FFFD.
void append_export_row(std::string& out, ExportFormat format, const ExportRow& row, bool first);
/// Appends the text that closes the output (JSON's ']').
void append_export_tail(std::string& out, ExportFormat format, bool empty);

}  // namespace stockctl
