#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace stockctl {

/// A command line split at its first "--": the words CLI11 parses, and the words after the
/// marker, which are arguments whatever they look like (`get 1 -- --pretty` reads two SKUs).
struct SplitCommandLine {
  std::vector<std::string> options;    ///< the words before "--" (without the program name)
  std::vector<std::string> arguments;  ///< the words after it
};

/// Splits `argv` (program name first) at its first "--".
SplitCommandLine split_at_double_dash(int argc, const char* const* argv);

/// Gives `words` to the positional arguments of `sub` in order, after those already given, as
/// if they had stood there. Throws InputError when `sub` takes no more arguments.
void add_positional_words(CLI::App& sub, const std::vector<std::string>& words);

/// A clearer message than CLI11's for a command line it refused: an unknown command or option
/// (with "did you mean" when one is close), or an option of a subcommand given before the
/// subcommand or to another one (naming the subcommand that owns it). "" when none applies.
/// `words` are the words CLI11 parsed, without the program name.
std::string explain_usage_error(const CLI::App& app, const std::vector<std::string>& words);

/// The line after a usage error: "Run 'stockctl SUBCOMMAND --help' for usage." for the
/// subcommand the command line names (the program's help when it names none), or nothing when
/// `message` already names the help to read.
std::string usage_hint(const CLI::App& app, const std::vector<std::string>& words,
                       const std::string& message);

/// CLI11's own message in our shape: lowercase first letter, no trailing period.
std::string usage_message(const std::string& cli11_message);

}  // namespace stockctl
