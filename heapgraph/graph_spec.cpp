#include "heapgraph/graph_spec.hpp"

#include <charconv>
#include <vector>

namespace gcvm {

namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t pos = text.find(sep, start);
    parts.push_back(text.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

std::uint64_t parse_count(std::string_view spec, std::string_view what, std::string_view digits, std::uint64_t min,
                          std::uint64_t max) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size())
    throw SpecError("graph spec '" + std::string(spec) + "': " + std::string(what) + " '" + std::string(digits) +
                    "' is not a whole number");
  if (value < min || value > max)
    throw SpecError("graph spec '" + std::string(spec) + "': " + std::string(what) + " must be between " +
                    std::to_string(min) + " and " + std::to_string(max) + ", got " + std::to_string(value));
  return value;
}

[[noreturn]] void bad_form(std::string_view spec) {
  throw SpecError("graph spec '" + std::string(spec) + "' is not one of: " + std::string(graph_spec_forms()));
}

constexpr std::uint64_t kMaxObjects = std::uint64_t{1} << 32;
constexpr std::uint64_t kMaxBulkDegree = 16;  // plain objects (synthetic_heaps.hpp, kMaxInlineReferences)

}  // namespace

std::string_view graph_spec_forms() {
  return "single, list:N, lists:KxN, wide:N, vp-list, vp-array, complete:N:R, tree:DEPTH, rmat:SCALE[:EF], "
         "random:N:DEGREE, bulk:N:DEGREE";
}

GraphSpec parse_graph_spec(std::string_view text) {
  GraphSpec spec;
  spec.text = std::string(text);
  const auto parts = split(text, ':');
  const std::string_view name = parts[0];
  auto expect_parts = [&](std::size_t min, std::size_t max) {
    if (parts.size() < min || parts.size() > max) bad_form(text);
  };
  if (name == "single") {
    expect_parts(1, 1);
    spec.kind = SpecKind::Single;
  } else if (name == "list") {
    expect_parts(2, 2);
    spec.kind = SpecKind::List;
    spec.a = parse_count(text, "N", parts[1], 1, kMaxObjects);
  } else if (name == "lists") {
    expect_parts(2, 2);
    const auto kn = split(parts[1], 'x');
    if (kn.size() != 2) bad_form(text);
    spec.kind = SpecKind::Lists;
    spec.a = parse_count(text, "K", kn[0], 1, kMaxObjects);
    spec.b = parse_count(text, "N", kn[1], 1, kMaxObjects);
  } else if (name == "wide") {
    expect_parts(2, 2);
    spec.kind = SpecKind::Wide;
    spec.a = parse_count(text, "N", parts[1], 0, kMaxObjects);
  } else if (name == "vp-list") {
    expect_parts(1, 1);
    spec.kind = SpecKind::VpList;
  } else if (name == "vp-array") {
    expect_parts(1, 1);
    spec.kind = SpecKind::VpArray;
  } else if (name == "complete") {
    expect_parts(3, 3);
    spec.kind = SpecKind::Complete;
    spec.a = parse_count(text, "N", parts[1], 1, std::uint64_t{1} << 20);
    spec.b = parse_count(text, "R", parts[2], 0, spec.a);
  } else if (name == "tree") {
    expect_parts(2, 2);
    spec.kind = SpecKind::Tree;
    spec.a = parse_count(text, "DEPTH", parts[1], 0, 30);
  } else if (name == "rmat") {
    expect_parts(2, 3);
    spec.kind = SpecKind::Rmat;
    spec.a = parse_count(text, "SCALE", parts[1], 1, 31);
    spec.b = parts.size() == 3 ? parse_count(text, "EF", parts[2], 1, 1024) : 16;
  } else if (name == "random") {
    expect_parts(3, 3);
    spec.kind = SpecKind::Random;
    spec.a = parse_count(text, "N", parts[1], 1, kMaxObjects);
    spec.b = parse_count(text, "DEGREE", parts[2], 0, std::uint64_t{1} << 20);
  } else if (name == "bulk") {
    expect_parts(3, 3);
    spec.kind = SpecKind::Bulk;
    spec.a = parse_count(text, "N", parts[1], 1, kMaxObjects);
    spec.b = parse_count(text, "DEGREE", parts[2], 0, kMaxBulkDegree);
  } else {
    bad_form(text);
  }
  return spec;
}

GraphSpec::Size GraphSpec::estimate() const {
  switch (kind) {
    case SpecKind::Single: return {1, 0};
    case SpecKind::List: return {a, a - 1};
    case SpecKind::Lists: return {a * b, a * (b - 1)};
    case SpecKind::Wide: return {a + 1, a};
    case SpecKind::VpList: return {16 * 8192, 16 * 8191};
    case SpecKind::VpArray: return {1024 * 1025, 1024 * 1024};
    case SpecKind::Complete: return {a, a * (a - 1)};
    case SpecKind::Tree: return {(std::uint64_t{2} << a) - 1, (std::uint64_t{2} << a) - 2};
    case SpecKind::Rmat: return {std::uint64_t{1} << a, b << a};
    case SpecKind::Random:
    case SpecKind::Bulk: return {a, a * b};
  }
  return {};
}

}  // namespace gcvm
