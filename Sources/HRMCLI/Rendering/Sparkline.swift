/// The heart rate of the last minute as a line of block characters, scaled to its own range.
struct Sparkline {
    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// `values` oldest first; at most `width` of the newest are drawn.
    static func render(_ values: [Int], width: Int = 30) -> String {
        let shown = values.suffix(width)
        guard let low = shown.min(), let high = shown.max() else { return "" }
        let span = max(high - low, 1)
        return String(shown.map { blocks[(($0 - low) * (blocks.count - 1) + span / 2) / span] })
    }
}
