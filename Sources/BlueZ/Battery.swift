import DBus

extension BlueZClient {
    /// Battery levels of the device as they change: `org.bluez.Battery1.Percentage` updates
    /// (bluetoothd follows the strap's 0x2A19 notifications) and the level Battery1 arrives with
    /// after each reconnect. The stream lasts until the consumer stops listening or the client
    /// closes; it may repeat a level.
    public func batteryLevels(_ devicePath: DevicePath) -> AsyncStream<Int> {
        let device = devicePath.objectPath
        let (events, watcher) = watch()
        // Levels change every few minutes: a consumer that lags that far gets the newest 16.
        let (stream, continuation) = AsyncStream.makeStream(
            of: Int.self, bufferingPolicy: .bufferingNewest(16))
        let tasks = self.tasks
        let relay = tasks.run {
            for await event in events {
                switch event {
                case .propertiesChanged(let change)
                where change.path == device && change.interface == Self.batteryInterface:
                    if case .byte(let percent)? = change.changed["Percentage"] {
                        continuation.yield(Int(percent))
                    }
                case .interfacesAdded(let path, let interfaces) where path == device:
                    if case .byte(let percent)? = interfaces[Self.batteryInterface]?["Percentage"] {
                        continuation.yield(Int(percent))
                    }
                default:
                    continue
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { [weak self] _ in
            relay.cancel()
            tasks.run { await self?.unwatch(watcher) }
        }
        return stream
    }
}
