/// The client's ordered, bounded store of messages to publish: the source of truth for what still
/// has to reach the broker, whatever libmosquitto holds (a link's library object is thrown away
/// when the link drops, with everything it had queued).
///
/// The front `handed` entries have been given to the current link, in order, at most `window` at
/// a time. A QoS 1 entry leaves when the broker's PUBACK for its message id comes back, a QoS 0
/// entry once libmosquitto took it. When the link drops, every entry still present goes back to
/// "not handed" and is sent again, in the same order, on the next link: at least once, in order.
///
/// A retained message replaces the retained message of the same topic that is still waiting (not
/// handed): the broker keeps only the last one, and while it is away a live `bpm` per
/// notification would otherwise fill the outbox as fast as the measurements do. Replaced entries
/// are skipped, do not count against the capacity, and are swept out once they outnumber it.
struct Outbox {
    struct Entry {
        var message: MQTTMessage
        /// libmosquitto's message id on the current link, 0 until handed (ids start at 1).
        var mid: Int32 = 0
        var acknowledged = false
    }

    let capacity: Int
    private var entries = Ring<Entry>()
    /// The sequence number of `entries[0]`: entries are numbered as appended, so a number stays
    /// valid for as long as its entry is in the outbox, while its index moves.
    private var firstSequence: UInt64 = 0
    /// Entries at the front given to the current link.
    private(set) var handed = 0
    /// Entries acknowledged (or replaced) while one before them was not (kept so that order is kept).
    private var acknowledgedCount = 0
    /// The sequence number of the waiting retained entry of each topic.
    private var waitingRetained: [String: UInt64] = [:]

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Messages still to be acknowledged.
    var count: Int { entries.count - acknowledgedCount }

    /// Appends in O(1) (amortised); when full, drops the oldest first and returns how many
    /// unacknowledged messages that discarded.
    mutating func append(_ message: MQTTMessage) -> Int {
        if message.retain { replaceWaitingRetained(message.topic) }
        var dropped = 0
        while count >= capacity, let oldest = entries.removeFirst() {
            firstSequence &+= 1
            if handed > 0 { handed -= 1 }
            if oldest.acknowledged { acknowledgedCount -= 1 } else { dropped += 1 }
        }
        if acknowledgedCount > capacity { sweep() }
        if message.retain { waitingRetained[message.topic] = firstSequence &+ UInt64(entries.count) }
        entries.append(Entry(message: message))
        return dropped
    }

    /// The retained message of `topic` still waiting is replaced: skipped from now on.
    private mutating func replaceWaitingRetained(_ topic: String) {
        guard let sequence = waitingRetained.removeValue(forKey: topic), sequence >= firstSequence else {
            return
        }
        let index = sequence - firstSequence
        guard index >= UInt64(handed), index < UInt64(entries.count) else { return }
        markAcknowledged(Int(index))
    }

    /// Removes the replaced entries from the part not handed, keeping the order; the handed part,
    /// whose sequence numbers the link holds, stays as it is.
    private mutating func sweep() {
        var kept = Ring<Entry>()
        var acknowledged = 0
        waitingRetained.removeAll(keepingCapacity: true)
        for index in 0..<entries.count {
            let entry = entries[index]
            if index >= handed && entry.acknowledged { continue }
            if entry.acknowledged { acknowledged += 1 }
            if index >= handed && entry.message.retain {
                waitingRetained[entry.message.topic] = firstSequence &+ UInt64(kept.count)
            }
            kept.append(entry)
        }
        entries = kept
        acknowledgedCount = acknowledged
    }

    /// The next messages for the link, in order, so that at most `window` entries are handed;
    /// marks them handed. The caller reports each one back with `published` or `rejected`.
    mutating func take(window: Int) -> [(sequence: UInt64, message: MQTTMessage)] {
        var batch: [(sequence: UInt64, message: MQTTMessage)] = []
        while handed < window && handed < entries.count {
            let entry = entries[handed]
            // Acknowledged on an earlier link, out of order: nothing to send again.
            if !entry.acknowledged { batch.append((firstSequence &+ UInt64(handed), entry.message)) }
            handed += 1
        }
        return batch
    }

    /// libmosquitto accepted the message and gave it `mid`. A QoS 0 message is done: the library
    /// writes it in order before anything handed later, and nothing would acknowledge it.
    mutating func published(sequence: UInt64, mid: Int32) {
        guard let index = handedIndex(of: sequence) else { return }
        if entries[index].message.qos == .atMostOnce {
            markAcknowledged(index)
        } else {
            entries[index].mid = mid
        }
    }

    /// libmosquitto refused the message itself (bad topic, invalid UTF-8, too large): it can
    /// never be sent, so it leaves rather than block everything behind it.
    mutating func rejected(sequence: UInt64) {
        guard let index = handedIndex(of: sequence) else { return }
        markAcknowledged(index)
    }

    /// The broker's PUBACK for `mid` on the current link.
    mutating func acknowledge(mid: Int32) {
        guard mid != 0 else { return }
        for index in 0..<handed where entries[index].mid == mid && !entries[index].acknowledged {
            markAcknowledged(index)
            return
        }
    }

    /// The link is gone, and the library with everything it held: hand everything again.
    mutating func linkLost() {
        for index in 0..<handed { entries[index].mid = 0 }
        handed = 0
    }

    /// Entries held, replaced ones not swept yet included (tests).
    var stored: Int { entries.count }

    /// The messages still to be acknowledged, oldest first (tests).
    var pending: [MQTTMessage] {
        (0..<entries.count).compactMap { entries[$0].acknowledged ? nil : entries[$0].message }
    }

    private func handedIndex(of sequence: UInt64) -> Int? {
        // Dropped meanwhile (the outbox overflowed between take and publish): forget it.
        guard sequence >= firstSequence else { return nil }
        let index = sequence - firstSequence
        return index < UInt64(handed) ? Int(index) : nil
    }

    private mutating func markAcknowledged(_ index: Int) {
        guard !entries[index].acknowledged else { return }
        entries[index].acknowledged = true
        acknowledgedCount += 1
        while let first = entries.first, first.acknowledged {
            _ = entries.removeFirst()
            firstSequence &+= 1
            acknowledgedCount -= 1
            if handed > 0 { handed -= 1 }
        }
    }
}

/// A growable ring buffer: O(1) append and removeFirst, which Array's removeFirst is not.
struct Ring<Element> {
    private var storage: ContiguousArray<Element?> = []
    private var head = 0
    private(set) var count = 0

    var first: Element? { count == 0 ? nil : storage[head] }

    subscript(index: Int) -> Element {
        get {
            precondition(index >= 0 && index < count, "Ring index out of range")
            // Every slot inside 0..<count holds an element.
            guard let element = storage[slot(index)] else { preconditionFailure("empty ring slot") }
            return element
        }
        set {
            precondition(index >= 0 && index < count, "Ring index out of range")
            storage[slot(index)] = newValue
        }
    }

    mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[slot(count)] = element
        count += 1
    }

    mutating func removeFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) & (storage.count - 1)
        count -= 1
        return element
    }

    private func slot(_ index: Int) -> Int { (head + index) & (storage.count - 1) }

    /// Doubles the storage (a power of two, so that a slot is a mask away) keeping the order.
    private mutating func grow() {
        let capacity = max(16, storage.count * 2)
        var grown = ContiguousArray<Element?>(repeating: nil, count: capacity)
        for index in 0..<count { grown[index] = storage[slot(index)] }
        storage = grown
        head = 0
    }
}
