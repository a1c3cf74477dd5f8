#include "core/info_text.h"

namespace stockctl {

std::map<std::string, std::string> parse_info(std::string_view text) {
  std::map<std::string, std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? end : end - start);
    start = end == std::string_view::npos ? text.size() : end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t colon = line.find(':');
    if (line.empty() || line.front() == '#' || colon == std::string_view::npos) continue;
    out[std::string(line.substr(0, colon))] = std::string(line.substr(colon + 1));
  }
  return out;
}

}  // namespace stockctl
