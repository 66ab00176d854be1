#ifndef HRM_INSTALL_PREFIX_H
#define HRM_INSTALL_PREFIX_H

// The PREFIX hrm was built for, so that an installed hrm-sim copied out of PREFIX/bin still finds
// PREFIX/share/hrm/scenarios. `make release PREFIX=/opt/hrm` passes -Xcc -DHRM_INSTALL_PREFIX=...;
// a plain `swift build` gets the Makefile's default. A function rather than the bare macro: Swift
// imports only macros defined in the header, not ones from the command line.
#ifndef HRM_INSTALL_PREFIX
#define HRM_INSTALL_PREFIX "/usr/local"
#endif

static inline const char *hrm_install_prefix(void) { return HRM_INSTALL_PREFIX; }

#endif
