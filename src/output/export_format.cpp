#include "output/export_format.h"

#include "output/json_writer.h"

namespace stockctl {
namespace {

void append_csv_field(std::string& out, std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += s;
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void append_tsv_field(std::string& out, std::string_view s) {
  // mysql --batch prints SQL NULL as NULL: an item named so gets one escaped letter, which a
  // reader of that format turns back into the letter itself.
  if (s == "NULL") {
    out += "N\\ULL";
    return;
  }
  for (char c : s) {
    switch (c) {
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\0':
        out += "\\0";
        break;
      default:
        out += c;
    }
  }
}

void append_json_row(std::string& out, const ExportRow& row) {
  out += "{\"sku\":";
  append_json_string(out, row.sku);
  out += ",\"stock\":";
  out += std::to_string(row.stock);
  out += ",\"held\":";
  out += std::to_string(row.held);
  out += ",\"ttl\":";
  out += row.ttl_s ? std::to_string(*row.ttl_s) : "null";
  if (row.buckets > 0) {
    out += ",\"buckets\":";
    out += std::to_string(row.buckets);
  }
  out += '}';
}

}  // namespace

std::optional<ExportFormat> parse_export_format(std::string_view name) {
  if (name == "ndjson" || name == "jsonl") return ExportFormat::ndjson;
  if (name == "csv") return ExportFormat::csv;
  if (name == "tsv") return ExportFormat::tsv;
  if (name == "json") return ExportFormat::json;
  return std::nullopt;
}

void append_export_head(std::string& out, ExportFormat format) {
  switch (format) {
    case ExportFormat::csv:
      out += "sku,stock,held,ttl\r\n";
      break;
    case ExportFormat::tsv:
      out += "sku\tstock\theld\tttl\n";
      break;
    case ExportFormat::json:
      out += '[';
      break;
    case ExportFormat::ndjson:
      break;
  }
}

void append_export_row(std::string& out, ExportFormat format, const ExportRow& row, bool first) {
  switch (format) {
    case ExportFormat::ndjson:
      append_json_row(out, row);
      out += '\n';
      return;
    case ExportFormat::json:
      out += first ? "\n" : ",\n";
      append_json_row(out, row);
      return;
    case ExportFormat::csv:
      append_csv_field(out, row.sku);
      out += ',' + std::to_string(row.stock) + ',' + std::to_string(row.held) + ',';
      if (row.ttl_s) out += std::to_string(*row.ttl_s);
      out += "\r\n";
      return;
    case ExportFormat::tsv:
      append_tsv_field(out, row.sku);
      out += '\t' + std::to_string(row.stock) + '\t' + std::to_string(row.held) + '\t';
      out += row.ttl_s ? std::to_string(*row.ttl_s) : "NULL";
      out += '\n';
      return;
  }
}

void append_export_tail(std::string& out, ExportFormat format, bool empty) {
  if (format == ExportFormat::json) out += empty ? "]\n" : "\n]\n";
}

}  // namespace stockctl
