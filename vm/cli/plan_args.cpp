#include "vm/cli/plan_args.hpp"

#include <utility>

#include "vm/cli/commands.hpp"
#include "vm/cli/size_arg.hpp"

namespace gcvm::cli {

void PlanArgs::add_plan_flag(CLI::App& cmd) {
  cmd.add_option("--plan", name,
                 "Collection plan: marksweep (every collection full), generational (young and full collections) "
                 "or concurrent (the mark runs while the mutator runs; docs/concurrent.md)")
      ->check(CLI::IsMember({"marksweep", "generational", "concurrent"}))
      ->capture_default_str();
}

void PlanArgs::add_generational_flags(CLI::App& cmd) {
  cmd.add_option("--nursery", nursery,
                 "Generational: heap bytes allocated between young collections (default: heap/8, at least 64K)");
  cmd.add_option("--promotion-age", promotion_age,
                 "Generational: collections a young object survives before it is promoted (1..15, default 2)")
      ->check(CLI::Range(1u, 15u));
  cmd.add_option("--full-trigger", full_trigger,
                 "Generational: a collection is full when the heap is this percent used (1..100, default 80)")
      ->check(CLI::Range(1u, 100u));
}

void PlanArgs::add_concurrent_flags(CLI::App& cmd) {
  cmd.add_option("--concurrent-trigger", concurrent_trigger,
                 "Concurrent: start a cycle when the heap is this percent used (1..100; default adaptive)")
      ->check(CLI::Range(1u, 100u));
}

std::optional<GenerationalOptions> PlanArgs::generational() const {
  if (name != "generational") {
    for (const auto& [flag, given] : {std::pair{"--nursery", !nursery.empty()}, std::pair{"--promotion-age", promotion_age != 0},
                                      std::pair{"--full-trigger", full_trigger != 0}})
      if (given) throw UsageError(std::string(flag) + " applies to --plan=generational (the plan is " + name + ")");
    return std::nullopt;
  }
  GenerationalOptions options;
  if (!nursery.empty()) {
    const auto bytes = parse_byte_size(nursery);
    if (!bytes || *bytes == 0) throw UsageError("--nursery=" + nursery + " is not a size (examples: 512K, 8M)");
    options.nursery_bytes = *bytes;
  }
  if (promotion_age != 0) options.promotion_age = promotion_age;
  if (full_trigger != 0) options.full_trigger_percent = full_trigger;
  return options;
}

std::optional<ConcurrentOptions> PlanArgs::concurrent() const {
  if (name != "concurrent") {
    if (concurrent_trigger != 0)
      throw UsageError("--concurrent-trigger applies to --plan=concurrent (the plan is " + name + ")");
    return std::nullopt;
  }
  ConcurrentOptions options;
  options.trigger_percent = concurrent_trigger;
  return options;
}

void PlanArgs::check_collector(const CollectorChoice& choice) const {
  if (name != "marksweep" && collector_is_boehm(choice))
    throw UsageError("--plan=" + name +
                     " needs a gcvm heap; --gc=boehm is libgc's own stop-the-world, non-generational collector");
}

}  // namespace gcvm::cli
