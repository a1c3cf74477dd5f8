#include "cli/command_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "base/errors.h"
#include "base/text.h"

namespace stockctl {
namespace {

// A typo is at most this many edits away from the name meant.
constexpr std::size_t kMaxTypoDistance = 2;

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// The candidate closest to `word`, or "" when none is close enough to be a likely typo.
std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = kMaxTypoDistance + 1;
  for (const std::string& c : candidates) {
    if (std::size_t d = edit_distance(word, c); d < best_distance && d < c.size()) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

// Subcommands a user can name: hidden ones (the completion entry point) have no group.
std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (!sub->get_group().empty()) out.push_back(sub);
  }
  return out;
}

const CLI::App* find_subcommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : visible_subcommands(app)) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

// "-x" and "--name" are options; "-1" is a value (a negative number), "-" is standard input.
bool is_option_word(const std::string& word) {
  if (word.size() < 2 || word[0] != '-') return false;
  return !std::isdigit(static_cast<unsigned char>(word[1]));
}

std::string option_name(const std::string& word) { return word.substr(0, word.find('=')); }

const CLI::Option* find_option(const CLI::App* scope, const std::string& name) {
  return scope == nullptr ? nullptr : scope->get_option_no_throw(name);
}

std::vector<std::string> long_names(const CLI::App* scope) {
  std::vector<std::string> out;
  if (scope == nullptr) return out;
  for (const CLI::Option* opt : scope->get_options()) {
    for (const std::string& n : opt->get_lnames()) out.push_back("--" + n);
  }
  return out;
}

std::string quoted_names(const std::vector<const CLI::App*>& subs) {
  std::string out;
  for (std::size_t i = 0; i < subs.size(); ++i) {
    if (i > 0) out += i + 1 == subs.size() ? " and " : ", ";
    out += fmt::format("'{}'", subs[i]->get_name());
  }
  return out;
}

// The subcommand named after position `from`, where the user put one.
const CLI::App* subcommand_after(const CLI::App& app, const std::vector<std::string>& words,
                                 std::size_t from) {
  for (std::size_t i = from; i < words.size(); ++i) {
    if (const CLI::App* sub = find_subcommand(app, words[i])) return sub;
  }
  return nullptr;
}

// An option that neither the program nor the subcommand in effect knows: whose is it, or which
// name was meant? `chosen` is the subcommand the option follows (nullptr when it stands before
// one), `named` the subcommand the command line names.
std::string explain_unknown_option(const CLI::App& app, const CLI::App* chosen,
                                   const CLI::App* named, const std::string& name) {
  std::vector<const CLI::App*> owners;
  for (const CLI::App* sub : visible_subcommands(app)) {
    if (sub->get_option_no_throw(name) != nullptr) owners.push_back(sub);
  }
  if (!owners.empty()) {
    if (chosen != nullptr) {
      return fmt::format("'{}' has no option {}; it belongs to {}", chosen->get_name(), name,
                         quoted_names(owners));
    }
    if (named != nullptr && std::find(owners.begin(), owners.end(), named) != owners.end()) {
      return fmt::format("{} belongs to '{}'; put it after the subcommand: stockctl {} {} ...",
                         name, named->get_name(), named->get_name(), name);
    }
    if (named != nullptr) {
      return fmt::format("{} belongs to {}, not to '{}'", name, quoted_names(owners),
                         named->get_name());
    }
    return fmt::format("{} belongs to {}; put it after the subcommand", name, quoted_names(owners));
  }
  std::vector<std::string> candidates = long_names(&app);
  for (std::string& n : long_names(named)) candidates.push_back(std::move(n));
  std::string where = chosen != nullptr ? fmt::format(" for '{}'", chosen->get_name()) : "";
  if (std::string best = closest(name, candidates); !best.empty()) {
    return fmt::format("unknown option {}{}; did you mean '{}'?", quote_value(name), where, best);
  }
  return fmt::format("unknown option {}{}; see 'stockctl {}--help'", quote_value(name), where,
                     named != nullptr ? named->get_name() + " " : "");
}

std::string explain_unknown_command(const CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* sub : visible_subcommands(app)) names.push_back(sub->get_name());
  if (std::string best = closest(word, names); !best.empty()) {
    return fmt::format("unknown command {}; did you mean '{}'?", quote_value(word), best);
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return fmt::format("unknown command {} (commands: {})", quote_value(word), list);
}

}  // namespace

SplitCommandLine split_at_double_dash(int argc, const char* const* argv) {
  SplitCommandLine split;
  bool after = false;
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (!after && word == "--") {
      after = true;
    } else {
      (after ? split.arguments : split.options).push_back(std::move(word));
    }
  }
  return split;
}

void add_positional_words(CLI::App& sub, const std::vector<std::string>& words) {
  for (const std::string& word : words) {
    CLI::Option* target = nullptr;
    for (CLI::Option* opt : sub.get_options()) {
      if (opt->get_positional() && static_cast<int>(opt->count()) < opt->get_items_expected_max()) {
        target = opt;
        break;
      }
    }
    if (target == nullptr) {
      throw InputError(
          fmt::format("'{}' takes no further argument {}", sub.get_name(), quote_value(word)));
    }
    target->add_result(word);
    target->run_callback();
  }
}

std::string usage_hint(const CLI::App& app, const std::vector<std::string>& words,
                       const std::string& message) {
  if (message.find("--help'") != std::string::npos) return {};  // it names the help to read
  const CLI::App* named = subcommand_after(app, words, 0);
  return fmt::format("Run 'stockctl {}--help' for usage.",
                     named != nullptr ? named->get_name() + " " : "");
}

std::string explain_usage_error(const CLI::App& app, const std::vector<std::string>& words) {
  const CLI::App* chosen = nullptr;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (!is_option_word(word)) {
      if (chosen != nullptr) continue;  // an argument of the subcommand
      chosen = find_subcommand(app, word);
      if (chosen == nullptr) return explain_unknown_command(app, word);
      continue;
    }
    std::string name = option_name(word);
    const CLI::Option* opt = find_option(chosen, name);
    if (opt == nullptr) opt = app.get_option_no_throw(name);
    if (opt == nullptr) {
      const CLI::App* named = chosen != nullptr ? chosen : subcommand_after(app, words, i + 1);
      return explain_unknown_option(app, chosen, named, name);
    }
    if (name.size() == word.size() && opt->get_expected_max() > 0) ++i;  // skip its value
  }
  return {};
}

std::string usage_message(const std::string& message) {
  // An option that takes one value given twice ("--url: At Most 1 required but received 2"):
  // which one it was and what to do, in the words of the rest of the tool.
  static constexpr std::string_view kTwice = ": At Most 1 required but received ";
  if (const std::size_t at = message.find(kTwice); at != std::string::npos) {
    std::string times = message.substr(at + kTwice.size());
    while (!times.empty() && (times.back() == '.' || times.back() == '\n')) times.pop_back();
    return fmt::format("{} given {} times; it takes one value, give it once", message.substr(0, at),
                       times);
  }
  std::string out = message;
  // "The following argument was not expected" reads on in lower case; "SKU is required" keeps
  // its capitals.
  const bool word_in_capitals =
      out.size() > 1 && std::isupper(static_cast<unsigned char>(out[1])) != 0;
  if (!out.empty() && !word_in_capitals) {
    out[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[0])));
  }
  while (!out.empty() && (out.back() == '.' || out.back() == '\n')) out.pop_back();
  return out;
}

}  // namespace stockctl
