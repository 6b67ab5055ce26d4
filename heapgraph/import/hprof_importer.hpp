// Imports a Java HPROF heap dump ("JAVA PROFILE 1.0.1"/"1.0.2", as written by
// `jcmd <pid> GC.heap_dump [-all] FILE`, identifier size 4 or 8, HEAP_DUMP and
// HEAP_DUMP_SEGMENT records) into a HeapSink.
//
// Mapping. Objects are the CLASS_DUMP, INSTANCE_DUMP, OBJ_ARRAY_DUMP and
// PRIM_ARRAY_DUMP sub-records, in file order. Reference slots:
//   class        super, class loader, signers, protection domain, then every
//                object-typed constant-pool entry, then every object-typed static
//   instance     its class, then its object-typed fields in dump order (the class's
//                own fields, then its superclass's, ... as described by the class
//                dumps' field descriptors)
//   object array its array class, then its elements (a reference array of n+1 slots)
//   prim array   none
// A reference to id 0 is null; a reference to an id that is not an object in the dump
// is dropped (its slot stays null, counted in edges_dropped). Roots: the object of
// every ROOT_* sub-record (ROOT_UNKNOWN, JNI_GLOBAL, JNI_LOCAL, JAVA_FRAME,
// NATIVE_STACK, STICKY_CLASS, THREAD_BLOCK, MONITOR_USED, THREAD_OBJECT), each object
// rooted once. With WeakRefs::Weak, the field named "referent" declared by the class
// named "java/lang/ref/Reference" (found through STRING and LOAD_CLASS records) is
// not followed (edges_weak).
//
// Unsorted input and bounded memory. HPROF is not sorted: an instance may precede
// its class dump, and any object may reference objects further on. The importer
// therefore reads the file three times, keeping only O(objects) small integers:
//   pass 1  records every object id in file order (8 bytes per object), the class
//           dumps' descriptors (O(classes x fields)), the ids of the two strings it
//           looks for and the LOAD_CLASS name table (O(classes)); then sorts (id,
//           handle) pairs (24 bytes per object at the peak) into an id -> handle
//           index: sorted ids, their handles and value-range buckets over the ids
//           (16 bytes per object);
//   pass 2  creates every object in file order, each with its final slot count;
//   pass 3  stores every reference and marks roots (one bit per object); the roots
//           are added to the sink at the end, in handle order.
// Passes 2 and 3 exist separately because a sink may require a reference's target to
// exist when the reference is stored. Object data that a pass does not need is
// skipped by seeking, so passes 1 and 2 read little more than the record headers.
// Every length and count in the file is checked against the bytes left in its record
// before it is used; nothing is allocated from an unchecked count.
#pragma once

#include <istream>
#include <string>

#include "heapgraph/heap_sink.hpp"
#include "heapgraph/import/import_options.hpp"

namespace gcvm {

/// Imports the dump in `in` (a seekable stream; `name` is used in errors). Throws
/// ImportError (file and byte offset) on malformed input.
ImportSummary import_hprof(std::istream& in, const std::string& name, HeapSink& sink, const ImportOptions& options = {});

}  // namespace gcvm
