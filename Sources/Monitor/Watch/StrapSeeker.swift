package import BlueZ
import Logging

/// Looks again, now and then, for the straps a session of several asked for but did not find at
/// the start (a teammate who arrives late): a short scan in the adapter's turn, 2 s after the
/// start, then less and less often, at most every 30 s, for as long as the session runs. A scan
/// holds the adapter's turn, so a strap that dropped meanwhile waits for it to end (4 s at most)
/// before it connects again.
package struct StrapSeeker: Sendable {
    /// One per adapter: the requests still missing there.
    package let finder: DeviceFinder
    package let gate: ConnectGate
    package private(set) var missing: [StrapRequest]
    private var backoff = Backoff(initial: .seconds(2), maximum: .seconds(30))
    /// What the rounds wait on: a test's clock, or the continuous one.
    private let clock: any Clock<Duration>

    /// How long one scan of a round lasts.
    package static let scanWindow: Duration = .seconds(4)

    package init(
        finder: DeviceFinder, gate: ConnectGate, missing: [StrapRequest],
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        var quiet = finder
        // A round is not a new session's scan: no `scanning` status for it.
        quiet.scanning = {}
        self.finder = quiet
        self.gate = gate
        self.missing = missing
        self.clock = clock
    }

    /// Waits for the next round and scans: the straps found (taken off `missing`), possibly none;
    /// nil once the session is stopped. A scan that fails (an adapter switched off) finds nothing
    /// this round.
    package mutating func nextRound() async -> [DiscoveredDevice]? {
        try? await backoff.sleep(on: clock)
        if Task.isCancelled { return nil }
        let wanted = missing.map(\.wanted)
        finder.log.info("looking again for \(wanted.joined(separator: ", ")), not found so far")
        let finder = self.finder
        let turn = try? await gate.withTurn { () async throws(BlueZError) -> [DiscoveredDevice?] in
            try await finder.find(each: wanted, scanFor: Self.scanWindow)
        }
        if Task.isCancelled { return nil }
        guard let found = turn ?? nil else { return [] }
        missing = zip(missing, found).compactMap { request, device in device == nil ? request : nil }
        return found.compactMap { $0 }
    }
}
