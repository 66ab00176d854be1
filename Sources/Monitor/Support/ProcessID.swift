#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// This process's id, for a client id no other hrm on the host has.
package enum ProcessID {
    package static var current: Int32 { getpid() }
}
