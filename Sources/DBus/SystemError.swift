#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `errno` for people: "Bad file descriptor (errno 9)". Call it right after the failing call.
public func systemErrorText() -> String {
    systemErrorText(errno)
}

/// The text for an errno value.
public func systemErrorText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return "\(String(cString: text)) (errno \(code))"
}
