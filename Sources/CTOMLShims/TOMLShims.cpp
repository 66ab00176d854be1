// toml++ (Debian's libtomlplusplus-dev), header-only and without exceptions, behind a C function
// that Swift can call: the parsed table comes back as bytes, so no C++ type crosses over.
//
// Encoding, little-endian: a value is a tag byte and its payload.
//   't' u32 count, then count × (u32 line, u32 key length, key bytes, value)
//   'a' u32 count, then count values
//   's' u32 length, bytes        'i' i64        'f' f64        'b' u8 (0 or 1)
//   'd' nothing (a date, a time or a date-time: no setting takes one)
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "CTOMLShims.h"

namespace {

void put32(std::string &out, uint32_t value) {
    for (int i = 0; i < 4; i++) out.push_back(char((value >> (8 * i)) & 0xFF));
}

void put64(std::string &out, uint64_t value) {
    for (int i = 0; i < 8; i++) out.push_back(char((value >> (8 * i)) & 0xFF));
}

void putBytes(std::string &out, std::string_view bytes) {
    put32(out, uint32_t(bytes.size()));
    out.append(bytes.data(), bytes.size());
}

void encode(std::string &out, const toml::node &node);

void encodeTable(std::string &out, const toml::table &table) {
    out.push_back('t');
    put32(out, uint32_t(table.size()));
    for (auto &&[key, value] : table) {
        put32(out, key.source().begin.line);
        putBytes(out, key.str());
        encode(out, value);
    }
}

void encode(std::string &out, const toml::node &node) {
    switch (node.type()) {
    case toml::node_type::table:
        encodeTable(out, *node.as_table());
        break;
    case toml::node_type::array: {
        const auto &array = *node.as_array();
        out.push_back('a');
        put32(out, uint32_t(array.size()));
        for (const auto &element : array) encode(out, element);
        break;
    }
    case toml::node_type::string:
        out.push_back('s');
        putBytes(out, node.as_string()->get());
        break;
    case toml::node_type::integer:
        out.push_back('i');
        put64(out, uint64_t(node.as_integer()->get()));
        break;
    case toml::node_type::floating_point: {
        double value = node.as_floating_point()->get();
        uint64_t bits;
        std::memcpy(&bits, &value, sizeof bits);
        out.push_back('f');
        put64(out, bits);
        break;
    }
    case toml::node_type::boolean:
        out.push_back('b');
        out.push_back(node.as_boolean()->get() ? 1 : 0);
        break;
    default:
        out.push_back('d');
        break;
    }
}

char *copy(std::string_view text) {
    char *copied = static_cast<char *>(std::malloc(text.size() + 1));
    if (copied == nullptr) return nullptr;
    std::memcpy(copied, text.data(), text.size());
    copied[text.size()] = 0;
    return copied;
}

} // namespace

extern "C" hrm_toml_result hrm_toml_parse(const char *text, size_t length) {
    hrm_toml_result result = {nullptr, 0, 0, 0, nullptr};
    toml::parse_result parsed = toml::parse(std::string_view(text, length));
    if (!parsed) {
        const auto &error = parsed.error();
        result.line = error.source().begin.line;
        result.column = error.source().begin.column;
        result.message = copy(error.description());
        return result;
    }
    std::string out;
    encodeTable(out, parsed.table());
    result.data = reinterpret_cast<uint8_t *>(copy(out));
    result.length = result.data == nullptr ? 0 : out.size();
    return result;
}

extern "C" void hrm_toml_free(hrm_toml_result *result) {
    std::free(result->data);
    std::free(result->message);
    result->data = nullptr;
    result->message = nullptr;
}
