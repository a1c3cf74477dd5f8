#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/quantity.h"

using namespace stockctl;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  ParsedNumber qty = parse_qty(text);
  if (qty.ok() && (qty.value < 1 || qty.value > kMaxStock)) std::abort();
  ParsedNumber stock = parse_stock_value(text);
  if (stock.ok() && (stock.value < -1 || stock.value > kMaxStock)) std::abort();
  ParsedNumber count = parse_count(text);
  if (count.ok() && (count.value < 0 || count.value > kMaxStock)) std::abort();
  if (auto stored = parse_stored_value(text)) {
    // A canonical stored value prints back as itself.
    if (std::to_string(*stored) != text) std::abort();
  }
  return 0;
}
