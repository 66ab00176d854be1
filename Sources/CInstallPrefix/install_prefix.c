// SwiftPM builds a C target only when it has a source file; the one function is in the header.
#include "install_prefix.h"
