#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "sources/open_source.h"

namespace stockctl::test {

/// Everything a reader produced from a string: the records and any header problem.
struct Read {
  std::vector<Record> records;
  std::vector<bool> header;
};

inline Read read_string(const std::string& text, Format format,
                        const WantedColumns& wanted = {"sku", "stock"}) {
  Read out;
  std::istringstream in(text);
  RecordHandler handler{[&](const std::vector<bool>& present) {
                          out.header = present;
                          return std::string();
                        },
                        [&](Record& r) {
                          out.records.push_back(r);
                          return true;
                        }};
  read_records(in, format, wanted, handler);
  return out;
}

}  // namespace stockctl::test
