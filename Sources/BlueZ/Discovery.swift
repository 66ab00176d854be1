import DBus

extension BlueZClient {
    /// Devices of `adapter` as discovery finds and updates them, starting with the ones bluetoothd
    /// already knows. `services` filters by advertised service (nil: every device); the filter is
    /// applied again here because bluetoothd merges every client's filter. Ending the stream (the
    /// consumer stops or is cancelled) stops discovery.
    public func discover(
        adapter: Adapter, services: [BluetoothUUID]? = [BluetoothUUID(0x180D)]
    ) async throws(BlueZError) -> AsyncStream<DiscoveredDevice> {
        let adapterPath = adapter.path.objectPath
        var filter: [String: Value] = ["Transport": .string("le"), "DuplicateData": .boolean(true)]
        if let services { filter["UUIDs"] = .strings(services.map(\.description)) }
        let (events, watcherID) = watch()
        logger.debug(
            "discovery on \(adapter.name) starts",
            metadata: ["filter": "\(Value.propertyMap(filter).logSummary())"])
        do throws(BlueZError) {
            _ = try await call(
                "SetDiscoveryFilter", on: adapterPath, interface: BlueZNames.Call.adapter,
                body: [.propertyMap(filter)])
            _ = try await call("StartDiscovery", on: adapterPath, interface: BlueZNames.Call.adapter)
        } catch {
            unwatch(watcherID)
            throw error
        }
        nextScan += 1
        let scan = nextScan
        scans[adapterPath] = scan
        let wanted = services.map(Set.init)
        func matches(_ device: DiscoveredDevice) -> Bool {
            device.adapterPath == adapter.path && (wanted.map { !$0.isDisjoint(with: device.uuids) } ?? true)
        }
        let known = mirror.paths(with: Self.deviceInterface).compactMap { path in
            mirror.properties(path, Self.deviceInterface).flatMap {
                DiscoveredDevice(path: path, properties: $0)
            }
        }.filter(matches)

        // A device repeats (every advertisement with DuplicateData): a consumer that lags gets the
        // newest sightings, never an unbounded backlog.
        let (stream, continuation) = AsyncStream.makeStream(
            of: DiscoveredDevice.self, bufferingPolicy: .bufferingNewest(Self.watcherCapacity))
        for device in known { continuation.yield(device) }
        let tasks = self.tasks
        let relay = tasks.run { [weak self] in
            for await event in events {
                let path: ObjectPath
                switch event {
                case .interfacesAdded(let p, let interfaces) where interfaces[Self.deviceInterface] != nil:
                    path = p
                case .propertiesChanged(let change) where change.interface == Self.deviceInterface:
                    path = change.path
                default: continue
                }
                guard let properties = await self?.mirror.properties(path, Self.deviceInterface),
                    let device = DiscoveredDevice(path: path, properties: properties), matches(device)
                else { continue }
                continuation.yield(device)
            }
            continuation.finish()
        }
        let connection = self.connection
        let timeout = callTimeout
        let logger = self.logger
        continuation.onTermination = { [weak self] _ in
            relay.cancel()
            tasks.run {
                // One hop to the actor, as before the scan was numbered: a stop under way (SIGTERM)
                // closes the client soon after, and cancels a task still waiting for its turn.
                // Stopped already by stopDiscovery(on:): nothing to send.
                if let self, await !self.endScan(scan, on: adapterPath, unwatching: watcherID) { return }
                logger.debug("discovery on \(adapter.name) stops")
                // "No discovery started" (it stopped already) is fine.
                _ = try? await connection.call(
                    destination: BlueZClient.service, path: adapterPath, interface: BlueZNames.Call.adapter,
                    member: "StopDiscovery", timeout: timeout)
                await self?.streamStopped(on: adapterPath)
            }
        }
        return stream
    }

    /// Stops this client's discovery on `adapter`, if one of its `discover` streams runs there,
    /// and waits for bluetoothd's answer (a failure means it stopped already). A Connect sent while
    /// the scan runs waits for it to end (the kernel connects through passive scanning): a finder
    /// that has chosen its device stops the scan first, as bleak does, rather than leaving it to
    /// the stream's end, which sends StopDiscovery from a task of its own, a moment later.
    public func stopDiscovery(on adapter: Adapter) async {
        await stopDiscovery(at: adapter.path.objectPath, name: adapter.name)
    }

    private func stopDiscovery(at path: ObjectPath, name: String) async {
        guard scans.removeValue(forKey: path) != nil else { return }
        logger.debug("discovery on \(name) stops")
        _ = try? await call("StopDiscovery", on: path, interface: BlueZNames.Call.adapter)
    }

    /// Stops discovery on `adapter` at the end of a scan, however it ended, and returns once
    /// bluetoothd has answered: this client's StopDiscovery, or the one its stream's end is
    /// sending already. That one runs in a task that `close()` cancels if it has not gone out
    /// yet, so a command that closes the client next (`scan`, after Ctrl-C too) calls this first,
    /// from a task that is not cancelled.
    public func endDiscovery(on adapter: Adapter) async {
        await endDiscovery(at: adapter.path.objectPath, name: adapter.name)
    }

    /// `endDiscovery` on every adapter where this client's discovery runs or its stream's end is
    /// stopping it: for a command that closes the client after a stop it did not wait for
    /// (`watch` stopped while it looks for its strap). Called, as `endDiscovery`, from a task
    /// that is not cancelled.
    public func endDiscoveries() async {
        for path in Set(scans.keys).union(streamStops.keys) {
            await endDiscovery(at: path, name: path.rawValue)
        }
    }

    private func endDiscovery(at path: ObjectPath, name: String) async {
        if scans[path] != nil {
            await stopDiscovery(at: path, name: name)
        } else if streamStops[path] != nil {
            await withCheckedContinuation { streamStops[path, default: []].append($0) }
        }
    }

    /// The StopDiscovery of a stream's end on the adapter at `path` has been answered (or given
    /// up): whoever waits for it in `endDiscovery` goes on.
    func streamStopped(on path: ObjectPath) {
        for waiting in streamStops.removeValue(forKey: path) ?? [] { waiting.resume() }
    }

    /// Ends the stream's watcher and forgets `scan` on the adapter at `path`: false when it was
    /// stopped already (or another scan took its place), so that its stream's end sends no
    /// StopDiscovery.
    func endScan(_ scan: Int, on path: ObjectPath, unwatching watcher: Int) -> Bool {
        unwatch(watcher)
        guard scans[path] == scan else { return false }
        scans[path] = nil
        // Its StopDiscovery goes out next: `endDiscovery` waits for its answer.
        streamStops[path] = streamStops[path] ?? []
        return true
    }
}
