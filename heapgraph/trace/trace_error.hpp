// Why a trace cannot be read: the one-line message names the file and the byte offset
// ("FILE: byte N: what is wrong"). An InputError, so the CLI exits 2.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "heapgraph/input_error.hpp"

namespace gcvm::trace {

class TraceError : public InputError {
 public:
  TraceError(std::string_view file, std::uint64_t offset, std::string_view what)
      : InputError(std::string(file) + ": byte " + std::to_string(offset) + ": " + std::string(what)),
        offset_(offset) {}
  std::uint64_t offset() const { return offset_; }

 private:
  std::uint64_t offset_;
};

}  // namespace gcvm::trace
