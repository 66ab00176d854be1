import Monitor
import Outputs
import SessionLibrary

/// The heart rate of the last minute as a line of block characters.
struct Sparkline {
    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// The last 60 s of `history` (milliseconds, BPM; oldest first) in 30 cells of 2 s each, the
    /// mean of each cell drawn on a fixed scale: a span of at least 30 bpm (more when the minute
    /// spans more), in steps of 10 around the values, so that 73 → 74 bpm is a step of a block or
    /// none, not the bottom to the top. A cell without a measurement (a drop) is a space.
    static func lastMinute(_ history: [(time: Int64, bpm: Int)], now: Int64, cells: Int = 30) -> String {
        let window: Int64 = 60_000
        let cellLength = window / Int64(cells)
        var sums = [Int](repeating: 0, count: cells)
        var counts = [Int](repeating: 0, count: cells)
        for (time, bpm) in history where now - time < window && time <= now {
            let index = cells - 1 - Int((now - time) / cellLength)
            sums[index] += bpm
            counts[index] += 1
        }
        let means = zip(sums, counts).map { $1 > 0 ? Double($0) / Double($1) : nil }
        let present = means.compactMap { $0 }
        guard let low = present.min(), let high = present.max() else { return "" }
        let bottom = (low / 10).rounded(.down) * 10
        let top = max((high / 10).rounded(.up) * 10, bottom + 30)
        // From the first cell with a measurement: a minute not yet filled is not drawn as empty.
        let first = means.firstIndex { $0 != nil } ?? 0
        return String(
            means[first...].map { mean -> Character in
                guard let mean else { return " " }
                let level = Int(((mean - bottom) / (top - bottom) * Double(blocks.count - 1)).rounded())
                return blocks[min(max(level, 0), blocks.count - 1)]
            })
    }
}
