// libmosquitto through dlopen: see cmqtt_shims.h for why.
#include "cmqtt_shims.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static __typeof__(&mosquitto_lib_init) p_lib_init;
static __typeof__(&mosquitto_new) p_new;
static __typeof__(&mosquitto_destroy) p_destroy;
static __typeof__(&mosquitto_user_data_set) p_user_data_set;
static __typeof__(&mosquitto_threaded_set) p_threaded_set;
static __typeof__(&mosquitto_int_option) p_int_option;
static __typeof__(&mosquitto_max_inflight_messages_set) p_max_inflight_messages_set;
static __typeof__(&mosquitto_username_pw_set) p_username_pw_set;
static __typeof__(&mosquitto_will_set) p_will_set;
static __typeof__(&mosquitto_tls_set) p_tls_set;
static __typeof__(&mosquitto_connect_callback_set) p_connect_callback_set;
static __typeof__(&mosquitto_disconnect_callback_set) p_disconnect_callback_set;
static __typeof__(&mosquitto_publish_callback_set) p_publish_callback_set;
static __typeof__(&mosquitto_message_callback_set) p_message_callback_set;
static __typeof__(&mosquitto_log_callback_set) p_log_callback_set;
static __typeof__(&mosquitto_connect_async) p_connect_async;
static __typeof__(&mosquitto_disconnect) p_disconnect;
static __typeof__(&mosquitto_socket) p_socket;
static __typeof__(&mosquitto_want_write) p_want_write;
static __typeof__(&mosquitto_loop_read) p_loop_read;
static __typeof__(&mosquitto_loop_write) p_loop_write;
static __typeof__(&mosquitto_loop_misc) p_loop_misc;
static __typeof__(&mosquitto_publish) p_publish;
static __typeof__(&mosquitto_subscribe) p_subscribe;
static __typeof__(&mosquitto_pub_topic_check) p_pub_topic_check;
static __typeof__(&mosquitto_strerror) p_strerror;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *failure = NULL;
static char reason[512];

// Debian's libmosquitto1 (the runtime of libmosquitto-dev); RTLD_LOCAL keeps its symbols out of
// the process's global scope.
static void load(void) {
    void *library = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(reason, sizeof reason, "%s", why ? why : "libmosquitto.so.1 could not be loaded");
        failure = reason;
        return;
    }
#define RESOLVE(name)                                                                              \
    do {                                                                                           \
        p_##name = (__typeof__(p_##name))dlsym(library, "mosquitto_" #name);                      \
        if (p_##name == NULL) {                                                                    \
            snprintf(reason, sizeof reason, "libmosquitto.so.1 has no mosquitto_%s", #name);     \
            failure = reason;                                                                      \
            return;                                                                                \
        }                                                                                          \
    } while (0)
    RESOLVE(lib_init);
    RESOLVE(new);
    RESOLVE(destroy);
    RESOLVE(user_data_set);
    RESOLVE(threaded_set);
    RESOLVE(int_option);
    RESOLVE(max_inflight_messages_set);
    RESOLVE(username_pw_set);
    RESOLVE(will_set);
    RESOLVE(tls_set);
    RESOLVE(connect_callback_set);
    RESOLVE(disconnect_callback_set);
    RESOLVE(publish_callback_set);
    RESOLVE(message_callback_set);
    RESOLVE(log_callback_set);
    RESOLVE(connect_async);
    RESOLVE(disconnect);
    RESOLVE(socket);
    RESOLVE(want_write);
    RESOLVE(loop_read);
    RESOLVE(loop_write);
    RESOLVE(loop_misc);
    RESOLVE(publish);
    RESOLVE(subscribe);
    RESOLVE(pub_topic_check);
    RESOLVE(strerror);
#undef RESOLVE
}

int cmqtt_load(const char **error) {
    pthread_once(&once, load);
    if (failure != NULL) {
        if (error != NULL) *error = failure;
        return -1;
    }
    return 0;
}

int cmqtt_lib_init(void) { return p_lib_init(); }
struct mosquitto *cmqtt_new(const char *id, bool clean_session, void *obj) { return p_new(id, clean_session, obj); }
void cmqtt_destroy(struct mosquitto *mosq) { p_destroy(mosq); }
void cmqtt_user_data_set(struct mosquitto *mosq, void *obj) { p_user_data_set(mosq, obj); }
int cmqtt_threaded_set(struct mosquitto *mosq, bool threaded) { return p_threaded_set(mosq, threaded); }
int cmqtt_int_option(struct mosquitto *mosq, enum mosq_opt_t option, int value) { return p_int_option(mosq, option, value); }
int cmqtt_max_inflight_messages_set(struct mosquitto *mosq, unsigned int max_inflight_messages) { return p_max_inflight_messages_set(mosq, max_inflight_messages); }
int cmqtt_username_pw_set(struct mosquitto *mosq, const char *username, const char *password) { return p_username_pw_set(mosq, username, password); }
int cmqtt_will_set(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos, bool retain) { return p_will_set(mosq, topic, payloadlen, payload, qos, retain); }
int cmqtt_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile, const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)) { return p_tls_set(mosq, cafile, capath, certfile, keyfile, pw_callback); }
void cmqtt_connect_callback_set(struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int)) { p_connect_callback_set(mosq, on_connect); }
void cmqtt_disconnect_callback_set(struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *, void *, int)) { p_disconnect_callback_set(mosq, on_disconnect); }
void cmqtt_publish_callback_set(struct mosquitto *mosq, void (*on_publish)(struct mosquitto *, void *, int)) { p_publish_callback_set(mosq, on_publish); }
void cmqtt_message_callback_set(struct mosquitto *mosq, void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *)) { p_message_callback_set(mosq, on_message); }
void cmqtt_log_callback_set(struct mosquitto *mosq, void (*on_log)(struct mosquitto *, void *, int, const char *)) { p_log_callback_set(mosq, on_log); }
int cmqtt_connect_async(struct mosquitto *mosq, const char *host, int port, int keepalive) { return p_connect_async(mosq, host, port, keepalive); }
int cmqtt_disconnect(struct mosquitto *mosq) { return p_disconnect(mosq); }
int cmqtt_socket(struct mosquitto *mosq) { return p_socket(mosq); }
bool cmqtt_want_write(struct mosquitto *mosq) { return p_want_write(mosq); }
int cmqtt_loop_read(struct mosquitto *mosq, int max_packets) { return p_loop_read(mosq, max_packets); }
int cmqtt_loop_write(struct mosquitto *mosq, int max_packets) { return p_loop_write(mosq, max_packets); }
int cmqtt_loop_misc(struct mosquitto *mosq) { return p_loop_misc(mosq); }
int cmqtt_publish(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos, bool retain) { return p_publish(mosq, mid, topic, payloadlen, payload, qos, retain); }
int cmqtt_subscribe(struct mosquitto *mosq, int *mid, const char *sub, int qos) { return p_subscribe(mosq, mid, sub, qos); }
int cmqtt_pub_topic_check(const char *topic) { return p_pub_topic_check(topic); }
const char *cmqtt_strerror(int mosq_errno) { return p_strerror(mosq_errno); }
