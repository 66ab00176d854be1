import Benchmark
import HRV

/// The HRV module's costs in `hrm watch` (per beat, and every 5 s) and `hrm hrv` (a session).
///
/// The RR series is resting-like (sinus arrhythmia, noise) with an artefact every 20-60 beats, so
/// the corrector's correction paths run too. Per-beat benchmarks feed `scaledIterations` beats
/// per sample after a warm-up of 2000 beats outside the measurement, so their malloc counts are
/// the steady state's: divide by the scaling factor (1000) for mallocs per beat.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .instructions],
        timeUnits: .nanoseconds,
        warmupIterations: 3,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 100
    )
    let session = RRSeries.resting(count: 40_000, seed: 1)

    Benchmark("corrector + 120 s window, per beat") { benchmark in
        var corrector = ArtefactCorrector()
        var window = HRVWindow(seconds: 120)
        var decided: [NNInterval] = []
        var position = 0
        func feed(_ beats: Int) {
            for _ in 0..<beats {
                decided.removeAll(keepingCapacity: true)
                corrector.append(session[position], into: &decided)
                window.append(contentsOf: decided)
                position = (position + 1) % session.count
            }
        }
        feed(2000)
        benchmark.startMeasurement()
        feed(benchmark.scaledIterations.count)
        benchmark.stopMeasurement()
        blackHole(window.count)
    }

    // The corrector alone: what correcting one beat costs.
    Benchmark("corrector alone, per beat") { benchmark in
        var corrector = ArtefactCorrector()
        var decided: [NNInterval] = []
        var position = 0
        func feed(_ beats: Int) {
            for _ in 0..<beats {
                decided.removeAll(keepingCapacity: true)
                corrector.append(session[position], into: &decided)
                position = (position + 1) % session.count
            }
        }
        feed(2000)
        benchmark.startMeasurement()
        feed(benchmark.scaledIterations.count)
        benchmark.stopMeasurement()
        blackHole(decided.count + corrector.artefacts)
    }

    // What `hrm watch` does per beat: the corrector, the live window and the session's
    // accumulator (running sums and the streaming DFA).
    Benchmark("corrector + 60 s window + session accumulator, per beat") { benchmark in
        var corrector = ArtefactCorrector()
        var window = HRVWindow(seconds: 60)
        var accumulator = HRVAccumulator()
        var decided: [NNInterval] = []
        var position = 0
        func feed(_ beats: Int) {
            for _ in 0..<beats {
                decided.removeAll(keepingCapacity: true)
                corrector.append(session[position], into: &decided)
                for beat in decided {
                    window.append(beat)
                    accumulator.append(beat)
                }
                position = (position + 1) % session.count
            }
        }
        feed(2000)
        benchmark.startMeasurement()
        feed(benchmark.scaledIterations.count)
        benchmark.stopMeasurement()
        blackHole(window.count + accumulator.count)
    }

    // alpha1 over 120 s at 75 bpm: 150 beats, as `hrm watch` computes it every 5 s.
    let twoMinutes = Array(session.prefix(150))
    Benchmark("alpha1, 150 beats", configuration: .init(timeUnits: .microseconds)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(HRV.alpha1(twoMinutes))
        }
    }

    // The live figures without alpha1: a 120 s window with the corrector's held-back beats.
    let (window, provisional) = {
        var corrector = ArtefactCorrector()
        var window = HRVWindow(seconds: 120)
        for rr in session.prefix(3000) { window.append(contentsOf: corrector.append(rr)) }
        return (window, corrector.provisional)
    }()
    Benchmark("window metrics + provisional, no alpha1") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(window.metrics(adding: provisional, alpha1: false))
        }
    }

    Benchmark("window metrics + provisional, with alpha1", configuration: .init(timeUnits: .microseconds)) {
        benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(window.metrics(adding: provisional, alpha1: true))
        }
    }

    // `hrm hrv` over a 10-hour session (40 000 beats): correction, every metric, alpha1.
    Benchmark(
        "analyse 40 000 beats (10 h)",
        configuration: .init(timeUnits: .milliseconds, scalingFactor: .one, maxIterations: 20)
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(HRV.analyse(rr: session))
        }
    }

    // `hrm hrv`'s correction alone over the same session (the whole-run corrector: its ectopic
    // pairs and centred median); divide by 40 000 for the cost per beat.
    Benchmark(
        "correct 40 000 beats (10 h), whole run",
        configuration: .init(timeUnits: .microseconds, scalingFactor: .one, maxIterations: 20)
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(HRV.correct(rr: session))
        }
    }
}

/// A deterministic resting-like RR series with artefacts, built without Foundation.
enum RRSeries {
    static func resting(count: Int, seed: UInt64) -> [Double] {
        var state = seed
        func uniform() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }
        // Sinus arrhythmia as a rotating phasor (no trigonometry needed): 0.25 Hz at ~0.8 s.
        let (c, s) = (0.951_056_516_295_153_6, 0.309_016_994_374_947_4)  // cos, sin of 18°.
        var (x, y) = (1.0, 0.0)
        var rr: [Double] = []
        rr.reserveCapacity(count)
        var nextArtefact = 30
        while rr.count < count {
            (x, y) = (c * x - s * y, s * x + c * y)
            let noise = (uniform() + uniform() + uniform() - 1.5) * 20
            var value = 800 + 50 * y + noise
            if rr.count == nextArtefact {
                value *= uniform() < 0.5 ? 2 : 0.55
                nextArtefact += 20 + Int(uniform() * 40)
            }
            rr.append(value)
        }
        return rr
    }
}
