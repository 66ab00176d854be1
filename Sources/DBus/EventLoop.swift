internal import CDBus
internal import CDBusShims
internal import Glibc
import Synchronization

/// Monotonic time in nanoseconds.
@inline(__always) func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

extension Duration {
    /// Whole nanoseconds, saturating at 0 and at about 292 years.
    var clampedNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 { return 0 }
        if seconds > 9_000_000_000 { return UInt64(Int64.max) }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}

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

/// A thread that runs a closure; detached, so nothing has to join it.
enum LoopThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func start(_ body: @escaping @Sendable () -> Void) throws(DBusError) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { arg in
                guard let arg else { return nil }
                let box = Unmanaged<Box>.fromOpaque(arg).takeRetainedValue()
                // Named, or it would carry the name of whichever thread started it.
                cdbus_set_thread_name("dbus-loop")
                box.body()
                return nil
            }, box)
        guard rc == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw DBusError(.noMemory, "cannot start the D-Bus event-loop thread (error \(rc))")
        }
        pthread_detach(thread)
    }
}
