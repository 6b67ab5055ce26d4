#include "gc/markers/parallel_marker.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <thread>

namespace gcvm {

namespace {

using Item = WorkStealingDeque::Item;

constexpr Item make_item(ObjectId object, std::uint32_t first_edge) { return (Item{first_edge} << 32) | object; }
constexpr ObjectId item_object(Item item) { return static_cast<ObjectId>(item); }
constexpr std::uint32_t item_first_edge(Item item) { return static_cast<std::uint32_t>(item >> 32); }

/// Sets `bits` in mark word `word` of `words` (a MarkBitmap's); returns the bits this
/// call set. Alone (kConcurrent false: a pool of one, or the caller's prelude), the
/// marker needs no atomic read-modify-write: one locked instruction per marked object
/// is most of the cost of marking a linked list.
template <bool kConcurrent>
std::uint64_t claim_bits(std::uint64_t* words, std::uint32_t word, std::uint64_t bits) {
  if constexpr (kConcurrent) {
    return bits & ~std::atomic_ref<std::uint64_t>(words[word]).fetch_or(bits, std::memory_order_relaxed);
  } else {
    const std::uint64_t before = words[word];
    words[word] = before | bits;
    return bits & ~before;
  }
}

/// True if `id` is marked (a plain read; concurrently a relaxed atomic one).
template <bool kConcurrent>
bool is_marked(std::uint64_t* words, ObjectId id) {
  const std::uint64_t bit = std::uint64_t{1} << slot_of(id);
  if constexpr (kConcurrent)
    return (std::atomic_ref<std::uint64_t>(words[block_of(id)]).load(std::memory_order_relaxed) & bit) != 0;
  else
    return (words[block_of(id)] & bit) != 0;
}

/// Sets `id`'s mark bit; true if this call set it.
template <bool kConcurrent>
bool claim(std::uint64_t* words, ObjectId id) {
  return !is_marked<kConcurrent>(words, id) &&
         claim_bits<kConcurrent>(words, block_of(id), std::uint64_t{1} << slot_of(id)) != 0;
}

/// xorshift64: victim selection only needs to be cheap and differ between threads.
std::uint64_t next_random(std::uint64_t& state) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

}  // namespace

/// A marking thread's work: a private depth-first stack, which only the owner touches
/// (plain loads and stores), and the public deque that thieves steal from. The owner
/// moves the oldest half of its private items to the deque when another thread is
/// idle and its deque is empty, so the per-object cost of a fenced deque pop, and the
/// sharing of cache lines with a thief working next door, are paid only for work
/// that others need.
struct ParallelMarker::Worker {
  WorkStealingDeque deque;
  // On a line of its own: the owner writes it at every push and pop, and thieves read
  // the deque's ring pointer, which would otherwise share its line.
  alignas(64) std::vector<Item> local;  // [shared_below, size) are the owner's private items
  std::size_t shared_below = 0;  // items under this index were moved to the deque

  void push(Item item) { local.push_back(item); }
  bool pop(Item& item) {
    if (local.size() > shared_below) {
      item = local.back();
      local.pop_back();
      if (local.size() == shared_below) forget_shared();
      return true;
    }
    return deque.pop(item);
  }
  /// Publishes the oldest half of the private items if some thread is idle (the team
  /// word counts one) and the deque has run dry. The private check comes first: it
  /// reads only this thread's lines, and a thread with one item or none (a list) has
  /// nothing to give.
  void share_if_wanted(const std::atomic<std::uint64_t>& team) {
    const std::size_t private_items = local.size() - shared_below;
    if (private_items < 2 || (team.load(std::memory_order_relaxed) & kTeamIdle) == 0 || !deque.looks_empty()) return;
    const std::size_t end = shared_below + private_items / 2;
    for (std::size_t i = shared_below; i < end; ++i) deque.push(local[i]);
    shared_below = end;
  }
  /// Publishes every private item (the prelude hands its work to the pool this way).
  void share_all() {
    for (std::size_t i = shared_below; i < local.size(); ++i) deque.push(local[i]);
    local.clear();
    shared_below = 0;
  }
  bool idle() const { return local.size() == shared_below && deque.looks_empty(); }

 private:
  void forget_shared() {
    local.clear();
    shared_below = 0;
  }
};

ParallelMarkerOptions ParallelMarkerOptions::parse(const GcOptions& options, unsigned threads) {
  ParallelMarkerOptions result;
  result.threads = threads;
  for (const GcOption& option : options) {
    if (option.key != "chunk") reject_gc_option("parallel", option, "chunk=<edges per work item, >= 1>");
    const auto value = parse_gc_count(option.value, 1);
    if (!value) throw ConfigError("--gc-opt chunk=" + option.value + ": expected a number of edges from 1 to 4294967295");
    result.chunk = *value;
  }
  return result;
}

ParallelMarker::ParallelMarker(ParallelMarkerOptions options) : options_(options), pool_(options.threads) {
  for (unsigned i = 0; i < pool_.size(); ++i) workers_.push_back(std::make_unique<Worker>());
  stats_.resize(pool_.size());
}

ParallelMarker::~ParallelMarker() = default;

MarkStats ParallelMarker::mark(const MarkRequest& request, MarkBitmap& out) { return mark_on(pool_, request, out); }

MarkStats ParallelMarker::mark_on(ThreadPool& pool, const MarkRequest& request, MarkBitmap& out) {
  clock_ = Stopwatch();
  team_pool_ = &pool;
  while (workers_.size() < pool.size()) workers_.push_back(std::make_unique<Worker>());
  stats_.assign(pool.size(), MarkThreadStats{});
  out.reset(request.block_count, request.premarked);
  team_.store(0, std::memory_order_relaxed);
  next_root_.store(0, std::memory_order_relaxed);
  prelude_ = {};
  bool alone = false;
  if (pool.size() == 1)
    run_worker<false>(0, request, out);
  else if ((alone = mark_alone(request, out)))
    stats_[0] = prelude_;
  else
    pool.run_arriving([&](unsigned index) { run_worker<true>(index, request, out); });
  for (auto& w : workers_) {
    w->deque.reclaim();
    w->local.clear();
    w->shared_below = 0;
  }

  MarkStats stats;
  MarkThreadStats total;
  std::uint64_t min_objects = ~0ull, max_objects = 0, min_edges = ~0ull, max_edges = 0;
  double last_first_item = 0;
  const std::uint64_t team = team_.load(std::memory_order_relaxed);
  const unsigned joined = pool.size() == 1 || alone ? 1 : static_cast<unsigned>(team_joined(team));
  for (const MarkThreadStats& s : stats_) {
    total.objects += s.objects;
    total.edges += s.edges;
    total.items += s.items;
    total.splits += s.splits;
    total.steals += s.steals;
    total.steal_attempts += s.steal_attempts;
    min_objects = std::min(min_objects, s.objects);
    max_objects = std::max(max_objects, s.objects);
    min_edges = std::min(min_edges, s.edges);
    max_edges = std::max(max_edges, s.edges);
    last_first_item = std::max(last_first_item, s.first_item_ms);
  }
  stats.marked_objects = total.objects;
  stats.edges_traversed = total.edges;
  stats.mark_ms = clock_.elapsed_ms();
  stats.details = {
      {"threads", pool.size()},
      {"threads_joined", joined},
      {"chunk", options_.chunk},
      {"items", static_cast<double>(total.items)},
      {"splits", static_cast<double>(total.splits)},
      {"steals", static_cast<double>(total.steals)},
      {"steal_attempts", static_cast<double>(total.steal_attempts)},
      {"prelude_items", static_cast<double>(prelude_.items)},
      {"pool_woken", pool.size() > 1 && !alone ? 1.0 : 0.0},
      {"objects_per_thread_min", static_cast<double>(min_objects)},
      {"objects_per_thread_max", static_cast<double>(max_objects)},
      {"edges_per_thread_min", static_cast<double>(min_edges)},
      {"edges_per_thread_max", static_cast<double>(max_edges)},
      {"first_item_ms_max", last_first_item},
  };
  return stats;
}

template <bool kConcurrent>
void ParallelMarker::drain(Item item, const MarkRequest& request, Worker& worker, MarkThreadStats& s, MarkBitmap& out,
                           std::uint64_t item_limit) {
  const std::uint64_t* begin = request.graph.begin_data();
  const std::uint32_t* degree = request.graph.degree_data();
  const ObjectId* edges = request.graph.edge_data();
  std::uint64_t* words = out.words().data();
  const std::uint32_t chunk = options_.chunk;
  // One call scans many items: a call per item (its prologue, the spills) costs as much
  // as scanning a small object. The counters live in registers for the whole call: as
  // members of `s` every mark bit store could alias them, and the compiler would reload
  // and store them per edge.
  std::uint64_t items = s.items, objects = s.objects, edges_read = s.edges;
  for (;;) {
    ++items;
    const ObjectId v = item_object(item);
    const std::uint32_t d = degree[v];
    std::uint32_t from = item_first_edge(item), to = d;
    if (d - from > chunk) {
      to = from + chunk;
      if (from == 0) {
        ++s.splits;
        // Chunks go straight to the public deque: they exist to be stolen.
        for (std::uint64_t c = chunk; c < d; c += chunk)
          worker.deque.push(make_item(v, static_cast<std::uint32_t>(c)));
      }
    }
    const ObjectId* e = edges + begin[v] + from;
    const ObjectId* end = edges + begin[v] + to;
    ObjectId next = kNullRef;
    auto grey = [&](ObjectId target) {
      ++objects;
      // Prefetch on grey (as libgc does): the object's CSR row is a random DRAM
      // access, started now so it has arrived by the time the item is scanned.
      __builtin_prefetch(begin + target);
      __builtin_prefetch(degree + target);
      if (next != kNullRef) worker.push(make_item(next, 0));
      next = target;
    };
    if (!kConcurrent || to - from < 2) {
      // Alone, a claim is a plain load and store; and an item of one edge (a list
      // node) has nothing to batch.
      for (; e != end; ++e) {
        const ObjectId target = *e;
        if (target == kNullRef) continue;
        ++edges_read;
        if (claim<kConcurrent>(words, target)) grey(target);
      }
    } else {
      // Unmarked targets are collected per mark word and claimed with one fetch_or per
      // word: the children of an object often share a block (allocated together), and
      // the consecutive elements of an array chunk often do, so this saves most of the
      // locked instructions, which also stall the loads behind them.
      std::uint32_t pending_word = 0;
      std::uint64_t pending_bits = 0;
      auto claim_pending = [&] {
        for (std::uint64_t fresh = claim_bits<true>(words, pending_word, pending_bits); fresh != 0; fresh &= fresh - 1)
          grey(make_object_id(pending_word, static_cast<std::uint32_t>(std::countr_zero(fresh))));
      };
      for (; e != end; ++e) {
        const ObjectId target = *e;
        if (target == kNullRef) continue;
        ++edges_read;
        if (is_marked<true>(words, target)) continue;
        if (block_of(target) != pending_word) {
          if (pending_bits != 0) claim_pending();
          pending_word = block_of(target);
          pending_bits = 0;
        }
        pending_bits |= std::uint64_t{1} << slot_of(target);
      }
      if (pending_bits != 0) claim_pending();
    }
    if constexpr (kConcurrent) worker.share_if_wanted(team_);
    // Next: the last child this item marked, without a stack round trip, else the
    // newest pending item.
    if (next != kNullRef) {
      item = make_item(next, 0);
      if (items >= item_limit) {  // the prelude's budget is spent: leave the chain to the pool
        worker.push(item);
        break;
      }
    } else if (items >= item_limit || !worker.pop(item)) {
      break;
    }
  }
  s.items = items;
  s.objects = objects;
  s.edges = edges_read;
}

bool ParallelMarker::mark_alone(const MarkRequest& request, MarkBitmap& out) {
  Worker& worker = *workers_[0];
  Item item = 0;
  std::size_t visited = 0;
  for (; visited < request.roots.size() && prelude_.items < kPreludeItems; ++visited) {
    const ObjectId root = request.roots[visited];
    if (root == kNullRef || !claim<false>(out.words().data(), root)) continue;
    ++prelude_.objects;
    worker.push(make_item(root, 0));
    if (worker.pop(item)) drain<false>(item, request, worker, prelude_, out, kPreludeItems);
  }
  // Done if every root was visited and nothing is pending; otherwise the roots it did
  // not reach go to the pool's cursor.
  if (visited == request.roots.size() && worker.idle()) return true;
  worker.share_all();  // the pool starts with everything pending in the caller's deque
  next_root_.store(visited, std::memory_order_relaxed);
  return false;
}

template <bool kConcurrent>
void ParallelMarker::run_worker(unsigned index, const MarkRequest& request, MarkBitmap& out) {
  Worker& worker = *workers_[index];
  MarkThreadStats s = index == 0 ? prelude_ : MarkThreadStats{};
  if constexpr (kConcurrent) {
    // Join the team, unless it has finished: a thread that arrives after the mark is
    // done (its core was busy elsewhere) leaves at once, and the mark never waited for it.
    std::uint64_t team = team_.load(std::memory_order_acquire);
    do {
      if ((team & kTeamDone) != 0) {
        stats_[index] = s;  // the caller's prelude, if it is the one
        return;
      }
    } while (!team_.compare_exchange_weak(team, team + kTeamJoinedOne, std::memory_order_acq_rel,
                                          std::memory_order_acquire));
  }
  std::uint64_t rng = 0x9E3779B97F4A7C15ull * (index + 1);

  // Roots, kRootsPerClaim at a time, from one cursor: a thread that joins late finds
  // them taken instead of holding a share of its own back.
  const std::size_t roots = request.roots.size();
  for (std::size_t first; (first = next_root_.fetch_add(kRootsPerClaim, std::memory_order_relaxed)) < roots;) {
    const std::size_t last = std::min(roots, first + kRootsPerClaim);
    for (std::size_t r = first; r < last; ++r) {
      const ObjectId root = request.roots[r];
      if (root != kNullRef && claim<kConcurrent>(out.words().data(), root)) {
        ++s.objects;
        worker.push(make_item(root, 0));
      }
    }
  }
  if constexpr (kConcurrent) worker.share_all();

  auto scan = [&](Item item) {
    if (s.items == 0) s.first_item_ms = clock_.elapsed_ms();
    drain<kConcurrent>(item, request, worker, s, out, UINT64_MAX);
  };

  Item item = 0;
  for (;;) {
    if (worker.pop(item)) {
      scan(item);
      continue;
    }
    if (steal_round(index, rng, s, item)) {
      ++s.steals;
      scan(item);
      continue;
    }
    if constexpr (!kConcurrent) break;  // alone: nothing left anywhere
    // Idle: wait until every thread of the team is idle (done) or some deque has work
    // again.
    team_.fetch_add(1, std::memory_order_acq_rel);
    bool done = false;
    for (unsigned spins = 0;; ++spins) {
      std::uint64_t team = team_.load(std::memory_order_acquire);
      if ((team & kTeamDone) != 0) {
        done = true;
        break;
      }
      // Every member idle: close the team. The exchange fails if a thread joined or
      // left the idle state meanwhile (the word changed), and the test runs again.
      if ((team & kTeamIdle) == team_joined(team) &&
          team_.compare_exchange_strong(team, team | kTeamDone, std::memory_order_acq_rel, std::memory_order_acquire)) {
        done = true;
        break;
      }
      if (others_have_work(index)) {
        team_.fetch_sub(1, std::memory_order_acq_rel);
        break;
      }
      // Back off: spin, then yield, then sleep, so idle threads leave the cores to the
      // busy ones when there are more threads than free cores (a linked list keeps one
      // thread busy and every other idle for the whole mark).
      if (spins > 4096)
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      else if (spins > 64)
        std::this_thread::yield();
    }
    if (done) break;
  }
  stats_[index] = s;
}

bool ParallelMarker::steal_round(unsigned index, std::uint64_t& rng, MarkThreadStats& s, Item& item) {
  const unsigned threads = team_pool_->size();
  if (threads == 1) return false;
  bool lost = true;
  while (lost) {
    lost = false;
    const unsigned start = static_cast<unsigned>(next_random(rng) % threads);
    for (unsigned k = 0; k < threads; ++k) {
      const unsigned victim = (start + k) % threads;
      if (victim == index) continue;
      ++s.steal_attempts;
      switch (workers_[victim]->deque.steal(item)) {
        case WorkStealingDeque::Steal::Taken:
          return true;
        case WorkStealingDeque::Steal::Lost:
          lost = true;
          break;
        case WorkStealingDeque::Steal::Empty:
          break;
      }
    }
  }
  return false;
}

bool ParallelMarker::others_have_work(unsigned index) const {
  for (unsigned i = 0; i < team_pool_->size(); ++i)
    if (i != index && !workers_[i]->deque.looks_empty()) return true;
  return false;
}

}  // namespace gcvm
