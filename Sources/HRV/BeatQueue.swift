/// The beats of a window, oldest first: appends at the back, removals at the front, both O(1)
/// amortised. Removing from the front only advances `head`; the dead prefix is compacted away
/// once it is as long as the live part, so the storage stays within about twice the window and
/// stops allocating once the window is full.
struct BeatQueue: Sendable {
    private var storage: [NNInterval] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }

    /// The beat `offset` places after the oldest.
    subscript(offset: Int) -> NNInterval { storage[head + offset] }

    var first: NNInterval? { isEmpty ? nil : storage[head] }
    var last: NNInterval? { isEmpty ? nil : storage[storage.count - 1] }

    mutating func append(_ beat: NNInterval) {
        if head > 0, head >= storage.count - head, storage.count == storage.capacity {
            storage.removeSubrange(0..<head)
            head = 0
        }
        storage.append(beat)
    }

    mutating func removeFirst() {
        guard !isEmpty else { return }
        head += 1
        if isEmpty {
            storage.removeAll(keepingCapacity: true)
            head = 0
        }
    }

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        head = 0
    }

    /// The live beats, oldest first.
    var beats: ArraySlice<NNInterval> { storage[head...] }

    var storageCapacity: Int { storage.capacity }
}
