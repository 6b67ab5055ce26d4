// Object shapes and their SOA layout inside a block.
//
// A shape is the type-level information the GC needs: how many reference fields and
// scalar fields an object has, or that it is an array. Every block holds objects of
// exactly one shape. Within a block, fields are stored structure-of-arrays:
//
//   [ref field 0 of slots 0..cap-1][ref field 1 ...]...[scalar field 0 of slots 0..cap-1]...
//
// References are 32-bit object ids (invariant 1: heap references and CSR edges are
// the same numbers); scalars are 64-bit (int64 or the bits of a double).
//
// Block capacity follows the thesis (§5.2.2): cap = floor(kBlockBytes / object size),
// at most 64. In contrast to the thesis, where the smallest type fixes the block size
// at compile time, gcvm's shapes come from guest programs at run time, so the block
// size is a build constant (GCVM_BLOCK_BYTES) chosen so that objects of up to 32 bytes
// get all 64 slots.
//
// Arrays are objects too: an array's block slot holds a two-scalar header (length,
// storage address); the elements live out of line (ArrayStore), and a reference
// array's elements are its CSR out-edges in index order.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "heapgraph/object_id.hpp"

#ifndef GCVM_BLOCK_BYTES
#define GCVM_BLOCK_BYTES 2048
#endif

namespace gcvm {

inline constexpr std::uint32_t kBlockBytes = GCVM_BLOCK_BYTES;
static_assert(kBlockBytes % 64 == 0 && kBlockBytes >= 64 * 16, "a block must fit 64 array headers");

using ShapeId = std::uint32_t;

enum class ShapeKind : std::uint8_t { Object, RefArray, ScalarArray };

struct Shape {
  ShapeKind kind = ShapeKind::Object;
  std::uint32_t ref_fields = 0;
  std::uint32_t scalar_fields = 0;
  friend bool operator==(const Shape&, const Shape&) = default;
};

struct ShapeLayout {
  Shape shape;
  std::uint32_t capacity = 0;       // objects per block, 1..64
  std::uint32_t scalar_offset = 0;  // byte offset of the first scalar SOA array
  std::uint64_t full_mask = 0;      // allocation bitmap of a full block
  std::uint32_t ref_offset(std::uint32_t field) const { return field * capacity * 4; }
  std::uint32_t scalar_field_offset(std::uint32_t field) const { return scalar_offset + field * capacity * 8; }
};

/// Scalar header fields of array objects.
inline constexpr std::uint32_t kArrayLengthField = 0;
inline constexpr std::uint32_t kArrayStorageField = 1;

/// Interns shapes; ids are dense and stable. Ids 0 and 1 are the two array shapes.
class ShapeTable {
 public:
  static constexpr ShapeId kRefArray = 0;
  static constexpr ShapeId kScalarArray = 1;
  /// The largest object whose layout fits one block.
  static constexpr std::uint32_t kMaxObjectBytes = kBlockBytes;
  /// The bytes of one object with these fields (a reference 4, a scalar 8), padding aside.
  static constexpr std::uint64_t object_bytes(std::uint32_t ref_fields, std::uint32_t scalar_fields) {
    return std::uint64_t{ref_fields} * 4 + std::uint64_t{scalar_fields} * 8;
  }

  ShapeTable();
  /// Returns the id of an object shape; throws std::length_error if it cannot fit a block.
  ShapeId intern(std::uint32_t ref_fields, std::uint32_t scalar_fields);
  const ShapeLayout& layout(ShapeId id) const { return layouts_[id]; }
  std::size_t size() const { return layouts_.size(); }

 private:
  ShapeId add(Shape shape);
  std::vector<ShapeLayout> layouts_;
  std::unordered_map<std::uint64_t, ShapeId> object_shapes_;
};

}  // namespace gcvm
