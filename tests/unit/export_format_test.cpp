#include "output/export_format.h"

#include <doctest/doctest.h>

#include <vector>

using namespace stockctl;

namespace {
std::string all(ExportFormat f, const std::vector<ExportRow>& rows) {
  std::string out;
  append_export_head(out, f);
  for (std::size_t i = 0; i < rows.size(); ++i) append_export_row(out, f, rows[i], i == 0);
  append_export_tail(out, f, rows.empty());
  return out;
}
const ExportRow kPlain{"a", 5, 0, std::nullopt};
const ExportRow kHostile{"x,\"y\"", -1, 2, 30};
}  // namespace

TEST_CASE("NDJSON: one object per item with sku, stock, held, ttl") {
  CHECK(all(ExportFormat::ndjson, {kPlain, kHostile}) ==
        "{\"sku\":\"a\",\"stock\":5,\"held\":0,\"ttl\":null}\n"
        "{\"sku\":\"x,\\\"y\\\"\",\"stock\":-1,\"held\":2,\"ttl\":30}\n");
}

TEST_CASE("A split item's buckets: in the JSON formats only") {
  ExportRow split{"s", 12, 0, std::nullopt, 4};
  CHECK(all(ExportFormat::ndjson, {split}) ==
        "{\"sku\":\"s\",\"stock\":12,\"held\":0,\"ttl\":null,\"buckets\":4}\n");
  CHECK(all(ExportFormat::json, {split}) ==
        "[\n{\"sku\":\"s\",\"stock\":12,\"held\":0,\"ttl\":null,\"buckets\":4}\n]\n");
  // CSV and TSV keep their four columns: a reader that takes them by place reads them as ever.
  CHECK(all(ExportFormat::csv, {split}) == "sku,stock,held,ttl\r\ns,12,0,\r\n");
  CHECK(all(ExportFormat::tsv, {split}) == "sku\tstock\theld\tttl\ns\t12\t0\tNULL\n");
}

TEST_CASE("CSV quotes what RFC 4180 needs quoted and leaves a null ttl empty") {
  CHECK(all(ExportFormat::csv, {kPlain, kHostile}) ==
        "sku,stock,held,ttl\r\na,5,0,\r\n\"x,\"\"y\"\"\",-1,2,30\r\n");
}

TEST_CASE("TSV escapes as mysql --batch does, NULL for a null ttl") {
  CHECK(all(ExportFormat::tsv, {ExportRow{"a\\b", 1, 0, std::nullopt}}) ==
        "sku\tstock\theld\tttl\na\\\\b\t1\t0\tNULL\n");
  CHECK(all(ExportFormat::tsv, {ExportRow{"NULL", 1, 0, 5}}) ==
        "sku\tstock\theld\tttl\nN\\ULL\t1\t0\t5\n");
}

TEST_CASE("JSON is one array, empty or not") {
  CHECK(all(ExportFormat::json, {}) == "[]\n");
  CHECK(all(ExportFormat::json, {kPlain, kPlain}) ==
        "[\n{\"sku\":\"a\",\"stock\":5,\"held\":0,\"ttl\":null},\n"
        "{\"sku\":\"a\",\"stock\":5,\"held\":0,\"ttl\":null}\n]\n");
}
