// Where a collecting subcommand (mark, run, replay) sends its statistics besides its
// usual output: `--gc-log` lines to the command's usual stream or, with
// `--gc-log=FILE`, to a file, so that they never mix with a guest's output; and
// `--stats-json=FILE`, the --stats=json object written to a file whatever --stats
// prints. `gcvm compare` runs configurations with both, reading the JSON from the
// file and the guest's output from stdout.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gcvm::cli {

/// The value --gc-log takes when it is given without `=FILE`.
inline constexpr const char* kGcLogUsualStream = "-";

/// Adds `--gc-log[=FILE]` to `cmd`; `target` is empty (off), kGcLogUsualStream or a path.
void add_gc_log_flag(CLI::App& cmd, std::string& target, std::string_view usual_stream);
/// Adds `--stats-json=FILE` to `cmd`.
void add_stats_json_flag(CLI::App& cmd, std::string& target);

/// The --gc-log destination: closed (no flag), the usual stream, or a file opened at
/// construction (a file that cannot be opened is a UsageError, before anything runs).
class GcLog {
 public:
  GcLog(const std::string& target, std::FILE* usual_stream);
  ~GcLog();
  GcLog(const GcLog&) = delete;
  GcLog& operator=(const GcLog&) = delete;

  explicit operator bool() const { return out_ != nullptr; }
  /// Writes `text` as it is (the caller ends its lines).
  void write(std::string_view text) const;

 private:
  std::FILE* out_ = nullptr;
  bool owned_ = false;
};

/// Writes `stats` and a newline to `path` when `path` is not empty; a UsageError
/// when the file cannot be written.
void write_stats_json(const std::string& path, const nlohmann::json& stats);

}  // namespace gcvm::cli
