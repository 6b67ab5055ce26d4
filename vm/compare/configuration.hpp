// What `gcvm compare` runs: one workload (a guest program with its arguments, a heap
// trace or dump, or a synthetic heap) under several configurations, each a
// collector with its options. A configuration is written as whitespace-separated
// key=value words, e.g. "gc=gpu-bfs device=cuda opt=offsets=prefix plan=generational",
// on the command line (--config) or in a JSON file (--configs). Everything is
// checked here, before the first run: a malformed configuration is one UsageError
// naming it and the word at fault, so a long comparison never stops half-way on a
// typo. What cannot be known before running (whether a device is usable) is the
// run's to find out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gcvm::compare {

enum class WorkloadKind { Program, HeapFile, Graph };

struct Workload {
  WorkloadKind kind = WorkloadKind::Program;
  std::string target;                 // the .gasm program, the heap file or the graph spec
  std::vector<std::string> args;      // guest arguments (programs)
  std::vector<std::string> flags;     // flags every run gets (--heap, --collections, ...)
  /// "program binary_trees.gasm 14", "heap file x.trace", "graph rmat:16".
  std::string describe() const;
};

struct Configuration {
  std::string name;                // its column in the table: name=..., else its words
  std::string text;                // the words as given
  std::vector<std::string> flags;  // the gcvm flags they stand for (--gc=..., --plan=...)
};

/// The keys a configuration may use, for help texts and errors.
std::string_view configuration_keys();

/// Parses one configuration of `workload`; `where` names it in errors ("--config 'x'").
Configuration parse_configuration(std::string_view text, WorkloadKind workload, const std::string& where);

/// The configurations of a JSON file: an array (or {"configurations": [...]}) whose
/// items are configuration strings or objects of the same keys, e.g.
/// {"name": "bfs", "gc": "gpu-bfs", "opt": ["offsets=prefix"], "threads": 2}.
std::vector<Configuration> read_configuration_file(const std::string& path, WorkloadKind workload);

/// Throws when two configurations share a name; returns the index of `baseline`
/// (the first configuration when empty).
std::size_t check_configurations(const std::vector<Configuration>& configurations, const std::string& baseline);

/// The child command line of one run: `gcvm run|replay|mark ...` with the workload,
/// the configuration's flags and --stats-json=`stats_path` (argv[0] is `self`).
std::vector<std::string> run_command(const std::string& self, const Workload& workload,
                                     const Configuration& configuration, const std::string& stats_path);

}  // namespace gcvm::compare
