// How collection statistics are shown: a human summary and a JSON object with the
// same figures (machine-readable, one object per run, stable key names).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gc/collector.hpp"

namespace gcvm {

nlohmann::json collection_json(const CollectionStats& stats);
std::string collection_summary(const CollectionStats& stats);

}  // namespace gcvm
