#include "vm/compare/configuration.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <optional>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gc/markers/gc_options.hpp"
#include "gc/markers/marker_registry.hpp"
#include "vm/cli/commands.hpp"
#include "vm/cli/size_arg.hpp"

namespace gcvm::compare {

using cli::UsageError;

namespace {

/// A key, the gcvm flag it becomes, and whether it applies to guest programs only.
struct Key {
  std::string_view name;
  std::string_view flag;
  bool program_only;
};

constexpr Key kKeys[] = {
    {"gc", "--gc", false},           {"opt", "--gc-opt", false},        {"threads", "--gc-threads", false},
    {"device", "--device", false},   {"heap", "--heap", false},         {"plan", "--plan", true},
    {"nursery", "--nursery", true},  {"promotion-age", "--promotion-age", true},
    {"full-trigger", "--full-trigger", true}, {"refgraph", "--refgraph", true},
    {"concurrent-trigger", "--concurrent-trigger", true},
};

std::optional<std::uint64_t> whole_number(std::string_view text, std::uint64_t min, std::uint64_t max) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || v < min || v > max) return std::nullopt;
  return v;
}

bool device_spelling(std::string_view value) {
  if (value.empty()) return false;
  for (char c : value)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == ':' ||
          c == ','))
      return false;
  return true;
}

/// Why `value` is not a value of `key`, or an empty string.
std::string check_value(std::string_view key, std::string_view value) {
  auto one_of = [&](std::initializer_list<std::string_view> allowed) {
    for (std::string_view a : allowed)
      if (value == a) return std::string();
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : "|") + std::string(a);
    return fmt::format("{} is one of {}", key, list);
  };
  if (key == "gc") {
    std::string names;
    for (std::string_view n : collector_names()) {
      if (n == value) return "";
      names += (names.empty() ? "" : "|") + std::string(n);
    }
    return fmt::format("unknown collector '{}' (this gcvm has {})", value, names);
  }
  if (key == "opt") {
    try {
      parse_gc_option(value);
    } catch (const ConfigError&) {
      return fmt::format("opt={} is not key=value (e.g. opt=offsets=prefix)", value);
    }
    return "";
  }
  if (key == "threads") return whole_number(value, 0, 4096) ? "" : "threads is a count from 0 (every core) to 4096";
  if (key == "device")
    return device_spelling(value) ? "" : "device is auto, cuda or opencl, optionally :N, or a list (e.g. cuda:0,cuda:1)";
  if (key == "heap" || key == "nursery") {
    const auto bytes = parse_byte_size(value);
    return bytes && *bytes > 0 ? "" : fmt::format("{}={} is not a size (examples: 512K, 64M)", key, value);
  }
  if (key == "plan") return one_of({"marksweep", "generational", "concurrent"});
  if (key == "promotion-age") return whole_number(value, 1, 15) ? "" : "promotion-age is a count from 1 to 15";
  if (key == "full-trigger" || key == "concurrent-trigger")
    return whole_number(value, 1, 100) ? "" : fmt::format("{} is a percentage from 1 to 100", key);
  if (key == "refgraph") return one_of({"barrier", "rebuild"});
  return "";
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::istringstream in{std::string(text)};
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

}  // namespace

std::string Workload::describe() const {
  std::string text;
  switch (kind) {
    case WorkloadKind::Program: text = "program " + target; break;
    case WorkloadKind::HeapFile: text = "heap file " + target; break;
    case WorkloadKind::Graph: text = "graph " + target; break;
  }
  for (const std::string& a : args) text += " " + a;
  return text;
}

std::string_view configuration_keys() {
  return "name, gc, opt (repeatable), threads, device, heap; for guest programs also plan, nursery, promotion-age, "
         "full-trigger, concurrent-trigger, refgraph";
}

Configuration parse_configuration(std::string_view text, WorkloadKind workload, const std::string& where) {
  Configuration c;
  c.text = std::string(text);
  const std::vector<std::string> words = split_words(text);
  if (words.empty()) throw UsageError(where + ": an empty configuration (give at least gc=NAME)");
  std::set<std::string> seen;
  std::string unnamed;
  for (const std::string& word : words) {
    const auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("{}: '{}' is not key=value (keys: {})", where, word, configuration_keys()));
    const std::string key = word.substr(0, eq);
    const std::string value = word.substr(eq + 1);
    if (value.empty()) throw UsageError(fmt::format("{}: '{}' has no value", where, word));
    if (key != "opt" && !seen.insert(key).second)
      throw UsageError(fmt::format("{}: {} is given twice", where, key));
    if (key == "name") {
      c.name = value;
      continue;
    }
    const Key* known = nullptr;
    for (const Key& k : kKeys)
      if (k.name == key) known = &k;
    if (known == nullptr)
      throw UsageError(fmt::format("{}: unknown key '{}' (keys: {})", where, key, configuration_keys()));
    if (known->program_only && workload != WorkloadKind::Program)
      throw UsageError(fmt::format("{}: {} applies to guest programs (gcvm run); this workload is not one", where, key));
    if (const std::string problem = check_value(key, value); !problem.empty())
      throw UsageError(fmt::format("{}: {}", where, problem));
    c.flags.push_back(fmt::format("{}={}", known->flag, value));
    unnamed += (unnamed.empty() ? "" : " ") + word;
  }
  if (c.name.empty()) c.name = unnamed.empty() ? "default" : unnamed;
  return c;
}

std::vector<Configuration> read_configuration_file(const std::string& path, WorkloadKind workload) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("--configs={}: cannot read the file", path));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at ..."
    if (const auto end = what.find("] "); what.front() == '[' && end != std::string::npos) what.erase(0, end + 2);
    throw UsageError(fmt::format("{}: byte {}: not JSON ({})", path, e.byte, what));
  }
  const nlohmann::json* list = &doc;
  if (doc.is_object() && doc.contains("configurations")) list = &doc["configurations"];
  if (!list->is_array() || list->empty())
    throw UsageError(fmt::format("{}: expected an array of configurations, or {{\"configurations\": [...]}}", path));
  std::vector<Configuration> out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& item = (*list)[i];
    const std::string where = fmt::format("{}: configuration {}", path, i + 1);
    if (item.is_string()) {
      out.push_back(parse_configuration(item.get<std::string>(), workload, where));
      continue;
    }
    if (!item.is_object()) throw UsageError(where + ": expected a string or an object of key: value");
    std::string text;
    auto add = [&](const std::string& key, const nlohmann::json& value) {
      std::string v;
      if (value.is_string())
        v = value.get<std::string>();
      else if (value.is_number_unsigned() || value.is_number_integer())
        v = value.dump();
      else
        throw UsageError(fmt::format("{}: the value of {} is not a string or a whole number", where, key));
      if (v.find_first_of(" \t\n") != std::string::npos)
        throw UsageError(fmt::format("{}: the value of {} has white space", where, key));
      text += (text.empty() ? "" : " ") + key + "=" + v;
    };
    for (const auto& [key, value] : item.items()) {
      if (value.is_array())
        for (const nlohmann::json& v : value) add(key, v);
      else
        add(key, value);
    }
    out.push_back(parse_configuration(text, workload, where));
  }
  return out;
}

std::size_t check_configurations(const std::vector<Configuration>& configurations, const std::string& baseline) {
  if (configurations.empty())
    throw UsageError("gcvm compare needs configurations: --config \"gc=serial\" --config \"gc=parallel\" ... or --configs=FILE");
  std::set<std::string> names;
  for (const Configuration& c : configurations)
    if (!names.insert(c.name).second)
      throw UsageError(fmt::format("two configurations are named '{}' (add name=... to tell them apart)", c.name));
  if (baseline.empty()) return 0;
  for (std::size_t i = 0; i < configurations.size(); ++i)
    if (configurations[i].name == baseline) return i;
  std::string list;
  for (const Configuration& c : configurations) list += (list.empty() ? "'" : ", '") + c.name + "'";
  throw UsageError(fmt::format("--baseline='{}' names no configuration (they are {})", baseline, list));
}

std::vector<std::string> run_command(const std::string& self, const Workload& workload,
                                     const Configuration& configuration, const std::string& stats_path) {
  std::vector<std::string> argv{self};
  switch (workload.kind) {
    case WorkloadKind::Program: argv.insert(argv.end(), {"run", workload.target, "--stats=none"}); break;
    case WorkloadKind::HeapFile: argv.insert(argv.end(), {"replay", workload.target}); break;
    case WorkloadKind::Graph: argv.insert(argv.end(), {"mark", "--graph=" + workload.target}); break;
  }
  auto flag_name = [](const std::string& flag) { return flag.substr(0, flag.find('=') + 1); };
  for (const std::string& flag : workload.flags) {
    bool overridden = false;  // a configuration's heap=... wins over compare's --heap
    for (const std::string& own : configuration.flags) overridden = overridden || flag_name(own) == flag_name(flag);
    if (!overridden) argv.push_back(flag);
  }
  argv.insert(argv.end(), configuration.flags.begin(), configuration.flags.end());
  argv.push_back("--stats-json=" + stats_path);
  if (workload.kind == WorkloadKind::Program && !workload.args.empty()) {
    argv.push_back("--");
    argv.insert(argv.end(), workload.args.begin(), workload.args.end());
  }
  return argv;
}

}  // namespace gcvm::compare
