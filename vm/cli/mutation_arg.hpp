// The --mutate flag of `gcvm replay`: a comma-separated list of key=value items that
// becomes a MutationSpec (gc/mutator/synthetic_mutator.hpp), e.g.
// `--mutate=rewire=0.01,garbage=64M,replace=0.001`:
//   rewire=F   fraction (0..1) of the live references rewired per round
//   replace=F  fraction (0..1) of the live objects replaced by fresh copies per round
//   garbage=S  bytes of garbage allocated per round (a size: 64M, 512K, 1048576)
// Each key at most once; "none" is the empty spec. Anything else is one UsageError.
#pragma once

#include <string>

#include "gc/mutator/synthetic_mutator.hpp"

namespace gcvm::cli {

/// The spec named by `--mutate=TEXT`; throws UsageError naming the bad item.
MutationSpec parse_mutation_flag(const std::string& text);

}  // namespace gcvm::cli
