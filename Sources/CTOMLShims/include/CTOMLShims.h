#ifndef CTOMLSHIMS_H
#define CTOMLSHIMS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A parsed TOML document as a flat byte stream that Swift reads without C++ types (see
/// TOMLShims.cpp for the encoding), or the parse error with its position.
typedef struct {
    /// The encoded document (malloc'd); NULL when the text did not parse.
    uint8_t *_Nullable data;
    size_t length;
    /// Where the error is, from 1; 0 when unknown.
    uint32_t line;
    uint32_t column;
    /// toml++'s description of the error (malloc'd), or NULL.
    char *_Nullable message;
} hrm_toml_result;

/// Parses `length` bytes of `text` (NULs included: no C string) with toml++.
hrm_toml_result hrm_toml_parse(const char *_Nonnull text, size_t length);

/// Frees what `hrm_toml_parse` allocated.
void hrm_toml_free(hrm_toml_result *_Nonnull result);

#ifdef __cplusplus
}
#endif

#endif
