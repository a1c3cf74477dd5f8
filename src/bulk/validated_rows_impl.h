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

// Second look at rows whose hash repeats: compares the SKUs exactly and returns every row of an
// item the source names more than once, by its place among the source's records (never by line:
// a JSON array on one line holds many rows), with why it is left out. Every occurrence is, the
// first too: a source that says two things of one item says nothing sure of it, and writing the
// first would be a guess.
// `confirmed` gets the sku_hash of each SKU named more than once.
template <class Row>
std::unordered_map<std::size_t, DuplicateRow> confirm_duplicates(
    Source& source, const RowReader<Row>& reader, const std::vector<std::uint64_t>& repeated,
    std::vector<std::uint64_t>& confirmed) {
  // Per SKU: the records (place, line) that name it.
  std::unordered_map<std::string, std::vector<std::pair<std::size_t, std::size_t>>> seen;
  std::size_t place = 0;
  RecordHandler handler{reader.header, [&](Record& record) {
                          const std::size_t at = place++;
                          Row row;
                          if (!reader.interpret(record, row).empty()) return true;
                          const std::string& sku = reader.sku(row);
                          if (std::binary_search(repeated.begin(), repeated.end(), sku_hash(sku))) {
                            seen[sku].emplace_back(at, record.line);
                          }
                          return true;
                        }};
  source.read(reader.wanted, handler);
  std::unordered_map<std::size_t, DuplicateRow> duplicates;
  for (const auto& [sku, rows] : seen) {
    if (rows.size() < 2) continue;  // another SKU with the same hash
    confirmed.push_back(sku_hash(sku));
    const std::size_t first = rows.front().second;
    duplicates.emplace(
        rows.front().first,
        DuplicateRow{first, fmt::format("duplicate SKU (again on line {}; every row of it is "
                                        "left out)",
                                        rows[1].second)});
    for (std::size_t i = 1; i < rows.size(); ++i) {
      duplicates.emplace(
          rows[i].first,
          DuplicateRow{rows[i].second, fmt::format("duplicate SKU (first on line {})", first)});
    }
  }
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
          throw BrokenSource(fmt::format("{}:{}: {}", source.name(), record.line, record.error),
                             v.rows, v.invalid);
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
    std::vector<std::uint64_t> confirmed;
    v.duplicate_rows = confirm_duplicates(source, reader, repeated, confirmed);
    // No row of a repeated SKU is written: for rebuild --extra it is an item the source lacks.
    std::sort(confirmed.begin(), confirmed.end());
    v.sku_hashes.erase(std::remove_if(v.sku_hashes.begin(), v.sku_hashes.end(),
                                      [&confirmed](std::uint64_t hash) {
                                        return std::binary_search(confirmed.begin(),
                                                                  confirmed.end(), hash);
                                      }),
                       v.sku_hashes.end());
    std::vector<std::pair<std::size_t, std::size_t>> sorted;  // (line, place)
    for (const auto& [place, row] : v.duplicate_rows) sorted.emplace_back(row.line, place);
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [line, place] : sorted) {
      ++v.invalid;
      report_invalid(source, line, v.duplicate_rows.at(place).why, printed);
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
  std::size_t place = 0;  // the record's place in the source, as confirm_duplicates counts it
  RecordHandler handler{reader.header, [&](Record& record) {
                          Row row;
                          std::string problem = reader.interpret(record, row);
                          if (problem.empty()) {
                            auto duplicate = validation.duplicate_rows.find(place);
                            if (duplicate != validation.duplicate_rows.end()) {
                              problem = duplicate->second.why;
                            }
                          }
                          ++place;
                          row.line = record.line;
                          window.push_back(make_item(row, problem));
                          if (window.size() >= rows) hand_over();
                          return true;
                        }};
  source.read(reader.wanted, handler);
  if (!window.empty()) hand_over();
}

}  // namespace stockctl
