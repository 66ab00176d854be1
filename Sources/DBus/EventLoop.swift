internal import CDBus
internal import CDBusShims
internal import Glibc
import Synchronization
internal import Threads

/// A min-heap of (deadline, key), with lazy deletion by the owner.
struct DeadlineHeap {
    private var items: [(deadline: UInt64, key: UInt32)] = []

    var first: (deadline: UInt64, key: UInt32)? { items.first }
    var isEmpty: Bool { items.isEmpty }

    mutating func insert(_ deadline: UInt64, _ key: UInt32) {
        items.append((deadline, key))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            if items[parent].deadline <= items[i].deadline { break }
            items.swapAt(parent, i)
            i = parent
        }
    }

    mutating func popFirst() -> (deadline: UInt64, key: UInt32)? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < items.count && items[l].deadline < items[m].deadline { m = l }
            if r < items.count && items[r].deadline < items[m].deadline { m = r }
            if m == i { break }
            items.swapAt(i, m)
            i = m
        }
        return top
    }

    mutating func removeAll() { items.removeAll() }
}
