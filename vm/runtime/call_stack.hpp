// The guest call stack and the VM's precise roots.
//
// Frames live in one slot array: a frame is `frame_size` consecutive 64-bit slots
// (parameters, locals, scratch) starting at its base; a callee's frame starts right
// after its caller's. `frames()` holds the callers of the running function (its
// return point and base); the running function itself is described by the
// interpreter's registers and passed in as `top` where needed.
//
// Roots (precise, never conservative): for every frame, exactly the slots in its
// function's `ref_slots` stack map, plus every reference global. Slot types are
// declared, so the map does not depend on the pc. Reference slots are null from frame
// entry on (the frame image), so a root is always null or a live object.
//
// Limits: kMaxDepth frames and kMaxSlots slots; exceeding either is a guest "stack
// overflow" error. The slot array is reserved untouched, so only used pages count.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "vm/bytecode/module.hpp"

namespace gcvm::vm {

struct Frame {
  const FunctionInfo* fn = nullptr;
  std::uint64_t* base = nullptr;
  const std::uint32_t* ip = nullptr;  // saved frames: the CALL being executed
};

class CallStack {
 public:
  static constexpr std::size_t kMaxDepth = 200000;
  static constexpr std::size_t kMaxSlots = std::size_t{16} << 20;

  CallStack() : slots_(new std::uint64_t[kMaxSlots]) { frames_.reserve(1024); }

  std::uint64_t* slots_begin() { return slots_.get(); }
  std::uint64_t* slots_end() { return slots_.get() + kMaxSlots; }
  std::vector<Frame>& frames() { return frames_; }

  /// Calls visit(slot_value) for every reference slot of `top` and of every saved frame.
  template <typename F>
  void for_each_root(const Frame& top, F&& visit) const {
    for (std::uint32_t s : top.fn->ref_slots) visit(top.base[s]);
    for (const Frame& f : frames_)
      for (std::uint32_t s : f.fn->ref_slots) visit(f.base[s]);
  }

  /// "  at NAME (FILE:LINE)" for `top` and its callers, innermost first (at most 24 lines).
  std::vector<std::string> trace(const Frame& top, const std::string& file) const {
    std::vector<std::string> lines;
    auto at = [&](const Frame& f) {
      const std::size_t pc = static_cast<std::size_t>(f.ip - f.fn->code.data());
      const std::uint32_t line = pc < f.fn->lines.size() ? f.fn->lines[pc] : f.fn->line;
      lines.push_back(fmt::format("  at {} ({}:{})", f.fn->name, file, line));
    };
    at(top);
    constexpr std::size_t kShown = 24;
    for (std::size_t i = frames_.size(); i-- > 0;) {
      if (lines.size() == kShown) {
        lines.push_back(fmt::format("  ... {} more frames", i + 1));
        break;
      }
      at(frames_[i]);
    }
    return lines;
  }

 private:
  std::unique_ptr<std::uint64_t[]> slots_;
  std::vector<Frame> frames_;
};

}  // namespace gcvm::vm
