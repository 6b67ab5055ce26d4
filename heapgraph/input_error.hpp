// The base of every "bad input" error (flags, specs, programs, traces, dumps): the
// front end prints its message on one line and exits with code 2. Messages name the
// input and, for files, the line or byte offset.
#pragma once

#include <stdexcept>

namespace gcvm {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gcvm
