#include "vm/cli/gnuplot.hpp"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fstream>

#include "vm/cli/commands.hpp"

extern char** environ;

namespace gcvm::cli {

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw UsageError(fmt::format("cannot write {}", path.string()));
}

void create_output_directory(const std::filesystem::path& dir, const std::string& flag) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw UsageError(fmt::format("{}={}: cannot create the directory ({})", flag, dir.string(), error.message()));
}

std::string run_gnuplot(const std::string& script) {
  const char* argv[] = {"gnuplot", script.c_str(), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "gnuplot", nullptr, nullptr, const_cast<char* const*>(argv), environ);
  if (spawned != 0) return "gnuplot could not be started (is it installed? Debian: gnuplot-nox)";
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return "waiting for gnuplot failed";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return WIFEXITED(status) && WEXITSTATUS(status) == 127 ? "gnuplot is not installed (Debian: gnuplot-nox)"
                                                           : "gnuplot failed on " + script;
  return "";
}

std::string gnuplot_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace gcvm::cli
