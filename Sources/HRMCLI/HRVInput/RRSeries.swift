import Monitor
import Outputs
import SessionLibrary

/// RR intervals in runs: a run ends at a gap and at the end of a source, so that no successive
/// difference spans either.
struct RRRuns: Equatable {
    private(set) var runs: [[Double]] = []
    private var current: [Double] = []

    /// Every interval, every run (the current one only once it has ended).
    var count: Int { runs.reduce(0) { $0 + $1.count } }

    mutating func add(_ intervals: [Double]) { current += intervals }

    mutating func end() {
        if !current.isEmpty { runs.append(current) }
        current = []
    }
}

/// `hrm hrv`'s input gathered as it is read, two ways at once: all the RR intervals together (how
/// input from one strap, or from none, has always been read) and each strap's on its own (input
/// from several straps, whose interleaved beats are no series at all).
struct RRSeries {
    /// The lines of one strap: `device` nil gathers the lines that name none.
    struct Strap: Equatable {
        let device: String?
        /// From its first `info` line that gives one.
        var name: String?
        var runs = RRRuns()
    }

    /// Every interval, in the order read, cut at every gap.
    private(set) var all = RRRuns()
    /// In the order their device was first named; the one of no device only once it gives intervals.
    private(set) var straps: [Strap] = []
    private var index: [String?: Int] = [:]

    /// How many `ecg_beat` lines were read (with `--rr-source ecg`).
    private(set) var ecgBeats = 0

    /// The straps named by a device address (leaving out lines that name none).
    var named: [Strap] { straps.filter { $0.device != nil } }

    mutating func add(_ read: RRLineRead) {
        if read.device != nil { _ = strap(read.device) }
        switch read.line {
        case .skipped, .recordingHeader: break
        case .intervals(let intervals):
            all.add(intervals)
            let at = strap(read.device)
            straps[at].runs.add(intervals)
        case .ecgBeat(let rr?):
            ecgBeats += 1
            all.add([rr])
            let at = strap(read.device)
            straps[at].runs.add([rr])
        case .ecgBeat(nil):
            ecgBeats += 1
            // The first peak after a (re)start: nothing spans the time before it.
            fallthrough
        case .gap:
            all.end()
            if read.device == nil {
                // Watch's last `stopped` names no strap: it ends every one's run.
                for at in straps.indices { straps[at].runs.end() }
            } else if let at = index[read.device] {
                straps[at].runs.end()
            }
        }
        if let name = read.name, let at = index[read.device], straps[at].name == nil {
            straps[at].name = name
        }
    }

    /// The end of a source ends every run: no successive difference spans two files.
    mutating func endSource() {
        all.end()
        for at in straps.indices { straps[at].runs.end() }
    }

    private mutating func strap(_ device: String?) -> Int {
        if let at = index[device] { return at }
        straps.append(Strap(device: device))
        index[device] = straps.count - 1
        return straps.count - 1
    }
}
