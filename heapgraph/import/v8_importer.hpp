// Imports a V8 heap snapshot (.heapsnapshot JSON, as written by
// v8.writeHeapSnapshot() or Chrome DevTools) into a HeapSink.
//
// Mapping. Every node becomes one object whose reference slots are its edges in file
// order (node i's edges are the next edge_count(i) entries of "edges"). The field
// layout is read from snapshot.meta: node_fields must name "edge_count" (and may name
// "self_size", which becomes the object's bytes), edge_fields must name "type" and
// "to_node", and edge_types[type] lists the edge type names. Every edge type except
// "weak" is strong; weak edges leave their slot null and count as edges_weak. The
// root is node 0 (V8's synthetic root, which references "(GC roots)" and the global
// objects). A to_node that is not the index of a node's first field is bad input.
//
// Streaming and memory. The JSON is parsed with nlohmann::json's SAX interface: no
// DOM of the file is ever built. Objects are created while "nodes" streams by, and
// references stored while "edges" streams by, so the importer itself keeps one
// 32-bit edge count per node (needed to know which node an edge belongs to) and the
// few strings of snapshot.meta. When the sections are not in the usual order
// (snapshot, nodes, edges) the file is read again: each pass handles the sections
// whose prerequisites are known, at most three passes. A node's declared edge count
// is checked against the bytes left in the file before any slot is created, so a
// forged count cannot allocate more than the file could describe.
#pragma once

#include <istream>
#include <string>

#include "heapgraph/heap_sink.hpp"
#include "heapgraph/import/import_options.hpp"

namespace gcvm {

/// Imports the snapshot in `in` (a seekable stream; `name` is used in errors). Throws
/// ImportError (file and byte offset) on malformed input.
ImportSummary import_v8_snapshot(std::istream& in, const std::string& name, HeapSink& sink,
                                 const ImportOptions& options = {});

}  // namespace gcvm
