#define _GNU_SOURCE
#include "thread_shims.h"

#include <malloc.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int hrm_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

int hrm_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

void hrm_set_thread_name(const char *name) { (void)pthread_setname_np(pthread_self(), name); }

static _Thread_local int hrm_dedicated;

void hrm_mark_dedicated_thread(void) { hrm_dedicated = 1; }

int hrm_is_dedicated_thread(void) { return hrm_dedicated; }

void hrm_use_one_malloc_arena(void) { (void)mallopt(M_ARENA_MAX, 1); }

void hrm_trim_malloc(void) { (void)malloc_trim(0); }
