#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "core/stock_index.h"
#include "output/progress.h"

namespace stockctl {
namespace batch_detail {

inline constexpr std::size_t kMaxPrinted = 20;

inline void report_invalid(const Source& source, std::size_t line, const std::string& problem,
                           std::size_t& printed) {
  if (printed++ < kMaxPrinted) print_error(fmt::format("{}:{}: {}", source.name(), line, problem));
}

// Second look at rows whose hash repeats: compares the SKUs exactly and returns the lines of
// real duplicates (every occurrence after the first), with the first line of each.
template <class Row>
std::unordered_map<std::size_t, std::size_t> confirm_duplicates(
    Source& source, const RowReader<Row>& reader, const std::vector<std::uint64_t>& repeated) {
  std::unordered_map<std::string, std::size_t> first_line;
  std::unordered_map<std::size_t, std::size_t> duplicates;
  RecordHandler handler{
      reader.header, [&](Record& record) {
        Row row;
        if (!reader.interpret(record, row).empty()) return true;
        const std::string& sku = reader.sku(row);
        if (!std::binary_search(repeated.begin(), repeated.end(), sku_hash(sku))) {
          return true;
        }
        auto [it, fresh] = first_line.emplace(sku, record.line);
        if (!fresh) duplicates.emplace(record.line, it->second);
        return true;
      }};
  source.read(reader.wanted, handler);
  return duplicates;
}

}  // namespace batch_detail

template <class Row>
Validation validate_source(Source& source, const RowReader<Row>& reader, bool skip_invalid,
                           bool keep_hashes) {
  Validation v = check_source(source, reader, skip_invalid, keep_hashes);
  if (!v.refusal.empty()) throw InputError(v.refusal);
  return v;
}

template <class Row>
Validation check_source(Source& source, const RowReader<Row>& reader, bool skip_invalid,
                        bool keep_hashes) {
  using namespace batch_detail;
  Validation v;
  std::size_t printed = 0;
  std::vector<std::uint64_t> hashes;
  Progress progress(fmt::format("validating {}", source.name()), 0);
  const auto started = std::chrono::steady_clock::now();
  RecordHandler handler{
      reader.header, [&](Record& record) {
        progress.advance(1);
        if (interrupted()) {
          throw InterruptedError(interrupt_signal(),
                                 fmt::format("{} while reading {}; nothing was written",
                                             interrupt_reason(), source.name()));
        }
        if (record.fatal) {
          throw InputError(fmt::format("{}:{}: {}", source.name(), record.line, record.error));
        }
        ++v.rows;
        Row row;
        std::string problem = reader.interpret(record, row);
        if (!problem.empty()) {
          ++v.invalid;
          report_invalid(source, record.line, problem, printed);
        } else if (reader.sku) {
          hashes.push_back(sku_hash(reader.sku(row)));
        }
        return true;
      }};
  source.read(reader.wanted, handler);
  std::sort(hashes.begin(), hashes.end());
  std::vector<std::uint64_t> repeated;
  for (std::size_t i = 1; i < hashes.size(); ++i) {
    if (hashes[i] == hashes[i - 1] && (repeated.empty() || repeated.back() != hashes[i])) {
      repeated.push_back(hashes[i]);
    }
  }
  if (keep_hashes) {
    hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
    v.sku_hashes.swap(hashes);
  }
  std::vector<std::uint64_t>().swap(hashes);
  if (!repeated.empty()) {
    auto duplicates = confirm_duplicates(source, reader, repeated);
    std::vector<std::pair<std::size_t, std::size_t>> sorted(duplicates.begin(), duplicates.end());
    std::sort(sorted.begin(), sorted.end());
    for (auto [line, first] : sorted) {
      v.duplicate_lines.insert(line);
      ++v.invalid;
      report_invalid(source, line, fmt::format("duplicate SKU (first on line {})", first), printed);
    }
  }
  print_info(fmt::format("{}: {} rows read, {} invalid, in {} ms", source.name(), v.rows, v.invalid,
                         std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - started)
                             .count()));
  if (printed > kMaxPrinted) {
    print_error(fmt::format("{}: {} more invalid {} not shown", source.name(),
                            printed - kMaxPrinted, printed - kMaxPrinted == 1 ? "row" : "rows"));
  }
  if (v.invalid > 0 && !skip_invalid) {
    v.refusal = fmt::format(
        "{}: {} of {} rows are invalid; nothing was written (use --skip-invalid to write the "
        "valid rows)",
        source.name(), v.invalid, v.rows);
  }
  return v;
}

template <class Row, class MakeItem, class EachWindow>
void for_each_window(Source& source, const RowReader<Row>& reader, const Validation& validation,
                     MakeItem&& make_item, EachWindow&& each_window, std::size_t rows) {
  using Item = decltype(make_item(std::declval<const Row&>(), std::declval<const std::string&>()));
  std::vector<Item> window;
  window.reserve(rows);
  auto hand_over = [&] {
    each_window(std::move(window));
    window = {};
    window.reserve(rows);  // growing would move every item already in the window
  };
  RecordHandler handler{reader.header, [&](Record& record) {
                          Row row;
                          std::string problem = reader.interpret(record, row);
                          if (problem.empty() && validation.duplicate_lines.count(record.line)) {
                            problem = "duplicate SKU";
                          }
                          row.line = record.line;
                          window.push_back(make_item(row, problem));
                          if (window.size() >= rows) hand_over();
                          return true;
                        }};
  source.read(reader.wanted, handler);
  if (!window.empty()) hand_over();
}

}  // namespace stockctl
