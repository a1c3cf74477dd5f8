#include "output/json_writer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/errors.h"
#include "base/interrupt.h"
#include "base/text.h"
#include "core/quantity.h"

namespace stockctl {

nlohmann::ordered_json item_json(const ItemResult& item) {
  nlohmann::ordered_json j;
  j["op"] = item.op;
  j["sku"] = item.sku;
  j["key"] = item.key.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(item.key);
  if (item.has_qty) j["qty"] = item.qty ? nlohmann::ordered_json(*item.qty) : nullptr;
  j["status"] = status_name(item.status);
  j["stock"] = item.stock ? nlohmann::ordered_json(*item.stock) : nullptr;
  if (item.has_held) j["held"] = item.held ? nlohmann::ordered_json(*item.held) : nullptr;
  if (item.buckets > 0) j["buckets"] = item.buckets;
  if (item.moved) j["moved"] = *item.moved;
  if (item.details) {
    j["ttl"] = item.ttl_s ? nlohmann::ordered_json(*item.ttl_s) : nullptr;
    j["lock_ttl"] = item.lock_ttl_ms ? nlohmann::ordered_json(*item.lock_ttl_ms) : nullptr;
  }
  if (!item.bucket_details.empty()) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const BucketDetail& bucket : item.bucket_details) {
      nlohmann::ordered_json b;
      b["key"] = bucket.key;
      b["stock"] = bucket.stock ? nlohmann::ordered_json(*bucket.stock) : nullptr;
      b["node"] = bucket.node.empty() ? nlohmann::ordered_json(nullptr)
                                      : nlohmann::ordered_json(bucket.node);
      list.push_back(std::move(b));
    }
    j["bucket_details"] = std::move(list);
  }
  if (item.expected) j["expected"] = *item.expected;
  if (item.forced) {
    std::optional<std::int64_t> number;
    if (item.previous) number = parse_stored_value(*item.previous);
    j["previous"] = number          ? nlohmann::ordered_json(*number)
                    : item.previous ? nlohmann::ordered_json(*item.previous)
                                    : nlohmann::ordered_json(nullptr);
  }
  if (item.replayed) j["replayed"] = true;
  if (!item.error.empty()) j["error"] = item.error;
  if (!item.note.empty()) j["note"] = item.note;
  return j;
}

namespace {

void append_string(std::string& out, std::string_view s) {
  static const char* const kHex = "0123456789abcdef";
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    // Most text needs no escape: copy each plain run at once (bulk output writes millions).
    std::size_t plain = i;
    while (plain < s.size()) {
      unsigned char p = static_cast<unsigned char>(s[plain]);
      if (p < 0x20 || p >= 0x80 || p == '"' || p == '\\') break;
      ++plain;
    }
    out.append(s, i, plain - i);
    i = plain;
    if (i == s.size()) break;
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      std::size_t n = utf8_length(s, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD for each byte that starts no valid sequence
        ++i;
      } else {
        out.append(s, i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

void append_number(std::string& out, const std::optional<std::int64_t>& n) {
  if (n) {
    out += std::to_string(*n);
  } else {
    out += "null";
  }
}

// A replaced value as a number when it is a stock value (-1 for unlimited), else as the string
// it was (a corrupt value that --force overwrote), or null when there was none.
void append_previous(std::string& out, const std::optional<std::string>& previous) {
  std::optional<std::int64_t> number;
  if (previous) number = parse_stored_value(*previous);
  if (number) {
    append_number(out, number);
  } else if (previous) {
    append_string(out, *previous);
  } else {
    out += "null";
  }
}

// get --details of a split item: [{"key":..,"stock":..,"node":..},...], as item_json writes it.
void append_bucket_details(std::string& out, const std::vector<BucketDetail>& buckets) {
  out += ",\"bucket_details\":[";
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    if (i > 0) out += ',';
    out += "{\"key\":";
    append_string(out, buckets[i].key);
    out += ",\"stock\":";
    append_number(out, buckets[i].stock);
    out += ",\"node\":";
    if (buckets[i].node.empty()) {
      out += "null";
    } else {
      append_string(out, buckets[i].node);
    }
    out += '}';
  }
  out += ']';
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) { append_string(out, s); }

void append_item_line(std::string& out, const ItemResult& item) {
  out += "{\"op\":";
  append_string(out, item.op);
  out += ",\"sku\":";
  append_string(out, item.sku);
  out += ",\"key\":";
  if (item.key.empty()) {
    out += "null";
  } else {
    append_string(out, item.key);
  }
  if (item.has_qty) {
    out += ",\"qty\":";
    append_number(out, item.qty);
  }
  out += ",\"status\":";
  append_string(out, status_name(item.status));
  out += ",\"stock\":";
  append_number(out, item.stock);
  if (item.has_held) {
    out += ",\"held\":";
    append_number(out, item.held);
  }
  if (item.buckets > 0) {
    out += ",\"buckets\":";
    out += std::to_string(item.buckets);
  }
  if (item.moved) {
    out += ",\"moved\":";
    append_number(out, item.moved);
  }
  if (item.details) {
    out += ",\"ttl\":";
    append_number(out, item.ttl_s);
    out += ",\"lock_ttl\":";
    append_number(out, item.lock_ttl_ms);
  }
  if (!item.bucket_details.empty()) append_bucket_details(out, item.bucket_details);
  if (item.expected) {
    out += ",\"expected\":";
    append_number(out, item.expected);
  }
  if (item.forced) {
    out += ",\"previous\":";
    append_previous(out, item.previous);
  }
  if (item.replayed) out += ",\"replayed\":true";
  if (!item.error.empty()) {
    out += ",\"error\":";
    append_string(out, item.error);
  }
  if (!item.note.empty()) {
    out += ",\"note\":";
    append_string(out, item.note);
  }
  out += "}\n";
}

nlohmann::ordered_json summary_json(const Summary& s) {
  nlohmann::ordered_json j;
  j["op"] = s.op;
  j["source"] = s.source;
  j["rows"] = s.rows;
  nlohmann::ordered_json counts = nlohmann::ordered_json::object();
  for (Status st : kAllStatuses) {
    auto it = s.counts.find(st);
    counts[std::string(status_name(st))] = it == s.counts.end() ? 0 : it->second;
  }
  j["counts"] = counts;
  j["dry_run"] = s.dry_run;
  j["elapsed_ms"] = s.elapsed_ms;
  if (!s.status.empty()) j["status"] = s.status;
  if (!s.error.empty()) j["error"] = s.error;
  return j;
}

JsonWriter::~JsonWriter() {
  try {
    finish();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
  }
}

void JsonWriter::write(const ItemResult& item) {
  if (style_ == OutputStyle::pretty || table()) return write(item_json(item));
  line_.clear();
  append_item_line(line_, item);
  out_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
  check_written();
}

void JsonWriter::check_written() {
  // A reader that went away (EPIPE), a full disk: the run stops as an interrupted one does.
  if (out_.fail()) stop_for_lost_output(errno);
}

void JsonWriter::write(const nlohmann::ordered_json& value) {
  if (table()) {
    for (TableRow& row : table_rows(value)) {
      const std::string block = table_.add(std::move(row));
      out_ << block;
      table_printed_ = table_printed_ || !block.empty();
    }
    check_written();
    return;
  }
  // Invalid UTF-8 in a SKU is replaced rather than aborting the whole run.
  out_ << value.dump(style_ == OutputStyle::pretty ? 2 : -1, ' ', false,
                     nlohmann::ordered_json::error_handler_t::replace)
       << '\n';
  check_written();
}

void JsonWriter::write_summary(const nlohmann::ordered_json& summary) {
  if (!table()) return write(summary);
  finish();
  if (table_printed_) out_ << '\n';
  out_ << render_fields(table_row(summary));
  table_printed_ = true;
  check_written();
}

void JsonWriter::finish() {
  if (!table()) return;
  const std::string block = table_.flush();
  if (block.empty()) return;
  out_ << block;
  table_printed_ = true;
  check_written();
}

void ReportFile::write(const ItemResult& item) {
  if (!error_.empty()) return;
  line_.clear();
  append_item_line(line_, item);
  try {
    file_.write(line_);
  } catch (const IoError& e) {
    error_ = e.what();  // the temporary file is already gone
  }
}

void ReportFile::commit() {
  if (!error_.empty()) throw IoError(error_);
  file_.commit();
}

}  // namespace stockctl
