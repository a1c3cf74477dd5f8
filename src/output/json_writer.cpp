#include "output/json_writer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli/errors.h"

namespace stockctl {

nlohmann::ordered_json item_json(const ItemResult& item) {
  nlohmann::ordered_json j;
  j["op"] = item.op;
  j["sku"] = item.sku;
  j["key"] = item.key.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(item.key);
  if (item.has_qty) j["qty"] = item.qty ? nlohmann::ordered_json(*item.qty) : nullptr;
  j["status"] = status_name(item.status);
  j["stock"] = item.stock ? nlohmann::ordered_json(*item.stock) : nullptr;
  if (item.expected) j["expected"] = *item.expected;
  if (item.replayed) j["replayed"] = true;
  if (!item.error.empty()) j["error"] = item.error;
  return j;
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

void JsonWriter::write(const nlohmann::ordered_json& value) {
  // Invalid UTF-8 in a SKU is replaced rather than aborting the whole run.
  out_ << value.dump(pretty_ ? 2 : -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
       << '\n';
}

ReportFile::ReportFile(const std::string& path)
    : path_(path), temp_(fmt::format("{}.tmp.{}", path, getpid())) {
  file_ = std::fopen(temp_.c_str(), "w");
  if (!file_) {
    throw IoError(fmt::format("cannot write report {}: {}", temp_, std::strerror(errno)));
  }
}

ReportFile::~ReportFile() {
  if (file_) {
    std::fclose(file_);
    std::remove(temp_.c_str());
  }
}

void ReportFile::write(const ItemResult& item) {
  std::string line =
      item_json(item).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), file_);
}

void ReportFile::commit() {
  bool ok = std::fflush(file_) == 0 && !std::ferror(file_) && fsync(fileno(file_)) == 0;
  int err = errno;
  ok = (std::fclose(file_) == 0) && ok;
  file_ = nullptr;
  if (!ok || std::rename(temp_.c_str(), path_.c_str()) != 0) {
    if (ok) err = errno;
    std::remove(temp_.c_str());
    throw IoError(fmt::format("cannot write report {}: {}", path_, std::strerror(err)));
  }
}

}  // namespace stockctl
