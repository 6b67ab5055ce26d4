#include "gc/markers/mark_checker.hpp"

#include <deque>

namespace gcvm {

namespace {

template <typename F>
void for_each_marked(const MarkBitmap& marks, F&& visit) {
  const auto& words = marks.words();
  for (std::uint32_t b = 0; b < words.size(); ++b)
    for (std::uint64_t w = words[b]; w != 0; w &= w - 1)
      visit(make_object_id(b, static_cast<std::uint32_t>(__builtin_ctzll(w))));
}

}  // namespace

std::string check_marks(const RefGraph& graph, const BlockAllocator& blocks, std::span<const ObjectId> roots,
                        const MarkBitmap& marks, std::span<const std::uint64_t> premarked) {
  if (premarked.size() > marks.block_count()) return "pre-marked words exceed the mark bitmap";
  for (std::uint32_t b = 0; b < premarked.size(); ++b)
    if (const std::uint64_t lost = premarked[b] & ~marks.words()[b]; lost != 0)
      return "pre-marked object " + object_id_text(make_object_id(b, static_cast<std::uint32_t>(__builtin_ctzll(lost)))) +
             " is not marked";
  auto is_premarked = [&](ObjectId v) {
    return block_of(v) < premarked.size() && ((premarked[block_of(v)] >> slot_of(v)) & 1u) != 0;
  };
  if (marks.block_count() < blocks.high_water())
    return "mark bitmap covers " + std::to_string(marks.block_count()) + " blocks, heap has " +
           std::to_string(blocks.high_water());
  for (std::uint32_t b = blocks.high_water(); b < marks.block_count(); ++b)
    if (marks.words()[b] != 0) return "marks beyond the heap in block " + std::to_string(b);
  for (ObjectId root : roots)
    if (root != kNullRef && !marks.test(root)) return "root " + object_id_text(root) + " is not marked";
  std::string problem;
  for_each_marked(marks, [&](ObjectId v) {
    if (!problem.empty()) return;
    if (!blocks.is_allocated(v)) {
      problem = "marked object " + object_id_text(v) + " is not allocated";
      return;
    }
    if (is_premarked(v)) return;
    for (ObjectId t : graph.out_edges(v))
      if (t != kNullRef && !marks.test(t)) {
        problem = "marked object " + object_id_text(v) + " references unmarked " + object_id_text(t);
        return;
      }
  });
  if (!problem.empty()) return problem;

  MarkBitmap reached;
  reached.reset(marks.block_count(), premarked);
  std::deque<ObjectId> queue;
  for (ObjectId root : roots)
    if (root != kNullRef && reached.test_and_set(root)) queue.push_back(root);
  while (!queue.empty()) {
    const ObjectId v = queue.front();
    queue.pop_front();
    for (ObjectId t : graph.out_edges(v))
      if (t != kNullRef && reached.test_and_set(t)) queue.push_back(t);
  }
  for (std::uint32_t b = 0; b < marks.block_count(); ++b)
    if (const std::uint64_t extra = marks.words()[b] & ~reached.words()[b]; extra != 0)
      return "object " + object_id_text(make_object_id(b, static_cast<std::uint32_t>(__builtin_ctzll(extra)))) +
             " is marked but unreachable";
  return {};
}

std::uint64_t count_traversed_edges(const RefGraph& graph, const MarkBitmap& marks) {
  std::uint64_t total = 0;
  for_each_marked(marks, [&](ObjectId v) {
    for (ObjectId t : graph.out_edges(v)) total += t != kNullRef;
  });
  return total;
}

}  // namespace gcvm
