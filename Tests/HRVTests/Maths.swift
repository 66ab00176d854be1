#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The C library's functions, for the test series and the reference computations.
func logarithm(_ x: Double) -> Double { log(x) }
func cosine(_ x: Double) -> Double { cos(x) }
func sine(_ x: Double) -> Double { sin(x) }
func logarithm10(_ x: Double) -> Double { log10(x) }
