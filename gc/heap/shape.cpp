#include "gc/heap/shape.hpp"

#include <algorithm>
#include <stdexcept>

namespace gcvm {

ShapeTable::ShapeTable() {
  add({ShapeKind::RefArray, 0, 2});
  add({ShapeKind::ScalarArray, 0, 2});
}

ShapeId ShapeTable::intern(std::uint32_t ref_fields, std::uint32_t scalar_fields) {
  const Shape shape{ShapeKind::Object, ref_fields, scalar_fields};
  const std::uint64_t key = (std::uint64_t{ref_fields} << 32) | scalar_fields;
  if (auto it = object_shapes_.find(key); it != object_shapes_.end()) return it->second;
  const std::uint64_t bytes = object_bytes(ref_fields, scalar_fields);
  if (bytes > kMaxObjectBytes)
    throw std::length_error("an object with " + std::to_string(ref_fields) + " reference and " +
                            std::to_string(scalar_fields) + " scalar fields needs " + std::to_string(bytes) +
                            " bytes; at most " + std::to_string(kMaxObjectBytes) + " fit a block (use an array)");
  const ShapeId id = add(shape);
  object_shapes_.emplace(key, id);
  return id;
}

ShapeId ShapeTable::add(Shape shape) {
  ShapeLayout layout;
  layout.shape = shape;
  const std::uint32_t bytes = shape.ref_fields * 4 + shape.scalar_fields * 8;
  // Leave room for the padding that aligns the scalar arrays to 8 bytes.
  std::uint32_t capacity = bytes == 0 ? 64 : std::min<std::uint32_t>(64, kBlockBytes / bytes);
  while (capacity > 1 && ((shape.ref_fields * capacity * 4 + 7) & ~7u) + shape.scalar_fields * capacity * 8 > kBlockBytes)
    --capacity;
  layout.capacity = capacity;
  layout.scalar_offset = (shape.ref_fields * capacity * 4 + 7) & ~7u;
  layout.full_mask = capacity == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << capacity) - 1;
  layouts_.push_back(layout);
  return static_cast<ShapeId>(layouts_.size() - 1);
}

}  // namespace gcvm
