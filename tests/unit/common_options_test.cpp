#include "cli/common_options.h"

#include <doctest/doctest.h>

#include <string>

#include "sources/open_source.h"

using namespace stockctl;

TEST_CASE("integer_range names the value and the range") {
  CLI::Validator check = integer_range(1, 3600000);
  std::string ok = "5000", zero = "0", text = "abc", sign = "+5";
  CHECK(check(ok).empty());
  CHECK(check(zero) == "'0' is not an integer from 1 to 3600000");
  CHECK(check(text) == "'abc' is not an integer from 1 to 3600000");
  CHECK(check(sign) == "'+5' is not an integer from 1 to 3600000");
}

TEST_CASE("number_range accepts decimals within the range") {
  CLI::Validator check = number_range(0.0, 86400.0);
  std::string half = "0.5", text = "soon", big = "90000";
  CHECK(check(half).empty());
  CHECK(check(text) == "'soon' is not a number from 0 to 86400");
  CHECK_FALSE(check(big).empty());
}

TEST_CASE("every format name --help lists is one the source parser accepts") {
  for (const char* name : kFormatNames) {
    CAPTURE(name);
    CHECK(parse_format(name).has_value());
  }
}

TEST_CASE("a source's format is told by its extension in any case") {
  CHECK(format_from_extension("stock.csv") == Format::csv);
  CHECK(format_from_extension("STOCK.CSV") == Format::csv);
  CHECK(format_from_extension("dir.csv/stock.Tsv") == Format::tsv);
  CHECK(format_from_extension("export.JSON") == Format::json);
  CHECK(format_from_extension("export.NDJson") == Format::ndjson);
  CHECK(format_from_extension("export.JSONL") == Format::ndjson);
  CHECK_FALSE(format_from_extension("stock.csv.gz").has_value());
  CHECK_FALSE(format_from_extension("csv").has_value());
}

TEST_CASE("--delimiter takes one character that can separate CSV fields") {
  SourceColumns columns;
  CLI::App app;
  add_delimiter_option(app, columns);
  app.parse("--delimiter ;", false);
  CHECK(columns.delimiter == ';');
  for (const char* bad : {"--delimiter ';;'", "--delimiter '\"'", "--delimiter ''"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(app.parse(bad, false), CLI::ParseError);
  }
}
