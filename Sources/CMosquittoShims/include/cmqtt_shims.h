#ifndef CMQTT_SHIMS_H
#define CMQTT_SHIMS_H

// eventfd(2) is declared in <sys/eventfd.h>, which Glibc's Swift overlay does not export; the MQTT
// client's loop thread sleeps in poll(2) on one, and publish() from any thread writes it to wake it.
int cmqtt_eventfd(void);

// pthread_setname_np needs _GNU_SOURCE, which the Glibc overlay is not built with. Without a name
// the loop thread carries whichever thread started it (a Swift concurrency worker's), and a stuck
// one could not be told apart in /proc or a debugger.
void cmqtt_set_thread_name(const char *name);

#endif
