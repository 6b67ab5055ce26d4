// How a process that opened a device leaves: without waiting for the driver's teardown.
//
// A GPU driver keeps state for every process that has opened a device (the CUDA
// context, its memory mappings, the unified-memory state) and tears it down when the
// process exits. On the H200 machine (CUDA 13.0, persistence mode on) that takes 90-120
// ms after the process's last instruction, whether it returns from main or calls
// _exit, and whatever it freed before; it is the driver's time, not the collector's,
// and a run of half a second spends a fifth of its wall time there.
//
// leave_process hands that teardown to a keeper: a process cloned in the caller's
// address space (CLONE_VM: nothing is copied, and the address space lives as long as
// the keeper) with a copy of its file table. The keeper closes every file it holds
// except character devices, waits until the caller has exited, and exits; the driver
// then tears its state down in the keeper, whose exit nobody waits for. The caller
// exits at once with its status (_exit: static destructors and atexit handlers do not
// run, the CUDA runtime's own among them, whose work is that teardown).
//
// Invariants:
// - A process detaches only if a backend noted driver state in it (note_driver_state),
//   detaching was not turned off (set_detach_driver_teardown) and the build is not
//   sanitized (kDriverTeardownDetaches); otherwise
//   leave_process returns the status and the process exits as any process does.
// - The caller calls leave_process last, once every output is written and closed: it
//   flushes the C streams, nothing more.
// - The keeper holds no pipe, socket or regular file of the caller's (only character
//   devices: device files, terminals, /dev/null), so whoever reads the caller's output
//   sees it end when the caller exits, not when the keeper does.
// - After the clone the keeper makes system calls only (no allocation, no lock that a
//   thread of the caller might hold); the list of files to close is made before it.
// - The keeper exits once the caller has: it reads a pipe whose write end only the
//   caller holds, and end of file means the caller's files are closed. It is then
//   adopted by init or by the nearest subreaper; `gcvm compare` is one and reaps its
//   runs' keepers before the next run starts, so that no run's teardown overlaps
//   another's measurement.
// - If the pipe or the clone fails, the process exits as any process does.
#pragma once

namespace gcvm {

/// Whether this build can detach at all: a sanitizer's runtime knows nothing of a
/// process cloned in its address space, and its reports come from the handlers _exit
/// skips, so sanitized builds always exit as any process does.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kDriverTeardownDetaches = false;
#else
inline constexpr bool kDriverTeardownDetaches = true;
#endif

/// Called by a device backend once it has initialised its driver or opened a device.
void note_driver_state();

/// Whether a backend has noted driver state in this process.
bool driver_state_noted();

/// Whether leave_process may detach (default true): `--gc-opt device-exit`.
void set_detach_driver_teardown(bool detach);

/// The process's last call: returns `status` for main to return, or, when it detaches,
/// exits the process with `status` and does not return.
int leave_process(int status);

}  // namespace gcvm
