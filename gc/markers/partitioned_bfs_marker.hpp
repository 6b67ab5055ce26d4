// gpu-bfs on several devices: one heap cut into partitions (gc/device/partitioned_mirror.hpp),
// one per entry of `--device=cuda:0,1` / `cuda:all` / `opencl:0,0,0`, each marked on its
// own device by a level-synchronous BFS (kernels/common/partition_mark.h), with the
// references between partitions exchanged by a communicator
// (gc/device/communicator.hpp: NCCL between CUDA devices where built, else through host
// memory). docs/multi-gpu.md has the design and its bounds.
//
// A collection: sync every partition's mirror → each partition gets its mark bitmap
// (premarked words set), its roots (the roots it owns) and claims them → rounds, until
// no partition has work:
//   every partition scans its frontier (local references are claimed into its next
//   frontier, remote ones go once per mark into the outbox segment of their owner) →
//   the host reads each partition's counts → the communicator moves the batches →
//   every partition claims what it received into its next frontier → an all-reduce of
//   (next frontier + received) over the partitions: 0 ends the mark
// → each partition's mark words are downloaded into their place in the bitmap.
//
// Level-synchronous rounds are the first design because they make termination a
// count (nothing is in flight between rounds: every batch was received and claimed
// before the all-reduce), and the bytes exchanged are bounded by the mark itself:
// each object id crosses to its owner at most once from each other partition. One
// driver thread steps all partitions; each step is asynchronous on its device.
//
// Options: `exchange=auto|host|nccl` (auto: NCCL where built and every device is a
// CUDA device, else host). Statistics (MarkStats details): partitions, exchange
// rounds, bytes and ms, the references read that point into another partition
// (`remote_references`) and the bytes exchanged per such reference, the share of the
// mark's time spent in exchanges (`exchange_fraction`), per-partition kernel ms and
// references read (`kernel_ms_p<i>`, `edges_p<i>`), their maximum (`kernel_ms`), and
// load imbalance (the most references one partition read over the mean).
//
// Not supported: snapshot marks use Marker's default (a host copy marked by `mark`,
// whose mirror is then uploaded whole each cycle); no CPU fallback (`--device=auto`
// picks one device, never a list). A device error in any partition is a MarkError and
// no mark bitmap is returned; the next collection uploads every partition anew.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gc/device/communicator.hpp"
#include "gc/device/device_registry.hpp"
#include "gc/device/partitioned_mirror.hpp"
#include "gc/markers/gc_options.hpp"
#include "gc/markers/marker.hpp"

namespace gcvm {

/// How batches cross between partitions (exchange=).
enum class PartitionExchange { Auto, Host, Nccl };

struct PartitionedBfsMarkerOptions {
  std::vector<DeviceSelector> devices;
  PartitionExchange exchange = PartitionExchange::Auto;

  static PartitionedBfsMarkerOptions parse(const GcOptions& options, const std::string& device);
};

class PartitionedBfsMarker final : public Marker {
 public:
  /// Opens every device of the list; throws DeviceError when one cannot be used.
  explicit PartitionedBfsMarker(PartitionedBfsMarkerOptions options);
  /// Marks on `backends` (partition p on backends[p], in order; none may appear
  /// twice) through `communicator` (of as many ranks). The seam for backends and
  /// communicators that wrap real ones, such as the tests' fault injection
  /// (tests/gc/fault_injection.hpp); the options' device list is not used.
  PartitionedBfsMarker(std::vector<std::unique_ptr<DeviceBackend>> backends, std::unique_ptr<Communicator> communicator);
  ~PartitionedBfsMarker() override;
  std::string_view name() const override { return "gpu-bfs"; }
  MarkerConstraints constraints() const override { return {.needs_device = true}; }
  MarkStats mark(const MarkRequest& request, MarkBitmap& out) override;

  unsigned partitions() const { return static_cast<unsigned>(backends_.size()); }
  std::string_view exchange_name() const { return communicator_->name(); }

 private:
  MarkStats mark_on_devices(const MarkRequest& request, MarkBitmap& out);
  void make_endpoints();
  /// Partition p's backend, its device made current (CUDA's current device is per
  /// thread, and one thread drives every partition).
  DeviceBackend& on(unsigned p) {
    backends_[p]->make_current();
    return *backends_[p];
  }

  PartitionedBfsMarkerOptions options_;
  std::vector<std::unique_ptr<DeviceBackend>> backends_;
  std::vector<std::unique_ptr<PartitionEndpoint>> endpoints_;
  std::unique_ptr<Communicator> communicator_;
  std::unique_ptr<PartitionedMirror> mirror_;  // made anew after a device error
};

}  // namespace gcvm
