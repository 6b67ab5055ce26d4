// Errors raised while importing a heap file: one line naming the file and the byte
// offset where the problem was found ("dump.hprof: byte 1234: ..."). Every importer
// and the format detector throw only this for bad input, so the CLI exits 2.
#pragma once

#include <cstdint>
#include <string>

#include "heapgraph/input_error.hpp"

namespace gcvm {

class ImportError : public InputError {
 public:
  ImportError(const std::string& file, std::uint64_t offset, const std::string& what)
      : InputError(file + ": byte " + std::to_string(offset) + ": " + what), offset_(offset) {}
  /// The byte offset in the file where the problem was detected.
  std::uint64_t offset() const { return offset_; }

 private:
  std::uint64_t offset_;
};

}  // namespace gcvm
