#include "gc/markers/partitioned_bfs_marker.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gc/device/device_list.hpp"
#include "gc/device/edge_partition.hpp"
#include "gc/util/stopwatch.hpp"
#include "kernels/common/mark_layout.h"
#include "kernels/common/partition_layout.h"

namespace gcvm {

namespace {

constexpr const char* kAccepted = "exchange=auto|host|nccl (gpu-bfs with a device list)";

std::uint32_t groups_for(const DeviceBackend& backend, std::uint64_t items) {
  const std::uint64_t wanted = (items + GCVM_GROUP_SIZE - 1) / GCVM_GROUP_SIZE;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(wanted, 1, std::max(1u, backend.info().resident_groups)));
}

}  // namespace

PartitionedBfsMarkerOptions PartitionedBfsMarkerOptions::parse(const GcOptions& options, const std::string& device) {
  PartitionedBfsMarkerOptions o;
  o.devices = parse_device_list(device);
  if (o.devices.size() > GCVM_MAX_PARTITIONS)
    throw ConfigError(fmt::format("--device={}: {} partitions, at most {}", device, o.devices.size(), GCVM_MAX_PARTITIONS));
  for (const GcOption& option : options) {
    if (option.key == "exchange" && option.value == "auto") o.exchange = PartitionExchange::Auto;
    else if (option.key == "exchange" && option.value == "host") o.exchange = PartitionExchange::Host;
    else if (option.key == "exchange" && option.value == "nccl") o.exchange = PartitionExchange::Nccl;
    else reject_gc_option("gpu-bfs", option, kAccepted);
  }
  return o;
}

PartitionedBfsMarker::PartitionedBfsMarker(PartitionedBfsMarkerOptions options) : options_(std::move(options)) {
  std::vector<int> cuda_devices;
  for (const DeviceSelector& selector : options_.devices) {
    backends_.push_back(open_device(selector));
    if (selector.backend == "cuda") cuda_devices.push_back(static_cast<int>(selector.index.value_or(0)));
  }
  const bool all_cuda = cuda_devices.size() == backends_.size();
  // NCCL gives each rank its own device: partitions that share one exchange in memory.
  std::vector<int> distinct = cuda_devices;
  std::sort(distinct.begin(), distinct.end());
  const bool one_per_device = std::adjacent_find(distinct.begin(), distinct.end()) == distinct.end();
  const auto ranks = static_cast<unsigned>(backends_.size());
  switch (options_.exchange) {
    case PartitionExchange::Host: communicator_ = make_in_process_communicator(ranks); break;
    case PartitionExchange::Nccl:
      if (!all_cuda) throw ConfigError("--gc-opt exchange=nccl needs every device of the list to be a CUDA device");
      if (!one_per_device) throw ConfigError("--gc-opt exchange=nccl needs a different CUDA device for every partition");
      communicator_ = make_nccl_communicator(cuda_devices);
      break;
    case PartitionExchange::Auto:
      communicator_ = all_cuda && one_per_device && nccl_built() ? make_nccl_communicator(cuda_devices)
                                               : make_in_process_communicator(ranks);
      break;
  }
  make_endpoints();
}

PartitionedBfsMarker::PartitionedBfsMarker(std::vector<std::unique_ptr<DeviceBackend>> backends,
                                           std::unique_ptr<Communicator> communicator)
    : backends_(std::move(backends)), communicator_(std::move(communicator)) {
  if (backends_.empty() || backends_.size() > GCVM_MAX_PARTITIONS || communicator_ == nullptr ||
      communicator_->ranks() != backends_.size())
    throw ConfigError(fmt::format("gpu-bfs: {} backends need a communicator of as many ranks (1 to {})",
                                  backends_.size(), GCVM_MAX_PARTITIONS));
  make_endpoints();
}

void PartitionedBfsMarker::make_endpoints() {
  for (auto& backend : backends_) endpoints_.push_back(std::make_unique<BackendEndpoint>(*backend));
}

PartitionedBfsMarker::~PartitionedBfsMarker() = default;

MarkStats PartitionedBfsMarker::mark(const MarkRequest& request, MarkBitmap& out) {
  try {
    return mark_on_devices(request, out);
  } catch (const DeviceError&) {
    out.reset(0);
    mirror_.reset();  // what the devices hold is unknown: the next mark uploads everything
    throw;
  }
}

MarkStats PartitionedBfsMarker::mark_on_devices(const MarkRequest& request, MarkBitmap& out) {
  const Stopwatch clock;
  if (!mirror_) {
    std::vector<DeviceBackend*> backends;
    for (auto& b : backends_) backends.push_back(b.get());
    mirror_ = std::make_unique<PartitionedMirror>(std::move(backends));
  }
  const PartitionedSyncStats sync = mirror_->sync(request.graph, request.changes);
  const unsigned k = partitions();
  const std::vector<std::uint32_t> bounds(mirror_->bounds().begin(), mirror_->bounds().end());
  const std::uint64_t objects = std::max<std::uint64_t>(bounds.back(), std::uint64_t{request.block_count} * kSlotsPerBlock);

  // Each partition's table, mark bitmap and roots.
  const Stopwatch setup_clock;
  std::vector<std::vector<ObjectId>> roots(k);
  for (const ObjectId root : request.roots)
    if (root < bounds.back()) roots[partition_of(bounds, root)].push_back(root);
  std::vector<std::vector<std::uint32_t>> out_offsets(k);
  for (unsigned p = 0; p < k; ++p) {
    PartitionMarkSetup setup;
    setup.self = p;
    setup.table = bounds;
    std::uint32_t offset = 0;
    for (unsigned q = 0; q < k; ++q) {
      setup.table.push_back(offset);
      out_offsets[p].push_back(offset);
      offset += q == p ? 0 : bounds[q + 1] - bounds[q];
    }
    for (unsigned q = 0; q < k; ++q) setup.table.push_back(q == p ? 0 : bounds[q + 1] - bounds[q]);
    setup.outbox_entries = offset;
    const std::uint64_t first_block = bounds[p] / kSlotsPerBlock;
    const std::uint64_t blocks = (std::uint64_t{bounds[p + 1] - bounds[p]} + kSlotsPerBlock - 1) / kSlotsPerBlock;
    setup.mark_words = blocks * 2;
    setup.sent_words = (objects + 31) / 32;
    const std::span<const std::uint64_t> premarked =
        first_block < request.premarked.size()
            ? request.premarked.subspan(first_block, std::min<std::uint64_t>(blocks, request.premarked.size() - first_block))
            : std::span<const std::uint64_t>{};
    DeviceBackend& backend = on(p);
    backend.begin_partition_mark(setup, premarked);
    backend.reserve_partition_inbox(roots[p].size());
    backend.write_partition_inbox(0, roots[p]);
    backend.launch_partition_claim(0, static_cast<std::uint32_t>(roots[p].size()), groups_for(backend, roots[p].size()));
  }
  const double setup_ms = setup_clock.elapsed_ms();

  // The rounds.
  std::vector<double> kernel_ms(k, 0.0);
  std::vector<std::vector<std::uint32_t>> state(k);
  std::vector<PartitionEndpoint*> endpoints;
  for (auto& e : endpoints_) endpoints.push_back(e.get());
  std::uint64_t rounds = 0, exchanged = 0;
  double exchange_ms = 0;
  for (std::uint32_t round = 0;; ++round) {
    for (unsigned p = 0; p < k; ++p) {
      on(p).timer_start();
      backends_[p]->launch_partition_scan(round, std::max(1u, backends_[p]->info().resident_groups));
    }
    if (round == 0 && request.on_device_busy) request.on_device_busy();
    for (unsigned p = 0; p < k; ++p) {
      kernel_ms[p] += on(p).timer_stop_ms();
      state[p] = backends_[p]->read_partition_state();
      if (state[p][GCVM_PART_OVERFLOW] != 0)
        throw DeviceError(fmt::format("gpu-bfs: partition {}'s queue or outbox overflowed (an internal sizing error); "
                                      "the mark is discarded", p));
    }
    const Stopwatch exchange_clock;
    ExchangePlan plan(k);
    for (unsigned p = 0; p < k; ++p)
      for (unsigned q = 0; q < k; ++q) {
        plan.count(p, q) = state[p][GCVM_PART_OUT_COUNT + q];
        plan.out_offset(p, q) = out_offsets[p][q];
      }
    communicator_->exchange(endpoints, plan);
    exchange_ms += exchange_clock.elapsed_ms();
    exchanged += plan.total();
    ++rounds;
    std::vector<std::uint64_t> work(k);
    const std::uint32_t next = (round + 1) % 2;
    for (unsigned p = 0; p < k; ++p) {
      const std::uint64_t received = plan.received(p);
      on(p).launch_partition_claim(next, static_cast<std::uint32_t>(received), groups_for(*backends_[p], received));
      work[p] = state[p][GCVM_PART_COUNT + next] + received;
    }
    if (communicator_->all_reduce_sum(work) == 0) break;
  }

  // The marks, each partition's words in their place.
  const Stopwatch download_clock;
  out.reset(request.block_count);
  std::vector<std::uint64_t> words;
  std::vector<std::uint64_t> edges(k);
  std::uint64_t total_edges = 0, remote = 0, scanned = 0;
  for (unsigned p = 0; p < k; ++p) {
    const std::uint64_t first_block = bounds[p] / kSlotsPerBlock;
    const std::uint64_t blocks = (std::uint64_t{bounds[p + 1] - bounds[p]} + kSlotsPerBlock - 1) / kSlotsPerBlock;
    words.assign(blocks, 0);
    on(p).read_marks(words.data(), blocks);
    for (std::uint64_t b = 0; b < blocks && first_block + b < request.block_count; ++b)
      out.words()[first_block + b] = words[b];
    edges[p] = state_word64(state[p], GCVM_PART_EDGES_LO);
    total_edges += edges[p];
    remote += state_word64(state[p], GCVM_PART_REMOTE_LO);
    scanned += state[p][GCVM_PART_SCANNED];
  }
  const std::uint64_t heap_blocks = (std::uint64_t{bounds.back()} + kSlotsPerBlock - 1) / kSlotsPerBlock;
  for (std::uint64_t b = heap_blocks; b < request.block_count && b < request.premarked.size(); ++b)
    out.words()[b] = request.premarked[b];
  const double download_ms = download_clock.elapsed_ms();

  MarkStats stats;
  stats.marked_objects = scanned;
  stats.edges_traversed = total_edges;
  const std::uint64_t most_edges = *std::max_element(edges.begin(), edges.end());
  const double mean_edges = static_cast<double>(total_edges) / k;
  const double slowest_ms = *std::max_element(kernel_ms.begin(), kernel_ms.end());
  stats.details = sync.details();
  stats.details.insert(stats.details.end(), {
      {"partitions", static_cast<double>(k)},
      {"exchange_nccl", communicator_->name() == "nccl" ? 1.0 : 0.0},
      {"setup_ms", setup_ms},
      {"kernel_ms", slowest_ms},
      {"kernel_gteps", slowest_ms > 0 ? total_edges / (slowest_ms * 1e6) : 0.0},
      {"exchange_rounds", static_cast<double>(rounds)},
      {"exchange_bytes", static_cast<double>(exchanged * sizeof(ObjectId))},
      {"remote_references", static_cast<double>(remote)},
      {"exchange_bytes_per_remote_reference",
       remote > 0 ? static_cast<double>(exchanged * sizeof(ObjectId)) / static_cast<double>(remote) : 0.0},
      {"exchange_ms", exchange_ms},
      {"load_imbalance", mean_edges > 0 ? most_edges / mean_edges : 1.0},
      {"mark_download_ms", download_ms},
  });
  for (unsigned p = 0; p < k; ++p) {
    stats.details.emplace_back(fmt::format("kernel_ms_p{}", p), kernel_ms[p]);
    stats.details.emplace_back(fmt::format("edges_p{}", p), static_cast<double>(edges[p]));
    stats.details.emplace_back(fmt::format("objects_p{}", p), static_cast<double>(bounds[p + 1] - bounds[p]));
    stats.details.emplace_back(fmt::format("device_bytes_p{}", p), static_cast<double>(backends_[p]->device_bytes()));
  }
  stats.mark_ms = clock.elapsed_ms();
  stats.details.emplace_back("exchange_fraction", stats.mark_ms > 0 ? exchange_ms / stats.mark_ms : 0.0);
  return stats;
}

}  // namespace gcvm
