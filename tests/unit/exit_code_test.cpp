#include "core/exit_fold.h"

#include <doctest/doctest.h>

#include <csignal>

#include "cli/error_exit.h"
#include "redis/errors.h"

using namespace stockctl;

TEST_CASE("each status maps to the contract's exit code") {
  CHECK(exit_code_for(Status::ok) == ExitCode::ok);
  CHECK(exit_code_for(Status::unlimited) == ExitCode::ok);
  CHECK(exit_code_for(Status::exists) == ExitCode::ok);
  CHECK(exit_code_for(Status::insufficient) == ExitCode::insufficient);
  CHECK(exit_code_for(Status::uninitialized) == ExitCode::uninitialized);
  CHECK(exit_code_for(Status::missing) == ExitCode::uninitialized);
  CHECK(exit_code_for(Status::busy) == ExitCode::busy);
  CHECK(exit_code_for(Status::invalid) == ExitCode::invalid_input);
  CHECK(exit_code_for(Status::conflict) == ExitCode::invalid_input);
  CHECK(exit_code_for(Status::error) == ExitCode::failure);
}

TEST_CASE("drift fails only with --fail-on-drift") {
  CHECK(exit_code_for(Status::drift) == ExitCode::ok);
  CHECK(exit_code_for(Status::drift, true) == ExitCode::drift);
}

TEST_CASE("the most serious code wins, in the order 1, 2, 5, 4, 3, 0") {
  const ExitCode order[] = {ExitCode::failure,       ExitCode::invalid_input, ExitCode::busy,
                            ExitCode::uninitialized, ExitCode::insufficient,  ExitCode::ok};
  for (std::size_t i = 0; i < 6; ++i) {
    for (std::size_t j = i; j < 6; ++j) {
      CHECK(most_serious(order[i], order[j]) == order[i]);
      CHECK(most_serious(order[j], order[i]) == order[i]);
    }
  }
}

TEST_CASE("ExitFold folds item statuses") {
  ExitFold fold;
  fold.add(Status::ok);
  fold.add(Status::insufficient);
  CHECK(fold.code() == ExitCode::insufficient);
  fold.add(Status::missing);
  CHECK(fold.code() == ExitCode::uninitialized);
  fold.add(Status::ok);
  CHECK(fold.code() == ExitCode::uninitialized);
  fold.add(Status::error);
  CHECK(fold.code() == ExitCode::failure);
}

TEST_CASE("failures and invalid input ask for an error line; other outcomes do not") {
  CHECK(needs_error_line(Status::error));
  CHECK(needs_error_line(Status::invalid));
  CHECK(needs_error_line(Status::conflict));
  CHECK_FALSE(needs_error_line(Status::insufficient));
  CHECK_FALSE(needs_error_line(Status::missing));
  CHECK_FALSE(needs_error_line(Status::ok));
}

TEST_CASE("an error that ends the run maps to the exit status of its kind") {
  CHECK(exit_code_for(StockctlError("server said no")) == ExitCode::failure);
  CHECK(exit_code_for(IoError("cannot write")) == ExitCode::failure);
  CHECK(exit_code_for(ConnectionError("connection refused")) == ExitCode::failure);
  CHECK(exit_code_for(InputError("bad row")) == ExitCode::invalid_input);
  CHECK(exit_code_for(BusyError("rebuild running")) == ExitCode::busy);
  CHECK(exit_code_for(InterruptedError(SIGINT, "stopped")) == ExitCode::sigint);
  CHECK(exit_code_for(InterruptedError(SIGTERM, "stopped")) == ExitCode::sigterm);
}
