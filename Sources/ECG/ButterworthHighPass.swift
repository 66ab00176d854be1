#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A Butterworth high-pass filter run sample by sample (causal): second-order sections in
/// transposed direct form II, designed as scipy's `butter(order, cutoff, "highpass", fs=...)` is
/// (the analog prototype's poles, the high-pass transform, the bilinear transform with the cutoff
/// prewarped), so that its gain is 1 at the Nyquist frequency and 0 at DC.
///
/// NeuroKit's cleaning runs the same filter forwards and backwards (zero phase); a stream cannot
/// look ahead, so this runs it forwards only: at 0.5 Hz the phase it adds to a QRS complex (10 to
/// 40 Hz) is well under a sample.
struct ButterworthHighPass: Sendable {
    /// One section: `b0 + b1 z⁻¹ + b2 z⁻²` over `1 + a1 z⁻¹ + a2 z⁻²`, and its two state values.
    struct Section: Sendable {
        var b0, b1, b2, a1, a2: Double
        var z1 = 0.0
        var z2 = 0.0

        mutating func step(_ x: Double) -> Double {
            let y = b0 * x + z1
            z1 = b1 * x - a1 * y + z2
            z2 = b2 * x - a2 * y
            return y
        }

        /// The state in which a constant input `x` gives a constant output (scipy's `sosfilt_zi`),
        /// and that output.
        mutating func settle(at x: Double) -> Double {
            let y = (b0 + b1 + b2) / (1 + a1 + a2) * x
            z2 = b2 * x - a2 * y
            z1 = y - b0 * x
            return y
        }
    }

    private(set) var sections: [Section]
    private var settled = false

    /// A filter of `order` (1 or more) with its cutoff at `cutoff` Hz, for samples at
    /// `sampleRate` Hz (the cutoff below half of it).
    init(order: Int, cutoff: Double, sampleRate: Double) {
        let fs2 = 2 * sampleRate
        // Prewarped analog cutoff, so that the digital filter's -3 dB point is at `cutoff`.
        let warped = fs2 * tan(Double.pi * cutoff / sampleRate)
        var sections: [Section] = []
        // Poles of the analog low-pass prototype in the left half plane: exp(iπ(2k + n + 1)/2n).
        // Those with an imaginary part above zero stand for their conjugate pair.
        for k in 0..<order {
            let angle = Double.pi * Double(2 * k + order + 1) / Double(2 * order)
            let (re, im) = (cos(angle), sin(angle))
            if im < -1e-12 { continue }
            // High-pass transform: s -> warped / s; the pole becomes warped / p.
            let magnitude = re * re + im * im
            let (hre, him) = (warped * re / magnitude, -warped * im / magnitude)
            // Bilinear transform: z = (fs2 + s) / (fs2 - s).
            let (nre, nim) = (fs2 + hre, him)
            let (dre, dim) = (fs2 - hre, -him)
            let denominator = dre * dre + dim * dim
            let zre = (nre * dre + nim * dim) / denominator
            let zim = (nim * dre - nre * dim) / denominator
            if abs(im) <= 1e-12 {
                // A real pole: one first-order section, its zero at z = 1, gain 1 at z = -1.
                let gain = (1 + zre) / 2
                sections.append(Section(b0: gain, b1: -gain, b2: 0, a1: -zre, a2: 0))
            } else {
                // A pair: zeros at z = 1 twice, gain 1 at z = -1.
                let a1 = -2 * zre
                let a2 = zre * zre + zim * zim
                let gain = (1 - a1 + a2) / 4
                sections.append(Section(b0: gain, b1: -2 * gain, b2: gain, a1: a1, a2: a2))
            }
        }
        self.sections = sections
    }

    /// The filtered value of the next sample. The first sample sets the filter's state as though
    /// the signal had always been at its value, so that an offset does not ring for seconds.
    mutating func step(_ x: Double) -> Double {
        if !settled {
            settled = true
            var input = x
            for index in sections.indices { input = sections[index].settle(at: input) }
        }
        var value = x
        for index in sections.indices { value = sections[index].step(value) }
        return value
    }
}
