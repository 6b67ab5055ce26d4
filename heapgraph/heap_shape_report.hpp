// Writes a HeapShape (heap_shape.hpp) as data files and as a gnuplot script that draws
// them; the CLI (`gcvm analyze`) decides where they go and runs gnuplot.
//
//   levels.csv   step,uncapped,cap<W>,...   objects taken at each BFS step; a cell is
//                empty once that traversal has finished
//   degrees.csv  degree,objects,cumulative_share   reachable objects per out-degree
//   shape.json   every figure, the level series and the degree histogram
//   plots.gp     a gnuplot script drawing levels.<ext> and degrees.<ext> from the CSVs
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "heapgraph/heap_shape.hpp"

namespace gcvm {

std::string levels_csv(const HeapShape& shape);
std::string degrees_csv(const HeapShape& shape);
nlohmann::json heap_shape_json(const HeapShape& shape);

enum class PlotFormat { Png, Svg };

/// A gnuplot script that reads levels.csv and degrees.csv from `dir` and writes
/// levels.png/.svg and degrees.png/.svg there; `title` heads both plots.
std::string gnuplot_script(const HeapShape& shape, const std::string& dir, const std::string& title, PlotFormat format);

}  // namespace gcvm
