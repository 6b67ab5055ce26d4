#include "gc/markers/head_start.hpp"

#include <algorithm>
#include <bit>

#include "gc/util/stopwatch.hpp"

namespace gcvm {

namespace {

/// Where `id`'s probe starts in a set of `mask` + 1 slots.
std::uint32_t home_slot(ObjectId id, std::uint32_t mask) { return (id * 0x9E3779B1u) & mask; }

/// Inserts `id` into the open-addressing set `seen` (a power of two of slots, more
/// than twice what it will hold); true if it was not there.
bool insert(std::vector<ObjectId>& seen, ObjectId id) {
  const auto mask = static_cast<std::uint32_t>(seen.size() - 1);
  for (std::uint32_t slot = home_slot(id, mask);; slot = (slot + 1) & mask) {
    if (seen[slot] == id) return false;
    if (seen[slot] == kNullRef) {
      seen[slot] = id;
      return true;
    }
  }
}

void erase_all(std::vector<ObjectId>& seen, std::span<const ObjectId> ids) {
  const auto mask = static_cast<std::uint32_t>(seen.size() - 1);
  // The search for an id goes on past slots already cleared (it stops only at the id,
  // which is there), so the slots can be cleared in any order.
  for (const ObjectId id : ids)
    for (std::uint32_t slot = home_slot(id, mask);; slot = (slot + 1) & mask)
      if (seen[slot] == id) {
        seen[slot] = kNullRef;
        break;
      }
}

}  // namespace

void walk_head_start(const RefGraph& graph, std::span<const ObjectId> roots, const HeadStartLimits& limits,
                     HeadStart& out) {
  const Stopwatch clock;
  out.scanned.clear();
  out.frontier.clear();
  out.levels = 0;
  out.references = 0;
  out.ms = 0;
  if (limits.max_level_objects == 0 || roots.size() > limits.max_level_objects) return;
  // The set holds the scanned objects and the last level's, at most max_objects +
  // max_level_references + the roots.
  const std::uint64_t most = std::uint64_t{limits.max_objects} + limits.max_level_references + roots.size();
  const std::uint64_t slots = std::bit_ceil(std::max<std::uint64_t>(4 * most, 64));
  if (out.seen.size() != slots) out.seen.assign(slots, kNullRef);

  const std::uint64_t* begin = graph.begin_data();
  const std::uint32_t* degree = graph.degree_data();
  const ObjectId* edges = graph.edge_data();
  std::vector<ObjectId>& level = out.frontier;
  for (const ObjectId root : roots)
    if (root != kNullRef && insert(out.seen, root)) level.push_back(root);
  std::vector<ObjectId> next;
  while (!level.empty() && level.size() <= limits.max_level_objects &&
         out.scanned.size() + level.size() <= limits.max_objects) {
    // The level's rows, then its references, are loaded before any is used: the
    // objects of a level are independent, so their cache misses overlap.
    std::uint64_t level_references = 0;
    for (const ObjectId v : level) level_references += degree[v];
    if (level_references > limits.max_level_references) break;
    for (const ObjectId v : level) __builtin_prefetch(edges + begin[v]);
    next.clear();
    for (const ObjectId v : level) {
      const ObjectId* e = edges + begin[v];
      for (const ObjectId* end = e + degree[v]; e != end; ++e) {
        if (*e == kNullRef) continue;
        ++out.references;
        if (insert(out.seen, *e)) next.push_back(*e);
      }
    }
    out.scanned.insert(out.scanned.end(), level.begin(), level.end());
    level.swap(next);
    ++out.levels;
  }
  erase_all(out.seen, out.scanned);
  erase_all(out.seen, out.frontier);
  if (out.levels == 0) out.frontier.clear();
  out.ms = clock.elapsed_ms();
}

}  // namespace gcvm
