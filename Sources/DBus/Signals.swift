/// A signal match rule. Fields left nil match anything. The bus uses it to route signals to this
/// connection, and the connection applies it again locally so a stream only ever sees signals its
/// rule matches (also when another subscription made the bus send more).
public struct MatchRule: Sendable, Hashable, CustomStringConvertible {
    /// A unique or well-known name; for a well-known name the connection tracks its owner.
    public var sender: BusName?
    /// This object only.
    public var path: ObjectPath?
    /// The path itself or anything below it.
    public var pathNamespace: ObjectPath?
    /// Signals of this interface only.
    public var interface: InterfaceName?
    /// Signals of this name only.
    public var member: MemberName?
    /// The first argument must be this string.
    public var arg0: String?

    /// A rule of the fields given; `MatchRule()` matches every signal.
    public init(
        sender: BusName? = nil, path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil,
        interface: InterfaceName? = nil, member: MemberName? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The rule in the bus's syntax.
    public var description: String {
        var text = "type='signal'"
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            // Inside quotes only an apostrophe needs care: close, escape it, reopen.
            text += ",\(key)='" + value.replacingApostrophes() + "'"
        }
        add("sender", sender?.rawValue)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace.flatMap { $0 == .root ? nil : $0.rawValue })
        add("interface", interface?.rawValue)
        add("member", member?.rawValue)
        add("arg0", arg0)
        return text
    }

    func validate() throws(DBusError) {
        if path != nil && pathNamespace != nil {
            throw DBusError(.invalidArgs, "a match rule cannot have both path and path_namespace")
        }
        if let arg0, arg0.utf8.contains(0) || arg0.utf8.count > 1024 {
            throw DBusError(.invalidArgs, "arg0 must be a string without NUL of at most 1024 bytes")
        }
    }

    /// The well-known sender whose owner must be tracked, if any.
    var trackedSender: String? {
        guard let sender, !sender.isUnique, sender != .bus else { return nil }
        return sender.rawValue
    }
}

extension String {
    fileprivate func replacingApostrophes() -> String {
        guard utf8.contains(UInt8(ascii: "'")) else { return self }
        var out = ""
        for ch in self { out += ch == "'" ? "'\\''" : String(ch) }
        return out
    }
}

/// One signal stream's local state (loop thread).
final class Subscription: @unchecked Sendable {
    let rules: [MatchRule]
    let texts: [String]
    let deliver: (Message) -> Void
    let finish: () -> Void
    var requestedRules: [String] = []
    var trackedOwners: [String] = []

    init(rules: [MatchRule], deliver: @escaping (Message) -> Void, finish: @escaping () -> Void) {
        self.rules = rules
        self.texts = rules.map(\.description)
        self.deliver = deliver
        self.finish = finish
    }
}

struct RuleState {
    var count: Int
    var active: Bool
    var waiters: [(Result<Void, DBusError>) -> Void]
}

struct OwnerState {
    var owner: String?
    var count: Int
    var ready: Bool
    var waiters: [(Result<Void, DBusError>) -> Void]
}

private func nameOwnerRule(_ name: String) -> String {
    MatchRule(
        sender: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: "NameOwnerChanged",
        arg0: name
    ).description
}

extension Core {
    // MARK: Reference-counted bus rules

    func addRule(_ text: String, completion: @escaping (Result<Void, DBusError>) -> Void) {
        assertOnLoopThread()
        if var state = rules[text] {
            state.count += 1
            if state.active {
                rules[text] = state
                completion(.success(()))
            } else {
                state.waiters.append(completion)
                rules[text] = state
            }
            return
        }
        rules[text] = RuleState(count: 1, active: false, waiters: [completion])
        callOnLoop(
            destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: "AddMatch",
            body: [.string(text)]
        ) { result in
            guard var state = self.rules[text] else { return }
            let waiters = state.waiters
            switch result {
            case .success:
                state.active = true
                state.waiters = []
                self.rules[text] = state
                for waiter in waiters { waiter(.success(())) }
            case .failure(let error):
                self.rules[text] = nil
                for waiter in waiters { waiter(.failure(error)) }
            }
        }
    }

    func removeRule(_ text: String) {
        assertOnLoopThread()
        guard var state = rules[text] else { return }
        state.count -= 1
        if state.count > 0 {
            rules[text] = state
            return
        }
        rules[text] = nil
        for waiter in state.waiters { waiter(.failure(DBusError(.cancelled, "the subscription ended"))) }
        guard open else { return }
        callOnLoop(
            destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: "RemoveMatch",
            body: [.string(text)]
        ) { _ in }
    }

    // MARK: Owners of well-known names used as senders

    func trackOwner(_ name: String, completion: @escaping (Result<Void, DBusError>) -> Void) {
        assertOnLoopThread()
        if var state = owners[name] {
            state.count += 1
            if state.ready {
                owners[name] = state
                completion(.success(()))
            } else {
                state.waiters.append(completion)
                owners[name] = state
            }
            return
        }
        owners[name] = OwnerState(owner: nil, count: 1, ready: false, waiters: [completion])
        func finish(_ result: Result<Void, DBusError>) {
            guard var state = owners[name] else { return }
            let waiters = state.waiters
            state.waiters = []
            state.ready = true
            owners[name] = state
            for waiter in waiters { waiter(result) }
        }
        // GetNameOwner goes out without waiting for AddMatch's reply: the bus handles a
        // connection's messages in order, so the rule is in place before the owner is asked and
        // no change after the answer is missed. One round trip instead of two.
        var ruleFailed = false
        addRule(nameOwnerRule(name)) { result in
            if case .failure(let error) = result {
                ruleFailed = true
                finish(.failure(error))
            }
        }
        callOnLoop(
            destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: "GetNameOwner",
            body: [.string(name)]
        ) { reply in
            // The rule's reply comes first (the bus answers in order): its failure is the answer.
            guard !ruleFailed else { return }
            switch reply {
            case .success(let message):
                if case .string(let owner)? = message.body.first { self.owners[name]?.owner = owner }
                finish(.success(()))
            case .failure(let error) where error.code == .nameHasNoOwner:
                finish(.success(()))
            case .failure(let error):
                finish(.failure(error))
            }
        }
    }

    func untrackOwner(_ name: String) {
        assertOnLoopThread()
        guard var state = owners[name] else { return }
        state.count -= 1
        if state.count > 0 {
            owners[name] = state
            return
        }
        owners[name] = nil
        for waiter in state.waiters { waiter(.failure(DBusError(.cancelled, "the subscription ended"))) }
        removeRule(nameOwnerRule(name))
    }

    // MARK: Subscriptions

    /// Registers `subscription` locally at once (so nothing after the bus's reply is missed), then
    /// tracks owners and adds the rules on the bus, all sent at once; `ready` runs once every
    /// AddMatch is answered, or at the first failure.
    func subscribe(
        _ subscription: Subscription, id: UInt64, ready: @escaping (Result<Void, DBusError>) -> Void
    ) {
        assertOnLoopThread()
        guard open else {
            ready(.failure(closeReason))
            return
        }
        subscriptions[id] = subscription
        var steps: [(@escaping (Result<Void, DBusError>) -> Void) -> Void] = []
        var seenOwners = Set<String>()
        for rule in subscription.rules {
            if let name = rule.trackedSender, seenOwners.insert(name).inserted {
                steps.append { done in
                    subscription.trackedOwners.append(name)
                    self.trackOwner(name, completion: done)
                }
            }
        }
        for text in Set(subscription.texts).sorted() {
            steps.append { done in
                subscription.requestedRules.append(text)
                self.addRule(text, completion: done)
            }
        }
        // Every step goes out at once: the bus handles a connection's messages in order, so each
        // rule is in place before any later call of ours is handled, and one round trip waits for
        // all of them instead of one per rule.
        var waiting = steps.count
        var answered = false
        guard waiting > 0 else {
            ready(.success(()))
            return
        }
        for step in steps {
            step { result in
                guard !answered else { return }
                switch result {
                case .success:
                    waiting -= 1
                    guard waiting == 0 else { return }
                    answered = true
                    ready(.success(()))
                case .failure(let error):
                    answered = true
                    self.unsubscribe(id)
                    ready(.failure(error))
                }
            }
        }
    }

    func unsubscribe(_ id: UInt64) {
        assertOnLoopThread()
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        for text in subscription.requestedRules { removeRule(text) }
        for name in subscription.trackedOwners { untrackOwner(name) }
    }

    func finishAllSubscriptions() {
        assertOnLoopThread()
        let all = subscriptions
        subscriptions.removeAll()
        let ruleWaiters = rules.values.flatMap(\.waiters)
        let ownerWaiters = owners.values.flatMap(\.waiters)
        rules.removeAll()
        owners.removeAll()
        for waiter in ruleWaiters + ownerWaiters { waiter(.failure(closeReason)) }
        for (_, subscription) in all { subscription.finish() }
    }
}

// MARK: - Public subscription API

/// A signal (or what a subscription's transform made of it) and its place in the subscription's
/// sequence. Signal streams are bounded: when the consumer falls behind, the oldest waiting
/// signals give way to the newest (`Connection.signalCapacity`), and the numbers say so. A
/// number skipped is a signal the stream dropped; `SignalGaps` counts them.
public struct Sequenced<Element: Sendable>: Sendable {
    /// 1 for the first signal the subscription delivered, one more for each after it. Numbered
    /// on the connection's thread before the stream's buffer, so a dropped signal leaves a gap.
    public let sequence: UInt64
    /// The signal, or its transform.
    public let element: Element

    /// A numbered element (the connection numbers signals; tests make their own).
    public init(sequence: UInt64, element: Element) {
        self.sequence = sequence
        self.element = element
    }
}

/// Follows a subscription's sequence numbers: how many signals the stream dropped before each one
/// read, and in all.
public struct SignalGaps: Sendable {
    /// The last number seen (0 before the first).
    public private(set) var last: UInt64 = 0
    /// Signals dropped in all, so far.
    public private(set) var missedInAll: UInt64 = 0

    /// Follows from the start of a subscription.
    public init() {}

    /// The signals dropped between the last one read and the one numbered `sequence` (0 when
    /// none was), which becomes the last one read.
    public mutating func missed(before sequence: UInt64) -> UInt64 {
        let missed = sequence > last ? sequence - last - 1 : 0
        last = max(last, sequence)
        missedInAll += missed
        return missed
    }
}

extension Connection {
    /// Signals that wait for a consumer, at most, on a stream of the default size: beyond it the
    /// oldest give way (see `Sequenced`). At the 200 signals a second a strap's StartNotify can
    /// reach, five seconds of falling behind.
    public static let signalCapacity = 1024

    /// A stream of the signals matching `rule`, numbered (see `Sequenced`). Returns after the bus
    /// has acknowledged the rule, so a caller can subscribe and then query state without missing
    /// anything in between. Ending the stream (dropping it or cancelling its consumer) removes the
    /// rule; identical rules from several streams are reference-counted. The stream finishes when
    /// the connection closes. At most `keeping` signals wait: when more arrive, the oldest are
    /// dropped, which the sequence numbers tell.
    public func signals(matching rule: MatchRule, keeping: Int = Connection.signalCapacity)
        async throws(DBusError) -> AsyncStream<Sequenced<Message>>
    {
        try await signals(matching: [rule], keeping: keeping)
    }

    /// One stream of the signals matching any of `rules`, in the order the bus delivered them,
    /// numbered and bounded as `signals(matching:keeping:)`.
    public func signals(matching rules: [MatchRule], keeping: Int = Connection.signalCapacity)
        async throws(DBusError) -> AsyncStream<Sequenced<Message>>
    {
        try await subscribe(rules, keeping: keeping) { $0 }
    }

    /// Like `signals(matching:)` but each signal goes through `transform` (on the connection's
    /// thread; keep it cheap); nil drops it without a number, so only what the transform keeps
    /// is numbered and a gap is always one of those.
    public func subscribe<T: Sendable>(
        _ rules: [MatchRule], keeping: Int = Connection.signalCapacity,
        transform: @escaping @Sendable (Message) -> T?
    ) async throws(DBusError) -> AsyncStream<Sequenced<T>> {
        guard !rules.isEmpty else {
            throw DBusError(.invalidArgs, "a subscription needs at least one match rule")
        }
        for rule in rules { try rule.validate() }
        let core = self.core
        let (stream, continuation) = AsyncStream.makeStream(
            of: Sequenced<T>.self, bufferingPolicy: .bufferingNewest(max(keeping, 1)))
        let id = core.nextToken()
        // Touched on the connection's thread only, where `deliver` runs.
        var sequence: UInt64 = 0
        let subscription = Subscription(
            rules: rules,
            deliver: { message in
                guard let value = transform(message) else { return }
                sequence += 1
                continuation.yield(Sequenced(sequence: sequence, element: value))
            },
            finish: { continuation.finish() })
        let logger = self.logger
        let logged = logger.logLevel <= .debug
        if logged { for rule in rules { logger.debug("subscribe \(rule)") } }
        continuation.onTermination = { _ in
            if logged { for rule in rules { logger.debug("unsubscribe \(rule)") } }
            core.execute { core.unsubscribe(id) }
        }
        let result: Result<Void, DBusError> = await withCheckedContinuation { c in
            let accepted = core.execute {
                core.subscribe(subscription, id: id) { c.resume(returning: $0) }
            }
            if !accepted { c.resume(returning: .failure(DBusError.closed)) }
        }
        if case .failure(let error) = result {
            continuation.finish()
            throw error
        }
        return stream
    }
}
