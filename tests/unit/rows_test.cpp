#include "sources/rows.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "source_helpers.h"

using namespace stockctl;
using stockctl::test::read_string;

namespace {

const KeyScheme kScheme;
const SourceColumns kNames;

std::string stock_row(const std::string& csv, StockRow& row, bool with_buckets = true) {
  auto r = read_string(csv, Format::csv, stock_columns(kNames, with_buckets));
  REQUIRE(r.records.size() == 1);
  return interpret_stock_row(r.records[0], kNames, kScheme, row);
}

}  // namespace

TEST_CASE("stock rows take the stock column") {
  StockRow row;
  CHECK(stock_row("sku,stock\n42,100\n", row).empty());
  CHECK(row.sku == "42");
  CHECK(row.value == 100);
  CHECK(row.line == 2);
  CHECK_FALSE(row.counts_held);
}

TEST_CASE("stock rows compute total - issued") {
  StockRow row;
  CHECK(stock_row("sku,total,issued\n42,100,30\n", row).empty());
  CHECK(row.value == 70);
  CHECK(row.counts_held);  // held units are not issued: the write leaves them out
}

TEST_CASE("issued greater than total is invalid") {
  StockRow row;
  CHECK(stock_row("sku,total,issued\n42,10,11\n", row) ==
        "'issued' (11) is greater than 'total' (10)");
}

TEST_CASE("NULL in a number column is invalid") {
  StockRow row;
  auto r = read_string("sku\ttotal\tissued\n42\t10\tNULL\n", Format::tsv, stock_columns(kNames));
  CHECK(interpret_stock_row(r.records[0], kNames, kScheme, row) == "column 'issued' is NULL");
}

TEST_CASE("invalid SKUs and numbers name their column") {
  StockRow row;
  CHECK(stock_row("sku,stock\na{b,1\n", row).rfind("column 'sku': ", 0) == 0);
  CHECK(stock_row("sku,stock\n42,-5\n", row).rfind("column 'stock': '-5' is not", 0) == 0);
}

TEST_CASE("headers must have the columns the command needs") {
  CHECK(check_stock_header({true, true, false, false}, kNames).empty());
  CHECK(check_stock_header({true, false, true, true}, kNames).empty());
  CHECK(check_stock_header({true, false, true, false}, kNames) ==
        "header has neither a 'stock' column nor 'total' and 'issued' columns");
  CHECK(check_stock_header({false, true, false, false}, kNames) == "header has no 'sku' column");
  CHECK(check_op_header({true, false, false}, kNames) == "header has no 'qty' column");
  CHECK(check_op_header({true, true, false}, kNames).empty());  // request ids are optional
  SourceColumns named = kNames;
  named.request_id = "order_ref";
  named.request_id_required = true;  // --request-id-column
  CHECK(check_op_header({true, true, false}, named) == "header has no 'order_ref' column");
  CHECK(check_op_header({true, true, true}, named).empty());
}

TEST_CASE("renamed columns are used") {
  SourceColumns names;
  names.sku = "item_id";
  names.stock = "qty_left";
  auto r = read_string("item_id,qty_left\nA,3\n", Format::csv, stock_columns(names));
  StockRow row;
  CHECK(interpret_stock_row(r.records[0], names, kScheme, row).empty());
  CHECK(row.sku == "A");
  CHECK(row.value == 3);
}

TEST_CASE("batch rows need a valid qty") {
  auto r = read_string("sku,qty,request_id\nA,0,\nB,2,r1\n", Format::csv, op_columns(kNames));
  OpRow row;
  CHECK(interpret_op_row(r.records[0], kNames, kScheme, row).rfind("column 'qty': '0'", 0) == 0);
  CHECK(interpret_op_row(r.records[1], kNames, kScheme, row).empty());
  CHECK(row.qty == 2);
  CHECK(row.request_id == "r1");
}

TEST_CASE("batch rows: an empty or NULL request id is invalid, an absent column means no id") {
  auto r = read_string("sku,qty,request_id\nA,1,\nB,1,\" \"\n", Format::csv, op_columns(kNames));
  OpRow row;
  CHECK(interpret_op_row(r.records[0], kNames, kScheme, row) == "column 'request_id' is empty");
  // " " would be another id than "": white space around an id is refused (--trim removes it).
  CHECK(interpret_op_row(r.records[1], kNames, kScheme, row) ==
        "column 'request_id': request id ' ' has white space at its start or end, which would "
        "make it another id (--trim removes it)");
  auto tsv = read_string("sku\tqty\trequest_id\nA\t1\tNULL\n", Format::tsv, op_columns(kNames));
  CHECK(interpret_op_row(tsv.records[0], kNames, kScheme, row) == "column 'request_id' is NULL");
  auto none = read_string("sku,qty\nA,1\n", Format::csv, op_columns(kNames));
  CHECK(interpret_op_row(none.records[0], kNames, kScheme, row).empty());
  CHECK(row.request_id.empty());
}

TEST_CASE("a header with both stock and total/issued is ambiguous unless an option chooses") {
  CHECK(check_stock_header({true, true, true, true}, kNames) ==
        "header has both a 'stock' column and 'total' and 'issued': ambiguous; choose with "
        "--stock-column stock or --total-column total --issued-column issued");
  CHECK(check_stock_header({true, true, true, false}, kNames)
            .find("both a 'stock' column and "
                  "'total': ambiguous") != std::string::npos);
  SourceColumns stock = kNames;
  stock.stock_named = true;  // --stock-column
  CHECK(check_stock_header({true, true, true, true}, stock).empty());
  CHECK(check_stock_header({true, false, true, true}, stock) == "header has no 'stock' column");
  SourceColumns total = kNames;
  total.total_issued_named = true;  // --total-column or --issued-column
  CHECK(check_stock_header({true, true, true, true}, total).empty());
  CHECK(check_stock_header({true, true, true, false}, total) == "header has no 'issued' column");
  SourceColumns both = stock;
  both.total_issued_named = true;  // both kinds named: no choice
  CHECK_FALSE(check_stock_header({true, true, true, true}, both).empty());
}

TEST_CASE("the chosen stock columns give the row's value") {
  const std::string csv = "sku,stock,total,issued\n42,5,10,3\n";
  auto r = read_string(csv, Format::csv, stock_columns(kNames));
  StockRow row;
  CHECK(interpret_stock_row(r.records[0], kNames, kScheme, row).rfind("row has both", 0) == 0);
  SourceColumns stock = kNames;
  stock.stock_named = true;
  CHECK(interpret_stock_row(r.records[0], stock, kScheme, row).empty());
  CHECK((row.value == 5 && !row.counts_held));
  SourceColumns total = kNames;
  total.total_issued_named = true;
  CHECK(interpret_stock_row(r.records[0], total, kScheme, row).empty());
  CHECK((row.value == 7 && row.counts_held));
}

TEST_CASE("a SKU with white space around it is invalid unless --trim") {
  StockRow row;
  CHECK(stock_row("sku,stock\nB-6 ,8\n", row) ==
        "column 'sku': item id 'B-6 ' has white space at its start or end (--trim removes it)");
  CHECK_FALSE(row.sku_valid);
  CHECK(stock_row("sku,stock\nB-5, 7\n", row).empty());  // numbers may carry spaces
  CHECK(row.value == 7);
  KeyScheme trimming;
  trimming.trim_skus = true;
  auto r = read_string("sku,stock\nCH-1    ,8\n", Format::csv, stock_columns(kNames));
  CHECK(interpret_stock_row(r.records[0], kNames, trimming, row).empty());
  CHECK(row.sku == "CH-1");
}

TEST_CASE("the buckets column says how many buckets an exported item was split over") {
  StockRow row;
  CHECK(stock_row("sku,stock,buckets\n42,100,4\n", row).empty());
  CHECK(row.buckets == 4);
  CHECK(stock_row("sku,stock,buckets\n42,100,\n", row).empty());
  CHECK(row.buckets == 0);  // not split: the row says nothing
  CHECK(stock_row("sku,stock\n42,100\n", row).empty());
  CHECK(row.buckets == 0);
  CHECK(stock_row("sku,stock,buckets\n42,100,1\n", row).empty());
  CHECK(row.buckets == 1);
  // A source of initial stock (--init-from) does not read it at all.
  CHECK(stock_row("sku,stock,buckets\n42,100,0\n", row, false).empty());
  CHECK(row.buckets == 0);
  for (const char* bad : {"0", "65", "-2", "four", "2.5"}) {
    CAPTURE(bad);
    CHECK(stock_row(std::string("sku,stock,buckets\n42,100,") + bad + "\n", row) ==
          fmt::format("column 'buckets': '{}' is not a whole number from 1 to 64", bad));
  }
}
