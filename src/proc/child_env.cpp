#include "proc/child_env.h"

#include <unistd.h>  // environ (declared under _GNU_SOURCE, which g++ and clang++ define)

#include <algorithm>
#include <array>
#include <cctype>

namespace stockctl {
namespace {

constexpr std::array<std::string_view, 3> kSecretVariables = {"STOCKCTL_PASSWORD", "REDISCLI_AUTH",
                                                              "STOCKCTL_SENTINEL_PASSWORD"};
constexpr std::array<std::string_view, 2> kUrlVariables = {"STOCKCTL_URL", "REDIS_URL"};

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

bool names_a_secret(std::string_view parameter) {
  std::string name = lowercase(parameter.substr(0, parameter.find('=')));
  return contains(name, "pass") || contains(name, "auth") || contains(name, "secret");
}

std::string_view entry_name(std::string_view entry) { return entry.substr(0, entry.find('=')); }

template <std::size_t N>
bool is_one_of(std::string_view name, const std::array<std::string_view, N>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

bool url_carries_password(std::string_view url) {
  std::size_t scheme_end = url.find("://");
  std::size_t start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  std::string_view rest = url.substr(start);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos && authority.substr(0, at).find(':') != std::string_view::npos) {
    return true;
  }
  std::size_t query = url.find('?');
  while (query != std::string_view::npos) {
    std::string_view parameter = url.substr(query + 1);
    std::size_t next = parameter.find_first_of("&;#");
    if (names_a_secret(parameter.substr(0, next))) return true;
    query = next == std::string_view::npos ? next : query + 1 + next;
  }
  return false;
}

bool is_withheld_from_children(std::string_view entry) {
  std::string_view name = entry_name(entry);
  if (is_one_of(name, kSecretVariables)) return true;
  if (!is_one_of(name, kUrlVariables)) return false;
  std::size_t eq = entry.find('=');
  return eq != std::string_view::npos && url_carries_password(entry.substr(eq + 1));
}

std::vector<std::string> child_environment(
    const std::vector<std::string>& parent,
    const std::vector<std::pair<std::string, std::string>>& set) {
  std::vector<std::string> out;
  out.reserve(parent.size() + set.size());
  for (const std::string& entry : parent) {
    std::string_view name = entry_name(entry);
    bool replaced = std::any_of(set.begin(), set.end(),
                                [&](const auto& variable) { return variable.first == name; });
    if (!replaced && !is_withheld_from_children(entry)) out.push_back(entry);
  }
  for (const auto& [name, value] : set) {
    std::string entry = name;
    entry += '=';
    entry += value;
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<std::string> current_environment() {
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    out.emplace_back(*entry);
  }
  return out;
}

}  // namespace stockctl
