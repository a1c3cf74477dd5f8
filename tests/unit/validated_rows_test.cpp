#include "bulk/validated_rows.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include "base/errors.h"
#include "sources/rows.h"

using namespace stockctl;

namespace {

// A CSV file in the system's temporary directory, removed when the test ends.
class TempCsv {
 public:
  explicit TempCsv(const std::string& text)
      : path_(std::filesystem::temp_directory_path() /
              ("stockctl-validated-rows-" + std::to_string(::getpid()) + ".csv")) {
    std::ofstream(path_) << text;
  }
  ~TempCsv() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

const SourceColumns kColumns;
const KeyScheme kScheme{"stock:", true};

RowReader<StockRow> stock_reader() {
  return RowReader<StockRow>{
      stock_columns(kColumns),
      [](const std::vector<bool>& present) { return check_stock_header(present, kColumns); },
      [](const Record& record, StockRow& row) {
        return interpret_stock_row(record, kColumns, kScheme, row);
      },
      [](const StockRow& row) -> const std::string& { return row.sku; }};
}

// The rows the second pass hands back, in order: each SKU, marked when it is invalid.
std::vector<std::string> rows_handed_back(Source& source, const RowReader<StockRow>& reader,
                                          const Validation& v) {
  std::vector<std::string> seen;
  for_each_window(
      source, reader, v,
      [](const StockRow& row, const std::string& problem) {
        return row.sku + (problem.empty() ? "" : " invalid");
      },
      [&](std::vector<std::string> window) {
        seen.insert(seen.end(), window.begin(), window.end());
      });
  return seen;
}

}  // namespace

TEST_CASE("every row of a SKU named more than once is a duplicate, found before any write") {
  TempCsv csv("sku,stock\na,1\nb,2\na,3\nc,4\nb,5\na,6\n");
  Source source(csv.path(), std::nullopt);
  Validation v = validate_source(source, stock_reader(), /*skip_invalid=*/true);
  CHECK(v.rows == 6);
  CHECK(v.invalid == 5);  // every row of a and of b: the source says two things of each
  std::map<std::size_t, std::string> by_line;
  for (const auto& [place, row] : v.duplicate_rows) by_line[row.line] = row.why;
  CHECK(by_line == std::map<std::size_t, std::string>{
                       {2, "duplicate SKU (again on line 4; every row of it is left out)"},
                       {3, "duplicate SKU (again on line 6; every row of it is left out)"},
                       {4, "duplicate SKU (first on line 2)"},
                       {6, "duplicate SKU (first on line 3)"},
                       {7, "duplicate SKU (first on line 2)"}});
}

TEST_CASE("rows on one line are told apart: a JSON array on one line repeats one SKU") {
  TempCsv json(R"([{"sku":"R1","stock":5},{"sku":"R2","stock":6},{"sku":"R1","stock":5}])");
  Source source(json.path(), Format::json);
  RowReader<StockRow> reader = stock_reader();
  Validation v = validate_source(source, reader, /*skip_invalid=*/true);
  CHECK(v.rows == 3);
  CHECK(v.invalid == 2);
  CHECK(rows_handed_back(source, reader, v) ==
        std::vector<std::string>{"R1 invalid", "R2", "R1 invalid"});
}

TEST_CASE("duplicates are invalid input unless invalid rows are skipped") {
  TempCsv csv("sku,stock\na,1\na,2\n");
  Source source(csv.path(), std::nullopt);
  CHECK_THROWS_AS(validate_source(source, stock_reader(), /*skip_invalid=*/false), InputError);
}

TEST_CASE("the second pass hands back each row once, duplicates with their reason") {
  TempCsv csv("sku,stock\na,1\nb,2\na,3\n");
  Source source(csv.path(), std::nullopt);
  RowReader<StockRow> reader = stock_reader();
  Validation v = validate_source(source, reader, /*skip_invalid=*/true);
  CHECK(rows_handed_back(source, reader, v) ==
        std::vector<std::string>{"a invalid", "b", "a invalid"});
}

namespace {

// The sizes of the windows the second pass hands over for a file of `rows` valid rows.
std::vector<std::size_t> window_sizes(std::size_t rows, std::size_t window_rows_each) {
  std::string text = "sku,stock\n";
  for (std::size_t i = 0; i < rows; ++i) text += "s" + std::to_string(i) + ",1\n";
  TempCsv csv(text);
  Source source(csv.path(), std::nullopt);
  RowReader<StockRow> reader = stock_reader();
  Validation v = validate_source(source, reader, /*skip_invalid=*/false);
  std::vector<std::size_t> sizes;
  for_each_window(
      source, reader, v, [](const StockRow& row, const std::string&) { return row.line; },
      [&](std::vector<std::size_t> window) { sizes.push_back(window.size()); }, window_rows_each);
  return sizes;
}

}  // namespace

TEST_CASE("the second pass hands rows over in windows of kWindow, the last one partial") {
  CHECK(window_sizes(kWindow + 2, kWindow) == std::vector<std::size_t>{kWindow, 2});
}

TEST_CASE("a run whose writes wait for replicas takes windows four times as large") {
  CHECK(window_rows(false) == kWindow);
  CHECK(window_rows(true) == 4 * kWindow);
  CHECK(window_sizes(kWaitingWindow + 1, window_rows(true)) ==
        std::vector<std::size_t>{kWaitingWindow, 1});
}

TEST_CASE("a row keeps whether its SKU was valid when another column is not") {
  TempCsv csv("sku,stock\na,x\n,1\n");
  Source source(csv.path(), std::nullopt);
  RowReader<StockRow> reader = stock_reader();
  Validation v = validate_source(source, reader, /*skip_invalid=*/true);
  std::vector<bool> sku_valid;
  for_each_window(
      source, reader, v, [](const StockRow& row, const std::string&) { return row.sku_valid; },
      [&](std::vector<bool> window) { sku_valid = window; });
  CHECK(sku_valid == std::vector<bool>{true, false});
}
