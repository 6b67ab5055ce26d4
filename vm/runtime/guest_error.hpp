// A guest run-time error: the guest program did something its semantics forbid (null
// dereference, index out of range, stack overflow, division by zero, a bad argument
// index) or the heap is exhausted after a full collection. It carries the guest stack
// trace and its kind; the CLI maps the kind to an exit status (vm/cli/commands.hpp).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace gcvm::vm {

enum class GuestFailure { RuntimeError, OutOfMemory };

class GuestError : public std::runtime_error {
 public:
  GuestError(std::string message, std::vector<std::string> trace, GuestFailure kind)
      : std::runtime_error(std::move(message)), trace_(std::move(trace)), kind_(kind) {}
  const std::vector<std::string>& trace() const { return trace_; }
  GuestFailure kind() const { return kind_; }

 private:
  std::vector<std::string> trace_;
  GuestFailure kind_;
};

}  // namespace gcvm::vm
