// Runs the gcvm binary (GCVM_BINARY) with arguments and captures exit code, stdout
// and stderr, for end-to-end CLI tests.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace gcvm::test {

/// The guest programs of workloads/, with a trailing slash.
inline const std::string kWorkloads = std::string(GCVM_SOURCE_DIR) + "/workloads/";

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline CliResult run_gcvm(const std::string& args) {
  // The process id keeps test binaries that ctest runs side by side (-j) in one working
  // directory from reading, or removing, each other's files.
  static int counter = 0;
  const std::string err_file =
      "gcvm_cli_stderr_" + std::to_string(getpid()) + "_" + std::to_string(++counter) + ".txt";
  const std::string command = std::string(GCVM_BINARY) + " " + args + " 2>" + err_file;
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_file);
  std::stringstream ss;
  ss << err.rdbuf();
  result.err = ss.str();
  std::remove(err_file.c_str());
  return result;
}

/// Writes `text` to the file `name` (in the working directory) and returns the name.
inline std::string write_program(const std::string& name, const std::string& text) {
  std::ofstream(name) << text;
  return name;
}

/// Number of lines in `text` (a final line without newline counts).
inline int line_count(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines + (!text.empty() && text.back() != '\n');
}

/// A usage error: gcvm with `args` exits 2 with one line on stderr that says `says`.
inline void check_usage_error(const std::string& args, const std::string& says) {
  CAPTURE(args);
  const CliResult r = run_gcvm(args);
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.find(says) != std::string::npos);
}

}  // namespace gcvm::test
