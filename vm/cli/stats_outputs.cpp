#include "vm/cli/stats_outputs.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "vm/cli/commands.hpp"

namespace gcvm::cli {

void add_gc_log_flag(CLI::App& cmd, std::string& target, std::string_view usual_stream) {
  cmd.add_flag(std::string("--gc-log{") + kGcLogUsualStream + "}", target,
               fmt::format("One line per collection on {}, or with --gc-log=FILE in FILE (docs/comparing-collectors.md)",
                           usual_stream));
}

void add_stats_json_flag(CLI::App& cmd, std::string& target) {
  cmd.add_option("--stats-json", target, "Also write the --stats=json object to this file");
}

GcLog::GcLog(const std::string& target, std::FILE* usual_stream) {
  if (target.empty()) return;
  if (target == kGcLogUsualStream) {
    out_ = usual_stream;
    return;
  }
  out_ = std::fopen(target.c_str(), "w");
  if (out_ == nullptr) throw UsageError(fmt::format("--gc-log={}: cannot open the file ({})", target, std::strerror(errno)));
  owned_ = true;
}

GcLog::~GcLog() {
  if (owned_) std::fclose(out_);
}

void GcLog::write(std::string_view text) const {
  if (out_ != nullptr) std::fwrite(text.data(), 1, text.size(), out_);
}

void write_stats_json(const std::string& path, const nlohmann::json& stats) {
  if (path.empty()) return;
  std::ofstream out(path, std::ios::binary);
  out << stats.dump() << "\n";
  if (!out) throw UsageError(fmt::format("--stats-json={}: cannot write the file", path));
}

}  // namespace gcvm::cli
