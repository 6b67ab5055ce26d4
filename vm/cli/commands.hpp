// The gcvm command line: one subcommand per file, each registering itself on the
// CLI11 app and running when selected. Exit codes, shared by every subcommand:
//   0 success · 1 a check failed (--verify) or an internal error · 2 bad input
//   (flags, specs, programs, files, impossible sizes) · 3 out of memory · 4 a guest
//   program's run-time error (null dereference, index out of range, stack overflow,
//   division by zero; `gcvm run` prints it with the guest stack trace) · 5 a device
//   (GPU) error: no usable device was named, device memory ran out, a kernel failed.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "heapgraph/input_error.hpp"

namespace gcvm::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitOutOfMemory = 3;
inline constexpr int kExitGuestError = 4;
inline constexpr int kExitDeviceError = 5;

/// A bad-input error raised by a subcommand itself (every InputError exits 2).
class UsageError : public InputError {
 public:
  using InputError::InputError;
};

/// Registers `gcvm mark`; the returned function runs it (after parsing) and returns the exit code.
std::function<int()> register_mark_command(CLI::App& app);
/// Registers `gcvm devices`.
std::function<int()> register_devices_command(CLI::App& app);
/// Registers `gcvm replay` (heap traces; docs/trace-format.md).
std::function<int()> register_replay_command(CLI::App& app);
/// Registers `gcvm trace dump|stats`.
std::function<int()> register_trace_command(CLI::App& app);
/// Registers `gcvm run` (vm/cli/run_command.cpp).
std::function<int()> register_run_command(CLI::App& app);
/// Registers `gcvm disasm` (vm/cli/disasm_command.cpp).
std::function<int()> register_disasm_command(CLI::App& app);

/// Registers `gcvm analyze` (vm/cli/analyze_command.cpp).
std::function<int()> register_analyze_command(CLI::App& app);
/// Registers `gcvm compare` (vm/cli/compare_command.cpp).
std::function<int()> register_compare_command(CLI::App& app);

}  // namespace gcvm::cli
