#ifndef CMQTT_SHIMS_H
#define CMQTT_SHIMS_H

// Segments the TCP socket `fd` has received (TCP_INFO's tcpi_segs_in, Linux 4.2), -1 when the
// kernel does not say. A connection refused got one (the RST); one that was up and then reset got
// at least two (the SYN-ACK, the RST): after a reset the socket has no peer to show, and this
// still tells the two apart.
int cmqtt_tcp_segments_in(int fd);

// TCP_CORK on (1) or off (0) for the TCP socket `fd`: while on, what is written waits to fill a
// segment; turning it off sends what waits at once. 0, or -1 with errno.
int cmqtt_tcp_cork(int fd, int on);

#include <stdbool.h>
#include <stddef.h>
#include <mosquitto.h>

// libmosquitto is loaded when the first MQTT client is made, not when hrm starts: linked into
// the executable it (and the OpenSSL it brings) cost every `hrm watch` about 1.8 MiB of resident
// memory, MQTT or not. cmqtt_load() loads it once (thread-safe) and returns 0, or -1 with the
// loader's reason in `error`; after a 0 the cmqtt_ functions below are libmosquitto's own
// (mosquitto_new and so on, same arguments), called through the pointers the loader found.
int cmqtt_load(const char **error);

int cmqtt_lib_init(void);
struct mosquitto *cmqtt_new(const char *id, bool clean_session, void *obj);
void cmqtt_destroy(struct mosquitto *mosq);
void cmqtt_user_data_set(struct mosquitto *mosq, void *obj);
int cmqtt_threaded_set(struct mosquitto *mosq, bool threaded);
int cmqtt_int_option(struct mosquitto *mosq, enum mosq_opt_t option, int value);
int cmqtt_max_inflight_messages_set(struct mosquitto *mosq, unsigned int max_inflight_messages);
int cmqtt_username_pw_set(struct mosquitto *mosq, const char *username, const char *password);
int cmqtt_will_set(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos, bool retain);
int cmqtt_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile, const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata));
void cmqtt_connect_callback_set(struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int));
void cmqtt_disconnect_callback_set(struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *, void *, int));
void cmqtt_publish_callback_set(struct mosquitto *mosq, void (*on_publish)(struct mosquitto *, void *, int));
void cmqtt_message_callback_set(struct mosquitto *mosq, void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *));
void cmqtt_log_callback_set(struct mosquitto *mosq, void (*on_log)(struct mosquitto *, void *, int, const char *));
int cmqtt_connect_async(struct mosquitto *mosq, const char *host, int port, int keepalive);
int cmqtt_disconnect(struct mosquitto *mosq);
int cmqtt_socket(struct mosquitto *mosq);
bool cmqtt_want_write(struct mosquitto *mosq);
int cmqtt_loop_read(struct mosquitto *mosq, int max_packets);
int cmqtt_loop_write(struct mosquitto *mosq, int max_packets);
int cmqtt_loop_misc(struct mosquitto *mosq);
int cmqtt_publish(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos, bool retain);
int cmqtt_subscribe(struct mosquitto *mosq, int *mid, const char *sub, int qos);
int cmqtt_pub_topic_check(const char *topic);
const char *cmqtt_strerror(int mosq_errno);

#endif
