// The host side of a device mirror's sync (gc/device/mirror_plan.hpp), without a
// device: counting the changes, planning what to send, packing the patch and clearing
// the change record, on 1, 2, ... up to every hardware thread. Medians of repeated
// rounds; each round changes the graph the way a mutator that allocates into freed
// slots does (runs of re-assigned vertices and their initialised edges) plus stores
// scattered over the whole edge array (rewired references), plus stores into every
// other edge slot from the first on (a program nulling every other element of a huge
// array just before a collection), plus objects re-allocated every other slot (a sweep's
// freed slots between survivors allocated again: half of a long stretch changed).
//
//   bench_mirror_sync [--vertices=N] [--allocated=N] [--swept=N] [--scattered=N] [--strided=N] [--rounds=R]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "bench/median.hpp"
#include "gc/device/mirror_plan.hpp"
#include "gc/util/stopwatch.hpp"
#include "gc/util/thread_pool.hpp"
#include "heapgraph/ref_graph.hpp"

using namespace gcvm;
using gcvm::bench::median;

namespace {

constexpr std::uint32_t kDegree = 3;

/// Frees object `v` and allocates it again: its edge range taken from the freed ones,
/// its references set.
void reallocate(RefGraph& graph, ObjectId v, std::uniform_int_distribution<std::uint64_t>& any_vertex,
                std::mt19937_64& rng) {
  graph.release_edges(graph.begin(v), graph.degree(v));
  const auto base = graph.reserve_edges(kDegree);
  graph.assign_vertex(v, *base, kDegree);
  for (std::uint32_t s = 0; s < kDegree; ++s) graph.record_store(v, s, static_cast<ObjectId>(any_vertex(rng)));
}

/// A round of mutation: `allocated` objects in runs of consecutive slots, then `swept`
/// objects every other slot from a random one on (a sweep's freed slots, between the
/// survivors, allocated again), then `scattered` stores anywhere, then `strided` stores
/// into every other edge slot from the first.
void mutate(RefGraph& graph, std::uint64_t allocated, std::uint64_t swept, std::uint64_t scattered,
            std::uint64_t strided, std::mt19937_64& rng) {
  const std::uint64_t vertices = graph.vertex_count();
  std::uniform_int_distribution<std::uint64_t> any_vertex(0, vertices - 1);
  std::uniform_int_distribution<std::uint64_t> run_length(1, 64);
  std::uint64_t done = 0;
  while (done < allocated) {
    const std::uint64_t first = any_vertex(rng);
    const std::uint64_t count = std::min({run_length(rng), allocated - done, vertices - first});
    for (std::uint64_t k = 0; k < count; ++k) reallocate(graph, static_cast<ObjectId>(first + k), any_vertex, rng);
    done += count;
  }
  if (swept != 0) {
    const std::uint64_t first = any_vertex(rng) % std::max<std::uint64_t>(vertices - std::min(2 * swept, vertices), 1);
    for (std::uint64_t k = 0; k < swept && first + 2 * k < vertices; ++k)
      reallocate(graph, static_cast<ObjectId>(first + 2 * k), any_vertex, rng);
  }
  std::uniform_int_distribution<std::uint64_t> any_edge(0, graph.edge_count() - 1);
  for (std::uint64_t i = 0; i < scattered; ++i) graph.set_edge(any_edge(rng), static_cast<ObjectId>(any_vertex(rng)));
  const std::uint64_t strided_end = std::min(2 * strided, graph.edge_count());
  for (std::uint64_t e = 0; e < strided_end; e += 2) graph.set_edge(e, static_cast<ObjectId>(any_vertex(rng)));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Host side of the device mirror's sync: count, plan, pack, clear"};
  std::uint64_t vertices = 4'000'000, allocated = 900'000, swept = 0, scattered = 600'000, strided = 0;
  int rounds = 5;
  app.add_option("--vertices", vertices, "Vertices of the graph (degree 3 each)");
  app.add_option("--allocated", allocated, "Objects re-allocated per round, in runs of 1-64 slots");
  app.add_option("--swept", swept, "Objects re-allocated per round every other slot, from a random one on");
  app.add_option("--scattered", scattered, "Scattered stores per round");
  app.add_option("--strided", strided, "Stores per round into every other edge slot from the first");
  app.add_option("--rounds", rounds, "Rounds per thread count (medians)");
  CLI11_PARSE(app, argc, argv);

  RefGraph graph;
  std::mt19937_64 rng(1);
  graph.grow_vertices(vertices);
  for (std::uint64_t v = 0; v < vertices; ++v) {
    const auto base = graph.reserve_edges(kDegree);
    graph.assign_vertex(static_cast<ObjectId>(v), *base, kDegree);
  }
  graph.changes().clear();

  fmt::print(
      "graph: {} vertices, {} edge slots; per round {} objects re-allocated, {} swept, {} scattered stores, {} "
      "strided\n",
      vertices, graph.edge_count(), allocated, swept, scattered, strided);
  fmt::print("{:>7} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}\n", "threads", "changed", "count", "plan",
             "fill", "clear", "total", "patch", "GB/s");
  MirrorPlan plan;
  std::vector<std::byte> patch;
  const unsigned hardware = ThreadPool::resolve(0);
  for (unsigned threads = 1; threads <= hardware; threads = threads == hardware ? hardware + 1 : std::min(2 * threads, hardware)) {
    ThreadPool pool(threads);
    std::vector<double> count_ms, plan_ms, fill_ms, clear_ms, total_ms;
    std::uint64_t changed = 0, patch_bytes = 0;
    for (int r = 0; r < rounds; ++r) {
      mutate(graph, allocated, swept, scattered, strided, rng);
      GraphChanges& changes = graph.changes();
      const Stopwatch total;
      Stopwatch step;
      changed = changes.vertices.count(graph.vertex_count()) * MirrorPlan::kVertexBytes +
                changes.edges.count(graph.edge_count()) * MirrorPlan::kEdgeBytes;
      count_ms.push_back(step.elapsed_ms());
      step = Stopwatch();
      plan_mirror_sync(graph, changes, graph.vertex_count(), graph.edge_count(), &pool, plan);
      plan_ms.push_back(step.elapsed_ms());
      if (patch.size() < plan.patch_bytes) patch.resize(plan.patch_bytes);
      step = Stopwatch();
      fill_mirror_patch(graph, plan, patch.data(), &pool);
      fill_ms.push_back(step.elapsed_ms());
      step = Stopwatch();
      changes.clear();
      clear_ms.push_back(step.elapsed_ms());
      total_ms.push_back(total.elapsed_ms());
      patch_bytes = plan.patch_bytes + plan.direct_bytes;
    }
    const double t = median(total_ms);
    fmt::print("{:>7} {:>8.1f}MB {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>8.1f}MB {:>9.2f}\n", threads,
               changed / 1e6, median(count_ms), median(plan_ms), median(fill_ms), median(clear_ms), t,
               patch_bytes / 1e6, patch_bytes / (t * 1e6));
  }
  return 0;
}
