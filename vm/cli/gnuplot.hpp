// Drawing plots with gnuplot, shared by the subcommands that draw them (analyze,
// compare): each writes its data files and a gnuplot script into its --out directory
// and runs `gnuplot SCRIPT` as a child process. A missing or failing gnuplot is not
// an error of the command: it says why no plots were drawn and keeps the data files.
#pragma once

#include <filesystem>
#include <string>

namespace gcvm::cli {

/// Writes `text` to `path`; a UsageError when it cannot be written.
void write_text_file(const std::filesystem::path& path, const std::string& text);

/// Creates `dir` (and its parents) for `flag` (as in "--out=DIR"); a UsageError when it cannot.
void create_output_directory(const std::filesystem::path& dir, const std::string& flag);

/// Runs `gnuplot SCRIPT`; returns an empty string on success, else why it failed.
std::string run_gnuplot(const std::string& script);

/// `text` quoted for a gnuplot string literal (double quotes, backslashes escaped).
std::string gnuplot_quoted(const std::string& text);

}  // namespace gcvm::cli
