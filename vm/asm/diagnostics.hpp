// Assembly diagnostics: every error found in one pass over a program, each reported
// as `file:line:col: message` (lines and columns from 1). The assembler keeps going
// after an error wherever the rest of the program can still be checked, and throws one
// AssemblyError carrying them all at the end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heapgraph/input_error.hpp"

namespace gcvm::vm {

struct SourceLoc {
  std::uint32_t line = 0;
  std::uint32_t col = 0;
};

struct Diagnostic {
  SourceLoc loc;
  std::string message;
};

class AssemblyError : public InputError {
 public:
  AssemblyError(std::string file, std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  /// One `file:line:col: message` line per diagnostic.
  std::vector<std::string> lines() const;

 private:
  std::string file_;
  std::vector<Diagnostic> diagnostics_;
};

class Diagnostics {
 public:
  /// Stops recording (but keeps counting) after this many; the last line says so.
  static constexpr std::size_t kMaxReported = 100;

  explicit Diagnostics(std::string file) : file_(std::move(file)) {}
  void error(SourceLoc loc, std::string message);
  bool empty() const { return count_ == 0; }
  /// Throws AssemblyError with the errors in source order, if there were any.
  void throw_if_any();
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<Diagnostic> list_;
  std::size_t count_ = 0;
};

}  // namespace gcvm::vm
