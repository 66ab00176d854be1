package import BlueZ

/// `watch DEVICE DEVICE...` and `watch --all`: a connection supervisor per strap, all into the
/// one pipeline. Each strap has its own connection, reconnect loop and backoff, so a drop of one
/// never pauses another; the straps on one adapter take turns to connect (`ConnectGate`).
extension WatchSession {
    /// A strap found, and how to reach it.
    private struct Assignment: Sendable {
        package let finder: DeviceFinder
        package let target: DiscoveredDevice
        package let gate: ConnectGate
    }

    package func watchSeveral(_ client: BlueZClient) async -> Ending {
        var assignments: [Assignment] = []
        var missing: [StrapRequest] = []
        var seekers: [StrapSeeker] = []
        var sightings: [Sightings] = []
        do throws(BlueZError) {
            // Two spellings of one adapter (hci0 and its address) are one adapter: one gate.
            var gates: [(path: AdapterPath, gate: ConnectGate)] = []
            for (adapterName, requests) in groupedByAdapter() {
                let adapter = try await options.bluetooth.usableAdapter(client, named: adapterName)
                let gate =
                    gates.first { $0.path == adapter.path }?.gate
                    ?? {
                        let gate = ConnectGate()
                        gates.append((adapter.path, gate))
                        return gate
                    }()
                let finder = DeviceFinder(
                    client: client, adapter: adapter, wanted: nil, scanTimeout: options.scanTimeout,
                    scanning: { status(.scanning) }, log: options.logs.watch)
                sightings.append(finder.sightings)
                let found: [DiscoveredDevice?] =
                    options.all
                    ? try await finder.findAll() : try await finder.find(each: requests.map(\.wanted))
                var missingHere: [StrapRequest] = []
                for (index, device) in found.enumerated() {
                    guard let device else {
                        missingHere.append(requests[index])
                        continue
                    }
                    // Named twice (by address and by name): watched once.
                    if !assignments.contains(where: { $0.target.address == device.address }) {
                        assignments.append(Assignment(finder: finder, target: device, gate: gate))
                    }
                }
                missing += missingHere
                if !missingHere.isEmpty {
                    seekers.append(StrapSeeker(finder: finder, gate: gate, missing: missingHere))
                }
            }
        } catch {
            return .failed(error, device: nil)
        }
        if Task.isCancelled { return .stopped(device: nil) }
        let searched = options.scanTimeout.spoken
        guard !assignments.isEmpty else {
            let what =
                options.all
                ? "no heart-rate monitor" : "none of " + missing.map(\.spoken).joined(separator: ", ")
            return .failed(
                BlueZError(
                    .deviceNotFound,
                    "\(what) found in \(searched)" + (options.all ? "" : Sightings.told(sightings))),
                device: nil)
        }
        for request in missing {
            reportStrapFailure(
                BlueZError(
                    .deviceNotFound,
                    "no \(request.spoken) found in \(searched): watching the others, and looking for it now and then"
                ),
                device: nil)
        }
        return await supervise(assignments, seeking: seekers)
    }

    /// The requests by adapter, in the order first given: `--adapter` (or the first powered one)
    /// for those without their own. `--all` is one group on that adapter.
    private func groupedByAdapter() -> [(adapter: String?, requests: [StrapRequest])] {
        if options.all { return [(options.bluetooth.adapter, [])] }
        var groups: [(adapter: String?, requests: [StrapRequest])] = []
        for request in options.straps {
            let adapter = request.adapter ?? options.bluetooth.adapter
            if let index = groups.firstIndex(where: { $0.adapter == adapter }) {
                groups[index].requests.append(request)
            } else {
                groups.append((adapter, [request]))
            }
        }
        return groups
    }

    /// What a task of the session's group ends with: a strap's supervisor, or a seeker's round.
    private enum Finished: Sendable {
        case strap(device: String, result: Result<ConnectionSupervisor.Outcome, BlueZError>)
        /// Straps found late, with what the seeker is still looking for; nil when stopped.
        case round(found: [Assignment], seeker: StrapSeeker?)
    }

    /// Runs every strap's supervisor until the session stops or all have ended, and the seekers
    /// of the straps not found, whose finds get supervisors of their own. A failure that
    /// concerns every strap (access denied, Bluetooth unavailable at the start) ends them all; one
    /// that concerns one strap is reported and the others go on. The last strap's failure, when
    /// none is left, is the session's.
    private func supervise(_ assignments: [Assignment], seeking seekers: [StrapSeeker]) async -> Ending {
        let client = assignments[0].finder.client
        return await withTaskGroup(of: Finished.self) { group -> Ending in
            var watched = assignments
            func start(_ assignment: Assignment) {
                let sharing = watched.filter { $0.gate === assignment.gate }.count > 1
                let supervisor = ConnectionSupervisor(
                    client: client, finder: assignment.finder, target: assignment.target, pipeline: pipeline,
                    reconnect: options.reconnect, gate: assignment.gate,
                    connectTimeout: sharing ? .seconds(8) : .seconds(20),
                    notifyMethod: options.share ? .startNotify : .automatic,
                    sensorStreams: options.sensorStreams)
                group.addTask {
                    do throws(BlueZError) {
                        return .strap(
                            device: supervisor.address, result: .success(try await supervisor.run()))
                    } catch {
                        return .strap(device: supervisor.address, result: .failure(error))
                    }
                }
            }
            func seek(_ seeker: StrapSeeker) {
                group.addTask {
                    var seeker = seeker
                    guard let found = await seeker.nextRound() else { return .round(found: [], seeker: nil) }
                    return .round(
                        found: found.map {
                            Assignment(finder: seeker.finder, target: $0, gate: seeker.gate)
                        },
                        seeker: seeker.missing.isEmpty ? nil : seeker)
                }
            }
            for assignment in assignments { start(assignment) }
            for seeker in seekers { seek(seeker) }
            var remaining = assignments.count
            var fatal: (error: BlueZError, device: String)? = nil
            var last: (error: BlueZError, device: String)? = nil
            var dropped: String? = nil
            while remaining > 0, let finished = await group.next() {
                let (device, result): (String, Result<ConnectionSupervisor.Outcome, BlueZError>)
                switch finished {
                case .round(let found, let seeker):
                    for assignment in found
                    where !watched.contains(where: { $0.target.address == assignment.target.address }) {
                        watched.append(assignment)
                        remaining += 1
                        start(assignment)
                    }
                    if let seeker, fatal == nil { seek(seeker) }
                    continue
                case .strap(let strap, let outcome):
                    (device, result) = (strap, outcome)
                }
                remaining -= 1
                switch result {
                case .success(.stopped):
                    continue
                case .success(.dropped):
                    dropped = device
                    if remaining > 0 {
                        reportStrapFailure(
                            BlueZError(
                                .disconnected,
                                "the link dropped and --no-reconnect was given: not reconnecting; watching the others"
                            ),
                            device: device)
                    }
                case .failure(let error) where error.code == .cancelled:
                    continue
                case .failure(let error) where Self.concernsEveryStrap(error):
                    if fatal == nil { fatal = (error, device) }
                    group.cancelAll()
                case .failure(let error):
                    if remaining > 0 {
                        reportStrapFailure(
                            BlueZError(error.code, "\(error.message): watching the others"), device: device)
                    } else {
                        last = (error, device)
                    }
                }
            }
            // No strap left to watch: the seekers stop too.
            group.cancelAll()
            if let fatal { return .failed(fatal.error, device: fatal.device) }
            if stop.reason != nil { return .stopped(device: nil) }
            if let last { return .failed(last.error, device: last.device) }
            return dropped.map { .dropped(device: $0) } ?? .stopped(device: nil)
        }
    }

    /// Failures that would end every strap's supervisor alike.
    private static func concernsEveryStrap(_ error: BlueZError) -> Bool {
        error.code == .accessDenied || ConnectionSupervisor.bluetoothUnavailable.contains(error.code)
    }

    /// A strap given up while others go on: an `error` event for it (stderr, and a line in JSON).
    private func reportStrapFailure(_ error: BlueZError, device: String?) {
        pipeline.send(
            MonitorEvent(
                device: device,
                kind: .error(code: EventErrorCode(error.code), message: error.message, hex: nil)))
    }
}
