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

#else
#error "portable.h is device code: compile it with nvcc or an OpenCL compiler"
#endif

#endif
