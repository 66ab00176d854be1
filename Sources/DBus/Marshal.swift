internal import CDBus
internal import CDBusShims

/// Owns one reference to a libdbus message. libdbus messages are safe to hand between threads as
/// long as only one thread uses a message at a time, which is how this type is used.
final class OwnedMessage: @unchecked Sendable {
    let pointer: OpaquePointer

    init(adopting pointer: OpaquePointer) { self.pointer = pointer }

    init(retaining pointer: OpaquePointer) {
        self.pointer = pointer
        dbus_message_ref(pointer)
    }

    deinit { dbus_message_unref(pointer) }
}

// MARK: - Limits

/// The specification's limits, plus the libdbus ones that would otherwise abort or get the
/// connection dropped by the bus.
enum Limits {
    static let maxArrayBytes = 1 << 26  // 64 MiB
    static let maxMessageBytes = 1 << 27  // 128 MiB
    static let maxContainerDepth = 64  // arrays + structs + dict entries + variants
}

// MARK: - Validation (pure Swift, before anything reaches libdbus)

struct ValueValidator {
    var estimatedBytes = 0

    mutating func validate(_ values: [Value]) throws(DBusError) -> Signature {
        var types: [DBusType] = []
        types.reserveCapacity(values.count)
        for value in values {
            try validate(value, depth: 0)
            types.append(value.type)
        }
        let signature = try Signature(types)
        guard estimatedBytes <= Limits.maxMessageBytes - 4096 else {
            throw DBusError(
                .limitsExceeded, "message body of about \(estimatedBytes) bytes exceeds the 128 MiB limit")
        }
        return signature
    }

    private mutating func validate(_ value: Value, depth: Int) throws(DBusError) {
        switch value {
        case .byte: estimatedBytes += 1
        case .boolean, .int32, .uint32, .unixFD:
            estimatedBytes += 8
            if case .unixFD(let fd) = value, fd.descriptor == nil {
                throw DBusError(.invalidValue, "cannot send a closed or taken UnixFD")
            }
        case .int16, .uint16: estimatedBytes += 4
        case .int64, .uint64, .double: estimatedBytes += 16
        case .string(let s):
            try checkString(s)
            estimatedBytes += 8 + s.utf8.count
        case .objectPath(let p): estimatedBytes += 8 + p.rawValue.utf8.count
        case .signature(let s): estimatedBytes += 2 + s.rawValue.utf8.count
        case .bytes(let b):
            try checkDepth(depth + 1)
            guard b.count <= Limits.maxArrayBytes else { throw tooLarge(b.count) }
            estimatedBytes += 8 + b.count
        case .array(let elementType, let items):
            try checkDepth(depth + 1)
            let before = estimatedBytes
            estimatedBytes += 8
            for item in items {
                guard item.type == elementType else {
                    throw DBusError(
                        .invalidValue,
                        "array of '\(elementType)' holds an element of type '\(item.type)'")
                }
                try validate(item, depth: depth + 1)
            }
            if estimatedBytes - before > Limits.maxArrayBytes { throw tooLarge(estimatedBytes - before) }
        case .dictionary(let keyType, let valueType, let entries):
            try checkDepth(depth + 2)
            guard keyType.isBasic else {
                throw DBusError(.invalidValue, "dictionary key type '\(keyType)' is not a basic type")
            }
            let before = estimatedBytes
            estimatedBytes += 8
            for entry in entries {
                guard entry.key.type == keyType, entry.value.type == valueType else {
                    throw DBusError(
                        .invalidValue,
                        "dictionary of '{\(keyType)\(valueType)}' holds an entry of type "
                            + "'{\(entry.key.type)\(entry.value.type)}'")
                }
                estimatedBytes += 8
                try validate(entry.key, depth: depth + 2)
                try validate(entry.value, depth: depth + 2)
            }
            if estimatedBytes - before > Limits.maxArrayBytes { throw tooLarge(estimatedBytes - before) }
        case .structure(let fields):
            try checkDepth(depth + 1)
            guard !fields.isEmpty else { throw DBusError(.invalidValue, "a struct needs at least one field") }
            estimatedBytes += 8
            for field in fields { try validate(field, depth: depth + 1) }
        case .variant(let inner):
            try checkDepth(depth + 1)
            // The variant's own signature must be a valid single complete type.
            _ = try Signature([inner.type])
            estimatedBytes += 8
            try validate(inner, depth: depth + 1)
        }
    }

    private func checkDepth(_ depth: Int) throws(DBusError) {
        guard depth <= Limits.maxContainerDepth else {
            throw DBusError(
                .invalidValue, "value nests containers more than \(Limits.maxContainerDepth) deep")
        }
    }

    private func checkString(_ s: String) throws(DBusError) {
        // Swift strings are valid UTF-8; D-Bus strings must also not contain NUL.
        if s.utf8.contains(0) {
            throw DBusError(.invalidValue, "string \(s.debugDescription) contains a NUL character")
        }
    }

    private func tooLarge(_ bytes: Int) -> DBusError {
        DBusError(.limitsExceeded, "array of about \(bytes) bytes exceeds the 64 MiB limit")
    }
}

// MARK: - Encoding

enum Encoder {
    /// Validates `values` and appends them to `message`.
    static func append(_ values: [Value], to message: OpaquePointer) throws(DBusError) {
        var validator = ValueValidator()
        _ = try validator.validate(values)
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for value in values {
            guard append(value, to: &iter) else {
                throw DBusError(.noMemory, "out of memory building a message")
            }
        }
    }

    private static func basic<T>(_ iter: inout DBusMessageIter, _ code: Int32, _ value: T) -> Bool {
        var copy = value
        return withUnsafePointer(to: &copy) { dbus_message_iter_append_basic(&iter, code, $0) } != 0
    }

    private static func string(_ iter: inout DBusMessageIter, _ code: Int32, _ value: String) -> Bool {
        value.withCString { p in
            var pointer: UnsafePointer<CChar>? = p
            return withUnsafePointer(to: &pointer) { dbus_message_iter_append_basic(&iter, code, $0) } != 0
        }
    }

    private static func container(
        _ iter: inout DBusMessageIter, _ code: Int32, _ signature: String?,
        _ body: (inout DBusMessageIter) -> Bool
    ) -> Bool {
        var sub = DBusMessageIter()
        let opened: Bool
        if let signature {
            opened = signature.withCString { dbus_message_iter_open_container(&iter, code, $0, &sub) } != 0
        } else {
            opened = dbus_message_iter_open_container(&iter, code, nil, &sub) != 0
        }
        guard opened else { return false }
        guard body(&sub) else {
            dbus_message_iter_abandon_container(&iter, &sub)
            return false
        }
        return dbus_message_iter_close_container(&iter, &sub) != 0
    }

    static func append(_ value: Value, to iter: inout DBusMessageIter) -> Bool {
        switch value {
        case .byte(let v): return basic(&iter, Int32(CDBUS_TYPE_BYTE), v)
        case .boolean(let v): return basic(&iter, Int32(CDBUS_TYPE_BOOLEAN), dbus_bool_t(v ? 1 : 0))
        case .int16(let v): return basic(&iter, Int32(CDBUS_TYPE_INT16), v)
        case .uint16(let v): return basic(&iter, Int32(CDBUS_TYPE_UINT16), v)
        case .int32(let v): return basic(&iter, Int32(CDBUS_TYPE_INT32), v)
        case .uint32(let v): return basic(&iter, Int32(CDBUS_TYPE_UINT32), v)
        case .int64(let v): return basic(&iter, Int32(CDBUS_TYPE_INT64), v)
        case .uint64(let v): return basic(&iter, Int32(CDBUS_TYPE_UINT64), v)
        case .double(let v): return basic(&iter, Int32(CDBUS_TYPE_DOUBLE), v)
        case .string(let v): return string(&iter, Int32(CDBUS_TYPE_STRING), v)
        case .objectPath(let v): return string(&iter, Int32(CDBUS_TYPE_OBJECT_PATH), v.rawValue)
        case .signature(let v): return string(&iter, Int32(CDBUS_TYPE_SIGNATURE), v.rawValue)
        case .unixFD(let fd):
            // libdbus duplicates the descriptor; ours stays open and owned by `fd`.
            guard let d = fd.descriptor else { return false }
            return basic(&iter, Int32(CDBUS_TYPE_UNIX_FD), d)
        case .bytes(let bytes):
            return container(&iter, Int32(CDBUS_TYPE_ARRAY), "y") { sub in
                bytes.withUnsafeBufferPointer { buffer in
                    var base = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)
                    return withUnsafePointer(to: &base) {
                        dbus_message_iter_append_fixed_array(
                            &sub, Int32(CDBUS_TYPE_BYTE), $0, Int32(buffer.count))
                    } != 0
                }
            }
        case .array(let elementType, let items):
            return container(&iter, Int32(CDBUS_TYPE_ARRAY), elementType.description) { sub in
                for item in items where !append(item, to: &sub) { return false }
                return true
            }
        case .dictionary(let keyType, let valueType, let entries):
            let signature = "{\(keyType)\(valueType)}"
            return container(&iter, Int32(CDBUS_TYPE_ARRAY), signature) { sub in
                for entry in entries {
                    let ok = container(&sub, Int32(CDBUS_TYPE_DICT_ENTRY), nil) { e in
                        append(entry.key, to: &e) && append(entry.value, to: &e)
                    }
                    if !ok { return false }
                }
                return true
            }
        case .structure(let fields):
            return container(&iter, Int32(CDBUS_TYPE_STRUCT), nil) { sub in
                for field in fields where !append(field, to: &sub) { return false }
                return true
            }
        case .variant(let inner):
            return container(&iter, Int32(CDBUS_TYPE_VARIANT), inner.type.description) { sub in
                append(inner, to: &sub)
            }
        }
    }
}

// MARK: - Decoding

/// Parsed signatures by text; incoming messages repeat a handful of signatures.
struct SignatureCache {
    private var cache: [String: [DBusType]] = [:]

    mutating func types(_ text: String) throws(DBusError) -> [DBusType] {
        if let hit = cache[text] { return hit }
        let types = try Signature(text).types
        if cache.count > 512 { cache.removeAll(keepingCapacity: true) }
        cache[text] = types
        return types
    }
}

enum Decoder {
    static func body(of message: OpaquePointer, cache: inout SignatureCache) throws(DBusError) -> [Value] {
        guard let cSignature = dbus_message_get_signature(message) else { return [] }
        let types = try cache.types(String(cString: cSignature))
        if types.isEmpty { return [] }
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        var values: [Value] = []
        values.reserveCapacity(types.count)
        for (i, type) in types.enumerated() {
            values.append(try decode(type, &iter, cache: &cache))
            if i + 1 < types.count { dbus_message_iter_next(&iter) }
        }
        return values
    }

    /// The first argument if it is a string (for arg0 matching), without decoding the rest.
    static func firstString(of message: OpaquePointer) -> String? {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0,
            dbus_message_iter_get_arg_type(&iter) == Int32(CDBUS_TYPE_STRING)
        else { return nil }
        var p: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &p)
        return p.map { String(cString: $0) }
    }

    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ zero: T) -> T {
        var v = zero
        dbus_message_iter_get_basic(&iter, &v)
        return v
    }

    private static func cString(_ iter: inout DBusMessageIter) -> String {
        var p: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &p)
        return p.map { String(cString: $0) } ?? ""
    }

    static func decode(
        _ type: DBusType, _ iter: inout DBusMessageIter, cache: inout SignatureCache
    ) throws(DBusError) -> Value {
        let actual = dbus_message_iter_get_arg_type(&iter)
        func check(_ code: Int32) throws(DBusError) {
            guard actual == code else {
                throw DBusError(.invalidSignature, "message body does not match its signature at a '\(type)'")
            }
        }
        switch type {
        case .byte:
            try check(Int32(CDBUS_TYPE_BYTE))
            return .byte(basic(&iter, UInt8(0)))
        case .boolean:
            try check(Int32(CDBUS_TYPE_BOOLEAN))
            return .boolean(basic(&iter, dbus_bool_t(0)) != 0)
        case .int16:
            try check(Int32(CDBUS_TYPE_INT16))
            return .int16(basic(&iter, Int16(0)))
        case .uint16:
            try check(Int32(CDBUS_TYPE_UINT16))
            return .uint16(basic(&iter, UInt16(0)))
        case .int32:
            try check(Int32(CDBUS_TYPE_INT32))
            return .int32(basic(&iter, Int32(0)))
        case .uint32:
            try check(Int32(CDBUS_TYPE_UINT32))
            return .uint32(basic(&iter, UInt32(0)))
        case .int64:
            try check(Int32(CDBUS_TYPE_INT64))
            return .int64(basic(&iter, Int64(0)))
        case .uint64:
            try check(Int32(CDBUS_TYPE_UINT64))
            return .uint64(basic(&iter, UInt64(0)))
        case .double:
            try check(Int32(CDBUS_TYPE_DOUBLE))
            return .double(basic(&iter, Double(0)))
        case .string:
            try check(Int32(CDBUS_TYPE_STRING))
            return .string(cString(&iter))
        case .objectPath:
            try check(Int32(CDBUS_TYPE_OBJECT_PATH))
            return .objectPath(ObjectPath(unchecked: cString(&iter)))
        case .signature:
            try check(Int32(CDBUS_TYPE_SIGNATURE))
            let text = cString(&iter)
            return .signature(Signature(validatedTypes: try cache.types(text), rawValue: text))
        case .unixFD:
            try check(Int32(CDBUS_TYPE_UNIX_FD))
            // libdbus returns a new duplicate that the caller owns.
            let fd = basic(&iter, Int32(-1))
            guard fd >= 0 else { throw DBusError(.invalidValue, "message carries an invalid unix fd") }
            return .unixFD(UnixFD(taking: fd))
        case .variant:
            try check(Int32(CDBUS_TYPE_VARIANT))
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            guard let cSig = dbus_message_iter_get_signature(&sub) else {
                throw DBusError(.noMemory, "out of memory reading a variant")
            }
            let text = String(cString: cSig)
            dbus_free(cSig)
            let types = try cache.types(text)
            guard types.count == 1 else { throw DBusError(.invalidSignature, "variant holds '\(text)'") }
            return .variant(try decode(types[0], &sub, cache: &cache))
        case .array(let element):
            try check(Int32(CDBUS_TYPE_ARRAY))
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            if element == .byte {
                var pointer: UnsafePointer<UInt8>? = nil
                var count: Int32 = 0
                withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_fixed_array(&sub, $0, &count) }
                guard let pointer, count > 0 else { return .bytes([]) }
                return .bytes(Array(UnsafeBufferPointer(start: pointer, count: Int(count))))
            }
            var items: [Value] = []
            while dbus_message_iter_get_arg_type(&sub) != Int32(CDBUS_TYPE_INVALID) {
                items.append(try decode(element, &sub, cache: &cache))
                dbus_message_iter_next(&sub)
            }
            return .array(element, items)
        case .dictionary(let keyType, let valueType):
            try check(Int32(CDBUS_TYPE_ARRAY))
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var entries: [DictEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == Int32(CDBUS_TYPE_DICT_ENTRY) {
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entry)
                let key = try decode(keyType, &entry, cache: &cache)
                dbus_message_iter_next(&entry)
                let value = try decode(valueType, &entry, cache: &cache)
                entries.append(DictEntry(key, value))
                dbus_message_iter_next(&sub)
            }
            return .dictionary(key: keyType, value: valueType, entries)
        case .structure(let fieldTypes):
            try check(Int32(CDBUS_TYPE_STRUCT))
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields: [Value] = []
            fields.reserveCapacity(fieldTypes.count)
            for (i, fieldType) in fieldTypes.enumerated() {
                fields.append(try decode(fieldType, &sub, cache: &cache))
                if i + 1 < fieldTypes.count { dbus_message_iter_next(&sub) }
            }
            return .structure(fields)
        }
    }
}
