import DBus
import Synchronization

/// How the mirror's subscription to bluetoothd's signals is bounded, and a test's hold on the
/// task that follows it.
struct MirrorOptions: Sendable {
    /// Signals that wait for the follower, at most; beyond it the oldest give way, and the
    /// follower, seeing the gap in their numbers, loads the objects again.
    var signalCapacity = Connection.signalCapacity
    /// Awaited before each signal is applied: a test holds the follower here while it floods the
    /// bus. Nil in use.
    var beforeEachSignal: (@Sendable () async -> Void)? = nil
}

/// Numbers each characteristic's Value signals, per characteristic, on the connection's thread
/// as they arrive (before the mirror's bounded stream): a StartNotify session that sees a number
/// skipped knows how many notifications the stream dropped.
final class ValueNumbers: Sendable {
    private let last = Mutex<[ObjectPath: UInt64]>([:])

    /// The next number of `path`'s Value signals.
    func next(_ path: ObjectPath) -> UInt64 {
        last.withLock { last in
            let number = (last[path] ?? 0) + 1
            last[path] = number
            return number
        }
    }

    /// The number of `path`'s last Value signal so far (0 before the first): a session that
    /// starts now counts gaps after it.
    func current(_ path: ObjectPath) -> UInt64 {
        last.withLock { $0[path] ?? 0 }
    }
}

/// The client as its follower holds it.
struct WeakClient: Sendable {
    weak var client: BlueZClient?
}

extension BlueZClient {
    /// What the mirror follows, in bus order: bluetoothd's object signals (a characteristic's
    /// Value with its number, see `ValueNumbers`) and its name changing hands (a restart: the old
    /// owner gone, then a new one).
    enum BusEvent: Sendable {
        case object(ObjectEvent)
        case value(PropertiesChanged, number: UInt64)
        case owner(String?)
    }

    /// Subscribes to what the mirror follows, before GetManagedObjects so that nothing in between
    /// is missed.
    func subscribeToObjects() async throws(DBusError) -> AsyncStream<Sequenced<BusEvent>> {
        let rules = [
            MatchRule(
                sender: Self.service, path: .root, interface: .objectManager, member: "InterfacesAdded"),
            MatchRule(
                sender: Self.service, path: .root, interface: .objectManager, member: "InterfacesRemoved"),
            MatchRule(
                sender: Self.service, pathNamespace: "/org/bluez", interface: .properties,
                member: "PropertiesChanged"),
            MatchRule(
                sender: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: "NameOwnerChanged",
                arg0: Self.service.rawValue),
        ]
        let numbers = valueNumbers
        return try await connection.subscribe(rules, keeping: mirrorOptions.signalCapacity) {
            message -> BusEvent? in
            if message.interface == .bus {
                guard case .string(let owner)? = message.body.last else { return nil }
                return .owner(owner.isEmpty ? nil : owner)
            }
            guard let event = try? ObjectEvent(message) else { return nil }
            if case .propertiesChanged(let change) = event, change.interface == Self.characteristicInterface,
                change.changed["Value"] != nil
            {
                return .value(change, number: numbers.next(change.path))
            }
            return .object(event)
        }
    }

    /// The follower: applies each signal to the mirror in bus order. A gap in the numbers means the
    /// stream dropped signals (the follower fell behind by `signalCapacity`): the mirror loads
    /// bluetoothd's objects again before going on, so it is never silently wrong; the sessions
    /// count the notifications lost from their own numbers. Ends with the subscription (the bus
    /// went away) or when cancelled (close()).
    static func follow(
        _ events: AsyncStream<Sequenced<BusEvent>>, of reference: WeakClient,
        hold: (@Sendable () async -> Void)?
    ) async {
        // Held weakly between signals: a client dropped without close() still goes.
        var client: BlueZClient? { reference.client }
        var gaps = SignalGaps()
        // Signals were missed and the objects not loaded again yet: tried before each signal.
        var missed: UInt64 = 0
        for await event in events {
            if let hold { await hold() }
            missed += gaps.missed(before: event.sequence)
            if missed > 0, await client?.reload(afterMissing: missed) ?? true { missed = 0 }
            switch event.element {
            case .object(let change): await client?.apply(change)
            case .value(let change, let number):
                await client?.apply(.propertiesChanged(change), valueNumber: number)
            case .owner(let owner): await client?.ownerChanged(owner)
            }
        }
        // The subscription ends with the connection: the bus went away (dbus-daemon stopped or
        // restarted), unless this client was closed.
        if !Task.isCancelled { await client?.lostTheBus() }
    }

    /// The mirror's stream dropped `count` signals: whatever they said, a fresh GetManagedObjects
    /// has it. The signals after the gap are applied on top: each was sent before the reply or
    /// after it, so the mirror ends as bluetoothd is once they are. Returns false when bluetoothd
    /// could not be asked (the follower tries again before the next signal); bluetoothd gone is
    /// its objects gone.
    func reload(afterMissing count: UInt64) async -> Bool {
        logger.info(
            "missed \(count) signals from bluetoothd (this client fell behind): loading its objects again")
        do throws(DBusError) {
            let objects = try await connection.managedObjects(destination: Self.service, timeout: callTimeout)
            resynchronise(to: objects)
            return true
        } catch {
            logger.info("cannot load bluetoothd's objects again: \(error)")
            guard error.code == .serviceUnknown || error.code == .nameHasNoOwner else { return false }
            resynchronise(to: [:])
            return true
        }
    }
}
