// The plots of `gcvm compare --out=DIR`, drawn by gnuplot (vm/cli/gnuplot.hpp):
//   timeline.png  each configuration's pauses over its run (the run of median run
//                 time): every collection at its start time, its pause as its height;
//   pauses.png    the pause histogram of every configuration (log-spaced bins shared
//                 by all, collections per run, over all measured runs);
//   mmu.png       the minimum mutator utilization of every configuration for windows
//                 of 1 ms to 1 s (at each window the median over the measured runs).
// Their data (timeline.dat, pauses.dat, mmu.dat) and the script (plots.gp) stay in DIR.
#pragma once

#include <filesystem>
#include <string>

#include "vm/compare/comparison.hpp"

namespace gcvm::compare {

/// Writes the data files and plots.gp into `dir` (extension "png" or "svg"); returns
/// an empty string when gnuplot drew them, else why it did not.
std::string draw_plots(const Comparison& comparison, const std::filesystem::path& dir, const std::string& extension);

}  // namespace gcvm::compare
