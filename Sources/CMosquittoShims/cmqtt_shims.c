#define _GNU_SOURCE
#include "cmqtt_shims.h"

#include <pthread.h>
#include <sys/eventfd.h>

int cmqtt_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

void cmqtt_set_thread_name(const char *name) { (void)pthread_setname_np(pthread_self(), name); }
