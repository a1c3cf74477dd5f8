#pragma once

#include <string>

namespace stockctl {

/// Makes SIGINT and SIGTERM only record that they came (the handler sets a flag and does
/// nothing else), so that a command can stop between windows, settle what is in flight,
/// release its locks and say what it did. A second signal, half a second or more after the
/// first, ends the process at once.
void install_interrupt_handlers();

/// The signal that asked us to stop (SIGINT or SIGTERM), or 0.
int interrupt_signal();

/// Whether a stop was asked for.
inline bool interrupted() { return interrupt_signal() != 0; }

/// "interrupted by SIGINT": why the items not sent were not applied.
std::string interrupt_reason();

/// For commands with nothing to settle (reads): throws the interruption as an error once a stop
/// was asked for. What was printed stays, an output file is not committed, and main turns the
/// exit status into 130 or 143.
void stop_if_interrupted();

}  // namespace stockctl
