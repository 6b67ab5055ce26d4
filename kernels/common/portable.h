/* The small dialect in which gcvm's device algorithms are written once and compiled
 * twice: as CUDA C++ (nvcc, __CUDACC__) and as OpenCL C (__OPENCL_VERSION__).
 *
 * Device functions take explicit address-space qualifiers (GCVM_GLOBAL for device
 * memory, GCVM_LOCAL for work-group memory); work-group memory is declared in the
 * kernel entry points, which are written per backend (the .cu files of kernels/cuda
 * and the .cl files of kernels/opencl) and stay thin. Only 32-bit atomics on global and local
 * memory and 64-bit atomic add and compare-and-swap on global memory are used
 * (cl_khr_int64_base_atomics), which PoCL and every CUDA GPU have.
 */
#ifndef GCVM_KERNELS_PORTABLE_H
#define GCVM_KERNELS_PORTABLE_H

#if defined(__CUDACC__)

#include <cooperative_groups.h>

typedef unsigned int gcvm_u32;
typedef unsigned long long gcvm_u64;
typedef uint4 gcvm_u32x4;
#define GCVM_DEVICE __device__ __forceinline__
#define GCVM_GLOBAL
#define GCVM_LOCAL
#define GCVM_LOCAL_ID() (threadIdx.x)
#define GCVM_GROUP_ID() (blockIdx.x)
#define GCVM_GROUP_COUNT() (gridDim.x)
#define GCVM_BARRIER() __syncthreads()
/* The barrier of a work group that is exactly one warp (GCVM_WARP_SIZE threads): a
 * warp barrier, which also orders the warp's memory accesses, on CUDA. */
#define GCVM_WARP_SIZE 32
#define GCVM_WARP_GROUP_BARRIER() __syncwarp()
#define GCVM_ATOMIC_OR(p, v) atomicOr((p), (v))
#define GCVM_ATOMIC_ADD(p, v) atomicAdd((p), (v))
#define GCVM_ATOMIC_MAX(p, v) atomicMax((p), (v))
#define GCVM_ATOMIC_MIN(p, v) atomicMin((p), (v))
#define GCVM_ATOMIC_CAS(p, expected, desired) atomicCAS((p), (expected), (desired))
#define GCVM_ATOMIC_ADD64(p, v) atomicAdd((p), (v))
#define GCVM_VOLATILE_LOAD(p) (*(volatile gcvm_u32*)(p))
#define GCVM_ATOMIC_XCHG(p, v) atomicExch((p), (v))
#define GCVM_ATOMIC_SUB(p, v) atomicSub((p), (v))
#define GCVM_GLOBAL_FENCE() __threadfence()
#define GCVM_ATOMIC_CAS64(p, expected, desired) atomicCAS((p), (expected), (desired))
#define GCVM_VOLATILE_LOAD64(p) (*(volatile gcvm_u64*)(p))
/* A polling thread backs off for about `ns` nanoseconds (sm_70 and later). */
#define GCVM_BACKOFF(ns) __nanosleep(ns)
#define GCVM_POPCOUNT(x) ((gcvm_u32)__popc(x))
/* 1 where every thread of a one-warp group may skip a barrier together, under a branch
 * whose condition they all computed alike. */
#define GCVM_UNIFORM_BARRIER_BRANCHES 1
/* A barrier of the group that also says whether `pred` held for any of its threads:
 * for a uniform branch around collectives, so only where the dialect has
 * GCVM_UNIFORM_BARRIER_BRANCHES (written `!GCVM_UNIFORM_BARRIER_BRANCHES ||
 * GCVM_BARRIER_ANY(pred)`, which OpenCL folds to a branch always taken). */
#define GCVM_BARRIER_ANY(pred) __syncthreads_or(pred)
/* A barrier of every thread of the grid, with the memory ordering of one: only in a
 * cooperative launch (cudaLaunchCooperativeKernel), whose groups are all resident at
 * once. OpenCL has no such launch (a CPU device may run a few groups at a time), so
 * the dialect defines it for CUDA alone and what uses it is CUDA's alone. */
#define GCVM_GRID_BARRIER() cooperative_groups::this_grid().sync()
/* The device's nanosecond clock (%globaltimer: one clock for every SM, unlike clock64),
 * and a 64-bit atomic maximum; what uses them is CUDA's alone, as the grid barrier. */
#define GCVM_CLOCK_NS() gcvm_globaltimer()
#define GCVM_ATOMIC_MAX64(p, v) atomicMax((p), (v))
GCVM_DEVICE gcvm_u64 gcvm_globaltimer(void) {
  gcvm_u64 ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

/* Collective over a group that is one warp (GCVM_WARP_SIZE threads): returns the
 * exclusive prefix sum of `x` over the group's threads and sets `*total` to the sum.
 * Warp shuffles here; `scratch` (2 * GCVM_WARP_SIZE words of work-group memory) is
 * for the other dialect. */
GCVM_DEVICE gcvm_u32 gcvm_warp_group_scan(gcvm_u32 x, gcvm_u32* scratch, gcvm_u32* total) {
  (void)scratch;
  const gcvm_u32 lane = threadIdx.x % GCVM_WARP_SIZE;
  gcvm_u32 sum = x;
  for (gcvm_u32 offset = 1u; offset < GCVM_WARP_SIZE; offset <<= 1) {
    const gcvm_u32 below = __shfl_up_sync(0xFFFFFFFFu, sum, offset);
    if (lane >= offset) sum += below;
  }
  *total = __shfl_sync(0xFFFFFFFFu, sum, GCVM_WARP_SIZE - 1);
  return sum - x;
}

/* Collective over a one-warp group: `x` of thread `from` (which may differ between
 * threads). A warp shuffle here; `scratch` (GCVM_WARP_SIZE words) is for the other
 * dialect. */
GCVM_DEVICE gcvm_u32 gcvm_warp_group_shuffle(gcvm_u32 x, gcvm_u32 from, gcvm_u32* scratch) {
  (void)scratch;
  return __shfl_sync(0xFFFFFFFFu, x, (int)from);
}

/* Collective over a one-warp group: each thread sets up to `bits` low bits of `mask`;
 * returns how many bits the threads below this one set and sets `*total` to how many
 * all of them set. Warp votes here; `scratch` (GCVM_WARP_SIZE words) is for the other
 * dialect. */
GCVM_DEVICE gcvm_u32 gcvm_warp_group_rank(gcvm_u32 mask, gcvm_u32 bits, gcvm_u32* scratch, gcvm_u32* total) {
  (void)scratch;
  const gcvm_u32 below = (1u << (threadIdx.x % GCVM_WARP_SIZE)) - 1u;
  gcvm_u32 rank = 0u;
  gcvm_u32 sum = 0u;
  for (gcvm_u32 b = 0u; b < bits; ++b) {
    const gcvm_u32 votes = __ballot_sync(0xFFFFFFFFu, (mask >> b) & 1u);
    rank += (gcvm_u32)__popc(votes & below);
    sum += (gcvm_u32)__popc(votes);
  }
  *total = sum;
  return rank;
}

#elif defined(__OPENCL_VERSION__)

#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
typedef uint gcvm_u32;
typedef ulong gcvm_u64;
typedef uint4 gcvm_u32x4;
#define GCVM_DEVICE inline
#define GCVM_GLOBAL __global
#define GCVM_LOCAL __local
#define GCVM_LOCAL_ID() ((gcvm_u32)get_local_id(0))
#define GCVM_GROUP_ID() ((gcvm_u32)get_group_id(0))
#define GCVM_GROUP_COUNT() ((gcvm_u32)get_num_groups(0))
#define GCVM_BARRIER() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define GCVM_WARP_SIZE 32
#define GCVM_WARP_GROUP_BARRIER() GCVM_BARRIER()
#define GCVM_ATOMIC_OR(p, v) atomic_or((p), (v))
#define GCVM_ATOMIC_ADD(p, v) atomic_add((p), (v))
#define GCVM_ATOMIC_MAX(p, v) atomic_max((p), (v))
#define GCVM_ATOMIC_MIN(p, v) atomic_min((p), (v))
#define GCVM_ATOMIC_CAS(p, expected, desired) atomic_cmpxchg((p), (expected), (desired))
#define GCVM_ATOMIC_ADD64(p, v) atom_add((p), (v))
#define GCVM_VOLATILE_LOAD(p) (*(volatile GCVM_GLOBAL gcvm_u32*)(p))
#define GCVM_ATOMIC_XCHG(p, v) atomic_xchg((p), (v))
#define GCVM_ATOMIC_SUB(p, v) atomic_sub((p), (v))
#define GCVM_GLOBAL_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#define GCVM_ATOMIC_CAS64(p, expected, desired) atom_cmpxchg((p), (expected), (desired))
#define GCVM_VOLATILE_LOAD64(p) (*(volatile GCVM_GLOBAL gcvm_u64*)(p))
#define GCVM_BACKOFF(ns) ((void)(ns))
#define GCVM_POPCOUNT(x) ((gcvm_u32)popcount(x))
/* PoCL's work-group compiler mishandles barriers under branches, even uniform ones. */
#define GCVM_UNIFORM_BARRIER_BRANCHES 0
#define GCVM_BARRIER_ANY(pred) 1

/* The same collective through work-group memory (`scratch`: 2 * GCVM_WARP_SIZE words),
 * one barrier per doubling step. */
GCVM_DEVICE gcvm_u32 gcvm_warp_group_scan(gcvm_u32 x, __local gcvm_u32* scratch, gcvm_u32* total) {
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  gcvm_u32 in = 0u;
  scratch[lid] = x;
  GCVM_WARP_GROUP_BARRIER();
  for (gcvm_u32 offset = 1u; offset < GCVM_WARP_SIZE; offset <<= 1) {
    gcvm_u32 sum = scratch[in * GCVM_WARP_SIZE + lid];
    if (lid >= offset) sum += scratch[in * GCVM_WARP_SIZE + lid - offset];
    scratch[(in ^ 1u) * GCVM_WARP_SIZE + lid] = sum;
    in ^= 1u;
    GCVM_WARP_GROUP_BARRIER();
  }
  *total = scratch[in * GCVM_WARP_SIZE + GCVM_WARP_SIZE - 1u];
  const gcvm_u32 inclusive = scratch[in * GCVM_WARP_SIZE + lid];
  GCVM_WARP_GROUP_BARRIER(); /* scratch may be reused */
  return inclusive - x;
}

/* The same collectives through work-group memory, with no loop around a barrier (so
 * that they may be called two loops deep: see async_mark.h on PoCL). */
GCVM_DEVICE gcvm_u32 gcvm_warp_group_shuffle(gcvm_u32 x, gcvm_u32 from, __local gcvm_u32* scratch) {
  scratch[GCVM_LOCAL_ID()] = x;
  GCVM_WARP_GROUP_BARRIER();
  const gcvm_u32 value = scratch[from];
  GCVM_WARP_GROUP_BARRIER(); /* scratch may be reused */
  return value;
}

GCVM_DEVICE gcvm_u32 gcvm_warp_group_rank(gcvm_u32 mask, gcvm_u32 bits, __local gcvm_u32* scratch,
                                          gcvm_u32* total) {
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  scratch[lid] = popcount(bits < 32u ? mask & ((1u << bits) - 1u) : mask);
  GCVM_WARP_GROUP_BARRIER();
  gcvm_u32 rank = 0u;
  gcvm_u32 sum = 0u;
  for (gcvm_u32 i = 0u; i < GCVM_WARP_SIZE; ++i) {
    const gcvm_u32 count = scratch[i];
    if (i < lid) rank += count;
    sum += count;
  }
  GCVM_WARP_GROUP_BARRIER(); /* scratch may be reused */
  *total = sum;
  return rank;
}

#else
#error "portable.h is device code: compile it with nvcc or an OpenCL compiler"
#endif

#endif
