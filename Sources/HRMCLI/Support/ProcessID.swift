import Monitor
import SessionLibrary

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// This process's id, for a client id no other hrm on the host has.
enum ProcessID {
    static var current: Int32 { getpid() }
}
