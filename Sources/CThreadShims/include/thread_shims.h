#ifndef HRM_THREAD_SHIMS_H
#define HRM_THREAD_SHIMS_H

// eventfd(2) is declared in <sys/eventfd.h>, which Glibc's Swift overlay does not export: a loop
// thread sleeps in poll(2) on one, and any other thread writes it to wake the loop.
// Non-blocking and close-on-exec; -1 with errno on failure.
int hrm_eventfd(void);

// pthread_setname_np needs _GNU_SOURCE, which the Glibc overlay is not built with. Without a name a
// thread carries the name of whichever thread started it (a Swift concurrency worker's), and a
// stuck one could not be told apart in /proc or a debugger. Linux cuts names to 15 bytes.
void hrm_set_thread_name(const char *name);

// pidfd_open(2) (Linux 5.3): a descriptor that polls readable once the process `pid` has ended,
// so that a wait for a child is an event, not a poll of waitpid. Glibc has no wrapper before 2.36
// and Swift cannot call syscall(2) (variadic). -1 with errno (ENOSYS on an older kernel).
int hrm_pidfd_open(int pid);

// Marks the calling thread as one of hrm's own (started by LoopThread), not a thread of Swift's
// cooperative pool: a thread-local flag, so that code that may block (stdout's write) can tell
// whether blocking here holds up the pool. Swift has no thread-locals of its own.
void hrm_mark_dedicated_thread(void);

// 1 on a thread marked by hrm_mark_dedicated_thread, else 0.
int hrm_is_dedicated_thread(void);

// mallopt(M_ARENA_MAX, 1): <malloc.h> is not in Glibc's Swift overlay. glibc gives each thread that
// allocates an arena of its own, each with pages of its own resident; hrm's threads allocate little.
void hrm_use_one_malloc_arena(void);

// malloc_trim(0): gives the pages of freed heap memory back to the kernel.
void hrm_trim_malloc(void);

#endif
