// Independent models of the real snapshots the test fixtures make (make_java_dumps.sh,
// make_v8_snapshot.sh), shared by the import tests and the `gcvm replay` tests: each
// reads the whole file in memory, keys objects by their ids in hash maps and counts
// what is reachable with no passes, no handles, no sink and no CSR.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gcvm::test {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Independent HPROF model: trusts the file (it comes from a real JVM).
struct HprofModel {
  std::uint64_t objects = 0;
  std::uint64_t reachable = 0;
  std::unordered_map<std::string, std::uint64_t> instances, reachable_instances;  // by class name

  explicit HprofModel(const std::string& file) {
    std::size_t p = file.find('\0') + 1;
    auto u = [&](unsigned n) {
      std::uint64_t v = 0;
      for (unsigned i = 0; i < n; ++i) v = v << 8 | static_cast<unsigned char>(file[p++]);
      return v;
    };
    const unsigned id_size = static_cast<unsigned>(u(4));
    p += 8;
    auto size_of = [&](unsigned type) -> unsigned {
      static const unsigned sizes[] = {0, 0, 0, 0, 1, 2, 4, 8, 1, 2, 4, 8};
      return type == 2 ? id_size : sizes[type];
    };
    std::unordered_map<std::uint64_t, std::string> strings;
    std::unordered_map<std::uint64_t, std::uint64_t> class_name;  // class id -> string id
    struct Class {
      std::uint64_t super;
      std::vector<unsigned> field_types;
    };
    std::unordered_map<std::uint64_t, Class> classes;
    std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> out;
    std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::string>> instance_data;  // id -> class, bytes
    std::unordered_map<std::uint64_t, std::uint64_t> instance_class;
    std::vector<std::uint64_t> roots;
    while (p < file.size()) {
      const unsigned tag = static_cast<unsigned>(u(1));
      p += 4;
      const std::size_t end = p + u(4);
      if (tag == 0x01) {
        const std::uint64_t id = u(id_size);
        strings[id] = file.substr(p, end - p);
      } else if (tag == 0x02) {
        p += 4;
        const std::uint64_t id = u(id_size);
        p += 4;
        class_name[id] = u(id_size);
      } else if (tag == 0x0C || tag == 0x1C) {
        while (p < end) {
          const unsigned sub = static_cast<unsigned>(u(1));
          if (sub == 0xFF || (sub >= 0x01 && sub <= 0x08)) {
            roots.push_back(u(id_size));
            static const unsigned extra[] = {0, 1, 8, 8, 4, 0, 4, 0, 8};
            p += sub == 0xFF ? 0 : sub == 0x01 ? id_size : extra[sub];
          } else if (sub == 0x20) {
            const std::uint64_t id = u(id_size);
            p += 4;
            auto& edges = out[id];
            Class c{u(id_size), {}};
            edges.push_back(c.super);
            for (int i = 0; i < 3; ++i) edges.push_back(u(id_size));
            p += 2 * id_size + 4;
            for (int part = 0; part < 2; ++part)
              for (std::uint64_t n = u(2), i = 0; i < n; ++i) {
                p += part == 0 ? 2 : id_size;
                const unsigned type = static_cast<unsigned>(u(1));
                if (type == 2) edges.push_back(u(id_size)); else p += size_of(type);
              }
            for (std::uint64_t n = u(2), i = 0; i < n; ++i) {
              p += id_size;
              c.field_types.push_back(static_cast<unsigned>(u(1)));
            }
            classes[id] = c;
          } else if (sub == 0x21) {
            const std::uint64_t id = u(id_size);
            p += 4;
            const std::uint64_t cls = u(id_size);
            const std::size_t n = u(4);
            instance_data[id] = {cls, file.substr(p, n)};
            p += n;
          } else if (sub == 0x22) {
            const std::uint64_t id = u(id_size);
            p += 4;
            const std::uint64_t n = u(4);
            auto& edges = out[id];
            edges.push_back(u(id_size));
            for (std::uint64_t i = 0; i < n; ++i) edges.push_back(u(id_size));
          } else if (sub == 0x23) {
            const std::uint64_t id = u(id_size);
            p += 4;
            const std::uint64_t n = u(4);
            p += n * size_of(static_cast<unsigned>(u(1)));
            out[id];
          } else {
            FAIL("independent parser: unknown sub-record " << sub);
          }
        }
      }
      p = end;
    }
    for (const auto& [id, data] : instance_data) {
      auto& edges = out[id];
      edges.push_back(data.first);
      std::size_t q = 0;
      for (std::uint64_t c = data.first; classes.count(c); c = classes[c].super)
        for (unsigned type : classes[c].field_types) {
          if (type == 2) {
            std::uint64_t v = 0;
            for (unsigned i = 0; i < id_size; ++i) v = v << 8 | static_cast<unsigned char>(data.second[q + i]);
            edges.push_back(v);
          }
          q += size_of(type);
        }
      instance_class[id] = data.first;
      ++instances[strings[class_name[data.first]]];
    }
    objects = out.size();
    std::unordered_set<std::uint64_t> seen;
    std::vector<std::uint64_t> stack;
    for (auto r : roots)
      if (out.count(r) && seen.insert(r).second) stack.push_back(r);
    while (!stack.empty()) {
      const auto v = stack.back();
      stack.pop_back();
      for (auto t : out[v])
        if (out.count(t) && seen.insert(t).second) stack.push_back(t);
    }
    reachable = seen.size();
    for (auto v : seen)
      if (instance_class.count(v)) ++reachable_instances[strings[class_name[instance_class[v]]]];
  }
};

/// Independent V8 model: a DOM of the whole (small) file; every edge but `weak` is strong.
struct V8Model {
  std::uint64_t objects = 0;    // nodes
  std::uint64_t reachable = 0;  // from node 0
  std::unordered_map<std::string, std::uint64_t> object_names, reachable_object_names;  // nodes of type "object"

  explicit V8Model(const std::string& text) {
    const auto j = nlohmann::json::parse(text);
    const auto& meta = j["snapshot"]["meta"];
    const auto& node_fields = meta["node_fields"];
    const auto& edge_fields = meta["edge_fields"];
    auto index = [](const nlohmann::json& a, const char* name) {
      return static_cast<std::size_t>(std::find(a.begin(), a.end(), name) - a.begin());
    };
    const std::size_t nf = node_fields.size(), ef = edge_fields.size();
    const std::size_t edge_count = index(node_fields, "edge_count"), name_field = index(node_fields, "name");
    const std::size_t type_field = index(node_fields, "type");
    const std::size_t to_node = index(edge_fields, "to_node"), edge_type = index(edge_fields, "type");
    const auto& edge_types = meta["edge_types"][edge_type];
    const std::size_t weak = index(edge_types, "weak");
    const auto& node_types = meta["node_types"][type_field];
    const std::size_t object_type = index(node_types, "object");
    const std::vector<std::uint64_t> nodes = j["nodes"].get<std::vector<std::uint64_t>>();
    const std::vector<std::uint64_t> edges = j["edges"].get<std::vector<std::uint64_t>>();
    const std::vector<std::string> strings = j["strings"].get<std::vector<std::string>>();
    const std::size_t n = nodes.size() / nf;
    std::vector<std::size_t> first_edge(n + 1, 0);
    for (std::size_t v = 0; v < n; ++v) first_edge[v + 1] = first_edge[v] + nodes[v * nf + edge_count];
    std::vector<bool> seen(n, false);
    std::vector<std::size_t> stack{0};
    seen[0] = true;
    while (!stack.empty()) {
      const std::size_t v = stack.back();
      stack.pop_back();
      for (std::size_t e = first_edge[v]; e < first_edge[v + 1]; ++e) {
        if (edges[e * ef + edge_type] == weak) continue;
        const std::size_t t = edges[e * ef + to_node] / nf;
        if (!seen[t]) seen[t] = true, stack.push_back(t);
      }
    }
    std::unordered_map<std::string, std::uint64_t> reachable_objects, objects_by_name;
    for (std::size_t v = 0; v < n; ++v)
      if (nodes[v * nf + type_field] == object_type) {
        ++objects_by_name[strings[nodes[v * nf + name_field]]];
        if (seen[v]) ++reachable_objects[strings[nodes[v * nf + name_field]]];
      }
    objects = n;
    reachable = static_cast<std::uint64_t>(std::count(seen.begin(), seen.end(), true));
    object_names = objects_by_name;
    reachable_object_names = reachable_objects;
  }
};

}  // namespace gcvm::test
