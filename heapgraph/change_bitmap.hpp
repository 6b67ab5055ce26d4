// Which entries of one reference-graph array changed since its consumer (a device
// mirror) last looked: one bit per entry, and a summary bit per chunk of
// kIndicesPerChunk entries so that finding the changes costs time in proportion to
// the chunks that hold any, not to the array.
//
// Invariants:
// - Bit i is set iff entry i was written with a value different from the one it held
//   since the last `clear()` (the writer compares first; a store of the value already
//   there changes nothing). A set bit may name an entry whose value has since returned
//   to what the consumer holds; that costs bytes, never correctness.
// - Summary bit c is set whenever any bit of entries [c * kIndicesPerChunk,
//   (c + 1) * kIndicesPerChunk) is set; it may stay set after those bits are cleared
//   only until the next `clear()`.
// - Indices below `size()` can be marked; the owner calls `resize` before it writes
//   entries past it. Storage never moves (VirtualArray), so growing costs no copy.
// - `generation()` counts `clear()` calls. A consumer that remembers the generation it
//   cleared knows, when it comes back, whether anyone else cleared changes meant for it
//   (then it must assume everything changed).
//
// One writer and one concurrent consumer. While the writer (the mutator's barrier)
// keeps marking, another thread may take the bits below a bound the writer has passed
// (`take_runs`: a device mirror refreshed in the background, gc/device/mirror_refresher.hpp).
// The writer sets a word's bit with a release store after it stored the entry's value,
// then the chunk's summary bit likewise; the taker clears a summary's chunk bits and
// then each word with atomic read-modify-writes (acquire), so it sees the values of
// the bits it takes. No mark is lost: a writer's store that races with a take may set
// bits again that the taker already took (it re-stores the word it loaded), which
// costs a second send, never a missed one; and a bit set after its chunk's summary bit
// was taken sets that summary bit again. Everything else (`for_each_run`,
// `for_each_run_or_dense`, `count`, `clear`, `resize`) runs while no take is in progress.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>

#include "heapgraph/virtual_array.hpp"

namespace gcvm {

class ChangeBitmap {
 public:
  static constexpr std::uint64_t kIndicesPerChunk = 4096;  // 64 words of entry bits
  static constexpr std::uint64_t kWordsPerChunk = kIndicesPerChunk / 64;

  /// Reserves address space for `max_indices` entries; nothing is committed yet.
  explicit ChangeBitmap(std::uint64_t max_indices);

  /// Makes indices [0, count) markable (never shrinks).
  bool resize(std::uint64_t count);
  std::uint64_t size() const { return size_; }

  void mark(std::uint64_t i) {
    set_bits(bits_[i >> 6], std::uint64_t{1} << (i & 63));
    set_bits(summary_[i / kIndicesPerChunk / 64], std::uint64_t{1} << ((i / kIndicesPerChunk) & 63));
  }

  /// Marks entries word * 64 + i for every set bit i of `bits` (all below size()).
  void mark_word(std::uint64_t word, std::uint64_t bits) {
    set_bits(bits_[word], bits);
    set_bits(summary_[word / kWordsPerChunk / 64], std::uint64_t{1} << ((word / kWordsPerChunk) & 63));
  }

  /// Calls `visit(begin, end)` for every maximal run of set bits in [from, limit), in
  /// increasing order (runs are cut at `from` and `limit`). Disjoint ranges may be
  /// visited from different threads at once.
  template <typename F>
  void for_each_run(std::uint64_t from, std::uint64_t limit, F&& visit) const;
  /// Like `for_each_run`, but dense stretches go whole to `dense(begin, end, set)` (`set`:
  /// the bits set in it), their runs never looked at: a popcount a word instead of a step
  /// a run. A dense stretch is a maximal sequence of consecutive whole chunks of [from,
  /// limit), built in index order from a chunk with at least half its bits set and
  /// joining each next chunk while at least half of the stretch's bits stay set, that
  /// spans `least_span` entries or more from its first set bit to its last (that span
  /// is what `dense` gets; shorter ones are visited run by run). Visits come in index
  /// order; runs are cut at a dense stretch's ends.
  template <typename Run, typename Dense>
  void for_each_run_or_dense(std::uint64_t from, std::uint64_t limit, std::uint64_t least_span, Run&& visit,
                             Dense&& dense) const;
  /// Like `for_each_run`, but clears the bits it visits, concurrently with `mark` (see
  /// above). `from` is a multiple of kIndicesPerChunk; `limit` is at most `size()` as
  /// the writer last published it to this thread (bits at or above it are neither
  /// visited nor cleared). Disjoint ranges may be taken from different threads at once.
  template <typename F>
  void take_runs(std::uint64_t from, std::uint64_t limit, F&& visit);
  /// Set bits below `limit` (a popcount over the words of marked chunks).
  std::uint64_t count(std::uint64_t limit) const;
  /// Set bits, counted chunk by chunk until there are at least `cap` (then a number
  /// >= cap): whether many entries changed costs a walk of the marked chunks at most,
  /// and less the more changed.
  std::uint64_t count_up_to(std::uint64_t cap) const;
  bool any() const;
  /// Whether entry i's bit is set; safe while the writer marks and a taker takes.
  bool marked(std::uint64_t i) const {
    const std::atomic_ref<std::uint64_t> word(const_cast<std::uint64_t&>(bits_[i >> 6]));  // only loaded
    return (word.load(std::memory_order_acquire) >> (i & 63) & 1) != 0;
  }
  /// The start of the first chunk marked in the summary from `from`'s chunk on, or
  /// `limit` (at most `size()` as the writer last published it) when none below it is:
  /// where a take or a walk from `from` finds something. Safe while the writer marks and
  /// a taker takes (a chunk marked after the read is found by the next call).
  std::uint64_t next_marked(std::uint64_t from, std::uint64_t limit) const;
  /// Chunks that may hold set bits (a popcount of the summary): an upper bound on the
  /// set bits / kIndicesPerChunk, and a lower bound on the words a walk visits.
  std::uint64_t marked_chunks() const;
  /// Clears every bit (in time proportional to the chunks that hold any).
  void clear();
  std::uint64_t generation() const { return generation_; }

 private:
  template <typename F>
  class RunJoiner;
  /// Always a store, even of bits already set: that store is what publishes the
  /// entries' new values to a taker that cleared the bits in the meantime.
  static void set_bits(std::uint64_t& word, std::uint64_t bits) {
    const std::atomic_ref<std::uint64_t> shared(word);
    shared.store(shared.load(std::memory_order_relaxed) | bits, std::memory_order_release);
  }
  std::uint64_t summary_words() const { return (size_ + kIndicesPerChunk * 64 - 1) / (kIndicesPerChunk * 64); }
  /// A dense stretch (for_each_run_or_dense): [begin, end) with `set` bits set, none
  /// when begin == end; the search for the next one goes on from `next_chunk`.
  struct DenseStretch {
    std::uint64_t begin = 0, end = 0, set = 0, next_chunk = 0;
  };
  /// The first dense stretch of whole chunks [first_chunk, end_chunk) spanning at least
  /// `least_span` entries.
  DenseStretch next_dense(std::uint64_t first_chunk, std::uint64_t end_chunk, std::uint64_t least_span) const;
  /// Calls `visit(chunk)` for every chunk marked in the summary that holds entries of
  /// [from, limit), in order, until it returns false; `limit` is at most size().
  template <typename F>
  void for_each_marked_chunk(std::uint64_t from, std::uint64_t limit, F&& visit) const;
  /// Calls `visit(word_index)` for every nonzero word of the chunks marked in the summary
  /// that holds bits of [from, limit), in order.
  template <typename F>
  void for_each_marked_word(std::uint64_t from, std::uint64_t limit, F&& visit) const;

  VirtualArray<std::uint64_t> bits_;     // one bit per entry
  VirtualArray<std::uint64_t> summary_;  // one bit per chunk
  std::uint64_t size_ = 0;
  std::uint64_t generation_ = 0;
};

template <typename F>
void ChangeBitmap::for_each_marked_chunk(std::uint64_t from, std::uint64_t limit, F&& visit) const {
  if (from >= limit) return;
  const std::uint64_t first_chunk = from / kIndicesPerChunk;
  const std::uint64_t end_chunk = (limit + kIndicesPerChunk - 1) / kIndicesPerChunk;
  for (std::uint64_t s = first_chunk / 64; s * 64 < end_chunk; ++s) {
    std::uint64_t chunks = summary_[s];
    if (s == first_chunk / 64) chunks &= ~std::uint64_t{0} << (first_chunk % 64);
    for (; chunks != 0; chunks &= chunks - 1) {
      const std::uint64_t chunk = s * 64 + static_cast<std::uint64_t>(std::countr_zero(chunks));
      if (chunk >= end_chunk || !visit(chunk)) return;
    }
  }
}

template <typename F>
void ChangeBitmap::for_each_marked_word(std::uint64_t from, std::uint64_t limit, F&& visit) const {
  limit = std::min(limit, size_);
  const std::uint64_t first_word = from / 64;
  const std::uint64_t limit_words = (limit + 63) / 64;
  for_each_marked_chunk(from, limit, [&](std::uint64_t chunk) {
    const std::uint64_t first = std::max(chunk * kWordsPerChunk, first_word);
    const std::uint64_t last = std::min(chunk * kWordsPerChunk + kWordsPerChunk, limit_words);
    for (std::uint64_t w = first; w < last; ++w)
      if (bits_[w] != 0) visit(w);
    return true;
  });
}

/// Joins the set bits of words, visited in increasing order, into maximal runs below
/// `limit_`, and passes each to `visit_`.
template <typename F>
class ChangeBitmap::RunJoiner {
 public:
  RunJoiner(std::uint64_t limit, F& visit) : limit_(limit), visit_(visit) {}
  void add(std::uint64_t w, std::uint64_t word) {
    while (word != 0) {
      const unsigned start = static_cast<unsigned>(std::countr_zero(word));
      const std::uint64_t shifted = word >> start;
      const unsigned length = shifted == ~std::uint64_t{0} ? 64u - start : static_cast<unsigned>(std::countr_one(shifted));
      const std::uint64_t begin = w * 64 + start;
      const std::uint64_t end = std::min(begin + length, limit_);
      if (begin >= limit_) break;
      if (begin == run_end_ && run_end_ != run_begin_) {
        run_end_ = end;
      } else {
        if (run_end_ != run_begin_) visit_(run_begin_, run_end_);
        run_begin_ = begin;
        run_end_ = end;
      }
      word = start + length >= 64 ? 0 : word & ~((~std::uint64_t{0} >> (64 - start - length)));
    }
  }
  void finish() {
    if (run_end_ != run_begin_) visit_(run_begin_, run_end_);
  }

 private:
  std::uint64_t limit_;
  F& visit_;
  std::uint64_t run_begin_ = 0, run_end_ = 0;  // the open run, empty when equal
};

template <typename F>
void ChangeBitmap::for_each_run(std::uint64_t from, std::uint64_t limit, F&& visit) const {
  limit = std::min(limit, size_);
  RunJoiner<F> runs(limit, visit);
  for_each_marked_word(from, limit, [&](std::uint64_t w) {
    std::uint64_t word = bits_[w];
    if (w == from / 64) word &= ~std::uint64_t{0} << (from % 64);
    runs.add(w, word);
  });
  runs.finish();
}

template <typename Run, typename Dense>
void ChangeBitmap::for_each_run_or_dense(std::uint64_t from, std::uint64_t limit, std::uint64_t least_span,
                                         Run&& visit, Dense&& dense) const {
  limit = std::min(limit, size_);
  const std::uint64_t end_chunk = limit / kIndicesPerChunk;
  std::uint64_t chunk = (from + kIndicesPerChunk - 1) / kIndicesPerChunk;
  for (std::uint64_t walked = from;;) {
    const DenseStretch stretch = next_dense(chunk, end_chunk, least_span);
    // One call of for_each_run's loop, so that the runs' path stays as tight as its own.
    for_each_run(walked, stretch.begin == stretch.end ? limit : stretch.begin, visit);
    if (stretch.begin == stretch.end) return;
    dense(stretch.begin, stretch.end, stretch.set);
    walked = stretch.end;
    chunk = stretch.next_chunk;
  }
}

template <typename F>
void ChangeBitmap::take_runs(std::uint64_t from, std::uint64_t limit, F&& visit) {
  if (from >= limit) return;
  const std::uint64_t first_chunk = from / kIndicesPerChunk;
  const std::uint64_t end_chunk = (limit + kIndicesPerChunk - 1) / kIndicesPerChunk;
  const bool last_chunk_partial = limit % kIndicesPerChunk != 0;  // its bits above `limit` stay
  const std::uint64_t limit_words = (limit + 63) / 64;
  RunJoiner<F> runs(limit, visit);
  for (std::uint64_t s = first_chunk / 64; s * 64 < end_chunk; ++s) {
    std::uint64_t in_range = ~std::uint64_t{0};
    if (s == first_chunk / 64) in_range &= ~std::uint64_t{0} << (first_chunk % 64);
    if (end_chunk < (s + 1) * 64) in_range &= (std::uint64_t{1} << (end_chunk % 64)) - 1;
    std::uint64_t whole = in_range;
    if (last_chunk_partial && (end_chunk - 1) / 64 == s) whole &= ~(std::uint64_t{1} << ((end_chunk - 1) % 64));
    const std::atomic_ref<std::uint64_t> summary(summary_[s]);
    // A read first: a take that finds nothing writes nothing (the writer's summary
    // words stay in its cache), and a bit set after the read is the next take's.
    if ((summary.load(std::memory_order_relaxed) & in_range) == 0) continue;
    std::uint64_t chunks = whole != 0 ? summary.fetch_and(~whole, std::memory_order_acq_rel) & whole : 0;
    chunks |= summary.load(std::memory_order_acquire) & (in_range & ~whole);
    for (; chunks != 0; chunks &= chunks - 1) {
      const std::uint64_t chunk = s * 64 + static_cast<std::uint64_t>(std::countr_zero(chunks));
      const std::uint64_t last = std::min(chunk * kWordsPerChunk + kWordsPerChunk, limit_words);
      for (std::uint64_t w = chunk * kWordsPerChunk; w < last; ++w) {
        const std::atomic_ref<std::uint64_t> bits(bits_[w]);
        if (bits.load(std::memory_order_relaxed) == 0) continue;
        const std::uint64_t mask = w * 64 + 64 <= limit ? ~std::uint64_t{0} : (std::uint64_t{1} << (limit % 64)) - 1;
        runs.add(w, bits.fetch_and(~mask, std::memory_order_acq_rel) & mask);
      }
    }
  }
  runs.finish();
}

}  // namespace gcvm
