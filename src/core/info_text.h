#pragma once

#include <map>
#include <string>
#include <string_view>

namespace stockctl {

/// `INFO` text as field -> value ("# Section" lines and blank lines skipped).
std::map<std::string, std::string> parse_info(std::string_view text);

}  // namespace stockctl
