// libmosquitto's header as a Clang module, for its types and constants only: nothing links it.
// The functions are called through CMosquittoShims' loader (cmqtt_library.h), which loads the
// library when the first MQTT client is made.
#include <mosquitto.h>
