#include "heapgraph/import/progress_bar.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace gcvm {

ProgressBar::ProgressBar(std::string label, std::uint64_t total, bool enabled)
    : label_(std::move(label)), total_(total), active_(enabled && total > 0 && isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::draw(std::uint64_t done) {
  constexpr int kWidth = 40;
  const std::uint64_t percent = std::min<std::uint64_t>(100, done * 100 / total_);
  const int filled = static_cast<int>(percent * kWidth / 100);
  std::fprintf(stderr, "\r%s [%.*s%*s] %3u%%", label_.c_str(), filled, "########################################",
               kWidth - filled, "", static_cast<unsigned>(percent));
  std::fflush(stderr);
  next_ = (percent + 1) * total_ / 100;
}

void ProgressBar::finish() {
  if (!active_) return;
  std::fprintf(stderr, "\r%*s\r", static_cast<int>(label_.size()) + 48, "");
  std::fflush(stderr);
  active_ = false;
}

}  // namespace gcvm
