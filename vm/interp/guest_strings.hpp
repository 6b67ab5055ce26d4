// Guest strings on any heap binding: the layout the STR* opcodes share (opcodes.hpp).
//
// A string is a scalar array of 1 + ceil(n / 8) elements for n bytes: element 0 holds
// n, the bytes follow eight per element, little-endian (byte i is bits 8*(i%8) .. of
// element 1 + i/8). Strings are immutable once written; they hold no references, so
// the collectors see a string as one object without edges. Characters are bytes
// (0..255); the guest language has no separate character type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gcvm::vm::guest_strings {

/// Elements of the scalar array that holds `bytes` bytes.
inline std::uint64_t elements_for(std::uint64_t bytes) { return 1 + (bytes + 7) / 8; }

template <class Binding>
std::uint64_t length(const Binding& heap, typename Binding::Ref s) {
  return heap.load_scalar_element(s, 0);
}

template <class Binding>
std::uint64_t char_at(const Binding& heap, typename Binding::Ref s, std::uint64_t i) {
  return (heap.load_scalar_element(s, 1 + i / 8) >> (8 * (i % 8))) & 0xFF;
}

/// Bytes `from` .. `to` (exclusive) of a string; the caller checks the range. Reads
/// only the elements that hold them.
template <class Binding>
std::string bytes(const Binding& heap, typename Binding::Ref s, std::uint64_t from, std::uint64_t to) {
  std::string out(to - from, '\0');
  for (std::uint64_t i = from; i < to;) {
    const std::uint64_t word = heap.load_scalar_element(s, 1 + i / 8);
    for (std::uint64_t b = i % 8; b < 8 && i < to; ++b, ++i) out[i - from] = static_cast<char>((word >> (8 * b)) & 0xFF);
  }
  return out;
}

/// The bytes of a string.
template <class Binding>
std::string bytes(const Binding& heap, typename Binding::Ref s) {
  return bytes(heap, s, 0, length(heap, s));
}

/// Fills a freshly allocated array of elements_for(text.size()) elements.
template <class Binding>
void write(Binding& heap, typename Binding::Ref s, std::string_view text) {
  heap.store_scalar_element(s, 0, text.size());
  for (std::uint64_t w = 0; w * 8 < text.size(); ++w) {
    std::uint64_t word = 0;
    for (std::uint64_t b = 0; b < 8 && w * 8 + b < text.size(); ++b)
      word |= std::uint64_t{static_cast<unsigned char>(text[w * 8 + b])} << (8 * b);
    heap.store_scalar_element(s, 1 + w, word);
  }
}

/// Same length and bytes (the padding of the last element is always zero).
template <class Binding>
bool equal(const Binding& heap, typename Binding::Ref a, typename Binding::Ref b) {
  if (a == b) return true;
  const std::uint64_t n = length(heap, a);
  if (n != length(heap, b)) return false;
  for (std::uint64_t w = 1; w < elements_for(n); ++w)
    if (heap.load_scalar_element(a, w) != heap.load_scalar_element(b, w)) return false;
  return true;
}

/// The first differing byte's difference (bytes unsigned), else the difference of the
/// lengths: Java's String.compareTo on byte strings.
template <class Binding>
std::int64_t compare(const Binding& heap, typename Binding::Ref a, typename Binding::Ref b) {
  const std::uint64_t na = length(heap, a), nb = length(heap, b);
  for (std::uint64_t i = 0; i < na && i < nb; ++i) {
    const std::uint64_t ca = char_at(heap, a, i), cb = char_at(heap, b, i);
    if (ca != cb) return static_cast<std::int64_t>(ca) - static_cast<std::int64_t>(cb);
  }
  return static_cast<std::int64_t>(na) - static_cast<std::int64_t>(nb);
}

/// Java's String.hashCode over the bytes (s[0]*31^(n-1) + ... + s[n-1], 32-bit wrap),
/// so that hash tables written in the guest language are deterministic.
template <class Binding>
std::int64_t hash(const Binding& heap, typename Binding::Ref s) {
  const std::uint64_t n = length(heap, s);
  std::uint32_t h = 0;
  for (std::uint64_t i = 0; i < n; ++i) h = 31 * h + static_cast<std::uint32_t>(char_at(heap, s, i));
  return static_cast<std::int32_t>(h);
}

}  // namespace gcvm::vm::guest_strings
