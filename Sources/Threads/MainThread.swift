internal import CThreadShims
internal import Glibc

/// A program's asynchronous entry point, run without an `async` top level.
///
/// An `async` main on Linux ends its thread in `dispatch_main`, which calls `pthread_exit`: glibc
/// unwinds the main thread's stack with libgcc's unwinder, looking up every frame in the binary's
/// `.eh_frame_hdr` and `.eh_frame`, before libdispatch parks the thread to take signals. That
/// unwinding made about 0.6 MiB of an executable resident at every start, and libgcc_s's code with
/// it (Benchmarks/Watch/README.md, "Issue #29, third session"). Here the main thread starts
/// `body` as a task on the global executor and parks in pause(2) at once, as libdispatch's does
/// after its unwinding: its signal mask stays as it is, so the signal handlers that Dispatch's
/// signal sources install still run on it.
///
/// Before anything else it makes every thread allocate from one malloc arena: glibc gives each
/// thread that allocates an arena of its own (five in `hrm watch`), each with pages resident, for
/// allocations that are few and small in hrm.
///
/// Nothing may run on the main actor (nor on `DispatchQueue.main`): this thread never drains it.
public enum MainThread {
    /// Runs `body` in a task of its own and parks the calling thread, which must be the main
    /// thread; `body` ends the process (with `exit`) when it is done.
    public static func run(_ body: @escaping @Sendable () async -> Never) -> Never {
        hrm_use_one_malloc_arena()
        Task.detached { await body() }
        while true { pause() }
    }

    /// Gives the pages of memory freed so far back to the kernel (glibc's malloc_trim): for a
    /// program that frees much of what its start allocated (hrm's argument parsing).
    public static func trimFreedMemory() { hrm_trim_malloc() }
}
