#include "vm/asm/diagnostics.hpp"

#include <algorithm>

namespace gcvm::vm {

namespace {

std::string first_line(const std::string& file, const std::vector<Diagnostic>& list) {
  if (list.empty()) return file + ": assembly failed";
  return file + ":" + std::to_string(list.front().loc.line) + ":" + std::to_string(list.front().loc.col) + ": " +
         list.front().message;
}

}  // namespace

AssemblyError::AssemblyError(std::string file, std::vector<Diagnostic> diagnostics)
    : InputError(first_line(file, diagnostics)), file_(std::move(file)), diagnostics_(std::move(diagnostics)) {}

std::vector<std::string> AssemblyError::lines() const {
  std::vector<std::string> out;
  for (const Diagnostic& d : diagnostics_)
    out.push_back(file_ + ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message);
  return out;
}

void Diagnostics::error(SourceLoc loc, std::string message) {
  if (++count_ <= kMaxReported) list_.push_back({loc, std::move(message)});
}

void Diagnostics::throw_if_any() {
  if (count_ == 0) return;
  std::stable_sort(list_.begin(), list_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.col < b.loc.col;
  });
  if (count_ > kMaxReported)
    list_.push_back({list_.back().loc, std::to_string(count_ - kMaxReported) + " more errors not shown"});
  throw AssemblyError(file_, std::move(list_));
}

}  // namespace gcvm::vm
