#include "source_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return stockctl::fuzz::parse_source(data, size, stockctl::Format::json);
}
