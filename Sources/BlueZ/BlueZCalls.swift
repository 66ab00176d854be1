import DBus

extension BlueZClient {
    /// Every method call to bluetoothd goes through here, so that every failure names the call
    /// and its time limit, and a call left unanswered because bluetoothd left the bus (dbus-daemon
    /// answers NoReply then, as it does for a timeout) says that bluetoothd went away.
    func call(
        _ member: MemberName, on path: ObjectPath, interface: InterfaceName, body: [Value] = [],
        timeout: Duration? = nil
    ) async throws(BlueZError) -> Message {
        let limit = timeout ?? callTimeout
        do throws(DBusError) {
            return try await connection.call(
                destination: Self.service, path: path, interface: interface, member: member, body: body,
                timeout: limit)
        } catch {
            throw await failure(error, call: member.rawValue, timeout: limit)
        }
    }

    /// Sets a property of bluetoothd's, as `call` does a method.
    func set(
        _ property: String, to value: Value, on path: ObjectPath, interface: InterfaceName
    ) async throws(BlueZError) {
        do throws(DBusError) {
            try await connection.setProperty(
                property, to: value, interface: interface, path: path, destination: Self.service,
                timeout: callTimeout)
        } catch {
            throw await failure(error, call: "Set \(property)", timeout: callTimeout)
        }
    }

    func failure(_ error: DBusError, call: String, timeout: Duration) async -> BlueZError {
        if error.code == .noReply, !Task.isCancelled, await bluetoothdIsGone() {
            return BlueZError.wentAway(during: call, error)
        }
        return BlueZError(error, call: call, timeout: timeout)
    }

    /// True when the bus says nobody owns org.bluez (false when it cannot tell).
    private func bluetoothdIsGone() async -> Bool {
        do throws(DBusError) {
            return try await connection.nameOwner(Self.service) == nil
        } catch {
            return false
        }
    }
}
