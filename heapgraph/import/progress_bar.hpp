// A one-line progress bar on stderr for long imports. It draws only when enabled and
// stderr is a terminal (never into logs or pipes), redraws at most once per percent,
// and clears its line when finished or destroyed.
#pragma once

#include <cstdint>
#include <string>

namespace gcvm {

class ProgressBar {
 public:
  ProgressBar(std::string label, std::uint64_t total, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(std::uint64_t done) {
    if (active_ && done >= next_) draw(done);
  }
  void finish();

 private:
  void draw(std::uint64_t done);
  std::string label_;
  std::uint64_t total_;
  std::uint64_t next_ = 0;
  bool active_;
};

}  // namespace gcvm
