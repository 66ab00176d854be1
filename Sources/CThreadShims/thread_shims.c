#define _GNU_SOURCE
#include "thread_shims.h"

#include <pthread.h>
#include <sys/eventfd.h>

int hrm_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

void hrm_set_thread_name(const char *name) { (void)pthread_setname_np(pthread_self(), name); }
