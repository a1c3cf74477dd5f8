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

/// Records that standard output could not be written (`err`: its errno; EPIPE when its reader
/// went away, which no longer kills the process: install_interrupt_handlers catches SIGPIPE).
/// The run then stops as an interrupted one does, between windows, with what is in flight
/// settled, and main says so and exits 1: a batch that nobody can see the answers of does not
/// go on, nor end half-way without a word.
void stop_for_lost_output(int err);

/// The errno of the first failed write to standard output, or 0.
int lost_output_error();

/// Whether a stop was asked for (a signal, or standard output lost).
inline bool interrupted() { return interrupt_signal() != 0 || lost_output_error() != 0; }

/// "interrupted by SIGINT", "standard output could not be written (Broken pipe)": why the items
/// not sent were not applied.
std::string interrupt_reason();

/// For commands with nothing to settle (reads): throws the interruption as an error once a stop
/// was asked for. What was printed stays, an output file is not committed, and main turns the
/// exit status into 130 or 143.
void stop_if_interrupted();

}  // namespace stockctl
