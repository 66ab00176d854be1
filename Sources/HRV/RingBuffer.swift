/// A fixed-capacity first-in first-out buffer: appending to a full buffer drops the oldest
/// element. Its storage never grows past `capacity`, which keeps the corrector's memory bounded
/// over sessions of any length.
struct RingBuffer<Element: Sendable>: Sendable {
    let capacity: Int
    private var storage: [Element] = []
    /// Where the oldest element lives once the storage is full.
    private var head = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        storage.reserveCapacity(self.capacity)
    }

    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }
    var isFull: Bool { storage.count == capacity }

    /// The element `offset` places after the oldest (0 is the oldest).
    subscript(offset: Int) -> Element {
        storage[(head + offset) % capacity]
    }

    var oldest: Element? { storage.isEmpty ? nil : self[0] }
    var newest: Element? { storage.isEmpty ? nil : self[storage.count - 1] }

    /// Appends `element`; returns the element it displaced when the buffer was full.
    @discardableResult
    mutating func append(_ element: Element) -> Element? {
        guard isFull else {
            storage.append(element)
            return nil
        }
        let displaced = storage[head]
        storage[head] = element
        head = (head + 1) % capacity
        return displaced
    }

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        head = 0
    }

    /// The storage actually held, for the tests that check memory stays bounded.
    var storageCapacity: Int { storage.capacity }
}
