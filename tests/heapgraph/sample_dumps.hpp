// Small hand-built heap files with known answers, shared by the importer tests, the
// malformed-input corpus and the fuzzers' seeds. Their graphs are described next to
// each function; the tests check every slot.
#pragma once

#include <cstdint>
#include <string>

#include "hprof_writer.hpp"

namespace gcvm::test {

/// Ids of the sample HPROF dump (shifted above 2^32 when ids are 8 bytes wide).
struct SampleHprofIds {
  std::uint64_t base;
  std::uint64_t s_reference, s_referent, s_next, s_value, s_base_ref, s_flag, s_static, s_queue;
  std::uint64_t i1, c_base, c_node, c_obj, c_arr, c_ref, i2, i3, a1, p1, r1, g1, garbage, loader;
  explicit SampleHprofIds(unsigned id_size) : base(id_size == 8 ? 0x700000000ULL : 0x1000) {
    std::uint64_t n = base;
    for (auto* p : {&s_reference, &s_referent, &s_next, &s_value, &s_base_ref, &s_flag, &s_static, &s_queue, &i1,
                    &c_base, &c_node, &c_obj, &c_arr, &c_ref, &i2, &i3, &a1, &p1, &r1, &g1, &garbage, &loader})
      *p = (n += 0x10);
  }
};

/// 14 objects, in file (= handle) order:
///   0 I1 (Node)  1 C_BASE  2 C_NODE  3 C_OBJ  4 C_ARR  5 C_REF  6 I2 (Node)  7 I3 (Obj)
///   8 A1 (Obj[])  9 P1 (int[3])  10 R1 (Reference)  11 G1 (Obj, only R1.referent)
///   12 GARBAGE (Node, unreachable)  13 L (Obj, C_BASE's class loader)
/// I1 precedes its class; Node extends Base, so a Node has fields next, value (own)
/// and base_ref, flag (inherited); I1.base_ref and one A1 element name ids that are
/// not in the dump. Roots: one sub-record of every ROOT_* kind (9 records, one to a
/// missing id, one duplicate), 7 distinct rooted objects.
inline std::string sample_hprof(unsigned id_size, const std::string& version = "JAVA PROFILE 1.0.2") {
  const SampleHprofIds k(id_size);
  HprofWriter w(id_size, version);
  w.string_record(k.s_reference, "java/lang/ref/Reference");
  w.string_record(k.s_referent, "referent");
  w.string_record(k.s_next, "next");
  w.string_record(k.s_value, "value");
  w.load_class(k.c_ref, k.s_reference);
  w.other_record(0x05, std::string(12, '\0'));  // a STACK TRACE, skipped

  w.begin_record(0x1C);  // HEAP_DUMP_SEGMENT
  w.instance(k.i1, k.c_node, {{2, k.i2}, {10, 7}, {2, k.base + 0xdead0}, {4, 1}});
  w.class_dump(k.c_base, 0, k.loader, 0, 0, {{2, k.i3}, {10, 5}}, {{k.s_static, 2, k.i1}, {k.s_static, 11, 9}},
               {{k.s_base_ref, 2}, {k.s_flag, 4}});
  w.end_record();

  w.begin_record(0x0C);  // HEAP_DUMP
  w.class_dump(k.c_node, k.c_base, 0, 0, 0, {}, {}, {{k.s_next, 2}, {k.s_value, 10}});
  w.class_dump(k.c_obj, 0, 0, 0, 0, {}, {}, {});
  w.class_dump(k.c_arr, k.c_obj, 0, 0, 0, {}, {}, {});
  w.class_dump(k.c_ref, k.c_obj, 0, 0, 0, {}, {}, {{k.s_referent, 2}, {k.s_queue, 2}});
  w.instance(k.i2, k.c_node, {{2, 0}, {10, 1}, {2, k.i1}, {4, 0}});
  w.instance(k.i3, k.c_obj, {});
  w.obj_array(k.a1, k.c_arr, {k.i2, 0, k.base + 0xbeef0, k.p1});
  w.prim_array(k.p1, 10, 3);
  w.instance(k.r1, k.c_ref, {{2, k.g1}, {2, 0}});
  w.instance(k.g1, k.c_obj, {});
  w.instance(k.garbage, k.c_node, {{2, k.i1}, {10, 3}, {2, 0}, {4, 0}});
  w.instance(k.loader, k.c_obj, {});
  w.root(0xFF, k.a1);
  w.root(0x01, k.c_node);
  w.root(0x02, k.i3);
  w.root(0x03, k.r1);
  w.root(0x04, k.base + 0xabc0);
  w.root(0x05, k.c_ref);
  w.root(0x06, k.i1);
  w.root(0x07, k.i1);
  w.root(0x08, k.loader);
  w.end_record();
  w.other_record(0x2C, "");  // HEAP_DUMP_END
  return w.bytes();
}

/// Six nodes (field layout from meta; node i's to_node is 7*i):
///   n0 (root) -property-> n1, -element-> n2     n1 -weak-> n3, -shortcut-> n2
///   n2 -internal-> n4    n3 (only weakly reachable)    n4 -context-> n0
///   n5 -hidden-> n4 (garbage)
/// self_size of n_i is 10*(i+1). `order` picks the section order ("snapshot,nodes,edges" is V8's).
inline std::string sample_v8(const std::string& order = "snapshot,nodes,edges") {
  const std::string snapshot =
      R"("snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness"],)"
      R"("node_types":[["hidden","array","string","object","code","closure"],"string","number","number","number","number","number"],)"
      R"("edge_fields":["type","name_or_index","to_node"],)"
      R"("edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"],)"
      R"("location_fields":["object_index","script_id","line","column"]},"node_count":6,"edge_count":7})";
  const std::string nodes =
      "\"nodes\":[9,0,1,10,2,0,0,\n3,1,3,20,2,0,0,\n3,2,5,30,1,0,0,\n2,3,7,40,0,0,0,\n5,1,9,50,1,0,0,\n3,2,11,60,1,0,0]";
  const std::string edges = "\"edges\":[2,1,7,1,0,14,\n6,2,21,5,1,14,\n3,1,28,\n0,3,0,\n4,1,28]";
  std::string out = "{";
  std::string rest = order + ",";
  for (std::size_t at = 0; (at = rest.find(',')) != std::string::npos; rest.erase(0, at + 1)) {
    const std::string section = rest.substr(0, at);
    out += section == "snapshot" ? snapshot : section == "nodes" ? nodes : edges;
    out += ",\n";
  }
  out += R"("trace_function_infos":[],"trace_tree":[],"samples":[],"locations":[],"strings":["","a","b","c"]})";
  return out + "\n";
}

}  // namespace gcvm::test
