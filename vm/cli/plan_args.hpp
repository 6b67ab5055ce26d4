// The collection-plan flags of the subcommands that collect a gcvm heap over time
// (`gcvm run`, `gcvm replay`): --plan and the flags of each plan. Registered and
// validated here once, so both commands accept the same spellings and report the same
// errors. A plan's flag under another plan is a usage error, and so is a plan other
// than marksweep with --gc=boehm (libgc's own stop-the-world collector).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "gc/markers/marker_registry.hpp"
#include "gc/plans/concurrent_policy.hpp"
#include "gc/plans/generational_policy.hpp"

namespace gcvm::cli {

struct PlanArgs {
  std::string name = "marksweep";  // --plan
  std::string nursery;                   // empty: the policy's default
  std::uint32_t promotion_age = 0;       // 0: the policy's default
  std::uint32_t full_trigger = 0;        // 0: the policy's default
  std::uint32_t concurrent_trigger = 0;  // 0: adaptive

  /// Adds --plan (marksweep, generational or concurrent) to `cmd`.
  void add_plan_flag(CLI::App& cmd);
  /// Adds --nursery, --promotion-age and --full-trigger.
  void add_generational_flags(CLI::App& cmd);
  /// Adds --concurrent-trigger.
  void add_concurrent_flags(CLI::App& cmd);

  /// The generational plan's options from --plan and its flags; nullopt for the others.
  /// Throws UsageError for a flag of the generational plan under another plan.
  std::optional<GenerationalOptions> generational() const;
  /// The concurrent plan's options; nullopt for the others. Throws UsageError for
  /// --concurrent-trigger under another plan.
  std::optional<ConcurrentOptions> concurrent() const;
  /// Throws UsageError when the plan needs a gcvm heap and `choice` is --gc=boehm.
  void check_collector(const CollectorChoice& choice) const;
};

}  // namespace gcvm::cli
